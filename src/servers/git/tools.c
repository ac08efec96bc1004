/*
 * tools.c - the git server's tool lists per upstream version: names, descriptions
 * and input schemas exactly as mcp-server-git's pydantic models render them
 * (model_json_schema(): keys sorted inside each property, titles derived from
 * field names).
 */
#include "servers/git/git.h"

#include <string.h>

#define REPO "\"repo_path\": {\"title\": \"Repo Path\", \"type\": \"string\"}"
#define CTX "\"context_lines\": {\"default\": 3, \"title\": \"Context Lines\", \"type\": \"integer\"}"
#define OBJ(props, req, title) \
    "{\"properties\": {" props "}, \"required\": [" req "], \"title\": \"" title "\", \"type\": \"object\"}"

static const mb_git_tool TOOLS_2025_1_14[] = {
    {"git_status", "Shows the working tree status", OBJ(REPO, "\"repo_path\"", "GitStatus")},
    {"git_diff_unstaged", "Shows changes in the working directory that are not yet staged",
     OBJ(REPO, "\"repo_path\"", "GitDiffUnstaged")},
    {"git_diff_staged", "Shows changes that are staged for commit",
     OBJ(REPO, "\"repo_path\"", "GitDiffStaged")},
    {"git_diff", "Shows differences between branches or commits",
     OBJ(REPO ", \"target\": {\"title\": \"Target\", \"type\": \"string\"}",
         "\"repo_path\", \"target\"", "GitDiff")},
    {"git_commit", "Records changes to the repository",
     OBJ(REPO ", \"message\": {\"title\": \"Message\", \"type\": \"string\"}",
         "\"repo_path\", \"message\"", "GitCommit")},
    {"git_add", "Adds file contents to the staging area",
     OBJ(REPO ", \"files\": {\"items\": {\"type\": \"string\"}, \"title\": \"Files\", \"type\": "
              "\"array\"}",
         "\"repo_path\", \"files\"", "GitAdd")},
    {"git_reset", "Unstages all staged changes", OBJ(REPO, "\"repo_path\"", "GitReset")},
    {"git_log", "Shows the commit logs",
     OBJ(REPO ", \"max_count\": {\"default\": 10, \"title\": \"Max Count\", \"type\": \"integer\"}",
         "\"repo_path\"", "GitLog")},
    {"git_create_branch", "Creates a new branch from an optional base branch",
     OBJ(REPO ", \"branch_name\": {\"title\": \"Branch Name\", \"type\": \"string\"}, "
              "\"base_branch\": {\"anyOf\": [{\"type\": \"string\"}, {\"type\": \"null\"}], "
              "\"default\": null, \"title\": \"Base Branch\"}",
         "\"repo_path\", \"branch_name\"", "GitCreateBranch")},
    {"git_checkout", "Switches branches",
     OBJ(REPO ", \"branch_name\": {\"title\": \"Branch Name\", \"type\": \"string\"}",
         "\"repo_path\", \"branch_name\"", "GitCheckout")},
    {"git_show", "Shows the contents of a commit",
     OBJ(REPO ", \"revision\": {\"title\": \"Revision\", \"type\": \"string\"}",
         "\"repo_path\", \"revision\"", "GitShow")},
};

static const mb_git_tool TOOLS_2025_7_1[] = {
    {"git_status", "Shows the working tree status", OBJ(REPO, "\"repo_path\"", "GitStatus")},
    {"git_diff_unstaged", "Shows changes in the working directory that are not yet staged",
     OBJ(REPO ", " CTX, "\"repo_path\"", "GitDiffUnstaged")},
    {"git_diff_staged", "Shows changes that are staged for commit",
     OBJ(REPO ", " CTX, "\"repo_path\"", "GitDiffStaged")},
    {"git_diff", "Shows differences between branches or commits",
     OBJ(REPO ", \"target\": {\"title\": \"Target\", \"type\": \"string\"}, " CTX,
         "\"repo_path\", \"target\"", "GitDiff")},
    {"git_commit", "Records changes to the repository",
     OBJ(REPO ", \"message\": {\"title\": \"Message\", \"type\": \"string\"}",
         "\"repo_path\", \"message\"", "GitCommit")},
    {"git_add", "Adds file contents to the staging area",
     OBJ(REPO ", \"files\": {\"items\": {\"type\": \"string\"}, \"title\": \"Files\", \"type\": "
              "\"array\"}",
         "\"repo_path\", \"files\"", "GitAdd")},
    {"git_reset", "Unstages all staged changes", OBJ(REPO, "\"repo_path\"", "GitReset")},
    {"git_log", "Shows the commit logs",
     OBJ(REPO ", \"max_count\": {\"default\": 10, \"title\": \"Max Count\", \"type\": \"integer\"}",
         "\"repo_path\"", "GitLog")},
    {"git_create_branch", "Creates a new branch from an optional base branch",
     OBJ(REPO ", \"branch_name\": {\"title\": \"Branch Name\", \"type\": \"string\"}, "
              "\"base_branch\": {\"anyOf\": [{\"type\": \"string\"}, {\"type\": \"null\"}], "
              "\"default\": null, \"title\": \"Base Branch\"}",
         "\"repo_path\", \"branch_name\"", "GitCreateBranch")},
    {"git_checkout", "Switches branches",
     OBJ(REPO ", \"branch_name\": {\"title\": \"Branch Name\", \"type\": \"string\"}",
         "\"repo_path\", \"branch_name\"", "GitCheckout")},
    {"git_show", "Shows the contents of a commit",
     OBJ(REPO ", \"revision\": {\"title\": \"Revision\", \"type\": \"string\"}",
         "\"repo_path\", \"revision\"", "GitShow")},
    {"git_init", "Initialize a new Git repository", OBJ(REPO, "\"repo_path\"", "GitInit")},
    {"git_branch", "List Git branches",
     OBJ("\"repo_path\": {\"description\": \"The path to the Git repository.\", \"title\": \"Repo "
         "Path\", \"type\": \"string\"}, \"branch_type\": {\"description\": \"Whether to list local "
         "branches ('local'), remote branches ('remote') or all branches('all').\", \"title\": "
         "\"Branch Type\", \"type\": \"string\"}, \"contains\": {\"anyOf\": [{\"type\": \"string\"}, "
         "{\"type\": \"null\"}], \"default\": null, \"description\": \"The commit sha that branch "
         "should contain. Do not pass anything to this param if no commit sha is specified\", "
         "\"title\": \"Contains\"}, \"not_contains\": {\"anyOf\": [{\"type\": \"string\"}, "
         "{\"type\": \"null\"}], \"default\": null, \"description\": \"The commit sha that branch "
         "should NOT contain. Do not pass anything to this param if no commit sha is specified\", "
         "\"title\": \"Not Contains\"}",
         "\"repo_path\", \"branch_type\"", "GitBranch")},
};

const mb_git_tool *mb_git_tools(mb_git_version v, size_t *n)
{
    if (v == MB_GIT_2025_1_14) {
        *n = sizeof TOOLS_2025_1_14 / sizeof TOOLS_2025_1_14[0];
        return TOOLS_2025_1_14;
    }
    *n = sizeof TOOLS_2025_7_1 / sizeof TOOLS_2025_7_1[0];
    return TOOLS_2025_7_1;
}

int mb_git_version_parse(const char *s, mb_git_version *out)
{
    if (!strcmp(s, "2025.1.14")) *out = MB_GIT_2025_1_14;
    else if (!strcmp(s, "2025.7.1")) *out = MB_GIT_2025_7_1;
    else return MB_EINVAL;
    return MB_OK;
}
