/*
 * framing.c - newline-delimited JSON-RPC framing of a server's stdout.
 *
 * MCP's stdio transport puts one message per line. Servers misbehave: they
 * print banners, progress bars and stack traces to stdout, forget the final
 * newline, or emit one enormous line. The framer keeps memory bounded by
 * `max` (a longer line is skipped, remembering only its two ends so that the
 * gateway can still fail the request it answered) and leaves deciding what a
 * line means to the caller. Lines completed inside one read are handed over
 * without copying.
 */
#include "gateway/gateway_int.h"

#include <string.h>

void mb_gw__framer_init(mb_gw_framer *f, size_t max)
{
    memset(f, 0, sizeof *f);
    f->max = max;
}

void mb_gw__framer_dispose(mb_gw_framer *f) { mb_buf_free(&f->line); }

static int blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r') return 0;
    return 1;
}

static void emit(const mb_gw_framer_cb *cb, const char *s, size_t n)
{
    if (n && s[n - 1] == '\r') n--;
    if (!n || blank(s, n)) return;
    cb->line(cb->payload, s, n);
}

/* Remembers the ends of an over-long line. */
static void skip_bytes(mb_gw_framer *f, const char *s, size_t n)
{
    if (f->head_len < MB_GW_FRAMER_EDGE) {
        size_t k = MB_GW_FRAMER_EDGE - f->head_len;
        if (k > n) k = n;
        memcpy(f->head + f->head_len, s, k);
        f->head_len += k;
    }
    if (n >= MB_GW_FRAMER_EDGE) {
        memcpy(f->tail, s + n - MB_GW_FRAMER_EDGE, MB_GW_FRAMER_EDGE);
        f->tail_len = MB_GW_FRAMER_EDGE;
    } else {
        size_t keep = MB_GW_FRAMER_EDGE - n;
        if (keep > f->tail_len) keep = f->tail_len;
        memmove(f->tail, f->tail + f->tail_len - keep, keep);
        memcpy(f->tail + keep, s, n);
        f->tail_len = keep + n;
    }
    f->skipped += n;
}

static void start_skipping(mb_gw_framer *f)
{
    f->skipping = 1;
    f->skipped = 0;
    f->head_len = f->tail_len = 0;
    if (f->line.len) skip_bytes(f, f->line.data, f->line.len); /* data is NULL when empty */
    mb_buf_reset(&f->line);
}

static void end_skipping(mb_gw_framer *f, const mb_gw_framer_cb *cb)
{
    size_t tl = f->tail_len;
    if (tl && f->tail[tl - 1] == '\r') tl--;
    if (cb->oversize) cb->oversize(cb->payload, f->skipped, f->head, f->head_len, f->tail, tl);
    f->skipping = 0;
    f->skipped = f->head_len = f->tail_len = 0;
}

void mb_gw__framer_feed(mb_gw_framer *f, const char *data, size_t n, const mb_gw_framer_cb *cb)
{
    while (n) {
        const char *nl = memchr(data, '\n', n);
        size_t seg = nl ? (size_t)(nl - data) : n;
        if (f->skipping) {
            skip_bytes(f, data, seg);
            if (nl) end_skipping(f, cb);
        } else if (f->line.len + seg > f->max) {
            start_skipping(f);
            skip_bytes(f, data, seg);
            if (nl) end_skipping(f, cb);
        } else if (nl && !f->line.len) {
            emit(cb, data, seg); /* the common case: a whole line in this read */
        } else {
            mb_buf_append(&f->line, data, seg);
            if (nl) {
                emit(cb, f->line.data, f->line.len);
                mb_buf_reset(&f->line);
            }
        }
        if (!nl) break;
        data += seg + 1;
        n -= seg + 1;
    }
    /* Do not hold on to a large buffer after a large message. */
    if (!f->line.len && f->line.cap > (1u << 20)) mb_buf_free(&f->line);
}
