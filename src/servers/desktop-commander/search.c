/*
 * search.c - search_code (tools/search.ts and handlers/edit-search-handlers.ts
 * of desktop-commander 0.2.7).
 *
 * ripgrep runs as upstream runs its bundled one:
 *   rg --json --line-number [-i] [-m MAX] [--hidden] [-C N] [-g GLOB] PATTERN DIR
 * (ignoreCase defaults to true, MAX to 2000 and at most 5000 - per file, as
 * -m means). Each submatch becomes "  LINE: MATCHED TEXT" under a "\nFILE:"
 * header, context lines their trimmed text. When rg fails (exit code 2: a
 * bad pattern, a missing directory) upstream falls back to a JavaScript walk
 * with RegExp; here PCRE2 plays RegExp, with node_modules, .git and dist
 * skipped, as upstream's fallback does. Any failure, and a search slower than
 * timeoutMs (default 30 s), reads "No matches found or search timed out
 * after Nms.". Output beyond 900,000 characters is cut with upstream's note.
 */
#define _GNU_SOURCE
#define PCRE2_CODE_UNIT_WIDTH 8
#include <dirent.h>
#include <math.h>
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "servers/common/proc.h"
#include "servers/desktop-commander/dc.h"

#define MAX_RESPONSE 900000

typedef struct hit {
    char *file;
    double line;
    char *match;
} hit;

typedef struct hits {
    hit *v;
    size_t n, cap;
} hits;

static void add(hits *h, const char *file, double line, const char *match, size_t mlen)
{
    if (h->n == h->cap) h->v = mb_realloc(h->v, (h->cap = h->cap ? h->cap * 2 : 64) * sizeof *h->v);
    h->v[h->n++] = (hit){mb_strdup(file), line, mb_strndup(match, mlen)};
}

static void hits_free(hits *h)
{
    for (size_t i = 0; i < h->n; i++) {
        free(h->v[i].file);
        free(h->v[i].match);
    }
    free(h->v);
}

static const char *text_of(json_t *o)
{
    const char *t = json_string_value(json_object_get(o, "text"));
    return t ? t : "undefined";
}

