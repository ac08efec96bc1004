/*
 * servers.c - the table of native MCP servers (see servers.h). One line per
 * server; keep the names equal to the Klavis server names.
 *
 * Each line names the server's link group first. The mcpbox binary holds
 * every group; the Makefile also compiles this file once per group (with
 * -DMB_SERVER_GROUP=G -DMB_SERVER_GROUP_G) into build/mcpbox-G, an executable
 * of only that group's servers, linked with only the libraries their code
 * calls (docs/ARCHITECTURE.md, "Server executables"). The Makefile finds the
 * groups in the MB_SERVER lines below; a new group also needs its two lines
 * in the selection block.
 */
#include "servers/servers.h"

#include <string.h>

/* Which groups this compilation keeps: all of them, or the one named. */
#if !defined(MB_SERVER_GROUP) || defined(MB_SERVER_GROUP_light)
#define MB__IN_light(...) {"light", __VA_ARGS__},
#else
#define MB__IN_light(...)
#endif
#if !defined(MB_SERVER_GROUP) || defined(MB_SERVER_GROUP_office)
#define MB__IN_office(...) {"office", __VA_ARGS__},
#else
#define MB__IN_office(...)
#endif
#if !defined(MB_SERVER_GROUP) || defined(MB_SERVER_GROUP_services)
#define MB__IN_services(...) {"services", __VA_ARGS__},
#else
#define MB__IN_services(...)
#endif
/* MB_SERVER(group, name, constructor, summary, usage) */
#define MB_SERVER(group, ...) MB__IN_##group(__VA_ARGS__)

