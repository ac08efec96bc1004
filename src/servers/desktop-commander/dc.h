/*
 * dc.h - private face of the desktop-commander server (src/servers/desktop-commander),
 * a native reproduction of @wonderwhy-er/desktop-commander 0.2.7.
 *
 * Files:
 *   server.c   start-up options, the tools/call dispatcher with upstream's usage
 *              statistics, the config/usage/feedback tools
 *   tools.c    the 21 tools of 0.2.7's tools/list
 *   config.c   the config object (~/.claude-server-commander/config.json)
 *   paths.c    validatePath: allowedDirectories, ~, realpath
 *   files.c    read_file, read_multiple_files, write_file, create_directory,
 *              list_directory, move_file, search_files, get_file_info
 *   edit.c     edit_block with the exact/fuzzy search and its texts
 *   search.c   search_code through ripgrep (--json), with upstream's fallback
 *   procs.c    start_process, read_process_output, interact_with_process,
 *              force_terminate, list_sessions, list_processes, kill_process:
 *              long-lived children shared by every MCP session of the process
 *   detect.c   prompt / completion detection and output cleaning of 0.2.7
 *
 * Threads: tools/call runs on up to DC_WORKERS worker threads (a REPL read
 * must not hold up other sessions), so the config sits behind dc->lock and
 * the process table behind its own lock.
 */
#ifndef MB_SERVERS_DC_H
#define MB_SERVERS_DC_H

#include <jansson.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "mcp/mcp.h"

#define DC_VERSION "0.2.7"
#define DC_WORKERS 8

typedef struct dc_procs dc_procs;

typedef struct dc_server {
    pthread_mutex_t lock;   /* config, client, usage session */
    json_t *config;         /* upstream's config object, key order kept */
    char *config_path;      /* NULL: in memory only (the directory could not be made) */
    char *home;             /* $HOME as upstream's os.homedir() sees it (and shows) */
    char *state;            /* where upstream's two ~ folders are kept: home, or --state-dir */
    char *client_name, *client_version; /* currentClient */
    int64_t session_last_ms; /* usage session: last activity (0 = none yet) */
    long session_cmds;
    dc_procs *procs;
} dc_server;

/* What a tool implementation reports: 0 = success, 1 = isError result. */
typedef int (*dc_impl)(dc_server *dc, mb_mcp_call *call, json_t *args, mb_mcp_result *res);

extern const mb_mcp_tool dc_tools[];
int dc_call(mb_mcp_call *call, json_t *args, mb_mcp_result *res);

