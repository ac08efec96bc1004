/*
 * cmd_playwright.c - `mcpbox playwright`: runs the real @playwright/mcp (Node)
 * as a child on pipes and relays newline-delimited JSON-RPC between it and our
 * stdio (see playwright.h for what it adds on the way).
 *
 * One poll loop, non-blocking queues both ways, so that neither side can
 * stall the other. Messages we do not need to look at pass as the bytes they
 * were.
 */
#define _GNU_SOURCE
#include "cli/cli.h"
#include "egress/egress.h"
#include "playwright/playwright.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define LINE_MAX_BYTES ((size_t)256 << 20)
#define PRESTART_ID "\"mcpbox-playwright-prestart\""
/* The held tools/list answer goes out after this long even if the browser is
 * not up yet, so that a slow host never runs into the daemon's start timeout
 * (30 s by default); the browser keeps starting. */
#define PRESTART_HOLD_MS 20000
#define RELAUNCH_ID "\"mcpbox-playwright-relaunch\""
/* The gateway's note of a new client session (docs/GATEWAY.md). */
#define MB_PW_CLIENT_NOTE "notifications/mcpbox/client_initialized"
/* After a crash, the tab-list call that starts the new browser is retried
 * this often while upstream still tears the old one down ("Another browser
 * context is being closed"), for at most RELAUNCH_TRIES times. */
#define RELAUNCH_RETRY_MS 300
#define RELAUNCH_TRIES 100
/* A browser that exits this soon after a browser_close call was asked to. */
#define CLOSE_GRACE_MS 10000
/* What the call that meets a crashed browser is told. */
#define CRASH_TEXT "Error: the browser crashed (its process ended unexpectedly). mcpbox has " \
                   "started a new one; the tabs and page state of the old one are gone. Call " \
                   "the tool again (navigate first)."

static const char usage_text[] =
    "usage: mcpbox playwright --package DIR [--node PATH] [--with-chunk] [--span-size N]\n"
    "                         [--egress-socket PATH] [--no-prestart] [-- ARGS...]\n"
    "  --package DIR         holds node_modules/@playwright/mcp (scripts/install-playwright)\n"
    "  --node PATH           the Node binary (default: node on PATH)\n"
    "  --with-chunk          Toolathlon's playwright_with_chunk layer over 0.0.32\n"
    "  --span-size N         its snapshot span size (default 2000; -1 = no spans)\n"
    "  --egress-socket PATH  the daemon's proxy socket (default $" MB_EGRESS_ENV ");\n"
    "                        Chromium gets --proxy-server through a loopback forwarder\n"
    "  --no-prestart         start the browser lazily, on the first browser tool\n"
    "  ARGS                  passed to @playwright/mcp's cli.js\n";

typedef struct relay {
    int child_in, child_out;
    pid_t pid;
    mb_buf from_parent, from_child, to_child, to_parent;
    int parent_eof, child_eof;
    /* start-up: the gateway's first tools/list is answered after the prestart */
    json_t *list_id;      /* id of the first tools/list request, until its answer */
    json_t *init_id;      /* id of initialize (chunk: serverInfo is the fork's) */
    char *held_list;      /* that answer, held while the prestart runs */
    char *tools_cache;    /* the result of that first tools/list, for the later ones */
    long long held_until; /* CLOCK_MONOTONIC ms when it goes out regardless */
    int prestart;         /* 1 wanted, 2 sent, 3 done / not wanted */
    mb_pw_chunk *chunk;   /* NULL unless --with-chunk */
    json_t *calls;        /* upstream id (as JSON text) -> tool name, for the chunk layer */
    /* the browser's process and crash recovery */
    char *launch_call;    /* "name","arguments" of the tab-list tool that launches it */
    pid_t browser;        /* its main process, 0 unknown */
    int browser_fd;       /* pidfd of it, -1 none */
    json_t *inflight;     /* ids (JSON text) of tools/call requests sent upstream */
    int crash_unreported; /* it died unasked and no call has been told yet */
    int relaunching;      /* the relaunch call is out (or waiting for its retry) */
    int relaunch_tries;
    long long relaunch_at;   /* CLOCK_MONOTONIC ms of the next (re)send, 0 none */
    long long close_asked;   /* when a browser_close went upstream */
    mb_buf held_calls;       /* tools/call lines from the gateway while relaunching */
} relay;

