/*
 * pg_records.c - the PostgreSQL backend's records: API keys, sandboxes (each
 * with the node that owns it), their servers and blobs. The statements
 * mirror the SQLite ones (sqlite_*.c); what differs is the node: a node's
 * own work sees only its sandboxes (store.h, mb_store_set_node).
 */
#include "store/store_int.h"

#include <stdlib.h>
#include <string.h>

/* Runs a statement with the lock held and frees its result. */
static int run(mb_store *st, const char *sql, const mb_pg_params *p, const char *what, mb_err *err)
{
    STORE_LOCK(st);
    int rc = mb_store__pg_do(st, sql, p, what, err);
    STORE_UNLOCK(st);
    return rc;
}

/* ------------------------------------------------------------------ keys */

#define KEY_COLS "id, owner, name, prefix, created_at, revoked_at"

static void key_from_row(const PGresult *r, int i, mb_key_rec *k)
{
    memset(k, 0, sizeof *k);
    mb_store__pg_text(r, i, 0, k->id, sizeof k->id);
    mb_store__pg_text(r, i, 1, k->owner, sizeof k->owner);
    mb_store__pg_text(r, i, 2, k->name, sizeof k->name);
    mb_store__pg_text(r, i, 3, k->prefix, sizeof k->prefix);
    k->created_at = mb_store__pg_double(r, i, 4);
    k->revoked_at = mb_store__pg_double(r, i, 5);
}

int mb_store__pg_key_add(mb_store *st, const char *hash_hex, const mb_key_rec *rec, mb_err *err)
{
    mb_pg_params p = {0};
    mb_store__pg_str(&p, rec->id);
    mb_store__pg_str(&p, hash_hex);
    mb_store__pg_str(&p, rec->owner);
    mb_store__pg_str(&p, rec->name);
    mb_store__pg_str(&p, rec->prefix);
    mb_store__pg_dbl(&p, rec->created_at);
    return run(st, "INSERT INTO keys(id, hash, owner, name, prefix, created_at)"
                   " VALUES($1,$2,$3,$4,$5,$6) ON CONFLICT(hash) DO NOTHING", &p, "insert key", err);
}

int mb_store__pg_key_find(mb_store *st, const char *hash_hex, mb_key_rec *out, mb_err *err)
{
    mb_pg_params p = {0};
    mb_store__pg_str(&p, hash_hex);
    STORE_LOCK(st);
    PGresult *r = mb_store__pg_run(st, "SELECT " KEY_COLS " FROM keys WHERE hash=$1", &p,
                                   "find key", err);
    int rc = r ? MB_OK : MB_EIO;
    if (r && PQntuples(r) == 0) {
        rc = mb_err_set(err, MB_ENOTFOUND, "unknown API key");
    } else if (r) {
        key_from_row(r, 0, out);
        if (out->revoked_at > 0) rc = mb_err_set(err, MB_EDENIED, "this API key was revoked");
    }
    PQclear(r);
    STORE_UNLOCK(st);
    return rc;
}

int mb_store__pg_key_list(mb_store *st, mb_key_rec **out, size_t *n, mb_err *err)
{
    *out = NULL;
    *n = 0;
    STORE_LOCK(st);
    PGresult *r = mb_store__pg_run(st, "SELECT " KEY_COLS " FROM keys ORDER BY created_at DESC",
                                   NULL, "list keys", err);
    if (r) {
        *n = (size_t)PQntuples(r);
        *out = mb_calloc(*n ? *n : 1, sizeof **out);
        for (size_t i = 0; i < *n; i++) key_from_row(r, (int)i, &(*out)[i]);
    }
    PQclear(r);
    STORE_UNLOCK(st);
    return r ? MB_OK : MB_EIO;
}

int mb_store__pg_key_revoke(mb_store *st, const char *id_or_prefix, mb_err *err)
{
    mb_pg_params p = {0};
    mb_store__pg_str(&p, id_or_prefix);
    STORE_LOCK(st);
    /* A prefix matches with LIKE's wildcards taken literally. */
    PGresult *r = mb_store__pg_run(st,
        "UPDATE keys SET revoked_at = extract(epoch FROM clock_timestamp()) WHERE revoked_at=0 AND"
        " (id=$1 OR (length($1) >= 6 AND starts_with(prefix, $1) AND"
        "  (SELECT count(*) FROM keys WHERE starts_with(prefix, $1)) = 1))", &p, "revoke key", err);
    int rc = r ? MB_OK : MB_EIO;
    if (r && strcmp(PQcmdTuples(r), "0") == 0)
        rc = mb_err_set(err, MB_ENOTFOUND,
                        "no valid key with id or unique prefix '%s' (see `mcpbox keys list`)",
                        id_or_prefix);
    PQclear(r);
    STORE_UNLOCK(st);
    return rc;
}

