/*
 * git.h - internals of the native `git` server (mcp-server-git semantics).
 *
 * mcp-server-git is a thin layer over GitPython; its replies are GitPython's
 * output formatted with Python f-strings. This server runs the git CLI (the one
 * in the sandbox root) for every operation and reproduces what GitPython would
 * have printed: the "Commit: '<sha>'" / "Author: <git.Actor ...>" reprs, raw
 * git output with one trailing newline stripped, and GitCommandError texts
 * ("Cmd('git') failed due to: exit code(128)\n  cmdline: git ...").
 *
 * Two tool sets, chosen with --upstream-version:
 *   2025.1.14  11 tools (Toolathlon): no context_lines, plain str() formatting
 *   2025.7.1   13 tools (MCP-Atlas): + git_init, git_branch, context_lines, !r
 *
 * repo_path is confined to the allowed roots (--repository, repeatable; default
 * /data) after symlink resolution, with the text later upstream versions use:
 * "Repository path '<p>' is outside the allowed repository '<root>'".
 */
#ifndef MB_SERVERS_GIT_H
#define MB_SERVERS_GIT_H

#include <jansson.h>

#include "util/util.h"

typedef enum mb_git_version {
    MB_GIT_2025_1_14 = 0,
    MB_GIT_2025_7_1 = 1,
} mb_git_version;

typedef struct mb_git_server {
    mb_git_version version;
    char **roots;       /* allowed roots (realpath), NULL-terminated */
    char **root_args;   /* the same as given on the command line, for messages */
    int call_timeout_ms;/* per git invocation (default 120 s) */
} mb_git_server;

typedef struct mb_git_tool {
    const char *name;
    const char *description;
    const char *schema; /* JSON text, as pydantic's model_json_schema() prints it */
} mb_git_tool;

/* The tools of the configured version, in upstream's list order; *n set. */
const mb_git_tool *mb_git_tools(mb_git_version v, size_t *n);

/* Parses "2025.1.14" / "2025.7.1". */
int mb_git_version_parse(const char *s, mb_git_version *out);

/* Runs tool `name` with validated `args`. The reply text is appended to `text`;
 * returns 1 when upstream would answer isError (an exception), 0 otherwise. */
int mb_git_call(const mb_git_server *g, const char *name, json_t *args, mb_buf *text);

#endif /* MB_SERVERS_GIT_H */
