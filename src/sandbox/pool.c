/*
 * pool.c - the warm pool: idle sandboxes per profile key, claimed in O(1),
 * refilled by one background thread.
 *
 * Data: a short list of keys (profiles are few, so finding one is a walk of
 * a handful of entries), each with a LIFO stack of idle sandboxes, a target
 * size and counters. One mutex guards it all; it is never held while a
 * sandbox is created or destroyed, so a claim never waits for those.
 *
 * Refill: the thread sleeps on `work` until some key has fewer idle plus
 * in-progress sandboxes than its target, builds one (factory make_opts, then
 * mb_sandbox_create, then factory prepare), pushes it, and signals `ready`.
 * A failing key backs off (100 ms doubling to 30 s) so that a broken profile
 * does not spin; the error is kept in its stats.
 *
 * A claimed sandbox whose init has died while idle is destroyed and the next
 * one is tried: a claim returns a live sandbox or MB_ENOTFOUND.
 *
 * A sandbox counts as idle once its processes are quiet: after prepare, the
 * refill thread samples its cgroup's CPU time every SETTLE_WINDOW_MS until a
 * window used less than 5% of a core (at most SETTLE_MAX_MS). Servers that
 * answered tools/list may still be busy starting (a playwright sandbox's
 * Chromium goes on for a while), and a claim in that time would share the
 * cores with them. A claim that finds no idle sandbox takes the settling one
 * (its key's `settling`): ready, if not yet quiet, beats a cold start.
 *
 * Refill waits for a pause in claims: building a sandbox (and starting its
 * servers) is CPU-heavy and takes the state store's lock, and doing it while
 * claims keep coming would slow the acquires that make them (a millisecond
 * each), whose latency is the point of the pool. So while a key has at
 * least a quarter of its target idle, its refill starts only once no claim
 * came for REFILL_PAUSE_MS; below that it starts at once, so that a steady
 * stream of claims cannot drain the pool. Once a claim took its last idle
 * sandbox, a key's refill starts REFILL_PAUSE_MS after that claim: the
 * client of the sandbox just claimed lists its servers' tools right after
 * the acquire (a playwright sandbox's refill starts Node and Chromium, a
 * second or more of both cores). Claims of an empty key miss and do not move
 * that time, so the delay is bounded.
 */
#define _GNU_SOURCE
#include "sandbox/sandbox_int.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BACKOFF_MIN_MS 100
#define BACKOFF_MAX_MS 30000
#define REFILL_PAUSE_MS 50
#define SETTLE_WINDOW_MS 20
#define SETTLE_QUIET_NS (SETTLE_WINDOW_MS * 1000000ull / 20) /* 5% of a core */
#define SETTLE_MAX_MS 3000

typedef struct pool_item {
    mb_sandbox *sb;
    void *cookie;
    struct pool_item *next;
} pool_item;

typedef struct pool_key {
    char *key;
    unsigned target, idle, creating;
    pool_item *head; /* idle stack */
    pool_item *settling; /* readied, not quiet yet (claimable when head is empty) */
    uint64_t claimed, misses, failures;
    char last_error[MB_ERR_MSG_MAX];
    int backoff_ms;
    int64_t retry_at; /* monotonic ms; 0 = now */
    int64_t claimed_at; /* monotonic ms of the last claim */
    struct pool_key *next;
} pool_key;

struct mb_pool {
    mb_pool_factory f;
    pthread_mutex_t mu;
    pthread_cond_t work;  /* refill thread: something to do, or stop */
    pthread_cond_t ready; /* waiters: an idle sandbox was added */
    pool_key *keys;
    int stop;
    int idle_wait; /* the refill thread waits with no deadline (nothing to do) */
    pthread_t thread;
};

static pool_key *find_key(mb_pool *p, const char *key, int create)
{
    for (pool_key *k = p->keys; k; k = k->next)
        if (!strcmp(k->key, key)) return k;
    if (!create) return NULL;
    pool_key *k = mb_calloc(1, sizeof *k);
    k->key = mb_strdup(key);
    k->next = p->keys;
    p->keys = k;
    return k;
}

static void abs_deadline(struct timespec *ts, int64_t mono_ms)
{
    ts->tv_sec = (time_t)(mono_ms / 1000);
    ts->tv_nsec = (long)(mono_ms % 1000) * 1000000L;
}

static int alive(mb_sandbox *sb)
{
    if (sb->pidfd < 0) return 1;
    struct pollfd pf = {.fd = sb->pidfd, .events = POLLIN};
    return poll(&pf, 1, 0) == 0;
}

static void dispose(mb_pool *p, const char *key, mb_sandbox *sb, void *cookie)
{
    mb_err err;
    if (p->f.unprepare) p->f.unprepare(p->f.ctx, key, sb, cookie);
    if (mb_sandbox_destroy(sb, &err) != 0) mb_warn("pool %s: %s", key, err.msg);
    if (p->f.retire) p->f.retire(p->f.ctx, key, cookie);
}

