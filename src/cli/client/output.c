/*
 * output.c - what the client prints: untrusted text made safe for a
 * terminal, aligned tables for people, JSON documents for scripts.
 */
#include "cli/client/client.h"

#include <stdlib.h>
#include <string.h>

char *mb_cl_clean(const char *s, int keep_nl)
{
    if (!s) s = "";
    size_t len = strlen(s), rlen = 0;
    char *fixed = mb_utf8_repair(s, len, &rlen);
    mb_buf out = {0};
    mb_buf_reserve(&out, rlen + 1);
    for (size_t i = 0; i < rlen;) {
        size_t at = i;
        unsigned cp = mb_utf8_next(fixed, rlen, &i);
        if ((cp == '\n' && keep_nl) || cp == '\t') mb_buf_putc(&out, cp == '\t' ? ' ' : '\n');
        else if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0)) mb_buf_putc(&out, '?');
        else mb_buf_append(&out, fixed + at, i - at);
    }
    free(fixed);
    mb_buf_append(&out, "", 0); /* NUL-terminated even when empty */
    return mb_buf_steal(&out);
}

void mb_cl_print_json(const json_t *v)
{
    char *text = json_dumps(v, JSON_INDENT(2) | JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
    if (text) {
        fputs(text, stdout);
        fputc('\n', stdout);
        free(text);
    }
}

const char *mb_cl_str(const json_t *obj, const char *key)
{
    const json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;
    return json_is_string(v) ? json_string_value(v) : "";
}

void mb_cl_table_row(mb_cl_table *t, size_t ncols, const char *const *cells)
{
    if (!t->ncols) t->ncols = ncols;
    mb_assert(ncols == t->ncols);
    t->cells = mb_realloc(t->cells, (t->nrows + 1) * t->ncols * sizeof *t->cells);
    for (size_t i = 0; i < t->ncols; i++)
        t->cells[t->nrows * t->ncols + i] = mb_cl_clean(cells[i], 0);
    t->nrows++;
}

void mb_cl_table_print(mb_cl_table *t, FILE *f)
{
    size_t *w = mb_calloc(t->ncols ? t->ncols : 1, sizeof *w);
    for (size_t r = 0; r < t->nrows; r++)
        for (size_t c = 0; c < t->ncols; c++) {
            const char *s = t->cells[r * t->ncols + c];
            size_t n = mb_utf8_length(s, strlen(s));
            if (n > w[c]) w[c] = n;
        }
    for (size_t r = 0; r < t->nrows; r++) {
        for (size_t c = 0; c < t->ncols; c++) {
            const char *s = t->cells[r * t->ncols + c];
            fputs(s, f);
            if (c + 1 < t->ncols) {
                size_t n = mb_utf8_length(s, strlen(s));
                for (size_t k = n; k < w[c] + 2; k++) fputc(' ', f);
            }
        }
        fputc('\n', f);
    }
    for (size_t i = 0; i < t->nrows * t->ncols; i++) free(t->cells[i]);
    free(t->cells);
    free(w);
    memset(t, 0, sizeof *t);
}
