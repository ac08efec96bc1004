/*
 * test_core_workers.c - mb_core__parallel (src/core/workers.c): every job of
 * a batch runs exactly once, the jobs of a batch run at the same time, the
 * threads are kept and reused across batches (a cold acquire no longer
 * creates a thread per server start), and batches from several callers at
 * once all complete.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/core_int.h"

typedef struct slot {
    int runs;
    pid_t tid;
} slot;

static void count(void *arg)
{
    slot *s = arg;
    s->runs++;
    s->tid = gettid();
}

static void test_every_job_runs_once(void **state)
{
    (void)state;
    size_t sizes[] = {0, 1, 2, 8, 100};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        slot *s = calloc(n ? n : 1, sizeof *s);
        mb_core__parallel(count, s, sizeof *s, n);
        for (size_t i = 0; i < n; i++) assert_int_equal(s[i].runs, 1);
        free(s);
    }
}

/* n jobs that each wait until all n have arrived: only possible when they
 * run at the same time. */
static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int arrived, want, met;
} R = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0};

static void rendezvous(void *arg)
{
    (void)arg;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 20;
    pthread_mutex_lock(&R.mu);
    R.arrived++;
    pthread_cond_broadcast(&R.cv);
    while (R.arrived < R.want)
        if (pthread_cond_timedwait(&R.cv, &R.mu, &until) != 0) break;
    if (R.arrived >= R.want) R.met++;
    pthread_mutex_unlock(&R.mu);
}

static void test_jobs_of_a_batch_run_at_once(void **state)
{
    (void)state;
    enum { N = 8 };
    R.arrived = R.met = 0;
    R.want = N;
    char args[N];
    mb_core__parallel(rendezvous, args, 1, N);
    assert_int_equal(R.met, N);
}

static int cmp_tid(const void *a, const void *b)
{
    return (*(const pid_t *)a > *(const pid_t *)b) - (*(const pid_t *)a < *(const pid_t *)b);
}

static void test_threads_are_reused(void **state)
{
    (void)state;
    enum { BATCHES = 40, N = 4 };
    pid_t tids[BATCHES * N];
    for (int b = 0; b < BATCHES; b++) {
        slot s[N];
        memset(s, 0, sizeof s);
        mb_core__parallel(count, s, sizeof *s, N);
        for (int i = 0; i < N; i++) tids[b * N + i] = s[i].tid;
    }
    qsort(tids, BATCHES * N, sizeof *tids, cmp_tid);
    int distinct = 0;
    for (int i = 0; i < BATCHES * N; i++) distinct += !i || tids[i] != tids[i - 1];
    /* the caller plus the workers the earlier tests and these batches made;
     * a thread per job would be 120 new ones */
    assert_true(distinct <= 1 + 100);
    assert_true(distinct < BATCHES * (N - 1));
}

typedef struct caller {
    pthread_t th;
    int rounds;
    int total;
} caller;

static void *many_batches(void *arg)
{
    caller *c = arg;
    for (int r = 0; r < c->rounds; r++) {
        slot s[8];
        memset(s, 0, sizeof s);
        mb_core__parallel(count, s, sizeof *s, 8);
        for (int i = 0; i < 8; i++) c->total += s[i].runs;
    }
    return NULL;
}

static void test_concurrent_callers_all_complete(void **state)
{
    (void)state;
    enum { CALLERS = 5, ROUNDS = 30 };
    caller c[CALLERS];
    memset(c, 0, sizeof c);
    for (int i = 0; i < CALLERS; i++) {
        c[i].rounds = ROUNDS;
        assert_int_equal(pthread_create(&c[i].th, NULL, many_batches, &c[i]), 0);
    }
    for (int i = 0; i < CALLERS; i++) {
        pthread_join(c[i].th, NULL);
        assert_int_equal(c[i].total, ROUNDS * 8);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_job_runs_once),
        cmocka_unit_test(test_jobs_of_a_batch_run_at_once),
        cmocka_unit_test(test_threads_are_reused),
        cmocka_unit_test(test_concurrent_callers_all_complete),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
