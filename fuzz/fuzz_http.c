/*
 * fuzz_http.c - the HTTP request path as the daemon serves it: raw request
 * bytes over a TCP connection to the real HTTP layer (libmicrohttpd and
 * http/), the REST API (api/: routing, authentication, body policy,
 * validation, handlers, errors) on a core with a store and a known API key,
 * and the MCP gateway (gateway/: Host/Origin checks, sessions, JSON-RPC
 * requests and batches, ids) in front of in-process MCP servers, one of
 * which says whatever the request asks it to (see serve_raw).
 *
 * Made once: a data directory, a core opened without a sandbox runtime
 * (cfg.no_runtime: every acquire is refused after its body was validated;
 * sandbox ids are judged against the store), a gateway whose backend
 * (sandbox FUZZ_SANDBOX, server "filesystem") is an mb_mcp server with one
 * echo tool on a thread, "memory" whose answers the input writes, and a
 * backend ("git") whose start fails.
 *
 * Per input: connect, send the bytes, half-close, read the answer to the
 * end. Checked: the daemon survives (a crash or sanitizer report in any of
 * its threads ends the run), answers each request with a status line, and
 * every byte it sends is valid UTF-8.
 */
#define _GNU_SOURCE
#include "fuzz.h"
#include "api/api.h"
#include "core/core.h"
#include "gateway/gateway.h"
#include "http/http.h"
#include "mcp/mcp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#define FUZZ_KEY "mbx-fuzz-key-0123456789"
#define FUZZ_SANDBOX "0b7e8f0e-1d2c-4c3b-9a8e-5f6d7c8b9a01"
#define ANSWER_MS 10000 /* a request unanswered this long is a hang */

static char dir[PATH_MAX];
static unsigned port;
/* The daemon's parts, kept where LeakSanitizer sees them at exit. */
static mb_core *core;
static mb_gateway *gw;
static mb_api *api;
static mb_http_server *http;

/* ------------------------------------------- the MCP server on a thread */

static int echo_tool(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    (void)call;
    mb_mcp_text(res, mb_mcp_arg_str(args, "text", ""));
    return 0;
}

static const mb_mcp_tool tools[] = {
    {.name = "echo",
     .description = "Echoes text back",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}}}",
     .fn = echo_tool},
    {0},
};
static const mb_mcp_info info = {.name = "fuzz-echo", .version = "1.0.0"};

typedef struct backend {
    pthread_t thread;
    mb_mcp_server *srv;
    int in_fd, out_fd; /* the server's ends */
} backend;

static void *serve(void *arg)
{
    backend *b = arg;
    mb_err err;
    mb_mcp_serve(b->srv, b->in_fd, b->out_fd, &err);
    close(b->in_fd);
    close(b->out_fd);
    return NULL;
}

/* "memory": a server whose answers the client writes. A tools/call with
 * arguments {"reply": TEXT} is answered with TEXT verbatim as one stdout
 * line, "@ID@" in it replaced by the request's id as the gateway sent it:
 * through an input the fuzzer plays a hostile server too (broken JSON,
 * unknown ids, server requests, progress for other tokens, huge lines). */
static void raw_write(int fd, const char *s, size_t n)
{
    while (n) {
        ssize_t w = write(fd, s, n);
        if (w <= 0) return;
        s += w;
        n -= (size_t)w;
    }
}

