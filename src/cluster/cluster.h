/*
 * cluster.h - the face of the many-nodes layer: this node's place among the
 * nodes sharing one PostgreSQL database (docs/SCALE.md).
 *
 * A node heartbeats into the nodes table every second and keeps a copy of
 * every node's URL, capacity, load and liveness (a heartbeat within
 * MB_CLUSTER_FRESH_S seconds). Sandbox ids carry their owner's ordinal in
 * their first byte (mb_uuid4_tagged), so any node (and a stateless router)
 * knows the owner of a request from its id alone; a request for another
 * node's sandbox is forwarded to it (forward.c), streamed both ways, and a
 * request for a node that is down is answered 503 {"detail":"node N
 * unavailable"} at once. An acquire is placed on the best of K live nodes by
 * load (least (load + pending) / capacity: the loads read from the database
 * for each placement, pending this node's placements the read may miss).
 * Every few seconds one node (an
 * advisory lock) sweeps orphans (mb_store_sweep_orphans).
 */
#ifndef MB_CLUSTER_H
#define MB_CLUSTER_H

#include "http/http.h"
#include "store/store.h"
#include "util/util.h"

#define MB_CLUSTER_BEAT_S 1.0   /* heartbeat period */
#define MB_CLUSTER_FRESH_S 3.0  /* a node silent this long is down */
#define MB_CLUSTER_SWEEP_S 5.0  /* orphan sweep period */
#define MB_CLUSTER_K 3          /* placement samples this many live nodes */

/* Header a forwarding node adds (its ordinal, the time and a MAC keyed with
 * the nodes' shared secret, trust.c): the receiver never forwards such a
 * request again. A value that does not check out is ignored. */
#define MB_CLUSTER_HDR_FORWARDED "X-Mcpbox-Forwarded"
/* How far a marker's time may be from the receiver's clock, seconds. */
#define MB_CLUSTER_SKEW_S 60
/* Header on an acquire that was placed: the receiver creates it itself. */
#define MB_CLUSTER_HDR_PLACED "X-Mcpbox-Placed"

typedef struct mb_cluster mb_cluster;

typedef struct mb_cluster_opts {
    mb_store *store;     /* shared with the core; PostgreSQL */
    int ordinal;         /* 0..255 */
    const char *url;     /* where other nodes reach this one */
    int64_t capacity;
} mb_cluster_opts;

/* Records the node (a first heartbeat, so a failure to reach the database
 * fails the start) and starts the heartbeat thread. */
int mb_cluster_start(const mb_cluster_opts *opts, mb_cluster **out, mb_err *err);
void mb_cluster_stop(mb_cluster *cl);
int mb_cluster_ordinal(const mb_cluster *cl);

/* The node owning sandbox `id` when it is another node (its ordinal), or -1
 * when this node serves the request itself (its own id, not an id of a known
 * node, or not an id at all). */
int mb_cluster_owner(mb_cluster *cl, const char *id);
/* Where an acquire goes: this node's ordinal or another's; MB_EBUSY when no
 * live node has room. `avoid` (or -1) is left out (a node that just failed). */
int mb_cluster_place(mb_cluster *cl, int avoid, int *ordinal, mb_err *err);

/* Hands the request over to node `ordinal` (a raw handler on req, see
 * http.h: the body is streamed up as it arrives, the answer streamed back,
 * SSE included, without buffering). placed: an acquire this node placed
 * there. MB_OK when forwarding started; MB_EBUSY, with nothing answered,
 * when that node is down or cannot be reached. */
int mb_cluster_forward(mb_cluster *cl, mb_http_req *req, int ordinal, int placed);
/* Whether req carries a forwarded marker from another node that checks out
 * (trust.c): only then does this node serve another node's id itself. */
int mb_cluster_trusted(mb_cluster *cl, mb_http_req *req);
/* 503 {"detail":"node N unavailable"}. */
void mb_cluster_respond_down(mb_http_req *req, int ordinal);
/* Copies node `ordinal`'s URL; MB_ENOTFOUND if unknown, MB_EBUSY if down. */
int mb_cluster_node_url(mb_cluster *cl, int ordinal, char *url, size_t cap);

#endif /* MB_CLUSTER_H */
