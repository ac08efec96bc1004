/*
 * cfb.c - a small Compound File Binary (OLE2, MS-CFB version 3) writer and
 * reader: what an encrypted Office package is (EncryptionInfo,
 * EncryptedPackage and the \x06DataSpaces storage). The writer lays out
 * FAT, DIFAT, directory, mini FAT and mini stream; the reader bounds every
 * sector number and chain length, so a hostile file cannot loop or read
 * out of range.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "servers/word/cfb.h"

#define SECT 512u
#define MINI 64u
#define CUTOFF 4096u
#define FREESECT 0xFFFFFFFFu
#define ENDOFCHAIN 0xFFFFFFFEu
#define FATSECT 0xFFFFFFFDu
#define DIFSECT 0xFFFFFFFCu
#define NOSTREAM 0xFFFFFFFFu

static void put16(unsigned char *p, unsigned v) { p[0] = (unsigned char)v, p[1] = (unsigned char)(v >> 8); }
static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static unsigned get16(const unsigned char *p) { return (unsigned)p[0] | (unsigned)p[1] << 8; }

/* ---------------------------------------------------------------- write */

typedef struct node {
    const wd_cfb_entry *e; /* NULL: root */
    uint32_t left, right, child;
    uint32_t start;
    uint64_t size;
} node;

/* CFB order: shorter names first, then code units upper-cased */
static int name_cmp(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la != lb) return la < lb ? -1 : 1;
    for (size_t i = 0; i < la; i++) {
        int x = (unsigned char)a[i], y = (unsigned char)b[i];
        if (x >= 'a' && x <= 'z') x -= 32;
        if (y >= 'a' && y <= 'z') y -= 32;
        if (x != y) return x < y ? -1 : 1;
    }
    return 0;
}

static int by_name(const void *a, const void *b, void *entries)
{
    const wd_cfb_entry *x = (const wd_cfb_entry *)entries + (*(const uint32_t *)a - 1);
    const wd_cfb_entry *y = (const wd_cfb_entry *)entries + (*(const uint32_t *)b - 1);
    const char *nx = strrchr(x->path, '/'), *ny = strrchr(y->path, '/');
    return name_cmp(nx ? nx + 1 : x->path, ny ? ny + 1 : y->path);
}

/* a balanced tree over ids[0..n) (all black: readers only walk it) */
static uint32_t tree(node *nodes, uint32_t *ids, size_t n)
{
    if (!n) return NOSTREAM;
    size_t mid = n / 2;
    uint32_t r = ids[mid];
    nodes[r].left = tree(nodes, ids, mid);
    nodes[r].right = tree(nodes, ids + mid + 1, n - mid - 1);
    return r;
}

static int parent_of(const wd_cfb_entry *e, const wd_cfb_entry *s)
{
    /* s is a storage, e a direct child of it */
    size_t ls = strlen(s->path);
    return !strncmp(e->path, s->path, ls) && e->path[ls] == '/' && !strchr(e->path + ls + 1, '/');
}

static int top_level(const wd_cfb_entry *e) { return !strchr(e->path, '/'); }

