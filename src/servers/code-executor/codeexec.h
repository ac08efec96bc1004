/*
 * codeexec.h - the native `code-executor` server's two variants (private header).
 *
 *   --variant atlas       @geobio/code_execution_server 0.2.1, the MCP-Atlas pin
 *                         (a fork of bazinga012/mcp_code_executor): nine tools
 *                         that write Python files into CODE_STORAGE_DIR and run
 *                         them in a conda / venv / uv-venv environment, replying
 *                         with JSON.stringify'd status objects.
 *   --variant toolathlon  Toolathlon's python_execute: one tool that writes
 *                         <workspace>/.python_tmp/<file>.py, runs it and replies
 *                         with === STDOUT === / === STDERR === / === EXECUTION
 *                         INFO === sections.
 *
 * Both run Python inside the sandbox (Debian's python3 with pandas, numpy and
 * scipy, or the configured virtualenv). Paths taken from arguments are
 * confined to the allowed directories (default /data, plus the storage
 * directory) with server-filesystem's refusal texts.
 */
#ifndef MB_SERVERS_CODEEXEC_H
#define MB_SERVERS_CODEEXEC_H

#include "mcp/mcp.h"

int mb_codeexec_atlas_create(int argc, char **argv, mb_mcp_server **out, mb_err *err);
int mb_codeexec_toolathlon_create(int argc, char **argv, mb_mcp_server **out, mb_err *err);

#endif /* MB_SERVERS_CODEEXEC_H */
