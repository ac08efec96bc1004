/*
 * firstrun.c - the API key of a first start (`mcpbox serve --first-run-key`,
 * which `make run` passes): when the data directory holds no valid key and
 * MCPBOX_API_KEY gives none, one is made, only its SHA-256 digest stored,
 * and the key itself printed once with the lines that put it to use.
 */
#include "auth/auth.h"
#include "cli/cli.h"
#include "core/core.h"
#include "store/store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int mb_cli_first_run_key(mb_core *core, char key[48], mb_err *err)
{
    key[0] = '\0';
    mb_store *st = mb_core_store(core);
    mb_key_rec *keys;
    size_t n, valid = 0;
    int rc = mb_store_key_list(st, &keys, &n, err);
    if (rc) return rc;
    for (size_t i = 0; i < n; i++)
        if (keys[i].revoked_at <= 0) valid++;
    free(keys);
    if (valid) return 0;
    char hash[65];
    mb_key_generate(key);
    mb_key_hash(key, hash);
    mb_key_rec k = {0};
    mb_uuid4(k.id);
    snprintf(k.owner, sizeof k.owner, "default");
    snprintf(k.name, sizeof k.name, "first-run");
    snprintf(k.prefix, sizeof k.prefix, "%.12s", key);
    k.created_at = mb_now();
    rc = mb_store_key_add(st, hash, &k, err);
    if (rc) {
        key[0] = '\0';
        return rc;
    }
    return 1;
}

void mb_cli_first_run_print(const char *key, const char *public_url, const char *data_dir)
{
    printf("\n"
           "First run: an API key was made for owner 'default'. It is shown only this once\n"
           "(only its SHA-256 digest is stored, in %s/mcpbox.db). Use it with:\n"
           "\n"
           "    export MCPBOX_API_KEY=%s\n"
           "    export MCPBOX_URL=%s\n"
           "\n"
           "Dashboard: %s/\n"
           "Then: mcpbox acquire filesystem; mcpbox ls   (docs/CLI.md)\n"
           "More keys: mcpbox keys create --data-dir %s\n"
           "\n",
           data_dir, key, public_url, public_url, data_dir);
    fflush(stdout);
}
