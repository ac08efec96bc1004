/*
 * nodes.c - the REST layer's side of many nodes: which node serves a
 * request. A request naming a sandbox (in its path, or as the MCP URL's
 * local_sandbox_id) goes to the node whose ordinal the id carries; an
 * acquire goes where placement says (best of K by load), tried on another
 * node when the chosen one cannot be reached. A request another node
 * forwarded is always served here, so nothing is forwarded twice.
 */
#include "api/api_int.h"
#include "auth/auth.h"
#include "cluster/cluster.h"

#include <string.h>

void mb_api_set_cluster(mb_api *api, struct mb_cluster *cl) { api->cluster = cl; }

/* The first path segment that is a UUID, or the local_sandbox_id query. */
static void request_id(mb_http_req *req, char id[37])
{
    id[0] = '\0';
    const char *q = mb_http_query(req, "local_sandbox_id");
    if (q && mb_is_uuid(q)) {
        snprintf(id, 37, "%s", q);
        return;
    }
    for (const char *s = req->path; *s;) {
        while (*s == '/') s++;
        size_t n = strcspn(s, "/");
        if (n == 36) {
            char seg[37];
            memcpy(seg, s, 36);
            seg[36] = '\0';
            if (mb_is_uuid(seg)) {
                memcpy(id, seg, 37);
                return;
            }
        }
        s += n;
    }
}

/* POST /local-sandbox, /sandbox/local_dev, /sandbox/{server} (a trailing
 * slash tolerated, as the router does). */
static int is_acquire(mb_http_req *req)
{
    if (strcmp(req->method, "POST") != 0) return 0;
    char p[128];
    size_t n = strlen(req->path);
    if (n >= sizeof p) return 0;
    memcpy(p, req->path, n + 1);
    if (n > 1 && p[n - 1] == '/') p[--n] = '\0';
    if (!strcmp(p, "/local-sandbox")) return 1;
    if (strncmp(p, "/sandbox/", 9) != 0) return 0;
    const char *rest = p + 9;
    return *rest && !strchr(rest, '/') && strcmp(rest, "prepare") != 0;
}

static int place(mb_api *api, mb_http_req *req)
{
    /* Without a valid key nothing is placed anywhere. */
    mb_key_rec key;
    mb_err err;
    if (mb_auth_bearer(mb_core_store(api->core), mb_http_header(req, "Authorization"), &key,
                       &err) != MB_OK) {
        mb_http_respond_err(req, &err);
        return 1;
    }
    int self = mb_cluster_ordinal(api->cluster), avoid = -1;
    for (int attempt = 0; attempt < 3; attempt++) {
        int node;
        if (mb_cluster_place(api->cluster, avoid, &node, &err) != MB_OK) {
            mb_http_respond_err(req, &err);
            return 1;
        }
        if (node == self) return 0;
        if (mb_cluster_forward(api->cluster, req, node, 1) == MB_OK) return 1;
        mb_warn("cluster: node %d cannot be reached, placing the acquire elsewhere", node);
        avoid = node;
    }
    return 0; /* every other choice failed: this node takes it */
}

int mb_api__cluster_route(mb_api *api, mb_http_req *req)
{
    /* Forwarded by another node (the marker checks out): served here. A
     * marker that does not check out is ignored: the request is routed. */
    if (mb_cluster_trusted(api->cluster, req)) return 0;
    char id[37];
    request_id(req, id);
    if (id[0]) {
        int owner = mb_cluster_owner(api->cluster, id);
        if (owner < 0) return 0;
        if (mb_cluster_forward(api->cluster, req, owner, 0) != MB_OK)
            mb_cluster_respond_down(req, owner);
        return 1;
    }
    if (is_acquire(req)) return place(api, req);
    return 0;
}
