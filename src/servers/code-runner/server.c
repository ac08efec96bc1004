/*
 * server.c - the `code-runner` MCP server: mcp-server-code-runner 0.1.7's single
 * tool `run-code {code, languageId}`.
 *
 * As upstream: the code is written to <tmpdir>/tmp.<ext> (ext = the language id,
 * except js/ts/ps1), `<executor> "<file>"` runs through /bin/sh -c (Node's
 * exec), and the reply is stdout; a non-zero exit becomes an error
 * "Error: Command failed: <cmd>\n<stderr>", a zero exit with stderr output an
 * error "Stderr: <stderr>". Output is capped like exec's maxBuffer (1 MiB).
 *
 * Beyond upstream: a language whose interpreter is missing gets upstream's text
 * followed by one line naming the missing program; a call runs at most
 * --timeout seconds (default 300; upstream waits forever).
 *
 * Arguments are validated as the TypeScript SDK does with code-runner's own
 * zod 3 ("Required", "Expected string, received number", "Invalid enum value.
 * Expected 'javascript' | ..., received 'cobol'").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mcp/mcp.h"
#include "servers/common/proc.h"
#include "servers/servers.h"

typedef struct lang {
    const char *id, *executor;
} lang;

/* languageIdToExecutorMap, in upstream's order (the enum's order too). */
static const lang LANGS[] = {
    {"javascript", "node"},
    {"php", "php"},
    {"python", "python -u"},
    {"perl", "perl"},
    {"perl6", "perl6"},
    {"ruby", "ruby"},
    {"go", "go run"},
    {"lua", "lua"},
    {"groovy", "groovy"},
    {"powershell", "powershell -ExecutionPolicy ByPass -File"},
    {"bat", "cmd /c"},
    {"shellscript", "bash"},
    {"fsharp", "fsi"},
    {"csharp", "scriptcs"},
    {"vbscript", "cscript //Nologo"},
    {"typescript", "ts-node"},
    {"coffeescript", "coffee"},
    {"scala", "scala"},
    {"swift", "swift"},
    {"julia", "julia"},
    {"crystal", "crystal"},
    {"ocaml", "ocaml"},
    {"r", "Rscript"},
    {"applescript", "osascript"},
    {"clojure", "lein exec"},
    {"racket", "racket"},
    {"scheme", "csi -script"},
    {"ahk", "autohotkey"},
    {"autoit", "autoit3"},
    {"dart", "dart"},
    {"haskell", "runhaskell"},
    {"nim", "nim compile --verbosity:0 --hints:off --run"},
    {"lisp", "sbcl --script"},
    {"kit", "kitc --run"},
    {"v", "v run"},
    {"sass", "sass --style expanded"},
    {"scss", "scss --style expanded"},
};
#define NLANGS (sizeof LANGS / sizeof LANGS[0])

#define NODE_MAX_BUFFER (1024 * 1024)

typedef struct runner {
    int timeout_s;
    char *schema;
    mb_mcp_tool tools[2];
} runner;

static void runner_free(void *p)
{
    runner *r = p;
    if (!r) return;
    free(r->schema);
    free(r);
}

static const lang *find_lang(const char *id)
{
    for (size_t i = 0; i < NLANGS; i++)
        if (!strcmp(LANGS[i].id, id)) return &LANGS[i];
    return NULL;
}

/* zod 3's received-type names */
static const char *zod_type(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_NULL: return "null";
    case JSON_TRUE:
    case JSON_FALSE: return "boolean";
    case JSON_INTEGER:
    case JSON_REAL: return "number";
    case JSON_STRING: return "string";
    case JSON_ARRAY: return "array";
    default: return "object";
    }
}

static void enum_list(mb_buf *b)
{
    for (size_t i = 0; i < NLANGS; i++) mb_buf_printf(b, "%s'%s'", i ? " | " : "", LANGS[i].id);
}