/* Picks a key that needs a sandbox now; sets *wake to the earliest retry. */
static pool_key *next_job(mb_pool *p, int64_t now, int64_t *wake)
{
    *wake = INT64_MAX;
    for (pool_key *k = p->keys; k; k = k->next) {
        if (k->idle + k->creating >= k->target) continue;
        /* not before its back-off is over, nor amid claims while it has some
         * idle sandboxes left */
        int64_t at = k->retry_at;
        if (k->idle * 4 >= k->target && k->idle > 0 && k->claimed_at + REFILL_PAUSE_MS > at)
            at = k->claimed_at + REFILL_PAUSE_MS;
        /* nor on top of the first requests of the sandbox just claimed */
        if (k->idle == 0 && k->claimed_at && k->claimed_at + REFILL_PAUSE_MS > at)
            at = k->claimed_at + REFILL_PAUSE_MS;
        if (at > now) {
            if (at < *wake) *wake = at;
            continue;
        }
        return k;
    }
    return NULL;
}

int mb__pool_settle(int (*usage)(void *ctx, uint64_t *ns), void *ctx, int window_ms,
                    uint64_t quiet_ns, int max_ms)
{
    int64_t end = mb_mono_ms() + max_ms;
    uint64_t prev = 0, now = 0;
    int windows = 0;
    if (usage(ctx, &prev)) return 0;
    while (mb_mono_ms() + window_ms <= end) {
        struct timespec ts = {window_ms / 1000, (long)(window_ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {}
        windows++;
        if (usage(ctx, &now) || now < prev || now - prev < quiet_ns) break;
        prev = now;
    }
    return windows;
}

typedef struct settling {
    mb_pool *p;
    const char *key;
    pool_item *it;
} settling;

/* The settling sandbox's CPU time; non-zero to stop waiting: the pool stops,
 * a claim took the sandbox, or the host does not account. Read under the
 * pool's lock, so that a claim cannot take (and destroy) the sandbox while
 * it is read. */
static int settle_usage(void *ctx, uint64_t *ns)
{
    settling *st = ctx;
    pthread_mutex_lock(&st->p->mu);
    pool_key *k = find_key(st->p, st->key, 0);
    mb_sandbox_stats s;
    int done = st->p->stop || !k || k->settling != st->it ||
               mb_sandbox_stats_get(st->it->sb, &s, NULL) != 0 || !s.cpu_usage_ns;
    pthread_mutex_unlock(&st->p->mu);
    if (!done) *ns = s.cpu_usage_ns;
    return done;
}

static void *refill_main(void *arg)
{
    mb_pool *p = arg;
    pthread_mutex_lock(&p->mu);
    while (!p->stop) {
        int64_t wake;
        pool_key *k = next_job(p, mb_mono_ms(), &wake);
        if (!k) {
            if (wake == INT64_MAX) {
                p->idle_wait = 1;
                pthread_cond_wait(&p->work, &p->mu);
                p->idle_wait = 0;
            } else {
                struct timespec ts;
                abs_deadline(&ts, wake);
                pthread_cond_timedwait(&p->work, &p->mu, &ts);
            }
            continue;
        }
        k->creating++;
        char *key = mb_strdup(k->key);
        pthread_mutex_unlock(&p->mu);

        mb_sandbox_opts opts;
        memset(&opts, 0, sizeof opts);
        void *cookie = NULL;
        mb_sandbox *sb = NULL;
        mb_err err = {0};
        int rc = p->f.make_opts(p->f.ctx, key, &opts, &cookie, &err);
        if (rc == 0) {
            rc = mb_sandbox_create(&opts, &sb, &err);
            if (rc && p->f.retire) p->f.retire(p->f.ctx, key, cookie);
            if (!rc && p->f.prepare && (rc = p->f.prepare(p->f.ctx, key, sb, cookie, &err))) {
                mb_err e2 = err;
                dispose(p, key, sb, cookie);
                err = e2;
                sb = NULL;
            }
        } else if (!err.msg[0]) {
            mb_err_set(&err, rc, "the factory could not supply options");
        }
        pool_item *it = NULL;
        if (!rc && sb) {
            it = mb_malloc(sizeof *it);
            it->sb = sb;
            it->cookie = cookie;
            it->next = NULL;
            pthread_mutex_lock(&p->mu);
            find_key(p, key, 0)->settling = it;
            pthread_mutex_unlock(&p->mu);
            settling st = {p, key, it};
            mb__pool_settle(settle_usage, &st, SETTLE_WINDOW_MS, SETTLE_QUIET_NS, SETTLE_MAX_MS);
        }

        pthread_mutex_lock(&p->mu);
        k = find_key(p, key, 0); /* keys are never freed before the pool */
        k->creating--;
        int taken = it && k->settling != it; /* a claim took it while it settled */
        if (it && !taken) k->settling = NULL;
        if (taken) {
            k->backoff_ms = 0;
            k->retry_at = 0;
        } else if (rc) {
            k->failures++;
            snprintf(k->last_error, sizeof k->last_error, "%s", err.msg);
            k->backoff_ms = k->backoff_ms ? k->backoff_ms * 2 : BACKOFF_MIN_MS;
            if (k->backoff_ms > BACKOFF_MAX_MS) k->backoff_ms = BACKOFF_MAX_MS;
            k->retry_at = mb_mono_ms() + k->backoff_ms;
            mb_warn("pool %s: cannot create a sandbox (retry in %d ms): %s", key, k->backoff_ms,
                    err.msg);
        } else if (p->stop || k->idle >= k->target) {
            pthread_mutex_unlock(&p->mu);
            free(it);
            dispose(p, key, sb, cookie);
            pthread_mutex_lock(&p->mu);
        } else {
            k->backoff_ms = 0;
            k->retry_at = 0;
            it->next = k->head;
            k->head = it;
            k->idle++;
            pthread_cond_broadcast(&p->ready);
        }
        free(key);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

int mb_pool_new(const mb_pool_factory *factory, mb_pool **out, mb_err *err)
{
    *out = NULL;
    if (!factory || !factory->make_opts)
        return mb_err_set(err, MB_EINVAL, "a pool needs a factory with make_opts");
    mb_pool *p = mb_calloc(1, sizeof *p);
    p->f = *factory;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, &ca);
    pthread_cond_init(&p->ready, &ca);
    pthread_condattr_destroy(&ca);
    int e = pthread_create(&p->thread, NULL, refill_main, p);
    if (e) {
        pthread_mutex_destroy(&p->mu);
        pthread_cond_destroy(&p->work);
        pthread_cond_destroy(&p->ready);
        free(p);
        return mb_err_sys(err, e, "cannot start the pool's refill thread");
    }
    *out = p;
    return 0;
}

int mb_pool_set_target(mb_pool *p, const char *key, unsigned n, mb_err *err)
{
    if (!key || !*key) return mb_err_set(err, MB_EINVAL, "a pool key must not be empty");
    pool_item *extra = NULL;
    pthread_mutex_lock(&p->mu);
    pool_key *k = find_key(p, key, 1);
    k->target = n;
    k->retry_at = 0;
    k->backoff_ms = 0;
    while (k->idle > n) {
        pool_item *it = k->head;
        k->head = it->next;
        k->idle--;
        it->next = extra;
        extra = it;
    }
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->mu);
    while (extra) {
        pool_item *it = extra;
        extra = it->next;
        dispose(p, key, it->sb, it->cookie);
        free(it);
    }
    return 0;
}

int mb_pool_claim(mb_pool *p, const char *key, mb_sandbox **out, void **cookie)
{
    *out = NULL;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        pool_key *k = find_key(p, key, 0);
        pool_item *it = k ? k->head : NULL;
        if (!it && k && k->settling) {
            it = k->settling; /* the refill thread sees it gone */
            k->settling = NULL;
        } else if (!it) {
            if (k) k->misses++;
            pthread_mutex_unlock(&p->mu);
            return MB_ENOTFOUND;
        } else {
            k->head = it->next;
            k->idle--;
        }
        k->claimed_at = mb_mono_ms();
        /* A refill thread with a deadline already wakes by itself and looks
         * again; waking it here would only cost this claim a switch. */
        if (p->idle_wait) pthread_cond_signal(&p->work);
        int ok = alive(it->sb);
        if (ok) k->claimed++;
        pthread_mutex_unlock(&p->mu);
        if (ok) {
            *out = it->sb;
            if (cookie) *cookie = it->cookie;
            free(it);
            return 0;
        }
        dispose(p, key, it->sb, it->cookie);
        free(it);
    }
}

int mb_pool_wait_ready(mb_pool *p, const char *key, int timeout_ms)
{
    struct timespec ts;
    abs_deadline(&ts, mb_mono_ms() + timeout_ms);
    pthread_mutex_lock(&p->mu);
    int rc = 0;
    for (;;) {
        pool_key *k = find_key(p, key, 0);
        if (k && k->idle >= k->target) break;
        if (pthread_cond_timedwait(&p->ready, &p->mu, &ts) == ETIMEDOUT) {
            k = find_key(p, key, 0);
            rc = k && k->idle >= k->target ? 0 : MB_ETIMEOUT;
            break;
        }
    }
    pthread_mutex_unlock(&p->mu);
    return rc;
}

int mb_pool_stats_get(mb_pool *p, const char *key, mb_pool_stats *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&p->mu);
    pool_key *k = find_key(p, key, 0);
    if (k) {
        out->target = k->target;
        out->idle = k->idle;
        out->creating = k->creating;
        out->claimed = k->claimed;
        out->misses = k->misses;
        out->failures = k->failures;
        memcpy(out->last_error, k->last_error, sizeof out->last_error);
    }
    pthread_mutex_unlock(&p->mu);
    return k ? 0 : MB_ENOTFOUND;
}

void mb_pool_free(mb_pool *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, NULL);
    while (p->keys) {
        pool_key *k = p->keys;
        p->keys = k->next;
        while (k->head) {
            pool_item *it = k->head;
            k->head = it->next;
            dispose(p, k->key, it->sb, it->cookie);
            free(it);
        }
        free(k->key);
        free(k);
    }
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->ready);
    free(p);
}