static void queue_line(mb_buf *b, const char *s, size_t n)
{
    mb_buf_append(b, s, n);
    mb_buf_putc(b, '\n');
}

static void queue_json(mb_buf *b, json_t *msg)
{
    char *s = json_dumps(msg, JSON_COMPACT);
    queue_line(b, s, strlen(s));
    free(s);
}

static char *id_key(json_t *id)
{
    return id ? json_dumps(id, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void release_held_list(relay *r)
{
    if (!r->held_list) return;
    queue_line(&r->to_parent, r->held_list, strlen(r->held_list));
    free(r->held_list);
    r->held_list = NULL;
}

/* Remembers the call that launches the browser: the tab list, which every
 * version answers by opening the first tab. */
static void learn_launch_call(relay *r, json_t *tools)
{
    const char *name = NULL, *args = "{}";
    size_t i;
    json_t *t;
    json_array_foreach(tools, i, t) {
        const char *n = json_string_value(json_object_get(t, "name"));
        if (n && !strcmp(n, "browser_tabs")) name = n, args = "{\"action\":\"list\"}";
        else if (n && !strcmp(n, "browser_tab_list") && !name) name = n;
    }
    if (name && !r->launch_call)
        r->launch_call = mb_asprintf("\"name\":\"%s\",\"arguments\":%s", name, args);
}

static void send_launch(relay *r, const char *id)
{
    mb_buf_printf(&r->to_child,
                  "{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"tools/call\",\"params\":{%s}}\n",
                  id, r->launch_call);
}

static void send_prestart(relay *r, json_t *tools)
{
    learn_launch_call(r, tools);
    if (!r->launch_call) {
        r->prestart = 3;
        return;
    }
    send_launch(r, PRESTART_ID);
    r->prestart = 2;
}

/* Starts watching the browser's main process, once there is one. */
static void watch_browser(relay *r)
{
    if (r->browser_fd >= 0) return;
    pid_t pid = mb_pw_browser_pid(r->pid);
    if (!pid) return;
    r->browser = pid;
    r->browser_fd = mb_pw_pidfd(pid);
}

/* The browser's process ended: asked for (browser_close) or a crash, after
 * which upstream is made to launch a new one right away. */
static void browser_ended(relay *r)
{
    close(r->browser_fd);
    r->browser_fd = -1;
    r->browser = 0;
    if (r->close_asked && now_ms() - r->close_asked < CLOSE_GRACE_MS) return;
    fprintf(stderr, "mcpbox playwright: the browser's process ended unexpectedly; starting a "
                    "new one\n");
    r->crash_unreported = 1;
    if (r->launch_call && !r->relaunching) {
        r->relaunching = 1;
        r->relaunch_tries = 0;
        r->relaunch_at = now_ms();
    }
}

/* 1 if the browser is known dead now (its pidfd readable). */
static int browser_dead_now(relay *r)
{
    if (r->browser_fd < 0) return 0;
    struct pollfd p = {.fd = r->browser_fd, .events = POLLIN};
    return poll(&p, 1, 0) == 1;
}

static void answer_error(relay *r, json_t *id, const char *text)
{
    json_t *ans = json_pack("{s:s,s:O,s:{s:[{s:s,s:s}],s:b}}", "jsonrpc", "2.0", "id", id,
                            "result", "content", "type", "text", "text", text, "isError", 1);
    queue_json(&r->to_parent, ans);
    json_decref(ans);
}

static void from_parent(relay *r, char *line, size_t n);

/* 1 if the line is the gateway's notifications/mcpbox/client_initialized. */
static int is_client_note(const char *line, size_t n)
{
    static const char name[] = "\"" MB_PW_CLIENT_NOTE "\"";
    if (n >= (1u << 20) || !memmem(line, n, name, sizeof name - 1)) return 0;
    json_error_t je;
    json_t *msg = json_loadb(line, n, 0, &je);
    const char *method = json_string_value(json_object_get(msg, "method"));
    int note = method && !strcmp(method, MB_PW_CLIENT_NOTE) && !json_object_get(msg, "id");
    json_decref(msg);
    return note;
}

/* The new browser is up (or the relaunch gave up): the held calls go on. */
static void relaunch_done(relay *r)
{
    r->relaunching = 0;
    r->relaunch_at = 0;
    watch_browser(r);
    mb_buf held = r->held_calls;
    memset(&r->held_calls, 0, sizeof r->held_calls);
    size_t start = 0;
    while (start < held.len) {
        char *nl = memchr(held.data + start, '\n', held.len - start);
        size_t n = (size_t)(nl - (held.data + start));
        from_parent(r, held.data + start, n);
        start += n + 1;
    }
    mb_buf_free(&held);
}

/* A line from the gateway. */
static void from_parent(relay *r, char *line, size_t n)
{
    /* The gateway's note of each new client session is mcpbox's own, which
     * upstream ignores: Node would still wake up to parse and validate it, a
     * millisecond of its CPU per session, on the cores the session's
     * tools/list needs. It stops here. */
    if (is_client_note(line, n)) return;
    json_error_t je;
    json_t *msg = NULL;
    /* Only requests matter here; they are small. */
    if (n < (1u << 20)) msg = json_loadb(line, n, 0, &je);
    const char *method = msg ? json_string_value(json_object_get(msg, "method")) : NULL;
    json_t *id = msg ? json_object_get(msg, "id") : NULL;
    if (method && id && !strcmp(method, "tools/list")) {
        int paged = json_object_get(json_object_get(msg, "params"), "cursor") != NULL;
        if (r->tools_cache && !paged) {
            /* The list is static: answered here, in microseconds, not by Node. */
            char *k = id_key(id);
            mb_buf_printf(&r->to_parent, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":%s}\n", k,
                          r->tools_cache);
            free(k);
            json_decref(msg);
            return;
        }
        if (!r->list_id && !paged) {
            r->list_id = json_incref(id);
        } else if (r->chunk) {
            char *k = id_key(id);
            json_object_set_new(r->calls, k, json_pack("{s:s}", "list", "tools/list"));
            free(k);
        }
    }
    if (method && id && !strcmp(method, "tools/call") && (r->crash_unreported || r->relaunching)) {
        const char *tool = json_string_value(json_object_get(json_object_get(msg, "params"), "name"));
        int local = r->chunk && tool && mb_pw_chunk_is_local(tool);
        if (!local && r->crash_unreported && !json_object_size(r->inflight)) {
            /* the first call after the crash: told so, not run on the new browser */
            r->crash_unreported = 0;
            answer_error(r, id, CRASH_TEXT);
            json_decref(msg);
            return;
        }
        if (!local && r->relaunching) { /* waits for the new browser */
            queue_line(&r->held_calls, line, n);
            json_decref(msg);
            return;
        }
    }
    if (method && id && !strcmp(method, "tools/call")) {
        const char *tool = json_string_value(json_object_get(json_object_get(msg, "params"), "name"));
        if (tool && !strcmp(tool, "browser_close")) r->close_asked = now_ms();
        if (!(r->chunk && tool && mb_pw_chunk_is_local(tool))) {
            char *k = id_key(id);
            json_object_set_new(r->inflight, k, json_true());
            free(k);
        }
    }
    if (r->chunk && method && id && !strcmp(method, "initialize")) {
        json_decref(r->init_id);
        r->init_id = json_incref(id);
    }
    if (r->chunk && method && id && !strcmp(method, "tools/call")) {
        json_t *params = json_object_get(msg, "params");
        const char *tool = json_string_value(json_object_get(params, "name"));
        if (tool && mb_pw_chunk_is_local(tool)) {
            int is_error = 0;
            char *text = mb_pw_chunk_call(r->chunk, tool, json_object_get(params, "arguments"),
                                          &is_error);
            json_t *res = json_pack("{s:[{s:s,s:s}]}", "content", "type", "text", "text", text);
            if (is_error) json_object_set_new(res, "isError", json_true());
            json_t *ans = json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id, "result", res);
            queue_json(&r->to_parent, ans);
            json_decref(ans);
            free(text);
            json_decref(msg);
            return;
        }
        if (tool) {
            char *k = id_key(id);
            json_t *args = json_object_get(params, "arguments");
            json_object_set_new(r->calls, k, json_pack("{s:s,s:O}", "tool", tool, "args",
                                                       args ? args : json_null()));
            free(k);
        }
    }
    json_decref(msg);
    queue_line(&r->to_child, line, n);
}

/* Applies the chunk layer to a tools/call answer; 1 if it was rewritten. */
static int chunk_answer(relay *r, json_t *msg, json_t *call)
{
    const char *tool = json_string_value(json_object_get(call, "tool"));
    json_t *result = json_object_get(msg, "result");
    json_t *content = json_object_get(result, "content");
    const char *first = json_string_value(json_object_get(json_array_get(content, 0), "text"));
    mb_pw_chunk_after_call(r->chunk, tool, json_object_get(call, "args"), first,
                           !result || json_is_true(json_object_get(result, "isError")));
    size_t i;
    json_t *block;
    int changed = 0;
    json_array_foreach(content, i, block) {
        const char *type = json_string_value(json_object_get(block, "type"));
        const char *text = json_string_value(json_object_get(block, "text"));
        if (!type || strcmp(type, "text") || !text) continue;
        char *nt = mb_pw_chunk_result_text(r->chunk, tool, text);
        if (nt) {
            json_object_set_new(block, "text", json_string(nt));
            free(nt);
            changed = 1;
        }
    }
    return changed;
}

/* A line from @playwright/mcp. */
static void from_child(relay *r, char *line, size_t n)
{
    if (r->tools_cache && memmem(line, n, "notifications/tools/list_changed", 32)) {
        free(r->tools_cache); /* the next tools/list goes to Node again */
        r->tools_cache = NULL;
    }
    if (!(r->prestart == 2 || r->list_id || r->init_id || r->relaunching ||
          json_object_size(r->inflight) || (r->chunk && json_object_size(r->calls)))) {
        queue_line(&r->to_parent, line, n);
        return;
    }
    json_error_t je;
    json_t *msg = json_loadb(line, n, 0, &je);
    json_t *id = msg ? json_object_get(msg, "id") : NULL;
    int is_answer = id && !json_object_get(msg, "method");
    char *k = is_answer ? id_key(id) : NULL;
    if (k && r->prestart == 2 && !strcmp(k, PRESTART_ID)) {
        if (json_object_get(msg, "error") || json_is_true(json_object_get(json_object_get(msg, "result"), "isError")))
            fprintf(stderr, "mcpbox playwright: starting the browser failed: %.*s\n",
                    (int)(n > 2000 ? 2000 : n), line);
        r->prestart = 3;
        release_held_list(r);
        watch_browser(r);
        goto done;
    }
    if (k && !strcmp(k, RELAUNCH_ID)) {
        int failed = json_object_get(msg, "error") ||
                     json_is_true(json_object_get(json_object_get(msg, "result"), "isError"));
        if (failed && ++r->relaunch_tries < RELAUNCH_TRIES) {
            r->relaunch_at = now_ms() + RELAUNCH_RETRY_MS; /* the old one is still closing */
        } else {
            if (failed)
                fprintf(stderr, "mcpbox playwright: starting a new browser failed: %.*s\n",
                        (int)(n > 2000 ? 2000 : n), line);
            relaunch_done(r);
        }
        goto done;
    }
    if (k && json_object_get(r->inflight, k)) {
        json_object_del(r->inflight, k);
        json_t *result = json_object_get(msg, "result");
        int failed = json_object_get(msg, "error") || json_is_true(json_object_get(result, "isError"));
        if (failed && !r->crash_unreported && browser_dead_now(r)) browser_ended(r);
        if (failed && r->crash_unreported) {
            /* the call the crash hit: upstream's error, and what happened */
            r->crash_unreported = 0;
            json_t *content = json_object_get(result, "content");
            if (json_is_array(content))
                json_array_insert_new(content, 0, json_pack("{s:s,s:s}", "type", "text", "text",
                                                            CRASH_TEXT));
            if (!result || !json_is_array(content)) {
                answer_error(r, id, CRASH_TEXT);
                goto done;
            }
            if (r->chunk) {
                json_t *call = json_object_get(r->calls, k);
                if (call) json_object_del(r->calls, k);
            }
            queue_json(&r->to_parent, msg);
            goto done;
        }
        if (!failed && r->browser_fd < 0 && !r->relaunching) watch_browser(r);
    }
    if (k && r->list_id) {
        char *lk = id_key(r->list_id);
        int same = !strcmp(k, lk);
        free(lk);
        if (same) {
            json_decref(r->list_id);
            r->list_id = NULL;
            json_t *result = json_object_get(msg, "result");
            if (r->chunk && result) mb_pw_chunk_tools(r->chunk, result);
            if (json_is_array(json_object_get(result, "tools")) &&
                !json_object_get(result, "nextCursor")) {
                free(r->tools_cache);
                r->tools_cache = json_dumps(result, JSON_COMPACT);
            }
            char *out = r->chunk && result ? json_dumps(msg, JSON_COMPACT) : mb_strndup(line, n);
            learn_launch_call(r, json_object_get(result, "tools"));
            if (r->prestart == 1) send_prestart(r, json_object_get(result, "tools"));
            if (r->prestart == 2) {
                r->held_list = out;
                r->held_until = now_ms() + PRESTART_HOLD_MS;
            } else {
                queue_line(&r->to_parent, out, strlen(out));
                free(out);
            }
            goto done;
        }
    }
    if (k && r->init_id) {
        char *ik = id_key(r->init_id);
        int same = !strcmp(k, ik);
        free(ik);
        json_t *info = json_object_get(json_object_get(msg, "result"), "serverInfo");
        if (same && json_is_object(info)) {
            /* the fork's package.json version */
            json_object_set_new(info, "version", json_string(MB_PW_CHUNK_VERSION));
            json_decref(r->init_id);
            r->init_id = NULL;
            queue_json(&r->to_parent, msg);
            goto done;
        }
    }
    if (r->chunk && k) {
        json_t *call = json_incref(json_object_get(r->calls, k));
        if (call) {
            json_object_del(r->calls, k);
            json_t *result = json_object_get(msg, "result");
            int changed = 0;
            if (json_object_get(call, "list")) {
                if ((changed = result != NULL)) mb_pw_chunk_tools(r->chunk, result);
            } else {
                changed = chunk_answer(r, msg, call);
            }
            json_decref(call);
            if (changed) {
                queue_json(&r->to_parent, msg);
                goto done;
            }
        }
    }
    queue_line(&r->to_parent, line, n);
done:
    free(k);
    json_decref(msg);
}

/* Splits complete lines off `in` and hands them to `fn`. */
static void take_lines(relay *r, mb_buf *in, void (*fn)(relay *, char *, size_t))
{
    size_t start = 0;
    for (;;) {
        char *nl = memchr(in->data + start, '\n', in->len - start);
        if (!nl) break;
        size_t n = (size_t)(nl - (in->data + start));
        char *line = in->data + start;
        if (n && line[n - 1] == '\r') n--;
        if (n) fn(r, line, n);
        start = (size_t)(nl - in->data) + 1;
    }
    mb_buf_consume(in, start);
    if (in->len > LINE_MAX_BYTES) {
        fprintf(stderr, "mcpbox playwright: dropped a message over %zu bytes\n", LINE_MAX_BYTES);
        mb_buf_reset(in);
    }
}

/* 0 ok, -1 the peer is gone. */
static int flush(int fd, mb_buf *b)
{
    while (b->len) {
        ssize_t w = write(fd, b->data, b->len);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && errno == EAGAIN) return 0;
        if (w <= 0) return -1;
        mb_buf_consume(b, (size_t)w);
    }
    return 0;
}

