/*
 * fs.h - internals of the `filesystem` server, a native twin of
 * @modelcontextprotocol/server-filesystem 2026.7.10: shared state, the
 * tool handlers (one file per family) and the helpers they share.
 *
 * Every handler resolves its paths with fs_resolve() (the framework's
 * mb_mcp_resolve, i.e. upstream's validatePath) before touching the disk,
 * and reports system errors with Node's texts (mb_node_fs_error), because
 * upstream lets Node's exceptions through as the tool's error text.
 */
#ifndef MB_SERVERS_FS_H
#define MB_SERVERS_FS_H

#include "mcp/mcp.h"

typedef struct fs_server {
    mb_mcp_roots *roots;
} fs_server;

/* Resolves args[key] under the roots. On refusal fails the call and returns
 * MB_MCP_FAILED (return it); on success *out is the path (caller frees). */
int fs_resolve(mb_mcp_call *call, mb_mcp_result *res, const char *path, char **out);

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
 * with 4 lines of context. Caller frees. */
char *fs_unified_diff(const char *name, const char *a, size_t alen, const char *b, size_t blen);

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

/* Text result with the same text as structuredContent {content}. */
void fs_text_result(mb_mcp_result *res, const char *text, size_t len);

#endif /* MB_SERVERS_FS_H */