/* ------------------------------------------------------------- sandboxes */

#define SB_COLS "id, owner, benchmark, status, test_account_email, created_at, updated_at," \
                " ttl_seconds, deadline, uid_base, has_upload, initialized_at, error, egress"

static void sb_from_row(const PGresult *r, int i, mb_sandbox_rec *s)
{
    memset(s, 0, sizeof *s);
    mb_store__pg_text(r, i, 0, s->id, sizeof s->id);
    mb_store__pg_text(r, i, 1, s->owner, sizeof s->owner);
    mb_store__pg_text(r, i, 2, s->benchmark, sizeof s->benchmark);
    mb_store__pg_text(r, i, 3, s->status, sizeof s->status);
    mb_store__pg_text(r, i, 4, s->test_account_email, sizeof s->test_account_email);
    s->created_at = mb_store__pg_double(r, i, 5);
    s->updated_at = mb_store__pg_double(r, i, 6);
    s->ttl_seconds = mb_store__pg_int(r, i, 7);
    s->deadline = mb_store__pg_double(r, i, 8);
    s->uid_base = mb_store__pg_int(r, i, 9);
    s->has_upload = (int)mb_store__pg_int(r, i, 10);
    s->initialized_at = mb_store__pg_double(r, i, 11);
    mb_store__pg_text(r, i, 12, s->error, sizeof s->error);
    mb_store__pg_text(r, i, 13, s->egress, sizeof s->egress);
}

/* The record's columns in SB_COLS order, as $1..$14. */
static void sb_params(mb_pg_params *p, const mb_sandbox_rec *s)
{
    mb_store__pg_str(p, s->id);
    mb_store__pg_str(p, s->owner);
    mb_store__pg_str(p, s->benchmark);
    mb_store__pg_str(p, s->status);
    mb_store__pg_str(p, s->test_account_email);
    mb_store__pg_dbl(p, s->created_at);
    mb_store__pg_dbl(p, s->updated_at);
    mb_store__pg_i64(p, s->ttl_seconds);
    mb_store__pg_dbl(p, s->deadline);
    mb_store__pg_i64(p, s->uid_base);
    mb_store__pg_i64(p, s->has_upload);
    mb_store__pg_dbl(p, s->initialized_at);
    mb_store__pg_str(p, s->error);
    mb_store__pg_str(p, s->egress);
}

int mb_store__pg_sandbox_insert(mb_store *st, const mb_sandbox_rec *rec, mb_err *err)
{
    mb_pg_params p = {0};
    sb_params(&p, rec);
    mb_store__pg_i64(&p, st->node);
    return run(st, "INSERT INTO sandboxes(" SB_COLS ", node)"
                   " VALUES($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15)", &p,
               "insert sandbox", err);
}

int mb_store__pg_sandbox_update(mb_store *st, const mb_sandbox_rec *rec, mb_err *err)
{
    mb_pg_params p = {0};
    sb_params(&p, rec);
    STORE_LOCK(st);
    PGresult *r = mb_store__pg_run(st,
        "UPDATE sandboxes SET owner=$2, benchmark=$3, status=$4, test_account_email=$5,"
        " created_at=$6, updated_at=$7, ttl_seconds=$8, deadline=$9, uid_base=$10,"
        " has_upload=$11, initialized_at=$12, error=$13, egress=$14 WHERE id=$1", &p,
        "update sandbox", err);
    int rc = r ? MB_OK : MB_EIO;
    if (r && strcmp(PQcmdTuples(r), "0") == 0)
        rc = mb_err_set(err, MB_ENOTFOUND, "sandbox %s does not exist", rec->id);
    PQclear(r);
    STORE_UNLOCK(st);
    return rc;
}

int mb_store__pg_sandbox_get(mb_store *st, const char *id, mb_sandbox_rec *out, mb_err *err)
{
    mb_pg_params p = {0};
    mb_store__pg_str(&p, id);
    STORE_LOCK(st);
    PGresult *r = mb_store__pg_run(st, "SELECT " SB_COLS " FROM sandboxes WHERE id=$1", &p,
                                   "get sandbox", err);
    int rc = r ? MB_OK : MB_EIO;
    if (r && PQntuples(r) == 0) rc = mb_err_set(err, MB_ENOTFOUND, "sandbox %s not found", id);
    else if (r) sb_from_row(r, 0, out);
    PQclear(r);
    STORE_UNLOCK(st);
    return rc;
}