/* What z.object({code: z.string(), languageId: z.enum([...])}) reports. */
static int zod3_validate(const json_t *args, mb_buf *msg)
{
    int issues = 0;
    const json_t *code = args ? json_object_get(args, "code") : NULL;
    const json_t *lid = args ? json_object_get(args, "languageId") : NULL;
    if (!code) mb_buf_printf(msg, "%sRequired at code", issues++ ? "\n" : "");
    else if (!json_is_string(code))
        mb_buf_printf(msg, "%sExpected string, received %s at code", issues++ ? "\n" : "",
                      zod_type(code));
    if (!lid) {
        mb_buf_printf(msg, "%sRequired at languageId", issues++ ? "\n" : "");
    } else if (!json_is_string(lid)) {
        mb_buf_printf(msg, "%sExpected ", issues++ ? "\n" : "");
        enum_list(msg);
        mb_buf_printf(msg, ", received %s at languageId", zod_type(lid));
    } else if (!find_lang(json_string_value(lid))) {
        mb_buf_printf(msg, "%sInvalid enum value. Expected ", issues++ ? "\n" : "");
        enum_list(msg);
        mb_buf_printf(msg, ", received '%s' at languageId", json_string_value(lid));
    }
    return issues;
}

/* os.tmpdir(): $TMPDIR without a trailing slash, else /tmp */
static char *node_tmpdir(void)
{
    const char *t = getenv("TMPDIR");
    if (!t || !*t) t = getenv("TMP");
    if (!t || !*t) t = getenv("TEMP");
    if (!t || !*t) return mb_strdup("/tmp");
    size_t n = strlen(t);
    while (n > 1 && t[n - 1] == '/') n--;
    return mb_strndup(t, n);
}

