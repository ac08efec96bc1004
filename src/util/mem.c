/*
 * mem.c - allocation wrappers that abort on exhaustion, and growable buffers.
 *
 * mcpbox treats out-of-memory in the daemon as fatal: every caller would
 * otherwise need a recovery path it could not test.
 */
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void oom(size_t n)
{
    fprintf(stderr, "mcpbox: out of memory allocating %zu bytes\n", n);
    abort();
}

void *mb_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) oom(n);
    return p;
}

void *mb_calloc(size_t count, size_t n)
{
    void *p = calloc(count ? count : 1, n ? n : 1);
    if (!p) oom(count * n);
    return p;
}

void *mb_realloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) oom(n);
    return q;
}

char *mb_strdup(const char *s)
{
    return mb_strndup(s, strlen(s));
}

char *mb_strndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *p = mb_malloc(len + 1);
    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

char *mb_asprintf(const char *fmt, ...)
{
    mb_buf b = {0};
    va_list ap;
    va_start(ap, fmt);
    mb_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    return mb_buf_steal(&b);
}

void mb_buf_reserve(mb_buf *b, size_t extra)
{
    size_t need = b->len + extra + 1;
    if (need <= b->cap) return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need) cap *= 2;
    b->data = mb_realloc(b->data, cap);
    b->cap = cap;
}

void mb_buf_append(mb_buf *b, const void *data, size_t n)
{
    mb_buf_reserve(b, n);
    if (n) memcpy(b->data + b->len, data, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void mb_buf_puts(mb_buf *b, const char *s) { mb_buf_append(b, s, strlen(s)); }

void mb_buf_putc(mb_buf *b, char c)
{
    if (b->len + 2 > b->cap) mb_buf_reserve(b, 1);
    b->data[b->len++] = c;
    b->data[b->len] = '\0';
}

void mb_buf_vprintf(mb_buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) return;
    mb_buf_reserve(b, (size_t)n);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void mb_buf_printf(mb_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mb_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

void mb_buf_consume(mb_buf *b, size_t n)
{
    if (n >= b->len) {
        b->len = 0;
    } else {
        memmove(b->data, b->data + n, b->len - n);
        b->len -= n;
    }
    if (b->data) b->data[b->len] = '\0';
}

void mb_buf_reset(mb_buf *b)
{
    b->len = 0;
    if (b->data) b->data[0] = '\0';
}

char *mb_buf_steal(mb_buf *b)
{
    char *p = b->data ? b->data : mb_strdup("");
    b->data = NULL;
    b->len = b->cap = 0;
    return p;
}

void mb_buf_free(mb_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
