/*
 * reaper.c - the TTL reaper: a thread that sleeps until the earliest sandbox
 * deadline and releases what has expired.
 *
 * It never sleeps longer than a second, so a deadline is met within a second
 * without being told about new sandboxes (TTLs are a minute or more): an
 * acquire does not wake it, which would cost the acquire two queries of the
 * store at the worst moment.
 *
 * It also purges the records of sandboxes released more than
 * --released-retention ago (their tombstones, servers, blobs and claims
 * rows): at start, then at most once a minute (sooner with a retention
 * under a minute), in batches so that a backlog never holds the store long.
 */
#include "core/core_int.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

static void reap_once(mb_core *core)
{
    mb_sandbox_rec *recs;
    size_t n;
    if (mb_store_sandbox_expired(core->store, mb_now(), &recs, &n, NULL) != MB_OK) return;
    for (size_t i = 0; i < n; i++) {
        mb_err err;
        if (mb_core__release(core, recs[i].id, 1, &err) != MB_OK)
            mb_warn("reaper: cannot release %s: %s", recs[i].id, err.msg);
    }
    free(recs);
}

/* Sandboxes whose records one purge transaction removes. */
#define PURGE_BATCH 500

static int is_stopping(mb_core *core)
{
    pthread_mutex_lock(&core->reaper_lock);
    int stop = core->stopping;
    pthread_mutex_unlock(&core->reaper_lock);
    return stop;
}

static void purge_once(mb_core *core)
{
    double before = mb_now() - (double)core->cfg.released_retention_s;
    size_t total = 0, n = 0;
    do {
        mb_err err;
        if (mb_store_purge_released(core->store, before, PURGE_BATCH, &n, &err) != MB_OK) {
            mb_warn("reaper: cannot purge released sandboxes: %s", err.msg);
            break;
        }
        total += n;
    } while (n == PURGE_BATCH && !is_stopping(core));
    if (total)
        mb_info("purged the records of %zu sandbox%s released more than %lld s ago", total,
                total == 1 ? "" : "es", (long long)core->cfg.released_retention_s);
}

/* Seconds between purges: a minute, or the retention when shorter. */
static double purge_interval(const mb_core *core)
{
    double keep = (double)core->cfg.released_retention_s;
    return keep < 1 ? 1 : keep < 60 ? keep : 60;
}

static void *reaper_main(void *arg)
{
    mb_core *core = arg;
    double next_purge = 0; /* at start */
    pthread_mutex_lock(&core->reaper_lock);
    while (!core->stopping) {
        pthread_mutex_unlock(&core->reaper_lock);
        reap_once(core);
        if (core->cfg.released_retention_s > 0 && mb_now() >= next_purge) {
            purge_once(core);
            next_purge = mb_now() + purge_interval(core);
        }
        double next = mb_store_next_deadline(core->store);
        pthread_mutex_lock(&core->reaper_lock);
        if (core->stopping) break;
        double now = mb_now();
        double wait = next > 0 ? next - now : 1.0;
        if (wait > 1.0) wait = 1.0;
        if (wait <= 0) continue;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        time_t whole = (time_t)wait;
        ts.tv_sec += whole;
        ts.tv_nsec += (long)((wait - (double)whole) * 1e9);
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&core->wake, &core->reaper_lock, &ts);
    }
    pthread_mutex_unlock(&core->reaper_lock);
    return NULL;
}

int mb_core__start_reaper(mb_core *core, mb_err *err)
{
    int e = pthread_create(&core->reaper, NULL, reaper_main, core);
    if (e) return mb_err_sys(err, e, "cannot start the TTL reaper");
    return MB_OK;
}

void mb_core__stop_reaper(mb_core *core)
{
    if (!core->reaper) return;
    pthread_mutex_lock(&core->reaper_lock);
    core->stopping = 1;
    pthread_cond_signal(&core->wake);
    pthread_mutex_unlock(&core->reaper_lock);
    pthread_join(core->reaper, NULL);
    core->reaper = 0;
}
