/*
 * policy.c - the terminal server's security configuration and command validation
 * (cli-mcp-server's SecurityConfig, CommandExecutor.validate_command and friends).
 */
#include "servers/terminal/terminal.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "servers/common/pyfmt.h"

static const char *const SHELL_OPS[] = {"&&", "||", "|", ">", ">>", "<", "<<", ";"};
#define NSHELL_OPS (sizeof SHELL_OPS / sizeof SHELL_OPS[0])

static const char *env_default(const char *(*get)(const char *), const char *name,
                               const char *dflt)
{
    const char *v = get(name);
    return v ? v : dflt;
}

static const char *real_getenv(const char *name) { return getenv(name); }

/* Python's set(s.split(",")), keeping first-seen order. */
static char **split_set(const char *s)
{
    size_t cap = 8, n = 0;
    char **v = mb_calloc(cap, sizeof(char *));
    const char *p = s;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        int dup = 0;
        for (size_t i = 0; i < n; i++)
            if (strlen(v[i]) == len && memcmp(v[i], p, len) == 0) dup = 1;
        if (!dup) {
            if (n + 2 > cap) {
                cap *= 2;
                v = mb_realloc(v, cap * sizeof(char *));
            }
            v[n++] = mb_strndup(p, len);
            v[n] = NULL;
        }
        if (!comma) break;
        p = comma + 1;
    }
    return v;
}

static int in_set(char **set, const char *s)
{
    for (; set && *set; set++)
        if (strcmp(*set, s) == 0) return 1;
    return 0;
}

/* int(value) as Python parses it (surrounding whitespace, sign, digits, '_'). */
static int py_int(const char *s, long *out)
{
    while (isspace((unsigned char)*s)) s++;
    char buf[64];
    size_t n = 0;
    if (*s == '+' || *s == '-') buf[n++] = *s++;
    int digits = 0;
    for (; *s && n < sizeof buf - 1; s++) {
        if (isdigit((unsigned char)*s)) buf[n++] = *s, digits++;
        else if (*s == '_' && digits && isdigit((unsigned char)s[1])) continue;
        else break;
    }
    while (isspace((unsigned char)*s)) s++;
    if (!digits || *s) return -1;
    buf[n] = '\0';
    errno = 0;
    *out = strtol(buf, NULL, 10);
    return errno ? -1 : 0;
}

static int load_int(const char *(*get)(const char *), const char *name, long dflt, int lenient,
                    long *out, mb_err *err)
{
    const char *v = get(name);
    if (!v) {
        *out = dflt;
        return MB_OK;
    }
    long x;
    if (py_int(v, &x) != 0) {
        if (lenient) {
            *out = dflt;
            return MB_OK;
        }
        return mb_err_set(err, MB_EINVAL, "%s=\"%s\": invalid literal for int() with base 10: '%s'",
                          name, v, v);
    }
    *out = (lenient && x <= 0) ? dflt : x;
    return MB_OK;
}

int mb_term_config_load(mb_term_config *c, mb_term_variant variant,
                        const char *(*getenv_fn)(const char *name), mb_err *err)
{
    memset(c, 0, sizeof *c);
    const char *(*get)(const char *) = getenv_fn ? getenv_fn : real_getenv;
    c->variant = variant;
    const char *dir = env_default(get, "ALLOWED_DIR", "");
    struct stat st;
    if (!*dir || stat(dir, &st) != 0)
        return mb_err_set(err, MB_EINVAL,
                          "Valid ALLOWED_DIR is required (set ALLOWED_DIR or --allowed-dir to an "
                          "existing directory; got \"%s\")",
                          dir);
    char *abs = dir[0] == '/' ? mb_strdup(dir) : NULL;
    if (!abs) {
        char cwd[4096];
        abs = mb_asprintf("%s/%s", getcwd(cwd, sizeof cwd) ? cwd : "", dir);
    }
    c->allowed_dir = mb_term_realpath(abs);
    free(abs);

    const char *cmds = env_default(get, "ALLOWED_COMMANDS", "ls,cat,pwd");
    const char *flags = env_default(get, "ALLOWED_FLAGS", "-l,-a,--help");
    const char *ops = env_default(get, "ALLOW_SHELL_OPERATORS", "false");
    c->all_commands = strcasecmp(cmds, "all") == 0;
    c->all_flags = strcasecmp(flags, "all") == 0;
    c->shell_operators = strcasecmp(ops, "true") == 0 || strcmp(ops, "1") == 0;
    c->commands = c->all_commands ? mb_calloc(1, sizeof(char *)) : split_set(cmds);
    c->flags = c->all_flags ? mb_calloc(1, sizeof(char *)) : split_set(flags);

    int lenient = variant == MB_TERM_TOOLATHLON;
    int rc;
    if ((rc = load_int(get, "MAX_COMMAND_LENGTH", 1024, lenient, &c->max_command_length, err)) ||
        (rc = load_int(get, "COMMAND_TIMEOUT", 30, lenient, &c->timeout_s, err)))
        goto fail;
    if (variant == MB_TERM_TOOLATHLON) {
        load_int(get, "MAX_OUTPUT_LENGTH", 10240, 1, &c->max_output_length, NULL);
        load_int(get, "MAX_STDOUT_LENGTH", 8192, 1, &c->max_stdout_length, NULL);
        load_int(get, "MAX_STDERR_LENGTH", 2048, 1, &c->max_stderr_length, NULL);
        c->truncate_message =
            mb_strdup(env_default(get, "OUTPUT_TRUNCATE_MESSAGE", "...[output truncated]"));
        const char *purl = get("CLI_PROXY_URL");
        if (!purl || !*purl) purl = get("HTTP_PROXY");
        c->proxy_url = purl && *purl ? mb_strdup(purl) : NULL;
        const char *pe = env_default(get, "CLI_PROXY_ENABLED", "false");
        c->proxy_enabled = strcasecmp(pe, "true") == 0 || strcmp(pe, "1") == 0;
    }
    return MB_OK;
fail:
    mb_term_config_dispose(c);
    return rc;
}