/* "Error: <msg>" with isError (upstream's createErrorResponse); returns 1. */
int dc_error(mb_mcp_result *res, const char *msg);
int dc_errorf(mb_mcp_result *res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Checks args with zod 3 (Schema.parse): on failure writes "Error: <ZodError>"
 * and returns 1. `tool` is the registered tool whose schema applies. */
int dc_parse(const char *tool, json_t *args, mb_mcp_result *res);
/* The same, with the prefix "Error: Invalid arguments for TOOL: " (safeParse). */
int dc_safe_parse(const char *tool, json_t *args, mb_mcp_result *res);

/* ------------------------------------------------------------ config.c */
/* state_dir: NULL to keep upstream's folders under $HOME. */
int dc_config_init(dc_server *dc, char *const *allowed, size_t nallowed, const char *state_dir,
                   mb_err *err);
/* Writes the config file (fs.writeFile; *why: Node's text). dc->lock held. */
int dc_config_save_locked(dc_server *dc, char **why);
/* A deep copy of the config (caller decrefs). */
json_t *dc_config_copy(dc_server *dc);
/* config[key] = value (stolen) and saved; -1 with *why when the file could
 * not be written (the value stays in memory, as upstream). */
int dc_config_set(dc_server *dc, const char *key, json_t *value, char **why);
/* Integer config value with a default (`?? def`). */
double dc_config_num(dc_server *dc, const char *key, double def);
/* Upstream's usageTracker.trackSuccess / trackFailure. */
void dc_usage_track(dc_server *dc, const char *tool, int failed);
/* The usage stats object (copy; defaults when absent). */
json_t *dc_usage_stats(dc_server *dc);

/* ------------------------------------------------------------- paths.c */
/* validatePath: 0 with *out (caller frees) or -1 with *why (caller frees). */
int dc_validate_path(dc_server *dc, const char *requested, char **out, char **why);
/* The allowed directories joined by ", " (caller frees). */
char *dc_allowed_joined(dc_server *dc);

/* --------------------------------------------------------- tool files */
int dc_read_file(dc_server *, mb_mcp_call *, json_t *, mb_mcp_result *);
int dc_read_multiple_files(dc_server *, mb_mcp_call *, json_t *, mb_mcp_result *);
int dc_write_file(dc_server *, mb_mcp_call *, json_t *, mb_mcp_result *);
int dc_create_directory(dc_server *, mb_mcp_call *, json_t *, mb_mcp_result *);
int dc_list_directory(dc_server *, mb_mcp_call *, json_t *, mb_mcp_result *);
int dc_move_file(dc_server *, mb_mcp_call *, json_t *, mb_mcp_result *);
int dc_search_files(dc_server *, mb_mcp_call *, json_t *, mb_mcp_result *);
int dc_get_file_info(dc_server *, mb_mcp_call *, json_t *, mb_mcp_result *);
int dc_edit_block(dc_server *, mb_mcp_call *, json_t *, mb_mcp_result *);
int dc_search_code(dc_server *, mb_mcp_call *, json_t *, mb_mcp_result *);
int dc_start_process(dc_server *, mb_mcp_call *, json_t *, mb_mcp_result *);
int dc_read_process_output(dc_server *, mb_mcp_call *, json_t *, mb_mcp_result *);
int dc_interact_with_process(dc_server *, mb_mcp_call *, json_t *, mb_mcp_result *);
int dc_force_terminate(dc_server *, mb_mcp_call *, json_t *, mb_mcp_result *);
int dc_list_sessions(dc_server *, mb_mcp_call *, json_t *, mb_mcp_result *);
int dc_list_processes(dc_server *, mb_mcp_call *, json_t *, mb_mcp_result *);
int dc_kill_process(dc_server *, mb_mcp_call *, json_t *, mb_mcp_result *);

/* ------------------------------------------------------------- files.c */
/* Reads a file the way readFileFromDisk does (header + lines), for
 * read_file and read_multiple_files: 0 with *text, *mime and *is_image,
 * or -1 with *why. */
int dc_read_disk(dc_server *dc, const char *requested, double offset, double length,
                 char **text, size_t *len, const char **mime, int *is_image, char **why);
const char *dc_mime_type(const char *path);
/* fs.readFile: 0 with *data (NUL-terminated), or -1 with *why (Node's text). */
int dc_slurp(const char *path, char **data, size_t *len, char **why);
/* fs.writeFile / fs.appendFile of len bytes: 0, or -1 with *why. */
int dc_write_bytes(const char *path, const char *data, size_t len, int append, char **why);

/* ------------------------------------------------------------- procs.c */
dc_procs *dc_procs_new(void);
void dc_procs_free(dc_procs *p); /* kills what still runs */

/* ------------------------------------------------------------ detect.c */
typedef struct dc_state {
    int waiting, finished;
    const char *prompt; /* static, NULL if none */
} dc_state;
void dc_analyze(const char *out, size_t len, dc_state *st);
/* The quick prompt check on one chunk: it ends in >, $ or # (and spaces). */
int dc_quick_prompt(const char *s, size_t len);
/* cleanProcessOutput(output, input) (caller frees). */
char *dc_clean_output(const char *out, const char *input);
/* formatProcessStateMessage (caller frees). */
char *dc_state_message(const dc_state *st, long pid);
/* JavaScript String#trim of s: the trimmed span. */
void dc_trim(const char *s, size_t len, size_t *off, size_t *n);

#endif /* MB_SERVERS_DC_H */
