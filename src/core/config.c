/*
 * config.c - `mcpbox serve` settings: built-in defaults, then MCPBOX_*
 * environment variables, then command-line flags (the last word wins).
 */
#include "core/core.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f,
        "usage: mcpbox serve [options]\n"
        "\n"
        "  --listen ADDR:PORT        where to serve (MCPBOX_LISTEN; default 127.0.0.1:8080)\n"
        "  --data-dir DIR            state, workspaces, archives (MCPBOX_DATA_DIR; default ./var)\n"
        "  --public-url URL          base of the URLs handed to clients (MCPBOX_PUBLIC_URL;\n"
        "                            default http://ADDR:PORT)\n"
        "  --seed PRESET=DIR         preload /data of sandboxes acquired with that benchmark\n"
        "                            from DIR (repeatable; MCPBOX_SEED='P=DIR;P2=DIR2')\n"
        "  --profiles-dir DIR        benchmark presets (MCPBOX_PROFILES_DIR)\n"
        "  --pool N | PROFILE=N      keep N idle sandboxes ready (for every profile, or for\n"
        "                            one; repeatable; MCPBOX_POOL='N' or 'P=N;P2=N')\n"
        "  --release-on-exit         release every sandbox on SIGTERM/SIGINT before exiting\n"
        "                            (default: they keep running and are adopted at the next start)\n"
        "  --first-run-key           when no valid API key exists (and no MCPBOX_API_KEY), make\n"
        "                            one and print it once (`make run` passes this)\n"
        "  --call-timeout SECONDS    an MCP call unanswered this long fails (default 120)\n"
        "  --start-timeout SECONDS   a server not ready this long after start fails (default 30)\n"
        "  --max-message SIZE        largest JSON-RPC message between a client and a server,\n"
        "                            either way (default 64M)\n"
        "  --max-upload SIZE         largest archive a PUT may send (default 4G)\n"
        "  --max-expanded SIZE       largest extracted size of an archive (default 4G)\n"
        "  --max-entries N           most members in an archive (default 1000000)\n"
        "  --url-ttl-minutes N       lifetime of upload/download URLs (default 30)\n"
        "  --default-ttl SECONDS     TTL when acquire gives none (default 7200)\n"
        "  --released-retention DURATION  records of released sandboxes are purged after\n"
        "                            this (90s, 30m, 24h, 7d; 0 = kept forever;\n"
        "                            MCPBOX_RELEASED_RETENTION; default 24h)\n"
        "  --allowed-origin ORIGIN   an Origin MCP clients may send (repeatable)\n"
        "  --header-limit SIZE       request line + headers (default 32K)\n"
        "  --idle-timeout SECONDS    close idle connections after (default 300)\n"
        "limits (0 = unlimited where marked *):\n"
        "  --max-connections N       HTTP connections at once (default 4096)\n"
        "  --max-connections-per-ip N  *per client address (default 512)\n"
        "  --max-anon-connections N  connections without a valid key or MCP URL so far;\n"
        "                            the rest is kept for authenticated clients (default 2048)\n"
        "  --header-timeout SECONDS  request line and headers must arrive within (default 30)\n"
        "  --min-body-rate SIZE      bytes per second a request body must average after\n"
        "                            --header-timeout seconds (default 8K)\n"
        "  --drain-max SIZE          a refused request's body is read and dropped up to\n"
        "                            this much before the answer, then closed (default 4M)\n"
        "  --drain-timeout SECONDS   ... and for this long, then at --min-body-rate (default 2)\n"
        "  --dump-timeout SECONDS    a dump is stopped after (default 300)\n"
        "  --max-sessions N          MCP sessions in all (default 10000)\n"
        "  --max-sessions-per-sandbox N  (default 1000)\n"
        "  --max-sessions-per-key N  per key owner (default 5000)\n"
        "  --key-max-sandboxes N     *live sandboxes per key owner (default 1000)\n"
        "  --key-max-acquiring N     *acquires in progress per key owner (default 128)\n"
        "  --key-max-upload SIZE     *upload bytes in flight per key owner (default 16G)\n"
        "  --egress on|off           servers whose profile allows egress reach the web through\n"
        "                            the daemon's proxy (MCPBOX_EGRESS; default on)\n"
        "  --egress-fixture NAME=IP:PORT  serve host NAME from IP:PORT to sandboxes (test sites;\n"
        "                            repeatable; MCPBOX_EGRESS_FIXTURES='N=IP:P;N2=IP:P')\n"
        "many nodes (docs/SCALE.md):\n"
        "  --db FILE|URL             state database: an SQLite file (default DATA_DIR/mcpbox.db)\n"
        "                            or postgresql://... shared by many nodes (MCPBOX_DB)\n"
        "  --node N                  this node's ordinal, 0..255 (MCPBOX_NODE; needs a\n"
        "                            PostgreSQL --db): ids carry it, other nodes forward to it\n"
        "  --node-url URL            where other nodes reach this one (MCPBOX_NODE_URL;\n"
        "                            default http://LISTEN)\n"
        "  --capacity N              sandboxes this node is meant to hold; placement fills\n"
        "                            nodes in proportion (MCPBOX_CAPACITY; default 100)\n"
        "observability (docs/OBSERVABILITY.md):\n"
        "  --log-format text|json    log records as text lines or JSON objects, one a line\n"
        "                            (MCPBOX_LOG_FORMAT; default text)\n"
        "  --metrics on|off          count calls and operations for GET /metrics\n"
        "                            (MCPBOX_METRICS; default on)\n"
        "  --call-log N              MCP calls kept per sandbox for GET\n"
        "                            /local-sandbox/ID/calls; 0 = off (MCPBOX_CALL_LOG; 256)\n"
        "mail (poste_email_toolathlon; docs/servers/poste_email_toolathlon.md):\n"
        "  --no-mail                 no Dovecot, no SMTP front: that server cannot be acquired\n"
        "  --mail-users FILE         users of every mail domain (Toolathlon users_data.json shape)\n"
        "  --mail-imap ADDR:PORT     Dovecot's IMAP for the host (default 127.0.0.1:1143)\n"
        "  --mail-smtp ADDR:PORT     the SMTP front for the host (default 127.0.0.1:1587)\n"
        "  --canvas-listen ADDR:PORT the Canvas REST port for graders (MCPBOX_CANVAS_LISTEN;\n"
        "                            default 127.0.0.1:10001; off = none)\n"
        "  --canvas-users FILE       Toolathlon users_data.json: the token set Toolathlon\n"
        "                            sandboxes claim (MCPBOX_CANVAS_USERS; docs/servers/canvas.md)\n"
        "  --canvas-https ADDR:PORT  the same service over HTTPS too (MCPBOX_CANVAS_HTTPS), with\n"
        "  --canvas-tls FILE         a PEM holding the certificate and its key (MCPBOX_CANVAS_TLS)\n"
        "\n"
        "MCPBOX_API_KEY=KEY adds that API key at start (owner MCPBOX_API_KEY_OWNER or\n"
        "'default'); otherwise manage keys with `mcpbox keys`.\n");
}

