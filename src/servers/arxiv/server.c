/*
 * server.c - `mcpbox mcp arxiv`: arxiv-mcp-server 0.2.11 (MCP-Atlas) or
 * 0.2.10 (Toolathlon, --upstream-version 0.2.10), a low-level Python MCP
 * Server (blazickjp/arxiv-mcp-server, src/arxiv_mcp_server/server.py).
 *
 * Start-up options mirror upstream's (--storage-path DIR) plus where the
 * offline catalog is and the online mode. Arguments are checked against the
 * tools' input schemas with jsonschema's texts, as the mcp SDK (>= 1.10)
 * does before upstream's handler runs; everything after that is a normal
 * text result, as upstream catches its own exceptions.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mcp/mcp.h"
#include "servers/arxiv/arxiv.h"
#include "servers/common/pyschema.h"
#include "servers/servers.h"

#define DEFAULT_CATALOG "/srv/arxiv-catalog"

static const char SEARCH_SCHEMA[] =
    "{\"type\": \"object\", \"properties\": {\"query\": {\"type\": \"string\"}, "
    "\"max_results\": {\"type\": \"integer\"}, \"date_from\": {\"type\": \"string\"}, "
    "\"date_to\": {\"type\": \"string\"}, \"categories\": {\"type\": \"array\", \"items\": "
    "{\"type\": \"string\"}}}, \"required\": [\"query\"]}";
static const char DOWNLOAD_SCHEMA[] =
    "{\"type\": \"object\", \"properties\": {\"paper_id\": {\"type\": \"string\", "
    "\"description\": \"The arXiv ID of the paper to download\"}, \"check_status\": {\"type\": "
    "\"boolean\", \"description\": \"If true, only check conversion status without "
    "downloading\", \"default\": false}}, \"required\": [\"paper_id\"]}";
static const char LIST_SCHEMA[] =
    "{\"type\": \"object\", \"properties\": {}, \"required\": []}";
static const char READ_SCHEMA[] =
    "{\"type\": \"object\", \"properties\": {\"paper_id\": {\"type\": \"string\", "
    "\"description\": \"The arXiv ID of the paper to read\"}}, \"required\": [\"paper_id\"]}";

typedef int (*tool_fn)(mb_arxiv_server *s, json_t *args, mb_buf *out);

typedef struct arxiv_state {
    mb_arxiv_server s;
    json_t *schemas[4];
} arxiv_state;

static const char *const NAMES[4] = {"search_papers", "download_paper", "list_papers",
                                     "read_paper"};
static const tool_fn FNS[4] = {mb_arxiv_t_search, mb_arxiv_t_download, mb_arxiv_t_list,
                               mb_arxiv_t_read};

static int handle(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    arxiv_state *st = mb_mcp_call_data(call);
    const char *name = mb_mcp_call_tool(call);
    json_t *empty = args ? NULL : json_object();
    if (!args) args = empty;
    mb_buf out = {0};
    mb_buf_puts(&out, "");
    int rc = 0, known = 0;
    for (int i = 0; i < 4; i++) {
        if (strcmp(NAMES[i], name)) continue;
        known = 1;
        mb_buf msg = {0};
        mb_buf_puts(&msg, "");
        if (mb_pyschema_check(st->schemas[i], args, &msg)) {
            rc = mb_mcp_fail(res, "Input validation error: %s", msg.data);
            mb_buf_free(&msg);
            goto done;
        }
        mb_buf_free(&msg);
        FNS[i](&st->s, args, &out);
        mb_mcp_text_n(res, out.data, out.len);
        goto done;
    }
    if (!known) mb_mcp_textf(res, "Error: Unknown tool %s", name);
done:
    mb_buf_free(&out);
    json_decref(empty);
    return rc;
}

static const mb_mcp_tool TOOLS[] = {
    {.name = "search_papers", .description = "Search for papers on arXiv with advanced filtering",
     .input_schema = SEARCH_SCHEMA, .fn = handle},
    {.name = "download_paper", .description = "Download a paper and create a resource for it",
     .input_schema = DOWNLOAD_SCHEMA, .fn = handle},
    {.name = "list_papers", .description = "List all existing papers available as resources",
     .input_schema = LIST_SCHEMA, .fn = handle},
    {.name = "read_paper",
     .description = "Read the full content of a stored paper in markdown format",
     .input_schema = READ_SCHEMA, .fn = handle},
    {0},
};

/* capabilities of server.get_capabilities(NotificationOptions(resources_changed=True), {}):
 * upstream also lists prompts (deep-paper-analysis), which this server does not serve. */
