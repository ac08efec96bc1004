/*
 * serve.c - `mcpbox serve`: opens the core, mounts the REST API (and the MCP
 * gateway) on the HTTP server, prints one line when ready, and runs until
 * SIGINT or SIGTERM (then, with --release-on-exit, releases every sandbox).
 */
#include "api/api.h"
#include "canvas/canvas.h"
#include "cli/cli.h"
#include "cluster/cluster.h"
#include "core/core.h"
#include "gateway/gateway.h"
#include "gcloud/gcloud.h"
#include "http/http.h"
#include "mail/mail.h"

#include <malloc.h>
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

/* One node of many, before serving (request threads read the api's cluster
 * without a lock). Other nodes reach it at --node-url, or at the listen
 * address, whose port must then be fixed. */
static int start_cluster(const mb_config *cfg, mb_core *core, mb_api *api, mb_cluster **out,
                         mb_err *err)
{
    const char *colon = strrchr(cfg->listen, ':');
    if (!cfg->node_url && (!colon || !strcmp(colon, ":0")))
        return mb_err_set(err, MB_EINVAL, "--node needs --node-url or a --listen with a fixed port");
    char *url = cfg->node_url ? mb_strdup(cfg->node_url) : mb_asprintf("http://%s", cfg->listen);
    mb_cluster_opts o = {mb_core_store(core), cfg->node, url, cfg->capacity};
    int rc = mb_cluster_start(&o, out, err);
    free(url);
    if (!rc) mb_api_set_cluster(api, *out);
    return rc;
}

/* The Google Cloud REST facade (src/gcloud/rest.c) on MCPBOX_GCLOUD_LISTEN
 * (default 127.0.0.1:10050; "off" turns it off). A port already taken is
 * logged, not fatal: the daemon serves without it. */
static char *gcloud_resolve(void *ctx, const char *project)
{
    return mb_core_gcloud_db(ctx, project);
}

static mb_gcloud_rest *gcloud_facade_start(mb_core *core)
{
    const char *listen_on = getenv("MCPBOX_GCLOUD_LISTEN");
    if (!listen_on || !*listen_on) listen_on = "127.0.0.1:10050";
    if (!strcmp(listen_on, "off")) return NULL;
    mb_gcloud_rest *r = NULL;
    mb_err err = {0};
    if (mb_gcloud_rest_start(listen_on, gcloud_resolve, core, &r, &err))
        mb_warn("Google Cloud REST facade not started: %s", err.msg);
    else mb_info("Google Cloud REST facade on port %d", mb_gcloud_rest_port(r));
    return r;
}

/* The Canvas REST service (src/canvas) for sandboxes with the canvas
 * server; a port it cannot bind is a warning, not a failure. */
static mb_canvas_service *start_canvas(mb_core *core, const mb_config *cfg)
{
    if (cfg->no_runtime) return NULL;
    mb_canvas_opts o = {.data_dir = cfg->data_dir, .listen = cfg->canvas_listen,
                        .users_file = cfg->canvas_users, .users_for = "Toolathlon",
                        .https_listen = cfg->canvas_https, .tls_pem = cfg->canvas_tls,
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
    /* Every request thread frees what it built (a tools list is tens of
     * KiB): malloc's defaults hand the top of each thread's heap back to the
     * kernel and fault it in again on the next request, a page fault per
     * 4 KiB. Keep up to a few MiB per heap instead. */
    mallopt(M_TRIM_THRESHOLD, 8 << 20);
    mallopt(M_TOP_PAD, 1 << 20);

    mb_err err = {0};
    mb_core *core = NULL;
    if (mb_core_open(&cfg, &core, &err) != MB_OK) {
        fprintf(stderr, "mcpbox serve: %s\n", err.msg);
        mb_config_free(&cfg);
        return 1;
    }
    char first_key[48] = "";
    if (cfg.first_run_key && mb_cli_first_run_key(core, first_key, &err) < 0)
        mb_warn("cannot make the first-run API key: %s", err.msg);
    mb_mail *mail = NULL; /* poste_email_toolathlon's mail system (src/mail) */
    if (!cfg.no_mail && mb_mail_start_for_serve(core, &cfg, &mail, &err) != MB_OK) {
        fprintf(stderr, "mcpbox serve: %s\n", err.msg);
        mb_core_close(core);
        mb_config_free(&cfg);
        return 1;
    }
    mb_canvas_service *canvas = start_canvas(core, &cfg);
    if (mb_core_gcloud_service(core, &err) != MB_OK)
        mb_warn("google_cloud: %s", err.msg);
    if (mb_core_start(core, &err) != MB_OK) {
        fprintf(stderr, "mcpbox serve: %s\n", err.msg);
        mb_core_close(core);
        mb_mail_free(mail);
        mb_canvas_service_free(canvas);
        mb_config_free(&cfg);
        return 1;
    }
    mb_api_mcp_hook hook = {mb_core_gateway(core), mcp_handle, mcp_done, mcp_routed};
    mb_api *api = mb_api_create(core, &hook);
    mb_cluster *cluster = NULL;
    if (cfg.node >= 0 && start_cluster(&cfg, core, api, &cluster, &err) != MB_OK) {
        fprintf(stderr, "mcpbox serve: %s\n", err.msg);
        mb_api_destroy(api);
        mb_core_close(core);
        mb_config_free(&cfg);
        return 1;
    }
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
        mb_cluster_stop(cluster);
        mb_api_destroy(api);
        mb_core_close(core);
        mb_mail_free(mail);
        mb_canvas_service_free(canvas);
        mb_config_free(&cfg);
        return 1;
    }
    mb_gcloud_rest *gcr = gcloud_facade_start(core);
    printf("mcpbox: serving on %s (data dir %s)\n", mb_core_public_url(core), cfg.data_dir);
    if (canvas && mb_canvas_service_port(canvas))
        printf("mcpbox: canvas on http://127.0.0.1:%u\n", mb_canvas_service_port(canvas));
    if (canvas && mb_canvas_service_https_port(canvas))
        printf("mcpbox: canvas on https://127.0.0.1:%u\n", mb_canvas_service_https_port(canvas));
    fflush(stdout);
    if (first_key[0]) mb_cli_first_run_print(first_key, mb_core_public_url(core), cfg.data_dir);
    explicit_bzero(first_key, sizeof first_key);

    int sig = 0;
    sigwait(&sigs, &sig);
    mb_info("received signal %d, shutting down", sig);
    /* Streams and waiting MCP calls end first, or the HTTP stop would wait
     * for them. */
    mb_gateway_shutdown(mb_core_gateway(core));
    mb_gcloud_rest_stop(gcr);
    mb_http_stop(http);
    mb_cluster_stop(cluster);
    mb_api_destroy(api);
    if (cfg.release_on_exit) {
        size_t n = mb_core_release_all(core);
        mb_info("released %zu sandbox%s before exiting (--release-on-exit)", n, n == 1 ? "" : "es");
    }
    mb_core_close(core);
    mb_mail_free(mail);
    mb_canvas_service_free(canvas);
    mb_config_free(&cfg);
    return 0;
}
