/*
 * client.h - the face of the CLI client: `mcpbox acquire|ls|get|rm|reset|
 * push|pull|tools|call|logs`, commands that drive a running daemon over its
 * REST API and its MCP URLs (libcurl), for people at a terminal and for
 * scripts (--json). The command entry points are declared in cli/cli.h;
 * this header holds what the client's files share.
 *
 * Every byte a daemon sends is untrusted: answers are size-capped, parsed
 * with jansson, checked for the fields read, and any text printed for a
 * person is valid UTF-8 without control characters.
 *
 * Exit statuses (docs/CLI.md): see mb_cl_exit.
 */
#ifndef MB_CLI_CLIENT_H
#define MB_CLI_CLIENT_H

#include "util/util.h"

#include <getopt.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

typedef enum mb_cl_exit {
    MB_CL_OK = 0,
    MB_CL_FAIL = 1,        /* the daemon failed (5xx), an answer was malformed, local I/O */
    MB_CL_USAGE = 2,       /* wrong arguments */
    MB_CL_UNREACHABLE = 3, /* no daemon at the URL (refused, unresolvable, timed out) */
    MB_CL_AUTH = 4,        /* no key, or the key was refused (401/403) */
    MB_CL_NOTFOUND = 5,    /* no such sandbox or server (404) */
    MB_CL_REFUSED = 6,     /* the daemon refused the request (400/409/413/422/429) */
    MB_CL_TOOL_ERROR = 7,  /* `call`: the tool answered with isError: true */
} mb_cl_exit;

/* Caps on what is read from a daemon into memory. */
#define MB_CL_MAX_API_BYTES (32u << 20)  /* one REST answer */
#define MB_CL_MAX_MCP_BYTES (64u << 20)  /* one MCP message (the gateway's default) */

/* One client invocation: where, who, how to print. */
typedef struct mb_cl {
    const char *cmd;   /* "acquire", ... for messages */
    char *url;         /* daemon base URL, no trailing slash */
    char *key;         /* API key, or NULL */
    int json;          /* --json: machine output */
    int progress;      /* progress bars (stdout is a terminal and not --json) */
    long timeout_s;    /* per request, 0 = none */
    int quiet_404;     /* mb_cl_api: a 404 returns MB_CL_NOTFOUND unprinted */
    void *curl;        /* CURL *, made on first use */
} mb_cl;

/* ------------------------------------------------------------- options */

/* Options every client command takes; add MB_CL_COMMON_OPTS to a command's
 * longopts and hand unknown getopt results to mb_cl_option. */
enum { MB_CL_OPT_URL = 1000, MB_CL_OPT_KEY, MB_CL_OPT_JSON, MB_CL_OPT_TIMEOUT, MB_CL_OPT_HELP };
#define MB_CL_COMMON_OPTS                                        \
    {"url", required_argument, NULL, MB_CL_OPT_URL},             \
    {"key", required_argument, NULL, MB_CL_OPT_KEY},             \
    {"json", no_argument, NULL, MB_CL_OPT_JSON},                 \
    {"timeout", required_argument, NULL, MB_CL_OPT_TIMEOUT},     \
    {"help", no_argument, NULL, MB_CL_OPT_HELP}

/* The text describing the common options, for usage messages. */
extern const char mb_cl_common_help[];

/* Frees what mb_cl_start set up. */
void mb_cl_free(mb_cl *cl);
/* Handles a common option: 0 handled, 1 --help given, -1 not one (or a bad
 * value, reported). */
int mb_cl_option(mb_cl *cl, int c, const char *arg);
/* Finishes option parsing: URL normalised, progress decided. 0 or an exit. */
int mb_cl_ready(mb_cl *cl);

/* What a client command takes: its options beyond the common ones (extra,
 * zero-ended, handed to on_opt, which returns 0 if fine) and how many
 * operands follow them (max_args -1: any number; args_hint names them for
 * the usage error, e.g. "one sandbox id"). */
typedef struct mb_cl_cmd {
    const char *name;
    const char *usage;
    const char *shortopts;
    const struct option *extra;
    int (*on_opt)(void *ctx, int c, const char *arg);
    int min_args, max_args;
    const char *args_hint;
} mb_cl_cmd;

/* Initialises cl (mb_cl_init) and parses argv for cmd. Returns -1 to go on
 * (optind at the operands), or the exit status: 0 after --help, MB_CL_USAGE
 * after a bad option or operand count (printed). Call mb_cl_free either way. */
int mb_cl_start(mb_cl *cl, const mb_cl_cmd *cmd, int argc, char **argv, void *ctx);

