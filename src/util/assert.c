/*
 * assert.c - internal contracts checked in test builds (see mb_assert in
 * util.h): a failed one names the expression and aborts, so that the ASan,
 * TSan and fuzz builds stop at the first broken invariant.
 *
 * Lock ownership is read from glibc's mutex word (the owner's thread id),
 * which glibc records for every mutex type; this is glibc-specific by
 * design and only used by asserts.
 */
#define _GNU_SOURCE
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void mb__assert_fail(const char *expr, const char *file, int line, const char *func)
{
    fprintf(stderr, "mcpbox: %s:%d: %s: assertion failed: %s\n", file, line, func, expr);
    fflush(stderr);
    abort();
}

int mb_mutex_held(const pthread_mutex_t *m)
{
    return m->__data.__owner == gettid();
}

int mb_rwlock_wrheld(const pthread_rwlock_t *l)
{
    return (pid_t)l->__data.__cur_writer == gettid();
}
