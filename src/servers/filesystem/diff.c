/*
 * diff.c - the unified diff edit_file returns, identical to what jsdiff
 * (createTwoFilesPatch, as server-filesystem calls it) prints: jsdiff 8 for
 * server-filesystem 2026.x, jsdiff 5 for 2025.7.1.
 *
 * Hunk boundaries depend on which of several equally short edit scripts the
 * diff picks, so this follows jsdiff's variant of Myers' O(ND) algorithm
 * closely: same diagonal order, same choice between insertion and removal
 * (prefer the path that went furthest in the old text; jsdiff 5 asks for
 * one line more before it prefers the insertion), same pruning of diagonals
 * that hit an edge. Lines are the tokens (each keeps its '\n'). jsdiff 5
 * then moves each removal in front of an insertion just before it.
 * Hunks take 4 lines of context and merge when at most 8 lines apart.
 * "\ No newline at end of file": jsdiff 8 puts it after the line that lacks
 * the newline; jsdiff 5 decides from the two texts' last characters when a
 * hunk closes at the end, and can put it in odd places - reproduced too.
 */
#include "servers/filesystem/fs.h"

#include <stdlib.h>
#include <string.h>

typedef struct tok {
    const char *p;
    size_t n;
    unsigned long h;
} tok;

/* A run of equal / added / removed tokens, linked backwards. */
typedef struct comp {
    long count;
    int added, removed;
    long prev; /* index into the arena, -1 for none */
} comp;

typedef struct path {
    long old_pos;
    long last; /* comp index or -1 */
    int valid;
} path;

typedef struct arena {
    comp *v;
    size_t n, cap;
} arena;

static long new_comp(arena *a, long count, int added, int removed, long prev)
{
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 256;
        a->v = mb_realloc(a->v, a->cap * sizeof *a->v);
    }
    a->v[a->n] = (comp){count, added, removed, prev};
    return (long)a->n++;
}

static tok *tokenize(const char *s, size_t n, long *count)
{
    long c = 0;
    for (size_t i = 0; i < n; i++) c += s[i] == '\n';
    tok *v = mb_malloc((size_t)(c + 1) * sizeof *v);
    long k = 0;
    size_t start = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '\n') {
            v[k++] = (tok){s + start, i + 1 - start, 0};
            start = i + 1;
        }
    if (start < n) v[k++] = (tok){s + start, n - start, 0};
    for (long i = 0; i < k; i++) {
        v[i].h = mb_hash_bytes(v[i].p, v[i].n);
    }
    *count = k;
    return v;
}

static int tok_eq(const tok *a, const tok *b)
{
    return a->h == b->h && a->n == b->n && !memcmp(a->p, b->p, a->n);
}

static path add_to_path(arena *a, const path *p, int added, int removed, long inc)
{
    path r = {p->old_pos + inc, -1, 1};
    long last = p->last;
    if (last >= 0 && a->v[last].added == added && a->v[last].removed == removed)
        r.last = new_comp(a, a->v[last].count + 1, added, removed, a->v[last].prev);
    else
        r.last = new_comp(a, 1, added, removed, last);
    return r;
}

static long extract_common(arena *a, path *p, const tok *nt, long nl, const tok *ot, long ol, long diag)
{
    long old_pos = p->old_pos, new_pos = old_pos - diag, common = 0;
    while (new_pos + 1 < nl && old_pos + 1 < ol && tok_eq(&ot[old_pos + 1], &nt[new_pos + 1])) {
        new_pos++;
        old_pos++;
        common++;
    }
    if (common) p->last = new_comp(a, common, 0, 0, p->last);
    p->old_pos = old_pos;
    return new_pos;
}

