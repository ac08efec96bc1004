/*
 * cmd_bridge.c - `mcpbox bridge`: one stdio MCP server behind MCP Streamable
 * HTTP, without sandboxes or an API.
 *
 *   mcpbox bridge [--listen ADDR:PORT] [--allowed-origin O]... -- CMD ARGS...
 *
 * It is the gateway of the daemon in miniature (the same HTTP layer and
 * transport, one long-lived process for every session) with a plain
 * fork/exec spawn, serving the process at /mcp and at /{anything}/mcp. People
 * use it as a fast stdio-to-HTTP bridge; the tests and benchmarks use it to
 * exercise the gateway without the daemon.
 */
#include "cli/cli.h"
#include "gateway/gateway.h"
#include "http/http.h"

#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define BRIDGE_SANDBOX "bridge"
#define BRIDGE_SERVER "default"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mcpbox bridge [options] -- CMD [ARGS...]\n"
            "\n"
            "Serves the stdio MCP server CMD over MCP Streamable HTTP at /mcp (and\n"
            "/{name}/mcp). One CMD process serves every client session.\n"
            "\n"
            "options:\n"
            "  --listen ADDR:PORT      where to listen (default 127.0.0.1:8000; port 0 picks one)\n"
            "  --allowed-host HOST     accept this Host header too (repeatable; '*' = any);\n"
            "                          localhost, 127.0.0.1, [::1] and the listen address\n"
            "                          are always accepted\n"
            "  --allowed-origin ORIGIN accept this browser Origin (repeatable; a full origin,\n"
            "                          a host name, or '*'); origins on allowed hosts always pass\n"
            "  --call-timeout MS       answer a request the server does not answer with an\n"
            "                          error after MS (default 120000)\n"
            "  --init-timeout MS       time for the server to start and initialize (30000)\n"
            "  --keepalive MS          SSE keep-alive interval (15000)\n"
            "  --max-message SIZE      largest JSON-RPC message either way (default 16M)\n"
            "  --forward-header NAME   pass this request header to CMD in each request's\n"
            "                          params._meta[\"mcpbox/headers\"] (repeatable)\n"
            "  --cwd DIR               working directory of CMD\n"
            "  --lazy                  start CMD on the first request instead of now\n"
            "  -h, --help              this text\n"
            "\n"
            "It prints one line with the URL when it is ready. GET /health answers 200\n"
            "with the server's name, version and tools hash once it is ready (else 503).\n"
            "MCPBOX_LOG=debug shows the server's stderr.\n");
}

/* A positive number of milliseconds, or -1. */
static int parse_ms(const char *s)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v <= 0 || v > 24L * 3600 * 1000) return -1;
    return (int)v;
}

static int is_mcp_path(const char *url)
{
    size_t n = strlen(url);
    if (n > 1 && url[n - 1] == '/') n--;
    if (n == 4 && !strncmp(url, "/mcp", 4)) return 1;
    if (n < 6 || strncmp(url + n - 4, "/mcp", 4)) return 0;
    /* "/{name}/mcp": exactly one non-empty segment before /mcp */
    const char *seg = url + 1;
    size_t seglen = n - 4 - 1;
    return seglen > 0 && !memchr(seg, '/', seglen);
}

/* Every call of an MCP request goes to the gateway, as the daemon's router
 * hands it (api/router.c); the HTTP layer below bounds headers, bodies and
 * connections and drains refused bodies. */
static enum MHD_Result bridge_raw(void *ctx, struct MHD_Connection *conn, const char *method,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **state)
{
    return mb_gateway_handle(ctx, conn, BRIDGE_SERVER, BRIDGE_SANDBOX, method, upload_data,
                             upload_data_size, state);
}

static void bridge_raw_done(void *ctx, void *state)
{
    if (state) mb_gateway_request_done(ctx, state);
}