static void raw_answer(int fd, const char *line, size_t len)
{
    json_error_t e;
    json_t *m = json_loadb(line, len, 0, &e);
    const char *method = json_string_value(json_object_get(m, "method"));
    json_t *id = json_object_get(m, "id");
    char *id_text = id ? json_dumps(id, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
    mb_buf out = {0};
    if (!method || !id_text) {
        /* notifications and answers to the gateway's own requests: none */
    } else if (!strcmp(method, "initialize")) {
        mb_buf_printf(&out, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"protocolVersion\":"
                            "\"2025-03-26\",\"capabilities\":{\"tools\":{}},\"serverInfo\":"
                            "{\"name\":\"raw\",\"version\":\"0\"}}}\n", id_text);
    } else if (!strcmp(method, "tools/list")) {
        mb_buf_printf(&out, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"tools\":[{\"name\":"
                            "\"raw\",\"inputSchema\":{\"type\":\"object\"}}]}}\n", id_text);
    } else {
        const char *reply =
            json_string_value(json_object_get(json_object_get(json_object_get(m, "params"),
                                                               "arguments"), "reply"));
        if (!reply) {
            mb_buf_printf(&out, "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}\n", id_text);
        } else {
            for (const char *p = reply; *p;) {
                const char *at = strstr(p, "@ID@");
                size_t k = at ? (size_t)(at - p) : strlen(p);
                mb_buf_append(&out, p, k);
                if (!at) break;
                mb_buf_puts(&out, id_text);
                p = at + 4;
            }
            mb_buf_putc(&out, '\n');
        }
    }
    if (out.len) raw_write(fd, out.data, out.len);
    mb_buf_free(&out);
    free(id_text);
    json_decref(m);
}

static void *serve_raw(void *arg)
{
    backend *b = arg;
    mb_buf line = {0};
    char buf[8192];
    ssize_t r;
    while ((r = read(b->in_fd, buf, sizeof buf)) > 0) {
        for (ssize_t i = 0; i < r; i++) {
            if (buf[i] != '\n') {
                if (line.len < (4u << 20)) mb_buf_putc(&line, buf[i]);
                continue;
            }
            if (line.len) raw_answer(b->out_fd, line.data, line.len);
            mb_buf_reset(&line);
        }
    }
    mb_buf_free(&line);
    close(b->in_fd);
    close(b->out_fd);
    return NULL;
}

static int fake_spawn(void *ctx, const char *sandbox_id, const char *server,
                      const mb_backend_spec *spec, mb_backend_proc *out, mb_err *err)
{
    (void)ctx;
    (void)sandbox_id;
    (void)spec;
    int raw = !strcmp(server, "memory");
    if (strcmp(server, "filesystem") != 0 && !raw)
        return mb_err_set(err, MB_EIO, "cannot start %s: no such program", server);
    int to[2], from[2];
    if (pipe2(to, O_CLOEXEC) || pipe2(from, O_CLOEXEC)) abort();
    backend *b = mb_calloc(1, sizeof *b);
    if (!raw && (mb_mcp_server_new(&info, &b->srv, err) || mb_mcp_add_tools(b->srv, tools, err)))
        abort();
    b->in_fd = to[0];
    b->out_fd = from[1];
    if (pthread_create(&b->thread, NULL, raw ? serve_raw : serve, b)) abort();
    out->in_fd = to[1];
    out->out_fd = from[0];
    out->err_fd = -1;
    out->handle = (int64_t)(intptr_t)b;
    return 0;
}

/* The gateway closed its ends: the server reads EOF and its thread ends. */
static void fake_kill(void *ctx, const char *sandbox_id, const char *server, int64_t handle)
{
    (void)ctx;
    (void)sandbox_id;
    (void)server;
    backend *b = (backend *)(intptr_t)handle;
    pthread_join(b->thread, NULL);
    mb_mcp_server_free(b->srv);
    free(b);
}

/* ------------------------------------------------------------ the daemon */

static enum MHD_Result mcp_handle(void *ctx, struct MHD_Connection *conn, const char *server,
                                  const char *sandbox_id, const char *method,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **state)
{
    return mb_gateway_handle(ctx, conn, server, sandbox_id, method, upload_data,
                             upload_data_size, state);
}

static void mcp_done(void *ctx, void *state) { mb_gateway_request_done(ctx, state); }

static void cleanup(void)
{
    mb_err err;
    if (dir[0]) mb_rm_rf(dir, &err);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    signal(SIGPIPE, SIG_IGN);
    mb_log_set_level(getenv("FUZZ_VERBOSE") ? MB_LOG_DEBUG : MB_LOG_ERROR);
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/mcpbox-fuzz-http-XXXXXX", tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) abort();
    atexit(cleanup);

    setenv("MCPBOX_API_KEY", FUZZ_KEY, 1);
    static mb_config cfg; /* lives as long as the daemon */
    char *cargv[] = {"fuzz_http", NULL};
    if (mb_config_parse(&cfg, 1, cargv)) abort();
    free(cfg.data_dir);
    cfg.data_dir = mb_strdup(dir);
    free(cfg.listen);
    cfg.listen = mb_strdup("127.0.0.1:0");
    cfg.no_runtime = 1;
    cfg.max_upload_bytes = 1 << 20;
    mb_err err = {0};
    if (mb_core_open(&cfg, &core, &err)) {
        fprintf(stderr, "fuzz_http: %s\n", err.msg);
        abort();
    }

    mb_gateway_opts go = {
        .spawn = fake_spawn,
        .kill = fake_kill,
        .call_timeout_ms = 1500, /* short: a hostile reply that never comes ends soon */
        .init_timeout_ms = 5000,
        .keepalive_ms = 500, /* a POST waiting longer turns into SSE, read for 300 ms */
        .session_idle_ms = 60000,
        .max_message_bytes = 1 << 20,
        .max_sessions = 2000,
    };
    const char *argv0[] = {"fake", NULL};
    mb_backend_spec spec = {argv0, NULL, NULL, NULL, 0};
    if (mb_gateway_create(&go, &gw, &err) ||
        mb_gateway_add(gw, FUZZ_SANDBOX, "filesystem", &spec, &err) ||
        mb_gateway_add(gw, FUZZ_SANDBOX, "git", &spec, &err) ||
        mb_gateway_add(gw, FUZZ_SANDBOX, "memory", &spec, &err) ||
        mb_gateway_start(gw, FUZZ_SANDBOX, "filesystem", 10000, &err) ||
        mb_gateway_start(gw, FUZZ_SANDBOX, "memory", 10000, &err)) {
        fprintf(stderr, "fuzz_http: gateway: %s\n", err.msg);
        abort();
    }

    mb_api_mcp_hook hook = {.ctx = gw, .handle = mcp_handle, .done = mcp_done,
                            .routed = mb_gateway_request_routed};
    api = mb_api_create(core, &hook);
    static mb_http_app app;
    app = mb_api_http_app(api);
    mb_http_opts ho = {
        .listen = cfg.listen,
        .header_limit = 8 * 1024,
        .idle_timeout_s = 5,
        .file_body_limit = cfg.max_upload_bytes,
    };
    if (mb_http_start(&ho, &app, &http, &err)) {
        fprintf(stderr, "fuzz_http: %s\n", err.msg);
        abort();
    }
    port = mb_http_port(http);
    /* The daemon runs until the process exits: a fuzzing process ends by
     * exit() from libFuzzer, with no hook to stop it first. */
    return 0;
}

/* ------------------------------------------------------------ one input */

static int64_t now_ms(void) { return mb_mono_ms(); }

/* Sends a request and reads the answer to the end, or the deadline: 1 if
 * that passed (an SSE stream, which stays open, is read for 300 ms). */
static int exchange(const uint8_t *data, size_t size, mb_buf *answer)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    FUZZ_CHECK(fd >= 0, "socket: %s", strerror(errno));
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    FUZZ_CHECK(connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0, "connect: %s", strerror(errno));
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);

    /* Send and read at once, so that neither side can block the other. */
    size_t sent = 0;
    int wr_open = 1, stream = 0;
    int64_t deadline = now_ms() + ANSWER_MS;
    for (;;) {
        if (wr_open && sent == size) {
            shutdown(fd, SHUT_WR);
            wr_open = 0;
        }
        struct pollfd p = {fd, (short)(POLLIN | (wr_open ? POLLOUT : 0)), 0};
        int64_t left = deadline - now_ms();
        if (left <= 0) break;
        if (poll(&p, 1, (int)left) <= 0) continue;
        if (wr_open && (p.revents & POLLOUT)) {
            ssize_t w = send(fd, data + sent, size - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (w > 0) sent += (size_t)w;
            else if (w < 0 && errno != EAGAIN && errno != EINTR) wr_open = 0; /* refused the rest */
        }
        if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
            char buf[16384];
            ssize_t r = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
            if (r > 0) {
                if (answer->len < (4u << 20)) mb_buf_append(answer, buf, (size_t)r);
                /* An SSE stream stays open while the session lives: look at
                 * its start only. */
                if (!stream && strstr(answer->data, "text/event-stream")) {
                    stream = 1;
                    if (deadline > now_ms() + 300) deadline = now_ms() + 300;
                }
            } else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
                break;
            }
        }
    }
    close(fd);
    return !stream && now_ms() >= deadline;
}

