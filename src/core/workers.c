/*
 * workers.c - a process-wide set of long-lived threads that run the daemon's
 * parallel work: the server starts of an acquire (servers.c), one job per
 * server, each blocked a few milliseconds on its sandbox's init.
 *
 * Why not a thread per job: a cold acquire of MCP-Atlas's 8 servers created
 * and joined 7 threads, and on a virtual machine with shadow page tables
 * (this project's test machine) a thread's creation and end are page-table
 * work: the kernel stack (vmalloc), the guard page, the stack's first
 * faults, and the unmapping of stacks that glibc's cache (40 MB, five 8 MB
 * stacks) could not keep. perf put 10-12% of the daemon's CPU per acquire
 * there. These threads are made on demand, up to MAX_WORKERS, and then wait
 * for work for the life of the process; a caller's batch runs on them and on
 * the caller itself, which takes queued jobs while it waits, so a batch
 * completes even when no thread could be created.
 */
#define _GNU_SOURCE
#include "core/core_int.h"

#include <pthread.h>
#include <stdlib.h>

#define MAX_WORKERS 64
/* Enough for a server start (its deepest frames are the gateway's and the
 * sandbox protocol's, with a few KB of locals); untouched pages cost nothing. */
#define WORKER_STACK (1u << 20)

typedef struct batch {
    size_t left; /* jobs not finished */
    pthread_cond_t done;
} batch;

typedef struct job {
    void (*fn)(void *);
    void *arg;
    batch *b;
    struct job *next;
} job;

static struct {
    pthread_mutex_t mu;
    pthread_cond_t work;
    job *head, *tail;
    int threads, idle;
} W = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, NULL, 0, 0};

/* The next queued job, or NULL (W.mu held). */
static job *pop_locked(void)
{
    mb_assert_held(&W.mu);
    job *j = W.head;
    if (j) {
        W.head = j->next;
        if (!W.head) W.tail = NULL;
    }
    return j;
}

/* Runs j outside the lock and counts it done (W.mu held on entry and exit). */
static void run_locked(job *j)
{
    mb_assert_held(&W.mu);
    pthread_mutex_unlock(&W.mu);
    j->fn(j->arg);
    pthread_mutex_lock(&W.mu);
    if (--j->b->left == 0) pthread_cond_broadcast(&j->b->done);
}

static void *worker(void *unused)
{
    (void)unused;
    pthread_mutex_lock(&W.mu);
    for (;;) {
        job *j;
        while (!(j = pop_locked())) {
            W.idle++;
            pthread_cond_wait(&W.work, &W.mu);
            W.idle--;
        }
        run_locked(j);
    }
    return NULL; /* not reached */
}

/* Makes up to `want` more threads (W.mu held). */
static void grow_locked(int want)
{
    mb_assert_held(&W.mu);
    pthread_attr_t a;
    if (want <= 0 || pthread_attr_init(&a) != 0) return;
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&a, WORKER_STACK);
    for (int i = 0; i < want && W.threads < MAX_WORKERS; i++) {
        pthread_t t;
        if (pthread_create(&t, &a, worker, NULL) != 0) break;
        W.threads++;
    }
    pthread_attr_destroy(&a);
}

void mb_core__parallel(void (*fn)(void *), void *args, size_t size, size_t n)
{
    if (!n) return;
    char *base = args;
    if (n == 1) {
        fn(base);
        return;
    }
    batch b = {.left = n - 1};
    pthread_cond_init(&b.done, NULL);
    job *jobs = mb_calloc(n - 1, sizeof *jobs);
    pthread_mutex_lock(&W.mu);
    for (size_t i = 1; i < n; i++) {
        jobs[i - 1] = (job){.fn = fn, .arg = base + i * size, .b = &b};
        if (W.tail) W.tail->next = &jobs[i - 1];
        else W.head = &jobs[i - 1];
        W.tail = &jobs[i - 1];
    }
    size_t queued = 0;
    for (job *j = W.head; j; j = j->next) queued++;
    if (queued > (size_t)W.idle) grow_locked((int)(queued - (size_t)W.idle));
    pthread_cond_broadcast(&W.work);
    pthread_mutex_unlock(&W.mu);

    fn(base);

    pthread_mutex_lock(&W.mu);
    while (b.left) {
        job *j = pop_locked(); /* any queued job: they are all somebody's wait */
        if (j) run_locked(j);
        else pthread_cond_wait(&b.done, &W.mu);
    }
    pthread_mutex_unlock(&W.mu);
    pthread_cond_destroy(&b.done);
    free(jobs);
}
