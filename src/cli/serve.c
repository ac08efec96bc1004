/*
 * serve.c - `mcpbox serve`: opens the core, mounts the REST API (and the MCP
 * gateway) on the HTTP server, prints one line when ready, and runs until
 * SIGINT or SIGTERM (then, with --release-on-exit, releases every sandbox).
 */
#include "api/api.h"
#include "canvas/canvas.h"
#include "cli/cli.h"
#include "core/core.h"
#include "gateway/gateway.h"
#include "http/http.h"

#include <pthread.h>
#include <sys/resource.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The API hands MCP routes to the gateway through these. */
static enum MHD_Result mcp_handle(void *ctx, struct MHD_Connection *conn, const char *server,
                                  const char *sandbox_id, const char *method,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **state)
{
    return mb_gateway_handle(ctx, conn, server, sandbox_id, method, upload_data,
                             upload_data_size, state);
}

static void mcp_done(void *ctx, void *state) { mb_gateway_request_done(ctx, state); }

static int mcp_routed(const void *state) { return mb_gateway_request_routed(state); }

/* Every live sandbox holds a few descriptors (its init's pidfd, each server's
 * pipes and supervision fd), so thousands of sandboxes need far more than the
 * usual 1024 or 20000: raise the limit as far as the host allows. */
static void raise_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
    rlim_t want = 1048576;
    FILE *f = fopen("/proc/sys/fs/nr_open", "r");
    unsigned long nr_open = 0;
    if (f) {
        if (fscanf(f, "%lu", &nr_open) == 1 && nr_open < want) want = (rlim_t)nr_open;
        fclose(f);
    }
    struct rlimit up = {want, want > rl.rlim_max ? want : rl.rlim_max};
    if (setrlimit(RLIMIT_NOFILE, &up) != 0) { /* not root: as far as the hard limit */
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

typedef struct bound_ctx {
    mb_core *core;
    const mb_config *cfg;
} bound_ctx;

/* The public URL derived from the listen address, set once the port is
 * known and before any request thread reads it. */
static void on_bound(void *ctx, unsigned port)
{
    bound_ctx *bc = ctx;
    if (bc->cfg->public_url) return;
    char host[256];
    snprintf(host, sizeof host, "%s", bc->cfg->listen);
    char *colon = strrchr(host, ':');
    if (colon) *colon = '\0';
    char *url = mb_asprintf("http://%s:%u", host, port);
    mb_core_set_public_url(bc->core, url);
    free(url);
}

/* The Canvas REST service (src/canvas) for sandboxes with the canvas
 * server; a port it cannot bind is a warning, not a failure. */
static mb_canvas_service *start_canvas(mb_core *core, const mb_config *cfg)
{
    if (cfg->no_runtime) return NULL;
    mb_canvas_opts o = {.data_dir = cfg->data_dir, .listen = cfg->canvas_listen,
                        .users_file = cfg->canvas_users, .users_for = "Toolathlon",
                        .store = mb_core_store(core)};
    mb_canvas_service *s = NULL;
    mb_err err = {0};
    if (mb_canvas_service_new(&o, &s, &err) != MB_OK ||
        mb_canvas_register(core, s, &err) != MB_OK) {
        mb_warn("canvas: %s", err.msg);
        mb_canvas_service_free(s);
        return NULL;
    }
    return s;
}

int mb_cmd_serve(int argc, char **argv)
{
    mb_config cfg;
    int rc = mb_config_parse(&cfg, argc, argv);
    if (rc) {
        mb_config_free(&cfg);
        return rc == 1 ? 0 : rc;
    }
    /* Signals are taken by sigwait below, not by whichever thread runs. */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);
    raise_fd_limit();

    mb_err err = {0};
    mb_core *core = NULL;
    if (mb_core_open(&cfg, &core, &err) != MB_OK) {
        fprintf(stderr, "mcpbox serve: %s\n", err.msg);
        mb_config_free(&cfg);
        return 1;
    }
    mb_canvas_service *canvas = start_canvas(core, &cfg);
    mb_api_mcp_hook hook = {mb_core_gateway(core), mcp_handle, mcp_done, mcp_routed};
    mb_api *api = mb_api_create(core, &hook);
    mb_http_app app = mb_api_http_app(api);
    mb_http_opts hopts = {
        .listen = cfg.listen,
        .header_limit = cfg.header_limit,
        .idle_timeout_s = cfg.idle_timeout_s,
        .file_body_limit = cfg.max_upload_bytes,
        .max_connections = cfg.max_connections,
        .max_conn_per_ip = cfg.max_conn_per_ip,
        .max_anon_conns = cfg.max_anon_conns,
        .header_timeout_s = cfg.header_timeout_s,
        .min_body_rate = cfg.min_body_rate,
        .drain_bytes = cfg.drain_bytes,
        .drain_timeout_s = cfg.drain_timeout_s,
    };
    bound_ctx bc = {core, &cfg};
    hopts.on_bound = on_bound;
    hopts.on_bound_ctx = &bc;
    mb_http_server *http = NULL;
    if (mb_http_start(&hopts, &app, &http, &err) != MB_OK) {
        fprintf(stderr, "mcpbox serve: %s\n", err.msg);
        mb_api_destroy(api);
        mb_core_close(core);
        mb_canvas_service_free(canvas);
        mb_config_free(&cfg);
        return 1;
    }
    printf("mcpbox: serving on %s (data dir %s)\n", mb_core_public_url(core), cfg.data_dir);
    if (canvas && mb_canvas_service_port(canvas))
        printf("mcpbox: canvas on http://127.0.0.1:%u\n", mb_canvas_service_port(canvas));
    fflush(stdout);

    int sig = 0;
    sigwait(&sigs, &sig);
    mb_info("received signal %d, shutting down", sig);
    /* Streams and waiting MCP calls end first, or the HTTP stop would wait
     * for them. */
    mb_gateway_shutdown(mb_core_gateway(core));
    mb_http_stop(http);
    mb_api_destroy(api);
    if (cfg.release_on_exit) {
        size_t n = mb_core_release_all(core);
        mb_info("released %zu sandbox%s before exiting (--release-on-exit)", n, n == 1 ? "" : "es");
    }
    mb_core_close(core);
    mb_canvas_service_free(canvas);
    mb_config_free(&cfg);
    return 0;
}
