/*
 * trust.c - what makes a request "forwarded by a node": the marker header
 * carries the sending node's ordinal, the time and an HMAC-SHA256 over both
 * and the request's method and path, keyed with the nodes' shared secret
 * (mb_store_cluster_secret: drawn by the first node, kept in the database).
 *
 *     X-Mcpbox-Forwarded: ORDINAL UNIXTIME HEX(HMAC(secret, "ORDINAL UNIXTIME METHOD PATH"))
 *
 * A node serves a request for another node's sandbox itself only when the
 * marker checks out (another node's ordinal, within MB_CLUSTER_SKEW_S of this node's
 * clock, the right MAC); any other value is ignored and the request is routed
 * as if it had none. So a client that reaches a node directly cannot make it
 * act on a sandbox another node runs (e.g. mark it released in the shared
 * store while its processes keep running there).
 */
#include "cluster/cluster_int.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void mac_hex(const mb_cluster *cl, int ordinal, long long ts, const char *method,
                    const char *path, char hex[65])
{
    mb_buf msg = {0};
    mb_buf_printf(&msg, "%d %lld %s %s", ordinal, ts, method, path);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    /* the secret is 64 hex digits; the key is those bytes as they are */
    if (HMAC(EVP_sha256(), cl->secret, 64, (const unsigned char *)(msg.data ? msg.data : ""),
             msg.len, md, &mdlen) && mdlen == 32) {
        for (unsigned i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", md[i]);
    } else {
        /* never matches a MAC: hex digits only ever come from the branch above */
        memset(hex, 'x', 64);
        hex[64] = '\0';
    }
    mb_buf_free(&msg);
}

int mb_cluster__init_secret(mb_cluster *cl, mb_err *err)
{
    unsigned char raw[32];
    int rc = mb_random_bytes(raw, sizeof raw, err);
    if (rc) return rc;
    char proposal[65];
    for (size_t i = 0; i < sizeof raw; i++) snprintf(proposal + 2 * i, 3, "%02x", raw[i]);
    rc = mb_store_cluster_secret(cl->store, proposal, cl->secret, err);
    if (rc) return mb_err_wrap(err, rc, "cannot read the nodes' shared secret");
    return MB_OK;
}

void mb_cluster__marker(const mb_cluster *cl, const char *method, const char *path, char *out,
                        size_t cap)
{
    long long ts = (long long)time(NULL);
    char hex[65];
    mac_hex(cl, cl->ordinal, ts, method, path, hex);
    snprintf(out, cap, "%d %lld %s", cl->ordinal, ts, hex);
}

int mb_cluster_trusted(mb_cluster *cl, mb_http_req *req)
{
    const char *v = mb_http_header(req, MB_CLUSTER_HDR_FORWARDED);
    if (!v || strlen(v) > 128) return 0;
    int ordinal, used = 0;
    long long ts;
    char got[65];
    if (sscanf(v, "%d %lld %64[0-9a-f]%n", &ordinal, &ts, got, &used) != 3 || v[used] ||
        strlen(got) != 64 || ordinal < 0 || ordinal > 255 || ordinal == cl->ordinal)
        return 0;
    long long now = (long long)time(NULL);
    if (ts < now - MB_CLUSTER_SKEW_S || ts > now + MB_CLUSTER_SKEW_S) return 0;
    char want[65];
    mac_hex(cl, ordinal, ts, req->method, req->path, want);
    return CRYPTO_memcmp(want, got, 64) == 0;
}