int wd_cfb_write(const wd_cfb_entry *entries, size_t n, mb_buf *out)
{
    size_t nn = n + 1;
    node *nodes = mb_calloc(nn, sizeof *nodes);
    for (size_t i = 0; i < nn; i++) {
        nodes[i].left = nodes[i].right = nodes[i].child = NOSTREAM;
        nodes[i].start = ENDOFCHAIN;
        if (i) nodes[i].e = &entries[i - 1];
    }
    /* children of each storage (and of the root) */
    uint32_t *ids = mb_calloc(nn, sizeof *ids);
    for (size_t s = 0; s < nn; s++) {
        if (s && !entries[s - 1].storage) continue;
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (s ? parent_of(&entries[i], &entries[s - 1]) : top_level(&entries[i])) ids[k++] = (uint32_t)(i + 1);
        qsort_r(ids, k, sizeof *ids, by_name, (void *)entries);
        nodes[s].child = tree(nodes, ids, k);
    }
    free(ids);
    /* mini stream: every stream under the cutoff, 64-byte aligned */
    mb_buf ministream = {0};
    uint32_t nminis = 0;
    for (size_t i = 0; i < n; i++) {
        if (entries[i].storage) continue;
        nodes[i + 1].size = entries[i].len;
        if (entries[i].len >= CUTOFF || !entries[i].len) continue;
        nodes[i + 1].start = nminis;
        mb_buf_append(&ministream, entries[i].data, entries[i].len);
        size_t pad = (MINI - entries[i].len % MINI) % MINI;
        for (size_t k = 0; k < pad; k++) mb_buf_putc(&ministream, 0);
        nminis += (uint32_t)((entries[i].len + MINI - 1) / MINI);
    }
    uint32_t minifat_bytes = nminis * 4;
    uint32_t n_minifat = (minifat_bytes + SECT - 1) / SECT;
    uint32_t n_ministream = (uint32_t)((ministream.len + SECT - 1) / SECT);
    uint32_t n_dir = (uint32_t)((nn * 128 + SECT - 1) / SECT);
    uint32_t n_big = 0;
    for (size_t i = 0; i < n; i++)
        if (!entries[i].storage && entries[i].len >= CUTOFF) n_big += (uint32_t)((entries[i].len + SECT - 1) / SECT);
    uint32_t data = n_dir + n_minifat + n_ministream + n_big;
    uint32_t n_fat = 1, n_difat = 0;
    for (;;) { /* FAT covers itself and the DIFAT sectors */
        n_difat = n_fat > 109 ? (n_fat - 109 + 126) / 127 : 0;
        uint32_t need = (data + n_fat + n_difat + 127) / 128;
        if (need <= n_fat) break;
        n_fat = need;
    }
    uint32_t total = n_difat + n_fat + data;
    uint32_t *fat = mb_malloc((size_t)n_fat * 128 * sizeof *fat);
    for (size_t i = 0; i < (size_t)n_fat * 128; i++) fat[i] = FREESECT;
    uint32_t at = 0;
    uint32_t difat_start = n_difat ? at : ENDOFCHAIN;
    for (uint32_t i = 0; i < n_difat; i++) fat[at++] = DIFSECT;
    uint32_t fat_start = at;
    for (uint32_t i = 0; i < n_fat; i++) fat[at++] = FATSECT;
#define CHAIN(count, startvar)                                                                 \
    do {                                                                                       \
        startvar = (count) ? at : ENDOFCHAIN;                                                  \
        for (uint32_t k_ = 0; k_ < (count); k_++, at++) fat[at] = k_ + 1 < (count) ? at + 1 : ENDOFCHAIN; \
    } while (0)
    uint32_t dir_start, minifat_start, ministream_start;
    CHAIN(n_dir, dir_start);
    CHAIN(n_minifat, minifat_start);
    CHAIN(n_ministream, ministream_start);
    for (size_t i = 0; i < n; i++)
        if (!entries[i].storage && entries[i].len >= CUTOFF) {
            uint32_t c = (uint32_t)((entries[i].len + SECT - 1) / SECT);
            CHAIN(c, nodes[i + 1].start);
        }
#undef CHAIN
    nodes[0].start = ministream_start;
    nodes[0].size = ministream.len;
    /* header */
    unsigned char h[SECT];
    memset(h, 0, sizeof h);
    memcpy(h, "\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1", 8);
    put16(h + 24, 0x3E), put16(h + 26, 3), put16(h + 28, 0xFFFE), put16(h + 30, 9), put16(h + 32, 6);
    put32(h + 44, n_fat), put32(h + 48, dir_start), put32(h + 56, CUTOFF);
    put32(h + 60, minifat_start), put32(h + 64, n_minifat);
    put32(h + 68, difat_start), put32(h + 72, n_difat);
    for (uint32_t i = 0; i < 109; i++) put32(h + 76 + 4 * i, i < n_fat ? fat_start + i : FREESECT);
    mb_buf_append(out, h, SECT);
    /* DIFAT sectors */
    for (uint32_t d = 0; d < n_difat; d++) {
        unsigned char s[SECT];
        for (uint32_t k = 0; k < 127; k++) {
            uint32_t idx = 109 + d * 127 + k;
            put32(s + 4 * k, idx < n_fat ? fat_start + idx : FREESECT);
        }
        put32(s + 508, d + 1 < n_difat ? d + 1 : ENDOFCHAIN);
        mb_buf_append(out, s, SECT);
    }
    /* FAT */
    for (size_t i = 0; i < (size_t)n_fat * 128; i++) {
        unsigned char b[4];
        put32(b, fat[i]);
        mb_buf_append(out, b, 4);
    }
    free(fat);
    /* directory */
    mb_buf dir = {0};
    for (size_t i = 0; i < nn; i++) {
        unsigned char e[128];
        memset(e, 0, sizeof e);
        const char *name = "Root Entry";
        if (i) {
            const char *slash = strrchr(nodes[i].e->path, '/');
            name = slash ? slash + 1 : nodes[i].e->path;
        }
        size_t ln = strlen(name);
        if (ln > 31) ln = 31;
        for (size_t k = 0; k < ln; k++) put16(e + 2 * k, (unsigned char)name[k]);
        put16(e + 64, (unsigned)(2 * (ln + 1)));
        e[66] = i == 0 ? 5 : nodes[i].e->storage ? 1 : 2;
        e[67] = 1; /* black */
        put32(e + 68, nodes[i].left), put32(e + 72, nodes[i].right), put32(e + 76, nodes[i].child);
        int is_stream = i && !nodes[i].e->storage;
        put32(e + 116, i == 0 || is_stream ? nodes[i].start : 0);
        put32(e + 120, (uint32_t)nodes[i].size), put32(e + 124, (uint32_t)(nodes[i].size >> 32));
        mb_buf_append(&dir, e, sizeof e);
    }
    while (dir.len % SECT) {
        unsigned char e[128];
        memset(e, 0, sizeof e);
        put32(e + 68, NOSTREAM), put32(e + 72, NOSTREAM), put32(e + 76, NOSTREAM);
        mb_buf_append(&dir, e, sizeof e);
    }
    mb_buf_append(out, dir.data, dir.len);
    mb_buf_free(&dir);
    /* mini FAT */
    mb_buf mf = {0};
    for (size_t i = 0; i < n; i++) {
        if (entries[i].storage || entries[i].len >= CUTOFF || !entries[i].len) continue;
        uint32_t c = (uint32_t)((entries[i].len + MINI - 1) / MINI), s = nodes[i + 1].start;
        for (uint32_t k = 0; k < c; k++) {
            unsigned char b[4];
            put32(b, k + 1 < c ? s + k + 1 : ENDOFCHAIN);
            mb_buf_append(&mf, b, 4);
        }
    }
    while (mf.len % SECT) {
        unsigned char b[4];
        put32(b, FREESECT);
        mb_buf_append(&mf, b, 4);
    }
    mb_buf_append(out, mf.data, mf.len);
    mb_buf_free(&mf);
    /* mini stream, then the big streams */
    mb_buf_append(out, ministream.data, ministream.len);
    while (out->len % SECT) mb_buf_putc(out, 0);
    mb_buf_free(&ministream);
    for (size_t i = 0; i < n; i++) {
        if (entries[i].storage || entries[i].len < CUTOFF) continue;
        mb_buf_append(out, entries[i].data, entries[i].len);
        while (out->len % SECT) mb_buf_putc(out, 0);
    }
    free(nodes);
    return out->len == (size_t)(total + 1) * SECT ? 0 : -1;
}

