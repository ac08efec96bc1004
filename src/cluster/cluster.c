/*
 * cluster.c - this node among many: the heartbeat thread (beat, refresh the
 * copy of the nodes table, sweep orphans now and then), owners of ids, and
 * placement of acquires by best of K.
 */
#include "cluster/cluster_int.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Reads the nodes table into the copy. Returns whether it did. */
static int refresh(mb_cluster *cl)
{
    mb_node_rec *nodes = NULL;
    size_t n = 0;
    mb_err err = {0};
    int64_t started = mb_mono_ms();
    if (mb_store_node_list(cl->store, MB_CLUSTER_FRESH_S, &nodes, &n, &err) != MB_OK) {
        mb_warn("cluster: cannot read the nodes: %s", err.msg);
        return 0;
    }
    pthread_mutex_lock(&cl->lock);
    free(cl->nodes);
    cl->nodes = nodes;
    cl->n_nodes = n;
    cl->read_ms = started;
    pthread_mutex_unlock(&cl->lock);
    return 1;
}

static int beat(mb_cluster *cl, mb_err *err)
{
    mb_node_rec me = {.ordinal = cl->ordinal, .capacity = cl->capacity};
    snprintf(me.url, sizeof me.url, "%s", cl->url);
    return mb_store_node_beat(cl->store, &me, err);
}

static void *beat_main(void *arg)
{
    mb_cluster *cl = arg;
    double last_sweep = 0;
    int was_failing = 0;
    pthread_mutex_lock(&cl->lock);
    while (!cl->stopping) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += (time_t)MB_CLUSTER_BEAT_S;
        pthread_cond_timedwait(&cl->wake, &cl->lock, &until);
        if (cl->stopping) break;
        pthread_mutex_unlock(&cl->lock);
        mb_err err = {0};
        if (beat(cl, &err) != MB_OK) {
            if (!was_failing) mb_warn("cluster: heartbeat failed: %s", err.msg);
            was_failing = 1;
        } else if (was_failing) {
            mb_info("cluster: heartbeat works again");
            was_failing = 0;
        }
        refresh(cl);
        if (mb_now() - last_sweep >= MB_CLUSTER_SWEEP_S) {
            last_sweep = mb_now();
            size_t swept = 0;
            if (mb_store_sweep_orphans(cl->store, MB_CLUSTER_FRESH_S, &swept, &err) != MB_OK)
                mb_warn("cluster: orphan sweep: %s", err.msg);
            else if (swept)
                mb_info("cluster: released %zu sandbox%s of nodes that are gone", swept,
                        swept == 1 ? "" : "es");
        }
        pthread_mutex_lock(&cl->lock);
    }
    pthread_mutex_unlock(&cl->lock);
    return NULL;
}

int mb_cluster_start(const mb_cluster_opts *opts, mb_cluster **out, mb_err *err)
{
    mb_cluster *cl = mb_calloc(1, sizeof *cl);
    cl->store = opts->store;
    cl->ordinal = opts->ordinal;
    cl->capacity = opts->capacity;
    snprintf(cl->url, sizeof cl->url, "%s", opts->url);
    size_t n = strlen(cl->url);
    while (n && cl->url[n - 1] == '/') cl->url[--n] = '\0';
    pthread_mutex_init(&cl->place_lock, NULL);
    pthread_mutex_init(&cl->lock, NULL);
    pthread_cond_init(&cl->wake, NULL);
    int rc = mb_cluster__init_secret(cl, err);
    if (!rc) rc = beat(cl, err);
    if (!rc) {
        refresh(cl);
        if (pthread_create(&cl->thread, NULL, beat_main, cl) != 0)
            rc = mb_err_set(err, MB_EIO, "cannot start the heartbeat thread");
    }
    if (rc) {
        pthread_cond_destroy(&cl->wake);
        pthread_mutex_destroy(&cl->lock);
        pthread_mutex_destroy(&cl->place_lock);
        free(cl->nodes);
        free(cl);
        return rc;
    }
    mb_info("cluster: node %d at %s (capacity %lld)", cl->ordinal, cl->url, (long long)cl->capacity);
    *out = cl;
    return MB_OK;
}

void mb_cluster_stop(mb_cluster *cl)
{
    if (!cl) return;
    pthread_mutex_lock(&cl->lock);
    cl->stopping = 1;
    pthread_cond_signal(&cl->wake);
    pthread_mutex_unlock(&cl->lock);
    pthread_join(cl->thread, NULL);
    pthread_cond_destroy(&cl->wake);
    pthread_mutex_destroy(&cl->lock);
    pthread_mutex_destroy(&cl->place_lock);
    free(cl->nodes);
    free(cl);
}

