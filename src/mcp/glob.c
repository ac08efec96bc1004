/*
 * glob.c - minimatch(path, pattern, {dot}) as minimatch 10 answers it, for
 * the servers that filter paths with it (server-filesystem's search_files
 * and directory_tree excludes).
 *
 * Steps, as in minimatch: a leading '#' matches nothing; leading '!'s negate;
 * braces are expanded ({a,b}, {1..3}, {a..c}, nested); each expansion is
 * split at runs of '/', "**" runs are merged and "x/.." dropped; a "**"
 * segment matches any number of path segments (at least one when it ends
 * the pattern), other segments are matched by a small backtracking matcher
 * over * ? [...] and the extglobs @() ?() *() +() !().
 *
 * Known gaps: '?' counts code points where minimatch counts UTF-16 units,
 * and the globstar recursion limit is not applied. A segment match that
 * backtracks more than MAX_STEPS times is taken as no match (minimatch's
 * regular expression would hang there instead).
 */
#include "mcp/mcp.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define MAX_STEPS 200000L /* seg_match calls per segment match */

/* ------------------------------------------------------ brace expansion */

typedef struct strlist {
    char **v;
    size_t n, cap;
} strlist;

static void sl_push(strlist *l, char *s)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->v[i], s)) { /* minimatch dedupes with a Set */
            free(s);
            return;
        }
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 8;
        l->v = mb_realloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = s;
}

static void sl_free(strlist *l)
{
    for (size_t i = 0; i < l->n; i++) free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

#define MAX_EXPANSIONS 10000

/* Finds the first '{' (not escaped) and its matching '}'. */
static int find_brace(const char *s, size_t *open, size_t *close)
{
    for (size_t i = 0; s[i]; i++) {
        if (s[i] == '\\' && s[i + 1]) {
            i++;
            continue;
        }
        if (s[i] != '{') continue;
        if (i > 0 && s[i - 1] == '$') continue; /* ${...} stays literal */
        int depth = 0;
        for (size_t j = i; s[j]; j++) {
            if (s[j] == '\\' && s[j + 1]) {
                j++;
                continue;
            }
            if (s[j] == '{') depth++;
            else if (s[j] == '}' && --depth == 0) {
                *open = i;
                *close = j;
                return 1;
            }
        }
        return 0;
    }
    return 0;
}

static int is_int(const char *s, size_t n)
{
    size_t i = (n && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
    if (i == n) return 0;
    for (; i < n; i++)
        if (!isdigit((unsigned char)s[i])) return 0;
    return 1;
}

static void expand(const char *s, strlist *out, int depth);

/* Splits `body` at top-level commas. */
static void split_commas(const char *body, size_t n, strlist *parts)
{
    int depth = 0;
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && body[i] == '\\' && i + 1 < n) {
            i++;
            continue;
        }
        if (i < n && body[i] == '{') depth++;
        else if (i < n && body[i] == '}') depth--;
        else if (i == n || (body[i] == ',' && depth == 0)) {
            if (parts->n == parts->cap) {
                parts->cap = parts->cap ? parts->cap * 2 : 8;
                parts->v = mb_realloc(parts->v, parts->cap * sizeof *parts->v);
            }
            parts->v[parts->n++] = mb_strndup(body + start, i - start);
            start = i + 1;
        }
    }
}

/* x..y[..step] with integers or single letters; fills `seq` or returns 0. */
static int sequence(const char *body, size_t n, strlist *seq)
{
    char *b = mb_strndup(body, n);
    char *d1 = strstr(b, "..");
    int ok = 0;
    if (d1) {
        char *x = b, *y = d1 + 2, *step = NULL;
        *d1 = '\0';
        char *d2 = strstr(y, "..");
        if (d2) {
            *d2 = '\0';
            step = d2 + 2;
        }
        long inc = 1;
        if (step) {
            if (!is_int(step, strlen(step))) goto out;
            inc = labs(strtol(step, NULL, 10));
            if (!inc) inc = 1;
        }
        if (is_int(x, strlen(x)) && is_int(y, strlen(y))) {
            long a = strtol(x, NULL, 10), z = strtol(y, NULL, 10);
            int pad = 0;
            size_t xl = strlen(x), yl = strlen(y);
            if ((xl > 1 && x[x[0] == '-'] == '0') || (yl > 1 && y[y[0] == '-'] == '0'))
                pad = (int)(xl > yl ? xl : yl);
            long cnt = 0;
            for (long v = a; a <= z ? v <= z : v >= z; v += a <= z ? inc : -inc) {
                if (++cnt > MAX_EXPANSIONS) break;
                char *t = v < 0 && pad ? mb_asprintf("-%0*ld", pad - 1, -v)
                                       : mb_asprintf("%0*ld", pad, v);
                if (seq->n == seq->cap) {
                    seq->cap = seq->cap ? seq->cap * 2 : 8;
                    seq->v = mb_realloc(seq->v, seq->cap * sizeof *seq->v);
                }
                seq->v[seq->n++] = t;
            }
            ok = 1;
        } else if (strlen(x) == 1 && strlen(y) == 1) {
            int a = (unsigned char)x[0], z = (unsigned char)y[0];
            for (int v = a; a <= z ? v <= z : v >= z; v += a <= z ? (int)inc : -(int)inc) {
                char t[2] = {(char)v, 0};
                if (seq->n == seq->cap) {
                    seq->cap = seq->cap ? seq->cap * 2 : 8;
                    seq->v = mb_realloc(seq->v, seq->cap * sizeof *seq->v);
                }
                seq->v[seq->n++] = mb_strdup(t);
            }
            ok = 1;
        }
    }
out:
    free(b);
    return ok;
}