/* 0: ran (exit 0/1) and *h filled; -1: rg failed (fallback); 1: timed out. */
static int run_rg(const char *dir, const char *pattern, const char *glob, int icase, double max,
                  int hidden, double ctx, int64_t timeout, hits *h)
{
    const char *argv[16];
    int k = 0;
    char maxs[32], ctxs[32];
    argv[k++] = "rg";
    argv[k++] = "--json";
    argv[k++] = "--line-number";
    if (icase) argv[k++] = "-i";
    if (max) {
        char *n = mb_js_number(max);
        snprintf(maxs, sizeof maxs, "%s", n);
        free(n);
        argv[k++] = "-m";
        argv[k++] = maxs;
    }
    if (hidden) argv[k++] = "--hidden";
    if (ctx > 0) {
        char *n = mb_js_number(ctx);
        snprintf(ctxs, sizeof ctxs, "%s", n);
        free(n);
        argv[k++] = "-C";
        argv[k++] = ctxs;
    }
    if (glob) {
        argv[k++] = "-g";
        argv[k++] = glob;
    }
    argv[k++] = pattern;
    argv[k++] = dir;
    argv[k] = NULL;
    mb_proc_spec spec = {.argv = argv, .timeout_ms = timeout > 0 ? (int)(timeout < 2000000000 ? timeout : 2000000000) : 1,
                         .watch_fd = -1, .kill_group = 1};
    mb_proc_result r = {0};
    mb_err e = {0};
    if (mb_proc_run(&spec, &r, &e)) return -1;
    if (r.timed_out) {
        mb_proc_result_free(&r);
        return 1;
    }
    if (r.spawn_errno || !r.exited || (r.exit_code != 0 && r.exit_code != 1)) {
        mb_proc_result_free(&r);
        return -1;
    }
    char *save = NULL;
    for (char *line = strtok_r(r.out.data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        json_t *j = json_loads(line, JSON_DECODE_ANY, NULL);
        const char *type = json_string_value(json_object_get(j, "type"));
        json_t *data = json_object_get(j, "data");
        if (type && !strcmp(type, "match")) {
            const char *file = text_of(json_object_get(data, "path"));
            double ln = json_number_value(json_object_get(data, "line_number"));
            size_t i;
            json_t *sm;
            json_array_foreach(json_object_get(data, "submatches"), i, sm) {
                const char *m = text_of(json_object_get(sm, "match"));
                add(h, file, ln, m, strlen(m));
            }
        } else if (type && !strcmp(type, "context") && ctx > 0) {
            const char *t = text_of(json_object_get(data, "lines"));
            size_t off, n;
            dc_trim(t, strlen(t), &off, &n);
            add(h, text_of(json_object_get(data, "path")),
                json_number_value(json_object_get(data, "line_number")), t + off, n);
        }
        json_decref(j);
    }
    mb_proc_result_free(&r);
    return 0;
}

/* ------------------------------------------------- the JavaScript fallback */

typedef struct fb {
    dc_server *dc;
    pcre2_code *re, *fre;
    pcre2_match_data *md;
    double max, ctx;
    hits *h;
    int64_t deadline;
} fb;

static int re_test(pcre2_code *re, pcre2_match_data *md, const char *s, size_t n)
{
    return pcre2_match(re, (PCRE2_SPTR)s, n, 0, 0, md, NULL) >= 0;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void fb_walk(fb *f, const char *dir)
{
    if ((double)f->h->n >= f->max || mb_mono_ms() > f->deadline) return;
    DIR *d = opendir(dir);
    if (!d) return;
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        names = mb_realloc(names, (n + 1) * sizeof *names);
        names[n++] = mb_strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_name);
    for (size_t i = 0; i < n; i++) {
        if ((double)f->h->n >= f->max) break;
        char *full = mb_asprintf("%s/%s", strcmp(dir, "/") ? dir : "", names[i]);
        char *valid, *why;
        struct stat st;
        if (dc_validate_path(f->dc, full, &valid, &why)) {
            free(why);
        } else {
            free(valid);
            if (lstat(full, &st) == 0 && S_ISDIR(st.st_mode)) {
                if (strcmp(names[i], "node_modules") && strcmp(names[i], ".git") &&
                    strcmp(names[i], "dist"))
                    fb_walk(f, full);
            } else if (S_ISREG(st.st_mode) &&
                       (!f->fre || re_test(f->fre, f->md, names[i], strlen(names[i])))) {
                char *raw;
                size_t len;
                if (!dc_slurp(full, &raw, &len, &why)) {
                    size_t dl;
                    char *dec = mb_utf8_repair(raw, len, &dl);
                    free(raw);
                    /* lines = content.split('\n') */
                    size_t nl = 1;
                    for (size_t k = 0; k < dl; k++) nl += dec[k] == '\n';
                    size_t *st_ = mb_malloc((nl + 1) * sizeof *st_);
                    size_t li = 0;
                    st_[li++] = 0;
                    for (size_t k = 0; k < dl; k++)
                        if (dec[k] == '\n') st_[li++] = k + 1;
                    st_[nl] = dl + 1;
                    for (size_t L = 0; L < nl; L++) {
                        size_t a = st_[L], b = st_[L + 1] - 1;
                        if (!re_test(f->re, f->md, dec + a, b - a)) continue;
                        size_t off, tn;
                        dc_trim(dec + a, b - a, &off, &tn);
                        add(f->h, full, (double)(L + 1), dec + a + off, tn);
                        if (f->ctx > 0) {
                            double lo = fmax(0, (double)L - f->ctx), hi = fmin((double)nl - 1, (double)L + f->ctx);
                            for (size_t j = (size_t)lo; (double)j <= hi; j++) {
                                if (j == L) continue;
                                size_t ca = st_[j], cb = st_[j + 1] - 1;
                                dc_trim(dec + ca, cb - ca, &off, &tn);
                                add(f->h, full, (double)(j + 1), dec + ca + off, tn);
                            }
                        }
                        if ((double)f->h->n >= f->max) break;
                    }
                    free(st_);
                    free(dec);
                } else {
                    free(why);
                }
            }
        }
        free(full);
    }
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
}

static pcre2_code *js_regex(const char *p, int icase)
{
    int ec;
    PCRE2_SIZE eo;
    return pcre2_compile((PCRE2_SPTR)p, PCRE2_ZERO_TERMINATED,
                         PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | PCRE2_ALT_BSUX |
                             PCRE2_DOLLAR_ENDONLY | (icase ? PCRE2_CASELESS : 0),
                         &ec, &eo, NULL);
}

static void fallback(dc_server *dc, const char *root, const char *pattern, const char *glob,
                     int icase, double max, double ctx, int64_t deadline, hits *h)
{
    char *valid, *why;
    if (dc_validate_path(dc, root, &valid, &why)) {
        free(why);
        return;
    }
    fb f = {.dc = dc, .max = max, .ctx = ctx, .h = h, .deadline = deadline};
    f.re = js_regex(pattern, icase);
    if (!f.re) { /* new RegExp threw: the search rejects, no results */
        free(valid);
        return;
    }
    if (glob) f.fre = js_regex(glob, 0); /* an invalid one fails each file, as upstream */
    if (glob && !f.fre) {
        free(valid);
        pcre2_code_free(f.re);
        return;
    }
    f.md = pcre2_match_data_create(1, NULL);
    fb_walk(&f, valid);
    pcre2_match_data_free(f.md);
    pcre2_code_free(f.re);
    pcre2_code_free(f.fre);
    free(valid);
}

/* Number#toLocaleString() in en-US for a non-negative integer. */
static void put_grouped(mb_buf *b, double d)
{
    char digits[64];
    snprintf(digits, sizeof digits, "%.0f", d);
    size_t n = strlen(digits);
    for (size_t i = 0; i < n; i++) {
        if (i && (n - i) % 3 == 0) mb_buf_putc(b, ',');
        mb_buf_putc(b, digits[i]);
    }
}

int dc_search_code(dc_server *dc, mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    (void)call;
    if (dc_parse("search_code", args, res)) return 1;
    const char *path = json_string_value(json_object_get(args, "path"));
    const char *pattern = json_string_value(json_object_get(args, "pattern"));
    const char *glob = json_string_value(json_object_get(args, "filePattern"));
    if (glob && !*glob) glob = NULL;
    json_t *jic = json_object_get(args, "ignoreCase");
    int icase = jic ? json_is_true(jic) : 1;
    double mr = json_number_value(json_object_get(args, "maxResults"));
    double max = (mr != 0 && !isnan(mr)) ? fmin(mr, 5000) : 2000;
    int hidden = json_is_true(json_object_get(args, "includeHidden"));
    double ctx = json_number_value(json_object_get(args, "contextLines"));
    double t = json_number_value(json_object_get(args, "timeoutMs"));
    if (!(t != 0 && !isnan(t))) t = 30000;
    int64_t start = mb_mono_ms(), deadline = start + (int64_t)t;
    hits h = {0};
    int timed_out = 0;
    char *valid, *why;
    if (dc_validate_path(dc, path, &valid, &why)) {
        free(why);
        fallback(dc, path, pattern, glob, icase, max, ctx, deadline, &h); /* fails the same way */
    } else {
        int rc = run_rg(valid, pattern, glob, icase, max, hidden, ctx, (int64_t)t, &h);
        if (rc < 0) fallback(dc, path, pattern, glob, icase, max, ctx, deadline, &h);
        if (rc > 0) timed_out = 1;
        free(valid);
    }
    if (mb_mono_ms() > deadline) timed_out = 1;
    if (!h.n || timed_out) {
        char *num = mb_js_number(t);
        if (t > 0) mb_mcp_textf(res, "No matches found or search timed out after %sms.", num);
        else mb_mcp_text(res, "No matches found");
        free(num);
        hits_free(&h);
        return 0;
    }
    mb_buf out = {0};
    size_t out_u16 = 0, done = 0;
    const char *cur = "";
    for (size_t i = 0; i < h.n; i++) {
        mb_buf add_b = {0};
        int newfile = strcmp(h.v[i].file, cur) != 0;
        if (newfile) mb_buf_printf(&add_b, "\n%s:\n", h.v[i].file);
        char *ln = mb_js_number(h.v[i].line);
        mb_buf_printf(&add_b, "  %s: %s\n", ln, h.v[i].match);
        free(ln);
        size_t add_u16 = mb_utf16_len(add_b.data, add_b.len);
        if (out_u16 + add_u16 > MAX_RESPONSE) {
            size_t remaining = h.n - done;
            double avg = (double)out_u16 / (double)(done ? done : 1);
            mb_buf_printf(&out, "\n\n[Results truncated - %zu more results available (approximately ", remaining);
            put_grouped(&out, round((double)remaining * avg));
            mb_buf_puts(&out, " more characters). Try refining your search pattern or using a more "
                              "specific file pattern to get fewer results.]");
            mb_buf_free(&add_b);
            break;
        }
        if (newfile) cur = h.v[i].file;
        mb_buf_append(&out, add_b.data, add_b.len);
        out_u16 += add_u16;
        done++;
        mb_buf_free(&add_b);
    }
    size_t off, n;
    dc_trim(out.data, out.len, &off, &n);
    mb_mcp_text_n(res, out.data + off, n);
    mb_buf_free(&out);
    hits_free(&h);
    return 0;
}