/* Runs a SELECT of SB_COLS, collecting the rows. */
static int sb_query(mb_store *st, const char *sql, const mb_pg_params *p, mb_sandbox_rec **out,
                    size_t *n, mb_err *err)
{
    *out = NULL;
    *n = 0;
    STORE_LOCK(st);
    PGresult *r = mb_store__pg_run(st, sql, p, "list sandboxes", err);
    if (r) {
        *n = (size_t)PQntuples(r);
        *out = mb_calloc(*n ? *n : 1, sizeof **out);
        for (size_t i = 0; i < *n; i++) sb_from_row(r, (int)i, &(*out)[i]);
    }
    PQclear(r);
    STORE_UNLOCK(st);
    return r ? MB_OK : MB_EIO;
}

int mb_store__pg_sandbox_list(mb_store *st, const char *owner, mb_sandbox_rec **out, size_t *n,
                              mb_err *err)
{
    mb_pg_params p = {0};
    if (owner) {
        mb_store__pg_str(&p, owner);
        return sb_query(st, "SELECT " SB_COLS " FROM sandboxes WHERE owner=$1 AND"
                            " status!='released' ORDER BY created_at", &p, out, n, err);
    }
    mb_store__pg_i64(&p, st->node);
    return sb_query(st, "SELECT " SB_COLS " FROM sandboxes WHERE node=$1 AND status!='released'"
                        " ORDER BY created_at", &p, out, n, err);
}

int mb_store__pg_sandbox_count(mb_store *st, const char *owner, size_t *n, mb_err *err)
{
    mb_pg_params p = {0};
    if (owner) mb_store__pg_str(&p, owner);
    else mb_store__pg_i64(&p, st->node);
    *n = 0;
    STORE_LOCK(st);
    PGresult *r = mb_store__pg_run(st, owner ? "SELECT count(*) FROM sandboxes WHERE owner=$1 AND"
                                               " status='occupied'"
                                             : "SELECT count(*) FROM sandboxes WHERE node=$1 AND"
                                               " status='occupied'", &p, "count sandboxes", err);
    if (r) *n = (size_t)mb_store__pg_int(r, 0, 0);
    PQclear(r);
    STORE_UNLOCK(st);
    return r ? MB_OK : MB_EIO;
}

int mb_store__pg_sandbox_expired(mb_store *st, double now, mb_sandbox_rec **out, size_t *n,
                                 mb_err *err)
{
    mb_pg_params p = {0};
    mb_store__pg_dbl(&p, now);
    mb_store__pg_i64(&p, st->node);
    return sb_query(st, "SELECT " SB_COLS " FROM sandboxes WHERE node=$2 AND status IN"
                        " ('occupied','error') AND deadline > 0 AND deadline <= $1"
                        " ORDER BY deadline", &p, out, n, err);
}

double mb_store__pg_next_deadline(mb_store *st)
{
    mb_pg_params p = {0};
    mb_store__pg_i64(&p, st->node);
    STORE_LOCK(st);
    PGresult *r = mb_store__pg_run(st, "SELECT min(deadline) FROM sandboxes WHERE node=$1 AND"
                                       " status IN ('occupied','error') AND deadline > 0", &p,
                                   "next deadline", NULL);
    double t = r ? mb_store__pg_double(r, 0, 0) : 0;
    PQclear(r);
    STORE_UNLOCK(st);
    return t;
}

int mb_store__pg_free_uid_base(mb_store *st, int64_t first, int64_t stride, int64_t *out,
                               mb_err *err)
{
    /* Nodes sharing a host take interleaved slots (store.h). */
    if (st->node >= 0) {
        first += (st->node % 16) * stride;
        stride *= 16;
    }
    mb_pg_params p = {0};
    mb_store__pg_i64(&p, first);
    mb_store__pg_i64(&p, st->node);
    STORE_LOCK(st);
    PGresult *r = mb_store__pg_run(st, "SELECT uid_base FROM sandboxes WHERE node=$2 AND"
                                       " status!='released' AND uid_base >= $1 ORDER BY uid_base",
                                   &p, "uid ranges", err);
    int64_t want = first;
    for (int i = 0; r && i < PQntuples(r); i++) {
        int64_t used = mb_store__pg_int(r, i, 0);
        if (used == want) want += stride;
        else if (used > want) break;
    }
    int rc = r ? MB_OK : MB_EIO;
    PQclear(r);
    STORE_UNLOCK(st);
    if (!rc) *out = want;
    return rc;
}

