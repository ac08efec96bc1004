/*
 * rest_int.h - shared between the REST facade's files (rest.c: routing,
 * BigQuery and Storage; identity.c: OAuth token / tokeninfo / userinfo,
 * Cloud Resource Manager and mcpbox's clock endpoint; rest_logging.c:
 * Cloud Logging v2).
 */
#ifndef MB_GCLOUD_REST_INT_H
#define MB_GCLOUD_REST_INT_H

#include <microhttpd.h>

#include "gcloud/gcloud_int.h"

/* What a request is answered with. */
typedef struct mb_gc__reply {
    int status;
    char *body;
    size_t len;
    const char *type;
    char *location; /* a resumable upload's session URI */
    char *range;    /* a resumable upload's "bytes=0-N" */
} mb_gc__reply;

/* A JSON body (j is taken; NULL: empty). */
void mb_gc__reply_json(mb_gc__reply *r, int status, json_t *j);
/* Google's JSON error {error: {code, message, errors[{message, domain, reason}], status}}. */
void mb_gc__reply_error(mb_gc__reply *r, int status, const char *msg);
/* The same for an mb_err (its code as the HTTP status). */
void mb_gc__reply_err(mb_gc__reply *r, const mb_err *e);

/* Path segment i (NULL past the end) and whether it equals s. */
const char *mb_gc__seg(json_t *sg, size_t i);
int mb_gc__seg_is(json_t *sg, size_t i, const char *s);
/* A query parameter. */
const char *mb_gc__qarg(struct MHD_Connection *c, const char *k);

/* The project a request's bearer token names ("Bearer mcpbox-..."), malloc'ed, or NULL. */
char *mb_gc__bearer_project(struct MHD_Connection *c);

/* identity.c: answers the OAuth, tokeninfo, userinfo, Resource Manager and
 * clock paths at segment k (after an optional /p/PROJECT prefix, whose
 * project is `prefix`); 0 when the path is none of them. */
int mb_gc__rest_identity(struct MHD_Connection *c, const char *method, json_t *sg, size_t k,
                         const char *prefix, const mb_buf *raw, mb_gcloud_resolve_fn resolve,
                         void *ctx, mb_gc__reply *r);

/* rest_logging.c: Cloud Logging v2 (paths from v2/ at segment k); 0 when
 * the path is not one of its. */
int mb_gc__rest_logging(struct MHD_Connection *c, const char *method, json_t *sg, size_t k,
                        const char *prefix, const mb_buf *raw, mb_gcloud_resolve_fn resolve,
                        void *ctx, mb_gc__reply *r);

#endif /* MB_GCLOUD_REST_INT_H */