static void bridge_begin(void *ctx, mb_http_req *req)
{
    mb_gateway *gw = ctx;
    /* No keys here: whoever reaches the bridge is its user, and no
     * connection counts against the unauthenticated budget. */
    req->authenticated = 1;
    if (!strcmp(req->path, "/health") && !strcmp(req->method, "GET")) {
        /* Readiness for supervisors and tests: 200 when the server answered
         * initialize and tools/list, else 503; the body is its metadata. */
        json_t *md = NULL;
        int ready = 0;
        mb_gateway_info(gw, BRIDGE_SANDBOX, BRIDGE_SERVER, &md, &ready);
        if (!md) md = json_object();
        json_object_set_new(md, "ready", json_boolean(ready));
        mb_http_respond_json(req, ready ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE, md);
        return;
    }
    if (!is_mcp_path(req->path)) {
        mb_http_respond_json(req, MHD_HTTP_NOT_FOUND,
                             json_pack("{s:s, s:n, s:{s:i, s:s}}", "jsonrpc", "2.0", "id",
                                       "error", "code", -32000, "message",
                                       "Not Found: the MCP endpoint is /mcp"));
        return;
    }
    req->raw = bridge_raw;
    req->raw_done = bridge_raw_done;
    req->raw_ctx = gw;
}

/* Never reached: every request is answered in begin() or handed to the
 * gateway. */
static void bridge_handle(void *ctx, mb_http_req *req)
{
    (void)ctx;
    mb_http_respond_detail(req, MHD_HTTP_INTERNAL_SERVER_ERROR, "Internal error");
}

/* Binds ADDR:PORT ("[v6]:port" too); fills host (for Host checks) and the
 * printable address. Returns the listening fd or -1. */
static int listen_on(const char *spec, char *host, size_t hostcap, char *shown, size_t shown_cap,
                     int *v6)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec);
    char *port = strrchr(buf, ':');
    if (!port) {
        fprintf(stderr, "mcpbox bridge: --listen wants ADDR:PORT, got '%s'\n", spec);
        return -1;
    }
    *port++ = '\0';
    char *addr = buf;
    if (addr[0] == '[') {
        addr++;
        char *end = strchr(addr, ']');
        if (end) *end = '\0';
    }
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    int rc = getaddrinfo(*addr ? addr : NULL, port, &hints, &res);
    if (rc) {
        fprintf(stderr, "mcpbox bridge: cannot resolve '%s': %s\n", spec, gai_strerror(rc));
        return -1;
    }
    int fd = -1;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) continue;
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 512) == 0) break;
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        fprintf(stderr, "mcpbox bridge: cannot listen on %s: %m\n", spec);
        return -1;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    char h[256], p[32];
    getnameinfo((struct sockaddr *)&ss, sl, h, sizeof h, p, sizeof p,
                NI_NUMERICHOST | NI_NUMERICSERV);
    *v6 = ss.ss_family == AF_INET6;
    snprintf(host, hostcap, *v6 ? "[%s]" : "%s", h);
    snprintf(shown, shown_cap, "%s:%s", host, p);
    return fd;
}

