/*
 * names.c - the enumerations clients send: Klavis's LocalSandboxMCPServer and
 * BenchmarkEnum, in the order of its OpenAPI document.
 */
#include "core/core.h"

#include <string.h>

const char *const mb_server_names[] = {
    "filesystem", "git", "terminal", "desktop-commander", "arxiv", "excel", "word",
    "powerpoint", "code-executor", "code-runner", "pdf-tools", "google_cloud",
    "poste_email_toolathlon", "canvas", "localmemory", "playwright",
};
const size_t mb_n_server_names = sizeof mb_server_names / sizeof *mb_server_names;

const char *const mb_benchmark_names[] = {"MCP_Atlas", "Toolathlon", "MCP_Mark"};
const size_t mb_n_benchmark_names = sizeof mb_benchmark_names / sizeof *mb_benchmark_names;

int mb_is_server_name(const char *name)
{
    for (size_t i = 0; i < mb_n_server_names; i++)
        if (!strcmp(name, mb_server_names[i])) return 1;
    return 0;
}

int mb_is_benchmark_name(const char *name)
{
    for (size_t i = 0; i < mb_n_benchmark_names; i++)
        if (!strcmp(name, mb_benchmark_names[i])) return 1;
    return 0;
}
