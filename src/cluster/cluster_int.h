/*
 * cluster_int.h - what the cluster layer's files share: the handle. Include
 * cluster.h from outside.
 */
#ifndef MB_CLUSTER_INT_H
#define MB_CLUSTER_INT_H

#include "cluster/cluster.h"

#include <pthread.h>

/* Placements this node remembers (the ring in the handle). */
#define MB_CLUSTER_RECENT 256
/* How long after its placement an acquire may still be missing from a read
 * of the loads: the hop to its node and that node's first writes (the row
 * goes in before the sandbox is made). A placement made this long before a
 * read started, or later, counts on top of the load read. */
#define MB_CLUSTER_SETTLE_MS 250

struct mb_cluster {
    mb_store *store;
    int ordinal;
    int64_t capacity;
    char url[256];
    pthread_t thread;
    pthread_mutex_t place_lock; /* one placement at a time: read the loads, choose, record */
    pthread_mutex_t lock;    /* guards what follows */
    pthread_cond_t wake;
    int stopping;
    mb_node_rec *nodes;      /* the copy of the nodes table, by ordinal */
    size_t n_nodes;
    int64_t read_ms;         /* when the query behind the copy started (mb_mono_ms) */
    struct {                 /* this node's latest placements, a ring (cluster.c) */
        int ordinal;
        int64_t at_ms;
    } placed[MB_CLUSTER_RECENT];
    size_t n_placed;         /* placements recorded so far; the next goes to n % RECENT */
    char secret[65];         /* the nodes' shared secret, set once at start (trust.c) */
};

/* trust.c: reads (or first stores) the nodes' shared secret into cl->secret. */
int mb_cluster__init_secret(mb_cluster *cl, mb_err *err);
/* trust.c: the value of the forwarded marker for this request from this node. */
void mb_cluster__marker(const mb_cluster *cl, const char *method, const char *path, char *out,
                        size_t cap);

#endif
