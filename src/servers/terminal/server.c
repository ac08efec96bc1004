/*
 * server.c - the `terminal` MCP server: run_command and show_security_rules with
 * cli-mcp-server semantics (see terminal.h for the validation rules).
 *
 * Replies are shaped as cli-mcp-server's handle_call_tool builds them: stdout as
 * a text block, stderr as a text block carrying the extra field "error": true,
 * then "\nCommand completed with return code: N". Refusals, timeouts and exec
 * failures are single text blocks with "error": true in a normal (not isError)
 * result, because upstream returns them rather than raising.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/mcp.h"
#include "servers/common/proc.h"
#include "servers/common/pyfmt.h"
#include "servers/common/pyschema.h"
#include "servers/servers.h"
#include "servers/terminal/terminal.h"

extern char **environ;

#define RUN_SCHEMA                                                                           \
    "{\"type\": \"object\", \"properties\": {\"command\": {\"type\": \"string\", "           \
    "\"description\": \"Single command to execute (example: 'ls -l' or 'cat file.txt')\"}}, " \
    "\"required\": [\"command\"]}"
#define RULES_SCHEMA "{\"type\": \"object\", \"properties\": {}}"

/* Upper bound on what one stream may hold before it is dropped (upstream keeps
 * everything in memory; this keeps a runaway command from exhausting ours). */
#define TERM_MAX_CAPTURE ((size_t)32 << 20)

typedef struct term_server {
    mb_term_config cfg;
    char *run_description;
    mb_mcp_tool tools[3];
    json_t *run_schema;
} term_server;

static void term_free(void *p)
{
    term_server *t = p;
    if (!t) return;
    mb_term_config_dispose(&t->cfg);
    free(t->run_description);
    json_decref(t->run_schema);
    free(t);
}

/* A text content block, with upstream's extra "error": true when flagged. */
static void block(mb_mcp_result *res, const char *text, size_t len, int error)
{
    char *fixed = mb_utf8_repair(text, len, &len);
    json_t *b = json_object();
    json_object_set_new(b, "type", json_string("text"));
    json_object_set_new(b, "text", json_stringn(fixed, len));
    if (error) json_object_set_new(b, "error", json_true());
    mb_mcp_content(res, b);
    free(fixed);
}

static void block_str(mb_mcp_result *res, const char *text, int error)
{
    block(res, text, strlen(text), error);
}

/* The fork's _truncate_output: text[:max] + message, counted in code points. */
static void put_capped(mb_buf *out, const char *s, size_t n, long max, const char *msg)
{
    if (max <= 0 || (long)mb_utf8_length(s, n) <= max) {
        mb_buf_append(out, s, n);
        return;
    }
    size_t i = 0;
    for (long cps = 0; cps < max && i < n; cps++) {
        unsigned cp;
        size_t k = mb_utf8_decode((const unsigned char *)s + i, n - i, &cp);
        i += k ? k : 1;
    }
    mb_buf_append(out, s, i);
    mb_buf_puts(out, msg);
}

static int call_cancelled(void *ctx) { return mb_mcp_call_cancelled(ctx); }