static int add_seed(mb_config *cfg, const char *spec)
{
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec || !eq[1]) {
        fprintf(stderr, "mcpbox serve: --seed wants PRESET=DIR, got '%s'\n", spec);
        return 2;
    }
    char *preset = mb_strndup(spec, (size_t)(eq - spec));
    if (!mb_is_benchmark_name(preset)) {
        fprintf(stderr, "mcpbox serve: --seed %s: unknown benchmark '%s' (MCP_Atlas, Toolathlon, "
                        "MCP_Mark)\n", spec, preset);
        free(preset);
        return 2;
    }
    /* Checked now rather than at the first acquire: a serve that starts
     * with a seed it cannot read would fail every sandbox of that preset. */
    struct stat st;
    const char *dir = eq + 1, *why = NULL;
    if (stat(dir, &st) != 0) why = strerror(errno);
    else if (!S_ISDIR(st.st_mode)) why = "not a directory";
    else if (access(dir, R_OK | X_OK) != 0) why = strerror(errno);
    if (why) {
        fprintf(stderr, "mcpbox serve: --seed %s: %s cannot be used as a seed directory: %s%s\n",
                preset, dir, why,
                !strcmp(preset, "MCP_Atlas")
                    ? " (build the MCP_Atlas seed with scripts/build-atlas-seed DIR)"
                    : "");
        free(preset);
        return 2;
    }
    for (size_t i = 0; i < cfg->n_seeds; i++) {
        if (!strcmp(cfg->seeds[i].preset, preset)) {
            free(cfg->seeds[i].dir);
            cfg->seeds[i].dir = mb_strdup(eq + 1);
            free(preset);
            return 0;
        }
    }
    if (cfg->n_seeds == MB_MAX_SEEDS) {
        free(preset);
        fprintf(stderr, "mcpbox serve: too many --seed options\n");
        return 2;
    }
    cfg->seeds[cfg->n_seeds].preset = preset;
    cfg->seeds[cfg->n_seeds].dir = mb_strdup(eq + 1);
    cfg->n_seeds++;
    return 0;
}

