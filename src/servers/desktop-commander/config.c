/*
 * config.c - desktop-commander's configuration and usage statistics, kept as
 * upstream's ConfigManager keeps them: one JSON object (key order kept) in
 * $HOME/.claude-server-commander/config.json, written as
 * JSON.stringify(config, null, 2) after every change.
 *
 * Start-up (index.ts + capture('run_server_start')): an existing file is
 * loaded (an unreadable or invalid one is replaced by the defaults), else the
 * defaults are written; "version" is then set to 0.2.7 and, while
 * telemetryEnabled is not false, a "clientId" UUID is added. mcpbox's one
 * addition: `--allowed-dir DIR` seeds allowedDirectories of a new config
 * (upstream's default is [], i.e. everything; MCP-Atlas's harness then sets
 * ["/data"] with set_config_value, and would get the same text either way),
 * and `--state-dir DIR` keeps the two ~ folders (this config, the fuzzy-search
 * log) under DIR instead of $HOME, while texts still name $HOME (a sandbox's
 * HOME, /root, is read-only).
 *
 * Usage statistics (usageTracker.ts): after every tools/call the "usageStats"
 * object is updated - counters per category and per tool, first/last use,
 * and a session counter that grows when 30 minutes passed without a call.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "servers/desktop-commander/dc.h"

#define SESSION_TIMEOUT_MS (30LL * 60 * 1000)

static const char *const blocked_default[] = {
    "mkfs", "format", "mount", "umount", "fdisk", "dd", "parted", "diskpart", "sudo",
    "su", "passwd", "adduser", "useradd", "usermod", "groupadd", "chsh", "visudo",
    "shutdown", "reboot", "halt", "poweroff", "init", "iptables", "firewall", "netsh",
    "sfc", "bcdedit", "reg", "net", "sc", "runas", "cipher", "takeown", NULL,
};

static json_t *defaults(char *const *allowed, size_t nallowed)
{
    json_t *c = json_object();
    json_t *b = json_array();
    for (int i = 0; blocked_default[i]; i++) json_array_append_new(b, json_string(blocked_default[i]));
    json_object_set_new(c, "blockedCommands", b);
    json_object_set_new(c, "defaultShell", json_string("/bin/sh"));
    json_t *a = json_array();
    for (size_t i = 0; i < nallowed; i++) json_array_append_new(a, json_string(allowed[i]));
    json_object_set_new(c, "allowedDirectories", a);
    json_object_set_new(c, "telemetryEnabled", json_true());
    json_object_set_new(c, "fileWriteLineLimit", json_integer(50));
    json_object_set_new(c, "fileReadLineLimit", json_integer(1000));
    return c;
}

/* fs.writeFile of JSON.stringify(config, null, 2), Node's error text in *why.
 * Called with dc->lock held. */
int dc_config_save_locked(dc_server *dc, char **why)
{
    char *text = mb_js_stringify(dc->config, 2);
    char *msg = NULL;
    int rc = dc_write_bytes(dc->config_path, text, strlen(text), 0, &msg);
    free(text);
    if (rc && why) *why = msg;
    else free(msg);
    return rc ? -1 : 0;
}

static char *home_dir(void)
{
    const char *h = getenv("HOME");
    if (h && *h) return mb_strdup(h);
    struct passwd *pw = getpwuid(getuid());
    return mb_strdup(pw && pw->pw_dir ? pw->pw_dir : "/");
}

int dc_config_init(dc_server *dc, char *const *allowed, size_t nallowed, const char *state_dir,
                   mb_err *err)
{
    (void)err;
    dc->home = home_dir();
    dc->state = mb_strdup(state_dir ? state_dir : dc->home);
    char *dir = mb_asprintf("%s/.claude-server-commander", dc->state);
    dc->config_path = mb_asprintf("%s/config.json", dir);
    pthread_mutex_lock(&dc->lock); /* no other thread yet; save_locked's contract */
    mb_err e = {0};
    json_t *loaded = NULL;
    if (mb_mkdir_p(dir, 0755, &e)) {
        /* upstream: "Failed to initialize config" - defaults in memory only
         * (later saves fail, and set_config_value says so) */
        dc->config = defaults(allowed, nallowed);
    } else {
        char *text = NULL;
        size_t len = 0;
        if (!mb_read_file(dc->config_path, 64u << 20, &text, &len, NULL)) {
            loaded = json_loadb(text, len, JSON_DECODE_ANY, NULL);
            free(text);
        }
        if (json_is_object(loaded)) {
            dc->config = loaded;
        } else {
            json_decref(loaded);
            dc->config = defaults(allowed, nallowed);
            dc_config_save_locked(dc, NULL);
        }
    }
    free(dir);
    json_object_set_new(dc->config, "version", json_string(DC_VERSION));
    /* capture(): a clientId is made the first time telemetry would run. */
    if (!json_is_false(json_object_get(dc->config, "telemetryEnabled"))) {
        json_t *cid = json_object_get(dc->config, "clientId");
        if (!cid || json_is_null(cid) || json_is_false(cid) ||
            (json_is_string(cid) && !*json_string_value(cid))) {
            char u[37];
            mb_uuid4(u);
            json_object_set_new(dc->config, "clientId", json_string(u));
            dc_config_save_locked(dc, NULL);
        }
    }
    pthread_mutex_unlock(&dc->lock);
    return 0;
}

