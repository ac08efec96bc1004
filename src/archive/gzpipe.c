/*
 * gzpipe.c - gzip compression of a dump on a second thread.
 *
 * Why: making a dump is half file-system work (open, read, stat: kernel
 * time) and half deflate (user time). `tar czf` overlaps the two by
 * running tar and gzip as two processes; doing both on one thread would
 * lose to it on a tree of many small files. So the dump's tar writer
 * (create.c, the calling thread) hands its output blocks to this pipe, and
 * a compressor thread feeds them to a second libarchive writer (raw format
 * + gzip filter) that writes to the fd or the caller's callback.
 *
 * Design: a ring of PIPE_SLOTS buffers of PIPE_CHUNK bytes under one mutex
 * and one condition variable. The producer blocks while the ring is full,
 * the consumer while it is empty. If the consumer fails (disk full, the
 * receiver said stop), it records the error, keeps draining without
 * writing, and the producer's next write fails, which unwinds the walk.
 * Memory: PIPE_SLOTS * PIPE_CHUNK, whatever the dump's size.
 *
 * Threads: the callback given to mb_archive__gzpipe_start runs on the
 * compressor thread, one call at a time.
 */
#define _GNU_SOURCE
#include "archive/archive_int.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PIPE_SLOTS 4
#define PIPE_CHUNK (256 * 1024)

enum { RUNNING = 0, FINISH = 1, ABANDON = 2 };

struct mb_archive__gzpipe {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;          /* signalled on every change of count/state */
    char *slot[PIPE_SLOTS];
    size_t len[PIPE_SLOTS];
    unsigned head;              /* next slot the producer fills */
    unsigned count;             /* filled slots; the oldest is head - count */
    int state;                  /* RUNNING, or what the producer decided */
    int failed;                 /* the consumer failed; cerr says why */
    mb_err cerr;
    struct archive *gz;         /* raw format + gzip filter; consumer's */
    mb_archive_write_fn fn;     /* output callback, or NULL for the fd */
    void *payload;
    int fn_stopped;             /* fn returned non-zero */
};

static la_ssize_t out_cb(struct archive *a, void *payload, const void *buf, size_t len)
{
    mb_archive__gzpipe *p = payload;
    if (p->fn(p->payload, buf, len) != 0) {
        p->fn_stopped = 1;
        archive_set_error(a, EIO, "the receiver stopped");
        return -1;
    }
    return (la_ssize_t)len;
}

static void consumer_error(mb_archive__gzpipe *p)
{
    if (p->fn_stopped) {
        mb_err_set(&p->cerr, MB_EIO, "the dump's receiver stopped it");
        return;
    }
    const char *m = archive_error_string(p->gz);
    int e = archive_errno(p->gz);
    if (e > 0)
        mb_err_sys(&p->cerr, e, "cannot write the dump");
    else
        mb_err_set(&p->cerr, MB_EIO, "cannot write the dump: %s", m ? m : "unknown error");
}

static void *consumer_main(void *arg)
{
    mb_archive__gzpipe *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (p->count == 0 && p->state == RUNNING) pthread_cond_wait(&p->cv, &p->mu);
        if (p->state == ABANDON || p->count == 0) {
            pthread_mutex_unlock(&p->mu);
            break;
        }
        unsigned i = (p->head + PIPE_SLOTS - p->count) % PIPE_SLOTS;
        int failed = p->failed;
        pthread_mutex_unlock(&p->mu);

        int bad = !failed && archive_write_data(p->gz, p->slot[i], p->len[i]) < 0;

        pthread_mutex_lock(&p->mu);
        if (bad) {
            consumer_error(p);
            p->failed = 1;
        }
        p->count--;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
    }
    /* Only the consumer touches gz, so the final flush happens here too. */
    if (p->state == FINISH && !p->failed && archive_write_close(p->gz) != ARCHIVE_OK) {
        consumer_error(p);
        p->failed = 1;
    }
    return NULL;
}