static int add_pool(mb_config *cfg, const char *spec)
{
    const char *eq = strchr(spec, '=');
    const char *num = eq ? eq + 1 : spec;
    char *end;
    long n = strtol(num, &end, 10);
    if (!*num || *end || n < 0 || n > 10000) {
        fprintf(stderr, "mcpbox serve: --pool wants N or PROFILE=N with 0 <= N <= 10000, got "
                "'%s'\n", spec);
        return 2;
    }
    if (!eq) {
        cfg->pool_all = (int)n;
        return 0;
    }
    if (cfg->n_pools == MB_MAX_SEEDS) {
        fprintf(stderr, "mcpbox serve: too many --pool options\n");
        return 2;
    }
    cfg->pools[cfg->n_pools].preset = mb_strndup(spec, (size_t)(eq - spec));
    cfg->pools[cfg->n_pools].dir = mb_strdup(num);
    cfg->n_pools++;
    return 0;
}

static int size_opt(const char *name, const char *v, uint64_t *out)
{
    if (mb_parse_size(v, out) != MB_OK || *out == 0) {
        fprintf(stderr, "mcpbox serve: %s wants a size like 512M or 4G, got '%s'\n", name, v);
        return 2;
    }
    return 0;
}

static int int_opt(const char *name, const char *v, long lo, long hi, long *out)
{
    char *end;
    long n = strtol(v, &end, 10);
    if (!*v || *end || n < lo || n > hi) {
        fprintf(stderr, "mcpbox serve: %s wants a number in %ld..%ld, got '%s'\n", name, lo, hi, v);
        return 2;
    }
    *out = n;
    return 0;
}

/* A duration like "90", "90s", "30m", "24h" or "7d" (0 allowed) into seconds. */
static int duration_opt(const char *name, const char *v, int64_t *out)
{
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    int64_t unit = 1;
    if (*end && !end[1]) {
        switch (*end) {
        case 's': unit = 1; end++; break;
        case 'm': unit = 60; end++; break;
        case 'h': unit = 3600; end++; break;
        case 'd': unit = 86400; end++; break;
        default: break;
        }
    }
    /* At most ten years, so that now - it stays a time. */
    if (errno || *v < '0' || *v > '9' || *end || n < 0 || n > 3650LL * 86400 / unit) {
        fprintf(stderr, "mcpbox serve: %s wants a duration like 90s, 30m, 24h, 7d or 0 (at "
                        "most 3650d), got '%s'\n", name, v);
        return 2;
    }
    *out = (int64_t)n * unit;
    return 0;
}

static void set_str(char **dst, const char *v)
{
    free(*dst);
    *dst = mb_strdup(v);
}

enum {
    OPT_LISTEN = 256, OPT_DATA, OPT_PUBLIC, OPT_SEED, OPT_PROFILES, OPT_MAX_UPLOAD,
    OPT_MAX_EXPANDED, OPT_MAX_ENTRIES, OPT_URL_TTL, OPT_DEFAULT_TTL, OPT_ORIGIN,
    OPT_HEADER_LIMIT, OPT_IDLE, OPT_POOL, OPT_CALL_TIMEOUT, OPT_START_TIMEOUT, OPT_MAX_MESSAGE,
    OPT_DUMP_TIMEOUT, OPT_MAX_CONN, OPT_CONN_PER_IP, OPT_ANON_CONN, OPT_HEADER_TIMEOUT,
    OPT_BODY_RATE, OPT_MAX_SESSIONS, OPT_SESSIONS_SANDBOX, OPT_SESSIONS_KEY, OPT_KEY_SANDBOXES,
    OPT_KEY_ACQUIRING, OPT_KEY_UPLOAD,
    OPT_RELEASE_ON_EXIT,
    OPT_FIRST_RUN_KEY,
    OPT_EGRESS, OPT_EGRESS_FIXTURE, OPT_NO_MAIL, OPT_MAIL_USERS, OPT_MAIL_IMAP, OPT_MAIL_SMTP,
    OPT_DRAIN_MAX, OPT_DRAIN_TIMEOUT,
    OPT_DB, OPT_NODE, OPT_NODE_URL, OPT_CAPACITY,
    OPT_METRICS, OPT_CALL_LOG, OPT_LOG_FORMAT,
    OPT_CANVAS_LISTEN, OPT_CANVAS_USERS, OPT_CANVAS_HTTPS, OPT_CANVAS_TLS,
    OPT_RETENTION,
};

