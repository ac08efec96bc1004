/*
 * args.c - what every client command shares before it talks to a daemon:
 * the options --url, --key, --json, --timeout (with MCPBOX_URL and
 * MCPBOX_API_KEY as defaults), option parsing, and the error line.
 */
#include "cli/client/client.h"

#include <curl/curl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_URL "http://127.0.0.1:8080"

const char mb_cl_common_help[] =
    "  --url URL       the daemon (MCPBOX_URL; default " DEFAULT_URL ")\n"
    "  --key KEY       API key (MCPBOX_API_KEY)\n"
    "  --json          machine-readable output on stdout\n"
    "  --timeout SECS  give up on a request after SECS (default 600; 0 = never)\n";

/* Defaults from MCPBOX_URL / MCPBOX_API_KEY. */
static void cl_init(mb_cl *cl, const char *cmd)
{
    memset(cl, 0, sizeof *cl);
    cl->cmd = cmd;
    const char *u = getenv("MCPBOX_URL");
    cl->url = mb_strdup(u && *u ? u : DEFAULT_URL);
    const char *k = getenv("MCPBOX_API_KEY");
    if (k && *k) cl->key = mb_strdup(k);
    cl->timeout_s = 600;
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

void mb_cl_free(mb_cl *cl)
{
    if (cl->curl) curl_easy_cleanup(cl->curl);
    free(cl->url);
    free(cl->key);
    curl_global_cleanup();
    memset(cl, 0, sizeof *cl);
}

int mb_cl_option(mb_cl *cl, int c, const char *arg)
{
    switch (c) {
    case MB_CL_OPT_URL:
        free(cl->url);
        cl->url = mb_strdup(arg);
        return 0;
    case MB_CL_OPT_KEY:
        free(cl->key);
        cl->key = *arg ? mb_strdup(arg) : NULL;
        return 0;
    case MB_CL_OPT_JSON: cl->json = 1; return 0;
    case MB_CL_OPT_TIMEOUT: {
        char *end;
        long v = strtol(arg, &end, 10);
        if (!*arg || *end || v < 0 || v > 86400) {
            mb_cl_fail(cl, MB_CL_USAGE, "--timeout wants seconds (0..86400), not '%s'", arg);
            return -1;
        }
        cl->timeout_s = v;
        return 0;
    }
    case MB_CL_OPT_HELP: return 1;
    default: return -1;
    }
}

int mb_cl_ready(mb_cl *cl)
{
    size_t n = strlen(cl->url);
    while (n > 0 && cl->url[n - 1] == '/') cl->url[--n] = '\0';
    if (strncmp(cl->url, "http://", 7) && strncmp(cl->url, "https://", 8))
        return mb_cl_fail(cl, MB_CL_USAGE,
                          "--url / MCPBOX_URL must start with http:// or https://, not '%s'",
                          cl->url);
    cl->progress = !cl->json && isatty(STDOUT_FILENO) && isatty(STDERR_FILENO);
    return MB_CL_OK;
}

int mb_cl_fail(const mb_cl *cl, int code, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    mb_text_vformat(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char *clean = mb_cl_clean(msg, 1);
    fprintf(stderr, "mcpbox %s: %s\n", cl->cmd, clean);
    free(clean);
    return code;
}

int mb_cl_start(mb_cl *cl, const mb_cl_cmd *cmd, int argc, char **argv, void *ctx)
{
    cl_init(cl, cmd->name);
    static const struct option common[] = {MB_CL_COMMON_OPTS};
    size_t ne = 0, nc = sizeof common / sizeof *common;
    while (cmd->extra && cmd->extra[ne].name) ne++;
    struct option *all = mb_calloc(ne + nc + 1, sizeof *all);
    memcpy(all, common, sizeof common);
    if (ne) memcpy(all + nc, cmd->extra, ne * sizeof *cmd->extra);
    int rc = -1, c;
    optind = 1;
    opterr = 0;
    while (rc < 0 &&
           (c = getopt_long(argc, argv, cmd->shortopts ? cmd->shortopts : "", all, NULL)) != -1) {
        int r = mb_cl_option(cl, c, optarg);
        if (r == 1) {
            printf("%s\noptions every client command takes:\n%s", cmd->usage, mb_cl_common_help);
            rc = MB_CL_OK;
        } else if (r == 0) {
            continue;
        } else if (c != '?' && c != ':' && cmd->on_opt && cmd->on_opt(ctx, c, optarg) == 0) {
            continue;
        } else {
            if (c == '?' || c == ':')
                fprintf(stderr, "mcpbox %s: %s option '%s'\n", cl->cmd,
                        c == ':' ? "missing a value for" : "unknown", argv[optind - 1]);
            rc = MB_CL_USAGE;
        }
    }
    free(all);
    int n = argc - optind;
    if (rc < 0 && (n < cmd->min_args || (cmd->max_args >= 0 && n > cmd->max_args))) {
        mb_cl_fail(cl, MB_CL_USAGE, "%s wants %s", cmd->name, cmd->args_hint);
        rc = MB_CL_USAGE;
    }
    if (rc == MB_CL_USAGE)
        fprintf(stderr, "%s(`mcpbox %s --help` for the options)\n", cmd->usage, cmd->name);
    if (rc < 0) {
        int r = mb_cl_ready(cl);
        if (r) rc = r;
    }
    return rc;
}
