/*
 * pg_store.c - the PostgreSQL backend of mb_store (many nodes, one shared
 * database): connection, schema migrations, statement helpers, its table of
 * calls. One connection per handle, used under the handle's mutex like the
 * SQLite one; a lost connection is re-established on the next statement.
 *
 * The schema is versioned in mcpbox_schema; opening applies the missing
 * migrations in one transaction under an advisory lock, so nodes starting at
 * once do not race.
 */
#include "store/store_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* The advisory lock keys of the store (pg_advisory_xact_lock's bigint). */
#define PG_LOCK_MIGRATE 0x6d63707862780001LL

static const char *const schema_v1 =
    "CREATE TABLE keys ("
    "  id TEXT PRIMARY KEY, hash TEXT NOT NULL UNIQUE, owner TEXT NOT NULL,"
    "  name TEXT NOT NULL DEFAULT '', prefix TEXT NOT NULL DEFAULT '',"
    "  created_at DOUBLE PRECISION NOT NULL, revoked_at DOUBLE PRECISION NOT NULL DEFAULT 0);"
    "CREATE TABLE sandboxes ("
    "  id TEXT PRIMARY KEY, node INTEGER NOT NULL DEFAULT -1,"
    "  owner TEXT NOT NULL DEFAULT '', benchmark TEXT NOT NULL DEFAULT '',"
    "  status TEXT NOT NULL, test_account_email TEXT NOT NULL DEFAULT '',"
    "  created_at DOUBLE PRECISION NOT NULL, updated_at DOUBLE PRECISION NOT NULL,"
    "  ttl_seconds BIGINT NOT NULL DEFAULT -1, deadline DOUBLE PRECISION NOT NULL DEFAULT 0,"
    "  uid_base BIGINT NOT NULL DEFAULT 0, has_upload INTEGER NOT NULL DEFAULT 0,"
    "  initialized_at DOUBLE PRECISION NOT NULL DEFAULT 0, error TEXT NOT NULL DEFAULT '');"
    "CREATE INDEX sandboxes_owner ON sandboxes(owner, status);"
    "CREATE INDEX sandboxes_node ON sandboxes(node, status, deadline);"
    "CREATE TABLE servers ("
    "  id TEXT PRIMARY KEY, sandbox_id TEXT NOT NULL, name TEXT NOT NULL,"
    "  status TEXT NOT NULL, updated_at DOUBLE PRECISION NOT NULL,"
    "  metadata TEXT, auth_data TEXT, tags TEXT, seq BIGSERIAL);"
    "CREATE INDEX servers_sandbox ON servers(sandbox_id, seq);"
    "CREATE TABLE blobs ("
    "  sandbox_id TEXT NOT NULL, kind TEXT NOT NULL, path TEXT NOT NULL,"
    "  size BIGINT NOT NULL, created_at DOUBLE PRECISION NOT NULL, PRIMARY KEY(sandbox_id, kind));"
    "CREATE TABLE claims ("
    "  kind TEXT NOT NULL, value TEXT NOT NULL, sandbox_id TEXT NOT NULL,"
    "  created_at DOUBLE PRECISION NOT NULL, PRIMARY KEY(kind, value));"
    "CREATE INDEX claims_sandbox ON claims(sandbox_id, kind);"
    "CREATE TABLE nodes ("
    "  ordinal INTEGER PRIMARY KEY, url TEXT NOT NULL, capacity BIGINT NOT NULL,"
    "  started_at DOUBLE PRECISION NOT NULL, heartbeat_at DOUBLE PRECISION NOT NULL);";

/* migrations[i] takes a database from version i to i + 1. */
/* v2: the acquire request's egress allow-list. */
static const char *const schema_v2 =
    "ALTER TABLE sandboxes ADD COLUMN egress TEXT NOT NULL DEFAULT '';";

/* v3: the nodes' shared secret (one row). */
static const char *const schema_v3 =
    "CREATE TABLE cluster_secret (id INTEGER PRIMARY KEY CHECK (id = 1), secret TEXT NOT NULL);";

/* v4: released records by age, for the purge (partial: live records do not touch it). */
static const char *const schema_v4 =
    "CREATE INDEX sandboxes_released ON sandboxes(updated_at) WHERE status='released';";

static const char *const migrations[] = {schema_v1, schema_v2, schema_v3, schema_v4};
#define N_MIGRATIONS (sizeof migrations / sizeof *migrations)

void mb_store__pg_str(mb_pg_params *p, const char *s)
{
    mb_assert(p->n < MB_PG_MAX_PARAMS);
    p->v[p->n++] = s;
}

void mb_store__pg_dbl(mb_pg_params *p, double v)
{
    mb_assert(p->n < MB_PG_MAX_PARAMS);
    snprintf(p->num[p->n], sizeof p->num[0], "%.17g", v);
    p->v[p->n] = p->num[p->n];
    p->n++;
}

void mb_store__pg_i64(mb_pg_params *p, int64_t v)
{
    mb_assert(p->n < MB_PG_MAX_PARAMS);
    snprintf(p->num[p->n], sizeof p->num[0], "%" PRId64, v);
    p->v[p->n] = p->num[p->n];
    p->n++;
}

