/*
 * pg_claims.c - the PostgreSQL backend's claims (store.h): exclusive names a
 * live sandbox holds. PRIMARY KEY(kind, value) makes a claim exclusive
 * across every node sharing the database; a take is one statement whose
 * ON CONFLICT arm takes the row over only when its holder is the taker or is
 * no longer live, so two nodes racing for one name cannot both win.
 */
#include "store/store_int.h"

#include <string.h>

/* The live holder of (kind, value), or MB_ENOTFOUND. */
static int live_holder_locked(mb_store *st, const char *kind, const char *value, char holder[37],
                              mb_err *err)
{
    mb_assert_held(&st->lock);
    mb_pg_params p = {0};
    mb_store__pg_str(&p, kind);
    mb_store__pg_str(&p, value);
    PGresult *r = mb_store__pg_run(st, "SELECT c.sandbox_id FROM claims c JOIN sandboxes x ON"
                                       " x.id = c.sandbox_id WHERE c.kind=$1 AND c.value=$2 AND"
                                       " x.status != 'released'", &p, "find claim", err);
    if (!r) return MB_EIO;
    int rc = PQntuples(r) ? MB_OK : MB_ENOTFOUND;
    if (!rc) mb_store__pg_text(r, 0, 0, holder, 37);
    PQclear(r);
    return rc;
}

int mb_store__pg_claim_take(mb_store *st, const char *kind, const char *value,
                            const char *sandbox_id, char holder[37], mb_err *err)
{
    mb_assert(kind && value && sandbox_id);
    mb_pg_params p = {0};
    mb_store__pg_str(&p, kind);
    mb_store__pg_str(&p, value);
    mb_store__pg_str(&p, sandbox_id);
    mb_store__pg_dbl(&p, mb_now());
    STORE_LOCK(st);
    PGresult *r = mb_store__pg_run(st,
        "INSERT INTO claims AS c(kind, value, sandbox_id, created_at) VALUES($1,$2,$3,$4)"
        " ON CONFLICT(kind, value) DO UPDATE SET sandbox_id=EXCLUDED.sandbox_id,"
        " created_at=EXCLUDED.created_at WHERE c.sandbox_id=EXCLUDED.sandbox_id OR NOT EXISTS"
        " (SELECT 1 FROM sandboxes x WHERE x.id=c.sandbox_id AND x.status != 'released')"
        " RETURNING sandbox_id", &p, "take claim", err);
    int rc = r ? MB_OK : MB_EIO;
    if (r && PQntuples(r) == 0) {
        char cur[37] = "";
        mb_err ignored = {0};
        if (live_holder_locked(st, kind, value, cur, &ignored) == MB_OK && holder)
            snprintf(holder, 37, "%s", cur);
        rc = mb_err_set(err, MB_ECONFLICT, "%s %s is held by another live sandbox", kind, value);
    }
    PQclear(r);
    STORE_UNLOCK(st);
    return rc;
}

int mb_store__pg_claim_holder(mb_store *st, const char *kind, const char *value, char holder[37],
                              mb_err *err)
{
    STORE_LOCK(st);
    int rc = live_holder_locked(st, kind, value, holder, err);
    STORE_UNLOCK(st);
    if (rc == MB_ENOTFOUND) {
        holder[0] = 0;
        return mb_err_set(err, MB_ENOTFOUND, "no live sandbox holds %s %s", kind, value);
    }
    return rc;
}

int mb_store__pg_claim_list(mb_store *st, const char *sandbox_id, const char *kind, char ***out,
                            mb_err *err)
{
    mb_pg_params p = {0};
    mb_store__pg_str(&p, sandbox_id);
    mb_store__pg_str(&p, kind);
    STORE_LOCK(st);
    PGresult *r = mb_store__pg_run(st, "SELECT value FROM claims WHERE sandbox_id=$1 AND kind=$2"
                                       " ORDER BY created_at, value", &p, "list claims", err);
    const char **v = NULL;
    size_t n = 0;
    for (int i = 0; r && i < PQntuples(r); i++) mb_strv_push(&v, &n, mb_strdup(PQgetvalue(r, i, 0)));
    PQclear(r);
    STORE_UNLOCK(st);
    if (!r) {
        mb_strv_free((char **)v);
        *out = NULL;
        return MB_EIO;
    }
    if (!v) v = mb_calloc(1, sizeof *v);
    *out = (char **)v;
    return MB_OK;
}

int mb_store__pg_claim_drop(mb_store *st, const char *sandbox_id, const char *kind, mb_err *err)
{
    mb_pg_params p = {0};
    mb_store__pg_str(&p, sandbox_id);
    if (kind) mb_store__pg_str(&p, kind);
    STORE_LOCK(st);
    int rc = mb_store__pg_do(st, kind ? "DELETE FROM claims WHERE sandbox_id=$1 AND kind=$2"
                                      : "DELETE FROM claims WHERE sandbox_id=$1", &p,
                             "drop claims", err);
    STORE_UNLOCK(st);
    return rc;
}
