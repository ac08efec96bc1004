/*
 * edit.c - edit_block (tools/edit.ts of desktop-commander 0.2.7).
 *
 * old_string is matched exactly after its line endings were converted to
 * the file's (the first \r\n, \r or \n of the file decides; \n when there is
 * none). With exactly expected_replacements occurrences (counted overlapping,
 * as indexOf(pos + 1) does) the first one, or all of them (split/join), are
 * replaced and the file is rewritten. Another count is reported without
 * changing anything. No occurrence: upstream's fuzzy search - a recursive
 * halving of the text by Levenshtein distance to old_string, then trimming
 * the window's ends while the distance drops - reports the closest text with
 * a {-removed-}{+added+} character diff (>= 70% similar) or says nothing
 * close enough was found. Positions, lengths and distances are counted in
 * UTF-16 code units as JavaScript counts them. A line per fuzzy search goes
 * to ~/.claude-server-commander-logs/fuzzy-search.log, whose path the texts
 * print.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "servers/desktop-commander/dc.h"

/* ------------------------------------------------------- UTF-16 text */

typedef struct u16 {
    uint16_t *v;
    size_t n;
} u16;

static u16 to_u16(const char *s, size_t len)
{
    u16 r = {mb_malloc((len + 1) * sizeof(uint16_t)), 0};
    size_t i = 0;
    while (i < len) {
        unsigned cp = mb_utf8_next(s, len, &i);
        if (cp >= 0x10000) {
            cp -= 0x10000;
            r.v[r.n++] = (uint16_t)(0xD800 + (cp >> 10));
            r.v[r.n++] = (uint16_t)(0xDC00 + (cp & 0x3FF));
        } else {
            r.v[r.n++] = (uint16_t)cp;
        }
    }
    return r;
}

/* UTF-8 of v[a..b); lone surrogates become U+FFFD. */
static void put_u16(mb_buf *b, const uint16_t *v, size_t a, size_t e)
{
    for (size_t i = a; i < e; i++) {
        unsigned c = v[i];
        if (c >= 0xD800 && c <= 0xDBFF && i + 1 < e && v[i + 1] >= 0xDC00 && v[i + 1] <= 0xDFFF) {
            mb_utf8_put(b, 0x10000 + ((c - 0xD800) << 10) + (v[i + 1] - 0xDC00));
            i++;
        } else if (c >= 0xD800 && c <= 0xDFFF) {
            mb_utf8_put(b, 0xFFFD);
        } else {
            mb_utf8_put(b, c);
        }
    }
}

static size_t lev(const uint16_t *a, size_t n, const uint16_t *b, size_t m, size_t *row)
{
    if (!n) return m;
    if (!m) return n;
    for (size_t j = 0; j <= m; j++) row[j] = j;
    for (size_t i = 1; i <= n; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= m; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[m];
}

typedef struct fz {
    const u16 *t, *q;
    size_t *row;
} fz;

/* String#substring(a, b) of the text: clamped, swapped when a > b. */
static double dist_sub(fz *f, double a, double b)
{
    double len = (double)f->t->n;
    if (a < 0) a = 0;
    if (b < 0) b = 0;
    if (a > len) a = len;
    if (b > len) b = len;
    if (a > b) {
        double x = a;
        a = b;
        b = x;
    }
    return (double)lev(f->t->v + (size_t)a, (size_t)(b - a), f->q->v, f->q->n, f->row);
}

typedef struct fzr {
    double start, end, distance;
} fzr;

static fzr iterative(fz *f, double start, double end, double parent)
{
    double best = parent, bs = start, be = end;
    double next = dist_sub(f, bs + 1, be);
    while (next < best) {
        best = next;
        bs++;
        next = dist_sub(f, bs + 1, be);
    }
    next = dist_sub(f, bs, be - 1);
    while (next < best) {
        best = next;
        be--;
        next = dist_sub(f, bs, be - 1);
    }
    return (fzr){bs, be, best};
}

static fzr recursive(fz *f, double start, double end, double parent)
{
    double ql = (double)f->q->n;
    if (end - start <= 2 * ql) return iterative(f, start, end, parent);
    double mid = start + floor((end - start) / 2);
    double left_end = fmin(end, mid + ql), right_start = fmax(start, mid - ql);
    double ld = dist_sub(f, start, left_end), rd = dist_sub(f, right_start, end);
    double best = fmin(fmin(ld, parent), rd);
    if (parent == best) return iterative(f, start, end, parent);
    if (ld < rd) return recursive(f, start, left_end, best);
    return recursive(f, right_start, end, best);
}

/* ------------------------------------------------------- line endings */

static const char *detect_ending(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\r') return (i + 1 < n && s[i + 1] == '\n') ? "\r\n" : "\r";
        if (s[i] == '\n') return "\n";
    }
    return "\n";
}