const mb_server_entry mb_servers[] = {
    MB_SERVER(light, "filesystem", mb_srv_filesystem_create,
     "@modelcontextprotocol/server-filesystem 2026.7.10 / 2025.11.25 (14 tools) / 2025.7.1 (12 tools)",
     "mcpbox mcp filesystem [--upstream-version 2026.7.10|2025.11.25|2025.7.1] [DIR...]\n"
     "  DIR  allowed directories (default: /data when it exists)\n")
    MB_SERVER(services, "canvas", mb_srv_canvas_create,
     "canvas-mcp-server 2.2.3 (lockon-n/mcp-canvas-lms @1097704, 69 tools) over mcpbox's Canvas",
     "mcpbox mcp canvas [--socket PATH | --db FILE [--users FILE]] [--token TOKEN]\n"
     "  --socket PATH  the sandbox's Canvas socket (default $MCPBOX_CANVAS_SOCKET)\n"
     "  --db FILE      a Canvas database opened in-process (made, with --users, if new)\n"
     "  --token TOKEN  act as this token's user (default $CANVAS_API_TOKEN; else the\n"
     "                 sandbox's agent user, or the first admin of --db)\n")
    MB_SERVER(light, "localmemory", mb_srv_memory_create,
     "@modelcontextprotocol/server-memory 2025.8.4 / 2025.4.25",
     "mcpbox mcp localmemory [--upstream-version 2025.8.4|2025.4.25] [--memory-file PATH]\n"
     "  --memory-file PATH  the JSONL knowledge graph (default: $MEMORY_FILE_PATH,\n"
     "                      else memory.json beside the mcpbox binary; relative\n"
     "                      paths are taken from the binary's directory too)\n")
    MB_SERVER(light, "terminal", mb_srv_terminal_create,
     "cli-mcp-server 0.2.5 (--variant toolathlon: the lockon-n fork)",
     "mcpbox mcp terminal [--variant upstream|toolathlon] [--allowed-dir DIR]\n"
     "                    [--allowed-commands LIST|all] [--allowed-flags LIST|all]\n"
     "                    [--max-command-length N] [--command-timeout S] [--allow-shell-operators]\n"
     "  Settings come from ALLOWED_DIR (required), ALLOWED_COMMANDS (ls,cat,pwd),\n"
     "  ALLOWED_FLAGS (-l,-a,--help), MAX_COMMAND_LENGTH (1024), COMMAND_TIMEOUT (30),\n"
     "  ALLOW_SHELL_OPERATORS (false) and, for the fork, MAX_STDOUT_LENGTH (8192),\n"
     "  MAX_STDERR_LENGTH (2048), OUTPUT_TRUNCATE_MESSAGE, CLI_PROXY_ENABLED, CLI_PROXY_URL;\n"
     "  flags override them.\n")
    MB_SERVER(light, "git", mb_srv_git_create,
     "mcp-server-git 2025.7.1 (13 tools) / 2025.1.14 (11 tools)",
     "mcpbox mcp git [--upstream-version 2025.7.1|2025.1.14] [--repository DIR]... [--timeout S]\n"
     "  --repository DIR  an allowed root for repo_path (repeatable; default /data)\n")
    MB_SERVER(light, "code-runner", mb_srv_coderunner_create,
     "mcp-server-code-runner 0.1.7",
     "mcpbox mcp code-runner [--timeout S]\n"
     "  --timeout S  stop a run after S seconds (default 300; 0 = never, as upstream)\n")
    MB_SERVER(light, "code-executor", mb_srv_codeexec_create,
     "@geobio/code_execution_server 0.2.1 (--variant toolathlon: python_execute)",
     "mcpbox mcp code-executor [--variant atlas|toolathlon] [options]\n"
     "  atlas:      CODE_STORAGE_DIR (required), ENV_TYPE conda|venv|venv-uv|system,\n"
     "              CONDA_ENV_NAME / VENV_PATH / UV_VENV_PATH, PIP_FIND_LINKS;\n"
     "              [--storage-dir DIR] [--allowed-dir DIR]... [--package-cache DIR]\n"
     "              [--online-install] [--timeout S]\n"
     "  toolathlon: [--workspace DIR] (default /data)\n")
    MB_SERVER(light, "poste_email_toolathlon", mb_srv_poste_create,
     "emails-mcp (Klavis poste_email_toolathlon; IMAP/SMTP of the node's mail system)",
     "mcpbox mcp poste_email_toolathlon [--attachment_upload_path DIR]\n"
     "    [--attachment_download_path DIR] [--email_export_path DIR]\n"
     "  account: $EMAIL_CONFIG (JSON or base64 JSON {email, password, name, imap_server,\n"
     "  imap_port, smtp_server, smtp_port}), else /mnt/mail/account.json in a sandbox\n")
    MB_SERVER(light, "pdf-tools", mb_srv_pdftools_create, "pdf-tools-mcp 0.1.4 (lockon-n; poppler-utils + qpdf)",
     "mcpbox mcp pdf-tools [--workspace_path DIR] [--tempfile_dir DIR] [--timeout S]\n"
     "                     [--memory-limit SIZE] [--max-text SIZE]\n"
     "  --workspace_path DIR  paths must resolve inside DIR; relative ones start there\n"
     "                        (default: no restriction, the current directory)\n"
     "  --tempfile_dir DIR    where PDFs given as URLs are downloaded (~/.pdf_tools_temp)\n"
     "  --timeout S           per pdfinfo/pdftotext/qpdf run (default 60)\n"
     "  --memory-limit SIZE   address-space cap of those programs (default 1G)\n"
     "  --max-text SIZE       cap of the text extracted by one run (default 64M)\n")
    MB_SERVER(office, "excel", mb_srv_excel_create, "excel-mcp-server 0.1.7 (25 tools) / 0.1.4 (20 tools)",
     "mcpbox mcp excel [stdio] [--upstream-version 0.1.7|0.1.4] [--allowed-dir DIR]...\n"
     "  --allowed-dir DIR  where filepath may point (repeatable; default /data)\n")
    MB_SERVER(light, "desktop-commander", mb_srv_desktop_commander_create,
     "@wonderwhy-er/desktop-commander 0.2.7 (21 tools; telemetry never sent)",
     "mcpbox mcp desktop-commander [--allowed-dir DIR]... [--state-dir DIR]\n"
     "  --allowed-dir DIR  allowedDirectories of a new config (default: [], everything)\n"
     "  --state-dir DIR    keep .claude-server-commander{,-logs} in DIR, not in $HOME\n"
     "  State: $HOME/.claude-server-commander/config.json, as upstream keeps it.\n")
    MB_SERVER(light, "arxiv", mb_srv_arxiv_create, "arxiv-mcp-server 0.2.11 / 0.2.10 (offline catalog, optional online mode)",
     "mcpbox mcp arxiv [--upstream-version 0.2.11|0.2.10] [--storage-path DIR] [--catalog DIR]\n"
     "                 [--online [--proxy URL] [--api-url URL] [--pdf-url URL]\n"
     "                  [--request-delay S] [--timeout S]] [--convert-timeout S]\n"
     "  --storage-path DIR  where papers are downloaded (default ~/.arxiv-mcp-server/papers)\n"
     "  --catalog DIR       the offline catalog made by `mcpbox arxiv import`\n"
     "                      ($ARXIV_CATALOG, default /srv/arxiv-catalog)\n"
     "  --online            ask arXiv for what the catalog lacks and keep it there\n"
     "                      ($ARXIV_ONLINE=1; through --proxy / $ARXIV_PROXY / https_proxy;\n"
     "                      --request-delay between requests, default 3 s as arXiv asks)\n")
    MB_SERVER(office, "word", mb_srv_word_create, "office-word-mcp-server 568d8d8a / 1.1.9 (GongRzhe)",
     "mcpbox mcp word [--upstream-version 1.1.9]\n"
     "  --upstream-version V  1.1.9 (47 tools, Toolathlon's pin) or 568d8d8a (54, default)\n")
    MB_SERVER(office, "powerpoint", mb_srv_powerpoint_create, "office-powerpoint-mcp-server 2.0.6 (GongRzhe, 37 tools)",
     "mcpbox mcp powerpoint [--transport stdio]\n")
    MB_SERVER(services, "google_cloud", mb_srv_google_cloud_create, "google-cloud-mcp (Toolathlon, 39 tools) over an emulated project",
     "mcpbox mcp google_cloud [--db PATH] [--project-id ID] [--allowed-buckets LIST]\n"
     "                        [--allowed-datasets LIST] [--allowed-log-buckets LIST] [--allowed-instances LIST]\n"
     "  --db PATH  the project database ($MCPBOX_GCLOUD_DB, default /.mcpbox/state/gcloud.db)\n"
     "  LIST       comma-separated names or 'prefix*' patterns, as upstream takes them\n")
    {NULL, NULL, NULL, NULL, NULL},
};

const mb_server_entry *mb_server_find(const char *name)
{
    for (const mb_server_entry *e = mb_servers; e->name; e++)
        if (!strcmp(e->name, name)) return e;
    return NULL;
}
