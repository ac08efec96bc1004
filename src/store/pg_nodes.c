/*
 * pg_nodes.c - the nodes of a cluster in PostgreSQL: heartbeats, the list
 * placement reads (with each node's load), and the orphan sweep, which one
 * node at a time runs under a transaction-scoped advisory lock. Ages are
 * measured on the database's clock.
 */
#include "store/store_int.h"

#include <stdlib.h>
#include <string.h>

#define PG_LOCK_SWEEP 0x6d63707862780002LL
#define PG_NOW "extract(epoch FROM clock_timestamp())"

int mb_store__pg_node_beat(mb_store *st, const mb_node_rec *rec, mb_err *err)
{
    mb_pg_params p = {0};
    mb_store__pg_i64(&p, rec->ordinal);
    mb_store__pg_str(&p, rec->url);
    mb_store__pg_i64(&p, rec->capacity);
    STORE_LOCK(st);
    int rc = mb_store__pg_do(st, "INSERT INTO nodes(ordinal, url, capacity, started_at, heartbeat_at)"
                                 " VALUES($1,$2,$3," PG_NOW "," PG_NOW ") ON CONFLICT(ordinal) DO"
                                 " UPDATE SET url=EXCLUDED.url, capacity=EXCLUDED.capacity,"
                                 " heartbeat_at=EXCLUDED.heartbeat_at", &p, "heartbeat", err);
    STORE_UNLOCK(st);
    return rc;
}

int mb_store__pg_node_list(mb_store *st, double fresh_s, mb_node_rec **out, size_t *n, mb_err *err)
{
    *out = NULL;
    *n = 0;
    STORE_LOCK(st);
    PGresult *r = mb_store__pg_run(st,
        "SELECT n.ordinal, n.url, n.capacity, " PG_NOW " - n.heartbeat_at,"
        " (SELECT count(*) FROM sandboxes x WHERE x.node = n.ordinal AND x.status != 'released')"
        " FROM nodes n ORDER BY n.ordinal", NULL, "list nodes", err);
    if (r) {
        *n = (size_t)PQntuples(r);
        *out = mb_calloc(*n ? *n : 1, sizeof **out);
        for (size_t i = 0; i < *n; i++) {
            mb_node_rec *nd = &(*out)[i];
            int row = (int)i;
            nd->ordinal = (int)mb_store__pg_int(r, row, 0);
            mb_store__pg_text(r, row, 1, nd->url, sizeof nd->url);
            nd->capacity = mb_store__pg_int(r, row, 2);
            nd->age = mb_store__pg_double(r, row, 3);
            nd->load = mb_store__pg_int(r, row, 4);
            nd->up = nd->age < fresh_s;
        }
    }
    PQclear(r);
    STORE_UNLOCK(st);
    return r ? MB_OK : MB_EIO;
}

int mb_store__pg_sweep_orphans(mb_store *st, double fresh_s, size_t *n, mb_err *err)
{
    *n = 0;
    STORE_LOCK(st);
    int rc = mb_store__pg_do(st, "BEGIN", NULL, "begin", err);
    if (rc) goto out;
    mb_pg_params l = {0};
    mb_store__pg_i64(&l, PG_LOCK_SWEEP);
    PGresult *r = mb_store__pg_run(st, "SELECT pg_try_advisory_xact_lock($1::bigint)", &l,
                                   "sweep lock", err);
    int got = r && !strcmp(PQgetvalue(r, 0, 0), "t");
    PQclear(r);
    if (!r) rc = MB_EIO;
    if (got) {
        mb_pg_params p = {0};
        mb_store__pg_dbl(&p, fresh_s);
        r = mb_store__pg_run(st,
            "UPDATE sandboxes x SET status='released', has_upload=0, updated_at=" PG_NOW
            " WHERE x.status != 'released' AND x.node >= 0 AND ("
            "  NOT EXISTS (SELECT 1 FROM nodes n WHERE n.ordinal = x.node) OR"
            "  (x.deadline > 0 AND x.deadline <= " PG_NOW " AND EXISTS (SELECT 1 FROM nodes n"
            "   WHERE n.ordinal = x.node AND " PG_NOW " - n.heartbeat_at >= $1)))",
            &p, "orphan sweep", err);
        if (r) *n = (size_t)strtoull(PQcmdTuples(r), NULL, 10);
        else rc = MB_EIO;
        PQclear(r);
    }
    if (!rc) rc = mb_store__pg_do(st, "COMMIT", NULL, "commit", err);
    else mb_store__pg_do(st, "ROLLBACK", NULL, "rollback", NULL);
out:
    STORE_UNLOCK(st);
    return rc;
}

int mb_store__pg_cluster_secret(mb_store *st, const char *proposal, char out[65], mb_err *err)
{
    out[0] = '\0';
    mb_pg_params p = {0};
    mb_store__pg_str(&p, proposal);
    STORE_LOCK(st);
    int rc = mb_store__pg_do(st, "INSERT INTO cluster_secret(id, secret) VALUES(1, $1)"
                                 " ON CONFLICT(id) DO NOTHING", &p, "cluster secret", err);
    PGresult *r = rc ? NULL : mb_store__pg_run(st, "SELECT secret FROM cluster_secret WHERE id = 1",
                                               NULL, "cluster secret", err);
    if (!rc && !r) rc = MB_EIO;
    if (r && PQntuples(r) == 1) mb_store__pg_text(r, 0, 0, out, 65);
    else if (r) rc = mb_err_set(err, MB_EIO, "the cluster secret is missing");
    PQclear(r);
    STORE_UNLOCK(st);
    if (!rc && strlen(out) != 64) rc = mb_err_set(err, MB_EIO, "the cluster secret is malformed");
    return rc;
}
