/*
 * toolathlon.c - code-executor, Toolathlon variant: `python_execute`, the MCP form
 * of Toolathlon's local-python-execute tool (utils/aux_tools/python_interpretor.py).
 *
 * The code goes to <workspace>/.python_tmp/<filename> (a UUID name by default,
 * ".py" appended when missing) and runs with the workspace as working
 * directory - upstream uses `uv run --directory <ws> ./.python_tmp/<file>`; here
 * the workspace's .venv python when it has one, else python3. The reply is
 * upstream's text, always a normal result:
 *
 *   === STDOUT ===\n<stdout, rstripped>\n=== STDERR ===\n<stderr, rstripped>\n
 *   === EXECUTION INFO ===\nReturn code: N\nExecution time: 0.123 seconds\n
 *   Timeout limit: 30 seconds
 *
 * ("No console output produced." first when both streams are empty), or
 * "=== EXECUTION TIMEOUT ===..." after the timeout (at most 120 s), or
 * "Error executing Python code: <exception text>".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "servers/common/pyschema.h"
#include "servers/code-executor/codeexec.h"
#include "servers/common/proc.h"
#include "servers/common/pyfmt.h"

typedef struct tl {
    char *workspace; /* absolute */
    mb_mcp_roots *roots;
    mb_mcp_tool tools[2];
} tl;

static void tl_free(void *p)
{
    tl *t = p;
    if (!t) return;
    free(t->workspace);
    mb_mcp_roots_free(t->roots);
    free(t);
}

static int fail_text(mb_mcp_result *res, const char *why)
{
    mb_buf b = {0};
    mb_buf_printf(&b, "Error executing Python code: %s", why);
    mb_mcp_text_n(res, b.data, b.len);
    mb_buf_free(&b);
    return 0;
}

static int call_cancelled(void *ctx) { return mb_mcp_call_cancelled(ctx); }

static int python_execute(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    tl *t = mb_mcp_call_data(call);
    json_t *codev = args ? json_object_get(args, "code") : NULL;
    json_t *namev = args ? json_object_get(args, "filename") : NULL;
    json_t *tov = args ? json_object_get(args, "timeout") : NULL;
    char why[512];

    /* timeout = params.get("timeout", 30); if timeout > 120: timeout = 120 */
    double timeout = 30;
    mb_buf tshow = {0};
    mb_buf_puts(&tshow, "30");
    if (tov) {
        if (json_is_number(tov) || json_is_boolean(tov)) {
            timeout = json_is_boolean(tov) ? json_is_true(tov) : json_number_value(tov);
            mb_buf_reset(&tshow);
            if (json_is_boolean(tov)) mb_buf_puts(&tshow, json_is_true(tov) ? "True" : "False");
            else if (json_is_integer(tov))
                mb_buf_printf(&tshow, "%" JSON_INTEGER_FORMAT, json_integer_value(tov));
            else mb_py_float_str(&tshow, timeout);
        } else {
            snprintf(why, sizeof why, "'>' not supported between instances of '%s' and 'int'",
                     mb_py_type_name(tov));
            mb_buf_free(&tshow);
            return fail_text(res, why);
        }
        if (timeout > 120) {
            timeout = 120;
            mb_buf_reset(&tshow);
            mb_buf_puts(&tshow, "120");
        }
    }

    char *filename;
    if (namev && !json_is_string(namev)) {
        snprintf(why, sizeof why, "'%s' object has no attribute 'endswith'", mb_py_type_name(namev));
        mb_buf_free(&tshow);
        return fail_text(res, why);
    }
    if (namev) {
        const char *n = json_string_value(namev);
        filename = mb_str_has_suffix(n, ".py") ? mb_strdup(n) : mb_asprintf("%s.py", n);
    } else {
        char u[37];
        mb_uuid4(u);
        filename = mb_asprintf("%s.py", u);
    }
    if (codev && !json_is_string(codev)) {
        snprintf(why, sizeof why, "write() argument must be str, not %s", mb_py_type_name(codev));
        free(filename);
        mb_buf_free(&tshow);
        return fail_text(res, why);
    }
    const char *code = codev ? json_string_value(codev) : "";

    char *tmpdir = mb_asprintf("%s/.python_tmp", t->workspace);
    /* os.path.join: an absolute file name replaces the directory */
    char *path = filename[0] == '/' ? mb_strdup(filename) : mb_asprintf("%s/%s", tmpdir, filename);
    char *rel = filename[0] == '/' ? mb_strdup(filename) : mb_asprintf("./.python_tmp/%s", filename);
    char *real = NULL, *refusal = NULL;
    mb_err err = {0};
    int rc = 0;
    /* mcpbox: the file must stay inside the workspace */
    if (mb_mkdir_p(tmpdir, 0755, &err) != MB_OK) {
        fail_text(res, err.msg);
        goto out;
    }
    /* a missing sub-directory is left to open() below (upstream's FileNotFoundError) */
    char *abs = mb_path_resolve(NULL, path);
    if (mb_mcp_resolve(t->roots, abs, &real, &refusal) == MB_EDENIED) {
        free(abs);
        fail_text(res, refusal);
        goto out;
    }
    free(abs);
    int fd = mb_open_file(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0 || write(fd, code, strlen(code)) != (ssize_t)strlen(code)) {
        char *os = mb_py_os_error(errno, path);
        if (fd >= 0) close(fd);
        fail_text(res, os);
        free(os);
        goto out;
    }
    close(fd);

    char *venv_py = mb_asprintf("%s/.venv/bin/python", t->workspace);
    const char *python = access(venv_py, X_OK) == 0 ? venv_py : "python3";
    const char *argv[] = {python, rel, NULL};
    mb_proc_spec spec = {
        .argv = argv,
        .cwd = t->workspace,
        .timeout_ms = (int)fmax(1, ceil(timeout * 1000)),
        .max_output = (size_t)64 << 20,
        .kill_group = 1,
        .watch_fd = mb_mcp_call_input_fd(call),
        .cancelled = call_cancelled,
        .ctx = call,
    };
    if (timeout <= 0) spec.timeout_ms = 1;
    double start = mb_now();
    mb_proc_result pr;
    if (mb_proc_run(&spec, &pr, &err) != MB_OK) {
        free(venv_py);
        fail_text(res, err.msg);
        goto out;
    }
    double elapsed = mb_now() - start;
    free(venv_py);
    mb_buf text = {0};
    mb_buf_puts(&text, "");
    if (pr.timed_out) {
        mb_buf_printf(&text,
                      "=== EXECUTION TIMEOUT ===\nExecution timed out after %s seconds\n"
                      "Execution time: %.3f seconds",
                      tshow.data, elapsed);
        mb_mcp_text_n(res, text.data, text.len);
        goto done;
    }
    mb_buf *streams[2] = {&pr.out, &pr.err};
    for (int i = 0; i < 2; i++) {
        mb_buf e = {0};
        if (mb_py_utf8_error(&e, streams[i]->data, streams[i]->len) >= 0) {
            fail_text(res, e.data);
            mb_buf_free(&e);
            goto done;
        }
        streams[i]->len = mb_py_universal_newlines(streams[i]->data, streams[i]->len);
    }
    if (!pr.out.len && !pr.err.len) mb_buf_puts(&text, "No console output produced.\n");
    if (pr.out.len) {
        mb_buf_puts(&text, "=== STDOUT ===\n");
        mb_buf_append(&text, pr.out.data, mb_py_rstrip(pr.out.data, pr.out.len));
        mb_buf_putc(&text, '\n');
    }
    if (pr.err.len) {
        mb_buf_puts(&text, "=== STDERR ===\n");
        mb_buf_append(&text, pr.err.data, mb_py_rstrip(pr.err.data, pr.err.len));
        mb_buf_putc(&text, '\n');
    }
    int code_rc = pr.spawn_errno ? 127 : pr.exited ? pr.exit_code : -pr.term_signal;
    mb_buf_printf(&text,
                  "=== EXECUTION INFO ===\nReturn code: %d\nExecution time: %.3f seconds\n"
                  "Timeout limit: %s seconds",
                  code_rc, elapsed, tshow.data);
    mb_mcp_text_n(res, text.data, text.len);
done:
    mb_buf_free(&text);
    mb_proc_result_free(&pr);
out:
    free(real), free(refusal), free(tmpdir), free(path), free(rel), free(filename);
    mb_buf_free(&tshow);
    return rc;
}