static int read_into(int fd, mb_buf *b)
{
    mb_buf_reserve(b, 65536);
    ssize_t n = read(fd, b->data + b->len, 65536);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return 1;
    if (n <= 0) return 0;
    b->len += (size_t)n;
    return 1;
}

static int spawn_child(relay *r, char **argv, mb_err *err)
{
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC)) return mb_err_sys(err, errno, "pipe");
    if (pipe2(out, O_CLOEXEC)) {
        close(in[0]);
        close(in[1]);
        return mb_err_sys(err, errno, "pipe");
    }
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    mb_spawnattr_init_clean(&attr);
    int rc = posix_spawnp(&r->pid, argv[0], &fa, &attr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    close(in[0]);
    close(out[1]);
    if (rc) {
        close(in[1]);
        close(out[0]);
        return mb_err_sys(err, rc, "cannot start %s", argv[0]);
    }
    r->child_in = in[1];
    r->child_out = out[0];
    fcntl(r->child_in, F_SETFL, O_NONBLOCK);
    fcntl(r->child_out, F_SETFL, O_NONBLOCK);
    return MB_OK;
}

static int run(relay *r)
{
    fcntl(STDOUT_FILENO, F_SETFL, fcntl(STDOUT_FILENO, F_GETFL) | O_NONBLOCK);
    for (;;) {
        if (r->parent_eof && !r->to_child.len && r->child_in >= 0) {
            close(r->child_in); /* Node ends when its stdin does */
            r->child_in = -1;
        }
        if (r->child_eof && !r->to_parent.len) break;
        struct pollfd p[5] = {
            {.fd = r->parent_eof ? -1 : STDIN_FILENO, .events = POLLIN},
            {.fd = r->child_eof ? -1 : r->child_out, .events = POLLIN},
            {.fd = r->to_child.len && r->child_in >= 0 ? r->child_in : -1, .events = POLLOUT},
            {.fd = r->to_parent.len ? STDOUT_FILENO : -1, .events = POLLOUT},
            {.fd = r->browser_fd, .events = POLLIN},
        };
        int wait = -1;
        if (r->held_list) {
            long long left = r->held_until - now_ms();
            wait = left > 0 ? (int)left : 0;
        }
        if (r->relaunch_at) {
            long long left = r->relaunch_at - now_ms();
            if (wait < 0 || left < wait) wait = left > 0 ? (int)left : 0;
        }
        int np = poll(p, 5, wait);
        if (np < 0) {
            if (errno == EINTR) continue;
            return 1;
        }
        if (p[4].revents && r->browser_fd >= 0) browser_ended(r);
        if (r->relaunch_at && now_ms() >= r->relaunch_at) {
            r->relaunch_at = 0;
            send_launch(r, RELAUNCH_ID);
        }
        if (r->held_list && now_ms() >= r->held_until) {
            fprintf(stderr, "mcpbox playwright: the browser is not up after %d s; answering "
                            "tools/list anyway\n", PRESTART_HOLD_MS / 1000);
            release_held_list(r);
        }
        if (p[0].revents) {
            if (!read_into(STDIN_FILENO, &r->from_parent)) r->parent_eof = 1;
            take_lines(r, &r->from_parent, from_parent);
        }
        if (p[1].revents) {
            if (!read_into(r->child_out, &r->from_child)) r->child_eof = 1;
            take_lines(r, &r->from_child, from_child);
        }
        if (p[2].revents && flush(r->child_in, &r->to_child)) {
            close(r->child_in);
            r->child_in = -1;
            mb_buf_reset(&r->to_child);
        }
        if (p[3].revents && flush(STDOUT_FILENO, &r->to_parent)) return 0; /* gateway gone */
        if (r->child_in >= 0 && r->to_child.len) (void)flush(r->child_in, &r->to_child);
        if (r->to_parent.len && flush(STDOUT_FILENO, &r->to_parent)) return 0;
    }
    return 0;
}

