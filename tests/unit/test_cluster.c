/*
 * test_cluster.c - the cluster layer over a throwaway PostgreSQL
 * (tests/pg/pgctl, or MCPBOX_TEST_PG): placement by best of K in proportion
 * to capacity, down nodes avoided, refusal when every node is full, owners
 * read from ids; and the flags that make a node.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "cluster/cluster_int.h"
#include "core/core.h"
#include "store/store.h"

static char *pg_url, *pg_dir;

static void beat(mb_store *st, int ordinal, int64_t capacity)
{
    mb_node_rec n = {.ordinal = ordinal, .capacity = capacity};
    snprintf(n.url, sizeof n.url, "http://127.0.0.1:%d", 1 + ordinal);
    assert_int_equal(mb_store_node_beat(st, &n, NULL), MB_OK);
}

/* Node 0 (store a) of three, with these capacities; nodes 1 and 2 beat
 * through store b. */
static mb_cluster *three_nodes(mb_store **a, mb_store **b, int64_t cap0, int64_t cap1,
                               int64_t cap2)
{
    assert_int_equal(mb_store_open(pg_url, a, NULL), MB_OK);
    assert_int_equal(mb_store_open(pg_url, b, NULL), MB_OK);
    mb_store_set_node(*a, 0);
    beat(*b, 1, cap1);
    beat(*b, 2, cap2);
    mb_cluster *cl = NULL;
    mb_cluster_opts o = {*a, 0, "http://127.0.0.1:1/", cap0};
    assert_int_equal(mb_cluster_start(&o, &cl, NULL), MB_OK);
    assert_int_equal(mb_cluster_ordinal(cl), 0);
    return cl;
}

/* A live sandbox of node `ordinal` in the database, as that node records it. */
static void add_sandbox(mb_store *st, int ordinal)
{
    mb_store_set_node(st, ordinal);
    mb_sandbox_rec r = {0};
    mb_uuid4_tagged(r.id, ordinal);
    snprintf(r.status, sizeof r.status, "occupied");
    r.created_at = r.updated_at = mb_now();
    assert_int_equal(mb_store_sandbox_insert(st, &r, NULL), MB_OK);
}

static void test_place_and_owners(void **state)
{
    mb_store *a = NULL, *b = NULL;
    mb_cluster *cl = three_nodes(&a, &b, 10, 30, 10);

    /* 40 placements fill the nodes in proportion: 8, 24, 8 (each at 0.8).
     * (No rows come for them: placements MB_CLUSTER_SETTLE_MS older than a
     * read stop counting, and the counts start over from the same empty
     * loads, which keeps the proportions.) */
    int count[3] = {0};
    for (int i = 0; i < 40; i++) {
        int node = -1;
        assert_int_equal(mb_cluster_place(cl, -1, &node, NULL), MB_OK);
        assert_true(node >= 0 && node < 3);
        count[node]++;
    }
    assert_in_range(count[0], 7, 9);
    assert_in_range(count[1], 23, 25);
    assert_in_range(count[2], 7, 9);
    int node = -1;

    /* owners from ids: another known node's ordinal; -1 for this node, an
     * unknown ordinal, or no id */
    char id[37];
    mb_uuid4_tagged(id, 1);
    assert_true(mb_is_uuid(id));
    assert_int_equal(mb_uuid_tag(id), 1);
    assert_int_equal(mb_cluster_owner(cl, id), 1);
    mb_uuid4_tagged(id, 0);
    assert_int_equal(mb_cluster_owner(cl, id), -1);
    mb_uuid4_tagged(id, 5);
    assert_int_equal(mb_cluster_owner(cl, id), -1);
    assert_int_equal(mb_cluster_owner(cl, "not-an-id"), -1);
    char url[256];
    assert_int_equal(mb_cluster_node_url(cl, 1, url, sizeof url), MB_OK);
    assert_string_equal(url, "http://127.0.0.1:2");
    assert_int_equal(mb_cluster_node_url(cl, 9, url, sizeof url), MB_ENOTFOUND);

    /* node 2 stops beating: after MB_CLUSTER_FRESH_S it is down, refused as a
     * target and never placed on; node 1 keeps beating */
    for (int i = 0; i < 9; i++) {
        beat(b, 1, 30);
        usleep(500 * 1000);
    }
    assert_int_equal(mb_cluster_node_url(cl, 2, url, sizeof url), MB_EBUSY);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(mb_cluster_place(cl, 1, &node, NULL), MB_OK);
        assert_int_equal(node, 0); /* 1 avoided, 2 down */
    }

    /* nodes at their capacity (their sandboxes in the database): refused */
    for (int i = 0; i < 40; i++) add_sandbox(b, i < 10 ? 0 : 1);
    beat(b, 1, 30);
    mb_err err = {0};
    assert_int_equal(mb_cluster_place(cl, -1, &node, &err), MB_EBUSY);
    assert_non_null(strstr(err.msg, "no node has room"));
    mb_cluster_stop(cl);
    mb_store_close(a);
    mb_store_close(b);
}

