/*
 * core_int.h - what the core's files share: the mb_core structure.
 * Include core.h from outside the layer.
 */
#ifndef MB_CORE_INT_H
#define MB_CORE_INT_H

#include "auth/auth.h"
#include "core/core.h"

#include <pthread.h>

#define MB_CORE_STRIPES 64
#define MB_UID_FIRST 0x10000000LL   /* first host uid handed to sandboxes */
#define MB_UID_STRIDE 65536LL       /* uids per sandbox */

struct mb_core {
    mb_config cfg;                   /* a private copy (strings borrowed from the caller) */
    mb_store *store;
    unsigned char secret[MB_SECRET_LEN];
    char *public_url;                /* without a trailing slash */

    /* Operations on one sandbox (initialize, dump, reset, release) are
     * serialised by the stripe its id hashes to. */
    pthread_mutex_t stripes[MB_CORE_STRIPES];

    /* The reaper sleeps on `wake` until the next deadline or a change. */
    pthread_t reaper;
    pthread_mutex_t reaper_lock;
    pthread_cond_t wake;
    int stopping;
};

pthread_mutex_t *mb_core__stripe(mb_core *core, const char *id);
void mb_core__wake_reaper(mb_core *core);
int mb_core__start_reaper(mb_core *core, mb_err *err);
void mb_core__stop_reaper(mb_core *core);
/* Release without owner checks (the reaper, start-up expiry). */
int mb_core__release(mb_core *core, const char *id, int is_ttl, mb_err *err);
char *mb_core__blob_dir(mb_core *core, const char *id);

#endif