static int reap(pid_t pid)
{
    int st = 0;
    for (int i = 0; i < 50; i++) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid) return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (w < 0) return 1;
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    return 1;
}

int mb_cmd_playwright(int argc, char **argv)
{
    enum { O_PACKAGE = 1, O_NODE, O_CHUNK, O_SPAN, O_EGRESS, O_NOPRE, O_HELP };
    static const struct option lo[] = {
        {"package", required_argument, NULL, O_PACKAGE}, {"node", required_argument, NULL, O_NODE},
        {"with-chunk", no_argument, NULL, O_CHUNK},      {"span-size", required_argument, NULL, O_SPAN},
        {"egress-socket", required_argument, NULL, O_EGRESS},
        {"no-prestart", no_argument, NULL, O_NOPRE},     {"help", no_argument, NULL, O_HELP},
        {NULL, 0, NULL, 0}};
    const char *package = NULL, *node = "node", *egress = getenv(MB_EGRESS_ENV);
    int with_chunk = 0, span = 2000, prestart = 1;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+", lo, NULL)) != -1) {
        switch (c) {
        case O_PACKAGE: package = optarg; break;
        case O_NODE: node = optarg; break;
        case O_CHUNK: with_chunk = 1; break;
        case O_SPAN: {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v < -1 || v > INT_MAX || v == 0) {
                fprintf(stderr, "mcpbox playwright: --span-size must be -1 or a positive number\n");
                return 2;
            }
            span = (int)v;
            break;
        }
        case O_EGRESS: egress = optarg; break;
        case O_NOPRE: prestart = 0; break;
        case O_HELP: fputs(usage_text, stdout); return 0;
        default: fputs(usage_text, stderr); return 2;
        }
    }
    if (!package) {
        fputs("mcpbox playwright: --package is required\n", stderr);
        fputs(usage_text, stderr);
        return 2;
    }
    char *cli = mb_asprintf("%s/node_modules/@playwright/mcp/cli.js", package);
    if (access(cli, R_OK)) {
        fprintf(stderr, "mcpbox playwright: %s is missing (run scripts/install-playwright on the "
                        "host; the profile binds it into the sandbox)\n", cli);
        free(cli);
        return 1;
    }
    int nextra = argc - optind;
    char **nargv = mb_calloc((size_t)nextra + 6, sizeof *nargv);
    int k = 0;
    nargv[k++] = (char *)node;
    nargv[k++] = cli;
    for (int i = optind; i < argc; i++) nargv[k++] = argv[i];
    char *proxy = NULL;
    mb_err err = {0};
    struct stat st;
    if (egress && *egress && stat(egress, &st) == 0 && S_ISSOCK(st.st_mode)) {
        int port;
        if (mb_egress_forward_start(egress, &port, &err)) {
            fprintf(stderr, "mcpbox playwright: %s\n", err.msg);
            free(nargv);
            free(cli);
            return 1;
        }
        proxy = mb_asprintf("http://127.0.0.1:%d", port);
        nargv[k++] = "--proxy-server";
        nargv[k++] = proxy;
    }
    unsetenv(MB_EGRESS_ENV);
    setenv("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1", 1);
    setenv("PLAYWRIGHT_BROWSERS_PATH", "0", 0);
    signal(SIGPIPE, SIG_IGN);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    relay r = {.child_in = -1, .child_out = -1, .prestart = prestart ? 1 : 3, .browser_fd = -1};
    r.calls = json_object();
    r.inflight = json_object();
    if (with_chunk) r.chunk = mb_pw_chunk_new(span);
    int rc = spawn_child(&r, nargv, &err);
    if (rc) {
        fprintf(stderr, "mcpbox playwright: %s\n", err.msg);
    } else {
        run(&r);
        if (r.child_in >= 0) close(r.child_in);
        close(r.child_out);
        rc = reap(r.pid);
    }
    mb_buf_free(&r.from_parent);
    mb_buf_free(&r.from_child);
    mb_buf_free(&r.to_child);
    mb_buf_free(&r.to_parent);
    json_decref(r.list_id);
    json_decref(r.init_id);
    json_decref(r.calls);
    json_decref(r.inflight);
    mb_buf_free(&r.held_calls);
    free(r.launch_call);
    if (r.browser_fd >= 0) close(r.browser_fd);
    free(r.held_list);
    free(r.tools_cache);
    mb_pw_chunk_free(r.chunk);
    free(proxy);
    free(nargv);
    free(cli);
    return rc ? 1 : 0;
}