int mb_archive__gzpipe_start(mb_archive__gzpipe **out, int level, int out_fd,
                             mb_archive_write_fn fn, void *payload, mb_err *err)
{
    mb_archive__gzpipe *p = mb_calloc(1, sizeof *p);
    p->fn = fn;
    p->payload = payload;
    p->gz = archive_write_new();
    char lv[4];
    snprintf(lv, sizeof lv, "%d", level);
    struct archive_entry *e = archive_entry_new();
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_copy_pathname(e, "dump");
    int ok = archive_write_add_filter_gzip(p->gz) == ARCHIVE_OK &&
             archive_write_set_filter_option(p->gz, "gzip", "compression-level", lv) == ARCHIVE_OK &&
             /* no mtime in the gzip header: the same tree gives the same bytes */
             archive_write_set_filter_option(p->gz, "gzip", "timestamp", NULL) == ARCHIVE_OK &&
             archive_write_set_format_raw(p->gz) == ARCHIVE_OK &&
             archive_write_set_bytes_per_block(p->gz, PIPE_CHUNK) == ARCHIVE_OK &&
             archive_write_set_bytes_in_last_block(p->gz, 1) == ARCHIVE_OK &&
             (fn ? archive_write_open(p->gz, p, NULL, out_cb, NULL)
                 : archive_write_open_fd(p->gz, out_fd)) == ARCHIVE_OK &&
             archive_write_header(p->gz, e) == ARCHIVE_OK;
    archive_entry_free(e);
    if (!ok) {
        consumer_error(p);
        int rc = mb_err_set(err, p->cerr.code, "%s", p->cerr.msg);
        archive_write_free(p->gz);
        free(p);
        return rc;
    }
    for (int i = 0; i < PIPE_SLOTS; i++) p->slot[i] = mb_malloc(PIPE_CHUNK);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    int e2 = pthread_create(&p->thread, NULL, consumer_main, p);
    if (e2) {
        for (int i = 0; i < PIPE_SLOTS; i++) free(p->slot[i]);
        pthread_mutex_destroy(&p->mu);
        pthread_cond_destroy(&p->cv);
        archive_write_free(p->gz);
        free(p);
        return mb_err_sys(err, e2, "cannot start the compression thread");
    }
    *out = p;
    return 0;
}

la_ssize_t mb_archive__gzpipe_write(struct archive *a, void *payload, const void *buf, size_t len)
{
    mb_archive__gzpipe *p = payload;
    const char *src = buf;
    size_t left = len;
    while (left) {
        size_t n = left < PIPE_CHUNK ? left : PIPE_CHUNK;
        pthread_mutex_lock(&p->mu);
        while (p->count == PIPE_SLOTS && !p->failed) pthread_cond_wait(&p->cv, &p->mu);
        if (p->failed) {
            pthread_mutex_unlock(&p->mu);
            archive_set_error(a, EIO, "%s", p->cerr.msg);
            return -1;
        }
        unsigned i = p->head;
        pthread_mutex_unlock(&p->mu);
        /* Slot i is the producer's until published below. */
        memcpy(p->slot[i], src, n);
        p->len[i] = n;
        pthread_mutex_lock(&p->mu);
        p->head = (p->head + 1) % PIPE_SLOTS;
        p->count++;
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
        src += n;
        left -= n;
    }
    return (la_ssize_t)len;
}

int mb_archive__gzpipe_finish(mb_archive__gzpipe *p, int ok, uint64_t *compressed, mb_err *err)
{
    pthread_mutex_lock(&p->mu);
    p->state = ok ? FINISH : ABANDON;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, NULL);
    int rc = 0;
    if (p->failed) rc = mb_err_set(err, p->cerr.code, "%s", p->cerr.msg);
    if (compressed) *compressed = (uint64_t)archive_filter_bytes(p->gz, -1);
    archive_write_free(p->gz);
    for (int i = 0; i < PIPE_SLOTS; i++) free(p->slot[i]);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p);
    return rc;
}
