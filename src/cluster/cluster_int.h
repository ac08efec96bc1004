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
};

#endif