static void expand(const char *s, strlist *out, int depth)
{
    size_t o, c;
    if (depth > 32 || out->n > MAX_EXPANSIONS || !find_brace(s, &o, &c)) {
        sl_push(out, mb_strdup(s));
        return;
    }
    const char *body = s + o + 1;
    size_t blen = c - o - 1;
    strlist alts = {0};
    int literal = 0;
    if (!sequence(body, blen, &alts)) {
        split_commas(body, blen, &alts);
        if (alts.n < 2) {
            /* "{x}" is not a set: keep the braces, expand inside and after. */
            sl_free(&alts);
            literal = 1;
        }
    }
    strlist posts = {0};
    expand(s + c + 1, &posts, depth + 1);
    if (literal) {
        strlist inner = {0};
        char *b = mb_strndup(body, blen);
        expand(b, &inner, depth + 1);
        free(b);
        for (size_t i = 0; i < inner.n; i++)
            for (size_t k = 0; k < posts.n; k++)
                sl_push(out, mb_asprintf("%.*s{%s}%s", (int)o, s, inner.v[i], posts.v[k]));
        sl_free(&inner);
    } else {
        for (size_t i = 0; i < alts.n; i++) {
            strlist sub = {0};
            expand(alts.v[i], &sub, depth + 1);
            for (size_t j = 0; j < sub.n; j++)
                for (size_t k = 0; k < posts.n; k++)
                    sl_push(out, mb_asprintf("%.*s%s%s", (int)o, s, sub.v[j], posts.v[k]));
            sl_free(&sub);
        }
    }
    sl_free(&alts);
    sl_free(&posts);
}

/* ---------------------------------------------------- segment matching */

/*
 * A segment pattern is matched directly on its text. `pat[pi..pe)` is the
 * rest of the pattern, `s[si..se)` the rest of the segment. Extglob bodies
 * are parsed on the fly by find_close().
 */

/* Index of the ')' closing the '(' at p[i], or -1. */
static long find_close(const char *p, long i, long pe)
{
    int depth = 0;
    for (long k = i; k < pe; k++) {
        if (p[k] == '\\' && k + 1 < pe) {
            k++;
            continue;
        }
        if (p[k] == '[') { /* skip a class, which may hold ')' */
            long j = k + 1;
            if (j < pe && (p[j] == '!' || p[j] == '^')) j++;
            if (j < pe && p[j] == ']') j++;
            while (j < pe && p[j] != ']') j++;
            if (j < pe) k = j;
            continue;
        }
        if (p[k] == '(') depth++;
        else if (p[k] == ')' && --depth == 0) return k;
    }
    return -1;
}

static int class_has(const char *name, unsigned c)
{
    if (c > 127) return 0;
    if (!strcmp(name, "alnum")) return isalnum((int)c);
    if (!strcmp(name, "alpha")) return isalpha((int)c);
    if (!strcmp(name, "ascii")) return 1;
    if (!strcmp(name, "blank")) return c == ' ' || c == '\t';
    if (!strcmp(name, "cntrl")) return iscntrl((int)c);
    if (!strcmp(name, "digit")) return isdigit((int)c);
    if (!strcmp(name, "graph")) return isgraph((int)c);
    if (!strcmp(name, "lower")) return islower((int)c);
    if (!strcmp(name, "print")) return isprint((int)c);
    if (!strcmp(name, "punct")) return ispunct((int)c);
    if (!strcmp(name, "space")) return isspace((int)c);
    if (!strcmp(name, "upper")) return isupper((int)c);
    if (!strcmp(name, "word")) return isalnum((int)c) || c == '_';
    if (!strcmp(name, "xdigit")) return isxdigit((int)c);
    return 0;
}

