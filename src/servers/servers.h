/*
 * servers.h - the face of the native MCP servers: the table `mcpbox mcp NAME`
 * looks NAME up in, and each server's constructor.
 *
 * A constructor parses the server's own options (argv[0] is the server name;
 * options mirror the upstream's CLI arguments and environment), builds an
 * mb_mcp_server with its tools registered and its state attached, and returns
 * 0 with *out set, or a negative mb_code with `err` filled: MB_EINVAL for a
 * usage error (the command prints the server's usage and exits 2), anything
 * else for a start-up failure (exit 1).
 *
 * To add a server: write src/servers/<name>/, declare its constructor below,
 * and add one line to mb_servers[] in servers.c (with its link group: light
 * for servers that need no more than jansson, sqlite3, pcre2 and expat).
 */
#ifndef MB_SERVERS_H
#define MB_SERVERS_H

#include "mcp/mcp.h"

typedef int (*mb_server_create_fn)(int argc, char **argv, mb_mcp_server **out, mb_err *err);

typedef struct mb_server_entry {
    /* Link group: the server also runs from the executable mcpbox-GROUP,
     * which holds only its group's servers and their libraries (servers.c). */
    const char *group;
    const char *name;      /* as in `mcpbox mcp NAME` and the Klavis server name */
    mb_server_create_fn create;
    const char *summary;   /* one line: what upstream it mirrors */
    const char *usage;     /* options, for `mcpbox mcp NAME --help` */
} mb_server_entry;

/* Zero-terminated (servers.c). In a group's executable only that group's
 * servers are listed. */
extern const mb_server_entry mb_servers[];
/* The entry called `name`, or NULL. */
const mb_server_entry *mb_server_find(const char *name);

/* filesystem: @modelcontextprotocol/server-filesystem 2026.7.10 */
int mb_srv_filesystem_create(int argc, char **argv, mb_mcp_server **out, mb_err *err);
int mb_srv_canvas_create(int argc, char **argv, mb_mcp_server **out, mb_err *err);
/* localmemory: @modelcontextprotocol/server-memory 2025.8.4 */
int mb_srv_memory_create(int argc, char **argv, mb_mcp_server **out, mb_err *err);
/* terminal: cli-mcp-server 0.2.5 (MCP-Atlas) / lockon-n fork (Toolathlon) */
int mb_srv_terminal_create(int argc, char **argv, mb_mcp_server **out, mb_err *err);
/* git: mcp-server-git 2025.7.1 (MCP-Atlas) / 2025.1.14 (Toolathlon) */
int mb_srv_git_create(int argc, char **argv, mb_mcp_server **out, mb_err *err);
/* code-runner: mcp-server-code-runner 0.1.7 */
int mb_srv_coderunner_create(int argc, char **argv, mb_mcp_server **out, mb_err *err);
/* code-executor: @geobio/code_execution_server 0.2.1 / Toolathlon python_execute */
int mb_srv_codeexec_create(int argc, char **argv, mb_mcp_server **out, mb_err *err);
/* excel-mcp-server 0.1.7 (src/servers/excel) */
int mb_srv_excel_create(int argc, char **argv, mb_mcp_server **out, mb_err *err);
/* office-word-mcp-server 568d8d8a / 1.1.9 (src/servers/word) */
int mb_srv_word_create(int argc, char **argv, mb_mcp_server **out, mb_err *err);
/* office-powerpoint-mcp-server 2.0.6 (src/servers/powerpoint) */
int mb_srv_powerpoint_create(int argc, char **argv, mb_mcp_server **out, mb_err *err);

/* pdf-tools: lockon-n/pdf-tools-mcp 0.1.4 (Toolathlon) */
int mb_srv_pdftools_create(int argc, char **argv, mb_mcp_server **out, mb_err *err);
/* poste_email_toolathlon: emails-mcp as Klavis hosts it (Toolathlon) */
int mb_srv_poste_create(int argc, char **argv, mb_mcp_server **out, mb_err *err);

/* desktop-commander: @wonderwhy-er/desktop-commander 0.2.7 (MCP-Atlas) */
int mb_srv_desktop_commander_create(int argc, char **argv, mb_mcp_server **out, mb_err *err);

/* arxiv: arxiv-mcp-server 0.2.11 (MCP-Atlas) / 0.2.10 (Toolathlon) over an offline catalog */
int mb_srv_arxiv_create(int argc, char **argv, mb_mcp_server **out, mb_err *err);

/* google_cloud: Toolathlon's google-cloud-mcp over an emulated project (src/gcloud) */
int mb_srv_google_cloud_create(int argc, char **argv, mb_mcp_server **out, mb_err *err);

#endif /* MB_SERVERS_H */