int mb_cmd_bridge(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"listen", required_argument, NULL, 'l'},
        {"allowed-host", required_argument, NULL, 'H'},
        {"allowed-origin", required_argument, NULL, 'O'},
        {"call-timeout", required_argument, NULL, 'c'},
        {"init-timeout", required_argument, NULL, 'i'},
        {"keepalive", required_argument, NULL, 'k'},
        {"max-message", required_argument, NULL, 'm'},
        {"cwd", required_argument, NULL, 'C'},
        {"forward-header", required_argument, NULL, 'F'},
        {"lazy", no_argument, NULL, 'z'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *listen_spec = "127.0.0.1:8000", *cwd = NULL;
    const char **hosts = NULL, **origins = NULL, **fwd = NULL;
    size_t nhosts = 0, norigins = 0, nfwd = 0;
    mb_gateway_opts opts = {0};
    int lazy = 0, rc = 1, opt;
    uint64_t size;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'l': listen_spec = optarg; break;
        case 'H': mb_strv_push(&hosts, &nhosts, optarg); break;
        case 'O': mb_strv_push(&origins, &norigins, optarg); break;
        case 'F': mb_strv_push(&fwd, &nfwd, optarg); break;
        case 'c':
        case 'i':
        case 'k': {
            int ms = parse_ms(optarg);
            if (ms < 0) {
                fprintf(stderr, "mcpbox bridge: bad number of milliseconds '%s'\n", optarg);
                return 2;
            }
            *(opt == 'c' ? &opts.call_timeout_ms
              : opt == 'i' ? &opts.init_timeout_ms : &opts.keepalive_ms) = ms;
            break;
        }
        case 'm':
            if (mb_parse_size(optarg, &size) || !size) {
                fprintf(stderr, "mcpbox bridge: bad --max-message '%s'\n", optarg);
                return 2;
            }
            opts.max_message_bytes = (size_t)size;
            break;
        case 'C': cwd = optarg; break;
        case 'z': lazy = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc && !strcmp(argv[optind], "--")) optind++;
    if (optind >= argc) {
        fprintf(stderr, "mcpbox bridge: no server command given\n\n");
        usage(stderr);
        return 2;
    }

    /* Signals are taken by sigwait below; every thread inherits the mask
     * (servers get a clean one from posix_spawn). */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);

    char host[300], shown[340];
    int v6 = 0;
    int lfd = listen_on(listen_spec, host, sizeof host, shown, sizeof shown, &v6);
    if (lfd < 0) goto out_lists;
    mb_strv_push(&hosts, &nhosts, "localhost");
    mb_strv_push(&hosts, &nhosts, "127.0.0.1");
    mb_strv_push(&hosts, &nhosts, "[::1]");
    mb_strv_push(&hosts, &nhosts, host);

    opts.spawn = mb_gateway_spawn_local;
    opts.kill = mb_gateway_kill_local;
    opts.allowed_hosts = hosts;
    opts.allowed_origins = origins;
    mb_gateway *gw = NULL;
    mb_err err = {0};
    if (mb_gateway_create(&opts, &gw, &err)) {
        fprintf(stderr, "mcpbox bridge: %s\n", err.msg);
        close(lfd);
        goto out_lists;
    }
    mb_backend_spec spec = {(const char *const *)(argv + optind), NULL, cwd, fwd, 0};
    if (mb_gateway_add(gw, BRIDGE_SANDBOX, BRIDGE_SERVER, &spec, &err)) {
        fprintf(stderr, "mcpbox bridge: %s\n", err.msg);
        close(lfd);
        goto out_gw;
    }
    int call_s = (opts.call_timeout_ms > 0 ? opts.call_timeout_ms : 120000) / 1000;
    /* The idle timeout outlasts the longest wait of a client that only
     * accepts JSON. */
    mb_http_opts hopts = {.listen = NULL, .listen_fd = lfd, .max_connections = 4096,
                          .idle_timeout_s = (unsigned)(call_s + 60)};
    mb_http_app app = {gw, bridge_begin, bridge_handle};
    mb_http_server *d = NULL;
    if (mb_http_start(&hopts, &app, &d, &err)) {
        fprintf(stderr, "mcpbox bridge: could not start the HTTP server: %s\n", err.msg);
        goto out_gw;
    }
    if (!lazy &&
        mb_gateway_start(gw, BRIDGE_SANDBOX, BRIDGE_SERVER,
                         opts.init_timeout_ms > 0 ? opts.init_timeout_ms : 30000, &err)) {
        fprintf(stderr, "mcpbox bridge: %s\n", err.msg);
        mb_gateway_shutdown(gw);
        mb_http_stop(d);
        goto out_gw;
    }
    printf("mcpbox bridge: serving '%s' at http://%s/mcp\n", argv[optind], shown);
    fflush(stdout);

    int sig = 0;
    sigwait(&sigs, &sig);
    mb_info("bridge: signal %d, shutting down", sig);
    mb_gateway_shutdown(gw);
    mb_http_stop(d);
    rc = 0;
out_gw:
    mb_gateway_destroy(gw);
out_lists:
    free(hosts);
    free(origins);
    free(fwd);
    return rc;
}