#define CAPS "{\"experimental\": {}, \"tools\": {\"listChanged\": false}}"

static const mb_mcp_info INFO_0_2_11 = {
    .name = "arxiv-mcp-server", .version = "0.2.11", .flavor = MB_MCP_PY_SERVER,
    .capabilities = CAPS, .unknown_tool = handle,
};
static const mb_mcp_info INFO_0_2_10 = {
    .name = "arxiv-mcp-server", .version = "0.2.10", .flavor = MB_MCP_PY_SERVER,
    .capabilities = CAPS, .unknown_tool = handle,
};

static void state_free(void *p)
{
    arxiv_state *st = p;
    if (!st) return;
    mb_arxiv_convs_free(&st->s);
    pthread_mutex_destroy(&st->s.lock);
    mb_arxiv_catalog_close(st->s.catalog);
    free(st->s.catalog_error);
    free(st->s.storage);
    free(st->s.catalog_dir);
    mb_arxiv_egress_stop(&st->s.net.egress);
    free(st->s.net.api_base), free(st->s.net.pdf_base), free(st->s.net.proxy);
    free(st->s.net.egress_socket);
    for (int i = 0; i < 4; i++) json_decref(st->schemas[i]);
    free(st);
}

/* Path(p).resolve(): absolute, symlinks resolved as far as the path exists. */
static char *resolve_path(const char *p)
{
    char *abs = mb_path_resolve(NULL, p);
    char *real = realpath(abs, NULL);
    if (real) {
        free(abs);
        return real;
    }
    return abs;
}

static int env_flag(const char *name)
{
    const char *v = getenv(name);
    return v && (!strcmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "yes"));
}