/* The server's message, one line, valid UTF-8, for an error a person reads. */
static int pg_fail(mb_err *err, const char *what, const char *msg)
{
    char line[400];
    snprintf(line, sizeof line, "%s", msg ? msg : "unknown error");
    for (char *c = line; *c; c++)
        if (*c == '\n' || *c == '\r') *c = ' ';
    size_t n = strlen(line);
    while (n && line[n - 1] == ' ') line[--n] = '\0';
    char *valid = mb_utf8_repair(line, n, NULL);
    int rc = mb_err_set(err, MB_EIO, "state database: %s failed: %s", what, valid);
    free(valid);
    return rc;
}

PGresult *mb_store__pg_run(mb_store *st, const char *sql, const mb_pg_params *p,
                           const char *what, mb_err *err)
{
    mb_assert_held(&st->lock);
    for (int attempt = 0;; attempt++) {
        if (PQstatus(st->pg) != CONNECTION_OK) PQreset(st->pg);
        /* Without parameters, the simple protocol (several statements allowed). */
        PGresult *r = p ? PQexecParams(st->pg, sql, p->n, NULL, p->v, NULL, NULL, 0)
                        : PQexec(st->pg, sql);
        ExecStatusType t = PQresultStatus(r);
        if (t == PGRES_COMMAND_OK || t == PGRES_TUPLES_OK) return r;
        /* Only a statement that never reached the server is tried again. */
        int lost = PQstatus(st->pg) != CONNECTION_OK;
        if (!lost || attempt == 1) {
            pg_fail(err, what, r ? PQresultErrorMessage(r) : PQerrorMessage(st->pg));
            PQclear(r);
            return NULL;
        }
        PQclear(r);
    }
}

int mb_store__pg_do(mb_store *st, const char *sql, const mb_pg_params *p, const char *what,
                    mb_err *err)
{
    PGresult *r = mb_store__pg_run(st, sql, p, what, err);
    if (!r) return MB_EIO;
    PQclear(r);
    return MB_OK;
}

void mb_store__pg_text(const PGresult *r, int row, int col, char *dst, size_t cap)
{
    snprintf(dst, cap, "%s", PQgetisnull(r, row, col) ? "" : PQgetvalue(r, row, col));
}

double mb_store__pg_double(const PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? 0 : strtod(PQgetvalue(r, row, col), NULL);
}

int64_t mb_store__pg_int(const PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? 0 : strtoll(PQgetvalue(r, row, col), NULL, 10);
}

/* Brings the schema up to date, in one transaction under the migration lock. */
static int migrate_locked(mb_store *st, mb_err *err)
{
    mb_assert_held(&st->lock);
    int rc = mb_store__pg_do(st, "BEGIN", NULL, "begin", err);
    if (rc) return rc;
    mb_pg_params p = {0};
    mb_store__pg_i64(&p, PG_LOCK_MIGRATE);
    rc = mb_store__pg_do(st, "SELECT pg_advisory_xact_lock($1::bigint)", &p, "lock", err);
    if (!rc) rc = mb_store__pg_do(st, "CREATE TABLE IF NOT EXISTS mcpbox_schema(version INTEGER NOT NULL)",
                                  NULL, "schema table", err);
    int64_t version = 0;
    if (!rc) {
        PGresult *r = mb_store__pg_run(st, "SELECT max(version) FROM mcpbox_schema", NULL,
                                       "schema version", err);
        if (!r) rc = MB_EIO;
        else version = mb_store__pg_int(r, 0, 0);
        PQclear(r);
    }
    for (int64_t v = version; !rc && v < (int64_t)N_MIGRATIONS; v++) {
        rc = mb_store__pg_do(st, migrations[v], NULL, "migration", err);
        mb_pg_params q = {0};
        mb_store__pg_i64(&q, v + 1);
        if (!rc) rc = mb_store__pg_do(st, "DELETE FROM mcpbox_schema", NULL, "schema version", err);
        if (!rc) rc = mb_store__pg_do(st, "INSERT INTO mcpbox_schema VALUES($1::integer)", &q,
                                      "schema version", err);
    }
    if (!rc) return mb_store__pg_do(st, "COMMIT", NULL, "commit", err);
    mb_store__pg_do(st, "ROLLBACK", NULL, "rollback", NULL);
    return rc;
}

int mb_store__pg_open(mb_store *st, const char *conninfo, mb_err *err)
{
    st->ops = &mb_store__pg_ops;
    st->pg = PQconnectdb(conninfo);
    if (!st->pg || PQstatus(st->pg) != CONNECTION_OK)
        return pg_fail(err, "connect", st->pg ? PQerrorMessage(st->pg) : "out of memory");
    /* Notices (e.g. "relation exists, skipping") are not errors. */
    PQsetNoticeProcessor(st->pg, NULL, NULL);
    STORE_LOCK(st);
    int rc = mb_store__pg_do(st, "SET client_min_messages = warning", NULL, "settings", err);
    if (!rc) rc = migrate_locked(st, err);
    STORE_UNLOCK(st);
    return rc;
}

void mb_store__pg_close(mb_store *st)
{
    if (st->pg) PQfinish(st->pg);
    st->pg = NULL;
}

const mb_store_ops mb_store__pg_ops = {
#define MB_STORE_OP_ENTRY(r, name, params, args) .name = mb_store__pg_##name,
    MB_STORE_OPS(MB_STORE_OP_ENTRY)
#undef MB_STORE_OP_ENTRY
};