int mb_cluster_ordinal(const mb_cluster *cl) { return cl->ordinal; }

/* The copy's record of node `ordinal`, lock held; NULL if unknown. */
static const mb_node_rec *find_locked(mb_cluster *cl, int ordinal)
{
    mb_assert_held(&cl->lock);
    for (size_t i = 0; i < cl->n_nodes; i++)
        if (cl->nodes[i].ordinal == ordinal) return &cl->nodes[i];
    return NULL;
}

int mb_cluster_owner(mb_cluster *cl, const char *id)
{
    int tag = id ? mb_uuid_tag(id) : -1;
    if (tag < 0 || tag == cl->ordinal) return -1;
    pthread_mutex_lock(&cl->lock);
    int known = find_locked(cl, tag) != NULL;
    pthread_mutex_unlock(&cl->lock);
    return known ? tag : -1;
}

int mb_cluster_node_url(mb_cluster *cl, int ordinal, char *url, size_t cap)
{
    pthread_mutex_lock(&cl->lock);
    const mb_node_rec *nd = find_locked(cl, ordinal);
    int rc = !nd ? MB_ENOTFOUND : !nd->up ? MB_EBUSY : MB_OK;
    if (nd) snprintf(url, cap, "%s", nd->url);
    pthread_mutex_unlock(&cl->lock);
    return rc;
}

/* This node's placements on `ordinal` that the copy's loads may not count
 * yet: those made since MB_CLUSTER_SETTLE_MS before the copy's read began. */
static int64_t pending_locked(mb_cluster *cl, int ordinal)
{
    mb_assert_held(&cl->lock);
    size_t n = cl->n_placed < MB_CLUSTER_RECENT ? cl->n_placed : MB_CLUSTER_RECENT;
    int64_t since = cl->read_ms - MB_CLUSTER_SETTLE_MS, count = 0;
    for (size_t i = 0; i < n; i++)
        if (cl->placed[i].ordinal == ordinal && cl->placed[i].at_ms >= since) count++;
    return count;
}

int mb_cluster_place(mb_cluster *cl, int avoid, int *ordinal, mb_err *err)
{
    /* One placement at a time on this node, each on loads read now: the
     * heartbeat's copy lags the other nodes' placements by up to a second,
     * in which every node would send its acquires to the node that looked
     * emptiest. (A failed read leaves the last copy, still good for this.) */
    pthread_mutex_lock(&cl->place_lock);
    refresh(cl);
    pthread_mutex_lock(&cl->lock);
    /* Live candidates, then K of them at random (a partial shuffle). */
    size_t idx[256], n = 0;
    for (size_t i = 0; i < cl->n_nodes && n < 256; i++)
        if ((cl->nodes[i].up || cl->nodes[i].ordinal == cl->ordinal) &&
            cl->nodes[i].ordinal != avoid)
            idx[n++] = i;
    size_t k = n < MB_CLUSTER_K ? n : MB_CLUSTER_K;
    for (size_t i = 0; i < k; i++) {
        uint32_t r = 0;
        mb_random_bytes(&r, sizeof r, NULL);
        size_t j = i + r % (n - i);
        size_t t = idx[i];
        idx[i] = idx[j];
        idx[j] = t;
    }
    int best = -1;
    double best_score = 0;
    for (size_t i = 0; i < k; i++) {
        const mb_node_rec *nd = &cl->nodes[idx[i]];
        double used = (double)(nd->load + pending_locked(cl, nd->ordinal));
        double score = used / (double)(nd->capacity > 0 ? nd->capacity : 1);
        if (used >= (double)nd->capacity) continue;
        if (best < 0 || score < best_score) {
            best = nd->ordinal;
            best_score = score;
        }
    }
    if (best >= 0) {
        size_t slot = cl->n_placed++ % MB_CLUSTER_RECENT;
        cl->placed[slot].ordinal = best;
        cl->placed[slot].at_ms = mb_mono_ms();
    }
    pthread_mutex_unlock(&cl->lock);
    pthread_mutex_unlock(&cl->place_lock);
    if (best < 0)
        return mb_err_set(err, MB_EBUSY, "no node has room for another sandbox (every live "
                          "node is at its --capacity)");
    *ordinal = best;
    return MB_OK;
}
