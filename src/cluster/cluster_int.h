/*
 * cluster_int.h - what the cluster layer's files share: the handle. Include
 * cluster.h from outside.
 */
#ifndef MB_CLUSTER_INT_H
#define MB_CLUSTER_INT_H

#include "cluster/cluster.h"

#include <pthread.h>

struct mb_cluster {
    mb_store *store;
    int ordinal;
    int64_t capacity;
    char url[256];
    pthread_t thread;
    pthread_mutex_t lock;    /* guards what follows */
    pthread_cond_t wake;
    int stopping;
    mb_node_rec *nodes;      /* the copy of the nodes table, by ordinal */
    size_t n_nodes;
    int64_t pending[256];    /* acquires placed on each node since the copy was read */
    char secret[65];         /* the nodes' shared secret, set once at start (trust.c) */
};

/* trust.c: reads (or first stores) the nodes' shared secret into cl->secret. */
int mb_cluster__init_secret(mb_cluster *cl, mb_err *err);
/* trust.c: the value of the forwarded marker for this request from this node. */
void mb_cluster__marker(const mb_cluster *cl, const char *method, const char *path, char *out,
                        size_t cap);

#endif