/* A count that may be 0 (= unlimited) when `zero_ok`. */
static int count_opt(const char *name, const char *v, int zero_ok, uint64_t *out)
{
    long n;
    int rc = int_opt(name, v, zero_ok ? 0 : 1, 1L << 30, &n);
    if (!rc) *out = (uint64_t)n;
    return rc;
}

/* Applies one setting, from a flag or from the environment. */
static int apply(mb_config *cfg, int opt, const char *v)
{
    uint64_t size;
    long n;
    int rc = 0;
    switch (opt) {
    case OPT_LISTEN: set_str(&cfg->listen, v); break;
    case OPT_DB: set_str(&cfg->db, v); break;
    case OPT_NODE_URL: set_str(&cfg->node_url, v); break;
    case OPT_NODE:
        if (!(rc = int_opt("--node", v, 0, 255, &n))) cfg->node = (int)n;
        break;
    case OPT_CAPACITY:
        if (!(rc = int_opt("--capacity", v, 1, 1000000, &n))) cfg->capacity = n;
        break;
    case OPT_DATA: set_str(&cfg->data_dir, v); break;
    case OPT_PUBLIC: set_str(&cfg->public_url, v); break;
    case OPT_PROFILES: set_str(&cfg->profiles_dir, v); break;
    case OPT_SEED: rc = add_seed(cfg, v); break;
    case OPT_MAX_UPLOAD:
        if (!(rc = size_opt("--max-upload", v, &size))) cfg->max_upload_bytes = size;
        break;
    case OPT_MAX_EXPANDED:
        if (!(rc = size_opt("--max-expanded", v, &size))) cfg->max_expanded_bytes = size;
        break;
    case OPT_MAX_ENTRIES:
        if (!(rc = int_opt("--max-entries", v, 1, 1L << 40, &n))) cfg->max_entries = (uint64_t)n;
        break;
    case OPT_URL_TTL:
        if (!(rc = int_opt("--url-ttl-minutes", v, 1, 10080, &n))) cfg->url_ttl_minutes = (int)n;
        break;
    case OPT_DEFAULT_TTL:
        if (!(rc = int_opt("--default-ttl", v, 60, 86400, &n))) cfg->default_ttl_seconds = n;
        break;
    case OPT_RETENTION:
        rc = duration_opt("--released-retention", v, &cfg->released_retention_s);
        break;
    case OPT_ORIGIN:
        if (cfg->n_allowed_origins == MB_MAX_ALLOWED) {
            fprintf(stderr, "mcpbox serve: too many --allowed-origin options\n");
            return 2;
        }
        cfg->allowed_origins[cfg->n_allowed_origins++] = mb_strdup(v);
        break;
    case OPT_HEADER_LIMIT:
        if (!(rc = size_opt("--header-limit", v, &size))) cfg->header_limit = (unsigned)size;
        break;
    case OPT_POOL: rc = add_pool(cfg, v); break;
    case OPT_RELEASE_ON_EXIT: cfg->release_on_exit = 1; break;
    case OPT_FIRST_RUN_KEY: cfg->first_run_key = 1; break;
    case OPT_CALL_TIMEOUT:
        if (!(rc = int_opt("--call-timeout", v, 1, 86400, &n))) cfg->call_timeout_s = (int)n;
        break;
    case OPT_START_TIMEOUT:
        if (!(rc = int_opt("--start-timeout", v, 1, 3600, &n))) cfg->start_timeout_s = (int)n;
        break;
    case OPT_MAX_MESSAGE:
        if (!(rc = size_opt("--max-message", v, &size))) {
            if (size < 4096) {
                fprintf(stderr, "mcpbox serve: --max-message must be at least 4K\n");
                rc = 2;
            } else {
                cfg->max_message_bytes = size;
            }
        }
        break;
    case OPT_DUMP_TIMEOUT:
        if (!(rc = int_opt("--dump-timeout", v, 1, 86400, &n))) cfg->dump_timeout_s = (int)n;
        break;
    case OPT_MAX_CONN:
        if (!(rc = int_opt("--max-connections", v, 16, 1000000, &n)))
            cfg->max_connections = (unsigned)n;
        break;
    case OPT_CONN_PER_IP:
        if (!(rc = int_opt("--max-connections-per-ip", v, 0, 1000000, &n)))
            cfg->max_conn_per_ip = (unsigned)n;
        break;
    case OPT_ANON_CONN:
        if (!(rc = int_opt("--max-anon-connections", v, 1, 1000000, &n)))
            cfg->max_anon_conns = (unsigned)n;
        break;
    case OPT_HEADER_TIMEOUT:
        if (!(rc = int_opt("--header-timeout", v, 1, 3600, &n)))
            cfg->header_timeout_s = (unsigned)n;
        break;
    case OPT_BODY_RATE:
        if (mb_parse_size(v, &size) != MB_OK) {
            fprintf(stderr, "mcpbox serve: --min-body-rate wants a size like 8K or 0, got "
                    "'%s'\n", v);
            return 2;
        }
        cfg->min_body_rate = size;
        break;
    case OPT_DRAIN_MAX:
        if (!(rc = size_opt("--drain-max", v, &size))) cfg->drain_bytes = size;
        break;
    case OPT_DRAIN_TIMEOUT:
        if (!(rc = int_opt("--drain-timeout", v, 1, 3600, &n))) cfg->drain_timeout_s = (unsigned)n;
        break;
    case OPT_MAX_SESSIONS: rc = count_opt("--max-sessions", v, 0, &cfg->max_sessions); break;
    case OPT_SESSIONS_SANDBOX:
        rc = count_opt("--max-sessions-per-sandbox", v, 0, &cfg->max_sessions_sandbox);
        break;
    case OPT_SESSIONS_KEY:
        rc = count_opt("--max-sessions-per-key", v, 0, &cfg->max_sessions_key);
        break;
    case OPT_KEY_SANDBOXES:
        rc = count_opt("--key-max-sandboxes", v, 1, &cfg->key_max_sandboxes);
        break;
    case OPT_KEY_ACQUIRING:
        rc = count_opt("--key-max-acquiring", v, 1, &cfg->key_max_acquiring);
        break;
    case OPT_KEY_UPLOAD:
        if (mb_parse_size(v, &size) != MB_OK) {
            fprintf(stderr, "mcpbox serve: --key-max-upload wants a size like 16G or 0, got "
                    "'%s'\n", v);
            return 2;
        }
        cfg->key_max_upload = size;
        break;
    case OPT_IDLE:
        if (!(rc = int_opt("--idle-timeout", v, 1, 86400, &n))) cfg->idle_timeout_s = (unsigned)n;
        break;
    case OPT_METRICS:
        if (strcmp(v, "on") && strcmp(v, "off")) {
            fprintf(stderr, "mcpbox serve: --metrics wants on or off, got '%s'\n", v);
            return 2;
        }
        cfg->metrics_off = !strcmp(v, "off");
        break;
    case OPT_CALL_LOG:
        if (!(rc = int_opt("--call-log", v, 0, 100000, &n))) cfg->call_log_entries = (int)n;
        break;
    case OPT_LOG_FORMAT: {
        mb_log_format f;
        if (mb_log_parse_format(v, &f)) {
            fprintf(stderr, "mcpbox serve: --log-format wants text or json, got '%s'\n", v);
            return 2;
        }
        cfg->log_format = (int)f;
        mb_log_set_format(f);
        break;
    }
    case OPT_EGRESS:
        if (strcmp(v, "on") && strcmp(v, "off")) {
            fprintf(stderr, "mcpbox serve: --egress wants on or off, got '%s'\n", v);
            return 2;
        }
        cfg->egress_off = !strcmp(v, "off");
        break;
    case OPT_EGRESS_FIXTURE:
        if (cfg->n_egress_fixtures == MB_MAX_ALLOWED || !strchr(v, '=')) {
            fprintf(stderr, "mcpbox serve: --egress-fixture wants NAME=IP:PORT (at most %d)\n",
                    MB_MAX_ALLOWED);
            return 2;
        }
        cfg->egress_fixtures[cfg->n_egress_fixtures++] = mb_strdup(v);
        break;
    case OPT_NO_MAIL: cfg->no_mail = 1; break;
    case OPT_MAIL_USERS: free(cfg->mail_users); cfg->mail_users = mb_strdup(v); break;
    case OPT_MAIL_IMAP: free(cfg->mail_imap); cfg->mail_imap = mb_strdup(v); break;
    case OPT_MAIL_SMTP: free(cfg->mail_smtp); cfg->mail_smtp = mb_strdup(v); break;
    case OPT_CANVAS_LISTEN: free(cfg->canvas_listen); cfg->canvas_listen = mb_strdup(v); break;
    case OPT_CANVAS_USERS: free(cfg->canvas_users); cfg->canvas_users = mb_strdup(v); break;
    case OPT_CANVAS_HTTPS: free(cfg->canvas_https); cfg->canvas_https = mb_strdup(v); break;
    case OPT_CANVAS_TLS: free(cfg->canvas_tls); cfg->canvas_tls = mb_strdup(v); break;
    }
    return rc;
}