/* Environment for the command: ours, plus the fork's proxy variables. */
static char **command_env(const mb_term_config *c)
{
    size_t n = 0;
    while (environ[n]) n++;
    char **env = mb_calloc(n + 5, sizeof(char *));
    size_t k = 0;
    int proxy = c->variant == MB_TERM_TOOLATHLON && c->proxy_enabled && c->proxy_url;
    static const char *const pvars[] = {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"};
    for (size_t i = 0; i < n; i++) {
        int skip = 0;
        for (size_t j = 0; proxy && j < 4; j++)
            if (!strncmp(environ[i], pvars[j], strlen(pvars[j])) &&
                environ[i][strlen(pvars[j])] == '=')
                skip = 1;
        if (!skip) env[k++] = mb_strdup(environ[i]);
    }
    for (size_t j = 0; proxy && j < 4; j++) env[k++] = mb_asprintf("%s=%s", pvars[j], c->proxy_url);
    env[k] = NULL;
    return env;
}

static int run_command(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    term_server *t = mb_mcp_call_data(call);
    mb_buf msg = {0};
    mb_buf_puts(&msg, "");
    json_t *empty = args ? NULL : json_object();
    int invalid = mb_pyschema_check(t->run_schema, args ? args : empty, &msg);
    json_decref(empty);
    if (invalid) {
        int rc = mb_mcp_fail(res, "Input validation error: %s", msg.data);
        mb_buf_free(&msg);
        return rc;
    }
    json_t *cmdv = args ? json_object_get(args, "command") : NULL;
    if (!cmdv) {
        mb_buf_free(&msg);
        block_str(res, "No command provided", 1);
        return 0;
    }
    const char *command = json_string_value(cmdv);
    mb_term_plan plan;
    if (mb_term_validate(&t->cfg, command, &plan, &msg) != MB_OK) {
        mb_buf text = {0};
        mb_buf_printf(&text, "Security violation: %s", msg.data);
        block(res, text.data, text.len, 1);
        mb_buf_free(&text), mb_buf_free(&msg);
        return 0;
    }
    mb_buf_free(&msg);

    const char *shell_argv[] = {"/bin/sh", "-c", command, NULL};
    char **env = command_env(&t->cfg);
    mb_proc_spec spec = {
        .argv = plan.use_shell ? shell_argv : (const char *const *)plan.argv,
        .envp = (const char *const *)env,
        .cwd = t->cfg.allowed_dir,
        .timeout_ms = t->cfg.timeout_s > 0 ? (int)(t->cfg.timeout_s * 1000) : -1,
        .max_output = TERM_MAX_CAPTURE,
        .watch_fd = mb_mcp_call_input_fd(call),
        .cancelled = call_cancelled,
        .ctx = call,
    };
    mb_proc_result pr;
    mb_err err = {0};
    int rc = mb_proc_run(&spec, &pr, &err);
    for (char **e = env; *e; e++) free(*e);
    free(env);
    if (rc != MB_OK) {
        mb_buf text = {0};
        mb_buf_printf(&text, "Error: Command execution failed: %s", err.msg);
        block(res, text.data, text.len, 1);
        mb_buf_free(&text);
        goto out;
    }
    if (pr.timed_out) {
        mb_buf text = {0};
        mb_buf_printf(&text, "Error: Command timed out after %ld seconds", t->cfg.timeout_s);
        block(res, text.data, text.len, 1);
        mb_buf_free(&text);
        goto done;
    }
    if (pr.spawn_errno) {
        char *os = mb_py_os_error(pr.spawn_errno, spec.argv[0]);
        mb_buf text = {0};
        mb_buf_printf(&text, "Error: Command execution failed: %s", os);
        block(res, text.data, text.len, 1);
        mb_buf_free(&text);
        free(os);
        goto done;
    }
    /* subprocess.run(text=True): strict UTF-8, stdout decoded first */
    mb_buf *streams[2] = {&pr.out, &pr.err};
    for (int i = 0; i < 2; i++) {
        mb_buf why = {0};
        if (mb_py_utf8_error(&why, streams[i]->data, streams[i]->len) >= 0) {
            mb_buf text = {0};
            mb_buf_printf(&text, "Error: Command execution failed: %s", why.data);
            block(res, text.data, text.len, 1);
            mb_buf_free(&text), mb_buf_free(&why);
            goto done;
        }
        mb_buf_free(&why);
        streams[i]->len = mb_py_universal_newlines(streams[i]->data, streams[i]->len);
    }
    for (int i = 0; i < 2; i++) {
        if (!streams[i]->len) continue;
        if (t->cfg.variant == MB_TERM_TOOLATHLON) {
            mb_buf capped = {0};
            mb_buf_puts(&capped, "");
            put_capped(&capped, streams[i]->data, streams[i]->len,
                       i == 0 ? t->cfg.max_stdout_length : t->cfg.max_stderr_length,
                       t->cfg.truncate_message);
            block(res, capped.data, capped.len, i == 1);
            mb_buf_free(&capped);
        } else {
            block(res, streams[i]->data, streams[i]->len, i == 1);
        }
    }
    {
        /* Python's returncode: negative signal number for a killed child */
        int code = pr.exited ? pr.exit_code : -pr.term_signal;
        mb_buf text = {0};
        mb_buf_printf(&text, "\nCommand completed with return code: %d", code);
        block(res, text.data, text.len, 0);
        mb_buf_free(&text);
    }
done:
    mb_proc_result_free(&pr);
out:
    mb_term_plan_dispose(&plan);
    return 0;
}

static int show_security_rules(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    term_server *t = mb_mcp_call_data(call);
    mb_buf text = {0};
    mb_buf_puts(&text, "");
    mb_term_security_rules(&t->cfg, &text);
    block(res, text.data, text.len, 0);
    mb_buf_free(&text);
    return 0;
}

static const mb_mcp_info TERM_INFO = {
    .name = "cli-mcp-server",
    .version = "0.2.1", /* what cli-mcp-server 0.2.5 (and the fork) report */
    .flavor = MB_MCP_PY_SERVER,
    .capabilities = "{\"experimental\": {}, \"tools\": {\"listChanged\": false}}",
    /* commands run as separate processes; upstream awaits them concurrently */
    .concurrent_calls = 8,
};

/* Flags override the environment variables of the same meaning. */
static int apply_flags(int argc, char **argv, mb_term_variant *variant, mb_err *err)
{
    static const struct option opts[] = {
        {"variant", required_argument, 0, 'V'},
        {"allowed-dir", required_argument, 0, 'd'},
        {"allowed-commands", required_argument, 0, 'c'},
        {"allowed-flags", required_argument, 0, 'f'},
        {"max-command-length", required_argument, 0, 'l'},
        {"command-timeout", required_argument, 0, 't'},
        {"allow-shell-operators", no_argument, 0, 's'},
        {0, 0, 0, 0},
    };
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        const char *var = NULL;
        switch (c) {
        case 'V':
            if (!strcmp(optarg, "upstream") || !strcmp(optarg, "atlas")) *variant = MB_TERM_UPSTREAM;
            else if (!strcmp(optarg, "toolathlon")) *variant = MB_TERM_TOOLATHLON;
            else
                return mb_err_set(err, MB_EINVAL,
                                  "unknown --variant \"%s\" (use upstream or toolathlon)", optarg);
            continue;
        case 'd': var = "ALLOWED_DIR"; break;
        case 'c': var = "ALLOWED_COMMANDS"; break;
        case 'f': var = "ALLOWED_FLAGS"; break;
        case 'l': var = "MAX_COMMAND_LENGTH"; break;
        case 't': var = "COMMAND_TIMEOUT"; break;
        case 's': setenv("ALLOW_SHELL_OPERATORS", "true", 1); continue;
        default:
            return mb_err_set(err, MB_EINVAL, "unknown option \"%s\"", argv[optind - 1]);
        }
        setenv(var, optarg, 1);
    }
    if (optind < argc)
        return mb_err_set(err, MB_EINVAL, "unexpected argument \"%s\"", argv[optind]);
    return MB_OK;
}

