/*
 * cli.h - the face of the command layer: one entry point per `mcpbox` subcommand.
 *
 * Each command parses its own options (getopt_long), prints its own errors and
 * returns the process exit status (0 success, 1 failure, 2 usage error).
 * argv[0] is the subcommand name.
 */
#ifndef MB_CLI_H
#define MB_CLI_H

typedef struct mb_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} mb_command;

/* The table of subcommands, terminated by a zeroed entry (commands.c). */
extern const mb_command mb_commands[];

int mb_cmd_serve(int argc, char **argv);   /* cli/serve.c */
int mb_cmd_keys(int argc, char **argv);    /* cli/keys.c */
int mb_cmd_archive(int argc, char **argv); /* cli/cmd_archive.c */
int mb_cmd_bridge(int argc, char **argv);  /* cli/cmd_bridge.c */
int mb_cmd_sandbox(int argc, char **argv);      /* cli/cmd_sandbox.c */
int mb_cmd_sandbox_zygote(int argc, char **argv); /* cli/cmd_sandbox.c (hidden: clones sandboxes) */
int mb_cmd_mcp(int argc, char **argv);     /* cli/cmd_mcp.c */
int mb_cmd_arxiv(int argc, char **argv);   /* cli/cmd_arxiv.c */
int mb_cmd_playwright(int argc, char **argv); /* cli/cmd_playwright.c */
/* The first start's API key (cli/firstrun.c, for serve --first-run-key):
 * when no valid key exists, makes one into key (48 bytes) and stores its
 * digest; returns 1 if it made one, 0 if keys exist, or a negative mb_code. */
struct mb_core;
struct mb_err;
int mb_cli_first_run_key(struct mb_core *core, char key[48], struct mb_err *err);
/* Prints the key once with the export lines and the dashboard URL. */
void mb_cli_first_run_print(const char *key, const char *public_url, const char *data_dir);

/* The client of a running daemon (cli/client/, docs/CLI.md). */
int mb_cmd_acquire(int argc, char **argv); /* cli/client/sandboxes.c */
int mb_cmd_ls(int argc, char **argv);
int mb_cmd_get(int argc, char **argv);
int mb_cmd_rm(int argc, char **argv);
int mb_cmd_reset(int argc, char **argv);
int mb_cmd_push(int argc, char **argv);    /* cli/client/workspace.c */
int mb_cmd_pull(int argc, char **argv);
int mb_cmd_tools(int argc, char **argv);   /* cli/client/tools.c */
int mb_cmd_call(int argc, char **argv);
int mb_cmd_logs(int argc, char **argv);    /* cli/client/logs.c */

#endif /* MB_CLI_H */
