/*
 * terminal.h - internals of the native `terminal` server (cli-mcp-server semantics).
 *
 * The server mirrors cli-mcp-server 0.2.5 (MladenSU) as MCP-Atlas runs it, and the
 * lockon-n fork Toolathlon runs (output caps, redirection-aware validation, longer
 * security report). A command string goes through three steps, each with the
 * upstream's texts:
 *
 *   1. length check (code points, MAX_COMMAND_LENGTH);
 *   2. validation: shell operators (&& || | > >> < << ;) found anywhere in the
 *      string are refused unless ALLOW_SHELL_OPERATORS, in which case the string
 *      is cut at them and every part is validated; a part is split like Python's
 *      shlex.split, its command must be allowed, its flags ("-...") must be
 *      allowed, and every path-like argument must resolve (symlinks followed)
 *      inside ALLOWED_DIR - such arguments are replaced by their resolved path;
 *   3. execution in ALLOWED_DIR: fork/exec of the validated argv, or /bin/sh -c of
 *      the original string when it contains shell operators, with a timeout.
 *
 * Differences from upstream, on purpose (docs/servers/terminal.md): the "inside
 * ALLOWED_DIR" test compares path components rather than string prefixes
 * (/data2 is not inside /data), and a bare argument naming a symlink in
 * ALLOWED_DIR that leads outside it is refused too.
 */
#ifndef MB_SERVERS_TERMINAL_H
#define MB_SERVERS_TERMINAL_H

#include <stddef.h>

#include "util/util.h"

typedef enum mb_term_variant {
    MB_TERM_UPSTREAM = 0,  /* cli-mcp-server 0.2.5 */
    MB_TERM_TOOLATHLON = 1 /* lockon-n/cli-mcp-server fork */
} mb_term_variant;

typedef struct mb_term_config {
    mb_term_variant variant;
    char *allowed_dir;   /* realpath of ALLOWED_DIR */
    char **commands;     /* allowed commands, env order, duplicates removed; NULL-terminated */
    char **flags;        /* allowed flags, same */
    int all_commands;    /* ALLOWED_COMMANDS=all (any case) */
    int all_flags;       /* ALLOWED_FLAGS=all */
    int shell_operators; /* ALLOW_SHELL_OPERATORS true/1 */
    long max_command_length;
    long timeout_s;
    /* fork only */
    long max_output_length, max_stdout_length, max_stderr_length;
    char *truncate_message;
    int proxy_enabled;
    char *proxy_url;     /* CLI_PROXY_URL or HTTP_PROXY, may be NULL */
} mb_term_config;

/* Settings from the environment exactly as upstream reads them (ALLOWED_DIR,
 * ALLOWED_COMMANDS, ALLOWED_FLAGS, MAX_COMMAND_LENGTH, COMMAND_TIMEOUT,
 * ALLOW_SHELL_OPERATORS, and for the fork MAX_OUTPUT_LENGTH, MAX_STDOUT_LENGTH,
 * MAX_STDERR_LENGTH, OUTPUT_TRUNCATE_MESSAGE, CLI_PROXY_ENABLED, CLI_PROXY_URL,
 * HTTP_PROXY). `getenv_fn` lets tests supply their own environment (NULL = getenv).
 * Fails with MB_EINVAL and upstream's message when ALLOWED_DIR is missing. */
int mb_term_config_load(mb_term_config *c, mb_term_variant variant,
                        const char *(*getenv_fn)(const char *name), mb_err *err);
void mb_term_config_dispose(mb_term_config *c);

/* Python shlex.split(s) (POSIX mode, no comments). On success *out is a
 * NULL-terminated vector owned by the caller (free with mb_term_strv_free).
 * On error returns MB_EINVAL with "No closing quotation" or "No escaped character". */
int mb_term_shlex_split(const char *s, char ***out, mb_buf *errmsg);
void mb_term_strv_free(char **v);

/* posixpath.realpath(path, strict=False) for an absolute path: symlinks of the
 * existing prefix resolved, the rest normalised lexically. Caller frees. */
char *mb_term_realpath(const char *abs_path);

/* What to run after validation. */
typedef struct mb_term_plan {
    int use_shell;  /* run `/bin/sh -c <command string>` */
    char **argv;    /* otherwise: the validated argv (NULL-terminated) */
} mb_term_plan;

/* Steps 1 and 2 above. On refusal returns MB_EDENIED with the text that follows
 * "Security violation: " in upstream's reply. */
int mb_term_validate(const mb_term_config *c, const char *command, mb_term_plan *plan,
                     mb_buf *errmsg);
void mb_term_plan_dispose(mb_term_plan *plan);

/* The `run_command` tool description and the `show_security_rules` text. */
void mb_term_describe(const mb_term_config *c, mb_buf *out);
void mb_term_security_rules(const mb_term_config *c, mb_buf *out);

#endif /* MB_SERVERS_TERMINAL_H */