json_t *dc_config_copy(dc_server *dc)
{
    pthread_mutex_lock(&dc->lock);
    json_t *c = json_deep_copy(dc->config);
    pthread_mutex_unlock(&dc->lock);
    return c;
}

int dc_config_set(dc_server *dc, const char *key, json_t *value, char **why)
{
    pthread_mutex_lock(&dc->lock);
    if (value) json_object_set_new(dc->config, key, value);
    else json_object_del(dc->config, key); /* undefined: JSON.stringify leaves it out */
    int rc = dc_config_save_locked(dc, why);
    pthread_mutex_unlock(&dc->lock);
    return rc;
}

double dc_config_num(dc_server *dc, const char *key, double def)
{
    pthread_mutex_lock(&dc->lock);
    json_t *v = json_object_get(dc->config, key);
    double d = json_is_number(v) ? json_number_value(v) : def;
    pthread_mutex_unlock(&dc->lock);
    return d;
}

static json_t *stats_default(int64_t now)
{
    return json_pack("{s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:{}, s:I, s:I, s:i, s:i}",
                     "filesystemOperations", 0, "terminalOperations", 0, "editOperations", 0,
                     "searchOperations", 0, "configOperations", 0, "processOperations", 0,
                     "totalToolCalls", 0, "successfulCalls", 0, "failedCalls", 0, "toolCounts",
                     "firstUsed", (json_int_t)now, "lastUsed", (json_int_t)now, "totalSessions",
                     1, "lastFeedbackPrompt", 0);
}

json_t *dc_usage_stats(dc_server *dc)
{
    pthread_mutex_lock(&dc->lock);
    json_t *s = json_object_get(dc->config, "usageStats");
    json_t *r = (s && !json_is_null(s) && !json_is_false(s)) ? json_deep_copy(s)
                                                             : stats_default((int64_t)(mb_now() * 1000));
    pthread_mutex_unlock(&dc->lock);
    return r;
}

static const char *category(const char *tool)
{
    static const struct {
        const char *cat;
        const char *tools[8];
    } cats[] = {
        {"filesystemOperations", {"read_file", "read_multiple_files", "write_file",
                                  "create_directory", "list_directory", "move_file",
                                  "get_file_info", NULL}},
        {"terminalOperations", {"execute_command", "read_output", "force_terminate",
                                "list_sessions", NULL}},
        {"editOperations", {"edit_block", NULL}},
        {"searchOperations", {"search_files", "search_code", NULL}},
        {"configOperations", {"get_config", "set_config_value", NULL}},
        {"processOperations", {"list_processes", "kill_process", NULL}},
    };
    for (size_t i = 0; i < sizeof cats / sizeof cats[0]; i++)
        for (int j = 0; cats[i].tools[j]; j++)
            if (!strcmp(cats[i].tools[j], tool)) return cats[i].cat;
    return NULL;
}

/* stats[key]++ the JavaScript way (a missing or odd value becomes NaN -> null). */
static void bump(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (json_is_integer(v)) json_object_set_new(o, key, json_integer(json_integer_value(v) + 1));
    else if (json_is_real(v)) json_object_set_new(o, key, json_real(json_real_value(v) + 1));
    else json_object_set_new(o, key, json_null());
}

void dc_usage_track(dc_server *dc, const char *tool, int failed)
{
    int64_t now = (int64_t)(mb_now() * 1000);
    pthread_mutex_lock(&dc->lock);
    json_t *s = json_object_get(dc->config, "usageStats");
    if (!s || json_is_null(s) || json_is_false(s)) {
        s = stats_default(now);
        json_object_set_new(dc->config, "usageStats", s);
    }
    if (!json_is_object(s)) {
        pthread_mutex_unlock(&dc->lock);
        return;
    }
    if (!dc->session_last_ms || now - dc->session_last_ms > SESSION_TIMEOUT_MS) dc->session_cmds = 1;
    else dc->session_cmds++;
    dc->session_last_ms = now;
    bump(s, "totalToolCalls");
    bump(s, failed ? "failedCalls" : "successfulCalls");
    json_object_set_new(s, "lastUsed", json_integer(now));
    json_t *counts = json_object_get(s, "toolCounts");
    if (!json_is_object(counts)) {
        counts = json_object();
        json_object_set_new(s, "toolCounts", counts);
    }
    json_t *c = json_object_get(counts, tool);
    json_object_set_new(counts, tool, json_integer(json_is_integer(c) ? json_integer_value(c) + 1 : 1));
    const char *cat = category(tool);
    if (cat) bump(s, cat);
    if (dc->session_cmds == 1) bump(s, "totalSessions");
    dc_config_save_locked(dc, NULL);
    pthread_mutex_unlock(&dc->lock);
}
