/*
 * keys.c - `mcpbox keys create|list|revoke`: API key management on the state
 * database of a data directory (safe while the daemon runs).
 */
#include "auth/auth.h"
#include "cli/cli.h"
#include "store/store.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mcpbox keys create [--owner NAME] [--name LABEL] [--data-dir DIR | --db URL]\n"
            "       mcpbox keys list [--data-dir DIR | --db URL]\n"
            "       mcpbox keys revoke ID|PREFIX [--data-dir DIR | --db URL]\n"
            "\n"
            "--db (MCPBOX_DB): the state database the nodes share (postgresql://...), as\n"
            "`mcpbox serve --db`; otherwise DIR/mcpbox.db.\n"
            "\n"
            "A key's owner owns the sandboxes acquired with it; keys of one owner see the\n"
            "same sandboxes. The key itself is printed once by create and never stored.\n");
}

int mb_cmd_keys(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *action = argv[1];
    const char *data_dir = getenv("MCPBOX_DATA_DIR");
    if (!data_dir || !*data_dir) data_dir = "./var";
    const char *db_url = getenv("MCPBOX_DB");
    if (db_url && !*db_url) db_url = NULL;
    const char *owner = "default", *name = "";
    static const struct option longopts[] = {
        {"owner", required_argument, NULL, 'o'},
        {"name", required_argument, NULL, 'n'},
        {"data-dir", required_argument, NULL, 'd'},
        {"db", required_argument, NULL, 'b'},
        {NULL, 0, NULL, 0},
    };
    optind = 2;
    int c;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        if (c == 'o') owner = optarg;
        else if (c == 'n') name = optarg;
        else if (c == 'd') data_dir = optarg;
        else if (c == 'b') db_url = optarg;
        else {
            usage(stderr);
            return 2;
        }
    }
    if (strlen(owner) == 0 || strlen(owner) >= MB_OWNER_MAX) {
        fprintf(stderr, "mcpbox keys: --owner must be 1..%d characters\n", MB_OWNER_MAX - 1);
        return 2;
    }
    mb_err err = {0};
    if (!db_url && mb_mkdir_p(data_dir, 0700, &err) != MB_OK) {
        fprintf(stderr, "mcpbox keys: %s\n", err.msg);
        return 1;
    }
    char *db = db_url ? mb_strdup(db_url) : mb_asprintf("%s/mcpbox.db", data_dir);
    mb_store *st = NULL;
    int rc = mb_store_open(db, &st, &err);
    free(db);
    if (rc) {
        fprintf(stderr, "mcpbox keys: %s\n", err.msg);
        return 1;
    }
    int status = 0;
    if (!strcmp(action, "create")) {
        char key[48], hash[65];
        mb_key_generate(key);
        mb_key_hash(key, hash);
        mb_key_rec k = {0};
        mb_uuid4(k.id);
        snprintf(k.owner, sizeof k.owner, "%s", owner);
        snprintf(k.name, sizeof k.name, "%s", name);
        snprintf(k.prefix, sizeof k.prefix, "%.12s", key);
        k.created_at = mb_now();
        if (mb_store_key_add(st, hash, &k, &err) != MB_OK) {
            fprintf(stderr, "mcpbox keys: %s\n", err.msg);
            status = 1;
        } else {
            printf("%s\n", key);
            fprintf(stderr, "key %s for owner '%s' created; it is shown only this once\n", k.id,
                    k.owner);
        }
    } else if (!strcmp(action, "list")) {
        mb_key_rec *keys;
        size_t n;
        if (mb_store_key_list(st, &keys, &n, &err) != MB_OK) {
            fprintf(stderr, "mcpbox keys: %s\n", err.msg);
            status = 1;
        } else {
            printf("%-36s  %-14s  %-16s  %-8s  %s\n", "ID", "PREFIX", "OWNER", "STATE", "NAME");
            for (size_t i = 0; i < n; i++)
                printf("%-36s  %-14s  %-16s  %-8s  %s\n", keys[i].id, keys[i].prefix,
                       keys[i].owner, keys[i].revoked_at > 0 ? "revoked" : "valid", keys[i].name);
            free(keys);
        }
    } else if (!strcmp(action, "revoke")) {
        if (optind >= argc) {
            fprintf(stderr, "mcpbox keys revoke: which key? give its ID or prefix\n");
            status = 2;
        } else if (mb_store_key_revoke(st, argv[optind], &err) != MB_OK) {
            fprintf(stderr, "mcpbox keys: %s\n", err.msg);
            status = 1;
        } else {
            printf("revoked %s\n", argv[optind]);
        }
    } else {
        fprintf(stderr, "mcpbox keys: unknown action '%s'\n", action);
        usage(stderr);
        status = 2;
    }
    mb_store_close(st);
    return status;
}
