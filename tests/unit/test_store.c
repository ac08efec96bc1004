/*
 * test_store.c - unit tests for the state store, each run against both
 * backends: SQLite, and PostgreSQL (a throwaway server tests/pg/pgctl starts,
 * or the one MCPBOX_TEST_PG names; each test starts from an empty schema).
 * The PostgreSQL group adds what only many nodes have: nodes, node-scoped
 * queries, the orphan sweep, and two nodes racing for the same claims.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"

#include <sqlite3.h>

#include <libpq-fe.h>
#include <pthread.h>

static char *pg_url; /* NULL while the SQLite group runs */

typedef struct fixture {
    char dir[64];
    char *path;
    mb_store *st;
} fixture;

static int setup(void **state)
{
    fixture *f = mb_calloc(1, sizeof *f);
    snprintf(f->dir, sizeof f->dir, "/tmp/mbstoreXXXXXX");
    if (!mkdtemp(f->dir)) return -1;
    if (pg_url) {
        /* An empty schema for each test. */
        PGconn *c = PQconnectdb(pg_url);
        PGresult *r = PQexec(c, "SET client_min_messages=warning; DROP SCHEMA public CASCADE;"
                                " CREATE SCHEMA public");
        int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
        if (!ok) fprintf(stderr, "reset: %s", PQerrorMessage(c));
        PQclear(r);
        PQfinish(c);
        if (!ok) return -1;
    }
    f->path = pg_url ? mb_strdup(pg_url) : mb_asprintf("%s/t.db", f->dir);
    mb_err err = {0};
    if (mb_store_open(f->path, &f->st, &err) != MB_OK) {
        fprintf(stderr, "setup: %s\n", err.msg);
        free(f->path);
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    mb_store_close(f->st);
    mb_rm_rf(f->dir, NULL);
    free(f->path);
    free(f);
    return 0;
}

static mb_sandbox_rec sample(const char *owner, double deadline)
{
    mb_sandbox_rec r = {0};
    mb_uuid4(r.id);
    snprintf(r.owner, sizeof r.owner, "%s", owner);
    snprintf(r.status, sizeof r.status, "occupied");
    r.created_at = r.updated_at = mb_now();
    r.ttl_seconds = deadline > 0 ? 60 : -1;
    r.deadline = deadline;
    return r;
}

static void test_keys(void **state)
{
    fixture *f = *state;
    mb_key_rec k = {0}, got;
    mb_uuid4(k.id);
    snprintf(k.owner, sizeof k.owner, "alice");
    snprintf(k.prefix, sizeof k.prefix, "mbx_abcdef12");
    k.created_at = mb_now();
    assert_int_equal(mb_store_key_add(f->st, "hash1", &k, NULL), MB_OK);
    /* the same digest again is a no-op, not an error */
    mb_key_rec k2 = k;
    mb_uuid4(k2.id);
    assert_int_equal(mb_store_key_add(f->st, "hash1", &k2, NULL), MB_OK);
    assert_int_equal(mb_store_key_find(f->st, "hash1", &got, NULL), MB_OK);
    assert_string_equal(got.id, k.id);
    assert_string_equal(got.owner, "alice");
    assert_int_equal(mb_store_key_find(f->st, "nope", &got, NULL), MB_ENOTFOUND);
    mb_err err;
    assert_int_equal(mb_store_key_revoke(f->st, "mbx_a", &err), MB_ENOTFOUND); /* too short */
    assert_int_equal(mb_store_key_revoke(f->st, "mbx_abcd", &err), MB_OK);
    assert_int_equal(mb_store_key_find(f->st, "hash1", &got, &err), MB_EDENIED);
    assert_int_equal(mb_store_key_revoke(f->st, k.id, &err), MB_ENOTFOUND); /* already */
    mb_key_rec *all;
    size_t n;
    assert_int_equal(mb_store_key_list(f->st, &all, &n, NULL), MB_OK);
    assert_int_equal(n, 1);
    assert_true(all[0].revoked_at > 0);
    free(all);
}

static void test_sandbox_crud_and_owners(void **state)
{
    fixture *f = *state;
    mb_sandbox_rec a = sample("alice", 0), b = sample("bob", 0), got;
    assert_int_equal(mb_store_sandbox_insert(f->st, &a, NULL), MB_OK);
    assert_int_equal(mb_store_sandbox_insert(f->st, &b, NULL), MB_OK);
    assert_int_equal(mb_store_sandbox_get(f->st, a.id, &got, NULL), MB_OK);
    assert_string_equal(got.owner, "alice");
    assert_int_equal(got.ttl_seconds, -1);
    assert_string_equal(got.egress, "");
    snprintf(b.egress, sizeof b.egress, "[\"example.com\"]");
    assert_int_equal(mb_store_sandbox_update(f->st, &b, NULL), MB_OK);
    assert_int_equal(mb_store_sandbox_get(f->st, b.id, &got, NULL), MB_OK);
    assert_string_equal(got.egress, "[\"example.com\"]");
    mb_sandbox_rec *list;
    size_t n;
    assert_int_equal(mb_store_sandbox_list(f->st, "alice", &list, &n, NULL), MB_OK);
    assert_int_equal(n, 1);
    assert_string_equal(list[0].id, a.id);
    free(list);
    snprintf(a.status, sizeof a.status, "released");
    assert_int_equal(mb_store_sandbox_update(f->st, &a, NULL), MB_OK);
    assert_int_equal(mb_store_sandbox_list(f->st, NULL, &list, &n, NULL), MB_OK);
    assert_int_equal(n, 1);
    assert_string_equal(list[0].id, b.id);
    free(list);
    /* occupied ones only, of one owner or of everyone */
    assert_int_equal(mb_store_sandbox_count(f->st, NULL, &n, NULL), MB_OK);
    assert_int_equal(n, 1);
    mb_sandbox_rec idle = sample("", 0);
    snprintf(idle.status, sizeof idle.status, "idle");
    assert_int_equal(mb_store_sandbox_insert(f->st, &idle, NULL), MB_OK);
    mb_sandbox_rec c = sample("carol", 0);
    assert_int_equal(mb_store_sandbox_insert(f->st, &c, NULL), MB_OK);
    assert_int_equal(mb_store_sandbox_count(f->st, NULL, &n, NULL), MB_OK);
    assert_int_equal(n, 2);
    assert_int_equal(mb_store_sandbox_count(f->st, "carol", &n, NULL), MB_OK);
    assert_int_equal(n, 1);
    mb_sandbox_rec ghost = sample("x", 0);
    assert_int_equal(mb_store_sandbox_update(f->st, &ghost, NULL), MB_ENOTFOUND);
    assert_int_equal(mb_store_sandbox_get(f->st, ghost.id, &got, NULL), MB_ENOTFOUND);
}

static void test_deadlines(void **state)
{
    fixture *f = *state;
    double now = mb_now();
    mb_sandbox_rec past = sample("o", now - 5), soon = sample("o", now + 100),
                   never = sample("o", 0);
    mb_store_sandbox_insert(f->st, &past, NULL);
    mb_store_sandbox_insert(f->st, &soon, NULL);
    mb_store_sandbox_insert(f->st, &never, NULL);
    mb_sandbox_rec *exp;
    size_t n;
    assert_int_equal(mb_store_sandbox_expired(f->st, now, &exp, &n, NULL), MB_OK);
    assert_int_equal(n, 1);
    assert_string_equal(exp[0].id, past.id);
    free(exp);
    assert_true(mb_store_next_deadline(f->st) == past.deadline);
    snprintf(past.status, sizeof past.status, "released");
    mb_store_sandbox_update(f->st, &past, NULL);
    assert_true(mb_store_next_deadline(f->st) == soon.deadline);
}

static void test_uid_ranges(void **state)
{
    fixture *f = *state;
    int64_t base;
    assert_int_equal(mb_store_free_uid_base(f->st, 1000, 10, &base, NULL), MB_OK);
    assert_int_equal(base, 1000);
    mb_sandbox_rec a = sample("o", 0), b = sample("o", 0), c = sample("o", 0);
    a.uid_base = 1000;
    b.uid_base = 1010;
    c.uid_base = 1030;
    mb_store_sandbox_insert(f->st, &a, NULL);
    mb_store_sandbox_insert(f->st, &b, NULL);
    mb_store_sandbox_insert(f->st, &c, NULL);
    assert_int_equal(mb_store_free_uid_base(f->st, 1000, 10, &base, NULL), MB_OK);
    assert_int_equal(base, 1020);
    snprintf(a.status, sizeof a.status, "released");
    mb_store_sandbox_update(f->st, &a, NULL);
    assert_int_equal(mb_store_free_uid_base(f->st, 1000, 10, &base, NULL), MB_OK);
    assert_int_equal(base, 1000);
}

static void test_servers_and_blobs(void **state)
{
    fixture *f = *state;
    mb_sandbox_rec sb = sample("o", 0);
    mb_store_sandbox_insert(f->st, &sb, NULL);
    const char *names[] = {"git", "filesystem", "terminal"};
    for (int i = 0; i < 3; i++) {
        mb_server_rec s = {0};
        mb_uuid4(s.id);
        snprintf(s.sandbox_id, sizeof s.sandbox_id, "%s", sb.id);
        snprintf(s.name, sizeof s.name, "%s", names[i]);
        snprintf(s.status, sizeof s.status, "occupied");
        s.metadata = i == 1 ? json_pack("{s:s}", "tools_hash", "abc") : NULL;
        assert_int_equal(mb_store_server_insert(f->st, &s, NULL), MB_OK);
        json_decref(s.metadata);
    }
    mb_server_rec *list;
    size_t n;
    assert_int_equal(mb_store_server_list(f->st, sb.id, &list, &n, NULL), MB_OK);
    assert_int_equal(n, 3);
    for (int i = 0; i < 3; i++) assert_string_equal(list[i].name, names[i]);
    assert_null(list[0].metadata);
    assert_string_equal(json_string_value(json_object_get(list[1].metadata, "tools_hash")), "abc");
    list[0].metadata = json_pack("{s:b}", "ready", 1);
    assert_int_equal(mb_store_server_update(f->st, &list[0], NULL), MB_OK);
    mb_server_recs_free(list, n);
    assert_int_equal(mb_store_server_list(f->st, sb.id, &list, &n, NULL), MB_OK);
    assert_true(json_is_true(json_object_get(list[0].metadata, "ready")));
    mb_server_recs_free(list, n);

    mb_blob_rec b = {0}, got;
    snprintf(b.sandbox_id, sizeof b.sandbox_id, "%s", sb.id);
    snprintf(b.kind, sizeof b.kind, "upload");
    snprintf(b.path, sizeof b.path, "/x/upload.tar.gz");
    b.size = 1234;
    assert_int_equal(mb_store_blob_put(f->st, &b, NULL), MB_OK);
    b.size = 99;
    assert_int_equal(mb_store_blob_put(f->st, &b, NULL), MB_OK); /* replaces */
    assert_int_equal(mb_store_blob_get(f->st, sb.id, "upload", &got, NULL), MB_OK);
    assert_int_equal(got.size, 99);
    assert_int_equal(mb_store_blob_delete(f->st, sb.id, "upload", NULL), MB_OK);
    assert_int_equal(mb_store_blob_get(f->st, sb.id, "upload", &got, NULL), MB_ENOTFOUND);
}

static void test_claims(void **state)
{
    fixture *f = *state;
    mb_sandbox_rec a = sample("alice", 0), b = sample("bob", 0);
    mb_store_sandbox_insert(f->st, &a, NULL);
    mb_store_sandbox_insert(f->st, &b, NULL);
    char holder[37] = "";
    mb_err err = {0};
    assert_int_equal(mb_store_claim_take(f->st, "mail-domain", "mcp1.com", a.id, holder, NULL), MB_OK);
    /* taking it again is idempotent; another live sandbox is refused and told who holds it */
    assert_int_equal(mb_store_claim_take(f->st, "mail-domain", "mcp1.com", a.id, holder, NULL), MB_OK);
    assert_int_equal(mb_store_claim_take(f->st, "mail-domain", "mcp1.com", b.id, holder, &err),
                     MB_ECONFLICT);
    assert_string_equal(holder, a.id);
    assert_non_null(strstr(err.msg, "mcp1.com"));
    /* kinds are separate name spaces; values are compared exactly */
    assert_int_equal(mb_store_claim_take(f->st, "gcp-project", "mcp1.com", b.id, NULL, NULL), MB_OK);
    assert_int_equal(mb_store_claim_take(f->st, "mail-domain", "MCP1.com", b.id, NULL, NULL), MB_OK);
    assert_int_equal(mb_store_claim_take(f->st, "mail-domain", "mcp2.com", a.id, NULL, NULL), MB_OK);
    char **vals = NULL;
    assert_int_equal(mb_store_claim_list(f->st, a.id, "mail-domain", &vals, NULL), MB_OK);
    assert_int_equal(mb_strv_len((const char *const *)vals), 2);
    assert_string_equal(vals[0], "mcp1.com");
    assert_string_equal(vals[1], "mcp2.com");
    mb_strv_free(vals);
    assert_int_equal(mb_store_claim_list(f->st, a.id, "canvas-tokens", &vals, NULL), MB_OK);
    assert_non_null(vals);
    assert_null(vals[0]);
    mb_strv_free(vals);
    assert_int_equal(mb_store_claim_holder(f->st, "mail-domain", "mcp1.com", holder, NULL), MB_OK);
    assert_string_equal(holder, a.id);
    /* a released holder's claim is stale: the holder lookup misses, the next taker wins */
    snprintf(a.status, sizeof a.status, "released");
    mb_store_sandbox_update(f->st, &a, NULL);
    assert_int_equal(mb_store_claim_holder(f->st, "mail-domain", "mcp1.com", holder, NULL),
                     MB_ENOTFOUND);
    assert_int_equal(mb_store_claim_take(f->st, "mail-domain", "mcp1.com", b.id, NULL, NULL), MB_OK);
    assert_int_equal(mb_store_claim_holder(f->st, "mail-domain", "mcp1.com", holder, NULL), MB_OK);
    assert_string_equal(holder, b.id);
    /* a claim by a sandbox never recorded is stale too */
    assert_int_equal(mb_store_claim_take(f->st, "x", "v", "no-such-sandbox", NULL, NULL), MB_OK);
    assert_int_equal(mb_store_claim_take(f->st, "x", "v", b.id, NULL, NULL), MB_OK);
    /* drop by kind, then all */
    assert_int_equal(mb_store_claim_drop(f->st, b.id, "gcp-project", NULL), MB_OK);
    assert_int_equal(mb_store_claim_holder(f->st, "gcp-project", "mcp1.com", holder, NULL),
                     MB_ENOTFOUND);
    assert_int_equal(mb_store_claim_holder(f->st, "mail-domain", "MCP1.com", holder, NULL), MB_OK);
    assert_int_equal(mb_store_claim_drop(f->st, b.id, NULL, NULL), MB_OK);
    assert_int_equal(mb_store_claim_holder(f->st, "mail-domain", "MCP1.com", holder, NULL),
                     MB_ENOTFOUND);
}

static void test_persists_across_reopen(void **state)
{
    fixture *f = *state;
    mb_sandbox_rec a = sample("alice", mb_now() + 1000);
    mb_store_sandbox_insert(f->st, &a, NULL);
    mb_store_close(f->st);
    assert_int_equal(mb_store_open(f->path, &f->st, NULL), MB_OK);
    mb_sandbox_rec got;
    assert_int_equal(mb_store_sandbox_get(f->st, a.id, &got, NULL), MB_OK);
    assert_true(got.deadline == a.deadline);
}

/* A sandbox of status `status`, last updated `age` seconds ago, with two
 * servers, a blob and a claim. */
static mb_sandbox_rec aged(fixture *f, const char *status, double age, const char *claim)
{
    mb_sandbox_rec r = sample("alice", 0);
    snprintf(r.status, sizeof r.status, "%s", status);
    if (!strcmp(status, "idle")) r.owner[0] = '\0';
    r.created_at = r.updated_at = mb_now() - age;
    assert_int_equal(mb_store_sandbox_insert(f->st, &r, NULL), MB_OK);
    for (int i = 0; i < 2; i++) {
        mb_server_rec s = {0};
        mb_uuid4(s.id);
        snprintf(s.sandbox_id, sizeof s.sandbox_id, "%s", r.id);
        snprintf(s.name, sizeof s.name, i ? "git" : "filesystem");
        snprintf(s.status, sizeof s.status, "%s", status);
        assert_int_equal(mb_store_server_insert(f->st, &s, NULL), MB_OK);
    }
    mb_blob_rec b = {0};
    snprintf(b.sandbox_id, sizeof b.sandbox_id, "%s", r.id);
    snprintf(b.kind, sizeof b.kind, "dump");
    snprintf(b.path, sizeof b.path, "/x/%s/dump.tar.gz", r.id);
    assert_int_equal(mb_store_blob_put(f->st, &b, NULL), MB_OK);
    /* taken while live, as acquire does; a released holder's claim stays
     * until a purge or another taker */
    char *status_now = mb_strdup(r.status);
    snprintf(r.status, sizeof r.status, "occupied");
    mb_store_sandbox_update(f->st, &r, NULL);
    assert_int_equal(mb_store_claim_take(f->st, "mail-domain", claim, r.id, NULL, NULL), MB_OK);
    snprintf(r.status, sizeof r.status, "%s", status_now);
    free(status_now);
    assert_int_equal(mb_store_sandbox_update(f->st, &r, NULL), MB_OK);
    return r;
}

static int has_rows(fixture *f, const mb_sandbox_rec *r)
{
    mb_sandbox_rec got;
    mb_server_rec *servers;
    mb_blob_rec blob;
    char **claims;
    size_t n;
    int sandbox = mb_store_sandbox_get(f->st, r->id, &got, NULL) == MB_OK;
    assert_int_equal(mb_store_server_list(f->st, r->id, &servers, &n, NULL), MB_OK);
    mb_server_recs_free(servers, n);
    int blob_ok = mb_store_blob_get(f->st, r->id, "dump", &blob, NULL) == MB_OK;
    assert_int_equal(mb_store_claim_list(f->st, r->id, "mail-domain", &claims, NULL), MB_OK);
    size_t nclaims = mb_strv_len((const char *const *)claims);
    mb_strv_free(claims);
    /* all or nothing */
    assert_int_equal(sandbox ? 2 : 0, n);
    assert_int_equal(sandbox, blob_ok);
    assert_int_equal(sandbox ? 1 : 0, nclaims);
    return sandbox;
}

/* The purge removes released records older than the cutoff with every row
 * of theirs, oldest first and in batches; records of any other status stay
 * whatever their age, and so do released ones younger than the cutoff. */
static void test_purge_released(void **state)
{
    fixture *f = *state;
    const double day = 86400;
    mb_sandbox_rec old[5], young = aged(f, "released", 10, "young.com");
    const char *claims[] = {"o0.com", "o1.com", "o2.com", "o3.com", "o4.com"};
    for (int i = 0; i < 5; i++) old[i] = aged(f, "released", 3 * day + i * 100, claims[i]);
    mb_sandbox_rec live = aged(f, "occupied", 30 * day, "live.com");
    mb_sandbox_rec idle = aged(f, "idle", 30 * day, "idle.com");
    mb_sandbox_rec broken = aged(f, "error", 30 * day, "error.com");
    size_t n = 99;
    mb_err err = {0};
    /* nothing before the oldest; a batch of 0 does nothing */
    assert_int_equal(mb_store_purge_released(f->st, mb_now() - 4 * day, 10, &n, &err), MB_OK);
    assert_int_equal(n, 0);
    assert_int_equal(mb_store_purge_released(f->st, mb_now(), 0, &n, &err), MB_OK);
    assert_int_equal(n, 0);
    for (int i = 0; i < 5; i++) assert_true(has_rows(f, &old[i]));
    /* a batch of 2 takes the two oldest */
    double cutoff = mb_now() - day;
    assert_int_equal(mb_store_purge_released(f->st, cutoff, 2, &n, &err), MB_OK);
    assert_int_equal(n, 2);
    assert_false(has_rows(f, &old[4]));
    assert_false(has_rows(f, &old[3]));
    assert_true(has_rows(f, &old[2]));
    /* the rest: a full batch, then one short of it */
    assert_int_equal(mb_store_purge_released(f->st, cutoff, 2, &n, &err), MB_OK);
    assert_int_equal(n, 2);
    assert_int_equal(mb_store_purge_released(f->st, cutoff, 2, &n, &err), MB_OK);
    assert_int_equal(n, 1);
    assert_int_equal(mb_store_purge_released(f->st, cutoff, 2, &n, &err), MB_OK);
    assert_int_equal(n, 0);
    for (int i = 0; i < 5; i++) {
        mb_sandbox_rec got;
        assert_false(has_rows(f, &old[i]));
        assert_int_equal(mb_store_sandbox_get(f->st, old[i].id, &got, NULL), MB_ENOTFOUND);
    }
    /* younger than the cutoff, or not released: kept, every row */
    assert_true(has_rows(f, &young));
    assert_true(has_rows(f, &live));
    assert_true(has_rows(f, &idle));
    assert_true(has_rows(f, &broken));
    /* a cutoff in the future takes the young tombstone, still nothing live */
    assert_int_equal(mb_store_purge_released(f->st, mb_now() + day, 1000, &n, &err), MB_OK);
    assert_int_equal(n, 1);
    assert_false(has_rows(f, &young));
    assert_true(has_rows(f, &live));
    assert_true(has_rows(f, &idle));
    assert_true(has_rows(f, &broken));
    mb_sandbox_rec *recs;
    assert_int_equal(mb_store_sandbox_list(f->st, NULL, &recs, &n, NULL), MB_OK);
    assert_int_equal(n, 3);
    free(recs);
    /* a purged sandbox's claim is free for another */
    char holder[37];
    assert_int_equal(mb_store_claim_holder(f->st, "mail-domain", "o0.com", holder, NULL),
                     MB_ENOTFOUND);
    assert_int_equal(mb_store_claim_take(f->st, "mail-domain", "o0.com", live.id, NULL, NULL),
                     MB_OK);
    assert_int_equal(mb_store_claim_take(f->st, "mail-domain", "live.com", idle.id, holder, NULL),
                     MB_ECONFLICT);
}

/* A backlog far beyond one batch goes in batches, each its own short
 * transaction: the store answers other calls between them. */
static void test_purge_backlog(void **state)
{
    fixture *f = *state;
    enum { N = 1200 };
    mb_sandbox_rec keep = sample("alice", 0);
    assert_int_equal(mb_store_sandbox_insert(f->st, &keep, NULL), MB_OK);
    for (int i = 0; i < N; i++) {
        mb_sandbox_rec r = sample("alice", 0);
        snprintf(r.status, sizeof r.status, "released");
        r.updated_at = mb_now() - 1000 - i;
        assert_int_equal(mb_store_sandbox_insert(f->st, &r, NULL), MB_OK);
    }
    size_t n, total = 0, rounds = 0;
    do {
        assert_int_equal(mb_store_purge_released(f->st, mb_now() - 500, 500, &n, NULL), MB_OK);
        total += n;
        rounds++;
        mb_sandbox_rec got;
        assert_int_equal(mb_store_sandbox_get(f->st, keep.id, &got, NULL), MB_OK);
    } while (n == 500);
    assert_int_equal(total, N);
    assert_int_equal(rounds, 3);
}

/* ------------------------------------------------- PostgreSQL: many nodes */

static void test_pg_nodes_and_scope(void **state)
{
    fixture *f = *state;
    mb_store *other = NULL;
    assert_int_equal(mb_store_open(f->path, &other, NULL), MB_OK);
    mb_store_set_node(f->st, 0);
    mb_store_set_node(other, 1);
    mb_node_rec n0 = {.ordinal = 0, .capacity = 10}, n1 = {.ordinal = 1, .capacity = 20};
    snprintf(n0.url, sizeof n0.url, "http://127.0.0.1:1");
    snprintf(n1.url, sizeof n1.url, "http://127.0.0.1:2");
    assert_int_equal(mb_store_node_beat(f->st, &n0, NULL), MB_OK);
    assert_int_equal(mb_store_node_beat(other, &n1, NULL), MB_OK);
    /* each node's sandboxes are its own for its own work, everyone's for owners */
    mb_sandbox_rec a = sample("alice", mb_now() - 1), b = sample("alice", mb_now() - 1);
    assert_int_equal(mb_store_free_uid_base(f->st, 1000, 10, &a.uid_base, NULL), MB_OK);
    assert_int_equal(mb_store_free_uid_base(other, 1000, 10, &b.uid_base, NULL), MB_OK);
    assert_int_equal(a.uid_base, 1000);
    assert_int_equal(b.uid_base, 1010); /* interleaved slots: node 1 starts one stride up */
    assert_int_equal(mb_store_sandbox_insert(f->st, &a, NULL), MB_OK);
    assert_int_equal(mb_store_sandbox_insert(other, &b, NULL), MB_OK);
    int64_t next;
    assert_int_equal(mb_store_free_uid_base(f->st, 1000, 10, &next, NULL), MB_OK);
    assert_int_equal(next, 1160);
    mb_sandbox_rec *recs;
    size_t n;
    assert_int_equal(mb_store_sandbox_list(f->st, NULL, &recs, &n, NULL), MB_OK);
    assert_int_equal(n, 1);
    assert_string_equal(recs[0].id, a.id);
    free(recs);
    assert_int_equal(mb_store_sandbox_list(other, "alice", &recs, &n, NULL), MB_OK);
    assert_int_equal(n, 2);
    free(recs);
    assert_int_equal(mb_store_sandbox_expired(other, mb_now(), &recs, &n, NULL), MB_OK);
    assert_int_equal(n, 1);
    assert_string_equal(recs[0].id, b.id);
    free(recs);
    size_t count;
    assert_int_equal(mb_store_sandbox_count(f->st, "alice", &count, NULL), MB_OK);
    assert_int_equal(count, 2);
    assert_int_equal(mb_store_sandbox_count(f->st, NULL, &count, NULL), MB_OK);
    assert_int_equal(count, 1); /* this node's */
    /* the list tells load and liveness */
    mb_node_rec *nodes;
    assert_int_equal(mb_store_node_list(f->st, 5.0, &nodes, &n, NULL), MB_OK);
    assert_int_equal(n, 2);
    assert_int_equal(nodes[0].ordinal, 0);
    assert_int_equal(nodes[0].capacity, 10);
    assert_int_equal(nodes[0].load, 1);
    assert_true(nodes[0].up);
    assert_string_equal(nodes[1].url, "http://127.0.0.1:2");
    assert_int_equal(nodes[1].capacity, 20);
    free(nodes);
    assert_int_equal(mb_store_node_list(f->st, 0.0, &nodes, &n, NULL), MB_OK);
    assert_false(nodes[0].up);
    free(nodes);
    /* the sweep: with every node fresh nothing is an orphan; node 1 silent
     * (fresh_s 0) loses its expired sandbox, node 0's own is its reaper's */
    assert_int_equal(mb_store_sweep_orphans(f->st, 60.0, &n, NULL), MB_OK);
    assert_int_equal(n, 0);
    mb_store_node_beat(f->st, &n0, NULL);
    mb_sandbox_rec c = sample("carol", 0);
    assert_int_equal(mb_store_sandbox_insert(other, &c, NULL), MB_OK);
    assert_int_equal(mb_store_sweep_orphans(f->st, 0.0, &n, NULL), MB_OK);
    assert_int_equal(n, 2); /* a (node 0, 0 s fresh) and b expired; c has no TTL */
    mb_sandbox_rec got;
    assert_int_equal(mb_store_sandbox_get(f->st, b.id, &got, NULL), MB_OK);
    assert_string_equal(got.status, "released");
    assert_int_equal(mb_store_sandbox_get(f->st, c.id, &got, NULL), MB_OK);
    assert_string_equal(got.status, "occupied");
    /* a sandbox of a node never recorded is an orphan at once */
    mb_store_set_node(other, 7);
    mb_sandbox_rec d = sample("dave", 0);
    assert_int_equal(mb_store_sandbox_insert(other, &d, NULL), MB_OK);
    assert_int_equal(mb_store_sweep_orphans(f->st, 60.0, &n, NULL), MB_OK);
    assert_int_equal(n, 1);
    assert_int_equal(mb_store_sandbox_get(f->st, d.id, &got, NULL), MB_OK);
    assert_string_equal(got.status, "released");
    mb_store_close(other);
}

#define RACE_ROUNDS 200

typedef struct racer {
    mb_store *st;
    const char *sandbox_id;
    pthread_barrier_t *barrier;
    int wins[RACE_ROUNDS];
} racer;

static void *race(void *arg)
{
    racer *r = arg;
    for (int i = 0; i < RACE_ROUNDS; i++) {
        char value[64];
        snprintf(value, sizeof value, "race%d.example.com", i);
        pthread_barrier_wait(r->barrier);
        int rc = mb_store_claim_take(r->st, "mail-domain", value, r->sandbox_id, NULL, NULL);
        r->wins[i] = rc == MB_OK ? 1 : rc == MB_ECONFLICT ? 0 : -1;
    }
    return NULL;
}

/* Two nodes (two connections) take the same names at the same moment:
 * exactly one wins each, and the database agrees on which. */
static void test_pg_claim_race(void **state)
{
    fixture *f = *state;
    mb_store *other = NULL;
    assert_int_equal(mb_store_open(f->path, &other, NULL), MB_OK);
    mb_store_set_node(f->st, 0);
    mb_store_set_node(other, 1);
    mb_sandbox_rec a = sample("alice", 0), b = sample("bob", 0);
    assert_int_equal(mb_store_sandbox_insert(f->st, &a, NULL), MB_OK);
    assert_int_equal(mb_store_sandbox_insert(other, &b, NULL), MB_OK);
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, 2);
    racer *ra = mb_calloc(1, sizeof *ra), *rb = mb_calloc(1, sizeof *rb);
    *ra = (racer){.st = f->st, .sandbox_id = a.id, .barrier = &barrier};
    *rb = (racer){.st = other, .sandbox_id = b.id, .barrier = &barrier};
    pthread_t ta, tb;
    pthread_create(&ta, NULL, race, ra);
    pthread_create(&tb, NULL, race, rb);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    int a_wins = 0;
    for (int i = 0; i < RACE_ROUNDS; i++) {
        assert_true(ra->wins[i] >= 0 && rb->wins[i] >= 0);
        assert_int_equal(ra->wins[i] + rb->wins[i], 1);
        char value[64], holder[37];
        snprintf(value, sizeof value, "race%d.example.com", i);
        assert_int_equal(mb_store_claim_holder(other, "mail-domain", value, holder, NULL), MB_OK);
        assert_string_equal(holder, ra->wins[i] ? a.id : b.id);
        a_wins += ra->wins[i];
    }
    printf("claim race: node 0 won %d of %d, node 1 %d\n", a_wins, RACE_ROUNDS, RACE_ROUNDS - a_wins);
    pthread_barrier_destroy(&barrier);
    free(ra);
    free(rb);
    mb_store_close(other);
}