/* Runs the diff; returns the final component index (-1: both empty). */
static long run_diff(arena *a, const tok *ot, long ol, const tok *nt, long nl, int major)
{
    long bias = major == 5 ? 1 : 0; /* jsdiff 5: removePath.oldPos + 1 < addPath.oldPos */
    long max_edit = nl + ol;
    long off = max_edit + 1; /* diagonal d lives at best[d + off] */
    path *best = mb_calloc((size_t)(2 * off + 1), sizeof *best);
    best[off] = (path){-1, -1, 1};
    long new_pos = extract_common(a, &best[off], nt, nl, ot, ol, 0);
    long result = -2;
    if (best[off].old_pos + 1 >= ol && new_pos + 1 >= nl) result = best[off].last;
    long min_diag = -max_edit - 2, max_diag = max_edit + 2;
    for (long edit = 1; result == -2 && edit <= max_edit; edit++) {
        long lo = min_diag > -edit ? min_diag : -edit, hi = max_diag < edit ? max_diag : edit;
        for (long d = lo; d <= hi; d += 2) {
            path *rem = &best[d - 1 + off], *add = &best[d + 1 + off];
            path rem_p = *rem, add_p = *add;
            if (rem_p.valid) rem->valid = 0;
            int can_add = 0;
            if (add_p.valid) {
                long add_new = add_p.old_pos - d;
                can_add = 0 <= add_new && add_new < nl;
            }
            int can_remove = rem_p.valid && rem_p.old_pos + 1 < ol;
            if (!can_add && !can_remove) {
                best[d + off].valid = 0;
                continue;
            }
            path base;
            if (!can_remove || (can_add && rem_p.old_pos + bias < add_p.old_pos))
                base = add_to_path(a, &add_p, 1, 0, 0);
            else
                base = add_to_path(a, &rem_p, 0, 1, 1);
            new_pos = extract_common(a, &base, nt, nl, ot, ol, d);
            if (base.old_pos + 1 >= ol && new_pos + 1 >= nl) {
                result = base.last;
                break;
            }
            best[d + off] = base;
            if (base.old_pos + 1 >= ol && d - 1 < max_diag) max_diag = d - 1;
            if (new_pos + 1 >= nl && d + 1 > min_diag) min_diag = d + 1;
        }
    }
    free(best);
    return result == -2 ? -1 : result;
}

/* ------------------------------------------------------------- the patch */

typedef struct change {
    int added, removed;
    const tok *lines; /* the component's lines */
    long n;
} change;

/* One line of a hunk: sign ' ', '+' or '-' and its token, or sign '\\' for
 * jsdiff 5's "No newline" line. */
typedef struct hline {
    char sign;
    const tok *t;
} hline;

typedef struct hunk {
    long old_start, old_lines, new_start, new_lines;
    hline *v;
    long n, cap;
} hunk;

static void hunk_insert(hunk *h, long at, char sign, const tok *t)
{
    if (h->n == h->cap) {
        h->cap = h->cap ? h->cap * 2 : 16;
        h->v = mb_realloc(h->v, (size_t)h->cap * sizeof *h->v);
    }
    memmove(h->v + at + 1, h->v + at, (size_t)(h->n - at) * sizeof *h->v);
    h->v[at] = (hline){sign, t};
    h->n++;
}

static void hunk_line(hunk *h, char sign, const tok *t) { hunk_insert(h, h->n, sign, t); }

static const char NO_NL[] = "\\ No newline at end of file\n";

/* jsdiff 5's end-of-file rule, when a hunk closes on the last component
 * with `trailing` context lines. */
static void jsdiff5_eof(hunk *h, long trailing, const char *a, size_t alen, const char *b, size_t blen)
{
    int old_nl = alen && a[alen - 1] == '\n', new_nl = blen && b[blen - 1] == '\n';
    int no_nl_before_adds = trailing == 0 && h->n > h->old_lines;
    if (!old_nl && no_nl_before_adds && alen > 0) hunk_insert(h, h->old_lines, '\\', NULL);
    if ((!old_nl && !no_nl_before_adds) || !new_nl) hunk_line(h, '\\', NULL);
}

static void put_line(mb_buf *out, const hline *l, int major)
{
    if (l->sign == '\\') {
        mb_buf_puts(out, NO_NL);
        return;
    }
    const tok *t = l->t;
    int has_nl = t->n > 0 && t->p[t->n - 1] == '\n';
    mb_buf_putc(out, l->sign);
    mb_buf_append(out, t->p, t->n - (has_nl ? 1 : 0));
    mb_buf_putc(out, '\n');
    if (!has_nl && major != 5) mb_buf_puts(out, NO_NL);
}