/* Parses the class at p[i] == '['; returns the index after ']' or -1 when
 * it is not a class (then '[' is literal). *hit says if cp is in it. */
static long match_class(const char *p, long i, long pe, unsigned cp, int *hit)
{
    long k = i + 1;
    int neg = 0;
    if (k < pe && (p[k] == '!' || p[k] == '^')) {
        neg = 1;
        k++;
    }
    int in = 0, first = 1;
    while (k < pe && (first || p[k] != ']')) {
        first = 0;
        if (p[k] == '[' && k + 1 < pe && p[k + 1] == ':') {
            const char *end = strstr(p + k + 2, ":]");
            if (end && end - p < pe) {
                char name[16];
                size_t nl = (size_t)(end - (p + k + 2));
                if (nl < sizeof name) {
                    memcpy(name, p + k + 2, nl);
                    name[nl] = '\0';
                    if (class_has(name, cp)) in = 1;
                }
                k = (long)(end - p) + 2;
                continue;
            }
        }
        size_t kk = (size_t)k;
        if (p[k] == '\\' && k + 1 < pe) kk++;
        unsigned lo = mb_utf8_next(p, (size_t)pe, &kk);
        k = (long)kk;
        unsigned hi = lo;
        if (k + 1 < pe && p[k] == '-' && p[k + 1] != ']') {
            kk = (size_t)k + 1;
            if (p[kk] == '\\' && kk + 1 < (size_t)pe) kk++;
            hi = mb_utf8_next(p, (size_t)pe, &kk);
            k = (long)kk;
        }
        if (cp >= lo && cp <= hi) in = 1;
    }
    if (k >= pe) return -1;
    *hit = neg ? !in : in;
    return k + 1;
}

static int seg_match(const char *p, long pi, long pe, const char *s, long si, long se, int depth, long *steps);

/* Does one alternative list "a|b|c" (p[a0..a1)) followed by the rest
 * p[ri..pe) match s[si..se) when the alternative must consume s[si..k)? */
static int alt_then_rest(const char *p, long a0, long a1, const char *s, long si, long k, long se,
                         long ri, long pe, int depth, long *steps)
{
    long start = a0;
    for (long i = a0; i <= a1; i++) {
        if (i < a1 && p[i] == '\\') {
            i++;
            continue;
        }
        if (i < a1 && p[i] == '(') {
            long cl = find_close(p, i, a1);
            if (cl > 0) i = cl;
            continue;
        }
        if (i < a1 && p[i] == '[') {
            int dummy;
            long nx = match_class(p, i, a1, 0, &dummy);
            if (nx > 0) i = nx - 1;
            continue;
        }
        if (i == a1 || p[i] == '|') {
            if (seg_match(p, start, i, s, si, k, depth + 1, steps) &&
                (ri < 0 || seg_match(p, ri, pe, s, k, se, depth + 1, steps)))
                return 1;
            start = i + 1;
        }
    }
    return 0;
}