void mb_term_config_dispose(mb_term_config *c)
{
    if (!c) return;
    free(c->allowed_dir);
    mb_term_strv_free(c->commands);
    mb_term_strv_free(c->flags);
    free(c->truncate_message);
    free(c->proxy_url);
    memset(c, 0, sizeof *c);
}

void mb_term_plan_dispose(mb_term_plan *plan)
{
    if (!plan) return;
    mb_term_strv_free(plan->argv);
    plan->argv = NULL;
    plan->use_shell = 0;
}

/* ------------------------------------------------------------- paths */

static int inside(const char *real, const char *root)
{
    size_t n = strlen(root);
    if (strcmp(root, "/") == 0) return 1;
    return strncmp(real, root, n) == 0 && (real[n] == '\0' || real[n] == '/');
}

/* _normalize_path: the resolved path, or NULL with the refusal in errmsg. */
static char *normalize_path(const mb_term_config *c, const char *arg, mb_buf *errmsg)
{
    char *joined = arg[0] == '/' ? mb_strdup(arg) : mb_asprintf("%s/%s", c->allowed_dir, arg);
    char *real = mb_term_realpath(joined);
    free(joined);
    if (!inside(real, c->allowed_dir)) {
        mb_buf_printf(errmsg, "Path '%s' is outside of allowed directory: %s", arg, c->allowed_dir);
        free(real);
        return NULL;
    }
    return real;
}

static int is_url(const char *s)
{
    return strncmp(s, "http://", 7) == 0 || strncmp(s, "https://", 8) == 0;
}

static int exists_in_dir(const mb_term_config *c, const char *arg)
{
    char *p = mb_asprintf("%s/%s", c->allowed_dir, arg);
    struct stat st;
    int ok = stat(p, &st) == 0;
    free(p);
    return ok;
}

/* mcpbox hardening: a bare argument naming a symlink in ALLOWED_DIR that
 * resolves outside it. */
static int bare_link_escapes(const mb_term_config *c, const char *arg)
{
    if (strchr(arg, '/') || !*arg) return 0;
    char *p = mb_asprintf("%s/%s", c->allowed_dir, arg);
    struct stat st;
    int escapes = 0;
    if (lstat(p, &st) == 0 && S_ISLNK(st.st_mode)) {
        char *real = mb_term_realpath(p);
        escapes = !inside(real, c->allowed_dir);
        free(real);
    }
    free(p);
    return escapes;
}