int mb_store__pg_purge_released(mb_store *st, double before, size_t max, size_t *n, mb_err *err)
{
    *n = 0;
    if (max == 0) return MB_OK;
    mb_pg_params p = {0};
    mb_store__pg_dbl(&p, before);
    mb_store__pg_i64(&p, max > INT64_MAX ? INT64_MAX : (int64_t)max);
    /* One statement, so one transaction: the batch's sandboxes and every row
     * of theirs. Rows another node is purging at the same time are skipped,
     * not waited for. The batch is picked once (a materialized CTE): as a
     * subquery of the DELETE, SKIP LOCKED could run again, skip the rows the
     * DELETE locked and pick more than max. */
    STORE_LOCK(st);
    PGresult *r = mb_store__pg_run(st,
        "WITH pick AS MATERIALIZED (SELECT id FROM sandboxes"
        "   WHERE status='released' AND updated_at < $1::double precision"
        "   ORDER BY updated_at LIMIT $2::bigint FOR UPDATE SKIP LOCKED),"
        " gone AS (DELETE FROM sandboxes WHERE id IN (SELECT id FROM pick)"
        "   AND status='released' RETURNING id),"
        " s AS (DELETE FROM servers WHERE sandbox_id IN (SELECT id FROM gone)),"
        " b AS (DELETE FROM blobs WHERE sandbox_id IN (SELECT id FROM gone)),"
        " c AS (DELETE FROM claims WHERE sandbox_id IN (SELECT id FROM gone))"
        " SELECT count(*) FROM gone", &p, "purge released sandboxes", err);
    if (r) *n = (size_t)mb_store__pg_int(r, 0, 0);
    int rc = r ? MB_OK : MB_EIO;
    PQclear(r);
    STORE_UNLOCK(st);
    return rc;
}

/* --------------------------------------------------------------- servers */