int mb_config_parse(mb_config *cfg, int argc, char **argv)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->listen = mb_strdup("127.0.0.1:8080");
    cfg->data_dir = mb_strdup("./var");
    cfg->max_upload_bytes = 4ULL << 30;
    cfg->max_expanded_bytes = 4ULL << 30;
    cfg->max_entries = 1000000;
    cfg->url_ttl_minutes = 30;
    cfg->default_ttl_seconds = 7200;
    cfg->released_retention_s = 86400;
    cfg->header_limit = 32 * 1024;
    cfg->idle_timeout_s = 300;
    cfg->pool_all = -1;
    cfg->call_log_entries = 256;
    const char *lf = getenv("MCPBOX_LOG_FORMAT");
    if (lf && *lf && apply(cfg, OPT_LOG_FORMAT, lf)) return 2;
    const char *cl = getenv("MCPBOX_CALL_LOG");
    if (cl && *cl && apply(cfg, OPT_CALL_LOG, cl)) return 2;
    const char *me = getenv("MCPBOX_METRICS");
    if (me && *me && apply(cfg, OPT_METRICS, me)) return 2;
    cfg->call_timeout_s = 120;
    cfg->start_timeout_s = 30;
    cfg->max_message_bytes = 64ULL << 20;
    cfg->dump_timeout_s = 300;
    cfg->max_connections = 4096;
    cfg->max_conn_per_ip = 512;
    cfg->max_anon_conns = 2048;
    cfg->header_timeout_s = 30;
    cfg->min_body_rate = 8 << 10;
    cfg->drain_bytes = 4 << 20;
    cfg->drain_timeout_s = 2;
    cfg->max_sessions = 10000;
    cfg->max_sessions_sandbox = 1000;
    cfg->max_sessions_key = 5000;
    cfg->key_max_sandboxes = 1000;
    cfg->key_max_acquiring = 128;
    cfg->key_max_upload = 16ULL << 30;
    cfg->node = -1;
    cfg->capacity = 100;

    static const struct { const char *env; int opt; } envs[] = {
        {"MCPBOX_LISTEN", OPT_LISTEN}, {"MCPBOX_DATA_DIR", OPT_DATA},
        {"MCPBOX_PUBLIC_URL", OPT_PUBLIC}, {"MCPBOX_PROFILES_DIR", OPT_PROFILES},
        {"MCPBOX_MAX_UPLOAD", OPT_MAX_UPLOAD}, {"MCPBOX_MAX_EXPANDED", OPT_MAX_EXPANDED},
        {"MCPBOX_MAX_ENTRIES", OPT_MAX_ENTRIES}, {"MCPBOX_URL_TTL_MINUTES", OPT_URL_TTL},
        {"MCPBOX_DEFAULT_TTL", OPT_DEFAULT_TTL}, {"MCPBOX_CALL_TIMEOUT", OPT_CALL_TIMEOUT},
        {"MCPBOX_RELEASED_RETENTION", OPT_RETENTION},
        {"MCPBOX_START_TIMEOUT", OPT_START_TIMEOUT}, {"MCPBOX_MAX_MESSAGE", OPT_MAX_MESSAGE},
        {"MCPBOX_DUMP_TIMEOUT", OPT_DUMP_TIMEOUT}, {"MCPBOX_MAX_CONNECTIONS", OPT_MAX_CONN},
        {"MCPBOX_MAX_CONNECTIONS_PER_IP", OPT_CONN_PER_IP},
        {"MCPBOX_MAX_ANON_CONNECTIONS", OPT_ANON_CONN},
        {"MCPBOX_HEADER_TIMEOUT", OPT_HEADER_TIMEOUT}, {"MCPBOX_MIN_BODY_RATE", OPT_BODY_RATE},
        {"MCPBOX_DRAIN_MAX", OPT_DRAIN_MAX}, {"MCPBOX_DRAIN_TIMEOUT", OPT_DRAIN_TIMEOUT},
        {"MCPBOX_MAX_SESSIONS", OPT_MAX_SESSIONS},
        {"MCPBOX_MAX_SESSIONS_PER_SANDBOX", OPT_SESSIONS_SANDBOX},
        {"MCPBOX_MAX_SESSIONS_PER_KEY", OPT_SESSIONS_KEY},
        {"MCPBOX_KEY_MAX_SANDBOXES", OPT_KEY_SANDBOXES},
        {"MCPBOX_KEY_MAX_ACQUIRING", OPT_KEY_ACQUIRING},
        {"MCPBOX_KEY_MAX_UPLOAD", OPT_KEY_UPLOAD},
        {"MCPBOX_EGRESS", OPT_EGRESS},
        {"MCPBOX_DB", OPT_DB}, {"MCPBOX_NODE", OPT_NODE}, {"MCPBOX_NODE_URL", OPT_NODE_URL},
        {"MCPBOX_CAPACITY", OPT_CAPACITY},
        {"MCPBOX_CANVAS_LISTEN", OPT_CANVAS_LISTEN},
        {"MCPBOX_CANVAS_USERS", OPT_CANVAS_USERS},
        {"MCPBOX_CANVAS_HTTPS", OPT_CANVAS_HTTPS}, {"MCPBOX_CANVAS_TLS", OPT_CANVAS_TLS},
    };
    for (size_t i = 0; i < sizeof envs / sizeof *envs; i++) {
        const char *v = getenv(envs[i].env);
        if (v && *v && apply(cfg, envs[i].opt, v)) return 2;
    }
    const char *seeds = getenv("MCPBOX_SEED");
    if (seeds && *seeds) {
        char *copy = mb_strdup(seeds), *save = NULL;
        for (char *tok = strtok_r(copy, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
            if (add_seed(cfg, tok)) {
                free(copy);
                return 2;
            }
        }
        free(copy);
    }
    const char *pools = getenv("MCPBOX_POOL");
    if (pools && *pools) {
        char *copy = mb_strdup(pools), *save = NULL;
        for (char *tok = strtok_r(copy, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
            if (add_pool(cfg, tok)) {
                free(copy);
                return 2;
            }
        }
        free(copy);
    }
    const char *fixtures = getenv("MCPBOX_EGRESS_FIXTURES");
    if (fixtures && *fixtures) {
        char *copy = mb_strdup(fixtures), *save = NULL;
        for (char *tok = strtok_r(copy, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
            if (apply(cfg, OPT_EGRESS_FIXTURE, tok)) {
                free(copy);
                return 2;
            }
        }
        free(copy);
    }
    const char *key = getenv("MCPBOX_API_KEY");
    if (key && *key) cfg->env_api_key = mb_strdup(key);
    const char *owner = getenv("MCPBOX_API_KEY_OWNER");
    cfg->env_api_key_owner = mb_strdup(owner && *owner ? owner : "default");

    static const struct option longopts[] = {
        {"listen", required_argument, NULL, OPT_LISTEN},
        {"data-dir", required_argument, NULL, OPT_DATA},
        {"public-url", required_argument, NULL, OPT_PUBLIC},
        {"seed", required_argument, NULL, OPT_SEED},
        {"profiles-dir", required_argument, NULL, OPT_PROFILES},
        {"max-upload", required_argument, NULL, OPT_MAX_UPLOAD},
        {"max-expanded", required_argument, NULL, OPT_MAX_EXPANDED},
        {"max-entries", required_argument, NULL, OPT_MAX_ENTRIES},
        {"url-ttl-minutes", required_argument, NULL, OPT_URL_TTL},
        {"default-ttl", required_argument, NULL, OPT_DEFAULT_TTL},
        {"released-retention", required_argument, NULL, OPT_RETENTION},
        {"allowed-origin", required_argument, NULL, OPT_ORIGIN},
        {"header-limit", required_argument, NULL, OPT_HEADER_LIMIT},
        {"idle-timeout", required_argument, NULL, OPT_IDLE},
        {"pool", required_argument, NULL, OPT_POOL},
        {"release-on-exit", no_argument, NULL, OPT_RELEASE_ON_EXIT},
        {"first-run-key", no_argument, NULL, OPT_FIRST_RUN_KEY},
        {"call-timeout", required_argument, NULL, OPT_CALL_TIMEOUT},
        {"start-timeout", required_argument, NULL, OPT_START_TIMEOUT},
        {"max-message", required_argument, NULL, OPT_MAX_MESSAGE},
        {"dump-timeout", required_argument, NULL, OPT_DUMP_TIMEOUT},
        {"max-connections", required_argument, NULL, OPT_MAX_CONN},
        {"max-connections-per-ip", required_argument, NULL, OPT_CONN_PER_IP},
        {"max-anon-connections", required_argument, NULL, OPT_ANON_CONN},
        {"header-timeout", required_argument, NULL, OPT_HEADER_TIMEOUT},
        {"min-body-rate", required_argument, NULL, OPT_BODY_RATE},
        {"drain-max", required_argument, NULL, OPT_DRAIN_MAX},
        {"drain-timeout", required_argument, NULL, OPT_DRAIN_TIMEOUT},
        {"max-sessions", required_argument, NULL, OPT_MAX_SESSIONS},
        {"max-sessions-per-sandbox", required_argument, NULL, OPT_SESSIONS_SANDBOX},
        {"max-sessions-per-key", required_argument, NULL, OPT_SESSIONS_KEY},
        {"key-max-sandboxes", required_argument, NULL, OPT_KEY_SANDBOXES},
        {"key-max-acquiring", required_argument, NULL, OPT_KEY_ACQUIRING},
        {"key-max-upload", required_argument, NULL, OPT_KEY_UPLOAD},
        {"egress", required_argument, NULL, OPT_EGRESS},
        {"metrics", required_argument, NULL, OPT_METRICS},
        {"call-log", required_argument, NULL, OPT_CALL_LOG},
        {"log-format", required_argument, NULL, OPT_LOG_FORMAT},
        {"egress-fixture", required_argument, NULL, OPT_EGRESS_FIXTURE},
        {"db", required_argument, NULL, OPT_DB},
        {"node", required_argument, NULL, OPT_NODE},
        {"node-url", required_argument, NULL, OPT_NODE_URL},
        {"capacity", required_argument, NULL, OPT_CAPACITY},
        {"no-mail", no_argument, NULL, OPT_NO_MAIL},
        {"mail-users", required_argument, NULL, OPT_MAIL_USERS},
        {"mail-imap", required_argument, NULL, OPT_MAIL_IMAP},
        {"mail-smtp", required_argument, NULL, OPT_MAIL_SMTP},
        {"canvas-listen", required_argument, NULL, OPT_CANVAS_LISTEN},
        {"canvas-users", required_argument, NULL, OPT_CANVAS_USERS},
        {"canvas-https", required_argument, NULL, OPT_CANVAS_HTTPS},
        {"canvas-tls", required_argument, NULL, OPT_CANVAS_TLS},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (c == 'h') {
            usage(stdout);
            return 1;
        }
        if (c == '?') {
            usage(stderr);
            return 2;
        }
        if (apply(cfg, c, optarg)) return 2;
    }
    if (optind < argc) {
        fprintf(stderr, "mcpbox serve: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (cfg->node >= 0 && !(cfg->db && mb_store_is_url(cfg->db))) {
        fprintf(stderr, "mcpbox serve: --node needs a shared PostgreSQL database (--db "
                        "postgresql://...)\n");
        return 2;
    }
    size_t n = strlen(cfg->public_url ? cfg->public_url : "");
    while (n && cfg->public_url[n - 1] == '/') cfg->public_url[--n] = '\0';
    return 0;
}

void mb_config_free(mb_config *cfg)
{
    free(cfg->listen);
    free(cfg->data_dir);
    free(cfg->public_url);
    free(cfg->profiles_dir);
    for (size_t i = 0; i < cfg->n_seeds; i++) {
        free(cfg->seeds[i].preset);
        free(cfg->seeds[i].dir);
    }
    for (size_t i = 0; i < cfg->n_pools; i++) {
        free(cfg->pools[i].preset);
        free(cfg->pools[i].dir);
    }
    for (size_t i = 0; i < cfg->n_allowed_origins; i++) free(cfg->allowed_origins[i]);
    for (size_t i = 0; i < cfg->n_egress_fixtures; i++) free(cfg->egress_fixtures[i]);
    free(cfg->env_api_key);
    free(cfg->env_api_key_owner);
    free(cfg->db);
    free(cfg->node_url);
    free(cfg->mail_users);
    free(cfg->mail_imap);
    free(cfg->mail_smtp);
    free(cfg->canvas_listen);
    free(cfg->canvas_users);
    free(cfg->canvas_https);
    free(cfg->canvas_tls);
    memset(cfg, 0, sizeof *cfg);
}