static int seg_match(const char *p, long pi, long pe, const char *s, long si, long se, int depth, long *steps)
{
    if (depth > 64 || --*steps < 0) return 0; /* out of budget: no match */
    while (pi < pe) {
        char c = p[pi];
        if ((c == '@' || c == '?' || c == '*' || c == '+' || c == '!') && pi + 1 < pe && p[pi + 1] == '(') {
            long cl = find_close(p, pi + 1, pe);
            if (cl > 0) {
                long a0 = pi + 2, a1 = cl, rest = cl + 1;
                if (c == '@') {
                    for (long k = si; k <= se; k++)
                        if (alt_then_rest(p, a0, a1, s, si, k, se, rest, pe, depth, steps)) return 1;
                    return 0;
                }
                if (c == '?') {
                    if (seg_match(p, rest, pe, s, si, se, depth + 1, steps)) return 1;
                    for (long k = si; k <= se; k++)
                        if (alt_then_rest(p, a0, a1, s, si, k, se, rest, pe, depth, steps)) return 1;
                    return 0;
                }
                if (c == '*' || c == '+') {
                    /* one or more repetitions, each consuming something */
                    if (c == '*' && seg_match(p, rest, pe, s, si, se, depth + 1, steps)) return 1;
                    for (long k = si + 1; k <= se; k++) {
                        if (!alt_then_rest(p, a0, a1, s, si, k, k, -1, pe, depth, steps)) continue;
                        /* s[si..k) is one repetition; more may follow */
                        if (seg_match(p, pi, pe, s, k, se, depth + 1, steps)) return 1;
                        if (c == '+' && seg_match(p, rest, pe, s, k, se, depth + 1, steps)) return 1;
                    }
                    if (c == '+') {
                        /* an alternative matching the empty string */
                        if (alt_then_rest(p, a0, a1, s, si, si, se, rest, pe, depth, steps)) return 1;
                    }
                    return 0;
                }
                /* !(alts): fails where an alternative followed by the rest
                 * matches the whole remainder; otherwise any prefix may be
                 * taken by it. */
                for (long k = si; k <= se; k++)
                    if (alt_then_rest(p, a0, a1, s, si, k, se, rest, pe, depth, steps)) return 0;
                for (long k = si; k <= se; k++)
                    if (seg_match(p, rest, pe, s, k, se, depth + 1, steps)) return 1;
                return 0;
            }
        }
        if (c == '*') {
            while (pi < pe && p[pi] == '*' && !(pi + 1 < pe && p[pi + 1] == '(')) pi++;
            if (pi == pe) return 1;
            for (long k = si; k <= se; k++)
                if (seg_match(p, pi, pe, s, k, se, depth + 1, steps)) return 1;
            return 0;
        }
        if (c == '?') {
            if (si >= se) return 0;
            size_t k = (size_t)si;
            mb_utf8_next(s, (size_t)se, &k);
            si = (long)k;
            pi++;
            continue;
        }
        if (c == '[') {
            if (si < se) {
                size_t k = (size_t)si;
                unsigned cp = mb_utf8_next(s, (size_t)se, &k);
                int hit = 0;
                long nx = match_class(p, pi, pe, cp, &hit);
                if (nx > 0) {
                    if (!hit) return 0;
                    pi = nx;
                    si = (long)k;
                    continue;
                }
            } else {
                int hit;
                if (match_class(p, pi, pe, 0, &hit) > 0) return 0;
            }
            /* not a class: a literal '[' */
        }
        if (c == '\\' && pi + 1 < pe) {
            pi++;
            c = p[pi];
        }
        if (si >= se || s[si] != c) return 0;
        si++;
        pi++;
    }
    return si == se;
}

/* Matches one path segment against one pattern segment (dot rules too). */
static int segment(const char *pat, const char *seg, int dot)
{
    size_t sl = strlen(seg), pl = strlen(pat);
    if (!strcmp(pat, "*") || strspn(pat, "*") == pl) {
        if (!sl) return 0;
        if (!strcmp(seg, ".") || !strcmp(seg, "..")) return 0;
        return dot || seg[0] != '.';
    }
    if (seg[0] == '.') {
        /* only a pattern that starts with an explicit dot (or a class
         * that may hold one) may match a dot file without {dot} */
        int explicit_dot = pat[0] == '.' || (pat[0] == '\\' && pat[1] == '.') ||
                           (pat[0] == '[' && pat[1] != '!' && pat[1] != '^');
        if (!explicit_dot) {
            if (!dot) return 0;
            if (!strcmp(seg, ".") || !strcmp(seg, "..")) return 0;
        }
    }
    /* Backtracking over nested extglobs and stars is exponential in the
     * worst case ("*(*(a|b)c)" against a long name): a pattern that needs
     * more than MAX_STEPS attempts on one segment matches nothing, rather
     * than holding a server's thread for minutes. */
    long steps = MAX_STEPS;
    int hit = seg_match(pat, 0, (long)pl, seg, 0, (long)sl, 0, &steps);
    return steps < 0 ? 0 : hit;
}

/* ------------------------------------------------------- path matching */

#define GLOBSTAR ((const char *)1)

typedef struct parts {
    const char **v;
    size_t n;
} parts;

/* Splits at runs of '/' into parts (pointers into a copy owned by *buf). */
static parts split(const char *s, char **buf)
{
    parts p = {0};
    *buf = mb_strdup(s);
    size_t cap = 8;
    p.v = mb_malloc(cap * sizeof *p.v);
    char *c = *buf;
    for (;;) {
        char *sl = strchr(c, '/');
        if (p.n == cap) p.v = mb_realloc(p.v, (cap *= 2) * sizeof *p.v);
        p.v[p.n++] = c;
        if (!sl) break;
        *sl = '\0';
        c = sl + 1;
        while (*c == '/') c++;
    }
    return p;
}

static int bad_seg(const char *f, int dot)
{
    return !strcmp(f, ".") || !strcmp(f, "..") || (!dot && f[0] == '.');
}