static char *normalize_endings(const char *s, size_t n, const char *eol, size_t *out_len)
{
    mb_buf b = {0};
    mb_buf_puts(&b, "");
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\r' || s[i] == '\n') {
            if (s[i] == '\r' && i + 1 < n && s[i + 1] == '\n') i++;
            mb_buf_puts(&b, eol);
        } else {
            mb_buf_putc(&b, s[i]);
        }
    }
    *out_len = b.len;
    return mb_buf_steal(&b);
}

static size_t count_char(const char *s, size_t n, char c)
{
    size_t k = 1;
    for (size_t i = 0; i < n; i++) k += s[i] == c;
    return k;
}

/* ------------------------------------------------------------ the log */

static void escape_tabs(mb_buf *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\n') mb_buf_puts(b, "\\n");
        else if (s[i] == '\t') mb_buf_puts(b, "\\t");
        else mb_buf_putc(b, s[i]);
    }
}

/* The log file where it is kept (*why on failure); the texts name it under
 * $HOME (shown_log_path). */
static char *log_path(dc_server *dc, char **why)
{
    char *dir = mb_asprintf("%s/.claude-server-commander-logs", dc->state);
    char *path = mb_asprintf("%s/fuzzy-search.log", dir);
    mb_err e = {0};
    if (mb_mkdir_p(dir, 0755, &e)) {
        *why = mb_strdup(e.msg);
        free(dir);
        free(path);
        return NULL;
    }
    free(dir);
    struct stat st;
    if (stat(path, &st) != 0) {
        static const char hdr[] = "timestamp\tsearchText\tfoundText\tsimilarity\texecutionTime\t"
                                  "exactMatchCount\texpectedReplacements\tfuzzyThreshold\t"
                                  "belowThreshold\tdiff\tsearchLength\tfoundLength\tfileExtension\t"
                                  "characterCodes\tuniqueCharacterCount\tdiffLength\n";
        if (dc_write_bytes(path, hdr, sizeof hdr - 1, 0, why)) {
            free(path);
            return NULL;
        }
    }
    return path;
}

static char *shown_log_path(dc_server *dc)
{
    return mb_asprintf("%s/.claude-server-commander-logs/fuzzy-search.log", dc->home);
}

/* ------------------------------------------------------------- the tool */

static int write_back(dc_server *dc, const char *file_path, const char *data, size_t len, char **why)
{
    char *valid;
    if (dc_validate_path(dc, file_path, &valid, why)) return -1;
    int rc = dc_write_bytes(valid, data, len, 0, why);
    free(valid);
    return rc;
}

