/*
 * workers.c - tools/call on worker threads, for servers that allow several
 * calls at once (mb_mcp_info.concurrent_calls > 1).
 *
 * The reading thread (mb_mcp_serve) parses every line as before; a single
 * tools/call request becomes a job on a FIFO queue instead of running in
 * place, so that a long call (a command that sleeps, a slow build) never
 * holds up the calls of other sessions multiplexed onto the same stdio
 * stream, nor the pings and cancellations that follow it. Up to
 * concurrent_calls threads, started on demand, take jobs in order.
 *
 * Cancellation: notifications/cancelled for a queued job removes it (no
 * response is sent, as the protocol wants); for a running job it sets the
 * job's flag and signals its eventfd, which is what mb_mcp_call_input_fd()
 * gives the handler to watch in place of stdin. At EOF of stdin the calls
 * already received still run and are answered (`printf ... | mcpbox mcp`
 * works); the threads are joined before mb_mcp_serve returns. If stdout
 * breaks, nobody can read the answers: queued calls are dropped and running
 * ones cancelled.
 *
 * Locking: wk->lock guards the queue, the running list and the thread
 * count; responses are written under srv->out_lock (transport.c), so
 * messages never interleave on stdout.
 */
#include "mcp/mcp_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

struct mb_mcp_workers {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    mb_mcp_job *queue_head, *queue_tail;
    mb_mcp_job *running; /* doubly linked through prev/next */
    pthread_t *threads;
    size_t nthreads, max_threads, idle;
    int closing;
};

static void job_free(mb_mcp_job *job)
{
    if (job->wake_fd >= 0) close(job->wake_fd);
    json_decref(job->msg);
    free(job);
}

static void job_wake(mb_mcp_job *job)
{
    atomic_store(&job->cancelled, 1);
    uint64_t one = 1;
    ssize_t w = write(job->wake_fd, &one, sizeof one);
    (void)w; /* an eventfd only refuses at its counter's limit: already awake */
}

static void *worker_main(void *arg)
{
    mb_mcp_server *srv = arg;
    mb_mcp_workers *wk = srv->workers;
    pthread_mutex_lock(&wk->lock);
    for (;;) {
        while (!wk->queue_head && !wk->closing) {
            wk->idle++;
            pthread_cond_wait(&wk->cond, &wk->lock);
            wk->idle--;
        }
        mb_mcp_job *job = wk->queue_head;
        if (!job) break; /* closing, nothing left */
        wk->queue_head = job->next;
        if (!wk->queue_head) wk->queue_tail = NULL;
        job->prev = NULL;
        job->next = wk->running;
        if (wk->running) wk->running->prev = job;
        wk->running = job;
        pthread_mutex_unlock(&wk->lock);

        json_t *resp = mb_mcp__call_tool(srv, job);
        if (resp && !atomic_load(&job->cancelled)) mb_mcp__send(srv, resp);
        else json_decref(resp);

        pthread_mutex_lock(&wk->lock);
        if (job->prev) job->prev->next = job->next;
        else wk->running = job->next;
        if (job->next) job->next->prev = job->prev;
        job_free(job);
    }
    pthread_mutex_unlock(&wk->lock);
    return NULL;
}

int mb_mcp__workers_enabled(const mb_mcp_server *srv)
{
    return srv->info->concurrent_calls > 1 && srv->out_fd >= 0 && !srv->out_buf;
}

void mb_mcp__workers_submit(mb_mcp_server *srv, json_t *msg)
{
    if (!srv->workers) {
        mb_mcp_workers *wk = mb_calloc(1, sizeof *wk);
        pthread_mutex_init(&wk->lock, NULL);
        pthread_cond_init(&wk->cond, NULL);
        wk->max_threads = (size_t)srv->info->concurrent_calls;
        wk->threads = mb_calloc(wk->max_threads, sizeof *wk->threads);
        srv->workers = wk;
    }
    mb_mcp_workers *wk = srv->workers;
    mb_mcp_job *job = mb_calloc(1, sizeof *job);
    job->msg = json_incref(msg);
    job->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (job->wake_fd < 0) {
        /* No descriptor to spare: run it here, as a serial server would. */
        job_free(job);
        mb_mcp__send(srv, mb_mcp__dispatch(srv, msg));
        return;
    }
    pthread_mutex_lock(&wk->lock);
    if (wk->queue_tail) wk->queue_tail->next = job;
    else wk->queue_head = job;
    wk->queue_tail = job;
    if (!wk->idle && wk->nthreads < wk->max_threads &&
        pthread_create(&wk->threads[wk->nthreads], NULL, worker_main, srv) == 0)
        wk->nthreads++;
    pthread_cond_signal(&wk->cond);
    int none = wk->nthreads == 0;
    pthread_mutex_unlock(&wk->lock);
    if (none) {
        /* Not even one thread could start: serve the queue in place. */
        pthread_mutex_lock(&wk->lock);
        wk->queue_head = wk->queue_tail = NULL;
        pthread_mutex_unlock(&wk->lock);
        json_t *resp = mb_mcp__call_tool(srv, job);
        if (resp) mb_mcp__send(srv, resp);
        job_free(job);
    }
}

void mb_mcp__workers_cancel(mb_mcp_server *srv, const json_t *request_id)
{
    mb_mcp_workers *wk = srv->workers;
    if (!wk || !request_id) return;
    pthread_mutex_lock(&wk->lock);
    mb_mcp_job *prev = NULL;
    for (mb_mcp_job *j = wk->queue_head; j; prev = j, j = j->next) {
        if (!json_equal(json_object_get(j->msg, "id"), (json_t *)request_id)) continue;
        if (prev) prev->next = j->next;
        else wk->queue_head = j->next;
        if (wk->queue_tail == j) wk->queue_tail = prev;
        job_free(j);
        pthread_mutex_unlock(&wk->lock);
        return;
    }
    for (mb_mcp_job *j = wk->running; j; j = j->next)
        if (json_equal(json_object_get(j->msg, "id"), (json_t *)request_id)) job_wake(j);
    pthread_mutex_unlock(&wk->lock);
}

void mb_mcp__workers_finish(mb_mcp_server *srv)
{
    mb_mcp_workers *wk = srv->workers;
    if (!wk) return;
    pthread_mutex_lock(&wk->lock);
    wk->closing = 1;
    if (srv->out_broken) {
        while (wk->queue_head) {
            mb_mcp_job *j = wk->queue_head;
            wk->queue_head = j->next;
            job_free(j);
        }
        wk->queue_tail = NULL;
        for (mb_mcp_job *j = wk->running; j; j = j->next) job_wake(j);
    }
    pthread_cond_broadcast(&wk->cond);
    pthread_mutex_unlock(&wk->lock);
    for (size_t i = 0; i < wk->nthreads; i++) pthread_join(wk->threads[i], NULL);
    pthread_cond_destroy(&wk->cond);
    pthread_mutex_destroy(&wk->lock);
    free(wk->threads);
    free(wk);
    srv->workers = NULL;
}