int mb_srv_terminal_create(int argc, char **argv, mb_mcp_server **out, mb_err *err)
{
    *out = NULL;
    mb_term_variant variant = MB_TERM_UPSTREAM;
    int rc = apply_flags(argc, argv, &variant, err);
    if (rc) return rc;
    term_server *t = mb_calloc(1, sizeof *t);
    if ((rc = mb_term_config_load(&t->cfg, variant, NULL, err))) {
        free(t);
        return rc == MB_EINVAL ? MB_EIO : rc; /* a start-up failure, not a usage error */
    }
    mb_buf d = {0};
    mb_buf_puts(&d, "");
    mb_term_describe(&t->cfg, &d);
    t->run_description = mb_buf_steal(&d);
    t->run_schema = json_loads(RUN_SCHEMA, 0, NULL);
    t->tools[0] = (mb_mcp_tool){.name = "run_command",
                                .description = t->run_description,
                                .input_schema = RUN_SCHEMA,
                                .fn = run_command};
    t->tools[1] = (mb_mcp_tool){
        .name = "show_security_rules",
        .description = "Show what commands and operations are allowed in this environment.\n",
        .input_schema = RULES_SCHEMA,
        .fn = show_security_rules};
    return mb_mcp_server_new_with_tools(&TERM_INFO, t->tools, t, term_free, out, err);
}