static int fuzzy(dc_server *dc, const char *file_path, const char *content, size_t clen,
                 const char *search, size_t slen, double expected, mb_mcp_result *res)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    u16 text = to_u16(content, clen), q = to_u16(search, slen);
    fz f = {&text, &q, mb_malloc((q.n + 1) * sizeof(size_t))};
    fzr r = recursive(&f, 0, (double)text.n, INFINITY);
    /* value = text.substring(start, end) */
    double a = fmax(0, fmin(r.start, (double)text.n)), e = fmax(0, fmin(r.end, (double)text.n));
    if (a > e) {
        double x = a;
        a = e;
        e = x;
    }
    u16 found = {text.v + (size_t)a, (size_t)(e - a)};
    size_t maxlen = q.n > found.n ? q.n : found.n;
    double sim = maxlen ? 1 - (double)lev(q.v, q.n, found.v, found.n,
                                          f.row = mb_realloc(f.row, (found.n + 1) * sizeof(size_t))) /
                                  (double)maxlen
                        : 1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    /* highlightDifferences(search, found) */
    size_t pre = 0, minl = q.n < found.n ? q.n : found.n;
    while (pre < minl && q.v[pre] == found.v[pre]) pre++;
    size_t suf = 0;
    while (suf < minl - pre && q.v[q.n - 1 - suf] == found.v[found.n - 1 - suf]) suf++;
    mb_buf diff = {0}, fv = {0};
    put_u16(&diff, q.v, 0, pre);
    mb_buf_puts(&diff, "{-");
    put_u16(&diff, q.v, pre, q.n - suf);
    mb_buf_puts(&diff, "-}{+");
    put_u16(&diff, found.v, pre, found.n - suf);
    mb_buf_puts(&diff, "+}");
    put_u16(&diff, q.v, q.n - suf, q.n);
    mb_buf_puts(&fv, "");
    put_u16(&fv, found.v, 0, found.n);
    char *why = NULL;
    char *lp = log_path(dc, &why);
    int failed = 0;
    if (!lp) {
        dc_error(res, why);
        free(why);
        failed = 1;
        goto out;
    }
    {
        /* one log line (tab separated, as FuzzySearchLogger writes it) */
        char iso[40];
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        strftime(iso, sizeof iso, "%Y-%m-%dT%H:%M:%S", &tm);
        mb_buf line = {0};
        mb_buf_printf(&line, "%s.%03ldZ\t", iso, ts.tv_nsec / 1000000);
        escape_tabs(&line, search, slen);
        mb_buf_putc(&line, '\t');
        escape_tabs(&line, fv.data, fv.len);
        char *sims = mb_js_number(sim), *mss = mb_js_number(ms), *exps = mb_js_number(expected);
        mb_buf_printf(&line, "\t%s\t%s\t0\t%s\t0.7\t%s\t", sims, mss, exps, sim < 0.7 ? "true" : "false");
        free(sims);
        free(mss);
        free(exps);
        escape_tabs(&line, diff.data, diff.len);
        const char *dot = strrchr(file_path, '.'), *slash = strrchr(file_path, '/');
        size_t el;
        char *ext = (dot && (!slash || dot > slash + 1)) ? mb_js_lower(dot, strlen(dot), &el) : mb_strdup("");
        size_t difflen = (q.n - suf - pre) + (found.n - suf - pre);
        mb_buf_printf(&line, "\t%zu\t%zu\t%s\t\t0\t%zu\n", q.n, found.n, ext, difflen);
        free(ext);
        char *ignore = NULL;
        FILE *fp = fopen(lp, "a");
        if (fp) {
            fwrite(line.data, 1, line.len, fp);
            fclose(fp);
        }
        free(ignore);
        mb_buf_free(&line);
    }
    free(lp);
    lp = shown_log_path(dc);
    char *pct = mb_js_number(round(sim * 100)), *fixed = mb_js_to_fixed(ms, 2);
    if (sim >= 0.7) {
        mb_mcp_textf(res,
                     "Exact match not found, but found a similar text with %s%% similarity (found "
                     "in %sms):\n\nDifferences:\n%s\n\nTo replace this text, use the exact text "
                     "found in the file.\n\nLog entry saved for analysis. Use the following command "
                     "to check the log:\nCheck log: %s",
                     pct, fixed, diff.data, lp);
    } else {
        mb_mcp_textf(res,
                     "Search content not found in %s. The closest match was \"%s\" with only %s%% "
                     "similarity, which is below the 70%% threshold. (Fuzzy search completed in "
                     "%sms)\n\nLog entry saved for analysis. Use the following command to check the "
                     "log:\nCheck log: %s",
                     file_path, fv.data, pct, fixed, lp);
    }
    free(pct);
    free(fixed);
    free(lp);
out:
    mb_buf_free(&diff);
    mb_buf_free(&fv);
    free(f.row);
    free(text.v);
    free(q.v);
    return failed;
}

