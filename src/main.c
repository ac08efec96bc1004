/*
 * main.c - the mcpbox binary: finds the subcommand in mb_commands and runs it.
 */
#include "cli/cli.h"
#include "util/util.h"

#include <stdio.h>
#include <string.h>

#define MCPBOX_VERSION "0.1.0"

static void usage(FILE *f)
{
    fprintf(f, "usage: mcpbox <command> [options]\n\ncommands:\n");
    for (const mb_command *c = mb_commands; c->name; c++)
        fprintf(f, "  %-10s %s\n", c->name, c->summary);
    fprintf(f, "  %-10s %s\n", "version", "print the version");
    fprintf(f, "\n`mcpbox <command> --help` describes a command's options.\n");
}

int main(int argc, char **argv)
{
    mb_log_init();
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
        !strcmp(argv[1], "help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
        printf("mcpbox %s\n", MCPBOX_VERSION);
        return 0;
    }
    for (const mb_command *c = mb_commands; c->name; c++)
        if (!strcmp(c->name, argv[1])) return c->run(argc - 1, argv + 1);
    fprintf(stderr, "mcpbox: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}