static void test_sqlite_has_no_nodes(void **state)
{
    fixture *f = *state;
    mb_node_rec n0 = {.ordinal = 0, .capacity = 1};
    mb_err err = {0};
    assert_int_equal(mb_store_node_beat(f->st, &n0, &err), MB_EINVAL);
    assert_non_null(strstr(err.msg, "PostgreSQL"));
}

/* A file made by mcpbox before claims and the egress column (schema v1 as it
 * was then) is brought up to date when opened, its records kept. */
static void test_sqlite_upgrades_v1_file(void **state)
{
    fixture *f = *state;
    char *old = mb_asprintf("%s/old.db", f->dir);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(old, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
        "CREATE TABLE sandboxes (id TEXT PRIMARY KEY, owner TEXT NOT NULL DEFAULT '',"
        " benchmark TEXT NOT NULL DEFAULT '', status TEXT NOT NULL,"
        " test_account_email TEXT NOT NULL DEFAULT '', created_at REAL NOT NULL,"
        " updated_at REAL NOT NULL, ttl_seconds INTEGER NOT NULL DEFAULT -1,"
        " deadline REAL NOT NULL DEFAULT 0, uid_base INTEGER NOT NULL DEFAULT 0,"
        " has_upload INTEGER NOT NULL DEFAULT 0, initialized_at REAL NOT NULL DEFAULT 0,"
        " error TEXT NOT NULL DEFAULT '');"
        "INSERT INTO sandboxes(id, owner, status, created_at, updated_at)"
        " VALUES('0d6f2b9e-3c1a-4b8e-9f00-1a2b3c4d5e6f', 'alice', 'occupied', 1, 1);"
        "PRAGMA user_version=1;", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    mb_store *st;
    assert_int_equal(mb_store_open(old, &st, NULL), MB_OK);
    mb_sandbox_rec got;
    assert_int_equal(mb_store_sandbox_get(st, "0d6f2b9e-3c1a-4b8e-9f00-1a2b3c4d5e6f", &got, NULL),
                     MB_OK);
    assert_string_equal(got.owner, "alice");
    assert_string_equal(got.egress, "");
    assert_int_equal(mb_store_claim_take(st, "mail-domain", "mcp1.com", got.id, NULL, NULL), MB_OK);
    mb_store_close(st);
    assert_int_equal(mb_store_open(old, &st, NULL), MB_OK); /* and opens again unchanged */
    char holder[37];
    assert_int_equal(mb_store_claim_holder(st, "mail-domain", "mcp1.com", holder, NULL), MB_OK);
    mb_store_close(st);
    free(old);
}

/* The SQLite backend keeps its prepared statements between calls: each call
 * runs with its own bindings (none left from the call before), and none
 * holds a read transaction once it returned, so another connection can
 * checkpoint the whole WAL and write. */
static void test_sqlite_kept_statements(void **state)
{
    fixture *f = *state;
    mb_sandbox_rec a = sample("alice", 0), b = sample("bob", mb_now() + 100);
    assert_int_equal(mb_store_sandbox_insert(f->st, &a, NULL), MB_OK);
    assert_int_equal(mb_store_sandbox_insert(f->st, &b, NULL), MB_OK);
    for (int round = 0; round < 3; round++) {
        mb_sandbox_rec got;
        assert_int_equal(mb_store_sandbox_get(f->st, a.id, &got, NULL), MB_OK);
        assert_string_equal(got.owner, "alice");
        assert_int_equal(mb_store_sandbox_get(f->st, b.id, &got, NULL), MB_OK);
        assert_string_equal(got.owner, "bob");
        assert_int_equal(mb_store_sandbox_get(f->st, "no-such-id", &got, NULL), MB_ENOTFOUND);
        size_t n;
        assert_int_equal(mb_store_sandbox_count(f->st, "alice", &n, NULL), MB_OK);
        assert_int_equal(n, 1);
        assert_int_equal(mb_store_sandbox_count(f->st, "carol", &n, NULL), MB_OK);
        assert_int_equal(n, 0);
        mb_sandbox_rec *recs;
        assert_int_equal(mb_store_sandbox_list(f->st, NULL, &recs, &n, NULL), MB_OK);
        assert_int_equal(n, 2);
        free(recs);
        assert_int_equal(mb_store_claim_take(f->st, "k", "v", a.id, NULL, NULL), MB_OK);
        mb_err err = {0};
        assert_int_equal(mb_store_claim_take(f->st, "k", "v", b.id, NULL, &err), MB_ECONFLICT);
        assert_int_equal(mb_store_claim_drop(f->st, a.id, NULL, NULL), MB_OK);
    }
    /* a SELECT stopped after its first row (get) must not keep the WAL read */
    mb_sandbox_rec got;
    assert_int_equal(mb_store_sandbox_get(f->st, a.id, &got, NULL), MB_OK);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    int log = -1, done = -1;
    assert_int_equal(sqlite3_exec(db, "SELECT count(*) FROM sandboxes", NULL, NULL, NULL),
                     SQLITE_OK); /* reads the header: the file is in WAL mode */
    assert_int_equal(sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_TRUNCATE, &log, &done),
                     SQLITE_OK);
    assert_int_equal(log, 0); /* truncated: no reader was left in it */
    assert_int_equal(sqlite3_exec(db, "UPDATE sandboxes SET owner='dave' WHERE owner='bob'", NULL,
                                  NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(mb_store_sandbox_get(f->st, b.id, &got, NULL), MB_OK);
    assert_string_equal(got.owner, "dave"); /* the kept statement sees the new write */
}

/* Starts the throwaway PostgreSQL (or takes MCPBOX_TEST_PG); its dir in *dir. */
static char *pg_start(char **dir)
{
    *dir = NULL;
    const char *env = getenv("MCPBOX_TEST_PG");
    if (env && *env) return mb_strdup(env);
    FILE *p = popen("tests/pg/pgctl start", "r");
    if (!p) return NULL;
    char line[512] = "";
    char *ok = fgets(line, sizeof line, p);
    if (pclose(p) != 0 || !ok) return NULL;
    line[strcspn(line, "\n")] = '\0';
    char *sp = strchr(line, ' ');
    if (!sp) return NULL;
    *sp = '\0';
    *dir = mb_strdup(line);
    return mb_strdup(sp + 1);
}

#define BOTH_BACKENDS(X)                                                       \
    X(test_keys) X(test_sandbox_crud_and_owners) X(test_deadlines)             \
    X(test_uid_ranges) X(test_servers_and_blobs) X(test_claims)                \
    X(test_persists_across_reopen) X(test_purge_released) X(test_purge_backlog)
#define ENTRY(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown),

int main(void)
{
    const struct CMUnitTest sqlite_tests[] = {
        BOTH_BACKENDS(ENTRY)
        cmocka_unit_test_setup_teardown(test_sqlite_has_no_nodes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sqlite_upgrades_v1_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sqlite_kept_statements, setup, teardown),
    };
    const struct CMUnitTest pg_tests[] = {
        BOTH_BACKENDS(ENTRY)
        cmocka_unit_test_setup_teardown(test_pg_nodes_and_scope, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pg_claim_race, setup, teardown),
    };
    int failed = cmocka_run_group_tests_name("sqlite", sqlite_tests, NULL, NULL);
    char *dir = NULL;
    pg_url = pg_start(&dir);
    if (!pg_url) {
        fprintf(stderr, "test_store: cannot start PostgreSQL (tests/pg/pgctl start)\n");
        return 1;
    }
    failed += cmocka_run_group_tests_name("postgresql", pg_tests, NULL, NULL);
    if (dir) {
        char *cmd = mb_asprintf("tests/pg/pgctl stop %s", dir);
        if (system(cmd) != 0) fprintf(stderr, "test_store: pgctl stop failed\n");
        free(cmd);
        free(dir);
    }
    free(pg_url);
    return failed;
}