/* _validate_single_command */
static int validate_single(const mb_term_config *c, const char *cmd, char ***argv_out,
                           mb_buf *errmsg)
{
    char **parts = NULL;
    mb_buf shlex_err = {0};
    if (mb_term_shlex_split(cmd, &parts, &shlex_err) != MB_OK) {
        mb_buf_printf(errmsg, "Invalid command format: %s", shlex_err.data);
        mb_buf_free(&shlex_err);
        return MB_EDENIED;
    }
    mb_buf_free(&shlex_err);
    if (!parts[0]) {
        mb_buf_puts(errmsg, "Empty command");
        mb_term_strv_free(parts);
        return MB_EDENIED;
    }
    if (!c->all_commands && !in_set(c->commands, parts[0])) {
        mb_buf_printf(errmsg, "Command '%s' is not allowed", parts[0]);
        mb_term_strv_free(parts);
        return MB_EDENIED;
    }
    for (char **a = parts + 1; *a; a++) {
        const char *arg = *a;
        if (arg[0] == '-') {
            if (!c->all_flags && !in_set(c->flags, arg)) {
                mb_buf_printf(errmsg, "Flag '%s' is not allowed", arg);
                mb_term_strv_free(parts);
                return MB_EDENIED;
            }
            continue;
        }
        int explicit_path = ((strncmp(arg, "./", 2) == 0 || strncmp(arg, "../", 3) == 0 ||
                              arg[0] == '/') &&
                             strncmp(arg, "//", 2) != 0) ||
                            strcmp(arg, ".") == 0 ||
                            strcmp(arg, "..") == 0; /* mcpbox: upstream lets a bare ".." through */
        if (explicit_path || (strchr(arg, '/') && exists_in_dir(c, arg))) {
            if (is_url(arg)) continue;
            char *real = normalize_path(c, arg, errmsg);
            if (!real) {
                mb_term_strv_free(parts);
                return MB_EDENIED;
            }
            free(*a);
            *a = real;
        } else if (bare_link_escapes(c, arg)) {
            mb_buf_printf(errmsg, "Path '%s' is outside of allowed directory: %s", arg,
                          c->allowed_dir);
            mb_term_strv_free(parts);
            return MB_EDENIED;
        }
    }
    *argv_out = parts;
    return MB_OK;
}

static int is_op(const char *s)
{
    for (size_t i = 0; i < NSHELL_OPS; i++)
        if (strcmp(s, SHELL_OPS[i]) == 0) return 1;
    return 0;
}

static char *strip_dup(const char *s, size_t n)
{
    while (n && isspace((unsigned char)*s)) s++, n--;
    while (n && isspace((unsigned char)s[n - 1])) n--;
    return mb_strndup(s, n);
}

/* re.split("(&&|\|\||\||>|>>|<|<<|;)", s) with parts stripped and empties
 * dropped; the regex alternation makes ">>" and "<<" come out as two tokens. */
static char **split_operators(const char *s)
{
    size_t cap = 8, n = 0;
    char **v = mb_calloc(cap, sizeof(char *));
    const char *start = s;
    for (const char *p = s;;) {
        size_t oplen = 0;
        if (*p == '&' && p[1] == '&') oplen = 2;
        else if (*p == '|' && p[1] == '|') oplen = 2;
        else if (*p == '|' || *p == '>' || *p == '<' || *p == ';') oplen = 1;
        if (oplen || !*p) {
            char *piece = strip_dup(start, (size_t)(p - start));
            char *items[2] = {piece, oplen ? mb_strndup(p, oplen) : NULL};
            for (int k = 0; k < 2; k++) {
                if (!items[k]) continue;
                if (!*items[k]) {
                    free(items[k]);
                    continue;
                }
                if (n + 2 > cap) {
                    cap *= 2;
                    v = mb_realloc(v, cap * sizeof(char *));
                }
                v[n++] = items[k];
                v[n] = NULL;
            }
            if (!*p) break;
            p += oplen;
            start = p;
            continue;
        }
        p++;
    }
    return v;
}

static int validate_with_operators(const mb_term_config *c, const char *command, mb_buf *errmsg)
{
    char **parts = split_operators(command);
    size_t n = 0;
    while (parts[n]) n++;
    int rc = MB_OK;
    if (c->variant == MB_TERM_UPSTREAM) {
        /* group commands and operators exactly as 0.2.5 does */
        for (size_t i = 0; i < n && rc == MB_OK;) {
            const char *cmd = NULL;
            if (i + 1 < n && is_op(parts[i + 1])) {
                cmd = parts[i];
                i += 2;
            } else {
                if (!is_op(parts[i])) cmd = parts[i];
                i += 1;
            }
            if (!cmd) continue;
            char **argv = NULL;
            mb_buf inner = {0};
            mb_buf_puts(&inner, "");
            if (validate_single(c, cmd, &argv, &inner) != MB_OK) {
                mb_buf_printf(errmsg, "Invalid command part '%s': %s", cmd, inner.data);
                rc = MB_EDENIED;
            }
            mb_buf_free(&inner);
            mb_term_strv_free(argv);
        }
    } else {
        /* lockon-n fork: a part after a redirection is a file name, checked as a path */
        for (size_t i = 0; i < n && rc == MB_OK; i++) {
            if (is_op(parts[i])) continue;
            int filename = i > 0 && (strcmp(parts[i - 1], ">") == 0 ||
                                     strcmp(parts[i - 1], ">>") == 0 ||
                                     strcmp(parts[i - 1], "<") == 0 ||
                                     strcmp(parts[i - 1], "<<") == 0);
            mb_buf inner = {0};
            mb_buf_puts(&inner, "");
            if (!filename) {
                char **argv = NULL;
                if (validate_single(c, parts[i], &argv, &inner) != MB_OK) {
                    mb_buf_printf(errmsg, "Invalid command part '%s': %s", parts[i], inner.data);
                    rc = MB_EDENIED;
                }
                mb_term_strv_free(argv);
            } else if (!is_url(parts[i])) {
                char *real = normalize_path(c, parts[i], &inner);
                if (!real) {
                    mb_buf_printf(errmsg, "Invalid file path '%s': %s", parts[i], inner.data);
                    rc = MB_EDENIED;
                }
                free(real);
            }
            mb_buf_free(&inner);
        }
    }
    mb_term_strv_free(parts);
    return rc;
}