/* ----------------------------------------------------------------- read */

int wd_cfb_is(const void *data, size_t len)
{
    return len >= 8 && !memcmp(data, "\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1", 8);
}

typedef struct rd {
    const unsigned char *d;
    size_t len;
    uint32_t ssz;
    uint32_t *fat;
    size_t nfat;
} rd;

static const unsigned char *sector(const rd *r, uint32_t s)
{
    size_t off = ((size_t)s + 1) * r->ssz;
    return off + r->ssz <= r->len ? r->d + off : NULL;
}

/* a regular chain's bytes (at most `max`); -1 on a broken chain */
static int read_chain(const rd *r, uint32_t start, size_t max, mb_buf *out)
{
    size_t guard = r->len / r->ssz + 1;
    for (uint32_t s = start; s != ENDOFCHAIN && out->len < max; guard--) {
        const unsigned char *p = sector(r, s);
        if (!p || !guard || s >= r->nfat) return -1;
        size_t take = max - out->len < r->ssz ? max - out->len : r->ssz;
        mb_buf_append(out, p, take);
        s = r->fat[s];
    }
    return out->len >= max || max == SIZE_MAX ? 0 : -1;
}

int wd_cfb_read(const void *data, size_t len, const char *name, mb_buf *out, char **why)
{
    const unsigned char *d = data;
    rd r = {.d = d, .len = len};
    mb_buf dir = {0}, mini = {0}, minifat = {0};
    int rc = -1;
    if (!wd_cfb_is(data, len) || len < 512) {
        *why = mb_strdup("not a compound file");
        return -1;
    }
    unsigned shift = get16(d + 30);
    if (shift != 9 && shift != 12) goto bad;
    r.ssz = 1u << shift;
    uint32_t n_fat = get32(d + 44), dir_start = get32(d + 48), cutoff = get32(d + 56);
    uint32_t mf_start = get32(d + 60), difat = get32(d + 68), n_difat = get32(d + 72);
    size_t nsect = len / r.ssz;
    if (n_fat > nsect || n_difat > nsect) goto bad;
    /* FAT sector numbers from the header and the DIFAT chain */
    uint32_t *fatsecs = mb_calloc(n_fat ? n_fat : 1, sizeof *fatsecs);
    size_t k = 0;
    for (uint32_t i = 0; i < 109 && k < n_fat; i++) fatsecs[k++] = get32(d + 76 + 4 * i);
    for (uint32_t s = difat, g = 0; k < n_fat && s != ENDOFCHAIN && g < n_difat; g++) {
        const unsigned char *p = sector(&r, s);
        if (!p) break;
        for (uint32_t i = 0; i < r.ssz / 4 - 1 && k < n_fat; i++) fatsecs[k++] = get32(p + 4 * i);
        s = get32(p + r.ssz - 4);
    }
    r.nfat = (size_t)k * (r.ssz / 4);
    r.fat = mb_malloc((r.nfat ? r.nfat : 1) * sizeof *r.fat);
    for (size_t i = 0; i < k; i++) {
        const unsigned char *p = sector(&r, fatsecs[i]);
        for (size_t j = 0; j < r.ssz / 4; j++) r.fat[i * (r.ssz / 4) + j] = p ? get32(p + 4 * j) : FREESECT;
    }
    free(fatsecs);
    if (read_chain(&r, dir_start, SIZE_MAX, &dir)) goto bad;
    if (dir.len < 128) goto bad;
    const unsigned char *root = (const unsigned char *)dir.data;
    for (size_t off = 0; off + 128 <= dir.len; off += 128) {
        const unsigned char *e = (const unsigned char *)dir.data + off;
        unsigned nl = get16(e + 64);
        if (e[66] != 2 || nl < 2 || nl > 64) continue;
        char nm[33];
        size_t c = 0;
        for (; c < (nl / 2 - 1) && c < 32; c++) nm[c] = (char)(get16(e + 2 * c) < 128 ? get16(e + 2 * c) : '?');
        nm[c] = 0;
        if (strcmp(nm, name)) continue;
        uint64_t size = get32(e + 120);
        uint32_t start = get32(e + 116);
        if (size > len) goto bad;
        if (size < cutoff) {
            /* the mini stream lives in the root entry's chain */
            if (read_chain(&r, get32(root + 116), get32(root + 120), &mini)) goto bad;
            if (read_chain(&r, mf_start, SIZE_MAX, &minifat)) goto bad;
            size_t nmf = minifat.len / 4, guard = nmf + 1;
            for (uint32_t s = start; s != ENDOFCHAIN && out->len < size; guard--) {
                if (!guard || s >= nmf || ((size_t)s + 1) * MINI > mini.len) goto bad;
                size_t take = size - out->len < MINI ? size - out->len : MINI;
                mb_buf_append(out, mini.data + (size_t)s * MINI, take);
                s = get32((const unsigned char *)minifat.data + 4 * s);
            }
            if (out->len < size) goto bad;
        } else if (read_chain(&r, start, size, out)) {
            goto bad;
        }
        rc = 0;
        goto done;
    }
    *why = mb_asprintf("no %s stream", name);
    goto done;
bad:
    *why = mb_strdup("corrupt compound file");
done:
    free(r.fat);
    mb_buf_free(&dir);
    mb_buf_free(&mini);
    mb_buf_free(&minifat);
    return rc;
}