/* Is the first word of the executor found in PATH? */
static int program_exists(const char *executor, char *prog, size_t cap)
{
    size_t n = strcspn(executor, " ");
    snprintf(prog, cap, "%.*s", (int)n, executor);
    const char *path = getenv("PATH");
    if (!path) path = "/usr/local/bin:/usr/bin:/bin";
    char *copy = mb_strdup(path), *save = NULL;
    int found = 0;
    for (char *d = strtok_r(copy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
        char *p = mb_asprintf("%s/%s", *d ? d : ".", prog);
        found = access(p, X_OK) == 0;
        free(p);
    }
    free(copy);
    return found;
}

static int call_cancelled(void *ctx) { return mb_mcp_call_cancelled(ctx); }

/* mb_mcp_info.validate: the framework adds "MCP error -32602: Input validation
 * error: Invalid arguments for tool run-code: " in front. */
static int validate_zod3(const json_t *schema, json_t *args, char **msg)
{
    mb_buf b = {0};
    mb_buf_puts(&b, "");
    if (zod3_validate(args, &b)) {
        *msg = mb_buf_steal(&b);
        return MB_EINVAL;
    }
    mb_buf_free(&b);
    *msg = NULL;
    return MB_OK;
}

static int run_code(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    runner *r = mb_mcp_call_data(call);
    const char *code = json_string_value(json_object_get(args, "code"));
    size_t code_len = json_string_length(json_object_get(args, "code"));
    const lang *l = find_lang(json_string_value(json_object_get(args, "languageId")));
    if (!code_len) return mb_mcp_fail(res, "Code is required.");

    const char *ext = !strcmp(l->id, "javascript")   ? "js"
                      : !strcmp(l->id, "typescript") ? "ts"
                      : !strcmp(l->id, "powershell") ? "ps1"
                                                     : l->id;
    char *dir = node_tmpdir();
    char *path = mb_asprintf("%s/tmp.%s", dir, ext);
    free(dir);
    int fd = mb_open_file(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0 || write(fd, code, code_len) != (ssize_t)code_len) {
        int e = errno;
        if (fd >= 0) close(fd);
        char *m = mb_node_fs_error(e, "open", path, NULL);
        int rc = mb_mcp_fail_str(res, m);
        free(m), free(path);
        return rc;
    }
    close(fd);
    char *command = mb_asprintf("%s \"%s\"", l->executor, path);
    const char *argv[] = {"/bin/sh", "-c", command, NULL};
    mb_proc_spec spec = {
        .argv = argv,
        .timeout_ms = r->timeout_s > 0 ? r->timeout_s * 1000 : -1,
        .max_output = NODE_MAX_BUFFER,
        .kill_on_overflow = 1,
        .kill_group = 1,
        .watch_fd = mb_mcp_call_input_fd(call),
        .cancelled = call_cancelled,
        .ctx = call,
    };
    mb_proc_result pr;
    mb_err err = {0};
    int rc;
    if (mb_proc_run(&spec, &pr, &err) != MB_OK) {
        rc = mb_mcp_fail(res, "Error: %s", err.msg);
        goto out_nores;
    }
    char *out = mb_utf8_repair(pr.out.data, pr.out.len, NULL);
    char *errs = mb_utf8_repair(pr.err.data, pr.err.len, NULL);
    if (pr.overflowed) {
        rc = mb_mcp_fail(res, "Error: %s maxBuffer length exceeded",
                         pr.out_truncated ? "stdout" : "stderr");
    } else if (pr.timed_out || !pr.exited || pr.exit_code != 0) {
        mb_buf m = {0};
        mb_buf_printf(&m, "Error: Command failed: %s\n%s", command, errs);
        char prog[256];
        if (pr.exited && pr.exit_code == 127 && !program_exists(l->executor, prog, sizeof prog))
            mb_buf_printf(&m,
                          "\n(mcpbox: no interpreter for languageId '%s': '%s' is not installed "
                          "in this sandbox)",
                          l->id, prog);
        if (pr.timed_out)
            mb_buf_printf(&m, "\n(mcpbox: stopped after the %d s time limit)", r->timeout_s);
        rc = mb_mcp_fail_str(res, m.data);
        mb_buf_free(&m);
    } else if (pr.err.len) {
        rc = mb_mcp_fail(res, "Stderr: %s", errs);
    } else {
        mb_mcp_text(res, out);
        rc = 0;
    }
    free(out), free(errs);
    mb_proc_result_free(&pr);
out_nores:
    free(command), free(path);
    return rc;
}

static const mb_mcp_info RUNNER_INFO = {
    .name = "Code Runner",
    .version = "0.1.0",
    .flavor = MB_MCP_TS_MCPSERVER,
    .capabilities = "{\"tools\":{\"listChanged\":true}}",
    .validate = validate_zod3, /* code-runner bundles zod 3, whose texts differ from zod 4 */
};

int mb_srv_coderunner_create(int argc, char **argv, mb_mcp_server **out, mb_err *err)
{
    static const struct option opts[] = {
        {"timeout", required_argument, 0, 't'},
        {"transport", required_argument, 0, 'T'},
        {0, 0, 0, 0},
    };
    *out = NULL;
    runner *r = mb_calloc(1, sizeof *r);
    r->timeout_s = 300;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 't') r->timeout_s = atoi(optarg);
        else if (c == 'T') {
            if (strcmp(optarg, "stdio")) {
                runner_free(r);
                return mb_err_set(err, MB_EINVAL,
                                  "--transport %s: only stdio here (the gateway serves HTTP)",
                                  optarg);
            }
        } else {
            runner_free(r);
            return mb_err_set(err, MB_EINVAL, "unknown option \"%s\"", argv[optind - 1]);
        }
    }
    mb_buf s = {0};
    mb_buf_puts(&s, "{\"type\":\"object\",\"properties\":{\"code\":{\"type\":\"string\","
                    "\"description\":\"Code Snippet\"},\"languageId\":{\"type\":\"string\","
                    "\"enum\":[");
    for (size_t i = 0; i < NLANGS; i++) mb_buf_printf(&s, "%s\"%s\"", i ? "," : "", LANGS[i].id);
    mb_buf_puts(&s, "],\"description\":\"Language ID\"}},\"required\":[\"code\",\"languageId\"],"
                    "\"additionalProperties\":false,"
                    "\"$schema\":\"http://json-schema.org/draft-07/schema#\"}");
    r->schema = mb_buf_steal(&s);
    r->tools[0] = (mb_mcp_tool){.name = "run-code",
                                .description = "Run code snippet and return the result.",
                                .input_schema = r->schema,
                                .fn = run_code};
    return mb_mcp_server_new_with_tools(&RUNNER_INFO, r->tools, r, runner_free, out, err);
}