static int match_one(const parts *file, size_t fi, size_t fe, const parts *pat, size_t pi, size_t pe, int dot)
{
    for (; fi < fe && pi < pe; fi++, pi++) {
        const char *p = pat->v[pi];
        if (p == GLOBSTAR) return 0;
        if (!segment(p, file->v[fi], dot)) return 0;
    }
    if (fi == fe && pi == pe) return 1;
    if (pi == pe) return fi == fe - 1 && !file->v[fi][0];
    return 0;
}

/* Body sections between globstars: match in order, each globstar eating
 * zero or more segments that are not dot-special. */
static int match_body(const parts *file, size_t fi, size_t fe, const parts *pat, size_t pi, size_t pe,
                      int dot, int saw_tail)
{
    if (pi >= pe) {
        for (size_t i = fi; i < file->n; i++) {
            saw_tail = 1;
            if (bad_seg(file->v[i], dot)) return 0;
        }
        return saw_tail;
    }
    size_t sec_end = pi;
    while (sec_end < pe && pat->v[sec_end] != GLOBSTAR) sec_end++;
    size_t len = sec_end - pi;
    size_t next = sec_end < pe ? sec_end + 1 : sec_end;
    for (size_t k = fi; k + len <= fe; k++) {
        if (match_one(file, k, k + len, pat, pi, sec_end, dot) &&
            match_body(file, k + len, fe, pat, next, pe, dot, saw_tail))
            return 1;
        if (k < file->n && bad_seg(file->v[k], dot)) return 0;
    }
    return 0;
}

static int match_globstar(const parts *file, const parts *pat, int dot)
{
    size_t first = 0, last = 0;
    while (pat->v[first] != GLOBSTAR) first++;
    for (size_t i = 0; i < pat->n; i++)
        if (pat->v[i] == GLOBSTAR) last = i;
    size_t fi = 0;
    if (first) {
        if (first > file->n || !match_one(file, 0, first, pat, 0, first, dot)) return 0;
        fi = first;
    }
    size_t tail = pat->n - last - 1, tail_match = 0;
    if (tail) {
        if (tail + fi > file->n) return 0;
        if (!match_one(file, file->n - tail, file->n, pat, last + 1, pat->n, dot)) {
            if (file->v[file->n - 1][0] || fi + tail == file->n) return 0;
            if (!match_one(file, file->n - tail - 1, file->n, pat, last + 1, pat->n, dot)) return 0;
            tail_match = tail + 1;
        } else {
            tail_match = tail;
        }
    }
    size_t fe = file->n - tail_match;
    if (first == last) {
        int saw = tail_match > 0;
        for (size_t i = fi; i < fe; i++) {
            saw = 1;
            if (bad_seg(file->v[i], dot)) return 0;
        }
        return saw;
    }
    return match_body(file, fi, fe, pat, first + 1, last, dot, tail_match > 0);
}

/* minimatch's level-one optimisation: merge "**" runs, drop "x/..". */
static void optimize(parts *p)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n; i++) {
        const char *cur = p->v[i];
        const char *prev = n ? p->v[n - 1] : NULL;
        if (!strcmp(cur, "**") && prev && !strcmp(prev, "**")) continue;
        if (!strcmp(cur, "..") && prev && strcmp(prev, "..") && strcmp(prev, ".") && strcmp(prev, "**")) {
            n--;
            continue;
        }
        p->v[n++] = cur;
    }
    if (!n) p->v[n++] = "";
    p->n = n;
}

int mb_minimatch(const char *path, const char *pattern, int flags)
{
    int dot = (flags & MB_GLOB_DOT) != 0;
    if (pattern[0] == '#') return 0;
    if (!pattern[0]) return path[0] == '\0';
    int negate = 0;
    while (*pattern == '!') {
        negate = !negate;
        pattern++;
    }
    strlist set = {0};
    if (strchr(pattern, '{')) expand(pattern, &set, 0);
    else sl_push(&set, mb_strdup(pattern));

    char *fbuf;
    parts file = split(path, &fbuf);
    int hit = 0;
    for (size_t i = 0; i < set.n && !hit; i++) {
        char *pbuf;
        parts pat = split(set.v[i], &pbuf);
        optimize(&pat);
        int has_gs = 0;
        for (size_t k = 0; k < pat.n; k++)
            if (!strcmp(pat.v[k], "**")) {
                pat.v[k] = GLOBSTAR;
                has_gs = 1;
            }
        hit = has_gs ? match_globstar(&file, &pat, dot) : match_one(&file, 0, file.n, &pat, 0, pat.n, dot);
        free(pat.v);
        free(pbuf);
    }
    free(file.v);
    free(fbuf);
    sl_free(&set);
    return negate ? !hit : hit;
}