int mb_srv_arxiv_create(int argc, char **argv, mb_mcp_server **out, mb_err *err)
{
    enum { O_VERSION = 256, O_STORAGE, O_CATALOG, O_ONLINE, O_OFFLINE, O_API, O_PDF, O_PROXY,
           O_DELAY, O_TIMEOUT, O_CONVERT_TIMEOUT };
    static const struct option opts[] = {
        {"upstream-version", required_argument, 0, O_VERSION},
        {"storage-path", required_argument, 0, O_STORAGE},
        {"catalog", required_argument, 0, O_CATALOG},
        {"online", no_argument, 0, O_ONLINE},
        {"offline", no_argument, 0, O_OFFLINE},
        {"api-url", required_argument, 0, O_API},
        {"pdf-url", required_argument, 0, O_PDF},
        {"proxy", required_argument, 0, O_PROXY},
        {"request-delay", required_argument, 0, O_DELAY},
        {"timeout", required_argument, 0, O_TIMEOUT},
        {"convert-timeout", required_argument, 0, O_CONVERT_TIMEOUT},
        {0, 0, 0, 0},
    };
    *out = NULL;
    arxiv_state *st = mb_calloc(1, sizeof *st);
    mb_arxiv_server *s = &st->s;
    pthread_mutex_init(&s->lock, NULL);
    s->version = MB_ARXIV_0_2_11;
    s->convert_timeout_s = 300;
    s->online = env_flag("ARXIV_ONLINE");
    const char *cat = getenv("ARXIV_CATALOG");
    s->catalog_dir = mb_strdup(cat && *cat ? cat : DEFAULT_CATALOG);
    s->net.api_base = mb_strdup(getenv("ARXIV_API_URL") ? getenv("ARXIV_API_URL")
                                                        : "https://export.arxiv.org/api/query");
    s->net.pdf_base = mb_strdup(getenv("ARXIV_PDF_URL") ? getenv("ARXIV_PDF_URL")
                                                        : "https://arxiv.org/pdf/");
    s->net.proxy = getenv("ARXIV_PROXY") ? mb_strdup(getenv("ARXIV_PROXY")) : NULL;
    /* inside a sandbox whose profile lets this server out: the daemon's egress proxy */
    const char *eg = getenv("MCPBOX_EGRESS_PROXY");
    s->net.egress_socket = eg && *eg ? mb_strdup(eg) : NULL;
    s->net.egress.listener = -1;
    s->net.delay_ms = 3000;
    s->net.timeout_s = 60;
    char *storage = NULL;
    optind = 1;
    opterr = 0;
    int c, rc = MB_OK;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        char *end = NULL;
        double d;
        switch (c) {
        case O_VERSION:
            if (!strcmp(optarg, "0.2.11")) s->version = MB_ARXIV_0_2_11;
            else if (!strcmp(optarg, "0.2.10")) s->version = MB_ARXIV_0_2_10;
            else {
                rc = mb_err_set(err, MB_EINVAL,
                                "unknown --upstream-version \"%s\" (use 0.2.11 or 0.2.10)", optarg);
                goto fail;
            }
            break;
        case O_STORAGE: free(storage), storage = mb_strdup(optarg); break;
        case O_CATALOG: free(s->catalog_dir), s->catalog_dir = mb_strdup(optarg); break;
        case O_ONLINE: s->online = 1; break;
        case O_OFFLINE: s->online = 0; break;
        case O_API: free(s->net.api_base), s->net.api_base = mb_strdup(optarg); break;
        case O_PDF: free(s->net.pdf_base), s->net.pdf_base = mb_strdup(optarg); break;
        case O_PROXY: free(s->net.proxy), s->net.proxy = mb_strdup(optarg); break;
        case O_DELAY:
        case O_TIMEOUT:
        case O_CONVERT_TIMEOUT:
            d = strtod(optarg, &end);
            if (!*optarg || *end || d < 0 || d > 86400) {
                rc = mb_err_set(err, MB_EINVAL, "%s wants seconds (0..86400), got \"%s\"",
                                argv[optind - 1], optarg);
                goto fail;
            }
            if (c == O_DELAY) s->net.delay_ms = (int)(d * 1000);
            else if (c == O_TIMEOUT) s->net.timeout_s = d < 1 ? 1 : (int)d;
            else s->convert_timeout_s = d < 1 ? 1 : (int)d;
            break;
        default:
            rc = mb_err_set(err, MB_EINVAL, "unknown option \"%s\"", argv[optind - 1]);
            goto fail;
        }
    }
    if (optind < argc) {
        rc = mb_err_set(err, MB_EINVAL, "unexpected argument \"%s\"", argv[optind]);
        goto fail;
    }
    if (!storage) {
        const char *home = getenv("HOME");
        storage = mb_asprintf("%s/.arxiv-mcp-server/papers", home && *home ? home : "/root");
    }
    /* created on first use (list, read, download), as upstream's STORAGE_PATH property does */
    s->storage = resolve_path(storage);
    free(storage);
    storage = NULL;

    for (int i = 0; i < 4; i++) st->schemas[i] = json_loads(TOOLS[i].input_schema, 0, NULL);
    return mb_mcp_server_new_with_tools(s->version == MB_ARXIV_0_2_10 ? &INFO_0_2_10 : &INFO_0_2_11,
                                        TOOLS, st, state_free, out, err);
fail:
    free(storage);
    state_free(st);
    return rc;
}