/* A fresh initialized MCP session for inputs that name one (SID_MARK is
 * replaced by its id; on "memory" if the input mentions it): the fuzzer cannot learn a random id, and a session
 * of its own per input keeps inputs independent of each other. */
#define SID_MARK "@SID@"
static void open_session(const char *server, char sid[64])
{
    static const char body[] =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
        "\"2025-03-26\",\"capabilities\":{},\"clientInfo\":{\"name\":\"fz\",\"version\":\"1\"}}}";
    char *init = mb_asprintf("POST /%s/mcp?local_sandbox_id=" FUZZ_SANDBOX " HTTP/1.1\r\n"
                             "Host: 127.0.0.1\r\nContent-Type: application/json\r\n"
                             "Accept: application/json, text/event-stream\r\n"
                             "Content-Length: %zu\r\n\r\n%s",
                             server, sizeof body - 1, body);
    mb_buf a = {0};
    mb_buf_puts(&a, "");
    exchange((const uint8_t *)init, strlen(init), &a);
    free(init);
    const char *h = strstr(a.data, "Mcp-Session-Id: ");
    FUZZ_CHECK(h, "the harness's initialize got no session: %.300s", a.data);
    h += 16;
    size_t n = strcspn(h, "\r\n");
    FUZZ_CHECK(n < 64, "session id of %zu bytes", n);
    memcpy(sid, h, n);
    sid[n] = '\0';
    mb_buf_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *owned = NULL;
    if (size >= 5 && memmem(data, size, SID_MARK, 5)) {
        char sid[64];
        open_session(memmem(data, size, "/memory/", 8) ? "memory" : "filesystem", sid);
        size_t sl = strlen(sid);
        owned = malloc(size / 5 * sl + size + 1);
        size_t o = 0;
        for (size_t i = 0; i < size;) {
            if (i + 5 <= size && !memcmp(data + i, SID_MARK, 5)) {
                memcpy(owned + o, sid, sl);
                o += sl;
                i += 5;
            } else {
                owned[o++] = data[i++];
            }
        }
        data = owned;
        size = o;
    }
    mb_buf answer = {0};
    mb_buf_puts(&answer, "");
    int hung = exchange(data, size, &answer);
    free(owned);
    if (getenv("FUZZ_VERBOSE")) fprintf(stderr, "answer (%zu bytes%s):\n%.600s\n", answer.len,
                                        hung ? ", timed out" : "", answer.data);

    FUZZ_CHECK(!hung || answer.len, "no answer within %d ms", ANSWER_MS);
    if (answer.len)
        FUZZ_CHECK(!strncmp(answer.data, "HTTP/1.", 7), "the answer has no status line: %.40s",
                   answer.data);
    /* Access-Control-Allow-Origin repeats an allowed Origin as the client
     * sent it (header bytes, not text): everything else must be UTF-8. */
    for (char *h = answer.data; (h = strstr(h, "\r\nAccess-Control-Allow-Origin: "));) {
        h += 2;
        for (char *e = h + 29; *e && *e != '\r'; e++) *e = 'x';
    }
    FUZZ_CHECK(mb_utf8_valid(answer.data, answer.len), "the answer is not valid UTF-8");
    mb_buf_free(&answer);
    return 0;
}