/* JSON fields as text (NULL for null); the caller frees the strings. */
static char *json_text(json_t *v)
{
    if (!v || json_is_null(v)) return NULL;
    return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

static json_t *text_json(const PGresult *r, int i, int col)
{
    if (PQgetisnull(r, i, col)) return NULL;
    return json_loads(PQgetvalue(r, i, col), JSON_DECODE_ANY, NULL);
}

static int insert_servers_locked(mb_store *st, const mb_server_rec *recs, size_t n, mb_err *err)
{
    mb_assert_held(&st->lock);
    int rc = MB_OK;
    for (size_t i = 0; !rc && i < n; i++) {
        const mb_server_rec *s = &recs[i];
        char *meta = json_text(s->metadata), *auth = json_text(s->auth_data), *tags = json_text(s->tags);
        mb_pg_params p = {0};
        mb_store__pg_str(&p, s->id);
        mb_store__pg_str(&p, s->sandbox_id);
        mb_store__pg_str(&p, s->name);
        mb_store__pg_str(&p, s->status);
        mb_store__pg_dbl(&p, s->updated_at);
        mb_store__pg_str(&p, meta);
        mb_store__pg_str(&p, auth);
        mb_store__pg_str(&p, tags);
        rc = mb_store__pg_do(st, "INSERT INTO servers(id, sandbox_id, name, status, updated_at,"
                                 " metadata, auth_data, tags) VALUES($1,$2,$3,$4,$5,$6,$7,$8)",
                             &p, "insert server", err);
        free(meta);
        free(auth);
        free(tags);
    }
    return rc;
}

int mb_store__pg_server_insert(mb_store *st, const mb_server_rec *rec, mb_err *err)
{
    STORE_LOCK(st);
    int rc = insert_servers_locked(st, rec, 1, err);
    STORE_UNLOCK(st);
    return rc;
}

int mb_store__pg_server_insert_all(mb_store *st, const mb_server_rec *recs, size_t n, mb_err *err)
{
    STORE_LOCK(st);
    int rc = mb_store__pg_do(st, "BEGIN", NULL, "begin", err);
    if (!rc) {
        rc = insert_servers_locked(st, recs, n, err);
        if (!rc) rc = mb_store__pg_do(st, "COMMIT", NULL, "commit", err);
        else mb_store__pg_do(st, "ROLLBACK", NULL, "rollback", NULL);
    }
    STORE_UNLOCK(st);
    return rc;
}

int mb_store__pg_server_update(mb_store *st, const mb_server_rec *rec, mb_err *err)
{
    char *meta = json_text(rec->metadata), *auth = json_text(rec->auth_data), *tags = json_text(rec->tags);
    mb_pg_params p = {0};
    mb_store__pg_str(&p, rec->id);
    mb_store__pg_str(&p, rec->status);
    mb_store__pg_dbl(&p, rec->updated_at);
    mb_store__pg_str(&p, meta);
    mb_store__pg_str(&p, auth);
    mb_store__pg_str(&p, tags);
    int rc = run(st, "UPDATE servers SET status=$2, updated_at=$3, metadata=$4, auth_data=$5,"
                     " tags=$6 WHERE id=$1", &p, "update server", err);
    free(meta);
    free(auth);
    free(tags);
    return rc;
}

int mb_store__pg_server_list(mb_store *st, const char *sandbox_id, mb_server_rec **out, size_t *n,
                             mb_err *err)
{
    mb_pg_params p = {0};
    mb_store__pg_str(&p, sandbox_id);
    *out = NULL;
    *n = 0;
    STORE_LOCK(st);
    PGresult *r = mb_store__pg_run(st, "SELECT id, sandbox_id, name, status, updated_at, metadata,"
                                       " auth_data, tags FROM servers WHERE sandbox_id=$1"
                                       " ORDER BY seq", &p, "list servers", err);
    if (r) {
        *n = (size_t)PQntuples(r);
        *out = mb_calloc(*n ? *n : 1, sizeof **out);
        for (size_t i = 0; i < *n; i++) {
            mb_server_rec *s = &(*out)[i];
            int row = (int)i;
            mb_store__pg_text(r, row, 0, s->id, sizeof s->id);
            mb_store__pg_text(r, row, 1, s->sandbox_id, sizeof s->sandbox_id);
            mb_store__pg_text(r, row, 2, s->name, sizeof s->name);
            mb_store__pg_text(r, row, 3, s->status, sizeof s->status);
            s->updated_at = mb_store__pg_double(r, row, 4);
            s->metadata = text_json(r, row, 5);
            s->auth_data = text_json(r, row, 6);
            s->tags = text_json(r, row, 7);
        }
    }
    PQclear(r);
    STORE_UNLOCK(st);
    return r ? MB_OK : MB_EIO;
}

/* ----------------------------------------------------------------- blobs */

int mb_store__pg_blob_put(mb_store *st, const mb_blob_rec *rec, mb_err *err)
{
    mb_pg_params p = {0};
    mb_store__pg_str(&p, rec->sandbox_id);
    mb_store__pg_str(&p, rec->kind);
    mb_store__pg_str(&p, rec->path);
    mb_store__pg_i64(&p, (int64_t)rec->size);
    mb_store__pg_dbl(&p, rec->created_at);
    return run(st, "INSERT INTO blobs(sandbox_id, kind, path, size, created_at)"
                   " VALUES($1,$2,$3,$4,$5) ON CONFLICT(sandbox_id, kind) DO UPDATE SET"
                   " path=EXCLUDED.path, size=EXCLUDED.size, created_at=EXCLUDED.created_at",
               &p, "put blob", err);
}

int mb_store__pg_blob_get(mb_store *st, const char *sandbox_id, const char *kind, mb_blob_rec *out,
                          mb_err *err)
{
    mb_pg_params p = {0};
    mb_store__pg_str(&p, sandbox_id);
    mb_store__pg_str(&p, kind);
    STORE_LOCK(st);
    PGresult *r = mb_store__pg_run(st, "SELECT path, size, created_at FROM blobs WHERE"
                                       " sandbox_id=$1 AND kind=$2", &p, "get blob", err);
    int rc = r ? MB_OK : MB_EIO;
    if (r && PQntuples(r) == 0) {
        rc = mb_err_set(err, MB_ENOTFOUND, "no %s archive for sandbox %s", kind, sandbox_id);
    } else if (r) {
        memset(out, 0, sizeof *out);
        snprintf(out->sandbox_id, sizeof out->sandbox_id, "%s", sandbox_id);
        snprintf(out->kind, sizeof out->kind, "%s", kind);
        mb_store__pg_text(r, 0, 0, out->path, sizeof out->path);
        out->size = (uint64_t)mb_store__pg_int(r, 0, 1);
        out->created_at = mb_store__pg_double(r, 0, 2);
    }
    PQclear(r);
    STORE_UNLOCK(st);
    return rc;
}

int mb_store__pg_blob_delete(mb_store *st, const char *sandbox_id, const char *kind, mb_err *err)
{
    mb_pg_params p = {0};
    mb_store__pg_str(&p, sandbox_id);
    mb_store__pg_str(&p, kind);
    return run(st, "DELETE FROM blobs WHERE sandbox_id=$1 AND kind=$2", &p, "delete blob", err);
}