int mb_term_validate(const mb_term_config *c, const char *command, mb_term_plan *plan,
                     mb_buf *errmsg)
{
    memset(plan, 0, sizeof *plan);
    if ((long)mb_utf8_length(command, strlen(command)) > c->max_command_length) {
        mb_buf_printf(errmsg, "Command exceeds maximum length of %ld", c->max_command_length);
        return MB_EDENIED;
    }
    const char *first_op = NULL;
    for (size_t i = 0; i < NSHELL_OPS && !first_op; i++)
        if (strstr(command, SHELL_OPS[i])) first_op = SHELL_OPS[i];
    if (first_op) {
        if (!c->shell_operators) {
            mb_buf_printf(errmsg,
                          "Shell operator '%s' is not supported. Set ALLOW_SHELL_OPERATORS=true to "
                          "enable.",
                          first_op);
            return MB_EDENIED;
        }
        int rc = validate_with_operators(c, command, errmsg);
        if (rc == MB_OK) plan->use_shell = 1;
        return rc;
    }
    return validate_single(c, command, &plan->argv, errmsg);
}

/* ------------------------------------------------------------- texts */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void join_list(mb_buf *out, char **set, int sorted)
{
    size_t n = 0;
    while (set[n]) n++;
    char **copy = mb_calloc(n + 1, sizeof(char *));
    memcpy(copy, set, n * sizeof(char *));
    if (sorted) qsort(copy, n, sizeof(char *), cmp_str);
    for (size_t i = 0; i < n; i++) mb_buf_printf(out, "%s%s", i ? ", " : "", copy[i]);
    free(copy);
}

void mb_term_describe(const mb_term_config *c, mb_buf *out)
{
    /* upstream sorts; the fork prints the set in iteration order (we use the
     * order of the environment variable, which is stable) */
    int sorted = c->variant == MB_TERM_UPSTREAM;
    mb_buf_printf(out, "Allows command (CLI) execution in the directory: %s\n\n", c->allowed_dir);
    mb_buf_puts(out, "Available commands: ");
    if (c->all_commands) mb_buf_puts(out, "all commands");
    else join_list(out, c->commands, sorted);
    mb_buf_puts(out, "\nAvailable flags: ");
    if (c->all_flags) mb_buf_puts(out, "all flags");
    else join_list(out, c->flags, sorted);
    mb_buf_printf(out,
                  "\n\nShell operators (&&, ||, |, >, >>, <, <<, ;) are %s. Set "
                  "ALLOW_SHELL_OPERATORS=true to enable.",
                  c->shell_operators ? "supported" : "not supported");
}

void mb_term_security_rules(const mb_term_config *c, mb_buf *out)
{
    mb_buf_puts(out, "Security Configuration:\n==================\n");
    mb_buf_printf(out, "Working Directory: %s\n", c->allowed_dir);
    mb_buf_puts(out, "\nAllowed Commands:\n----------------\n");
    if (c->all_commands) mb_buf_puts(out, "All commands allowed");
    else join_list(out, c->commands, 1);
    mb_buf_puts(out, "\n\nAllowed Flags:\n-------------\n");
    if (c->all_flags) mb_buf_puts(out, "All flags allowed");
    else join_list(out, c->flags, 1);
    mb_buf_puts(out, "\n\nSecurity Limits:\n---------------\n");
    mb_buf_printf(out, "Max Command Length: %ld characters\n", c->max_command_length);
    mb_buf_printf(out, "Command Timeout: %ld seconds\n", c->timeout_s);
    if (c->variant == MB_TERM_TOOLATHLON) {
        mb_buf_printf(out, "Max Stdout Length: %ld characters\n", c->max_stdout_length);
        mb_buf_printf(out, "Max Stderr Length: %ld characters\n", c->max_stderr_length);
        mb_buf_printf(out, "Shell Operators: %s\n", c->shell_operators ? "Enabled" : "Disabled");
        mb_buf_puts(out, "\nProxy Configuration:\n-------------------\n");
        mb_buf_printf(out, "Proxy Enabled: %s\n", c->proxy_enabled ? "Yes" : "No");
        mb_buf_printf(out, "Proxy URL: %s\n", c->proxy_url ? c->proxy_url : "Not configured");
        mb_buf_puts(out, "\nOutput Settings:\n---------------\n");
        mb_buf_printf(out, "Truncate Message: %s\n", c->truncate_message);
    }
}