/* An empty schema (the store makes its tables again when opened). */
static void empty_schema(void)
{
    PGconn *c = PQconnectdb(pg_url);
    PQclear(PQexec(c, "SET client_min_messages=warning; DROP SCHEMA public CASCADE; CREATE SCHEMA public"));
    PQfinish(c);
}

/* Each placement reads the loads afresh: sandboxes another node recorded a
 * moment ago count at once, not at the next heartbeat's copy, and this
 * node's own placements that no row shows yet count on top. */
static void test_place_reads_loads(void **state)
{
    empty_schema();
    mb_store *a = NULL, *b = NULL;
    mb_cluster *cl = three_nodes(&a, &b, 20, 20, 20);
    /* the copy says 0 / 0 / 0; then nodes 1 and 2 record 6 sandboxes each */
    for (int i = 0; i < 12; i++) add_sandbox(b, 1 + i % 2);
    /* three placements, no rows for them yet: all three on node 0 (3 / 6 / 6;
     * a copy read before the rows went in would have spread them 1 / 1 / 1) */
    for (int i = 0; i < 3; i++) {
        int node = -1;
        assert_int_equal(mb_cluster_place(cl, -1, &node, NULL), MB_OK);
        assert_int_equal(node, 0);
    }
    /* placements whose rows never came (failed acquires) stop counting once
     * they are MB_CLUSTER_SETTLE_MS older than a read: node 0 looks empty again */
    usleep(2 * MB_CLUSTER_SETTLE_MS * 1000);
    for (int i = 0; i < 3; i++) {
        int node = -1;
        assert_int_equal(mb_cluster_place(cl, -1, &node, NULL), MB_OK);
        assert_int_equal(node, 0);
    }
    mb_cluster_stop(cl);
    mb_store_close(a);
    mb_store_close(b);
}

/* --db, --node, --node-url, --capacity: --node needs a PostgreSQL --db. */
static void test_config(void **state)
{
    mb_config cfg;
    char *ok[] = {"serve", "--db", "postgresql://u@/d?host=/tmp", "--node", "2",
                  "--node-url", "http://10.0.0.2:8080", "--capacity", "7", NULL};
    assert_int_equal(mb_config_parse(&cfg, 9, ok), 0);
    assert_string_equal(cfg.db, "postgresql://u@/d?host=/tmp");
    assert_int_equal(cfg.node, 2);
    assert_string_equal(cfg.node_url, "http://10.0.0.2:8080");
    assert_int_equal(cfg.capacity, 7);
    mb_config_free(&cfg);
    char *one[] = {"serve", NULL};
    assert_int_equal(mb_config_parse(&cfg, 1, one), 0);
    assert_int_equal(cfg.node, -1);
    assert_null(cfg.db);
    mb_config_free(&cfg);
    char *sqlite[] = {"serve", "--db", "/tmp/x.db", "--node", "1", NULL};
    assert_int_equal(mb_config_parse(&cfg, 5, sqlite), 2);
    mb_config_free(&cfg);
    char *none[] = {"serve", "--node", "1", NULL};
    assert_int_equal(mb_config_parse(&cfg, 3, none), 2);
    mb_config_free(&cfg);
    char *big[] = {"serve", "--db", "postgresql://x", "--node", "256", NULL};
    assert_int_equal(mb_config_parse(&cfg, 5, big), 2);
    mb_config_free(&cfg);
}

int main(void)
{
    const char *env = getenv("MCPBOX_TEST_PG");
    if (env && *env) {
        pg_url = mb_strdup(env);
    } else {
        FILE *p = popen("tests/pg/pgctl start", "r");
        char line[512] = "";
        char *ok = p ? fgets(line, sizeof line, p) : NULL;
        if (!p || pclose(p) != 0 || !ok || !strchr(line, ' ')) {
            fprintf(stderr, "test_cluster: cannot start PostgreSQL (tests/pg/pgctl start)\n");
            return 1;
        }
        line[strcspn(line, "\n")] = '\0';
        *strchr(line, ' ') = '\0';
        pg_dir = mb_strdup(line);
        pg_url = mb_strdup(line + strlen(line) + 1);
    }
    empty_schema();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config),
        cmocka_unit_test(test_place_and_owners),
        cmocka_unit_test(test_place_reads_loads),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    if (pg_dir) {
        char *cmd = mb_asprintf("tests/pg/pgctl stop %s", pg_dir);
        if (system(cmd) != 0) fprintf(stderr, "test_cluster: pgctl stop failed\n");
        free(cmd);
        free(pg_dir);
    }
    free(pg_url);
    return failed;
}