/* Prints "mcpbox CMD: MESSAGE\n" to stderr, text made safe, and returns code. */
int mb_cl_fail(const mb_cl *cl, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---------------------------------------------------------------- REST */

/*
 * One REST call: METHOD base+path with the bearer key, body (may be NULL)
 * sent as JSON. On 2xx, *out (may be NULL) gets the parsed JSON object
 * (the caller decrefs) and 0 is returned. Otherwise the error is printed,
 * naming what to do, and its exit status returned. `sandbox` (may be NULL)
 * is the id the path names, for the not-found message.
 */
int mb_cl_api(mb_cl *cl, const char *method, const char *path, json_t *body,
              const char *sandbox, json_t **out);

/* The client's libcurl easy handle (CURL *), reset for a new request with
 * the settings every request shares (http/https only, timeouts). */
void *mb_cl_handle(mb_cl *cl);
/* Prints the error for a transfer libcurl could not complete (a CURLcode)
 * and returns its exit status (MB_CL_UNREACHABLE for no daemon). */
int mb_cl_transport_error(mb_cl *cl, const char *url, int curl_code, const char *errbuf);
/* Prints the error for a non-2xx answer (its body, a FastAPI detail or
 * not) and returns its exit status. */
int mb_cl_http_error(mb_cl *cl, long status, const char *body, size_t len, const char *sandbox);

/* Turns a full id or a unique prefix of one of the caller's sandboxes into
 * the full id (owned by the caller). 0 or an exit status (printed). */
int mb_cl_resolve_id(mb_cl *cl, const char *arg, char **id);
/* Checks a server name (letters, digits, '-', '_'). */
int mb_cl_valid_name(const char *s);

/* ------------------------------------------------------------ transfer */

/* PUTs the regular file f (from its start) to a signed URL (no key), with a
 * progress bar when cl->progress. 0 or an exit status (printed). *sent
 * (may be NULL) gets the bytes sent. */
int mb_cl_upload(mb_cl *cl, const char *url, FILE *f, uint64_t *sent);
/* GETs a signed URL into the open file f, with a progress bar. */
int mb_cl_download(mb_cl *cl, const char *url, FILE *f, uint64_t *got);

/* Progress bars (progress.c). */
typedef struct mb_cl_bar {
    const char *label;
    int64_t started_ms, drawn_ms;
    int shown;
} mb_cl_bar;
void mb_cl_bar_draw(mb_cl_bar *bar, uint64_t done, uint64_t total, int final);
/* "12.3 MiB" */
void mb_cl_human_bytes(double n, char out[32]);

/* ----------------------------------------------------------------- MCP */

/* An MCP Streamable-HTTP client session (mcp.c). */
typedef struct mb_cl_mcp mb_cl_mcp;

/* initialize + notifications/initialized on url. 0 or an exit status. */
int mb_cl_mcp_open(mb_cl *cl, const char *url, mb_cl_mcp **out);
/* One request; *result gets the JSON-RPC result (the caller decrefs). A
 * JSON-RPC error is printed and MB_CL_FAIL (or MB_CL_REFUSED for an
 * invalid-params error) returned. */
int mb_cl_mcp_request(mb_cl_mcp *m, const char *method, json_t *params, json_t **result);
/* Ends the session (DELETE, best effort) and frees it. NULL is fine. */
void mb_cl_mcp_close(mb_cl_mcp *m);

/* The MCP URL of SERVER in sandbox ID (from GET /local-sandbox/ID). */
int mb_cl_server_url(mb_cl *cl, const char *id, const char *server, char **url);

/* ---------------------------------------------------------------- output */

/* A copy of untrusted text fit for a terminal: valid UTF-8, control
 * characters (C0, DEL, C1) shown as '?', newlines kept when keep_nl. */
char *mb_cl_clean(const char *s, int keep_nl);
/* Pretty JSON of v on stdout, one document. */
void mb_cl_print_json(const json_t *v);
/* A string member, or "" (never NULL). */
const char *mb_cl_str(const json_t *obj, const char *key);

/* A table: columns set once, rows added, printed aligned (by code points). */
typedef struct mb_cl_table {
    size_t ncols, nrows;
    char **cells; /* nrows * ncols, cleaned */
} mb_cl_table;
void mb_cl_table_row(mb_cl_table *t, size_t ncols, const char *const *cells);
void mb_cl_table_print(mb_cl_table *t, FILE *f);

/* Sandbox views shared by acquire and get (sandboxes.c). */
void mb_cl_print_sandbox(const json_t *info);

#endif /* MB_CLI_CLIENT_H */
