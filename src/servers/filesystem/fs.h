/*
 * fs.h - internals of the `filesystem` server, a native twin of
 * @modelcontextprotocol/server-filesystem: the upstream versions it can be
 * (fs_version, chosen with --upstream-version), shared state, the tool
 * handlers (one file per family) and the helpers they share.
 *
 * One set of handlers serves every version; what differs between versions
 * is data in fs_version (tools.c), which the handlers consult.
 *
 * Every handler resolves its paths with fs_resolve() (upstream's
 * validatePath of the chosen version) before touching the disk, and reports
 * system errors with Node's texts (mb_node_fs_error), because upstream lets
 * Node's exceptions through as the tool's error text. Handlers fail with
 * fs_fail(), never mb_mcp_fail() directly, so that each version's way of
 * reporting a thrown error is kept.
 */
#ifndef MB_SERVERS_FS_H
#define MB_SERVERS_FS_H

#include "mcp/mcp.h"

/* How one upstream version looks and behaves. */
typedef struct fs_version {
    const char *name;          /* "2026.7.10" */
    const mb_mcp_info *info;   /* serverInfo, SDK flavor, capabilities */
    const mb_mcp_tool *tools;  /* tools/list in upstream's order, {0}-terminated */
    /* A low-level SDK Server whose one handler catches everything: arguments
     * are checked with zod 3 ("Invalid arguments for T: [issues]") and every
     * failure becomes an isError result "Error: <message>". Else the SDK's
     * McpServer.registerTool (the framework's MB_MCP_TS_MCPSERVER flavor). */
    int catch_all;
    const char *const *unchecked; /* catch_all: tools whose arguments are not parsed */
    int structured;          /* results carry structuredContent {content} */
    int roots_relative;      /* relative paths are tried against the allowed
                              * directories; else taken from the working directory */
    int roots_realpath_only; /* start-up: every directory must exist and is kept
                              * as its realpath only (else both, missing ones skipped) */
    int glob_search;         /* search_files: a glob over relative paths; else a
                              * case-insensitive substring of entry names */
    int tree_excludes;       /* directory_tree takes excludePatterns */
    int replace_literal;     /* edit_file inserts newText as is; else String#replace's
                              * $$, $&, $` and $' patterns apply */
    int jsdiff;              /* jsdiff major version the diff mirrors: 5 or 8 */
    int size_units_clamped;  /* formatSize stops at TB; else "undefined" beyond */
    int media_blob;          /* read_media_file: other files as {type:"blob", data,
                              * mimeType}; else as an embedded resource */
} fs_version;

/* The version called `name` (NULL: the newest), or NULL if unknown. */
const fs_version *fs_version_find(const char *name);
/* Its tools/list table ({0}-terminated, static). Not thread-safe the first
 * time for 2025.11.25 (made at server start). */
const mb_mcp_tool *fs_version_tools(const fs_version *v);
/* "2026.7.10, 2025.7.1" (caller frees). */
char *fs_version_list(void);

typedef struct fs_server {
    const fs_version *v;
    mb_mcp_roots *roots;
    /* catch_all versions: the registered copies of v->tools (fn replaced by
     * the checking wrapper) and their parsed input schemas (NULL: unchecked). */
    mb_mcp_tool *tools;
    json_t **schemas;
    size_t ntools;
} fs_server;

/* Fails the call the way the version reports a thrown Error(msg); returns
 * MB_MCP_FAILED (return it). */
int fs_fail(mb_mcp_call *call, mb_mcp_result *res, const char *msg);
int fs_failf(mb_mcp_call *call, mb_mcp_result *res, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Resolves a path under the roots. On refusal fails the call and returns
 * MB_MCP_FAILED (return it); on success *out is the path (caller frees). */
int fs_resolve(mb_mcp_call *call, mb_mcp_result *res, const char *path, char **out);
/* The same without failing the call: 0, or an error code with *why set to
 * upstream's text (caller frees). */
int fs_validate_path(const fs_server *fs, const char *path, char **out, char **why);

/* Reads a whole file as Node's fs.readFile does. On failure returns
 * MB_EIO with *why set to Node's text (caller frees). */
int fs_read_all(const char *path, char **data, size_t *len, char **why);

/* Writes `data` to `path` the way upstream does: exclusive create, else a
 * sibling temp file renamed over it (never writing through a symlink). */
int fs_write_replace(const char *path, const char *data, size_t len, int exclusive_first, char **why);

/* Node's path.join(a, b): concatenation, normalized, relative kept
 * relative. Caller frees. */
char *fs_path_join(const char *a, const char *b);

/* jsdiff's createTwoFilesPatch(name, name, a, b, "original", "modified")
 * with 4 lines of context, as jsdiff `major` (5 or 8) prints it. Caller
 * frees. */
char *fs_unified_diff(const char *name, const char *a, size_t alen, const char *b, size_t blen,
                      int major);

/* A text result; versions with structured results also get the text as
 * structuredContent {content}. */
void fs_text_result(mb_mcp_call *call, mb_mcp_result *res, const char *text, size_t len);

/* read.c */
int fs_read_text_file(mb_mcp_call *call, json_t *args, mb_mcp_result *res);
int fs_read_media_file(mb_mcp_call *call, json_t *args, mb_mcp_result *res);
int fs_read_multiple_files(mb_mcp_call *call, json_t *args, mb_mcp_result *res);
/* write.c */
int fs_write_file(mb_mcp_call *call, json_t *args, mb_mcp_result *res);
int fs_edit_file(mb_mcp_call *call, json_t *args, mb_mcp_result *res);
int fs_create_directory(mb_mcp_call *call, json_t *args, mb_mcp_result *res);
int fs_move_file(mb_mcp_call *call, json_t *args, mb_mcp_result *res);
/* list.c */
int fs_list_directory(mb_mcp_call *call, json_t *args, mb_mcp_result *res);
int fs_list_directory_with_sizes(mb_mcp_call *call, json_t *args, mb_mcp_result *res);
int fs_directory_tree(mb_mcp_call *call, json_t *args, mb_mcp_result *res);
int fs_search_files(mb_mcp_call *call, json_t *args, mb_mcp_result *res);
int fs_get_file_info(mb_mcp_call *call, json_t *args, mb_mcp_result *res);
/* filesystem.c */
int fs_list_allowed_directories(mb_mcp_call *call, json_t *args, mb_mcp_result *res);
/* catch_all versions: answers a tools/call for a name not in the table */
int fs_unknown_tool(mb_mcp_call *call, json_t *args, mb_mcp_result *res);

#endif /* MB_SERVERS_FS_H */