char *fs_unified_diff(const char *name, const char *a, size_t alen, const char *b, size_t blen, int major)
{
    long ol, nl;
    tok *ot = tokenize(a, alen, &ol);
    tok *nt = tokenize(b, blen, &nl);
    arena ar = {0};
    long last = run_diff(&ar, ot, ol, nt, nl, major);

    /* Components in order, with their lines. */
    long nc = 0;
    for (long c = last; c >= 0; c = ar.v[c].prev) nc++;
    change *ch = mb_calloc((size_t)nc + 1, sizeof *ch);
    long k = nc;
    for (long c = last; c >= 0; c = ar.v[c].prev) {
        k--;
        ch[k].added = ar.v[c].added;
        ch[k].removed = ar.v[c].removed;
        ch[k].n = ar.v[c].count;
    }
    long op = 0, np = 0;
    for (long i = 0; i < nc; i++) {
        if (!ch[i].removed) {
            ch[i].lines = nt + np;
            np += ch[i].n;
            if (!ch[i].added) op += ch[i].n;
        } else {
            ch[i].lines = ot + op;
            op += ch[i].n;
        }
    }
    /* jsdiff 5's buildValues: a removal goes before the insertion in front of it */
    for (long i = 1; major == 5 && i < nc; i++)
        if (ch[i].removed && ch[i - 1].added) {
            change t = ch[i - 1];
            ch[i - 1] = ch[i];
            ch[i] = t;
        }
    ch[nc] = (change){0, 0, NULL, 0}; /* the sentinel jsdiff appends */
    long total = nc + 1;

    const long context = 4;
    hunk *hunks = NULL;
    long nh = 0;
    hunk cur = {0};
    long old_start = 0, new_start = 0, old_line = 1, new_line = 1;
    for (long i = 0; i < total; i++) {
        change *c = &ch[i];
        if (c->added || c->removed) {
            if (!old_start) {
                old_start = old_line;
                new_start = new_line;
                if (i > 0) {
                    change *prev = &ch[i - 1];
                    long from = prev->n > context ? prev->n - context : 0;
                    for (long j = from; j < prev->n; j++) hunk_line(&cur, ' ', &prev->lines[j]);
                    old_start -= prev->n - from;
                    new_start -= prev->n - from;
                }
            }
            for (long j = 0; j < c->n; j++) hunk_line(&cur, c->added ? '+' : '-', &c->lines[j]);
            if (c->added) new_line += c->n;
            else old_line += c->n;
        } else {
            if (old_start) {
                if (c->n <= context * 2 && i < total - 2) {
                    for (long j = 0; j < c->n; j++) hunk_line(&cur, ' ', &c->lines[j]);
                } else {
                    long size = c->n < context ? c->n : context;
                    for (long j = 0; j < size; j++) hunk_line(&cur, ' ', &c->lines[j]);
                    cur.old_start = old_start;
                    cur.old_lines = old_line - old_start + size;
                    cur.new_start = new_start;
                    cur.new_lines = new_line - new_start + size;
                    if (major == 5 && i >= total - 2 && c->n <= context) jsdiff5_eof(&cur, c->n, a, alen, b, blen);
                    hunks = mb_realloc(hunks, (size_t)(nh + 1) * sizeof *hunks);
                    hunks[nh++] = cur;
                    memset(&cur, 0, sizeof cur);
                    old_start = new_start = 0;
                }
            }
            old_line += c->n;
            new_line += c->n;
        }
    }
    free(cur.v);

    mb_buf out = {0};
    mb_buf_printf(&out, "Index: %s\n", name);
    mb_buf_puts(&out, "===================================================================\n");
    mb_buf_printf(&out, "--- %s\toriginal\n", name);
    mb_buf_printf(&out, "+++ %s\tmodified\n", name);
    for (long h = 0; h < nh; h++) {
        hunk *hk = &hunks[h];
        long os = hk->old_lines == 0 ? hk->old_start - 1 : hk->old_start;
        long ns = hk->new_lines == 0 ? hk->new_start - 1 : hk->new_start;
        mb_buf_printf(&out, "@@ -%ld,%ld +%ld,%ld @@\n", os, hk->old_lines, ns, hk->new_lines);
        for (long l = 0; l < hk->n; l++) put_line(&out, &hk->v[l], major);
        free(hk->v);
    }
    free(hunks);
    free(ch);
    free(ar.v);
    free(ot);
    free(nt);
    return mb_buf_steal(&out);
}