int dc_edit_block(dc_server *dc, mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    (void)call;
    if (dc_parse("edit_block", args, res)) return 1;
    const char *file_path = json_string_value(json_object_get(args, "file_path"));
    json_t *js = json_object_get(args, "old_string"), *jr = json_object_get(args, "new_string");
    const char *search = json_string_value(js), *repl = json_string_value(jr);
    size_t slen = json_string_length(js), rlen = json_string_length(jr);
    double expected = json_number_value(json_object_get(args, "expected_replacements"));
    if (!slen) {
        mb_mcp_text(res, "Empty search strings are not allowed. Please provide a non-empty string "
                         "to search for.");
        return 0;
    }
    char *valid, *why;
    if (dc_validate_path(dc, file_path, &valid, &why)) goto fail;
    /* readFileInternal validates again and refuses images */
    char *valid2;
    if (dc_validate_path(dc, valid, &valid2, &why)) {
        free(valid);
        goto fail;
    }
    free(valid);
    if (!strncmp(dc_mime_type(valid2), "image/", 6)) {
        free(valid2);
        return dc_error(res, "Cannot read image files as text for internal operations");
    }
    char *raw = NULL;
    size_t rawlen = 0;
    if (dc_slurp(valid2, &raw, &rawlen, &why)) {
        free(valid2);
        goto fail;
    }
    free(valid2);
    size_t clen;
    char *content = mb_utf8_repair(raw, rawlen, &clen);
    free(raw);
    double max_lines = dc_config_num(dc, "fileWriteLineLimit", 50);
    const char *eol = detect_ending(content, clen);
    size_t nslen, nrlen;
    char *nsearch = normalize_endings(search, slen, eol, &nslen);
    size_t count = 0;
    for (const char *p = memmem(content, clen, nsearch, nslen); p;
         p = memmem(p + 1, clen - (size_t)(p + 1 - content), nsearch, nslen))
        count++;
    int failed = 0;
    if (count > 0 && (double)count == expected) {
        char *nrepl = normalize_endings(repl, rlen, eol, &nrlen);
        mb_buf out = {0};
        const char *p = content;
        size_t left = clen;
        for (;;) {
            const char *hit = memmem(p, left, nsearch, nslen);
            if (!hit) break;
            mb_buf_append(&out, p, (size_t)(hit - p));
            mb_buf_append(&out, nrepl, nrlen);
            left -= (size_t)(hit - p) + nslen;
            p = hit + nslen;
            if (expected == 1) break;
        }
        mb_buf_append(&out, p, left);
        free(nrepl);
        size_t sl = count_char(search, slen, '\n'), rl = count_char(repl, rlen, '\n');
        size_t ml = sl > rl ? sl : rl;
        mb_buf warn = {0};
        mb_buf_puts(&warn, "");
        if ((double)ml > max_lines) {
            char *mx = mb_js_number(max_lines);
            mb_buf_printf(&warn, "\n\nWARNING: The %s has %zu lines (maximum: %s).\n            \n"
                                 "RECOMMENDATION: For large search/replace operations, consider "
                                 "breaking them into smaller chunks with fewer lines.",
                          sl > rl ? "search text" : "replacement text", ml, mx);
            free(mx);
        }
        if (write_back(dc, file_path, out.data ? out.data : "", out.len, &why)) {
            mb_buf_free(&out);
            mb_buf_free(&warn);
            free(nsearch);
            free(content);
            goto fail;
        }
        char *n = mb_js_number(expected);
        mb_mcp_textf(res, "Successfully applied %s edit%s to %s%s", n, expected > 1 ? "s" : "",
                     file_path, warn.data);
        free(n);
        mb_buf_free(&out);
        mb_buf_free(&warn);
    } else if (count > 0) {
        char *n = mb_js_number(expected);
        mb_mcp_textf(res,
                     "Expected %s occurrences but found %zu in %s. Double check and make sure you "
                     "understand all occurencies and if you want to replace all %zu occurrences, set "
                     "expected_replacements to %zu. If there are many occurrancies and you want to "
                     "change some of them and keep the rest. Do it one by one, by adding more lines "
                     "around each occurrence.If you want to replace a specific occurrence, make your "
                     "search string more unique by adding more lines around search string.",
                     n, count, file_path, count, count);
        free(n);
    } else {
        failed = fuzzy(dc, file_path, content, clen, search, slen, expected, res);
    }
    free(nsearch);
    free(content);
    return failed;
fail:
    dc_error(res, why);
    free(why);
    return 1;
}