#define SCHEMA                                                                                    \
    "{\"type\": \"object\", \"properties\": {\"code\": {\"type\": \"string\", \"description\": "   \
    "\"Python code to execute (can be directly pasted into a .py file)\"}, \"filename\": "         \
    "{\"type\": \"string\", \"description\": \"Filename for the Python file (including .py "       \
    "extension). If not provided, a random UUID will be used.\"}, \"timeout\": {\"type\": "        \
    "\"number\", \"maximum\": 120, \"default\": 30, \"description\": \"Maximum execution time in " \
    "seconds. Cannot exceed 120 seconds. If a value greater than 120 is provided, it will be "     \
    "automatically limited to 120 seconds. Default is 30 seconds.\"}}, \"required\": [\"code\"], " \
    "\"additionalProperties\": false}"

static const mb_mcp_info TL_INFO = {
    .name = "code-executor",
    .version = "1.0.0",
    .flavor = MB_MCP_PY_FASTMCP,
    /* what a FastMCP server announces */
    .capabilities = "{\"experimental\": {}, \"prompts\": {\"listChanged\": false}, \"resources\": "
                    "{\"subscribe\": false, \"listChanged\": false}, \"tools\": {\"listChanged\": false}}",
    /* each run writes its own file; FastMCP runs sync tools on a thread pool */
    .concurrent_calls = 8,
};

int mb_codeexec_toolathlon_create(int argc, char **argv, mb_mcp_server **out, mb_err *err)
{
    static const struct option opts[] = {
        {"workspace", required_argument, 0, 'w'},
        {0, 0, 0, 0},
    };
    *out = NULL;
    const char *ws = NULL;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'w') ws = optarg;
        else return mb_err_set(err, MB_EINVAL, "unknown option \"%s\"", argv[optind - 1]);
    }
    if (optind < argc) return mb_err_set(err, MB_EINVAL, "unexpected argument \"%s\"", argv[optind]);
    if (!ws) {
        struct stat st;
        ws = stat("/data", &st) == 0 ? "/data" : ".";
    }
    tl *t = mb_calloc(1, sizeof *t);
    t->workspace = mb_path_resolve(NULL, ws);
    char *dirs[] = {t->workspace};
    int rc = mb_mcp_roots_new(dirs, 1, &t->roots, err);
    if (rc) {
        tl_free(t);
        return rc == MB_EINVAL ? MB_EIO : rc;
    }
    t->tools[0] = (mb_mcp_tool){
        .name = "python_execute",
        .description = "Execute Python code directly under the agent workspace, and returns stdout, "
                       "stderr, return code, and execution time in a structured format.",
        .input_schema = SCHEMA,
        .fn = python_execute};
    return mb_mcp_server_new_with_tools(&TL_INFO, t->tools, t, tl_free, out, err);
}
