/*
 * translate.c - GoogleSQL -> SQLite, token by token.
 *
 * A tokenizer (backticked identifiers, '...', "...", triple-quoted and raw
 * strings, numbers, @params, -- # and C comments) feeds a translator that
 * walks the tokens once, knowing the catalog:
 *   - table paths (`p.d.t`, d.t, `d.t_*`, d.INFORMATION_SCHEMA.TABLES) in
 *     FROM / JOIN / INTO positions become "d.t", a UNION ALL of the wildcard's
 *     tables with _TABLE_SUFFIX, or views of the catalog; a missing table is
 *     BigQuery's "Not found: Table p:d.t was not found in location US";
 *   - RECORD field access (col.field, alias.col.field) becomes json_extract;
 *   - DATE / TIMESTAMP / DATETIME literals are checked and normalised;
 *   - functions map onto SQLite built-ins or the bq_ UDFs (udf.c), date parts
 *     and INTERVALs becoming string arguments; an unknown function is
 *     "Function not found: X";
 *   - '/' becomes bq_fdiv(term, operand): FLOAT64 and BigQuery's
 *     "division by zero: a / b" (the left term is the output since the
 *     current multiplicative term began, the right one the next operand);
 *   - ARRAY and STRUCT values are JSON text (arrays.c): [..], ARRAY<T>[..],
 *     ARRAY(subquery), STRUCT(..), ARRAY_AGG, subscripts ([OFFSET(i)], ...)
 *     and (expr).field; UNNEST in a FROM is the bq_unnest table, its alias
 *     (and WITH OFFSET name) mapped to the table's columns; IN UNNEST(a) a
 *     subquery of it;
 *   - SELECT * EXCEPT (...) REPLACE (...) over one table lists the columns;
 *   - the outermost SELECT's QUALIFY filters a wrapper of the query;
 *   - MERGE becomes statements over temporary tables of the source and of
 *     which WHEN clause takes which row (plan_merge).
 * What it does not translate it refuses with an error naming the construct
 * (PIVOT, QUALIFY in a subquery, * EXCEPT over a join, tuple structs ...), so
 * a query either runs with BigQuery's meaning or fails; it never answers
 * differently. Nesting and chained operators are bounded (XL_MAX_NEST,
 * XL_MAX_WRAPS): the REST facade runs this on 1 MiB thread stacks.
 *
 * Statements: SELECT/WITH, INSERT, DELETE/UPDATE (WHERE required), MERGE,
 * CREATE [OR REPLACE] TABLE [IF NOT EXISTS] (column list, or AS query), DROP
 * TABLE, TRUNCATE TABLE, CREATE/DROP SCHEMA; the plan says which (bigquery.c
 * runs it).
 */
#define _GNU_SOURCE
#include "gcloud/gcloud_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef enum tk { T_EOF, T_IDENT, T_QIDENT, T_STR, T_BYTES, T_NUM, T_PARAM, T_OP } tk;

typedef struct tok {
    tk type;
    size_t start, len; /* in the source */
    char *text;        /* identifier / decoded string / operator */
    int space_before;
} tok;

typedef struct lexed {
    tok *v;
    size_t n;
} lexed;

static void lexed_free(lexed *l)
{
    for (size_t i = 0; i < l->n; i++) free(l->v[i].text);
    free(l->v);
}

static void push(lexed *l, size_t *cap, tk type, size_t start, size_t len, char *text, int sp)
{
    if (l->n == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        l->v = mb_realloc(l->v, *cap * sizeof *l->v);
    }
    l->v[l->n++] = (tok){type, start, len, text, sp};
}

static int is_id0(unsigned char c) { return isalpha(c) || c == '_' || c >= 0x80; }
static int is_id(unsigned char c) { return isalnum(c) || c == '_' || c >= 0x80; }

static int lex(const char *s, size_t n, lexed *out, mb_err *err)
{
    memset(out, 0, sizeof *out);
    if (!mb_utf8_valid(s, n)) return mb_err_set(err, MB_EINVAL, "Syntax error: the query is not valid UTF-8");
    size_t cap = 0, i = 0;
    int sp = 0;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        if (isspace(c)) { i++; sp = 1; continue; }
        if (c == '#' || (c == '-' && i + 1 < n && s[i + 1] == '-')) {
            while (i < n && s[i] != '\n') i++;
            sp = 1;
            continue;
        }
        if (c == '/' && i + 1 < n && s[i + 1] == '*') {
            const char *e = memmem(s + i + 2, n - i - 2, "*/", 2);
            if (!e) goto unterminated_comment;
            i = (size_t)(e - s) + 2;
            sp = 1;
            continue;
        }
        size_t st = i;
        /* string prefixes r, b, rb, br */
        size_t pre = 0;
        int raw = 0, bytes = 0;
        while (pre < 2 && i + pre < n && strchr("rRbB", s[i + pre])) {
            if (s[i + pre] == 'r' || s[i + pre] == 'R') raw = 1;
            else bytes = 1;
            pre++;
        }
        if (i + pre < n && (s[i + pre] == '\'' || s[i + pre] == '"') &&
            (pre == 0 || !(i > 0 && is_id((unsigned char)s[i - 1])))) {
            i += pre;
            char q = s[i];
            int triple = i + 2 < n && s[i + 1] == q && s[i + 2] == q;
            i += triple ? 3 : 1;
            mb_buf b = {0};
            mb_buf_puts(&b, "");
            for (;;) {
                if (i >= n) {
                    mb_buf_free(&b);
                    lexed_free(out);
                    return mb_err_set(err, MB_EINVAL,
                                      "Syntax error: Unclosed string literal at [1:%zu]", st + 1);
                }
                if (s[i] == q && (!triple || (i + 2 < n && s[i + 1] == q && s[i + 2] == q))) {
                    i += triple ? 3 : 1;
                    break;
                }
                if (!triple && s[i] == '\n') {
                    mb_buf_free(&b);
                    lexed_free(out);
                    return mb_err_set(err, MB_EINVAL,
                                      "Syntax error: Unclosed string literal at [1:%zu]", st + 1);
                }
                if (s[i] == '\\' && i + 1 < n && !raw) {
                    char e = s[++i];
                    switch (e) {
                    case 'n': mb_buf_putc(&b, '\n'); break;
                    case 't': mb_buf_putc(&b, '\t'); break;
                    case 'r': mb_buf_putc(&b, '\r'); break;
                    case '0': mb_buf_putc(&b, '\0'); break;
                    default: mb_buf_putc(&b, e); break;
                    }
                    i++;
                    continue;
                }
                if (s[i] == '\\' && raw && i + 1 < n) mb_buf_putc(&b, s[i++]);
                mb_buf_putc(&b, s[i++]);
            }
            push(out, &cap, bytes ? T_BYTES : T_STR, st, i - st, mb_buf_steal(&b), sp);
            sp = 0;
            continue;
        }
        if (c == '`') {
            const char *e = memchr(s + i + 1, '`', n - i - 1);
            if (!e) {
                lexed_free(out);
                return mb_err_set(err, MB_EINVAL,
                                  "Syntax error: Unclosed identifier literal at [1:%zu]", st + 1);
            }
            size_t len = (size_t)(e - (s + i + 1));
            if (!len) {
                lexed_free(out);
                return mb_err_set(err, MB_EINVAL, "Syntax error: Invalid empty identifier");
            }
            push(out, &cap, T_QIDENT, st, len + 2, mb_strndup(s + i + 1, len), sp);
            i += len + 2;
            sp = 0;
            continue;
        }
        int prev_path = out->n && (out->v[out->n - 1].type == T_IDENT ||
                                   out->v[out->n - 1].type == T_QIDENT ||
                                   !strcmp(out->v[out->n - 1].text, ")"));
        if (isdigit(c) || (c == '.' && i + 1 < n && isdigit((unsigned char)s[i + 1]) && !prev_path)) {
            if (c == '0' && i + 1 < n && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
                i += 2;
                while (i < n && isxdigit((unsigned char)s[i])) i++;
            } else {
                while (i < n && isdigit((unsigned char)s[i])) i++;
                if (i < n && s[i] == '.') {
                    i++;
                    while (i < n && isdigit((unsigned char)s[i])) i++;
                }
                if (i < n && (s[i] == 'e' || s[i] == 'E')) {
                    size_t k = i + 1;
                    if (k < n && (s[k] == '+' || s[k] == '-')) k++;
                    if (k < n && isdigit((unsigned char)s[k])) {
                        i = k;
                        while (i < n && isdigit((unsigned char)s[i])) i++;
                    }
                }
            }
            /* an identifier may start with digits after a dot (`d.2024t`) */
            if (i < n && is_id((unsigned char)s[i]) && prev_path) {
                while (i < n && is_id((unsigned char)s[i])) i++;
                push(out, &cap, T_IDENT, st, i - st, mb_strndup(s + st, i - st), sp);
            } else {
                push(out, &cap, T_NUM, st, i - st, mb_strndup(s + st, i - st), sp);
            }
            sp = 0;
            continue;
        }
        if (is_id0(c)) {
            while (i < n && is_id((unsigned char)s[i])) i++;
            push(out, &cap, T_IDENT, st, i - st, mb_strndup(s + st, i - st), sp);
            sp = 0;
            continue;
        }
        if (c == '@' || c == '?') {
            i++;
            if (c == '@' && i < n && s[i] == '@') {
                lexed_free(out);
                return mb_err_set(err, MB_EINVAL,
                                  "Unsupported: system variables (@@) are not supported by this "
                                  "emulator");
            }
            if (c == '@') {
                if (i >= n || !is_id0((unsigned char)s[i])) {
                    lexed_free(out);
                    return mb_err_set(err, MB_EINVAL, "Syntax error: Unexpected \"@\"");
                }
                while (i < n && is_id((unsigned char)s[i])) i++;
            }
            push(out, &cap, T_PARAM, st, i - st, mb_strndup(s + st, i - st), sp);
            sp = 0;
            continue;
        }
        static const char *const OPS2[] = {"<=", ">=", "<>", "!=", "||", "<<", "=>", NULL}; /* no '>>': ARRAY<STRUCT<..>> */
        size_t len = 1;
        for (const char *const *o = OPS2; *o; o++)
            if (i + 1 < n && s[i] == (*o)[0] && s[i + 1] == (*o)[1]) len = 2;
        if (len == 1 && !strchr("(),.;*+-/<>=!|[]{}:~&^%", c)) {
            lexed_free(out);
            if (c < 0x20 || c >= 0x7f)
                return mb_err_set(err, MB_EINVAL, "Syntax error: Illegal input character \"\\x%02x\"", c);
            return mb_err_set(err, MB_EINVAL, "Syntax error: Illegal input character \"%c\"", c);
        }
        push(out, &cap, T_OP, st, len, mb_strndup(s + i, len), sp);
        i += len;
        sp = 0;
    }
    push(out, &cap, T_EOF, n, 0, mb_strdup(""), sp);
    return MB_OK;
unterminated_comment:
    lexed_free(out);
    return mb_err_set(err, MB_EINVAL, "Syntax error: Unclosed comment");
}

json_t *mb_gc__split(const char *sql, mb_err *err)
{
    size_t n = strlen(sql);
    lexed l;
    if (lex(sql, n, &l, err)) return NULL;
    json_t *out = json_array();
    size_t from = 0;
    int depth = 0;
    for (size_t i = 0; i < l.n; i++) {
        tok *t = &l.v[i];
        if (t->type == T_OP && !strcmp(t->text, "(")) depth++;
        if (t->type == T_OP && !strcmp(t->text, ")")) depth--;
        if (t->type == T_EOF || (t->type == T_OP && !strcmp(t->text, ";") && depth <= 0)) {
            size_t a = i > 0 && from < l.n ? l.v[from].start : 0, b = t->start;
            if (i > from) json_array_append_new(out, json_stringn(sql + a, b - a));
            from = i + 1;
        }
    }
    lexed_free(&l);
    return out;
}

/* ---------------------------------------------------------- translator */

typedef struct xl {
    mb_gc *gc;
    lexed l;
    mb_buf out;
    mb_err *err;
    int failed;
    json_t *records;   /* names of RECORD / REPEATED columns -> true */
    json_t *coltypes;  /* column name (lower) -> type, or null when ambiguous */
    json_t *ctes;      /* CTE names (lower) */
    json_t *colfields; /* column name (lower) -> its schema field, or null when ambiguous */
    json_t *unnest;    /* UNNEST alias (lower) -> {t: table alias, c: column, h: element hint} */
    json_t *unnest_at; /* token index of an UNNEST in a FROM -> its table alias */
    json_t *unnest_order; /* the FROM UNNESTs' names in order (null when unnamed) */
    int uses_arrays;   /* the statement makes ARRAY or STRUCT values */
    json_t *star_hints; /* SELECT * REPLACE: column name (lower) -> the replacement's hint */
    int nest;          /* xrange / hint recursion depth now */
    int wraps;         /* '/', subscripts and field accesses that re-emitted their left side */
} xl;

/* Bounds on what one statement may nest (the C stack) and re-emit (time):
 * SQLite refuses expressions deeper than 1000 anyway. */
#define XL_MAX_NEST 40 /* the REST facade's threads have 1 MiB stacks; a level costs ~10 KiB */
#define XL_MAX_WRAPS 500

static int fail(xl *x, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(xl *x, int code, const char *fmt, ...)
{
    if (x->failed) return x->failed;
    va_list ap;
    va_start(ap, fmt);
    char msg[MB_ERR_MSG_MAX];
    mb_text_vformat(msg, sizeof msg, fmt, ap);
    va_end(ap);
    x->failed = mb_err_set(x->err, code, "%s", msg);
    return x->failed;
}

static int unsupported(xl *x, const char *what)
{
    return fail(x, MB_EINVAL, "Unsupported: %s is not supported by this emulator", what);
}

static tok *T(xl *x, size_t i) { return &x->l.v[i < x->l.n ? i : x->l.n - 1]; }
static int is_op(xl *x, size_t i, const char *op) { return T(x, i)->type == T_OP && !strcmp(T(x, i)->text, op); }
static int is_kw(xl *x, size_t i, const char *kw)
{
    return T(x, i)->type == T_IDENT && !strcasecmp(T(x, i)->text, kw);
}

/* Index of the ')' matching the '(' at i (or EOF). */
static size_t match_paren(xl *x, size_t i)
{
    int depth = 0;
    for (size_t k = i; k < x->l.n; k++) {
        if (is_op(x, k, "(") || is_op(x, k, "[")) depth++;
        else if (is_op(x, k, ")") || is_op(x, k, "]")) {
            if (--depth == 0) return k;
        }
    }
    return x->l.n - 1;
}

static int fail(xl *x, int code, const char *fmt, ...);

/* match_paren, failing x when the bracket at i is not closed by its kind. */
static size_t closing(xl *x, size_t i)
{
    size_t c = match_paren(x, i);
    if (!is_op(x, c, is_op(x, i, "[") ? "]" : ")"))
        fail(x, MB_EINVAL, "Syntax error: Unclosed \"%s\"", T(x, i)->text);
    return c;
}

static void put_sep(xl *x)
{
    if (x->out.len && x->out.data[x->out.len - 1] != ' ' && x->out.data[x->out.len - 1] != '(')
        mb_buf_putc(&x->out, ' ');
}

static void put_quoted_id(mb_buf *b, const char *s)
{
    mb_buf_putc(b, '"');
    for (; *s; s++) {
        if (*s == '"') mb_buf_putc(b, '"');
        mb_buf_putc(b, *s);
    }
    mb_buf_putc(b, '"');
}

static void put_string(mb_buf *b, const char *s)
{
    mb_buf_putc(b, '\'');
    for (; *s; s++) {
        if (*s == '\'') mb_buf_putc(b, '\'');
        mb_buf_putc(b, *s);
    }
    mb_buf_putc(b, '\'');
}

static char *lower(const char *s)
{
    char *low = mb_strdup(s);
    for (char *c = low; *c; c++) *c = (char)tolower((unsigned char)*c);
    return low;
}

static const char *const KEYWORDS[] = {
    "ALL", "AND", "ANY", "AS", "ASC", "BETWEEN", "BY", "CASE", "COLLATE", "CROSS", "CURRENT",
    "DEFAULT", "DESC", "DISTINCT", "ELSE", "END", "ESCAPE", "EXISTS", "FALSE", "FOLLOWING",
    "FOR", "FROM", "FULL", "GROUP", "GROUPS", "HAVING", "IN", "INNER", "INTERSECT", "INTO", "IS",
    "JOIN", "LEFT", "LIKE", "LIMIT", "NATURAL", "NOT", "NULL", "NULLS", "OF", "OFFSET", "ON",
    "OR", "ORDER", "OUTER", "OVER", "PARTITION", "PRECEDING", "RANGE", "RECURSIVE", "RIGHT",
    "ROWS", "ROW", "SELECT", "SET", "THEN", "TRUE", "UNBOUNDED", "UNION", "USING", "VALUES",
    "WHEN", "WHERE", "WINDOW", "WITH", "EXCEPT", "INSERT", "DELETE", "UPDATE",
    "TABLE", "ESCAPE", NULL};

static int is_keyword(const char *s)
{
    for (const char *const *k = KEYWORDS; *k; k++)
        if (!strcasecmp(s, *k)) return 1;
    return 0;
}

static const char *const UNSUPPORTED_KW[] = {
    "QUALIFY" /* but the outermost SELECT's (qualify()) */, "PIVOT", "UNPIVOT", "TABLESAMPLE", "MERGE",
    "LATERAL", "RESPECT", "IGNORE", "WITHIN", "ROLLUP", "CUBE", "GROUPING", NULL};

static const char *const DATE_PARTS[] = {
    "MICROSECOND", "MILLISECOND", "SECOND", "MINUTE", "HOUR", "DAY", "DAYOFWEEK", "DAYOFYEAR",
    "WEEK", "ISOWEEK", "MONTH", "QUARTER", "YEAR", "ISOYEAR", "DATE", NULL};

static int is_date_part(const char *s)
{
    for (const char *const *k = DATE_PARTS; *k; k++)
        if (!strcasecmp(s, *k)) return 1;
    return 0;
}

/* ------------------------------------------------------- table paths */

/* Collects a dotted path starting at *i (identifiers, backticked parts split
 * at dots, adjacent '-' pieces of project names, a trailing '*'); advances *i. */
static json_t *take_path(xl *x, size_t *i, int table_ctx)
{
    json_t *parts = json_array();
    mb_buf cur = {0};
    size_t k = *i;
    for (;;) {
        tok *t = T(x, k);
        if (t->type == T_QIDENT && table_ctx) {
            const char *p = t->text;
            for (;;) {
                const char *dot = strchr(p, '.');
                if (!dot) {
                    mb_buf_puts(&cur, p);
                    break;
                }
                mb_buf_append(&cur, p, (size_t)(dot - p));
                json_array_append_new(parts, json_stringn(cur.data ? cur.data : "", cur.len));
                mb_buf_reset(&cur);
                p = dot + 1;
            }
        } else if (t->type == T_QIDENT || t->type == T_IDENT) {
            mb_buf_puts(&cur, t->text);
        } else break;
        k++;
        /* my-project / region-us: adjacent '-' NAME */
        while (table_ctx && is_op(x, k, "-") && !T(x, k)->space_before &&
               (T(x, k + 1)->type == T_IDENT || T(x, k + 1)->type == T_NUM) &&
               !T(x, k + 1)->space_before) {
            mb_buf_printf(&cur, "-%s", T(x, k + 1)->text);
            k += 2;
        }
        if (table_ctx && is_op(x, k, "*") && !T(x, k)->space_before) {
            mb_buf_putc(&cur, '*');
            k++;
        }
        if (is_op(x, k, ".") && (T(x, k + 1)->type == T_IDENT || T(x, k + 1)->type == T_QIDENT)) {
            json_array_append_new(parts, json_stringn(cur.data ? cur.data : "", cur.len));
            mb_buf_reset(&cur);
            k++;
            continue;
        }
        break;
    }
    json_array_append_new(parts, json_stringn(cur.data ? cur.data : "", cur.len));
    mb_buf_free(&cur);
    *i = k;
    return parts;
}

static const char *part(json_t *parts, size_t i) { return json_string_value(json_array_get(parts, i)) ?: ""; }

static void info_schema(xl *x, const char *dataset, const char *view)
{
    mb_buf *b = &x->out;
    const char *proj = x->gc->project;
    put_sep(x);
    if (!strcasecmp(view, "TABLES")) {
        mb_buf_puts(b, "(SELECT ");
        put_string(b, proj);
        mb_buf_puts(b, " AS table_catalog, dataset AS table_schema, id AS table_name, "
                       "'BASE TABLE' AS table_type, 'YES' AS is_insertable_into, 'NO' AS is_typed, "
                       "bq_from_unix(created, 1000) AS creation_time FROM __bq_tables");
    } else if (!strcasecmp(view, "COLUMNS")) {
        mb_buf_puts(b, "(SELECT ");
        put_string(b, proj);
        mb_buf_puts(b, " AS table_catalog, t.dataset AS table_schema, t.id AS table_name, "
                       "json_extract(j.value, '$.name') AS column_name, j.key + 1 AS "
                       "ordinal_position, CASE json_extract(j.value, '$.mode') WHEN 'REQUIRED' "
                       "THEN 'NO' ELSE 'YES' END AS is_nullable, "
                       "(CASE WHEN json_extract(j.value, '$.mode') = 'REPEATED' THEN 'ARRAY<' "
                       "ELSE '' END) || (CASE json_extract(j.value, '$.type') WHEN 'INTEGER' "
                       "THEN 'INT64' WHEN 'FLOAT' THEN 'FLOAT64' WHEN 'BOOLEAN' THEN 'BOOL' "
                       "WHEN 'RECORD' THEN 'STRUCT' ELSE json_extract(j.value, '$.type') END) || "
                       "(CASE WHEN json_extract(j.value, '$.mode') = 'REPEATED' THEN '>' ELSE '' "
                       "END) AS data_type, 'NO' AS is_partitioning_column "
                       "FROM __bq_tables t, json_each(t.fields) j");
    } else if (!strcasecmp(view, "SCHEMATA")) {
        mb_buf_puts(b, "(SELECT ");
        put_string(b, proj);
        mb_buf_puts(b, " AS catalog_name, id AS schema_name, location, "
                       "bq_from_unix(created, 1000) AS creation_time, "
                       "bq_from_unix(modified, 1000) AS last_modified_time FROM __bq_datasets)");
        return;
    } else {
        char *w = mb_asprintf("INFORMATION_SCHEMA.%s", view);
        unsupported(x, w);
        free(w);
        return;
    }
    if (dataset) {
        mb_buf_puts(b, !strcasecmp(view, "COLUMNS") ? " WHERE t.dataset = " : " WHERE dataset = ");
        put_string(b, dataset);
    }
    mb_buf_puts(b, ")");
}

static int table_exists(xl *x, const char *dataset, const char *table)
{
    json_t *f = mb_gc__table_fields(x->gc, dataset, table);
    json_decref(f);
    return f != NULL;
}

static void wildcard(xl *x, const char *dataset, const char *prefix_star)
{
    size_t plen = strlen(prefix_star) - 1;
    sqlite3_stmt *st;
    if (mb_gc__prep(x->gc, "SELECT id, fields FROM __bq_tables WHERE dataset=? ORDER BY created DESC, id",
                    &st, NULL)) {
        fail(x, MB_EIO, "cannot read the catalog");
        return;
    }
    sqlite3_bind_text(st, 1, dataset, -1, SQLITE_STATIC);
    json_t *cols = json_array(), *tables = json_array();
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *id = (const char *)sqlite3_column_text(st, 0);
        if (strncmp(id, prefix_star, plen)) continue;
        json_t *f = json_loads((const char *)sqlite3_column_text(st, 1), 0, NULL);
        size_t i;
        json_t *fld;
        json_array_foreach(f, i, fld) {
            const char *name = json_string_value(json_object_get(fld, "name"));
            int have = 0;
            for (size_t k = 0; k < json_array_size(cols); k++)
                have |= !strcasecmp(json_string_value(json_array_get(cols, k)), name);
            if (!have) json_array_append_new(cols, json_string(name));
        }
        json_array_append_new(tables, json_pack("{s:s,s:o}", "id", id, "fields", f ? f : json_array()));
    }
    sqlite3_finalize(st);
    if (!json_array_size(tables)) {
        fail(x, MB_ENOTFOUND, "Not found: Table %s:%s.%s was not found in location US",
             x->gc->project, dataset, prefix_star);
    } else {
        put_sep(x);
        mb_buf_puts(&x->out, "(");
        size_t i;
        json_t *t;
        json_array_foreach(tables, i, t) {
            const char *id = json_string_value(json_object_get(t, "id"));
            mb_buf_puts(&x->out, i ? " UNION ALL SELECT " : "SELECT ");
            for (size_t c = 0; c < json_array_size(cols); c++) {
                const char *name = json_string_value(json_array_get(cols, c));
                int have = 0;
                size_t k;
                json_t *fld;
                json_array_foreach(json_object_get(t, "fields"), k, fld)
                    have |= !strcasecmp(json_string_value(json_object_get(fld, "name")), name);
                if (have) put_quoted_id(&x->out, name);
                else mb_buf_puts(&x->out, "NULL");
                mb_buf_puts(&x->out, " AS ");
                put_quoted_id(&x->out, name);
                mb_buf_puts(&x->out, ", ");
            }
            put_string(&x->out, id + plen);
            mb_buf_puts(&x->out, " AS _TABLE_SUFFIX FROM ");
            char *dt = mb_asprintf("%s.%s", dataset, id);
            put_quoted_id(&x->out, dt);
            free(dt);
        }
        mb_buf_puts(&x->out, ")");
    }
    json_decref(cols);
    json_decref(tables);
}

/* Resolves a table path to (dataset, table); MB_OK or fails x. */
static int resolve(xl *x, json_t *parts, const char **ds, const char **tb)
{
    size_t n = json_array_size(parts);
    const char *proj = x->gc->project;
    if (n == 3) {
        if (strcmp(part(parts, 0), proj))
            return fail(x, MB_ENOTFOUND, "Not found: Project %s", part(parts, 0));
        *ds = part(parts, 1);
        *tb = part(parts, 2);
        return MB_OK;
    }
    if (n == 2) {
        *ds = part(parts, 0);
        *tb = part(parts, 1);
        return MB_OK;
    }
    if (n == 1)
        return fail(x, MB_EINVAL,
                    "Table \"%s\" must be qualified with a dataset (e.g. dataset.table).",
                    part(parts, 0));
    return fail(x, MB_EINVAL, "Invalid table name: too many dotted parts");
}

/* Emits the table reference whose path starts at *i. */
static void table_ref(xl *x, size_t *i)
{
    json_t *parts = take_path(x, i, 1);
    size_t n = json_array_size(parts);
    /* INFORMATION_SCHEMA.X, region-us.INFORMATION_SCHEMA.X, d.INFORMATION_SCHEMA.X,
     * p.d.INFORMATION_SCHEMA.X */
    if (n >= 2 && !strcasecmp(part(parts, n - 2), "INFORMATION_SCHEMA")) {
        const char *ds = NULL;
        if (n == 3 && strncasecmp(part(parts, 0), "region-", 7)) ds = part(parts, 0);
        if (n == 4) {
            if (strcmp(part(parts, 0), x->gc->project))
                fail(x, MB_ENOTFOUND, "Not found: Project %s", part(parts, 0));
            ds = part(parts, 1);
        }
        if (n > 4) fail(x, MB_EINVAL, "Invalid INFORMATION_SCHEMA path");
        if (ds) {
            json_t *d;
            if (mb_gc_bq_dataset_get(x->gc, ds, &d, NULL))
                fail(x, MB_ENOTFOUND, "Not found: Dataset %s:%s was not found in location US",
                     x->gc->project, ds);
            json_decref(d);
        }
        if (!x->failed) info_schema(x, ds, part(parts, n - 1));
        json_decref(parts);
        return;
    }
    if (n == 1) {
        char *low = mb_strdup(part(parts, 0));
        for (char *c = low; *c; c++) *c = (char)tolower((unsigned char)*c);
        int is_cte = json_object_get(x->ctes, low) != NULL;
        free(low);
        if (is_cte) {
            put_sep(x);
            put_quoted_id(&x->out, part(parts, 0));
            json_decref(parts);
            return;
        }
    }
    const char *ds, *tb;
    if (resolve(x, parts, &ds, &tb) == MB_OK) {
        size_t tl = strlen(tb);
        if (tl && tb[tl - 1] == '*') {
            wildcard(x, ds, tb);
        } else if (!table_exists(x, ds, tb)) {
            json_t *d;
            if (mb_gc_bq_dataset_get(x->gc, ds, &d, NULL))
                fail(x, MB_ENOTFOUND, "Not found: Dataset %s:%s was not found in location US",
                     x->gc->project, ds);
            else
                fail(x, MB_ENOTFOUND, "Not found: Table %s:%s.%s was not found in location US",
                     x->gc->project, ds, tb);
            json_decref(d);
        } else {
            put_sep(x);
            char *dt = mb_asprintf("%s.%s", ds, tb);
            put_quoted_id(&x->out, dt);
            free(dt);
            /* no alias: the table's name is one, as in BigQuery (t.col after FROM d.t) */
            tok *nx = T(x, *i);
            if (!is_kw(x, *i, "AS") && nx->type != T_QIDENT && !(nx->type == T_IDENT && !is_keyword(nx->text))) {
                mb_buf_puts(&x->out, " AS ");
                put_quoted_id(&x->out, tb);
            }
        }
    }
    json_decref(parts);
}

/* ---------------------------------------------------------- functions */

typedef enum fk {
    F_PASS,     /* same arguments, SQLite name */
    F_PART,     /* date-part / INTERVAL arguments become strings */
    F_EXTRACT,
    F_CAST,
    F_FMT,      /* bq_format(a, b, extra) */
    F_PARSE,    /* bq_parse(a, b, extra) */
    F_UNIX,     /* name(x, extra) */
    F_JSON,     /* name(extra, json [, path]) */
    F_TOJSON,   /* TO_JSON_STRING(value): bq_to_json(value, its field) */
    F_QUANT,    /* PERCENTILE_CONT/DISC(x, p) OVER, APPROX_QUANTILES(x, n) */
    F_GDA,      /* GENERATE_DATE_ARRAY(a, b [, INTERVAL n part]) */
    F_PREFIX,   /* sq(extra, args...) */
    F_COUNTD,   /* APPROX_COUNT_DISTINCT(x): count(DISTINCT x) */
    F_REGEXP,   /* bq_regexp(a, b, extra [, c]) */
    F_LOG,
    F_NOW,      /* no arguments needed */
    F_TRUNC,
    F_ARRAY_AGG, /* bq_array_agg(v, flags, limit, key, desc, ...) */
} fk;

static const struct fn {
    const char *bq;
    fk kind;
    const char *sq;
    const char *extra;
    const char *hint; /* result type */
} FNS[] = {
    {"COUNT", F_PASS, "count", NULL, "INTEGER"},
    {"SUM", F_PASS, "sum", NULL, "=arg"},
    {"AVG", F_PASS, "avg", NULL, "FLOAT"},
    {"MIN", F_PASS, "min", NULL, "=arg"},
    {"MAX", F_PASS, "max", NULL, "=arg"},
    {"ANY_VALUE", F_PASS, "bq_any_value", NULL, "=arg"},
    {"COUNTIF", F_PASS, "bq_countif", NULL, "INTEGER"},
    {"LOGICAL_AND", F_PASS, "bq_logical_and", NULL, "BOOLEAN"},
    {"LOGICAL_OR", F_PASS, "bq_logical_or", NULL, "BOOLEAN"},
    {"STDDEV", F_PASS, "bq_stddev_samp", NULL, "FLOAT"},
    {"STDDEV_SAMP", F_PASS, "bq_stddev_samp", NULL, "FLOAT"},
    {"STDDEV_POP", F_PASS, "bq_stddev_pop", NULL, "FLOAT"},
    {"VARIANCE", F_PASS, "bq_var_samp", NULL, "FLOAT"},
    {"VAR_SAMP", F_PASS, "bq_var_samp", NULL, "FLOAT"},
    {"VAR_POP", F_PASS, "bq_var_pop", NULL, "FLOAT"},
    {"STRING_AGG", F_PASS, "group_concat", NULL, "STRING"},
    {"ROW_NUMBER", F_PASS, "row_number", NULL, "INTEGER"},
    {"RANK", F_PASS, "rank", NULL, "INTEGER"},
    {"DENSE_RANK", F_PASS, "dense_rank", NULL, "INTEGER"},
    {"PERCENT_RANK", F_PASS, "percent_rank", NULL, "FLOAT"},
    {"CUME_DIST", F_PASS, "cume_dist", NULL, "FLOAT"},
    {"NTILE", F_PASS, "ntile", NULL, "INTEGER"},
    {"LAG", F_PASS, "lag", NULL, "=arg"},
    {"LEAD", F_PASS, "lead", NULL, "=arg"},
    {"FIRST_VALUE", F_PASS, "first_value", NULL, "=arg"},
    {"LAST_VALUE", F_PASS, "last_value", NULL, "=arg"},
    {"NTH_VALUE", F_PASS, "nth_value", NULL, "=arg"},
    {"ABS", F_PASS, "abs", NULL, NULL},
    {"ROUND", F_PASS, "round", NULL, "FLOAT"},
    {"TRUNC", F_PASS, "trunc", NULL, "FLOAT"},
    {"FLOOR", F_PASS, "floor", NULL, "FLOAT"},
    {"CEIL", F_PASS, "ceil", NULL, "FLOAT"},
    {"CEILING", F_PASS, "ceil", NULL, "FLOAT"},
    {"SQRT", F_PASS, "sqrt", NULL, "FLOAT"},
    {"POW", F_PASS, "pow", NULL, "FLOAT"},
    {"POWER", F_PASS, "pow", NULL, "FLOAT"},
    {"EXP", F_PASS, "exp", NULL, "FLOAT"},
    {"LN", F_PASS, "ln", NULL, "FLOAT"},
    {"LOG10", F_PASS, "log10", NULL, "FLOAT"},
    {"LOG", F_LOG, "ln", NULL, "FLOAT"},
    {"SIGN", F_PASS, "sign", NULL, NULL},
    {"MOD", F_PASS, "bq_mod", NULL, NULL},
    {"DIV", F_PASS, "bq_div", NULL, "INTEGER"},
    {"GREATEST", F_PASS, "max", NULL, NULL},
    {"LEAST", F_PASS, "min", NULL, NULL},
    {"SAFE_DIVIDE", F_PASS, "bq_safe_divide", NULL, "FLOAT"},
    {"IF", F_PASS, "iif", NULL, NULL},
    {"IFNULL", F_PASS, "ifnull", NULL, NULL},
    {"COALESCE", F_PASS, "coalesce", NULL, NULL},
    {"NULLIF", F_PASS, "nullif", NULL, NULL},
    {"LENGTH", F_PASS, "length", NULL, "INTEGER"},
    {"CHAR_LENGTH", F_PASS, "length", NULL, "INTEGER"},
    {"CHARACTER_LENGTH", F_PASS, "length", NULL, "INTEGER"},
    {"LOWER", F_PASS, "lower", NULL, "STRING"},
    {"UPPER", F_PASS, "upper", NULL, "STRING"},
    {"SUBSTR", F_PASS, "substr", NULL, "STRING"},
    {"SUBSTRING", F_PASS, "substr", NULL, "STRING"},
    {"REPLACE", F_PASS, "replace", NULL, "STRING"},
    {"TRIM", F_PASS, "trim", NULL, "STRING"},
    {"LTRIM", F_PASS, "ltrim", NULL, "STRING"},
    {"RTRIM", F_PASS, "rtrim", NULL, "STRING"},
    {"STRPOS", F_PASS, "instr", NULL, "INTEGER"},
    {"INSTR", F_PASS, "instr", NULL, "INTEGER"},
    {"CONCAT", F_PASS, "bq_concat", NULL, "STRING"},
    {"STARTS_WITH", F_PASS, "bq_starts_with", NULL, "BOOLEAN"},
    {"ENDS_WITH", F_PASS, "bq_ends_with", NULL, "BOOLEAN"},
    {"LPAD", F_PASS, "bq_lpad", NULL, "STRING"},
    {"RPAD", F_PASS, "bq_rpad", NULL, "STRING"},
    {"DATE", F_PASS, "bq_date", NULL, "DATE"},
    {"TIMESTAMP", F_PASS, "bq_timestamp", NULL, "TIMESTAMP"},
    {"DATETIME", F_PASS, "bq_timestamp", NULL, "DATETIME"},
    {"CURRENT_DATE", F_NOW, "bq_current_date", NULL, "DATE"},
    {"CURRENT_TIMESTAMP", F_NOW, "bq_current_timestamp", NULL, "TIMESTAMP"},
    {"CURRENT_DATETIME", F_NOW, "bq_current_timestamp", NULL, "DATETIME"},
    {"CURRENT_TIME", F_NOW, "bq_current_time", NULL, "TIME"},
    {"TIME_ADD", F_PART, "bq_time_add", NULL, "TIME"},
    {"TIME_SUB", F_PART, "bq_time_sub", NULL, "TIME"},
    {"TIME_DIFF", F_PART, "bq_time_diff", NULL, "INTEGER"},
    {"TIME_TRUNC", F_TRUNC, "bq_trunc", "2", "TIME"},
    {"FORMAT_TIME", F_FMT, "bq_format", "0", "STRING"},
    {"PARSE_TIME", F_PARSE, "bq_parse", "3", "TIME"},
    {"DATE_DIFF", F_PART, "bq_date_diff", NULL, "INTEGER"},
    {"DATE_ADD", F_PART, "bq_date_add", NULL, "DATE"},
    {"DATE_SUB", F_PART, "bq_date_sub", NULL, "DATE"},
    {"TIMESTAMP_DIFF", F_PART, "bq_ts_diff", NULL, "INTEGER"},
    {"TIMESTAMP_ADD", F_PART, "bq_ts_add", NULL, "TIMESTAMP"},
    {"TIMESTAMP_SUB", F_PART, "bq_ts_sub", NULL, "TIMESTAMP"},
    {"DATETIME_DIFF", F_PART, "bq_ts_diff", NULL, "INTEGER"},
    {"DATETIME_ADD", F_PART, "bq_ts_add", NULL, "DATETIME"},
    {"DATETIME_SUB", F_PART, "bq_ts_sub", NULL, "DATETIME"},
    {"DATE_TRUNC", F_TRUNC, "bq_trunc", "0", "DATE"},
    {"TIMESTAMP_TRUNC", F_TRUNC, "bq_trunc", "1", "TIMESTAMP"},
    {"DATETIME_TRUNC", F_TRUNC, "bq_trunc", "1", "DATETIME"},
    {"EXTRACT", F_EXTRACT, "bq_extract", NULL, "INTEGER"},
    {"CAST", F_CAST, "bq_cast", "0", NULL},
    {"SAFE_CAST", F_CAST, "bq_cast", "1", NULL},
    {"FORMAT_DATE", F_FMT, "bq_format", "0", "STRING"},
    {"FORMAT_DATETIME", F_FMT, "bq_format", "0", "STRING"},
    {"FORMAT_TIMESTAMP", F_FMT, "bq_format", "1", "STRING"},
    {"PARSE_DATE", F_PARSE, "bq_parse", "0", "DATE"},
    {"PARSE_DATETIME", F_PARSE, "bq_parse", "1", "DATETIME"},
    {"PARSE_TIMESTAMP", F_PARSE, "bq_parse", "2", "TIMESTAMP"},
    {"UNIX_SECONDS", F_UNIX, "bq_unix", "1000000", "INTEGER"},
    {"UNIX_MILLIS", F_UNIX, "bq_unix", "1000", "INTEGER"},
    {"UNIX_MICROS", F_UNIX, "bq_unix", "1", "INTEGER"},
    {"TIMESTAMP_SECONDS", F_UNIX, "bq_from_unix", "1000000", "TIMESTAMP"},
    {"TIMESTAMP_MILLIS", F_UNIX, "bq_from_unix", "1000", "TIMESTAMP"},
    {"TIMESTAMP_MICROS", F_UNIX, "bq_from_unix", "1", "TIMESTAMP"},
    {"REGEXP_CONTAINS", F_REGEXP, "bq_regexp", "0", "BOOLEAN"},
    {"REGEXP_EXTRACT", F_REGEXP, "bq_regexp", "1", "STRING"},
    {"REGEXP_REPLACE", F_REGEXP, "bq_regexp", "2", "STRING"},
    {"ARRAY_AGG", F_ARRAY_AGG, "bq_array_agg", NULL, NULL},
    {"FORMAT", F_PASS, "bq_format_string", NULL, "STRING"},
    {"ARRAY_LENGTH", F_PASS, "bq_array_length", NULL, "INTEGER"},
    {"ARRAY_TO_STRING", F_PASS, "bq_array_to_string", NULL, "STRING"},
    {"ARRAY_CONCAT", F_PASS, "bq_array_concat", NULL, NULL},
    {"ARRAY_REVERSE", F_PASS, "bq_array_reverse", NULL, NULL},
    {"GENERATE_ARRAY", F_PASS, "bq_generate_array", NULL, NULL},
    {"TO_JSON_STRING", F_TOJSON, "bq_to_json", NULL, "STRING"},
    {"GENERATE_DATE_ARRAY", F_GDA, "bq_generate_date_array", NULL, NULL},
    {"SPLIT", F_PASS, "bq_split", NULL, "ARRAY<STRING>"},
    {"TIME", F_PASS, "bq_time", NULL, "TIME"},
    {"LEFT", F_PASS, "bq_left", NULL, "STRING"},
    {"RIGHT", F_PASS, "bq_right", NULL, "STRING"},
    {"REVERSE", F_PASS, "bq_reverse", NULL, "STRING"},
    {"REPEAT", F_PASS, "bq_repeat", NULL, "STRING"},
    {"CONTAINS_SUBSTR", F_PASS, "bq_contains_substr", NULL, "BOOLEAN"},
    {"INITCAP", F_PASS, "bq_initcap", NULL, "STRING"},
    {"BYTE_LENGTH", F_PASS, "bq_byte_length", NULL, "INTEGER"},
    {"ASCII", F_PASS, "bq_ascii", NULL, "INTEGER"},
    {"CHR", F_PASS, "bq_chr", NULL, "STRING"},
    {"SAFE_ADD", F_PREFIX, "bq_safe_arith", "0", NULL},
    {"SAFE_SUBTRACT", F_PREFIX, "bq_safe_arith", "1", NULL},
    {"SAFE_MULTIPLY", F_PREFIX, "bq_safe_arith", "2", NULL},
    {"SAFE_NEGATE", F_PREFIX, "bq_safe_arith", "3", NULL},
    {"UNIX_DATE", F_PASS, "bq_unix_date", NULL, "INTEGER"},
    {"DATE_FROM_UNIX_DATE", F_PASS, "bq_date_from_unix_date", NULL, "DATE"},
    {"LAST_DAY", F_PART, "bq_last_day", NULL, "DATE"},
    {"APPROX_COUNT_DISTINCT", F_COUNTD, "count", NULL, "INTEGER"},
    {"PERCENTILE_CONT", F_QUANT, "bq_percentile", "0", "FLOAT"},
    {"PERCENTILE_DISC", F_QUANT, "bq_percentile", "1", "=arg"},
    {"APPROX_QUANTILES", F_QUANT, "bq_approx_quantiles", NULL, NULL},
    {"JSON_EXTRACT_SCALAR", F_JSON, "bq_json", "0", "STRING"},
    {"JSON_VALUE", F_JSON, "bq_json", "0", "STRING"},
    {"JSON_EXTRACT", F_JSON, "bq_json", "1", "STRING"},
    {"JSON_QUERY", F_JSON, "bq_json", "1", "STRING"},
    {"JSON_EXTRACT_ARRAY", F_JSON, "bq_json", "2", "ARRAY<STRING>"},
    {"JSON_QUERY_ARRAY", F_JSON, "bq_json", "2", "ARRAY<STRING>"},
    {"JSON_EXTRACT_STRING_ARRAY", F_JSON, "bq_json", "3", "ARRAY<STRING>"},
    {"JSON_VALUE_ARRAY", F_JSON, "bq_json", "3", "ARRAY<STRING>"},
};

static const struct fn *fn_of(const char *name)
{
    for (size_t i = 0; i < sizeof FNS / sizeof *FNS; i++)
        if (!strcasecmp(FNS[i].bq, name)) return &FNS[i];
    return NULL;
}

static void xrange(xl *x, size_t a, size_t b, int table_ctx);

/* Splits (open, close) into top-level argument ranges. */
static size_t args_of(xl *x, size_t open, size_t close, size_t *as, size_t *ae, size_t max)
{
    size_t n = 0, start = open + 1;
    int depth = 0;
    if (close == open + 1) return 0;
    for (size_t k = open + 1; k <= close && n < max; k++) {
        if (k == close || (depth == 0 && is_op(x, k, ","))) {
            as[n] = start;
            ae[n] = k;
            n++;
            start = k + 1;
            continue;
        }
        if ((is_kw(x, k, "ARRAY") || is_kw(x, k, "STRUCT")) && is_op(x, k + 1, "<")) {
            int d = 0;
            for (size_t m = k + 1; m < close; m++) {
                if (is_op(x, m, "<")) d++;
                else if (is_op(x, m, ">") && --d == 0) {
                    k = m;
                    break;
                }
            }
            continue;
        }
        if (is_op(x, k, "(") || is_op(x, k, "[")) depth++;
        if (is_op(x, k, ")") || is_op(x, k, "]")) depth--;
    }
    return n;
}

static const char *cast_type(xl *x, size_t i, size_t end)
{
    if (end != i + 1 || T(x, i)->type != T_IDENT) {
        if (is_kw(x, i, "ARRAY") || is_kw(x, i, "STRUCT")) unsupported(x, "CAST to ARRAY or STRUCT");
        else fail(x, MB_EINVAL, "Syntax error: Expected a type name in CAST");
        return NULL;
    }
    const char *c = mb_gc__type_canon(T(x, i)->text);
    if (!c) {
        fail(x, MB_EINVAL, "Type not found: %s", T(x, i)->text);
        return NULL;
    }
    if (!strcmp(c, "INTEGER")) return "INT64";
    if (!strcmp(c, "FLOAT")) return "FLOAT64";
    if (!strcmp(c, "BOOLEAN")) return "BOOL";
    if (!strcmp(c, "RECORD") || !strcmp(c, "JSON") || !strcmp(c, "GEOGRAPHY") || !strcmp(c, "BYTES") ||
        !strcmp(c, "TIME")) {
        char *w = mb_asprintf("CAST to %s", c);
        unsupported(x, w);
        free(w);
        return NULL;
    }
    return c;
}

/* ARRAY_AGG([DISTINCT] v [IGNORE NULLS | RESPECT NULLS] [ORDER BY k [ASC|DESC], ...]
 * [LIMIT n]) between open and close: bq_array_agg(v, flags, limit, k, desc, ...). */
static size_t array_agg(xl *x, size_t open, size_t close, int string_agg)
{
    size_t k = open + 1, v0, v1, d0 = 0, d1 = 0;
    int flags = string_agg ? 2 : 0; /* STRING_AGG skips NULLs */
    if (is_kw(x, k, "DISTINCT")) {
        flags |= 1;
        k++;
    }
    v0 = k;
    int depth = 0;
    for (; k < close; k++) {
        if (is_op(x, k, "(") || is_op(x, k, "[")) depth++;
        else if (is_op(x, k, ")") || is_op(x, k, "]")) depth--;
        else if (!depth && (is_kw(x, k, "IGNORE") || is_kw(x, k, "RESPECT") || is_kw(x, k, "ORDER") ||
                            is_kw(x, k, "LIMIT") || is_op(x, k, ",")))
            break;
    }
    v1 = k;
    if (string_agg && is_op(x, k, ",")) { /* the delimiter */
        d0 = ++k;
        for (depth = 0; k < close; k++) {
            if (is_op(x, k, "(")) depth++;
            else if (is_op(x, k, ")")) depth--;
            else if (!depth && (is_kw(x, k, "ORDER") || is_kw(x, k, "LIMIT"))) break;
        }
        d1 = k;
    }
    if (v1 == v0 || is_op(x, k, ",") || (d0 && d1 == d0)) {
        fail(x, MB_EINVAL, "No matching signature for aggregate function %s", string_agg ? "STRING_AGG" : "ARRAY_AGG");
        return close + 1;
    }
    if ((is_kw(x, k, "IGNORE") || is_kw(x, k, "RESPECT")) && is_kw(x, k + 1, "NULLS")) {
        if (is_kw(x, k, "IGNORE")) flags |= 2;
        k += 2;
    }
    if (!string_agg) x->uses_arrays = 1;
    mb_buf *b = &x->out;
    put_sep(x);
    if (string_agg) mb_buf_puts(b, "bq_array_to_string(");
    mb_buf_puts(b, "bq_array_agg(");
    xrange(x, v0, v1, 0);
    size_t lim0 = 0, lim1 = 0, ord = 0;
    if (is_kw(x, k, "ORDER") && is_kw(x, k + 1, "BY")) {
        ord = k + 2;
        for (k = ord; k < close && !is_kw(x, k, "LIMIT"); k++) {
            if (is_op(x, k, "(")) k = match_paren(x, k);
        }
    }
    size_t ord_end = k;
    if (is_kw(x, k, "LIMIT")) {
        lim0 = k + 1;
        lim1 = close;
        if (lim1 != lim0 + 1 || T(x, lim0)->type != T_NUM) {
            fail(x, MB_EINVAL, "Syntax error: LIMIT in ARRAY_AGG takes an integer literal");
            return close + 1;
        }
    } else if (k != close) {
        fail(x, MB_EINVAL, "Syntax error: Unexpected \"%s\" in ARRAY_AGG", T(x, k)->text);
        return close + 1;
    }
    mb_buf_printf(b, ", %d, %s", flags, lim0 ? T(x, lim0)->text : "NULL");
    if (ord) {
        size_t as[32], ae[32];
        size_t n = args_of(x, ord - 1, ord_end, as, ae, 32);
        for (size_t a = 0; a < n; a++) {
            size_t e = ae[a];
            int desc = 0;
            if (e > as[a] && (is_kw(x, e - 1, "DESC") || is_kw(x, e - 1, "ASC"))) {
                desc = is_kw(x, e - 1, "DESC");
                e--;
            }
            mb_buf_puts(b, ", ");
            xrange(x, as[a], e, 0);
            mb_buf_printf(b, ", %d", desc);
        }
    }
    mb_buf_puts(b, ")");
    if (string_agg) {
        mb_buf_puts(b, ", ");
        if (d0) xrange(x, d0, d1, 0);
        else mb_buf_puts(b, "','");
        mb_buf_puts(b, ")");
    }
    /* as a window: plain ARRAY_AGG([IGNORE NULLS]) only, as BigQuery has it */
    if (is_kw(x, close + 1, "OVER") && (string_agg || ord || lim0 || (flags & 1)))
        unsupported(x, string_agg ? "STRING_AGG with ORDER BY or LIMIT as a window function"
                                  : "ARRAY_AGG with DISTINCT, ORDER BY or LIMIT as a window function");
    return close + 1;
}

static const char *col_type(xl *x, const char *name);

/* The BigQuery type of the argument [a, b) when it is a plain column (col or
 * alias.col, not a RECORD's field), else NULL. */
static const char *arg_column_type(xl *x, size_t a, size_t b)
{
    const char *name = T(x, b - 1)->text;
    for (size_t k = 1; k < x->l.n; k++) /* a name the query gives to something else too: unknown */
        if (is_kw(x, k - 1, "AS") && (T(x, k)->type == T_IDENT || T(x, k)->type == T_QIDENT) &&
            !strcasecmp(T(x, k)->text, name))
            return NULL;
    if (b == a + 1 && T(x, a)->type == T_IDENT && !is_keyword(T(x, a)->text)) return col_type(x, T(x, a)->text);
    if (b == a + 3 && (T(x, a)->type == T_IDENT || T(x, a)->type == T_QIDENT) && is_op(x, a + 1, ".") &&
        (T(x, a + 2)->type == T_IDENT || T(x, a + 2)->type == T_QIDENT) && !col_type(x, T(x, a)->text))
        return col_type(x, T(x, a + 2)->text);
    return NULL;
}

/* A type as GoogleSQL's messages name it (INT64, not INTEGER). */
static const char *sql_type_name(const char *t)
{
    static const char *const MAP[][2] = {{"INTEGER", "INT64"}, {"FLOAT", "FLOAT64"}, {"BOOLEAN", "BOOL"},
                                         {"RECORD", "STRUCT"}};
    for (size_t k = 0; k < sizeof MAP / sizeof *MAP; k++)
        if (!strcmp(t, MAP[k][0])) return MAP[k][1];
    return t;
}

static json_t *item_hint(xl *x, size_t a, size_t b);

/* The fields of the table that `name` stands for in a FROM (its alias, or
 * the table's own name when it has none), or NULL. */
static json_t *alias_fields(xl *x, const char *name)
{
    for (size_t k = 0; k + 1 < x->l.n; k++) {
        if (!(is_kw(x, k, "FROM") || is_kw(x, k, "JOIN") || is_op(x, k, ",")) ||
            (T(x, k + 1)->type != T_IDENT && T(x, k + 1)->type != T_QIDENT) || is_keyword(T(x, k + 1)->text))
            continue;
        size_t j = k + 1;
        json_t *parts = take_path(x, &j, 1);
        size_t n = json_array_size(parts);
        const char *alias = n ? part(parts, n - 1) : "";
        if (is_kw(x, j, "AS")) j++;
        if (T(x, j)->type == T_QIDENT || (T(x, j)->type == T_IDENT && !is_keyword(T(x, j)->text)))
            alias = T(x, j)->text;
        json_t *f = NULL;
        if (n >= 2 && n <= 3 && !strcasecmp(alias, name) &&
            (n == 2 || !strcmp(part(parts, 0), x->gc->project)))
            f = mb_gc__table_fields(x->gc, part(parts, n - 2), part(parts, n - 1));
        json_decref(parts);
        if (f) return f;
    }
    return NULL;
}

/* TO_JSON_STRING(value): bq_to_json(value, its BigQuery field); a table
 * alias is the row as a STRUCT of the table's columns. */
static void to_json(xl *x, const size_t *as, const size_t *ae, size_t n)
{
    mb_buf *b = &x->out;
    if (n == 2 && !is_kw(x, as[1], "FALSE")) {
        unsupported(x, "TO_JSON_STRING with pretty_print");
        return;
    }
    json_t *fields = ae[0] == as[0] + 1 && (T(x, as[0])->type == T_IDENT || T(x, as[0])->type == T_QIDENT) &&
                             !col_type(x, T(x, as[0])->text) && !json_object_get(x->unnest, T(x, as[0])->text)
                         ? alias_fields(x, T(x, as[0])->text)
                         : NULL;
    json_t *field;
    if (fields) {
        field = json_pack("{s:s,s:o}", "type", "RECORD", "fields", fields);
        mb_buf_puts(b, "bq_to_json(json_object(");
        json_t *f;
        size_t i;
        json_array_foreach(fields, i, f) {
            const char *name = json_string_value(json_object_get(f, "name"));
            const char *type = json_string_value(json_object_get(f, "type"));
            const char *mode = json_string_value(json_object_get(f, "mode"));
            int nested = !strcmp(type ? type : "", "RECORD") || (mode && !strcmp(mode, "REPEATED"));
            if (i) mb_buf_puts(b, ", ");
            put_string(b, name ? name : "");
            mb_buf_puts(b, nested ? ", json(" : ", ");
            put_quoted_id(b, T(x, as[0])->text);
            mb_buf_putc(b, '.');
            put_quoted_id(b, name ? name : "");
            if (nested) mb_buf_putc(b, ')');
        }
        mb_buf_puts(b, ")");
    } else {
        json_t *h = item_hint(x, as[0], ae[0]);
        size_t k = as[0];
        if (is_op(x, k, "-") && ae[0] == k + 2) k++;
        if (json_is_null(h) && ae[0] == k + 1 && T(x, k)->type == T_NUM) {
            json_decref(h);
            h = json_string(strpbrk(T(x, k)->text, ".eE") ? "FLOAT" : "INTEGER");
        } else if (json_is_null(h) && ae[0] == k + 1 && T(x, k)->type == T_STR) {
            json_decref(h);
            h = json_string("STRING");
        } else if (json_is_null(h) && arg_column_type(x, as[0], ae[0])) {
            json_decref(h);
            h = json_string(arg_column_type(x, as[0], ae[0]));
        }
        if (json_is_string(h)) {
            field = json_pack("{s:O}", "type", h);
            json_decref(h);
        } else if (json_is_object(h) && json_object_get(h, "type")) {
            field = h;
        } else {
            json_decref(h);
            unsupported(x, "TO_JSON_STRING of a value whose type the emulator cannot tell (CAST it)");
            return;
        }
        mb_buf_puts(b, "bq_to_json(");
        xrange(x, as[0], ae[0], 0);
    }
    char *ft = json_dumps(field, JSON_COMPACT);
    mb_buf_puts(b, ", ");
    put_string(b, ft ? ft : "{}");
    mb_buf_puts(b, ")");
    free(ft);
    json_decref(field);
}

/* PERCENTILE_CONT / PERCENTILE_DISC (x, p [IGNORE NULLS]) OVER ([PARTITION BY
 * ...]) and APPROX_QUANTILES(x, n [IGNORE NULLS]); NULLs are ignored, as by
 * default. Returns the index after the call (its OVER clause follows). */
/* Writes fn(arg 0, .., arg nargs-1[, extra]) for the argument ranges as/ae. */
static void emit_call(xl *x, const char *fn, const size_t *as, const size_t *ae, size_t nargs,
                      const char *extra)
{
    mb_buf *b = &x->out;
    mb_buf_printf(b, "%s(", fn);
    for (size_t a = 0; a < nargs; a++) {
        if (a) mb_buf_puts(b, ", ");
        xrange(x, as[a], ae[a], 0);
    }
    if (extra) mb_buf_printf(b, ", %s", extra);
    mb_buf_puts(b, ")");
}

static size_t quantile(xl *x, const struct fn *f, size_t open, size_t close, const size_t *as, size_t *ae,
                       size_t n)
{
    if (n != 2) {
        fail(x, MB_EINVAL, "No matching signature for %s function %s", f->extra ? "analytic" : "aggregate",
             f->bq);
        return close + 1;
    }
    if (ae[1] >= as[1] + 3 && is_kw(x, ae[1] - 1, "NULLS") &&
        (is_kw(x, ae[1] - 2, "IGNORE") || is_kw(x, ae[1] - 2, "RESPECT"))) {
        if (is_kw(x, ae[1] - 2, "RESPECT")) {
            unsupported(x, "RESPECT NULLS in a quantile function");
            return close + 1;
        }
        ae[1] -= 2;
    }
    if (f->extra) { /* PERCENTILE_*: an analytic function over whole partitions */
        size_t over = close + 1;
        if (!is_kw(x, over, "OVER") || !is_op(x, over + 1, "(")) {
            fail(x, MB_EINVAL, "Analytic function %s cannot be called without an OVER clause", f->bq);
            return close + 1;
        }
        size_t oc = match_paren(x, over + 1);
        for (size_t k = over + 2; k < oc; k++)
            if (is_kw(x, k, "ORDER") || is_kw(x, k, "ROWS") || is_kw(x, k, "RANGE")) {
                fail(x, MB_EINVAL, "Window ORDER BY or framing is not allowed for analytic function %s", f->bq);
                return close + 1;
            }
        emit_call(x, f->sq, as, ae, 2, f->extra);
        return close + 1;
    }
    if (is_kw(x, close + 1, "OVER")) {
        unsupported(x, "APPROX_QUANTILES as a window function");
        return close + 1;
    }
    x->uses_arrays = 1;
    emit_call(x, f->sq, as, ae, 2, NULL);
    return close + 1;
}

/* Translates the function call at i (name) .. close; returns the index after. */
static size_t function(xl *x, size_t i)
{
    const char *name = T(x, i)->text;
    const struct fn *f = fn_of(name);
    size_t open = i + 1, close = match_paren(x, open);
    if (!f) {
        if (is_kw(x, i, "SAFE") ) unsupported(x, "the SAFE. function prefix");
        else fail(x, MB_EINVAL, "Function not found: %s", name);
        return close + 1;
    }
    size_t as[64], ae[64];
    size_t n = args_of(x, open, close, as, ae, 64);
    put_sep(x);
    mb_buf *b = &x->out;
    if (f->kind == F_ARRAY_AGG) return array_agg(x, open, close, 0);
    if (f->kind == F_PASS && !strcmp(f->sq, "group_concat")) /* STRING_AGG ... ORDER BY / LIMIT */
        for (size_t k = open + 1; k < close; k++)
            if ((is_kw(x, k, "ORDER") && is_kw(x, k + 1, "BY")) || is_kw(x, k, "LIMIT"))
                return array_agg(x, open, close, 1);
    if (f->kind == F_QUANT) return quantile(x, f, open, close, as, ae, n);
    /* aggregate modifiers SQLite 3.40 lacks */
    for (size_t k = open + 1; k < close; k++) {
        if (is_kw(x, k, "LIMIT") && f->kind == F_PASS) {
            unsupported(x, "LIMIT inside an aggregate");
            return close + 1;
        }
        if (is_kw(x, k, "IGNORE") || is_kw(x, k, "RESPECT")) {
            unsupported(x, "IGNORE/RESPECT NULLS");
            return close + 1;
        }
    }
    switch (f->kind) {
    case F_ARRAY_AGG: /* above */
    case F_QUANT: break;
    case F_PASS:
    case F_NOW:
        if (f->hint && !strcmp(f->hint, "ARRAY<STRING>")) x->uses_arrays = 1;
        mb_buf_printf(b, "%s(", f->sq);
        xrange(x, open + 1, close, 0);
        mb_buf_puts(b, ")");
        break;
    case F_LOG:
        if (n == 2) {
            mb_buf_puts(b, "log(");
            xrange(x, as[1], ae[1], 0);
            mb_buf_puts(b, ", ");
            xrange(x, as[0], ae[0], 0);
            mb_buf_puts(b, ")");
        } else {
            mb_buf_puts(b, "ln(");
            xrange(x, open + 1, close, 0);
            mb_buf_puts(b, ")");
        }
        break;
    case F_PART:
    case F_TRUNC:
        mb_buf_printf(b, "%s(", f->sq);
        for (size_t a = 0; a < n; a++) {
            if (a) mb_buf_puts(b, ", ");
            if (a == n - 1 && a > 0 && ae[a] == as[a] + 1 && T(x, as[a])->type == T_IDENT &&
                is_date_part(T(x, as[a])->text)) {
                char *up = mb_strdup(T(x, as[a])->text);
                for (char *c = up; *c; c++) *c = (char)toupper((unsigned char)*c);
                put_string(b, up);
                free(up);
            } else if (is_kw(x, as[a], "INTERVAL")) {
                size_t last = ae[a] - 1;
                if (last <= as[a] + 1 || T(x, last)->type != T_IDENT || !is_date_part(T(x, last)->text)) {
                    fail(x, MB_EINVAL, "Syntax error: INTERVAL needs an expression and a date part");
                    return close + 1;
                }
                xrange(x, as[a] + 1, last, 0);
                mb_buf_puts(b, ", ");
                char *up = mb_strdup(T(x, last)->text);
                for (char *c = up; *c; c++) *c = (char)toupper((unsigned char)*c);
                put_string(b, up);
                free(up);
            } else if (ae[a] > as[a] + 1 && T(x, as[a])->type == T_IDENT &&
                       is_date_part(T(x, as[a])->text) && is_op(x, as[a] + 1, "(")) {
                unsupported(x, "WEEK(<WEEKDAY>) date parts");
                return close + 1;
            } else {
                xrange(x, as[a], ae[a], 0);
            }
        }
        if (f->kind == F_TRUNC) mb_buf_printf(b, ", %s", f->extra);
        mb_buf_puts(b, ")");
        break;
    case F_EXTRACT: {
        size_t k = open + 1;
        if (T(x, k)->type != T_IDENT || !is_date_part(T(x, k)->text) || !is_kw(x, k + 1, "FROM")) {
            fail(x, MB_EINVAL, "Syntax error: EXTRACT expects a date part and FROM");
            return close + 1;
        }
        char *up = mb_strdup(T(x, k)->text);
        for (char *c = up; *c; c++) *c = (char)toupper((unsigned char)*c);
        mb_buf_puts(b, "bq_extract(");
        put_string(b, up);
        free(up);
        mb_buf_puts(b, ", ");
        size_t end = close;
        for (size_t q = k + 2; q < close; q++)
            if (is_kw(x, q, "AT")) {
                unsupported(x, "EXTRACT ... AT TIME ZONE");
                return close + 1;
            }
        xrange(x, k + 2, end, 0);
        mb_buf_puts(b, ")");
        break;
    }
    case F_CAST: {
        size_t asp = 0;
        int depth = 0;
        for (size_t k = open + 1; k < close; k++) {
            if (is_op(x, k, "(")) depth++;
            if (is_op(x, k, ")")) depth--;
            if (!depth && is_kw(x, k, "AS")) asp = k;
        }
        if (!asp) {
            fail(x, MB_EINVAL, "Syntax error: Expected keyword AS in %s", f->bq);
            return close + 1;
        }
        const char *ty = cast_type(x, asp + 1, close);
        if (!ty) return close + 1;
        mb_buf_puts(b, "bq_cast(");
        xrange(x, open + 1, asp, 0);
        mb_buf_printf(b, ", '%s', %s)", ty, f->extra);
        break;
    }
    case F_FMT:
    case F_PARSE:
        if (n < 2 || n > 3) {
            fail(x, MB_EINVAL, "No matching signature for function %s", f->bq);
            return close + 1;
        }
        if (n == 3) {
            /* a time zone: only UTC */
            if (!(T(x, as[2])->type == T_STR && ae[2] == as[2] + 1 &&
                  (!strcasecmp(T(x, as[2])->text, "UTC") || !strcmp(T(x, as[2])->text, "Etc/UTC")))) {
                unsupported(x, "time zones other than UTC");
                return close + 1;
            }
        }
        if (f->kind == F_PARSE) { /* PARSE_*(STRING, STRING): a column of another type is refused */
            const char *ty = arg_column_type(x, as[1], ae[1]);
            if (ty && strcmp(ty, "STRING")) {
                fail(x, MB_EINVAL,
                     "No matching signature for function %s for argument types: STRING, %s. "
                     "Supported signature: %s(STRING, STRING)",
                     f->bq, sql_type_name(ty), f->bq);
                return close + 1;
            }
        }
        emit_call(x, f->sq, as, ae, 2, f->extra);
        break;
    case F_PREFIX:
        mb_buf_printf(b, "%s(%s", f->sq, f->extra);
        if (n) mb_buf_puts(b, ", ");
        xrange(x, open + 1, close, 0);
        mb_buf_puts(b, ")");
        break;
    case F_COUNTD:
        if (n != 1) {
            fail(x, MB_EINVAL, "No matching signature for aggregate function %s", f->bq);
            return close + 1;
        }
        mb_buf_puts(b, "count(DISTINCT ");
        xrange(x, as[0], ae[0], 0);
        mb_buf_puts(b, ")");
        break;
    case F_GDA:
        if (n < 2 || n > 3 || (n == 3 && !is_kw(x, as[2], "INTERVAL"))) {
            fail(x, MB_EINVAL, "No matching signature for function GENERATE_DATE_ARRAY");
            return close + 1;
        }
        x->uses_arrays = 1;
        mb_buf_puts(b, "bq_generate_date_array(");
        xrange(x, as[0], ae[0], 0);
        mb_buf_puts(b, ", ");
        xrange(x, as[1], ae[1], 0);
        if (n == 2) {
            mb_buf_puts(b, ", 1, 'DAY')");
            break;
        }
        if (ae[2] <= as[2] + 2 || T(x, ae[2] - 1)->type != T_IDENT || !is_date_part(T(x, ae[2] - 1)->text)) {
            fail(x, MB_EINVAL, "Syntax error: INTERVAL needs an expression and a date part");
            return close + 1;
        }
        mb_buf_puts(b, ", ");
        xrange(x, as[2] + 1, ae[2] - 1, 0);
        mb_buf_puts(b, ", ");
        {
            char *up = mb_strdup(T(x, ae[2] - 1)->text);
            for (char *c = up; *c; c++) *c = (char)toupper((unsigned char)*c);
            put_string(b, up);
            free(up);
        }
        mb_buf_puts(b, ")");
        break;
    case F_TOJSON:
        if (n < 1 || n > 2) {
            fail(x, MB_EINVAL, "No matching signature for function TO_JSON_STRING");
            return close + 1;
        }
        to_json(x, as, ae, n);
        break;
    case F_JSON:
        if (n < 1 || n > 2 || (n == 1 && (!strcmp(f->bq, "JSON_EXTRACT") || !strcmp(f->bq, "JSON_QUERY")))) {
            fail(x, MB_EINVAL, "No matching signature for function %s", f->bq);
            return close + 1;
        }
        x->uses_arrays |= f->extra[0] >= '2';
        mb_buf_printf(b, "%s(%s, ", f->sq, f->extra);
        xrange(x, as[0], ae[0], 0);
        if (n == 2) {
            mb_buf_puts(b, ", ");
            xrange(x, as[1], ae[1], 0);
        }
        mb_buf_puts(b, ")");
        break;
    case F_UNIX:
        if (n != 1) {
            fail(x, MB_EINVAL, "No matching signature for function %s", f->bq);
            return close + 1;
        }
        emit_call(x, f->sq, as, ae, 1, f->extra);
        break;
    case F_REGEXP:
        if (n < 2 || n > 3 || (n == 3) != !strcmp(f->extra, "2")) {
            fail(x, MB_EINVAL, "No matching signature for function %s", f->bq);
            return close + 1;
        }
        mb_buf_printf(b, "%s(", f->sq);
        xrange(x, as[0], ae[0], 0);
        mb_buf_puts(b, ", ");
        xrange(x, as[1], ae[1], 0);
        mb_buf_printf(b, ", %s", f->extra);
        if (n == 3) {
            mb_buf_puts(b, ", ");
            xrange(x, as[2], ae[2], 0);
        }
        mb_buf_puts(b, ")");
        break;
    }
    return close + 1;
}

/* ------------------------------------------------------ column paths */

static int is_record(xl *x, const char *name)
{
    char *low = mb_strdup(name);
    for (char *c = low; *c; c++) *c = (char)tolower((unsigned char)*c);
    int r = json_object_get(x->records, low) != NULL;
    free(low);
    return r;
}

static void column_path(xl *x, json_t *parts)
{
    size_t n = json_array_size(parts);
    char *low0 = lower(part(parts, 0));
    json_t *un = json_object_get(x->unnest, low0);
    free(low0);
    if (un) { /* an UNNEST's element (or offset) and fields of it */
        const char *field = json_string_value(json_object_get(un, "field")); /* a STRUCT element's field */
        put_sep(x);
        if (n > 1 || field) mb_buf_puts(&x->out, "json_extract(");
        put_quoted_id(&x->out, json_string_value(json_object_get(un, "t")));
        mb_buf_putc(&x->out, '.');
        put_quoted_id(&x->out, json_string_value(json_object_get(un, "c")));
        if (n > 1 || field) {
            mb_buf_puts(&x->out, ", '$");
            if (field) {
                mb_buf_putc(&x->out, '.');
                for (const char *c = field; *c; c++) {
                    if (*c == '\'') mb_buf_putc(&x->out, '\'');
                    mb_buf_putc(&x->out, *c);
                }
            }
            for (size_t k = 1; k < n; k++) {
                mb_buf_putc(&x->out, '.');
                for (const char *c = part(parts, k); *c; c++) {
                    if (*c == '\'') mb_buf_putc(&x->out, '\'');
                    mb_buf_putc(&x->out, *c);
                }
            }
            mb_buf_puts(&x->out, "')");
        }
        return;
    }
    size_t base = 0; /* parts [0..base] name the column */
    if (n >= 2 && is_record(x, part(parts, 0))) base = 0;
    else if (n >= 3 && is_record(x, part(parts, 1))) base = 1;
    else base = n - 1;
    put_sep(x);
    if (base < n - 1) mb_buf_puts(&x->out, "json_extract(");
    for (size_t k = 0; k <= base; k++) {
        if (k) mb_buf_putc(&x->out, '.');
        put_quoted_id(&x->out, part(parts, k));
    }
    if (base < n - 1) {
        mb_buf_puts(&x->out, ", '$");
        for (size_t k = base + 1; k < n; k++) {
            mb_buf_putc(&x->out, '.');
            for (const char *c = part(parts, k); *c; c++) {
                if (*c == '\'') mb_buf_putc(&x->out, '\'');
                mb_buf_putc(&x->out, *c);
            }
        }
        mb_buf_puts(&x->out, "')");
    }
}

/* ------------------------------------------------ * EXCEPT / * REPLACE */

static json_t *item_hint(xl *x, size_t a, size_t b);

/* SELECT * EXCEPT (a, b) REPLACE (expr AS c) FROM one table: the table's
 * columns from the catalog, less the dropped ones, the replaced ones
 * computed. Over a join, a subquery or a CTE it is refused by name. */
static size_t star_mods(xl *x, size_t i)
{
    size_t k = i + 1;
    json_t *drop = json_array(), *repl = json_object();
    if (is_kw(x, k, "EXCEPT") && is_op(x, k + 1, "(")) {
        size_t close = match_paren(x, k + 1);
        for (size_t m = k + 2; m < close && !x->failed; m++) {
            if (T(x, m)->type == T_IDENT || T(x, m)->type == T_QIDENT) json_array_append_new(drop, json_string(T(x, m)->text));
            else if (!is_op(x, m, ","))
                fail(x, MB_EINVAL, "Syntax error: SELECT * EXCEPT expects a list of column names");
        }
        k = close + 1;
    }
    if (is_kw(x, k, "REPLACE") && is_op(x, k + 1, "(")) {
        size_t close = match_paren(x, k + 1), as[64], ae[64];
        size_t n = args_of(x, k + 1, close, as, ae, 64);
        if (n == 64) unsupported(x, "SELECT * REPLACE of 64 or more columns");
        for (size_t a = 0; a < n && !x->failed; a++) {
            if (ae[a] < as[a] + 3 || !is_kw(x, ae[a] - 2, "AS") ||
                (T(x, ae[a] - 1)->type != T_IDENT && T(x, ae[a] - 1)->type != T_QIDENT)) {
                fail(x, MB_EINVAL, "Syntax error: SELECT * REPLACE expects expression AS column_name");
                break;
            }
            char *low = lower(T(x, ae[a] - 1)->text);
            json_object_set_new(repl, low, json_pack("[I,I]", (json_int_t)as[a], (json_int_t)(ae[a] - 2)));
            free(low);
        }
        k = close + 1;
    }
    /* the FROM of this SELECT, at this depth */
    int depth = 0;
    size_t from = 0;
    for (size_t m = k; m < x->l.n && T(x, m)->type != T_EOF; m++) {
        if (is_op(x, m, "(")) depth++;
        else if (is_op(x, m, ")")) {
            if (--depth < 0) break;
        } else if (!depth && is_kw(x, m, "FROM")) {
            from = m;
            break;
        }
    }
    json_t *fields = NULL;
    if (from && (T(x, from + 1)->type == T_IDENT || T(x, from + 1)->type == T_QIDENT)) {
        size_t m = from + 1;
        json_t *parts = take_path(x, &m, 1);
        if (is_kw(x, m, "AS")) m++;
        if ((T(x, m)->type == T_IDENT || T(x, m)->type == T_QIDENT) && !is_keyword(T(x, m)->text)) m++;
        int single = !(is_op(x, m, ",") || is_kw(x, m, "JOIN") || is_kw(x, m, "LEFT") || is_kw(x, m, "RIGHT") ||
                       is_kw(x, m, "INNER") || is_kw(x, m, "CROSS") || is_kw(x, m, "FULL"));
        const char *ds, *tb;
        size_t n = json_array_size(parts);
        if (single && (n == 2 || n == 3) && !strchr(part(parts, n - 1), '*')) {
            if (resolve(x, parts, &ds, &tb) == MB_OK) fields = mb_gc__table_fields(x->gc, ds, tb);
        }
        json_decref(parts);
    }
    const char *what = json_object_size(repl) ? "SELECT * REPLACE" : "SELECT * EXCEPT";
    if (!fields && !x->failed) {
        char *w = mb_asprintf("%s over a join, a subquery, a CTE or a wildcard table", what);
        unsupported(x, w);
        free(w);
    }
    size_t m;
    json_t *d;
    json_array_foreach(x->failed ? NULL : drop, m, d) {
        int found = 0;
        size_t q;
        json_t *f;
        json_array_foreach(fields, q, f) found |= !strcasecmp(json_string_value(json_object_get(f, "name")), json_string_value(d));
        if (!found) {
            fail(x, MB_EINVAL, "Column %s in SELECT * EXCEPT list does not exist", json_string_value(d));
            break;
        }
    }
    const char *rk;
    json_t *rv;
    json_object_foreach(x->failed ? NULL : repl, rk, rv) {
        int found = 0;
        size_t q;
        json_t *f;
        json_array_foreach(fields, q, f) found |= !strcasecmp(json_string_value(json_object_get(f, "name")), rk);
        if (!found) {
            fail(x, MB_EINVAL, "Column %s in SELECT * REPLACE list does not exist", rk);
            break;
        }
    }
    int n = 0;
    json_t *f;
    json_array_foreach(x->failed ? NULL : fields, m, f) {
        const char *name = json_string_value(json_object_get(f, "name"));
        int dropped = 0;
        size_t q;
        json_array_foreach(drop, q, d) dropped |= !strcasecmp(name, json_string_value(d));
        if (dropped) continue;
        mb_buf_puts(&x->out, n++ ? ", " : " ");
        char *low = lower(name);
        json_t *r = json_object_get(repl, low);
        free(low);
        if (r) {
            size_t ra = (size_t)json_integer_value(json_array_get(r, 0)), rb = (size_t)json_integer_value(json_array_get(r, 1));
            json_t *h = item_hint(x, ra, rb);
            if (!json_is_null(h)) json_object_set(x->star_hints, name, h);
            json_decref(h);
            mb_buf_putc(&x->out, '(');
            xrange(x, (size_t)json_integer_value(json_array_get(r, 0)), (size_t)json_integer_value(json_array_get(r, 1)), 0);
            mb_buf_puts(&x->out, ") AS ");
        }
        put_quoted_id(&x->out, name);
    }
    if (!x->failed && !n) fail(x, MB_EINVAL, "SELECT * EXCEPT must not exclude every column");
    json_decref(fields);
    json_decref(drop);
    json_decref(repl);
    return k;
}

/* ------------------------------------------------- ARRAY and STRUCT */

static json_t *select_hints(xl *x, size_t a, size_t b);
static int parse_struct_fields(xl *x, size_t *i, json_t *fields, const char *close);
static void struct_items(xl *x, const size_t *as, const size_t *ae, size_t n, json_t *typed);

/* Cuts the output from `from` on, returning it. */
static char *cut(xl *x, size_t from)
{
    if (!x->out.data) return mb_strdup("");
    char *s = mb_strndup(x->out.data + from, x->out.len - from);
    x->out.len = from;
    x->out.data[from] = '\0';
    return s;
}

/* The index after the operand of a binary operator starting at k: a unary
 * expression (a literal, a path, a call with its OVER clause, a
 * parenthesised expression, a CASE ... END), with its subscripts and field
 * accesses. */
static size_t operand_end(xl *x, size_t k, size_t b)
{
    while (k < b && (is_op(x, k, "-") || is_op(x, k, "+") || is_op(x, k, "~"))) k++;
    if (k >= b) return b;
    size_t e = k + 1;
    if (is_op(x, k, "(") || is_op(x, k, "[")) {
        e = match_paren(x, k) + 1;
    } else if (is_kw(x, k, "CASE")) {
        int depth = 0;
        for (e = k; e < b; e++) {
            if (is_kw(x, e, "CASE")) depth++;
            else if (is_kw(x, e, "END") && --depth == 0) break;
        }
        e++;
    } else if (T(x, k)->type == T_IDENT && T(x, k + 1)->type == T_STR) {
        e = k + 2;
    } else if (T(x, k)->type == T_IDENT || T(x, k)->type == T_QIDENT) {
        while (is_op(x, e, ".") && (T(x, e + 1)->type == T_IDENT || T(x, e + 1)->type == T_QIDENT)) e += 2;
        if (is_op(x, e, "(")) {
            e = match_paren(x, e) + 1;
            if (is_kw(x, e, "OVER")) e = is_op(x, e + 1, "(") ? match_paren(x, e + 1) + 1 : e + 2;
        }
    }
    for (;;) {
        if (is_op(x, e, "[")) e = match_paren(x, e) + 1;
        else if (is_op(x, e, ".") && (T(x, e + 1)->type == T_IDENT || T(x, e + 1)->type == T_QIDENT)) e += 2;
        else break;
    }
    return e < b ? e : b;
}

/* The index of the '>' closing the '<' at k (ARRAY<...>, STRUCT<...>). */
static size_t match_angle(xl *x, size_t k)
{
    int depth = 0;
    for (size_t m = k; m < x->l.n; m++) {
        if (is_op(x, m, "<")) depth++;
        else if (is_op(x, m, ">") && --depth == 0) return m;
        else if (is_op(x, m, ">>")) {
            unsupported(x, "nested ARRAY<STRUCT<...>> types written with '>>'");
            return x->l.n - 1;
        }
    }
    return x->l.n - 1;
}

/* The fields of a STRUCT<...>(...) constructor at k (a new array), or NULL. */
static json_t *typed_struct_at(xl *x, size_t k)
{
    if (!is_kw(x, k, "STRUCT") || !is_op(x, k + 1, "<")) return NULL;
    size_t m = k + 2;
    json_t *typed = json_array();
    if (parse_struct_fields(x, &m, typed, ">") || !is_op(x, m, "(")) {
        json_decref(typed);
        return NULL;
    }
    return typed;
}

/* [a, b, c] at open: json_array(a, b, c). Elements that are tuples (x, y)
 * are STRUCTs whose fields are named by the array's STRUCT element type
 * (typed, from ARRAY<STRUCT<...>>) or by a first STRUCT<...>(...) element. */
static size_t array_literal_typed(xl *x, size_t open, json_t *typed)
{
    size_t close = closing(x, open);
    if (x->failed) return close + 1;
    x->uses_arrays = 1;
    put_sep(x);
    mb_buf_puts(&x->out, "json_array(");
    /* on the heap: array literals nest, and the facade's threads have small stacks */
    size_t *as = NULL, *ae = NULL, n = 0;
    json_t *own = NULL;
    if (!typed && is_kw(x, open + 1, "STRUCT")) typed = own = typed_struct_at(x, open + 1);
    if (typed) {
        as = mb_malloc(2048 * sizeof *as);
        ae = as + 1024;
        n = args_of(x, open, close, as, ae, 1024);
    }
    if (n == 1024 || !typed) {
        xrange(x, open + 1, close, 0);
    } else {
        size_t *ts = mb_malloc(512 * sizeof *ts), *te = ts + 256;
        for (size_t e = 0; e < n && !x->failed; e++) {
            if (e) mb_buf_puts(&x->out, ", ");
            size_t c = is_op(x, as[e], "(") ? match_paren(x, as[e]) : 0;
            size_t tn = c + 1 == ae[e] ? args_of(x, as[e], c, ts, te, 256) : 0;
            if (tn >= 2) {
                if (tn != json_array_size(typed)) {
                    fail(x, MB_EINVAL, "Array element type STRUCT has %zu fields but the element has %zu",
                         json_array_size(typed), tn);
                    break;
                }
                struct_items(x, ts, te, tn, typed);
            } else {
                xrange(x, as[e], ae[e], 0);
            }
        }
        free(ts);
    }
    free(as);
    json_decref(own);
    mb_buf_puts(&x->out, ")");
    return close + 1;
}

static size_t array_literal(xl *x, size_t open)
{
    return array_literal_typed(x, open, NULL);
}

static json_t *item_hint(xl *x, size_t a, size_t b);

/* ARRAY(subquery) at i: the subquery's one column aggregated in its order. */
static size_t array_subquery(xl *x, size_t i)
{
    size_t close = closing(x, i + 1);
    if (x->failed) return close + 1;
    if (!is_kw(x, i + 2, "SELECT") && !is_kw(x, i + 2, "WITH")) {
        unsupported(x, "ARRAY(...) of anything but a subquery");
        return close + 1;
    }
    x->uses_arrays = 1;
    if (is_kw(x, i + 2, "SELECT") && is_kw(x, i + 3, "AS") && is_kw(x, i + 4, "STRUCT")) {
        /* ARRAY(SELECT AS STRUCT a, b FROM ...): an array of json_object rows */
        size_t from = close;
        int depth = 0;
        for (size_t k = i + 5; k < close; k++) {
            if (is_op(x, k, "(") || is_op(x, k, "[") || is_kw(x, k, "CASE")) depth++;
            else if (is_op(x, k, ")") || is_op(x, k, "]") || is_kw(x, k, "END")) depth--;
            else if (!depth && is_kw(x, k, "FROM")) {
                from = k;
                break;
            }
        }
        size_t as[256], ae[256];
        size_t n = args_of(x, i + 4, from, as, ae, 256);
        if (!n || n == 256) {
            fail(x, MB_EINVAL, "Syntax error: SELECT AS STRUCT needs 1 to 255 columns");
            return close + 1;
        }
        put_sep(x);
        mb_buf_puts(&x->out, "(WITH \"__mb_a\"(\"v\") AS (SELECT ");
        struct_items(x, as, ae, n, NULL);
        mb_buf_putc(&x->out, ' ');
        xrange(x, from, close, 0);
        mb_buf_puts(&x->out, ") SELECT json_group_array(json(\"v\")) FROM \"__mb_a\")");
        return close + 1;
    }
    /* STRUCT / ARRAY elements come back from the CTE as JSON text: json() */
    size_t k = i + 3;
    if (is_kw(x, k, "DISTINCT") || is_kw(x, k, "ALL")) k++;
    int nested = is_kw(x, i + 2, "SELECT") && (is_kw(x, k, "STRUCT") || is_kw(x, k, "ARRAY") || is_op(x, k, "[") ||
                                               is_kw(x, k, "ARRAY_AGG"));
    put_sep(x);
    mb_buf_puts(&x->out, "(WITH \"__mb_a\"(\"v\") AS (");
    xrange(x, i + 2, close, 0);
    mb_buf_puts(&x->out, nested ? ") SELECT json_group_array(json(\"v\")) FROM \"__mb_a\")"
                                : ") SELECT json_group_array(\"v\") FROM \"__mb_a\")");
    return close + 1;
}

/* STRUCT(a AS x, b) / STRUCT<x INT64, y STRING>(1, 'a') at i: json_object. */
static size_t struct_value(xl *x, size_t i)
{
    json_t *typed = NULL;
    size_t open = i + 1;
    if (is_op(x, open, "<")) {
        size_t k = i + 2;
        typed = json_array();
        if (parse_struct_fields(x, &k, typed, ">")) {
            json_decref(typed);
            return k;
        }
        open = k;
    }
    if (!is_op(x, open, "(")) {
        json_decref(typed);
        fail(x, MB_EINVAL, "Syntax error: Expected \"(\" after STRUCT");
        return open + 1;
    }
    size_t close = closing(x, open), as[256], ae[256];
    if (x->failed) {
        json_decref(typed);
        return close + 1;
    }
    size_t n = args_of(x, open, close, as, ae, 256);
    if (n == 256) {
        json_decref(typed);
        unsupported(x, "STRUCT values of 256 or more fields");
        return close + 1;
    }
    if (typed && n != json_array_size(typed)) {
        json_decref(typed);
        fail(x, MB_EINVAL, "STRUCT type has %zu fields but constructor call has %zu fields",
             json_array_size(typed), n);
        return close + 1;
    }
    x->uses_arrays = 1;
    put_sep(x);
    struct_items(x, as, ae, n, typed);
    json_decref(typed);
    return close + 1;
}

/* json_object('name', value, ...) of the items [as[i], ae[i]) of a STRUCT
 * (or of SELECT AS STRUCT), named by typed, by AS, or by their path. */
static void struct_items(xl *x, const size_t *as, const size_t *ae, size_t n, json_t *typed)
{
    mb_buf_puts(&x->out, "json_object(");
    for (size_t a = 0; a < n && !x->failed; a++) {
        size_t e = ae[a];
        const char *name = NULL;
        if (typed) name = json_string_value(json_object_get(json_array_get(typed, a), "name"));
        else if (e >= as[a] + 3 && is_kw(x, e - 2, "AS") &&
                 (T(x, e - 1)->type == T_IDENT || T(x, e - 1)->type == T_QIDENT)) {
            name = T(x, e - 1)->text;
            e -= 2;
        } else {
            size_t k = as[a];
            if (T(x, k)->type == T_IDENT || T(x, k)->type == T_QIDENT) {
                json_t *parts = take_path(x, &k, 0);
                if (k == e) name = part(parts, json_array_size(parts) - 1);
                if (name) name = T(x, e - 1)->text;
                json_decref(parts);
            }
        }
        if (!name) {
            unsupported(x, "STRUCT fields without a name (name them with AS)");
            break;
        }
        if (a) mb_buf_puts(&x->out, ", ");
        put_string(&x->out, name);
        mb_buf_puts(&x->out, ", ");
        xrange(x, as[a], e, 0);
    }
    mb_buf_puts(&x->out, ")");
}

/* UNNEST(expr) [AS] alias [WITH OFFSET [AS] name] at i in a FROM: the
 * bq_unnest table named as the prescan named it; returns the index after. */
/* UNNEST of a literal that is not an array: BigQuery's type error. */
static int unnest_arg_ok(xl *x, size_t a, size_t b)
{
    tk t = T(x, a)->type;
    if (b == a + 1 && (t == T_STR || t == T_NUM || t == T_BYTES))
        return !fail(x, MB_EINVAL, "Values referenced in UNNEST must be arrays. UNNEST contains expression of type %s",
                     t == T_STR ? "STRING" : t == T_BYTES ? "BYTES" : "INT64");
    return 1;
}

static size_t unnest_from(xl *x, size_t i)
{
    size_t close = closing(x, i + 1);
    if (x->failed || !unnest_arg_ok(x, i + 2, close)) return close + 1;
    char key[32];
    snprintf(key, sizeof key, "%zu", i);
    const char *alias = json_string_value(json_object_get(x->unnest_at, key));
    x->uses_arrays = 1;
    put_sep(x);
    mb_buf_puts(&x->out, "bq_unnest(");
    xrange(x, i + 2, close, 0);
    mb_buf_puts(&x->out, ") AS ");
    put_quoted_id(&x->out, alias ? alias : "__unnest");
    size_t k = close + 1;
    if (is_kw(x, k, "AS")) k += 2;
    else if (T(x, k)->type == T_QIDENT || (T(x, k)->type == T_IDENT && !is_keyword(T(x, k)->text) && !is_kw(x, k, "WITH")))
        k++;
    if (is_kw(x, k, "WITH") && is_kw(x, k + 1, "OFFSET")) {
        k += 2;
        if (is_kw(x, k, "AS")) k++;
        if (T(x, k)->type == T_QIDENT || (T(x, k)->type == T_IDENT && !is_keyword(T(x, k)->text))) k++;
    }
    return k;
}

/* ------------------------------------------------------------ walker */

typedef struct opener {
    size_t term, prim;
} opener;

static void xrange_in(xl *x, size_t a, size_t b, int table_ctx_start);

static void xrange(xl *x, size_t a, size_t b, int table_ctx_start)
{
    if (++x->nest > XL_MAX_NEST) fail(x, MB_EINVAL, "Resources exceeded: the query nests expressions too deeply");
    else xrange_in(x, a, b, table_ctx_start);
    x->nest--;
}

/* One more re-emission of a left side; fails x past the bound. */
static int wrap_ok(xl *x)
{
    if (++x->wraps <= XL_MAX_WRAPS) return 1;
    fail(x, MB_EINVAL, "Resources exceeded: the query has too many chained operators");
    return 0;
}

static json_t *unnest_hint(xl *x, size_t a, size_t b);

/* Whether the select list's * at k reads a FROM that is only an UNNEST of
 * STRUCTs (whose * BigQuery expands into the fields). */
static int star_over_struct_unnest(xl *x, size_t k)
{
    if (!(is_kw(x, k - 1, "SELECT") || is_kw(x, k - 1, "DISTINCT") || is_op(x, k - 1, ","))) return 0;
    int depth = 0;
    size_t f = k + 1;
    for (; f < x->l.n && T(x, f)->type != T_EOF; f++) {
        if (is_op(x, f, "(")) depth++;
        else if (is_op(x, f, ")")) {
            if (!depth--) return 0;
        } else if (!depth && is_kw(x, f, "FROM")) break;
    }
    if (!is_kw(x, f, "FROM") || !is_kw(x, f + 1, "UNNEST") || !is_op(x, f + 2, "(")) return 0;
    size_t close = match_paren(x, f + 2), m = close + 1;
    if (is_kw(x, m, "AS")) m++;
    if (T(x, m)->type == T_QIDENT || (T(x, m)->type == T_IDENT && !is_keyword(T(x, m)->text))) m++;
    if (is_op(x, m, ",") || is_kw(x, m, "JOIN") || is_kw(x, m, "CROSS") || is_kw(x, m, "LEFT") ||
        is_kw(x, m, "INNER") || is_kw(x, m, "WITH"))
        return 0;
    json_t *h = unnest_hint(x, f + 3, close);
    int rec = json_is_object(h) && json_object_get(h, "fields") != NULL;
    json_decref(h);
    return rec;
}

static void xrange_in(xl *x, size_t a, size_t b, int table_ctx_start)
{
    int expect_table = table_ctx_start;
    int in_from[256] = {0};
    unsigned char in_select[256] = {0}; /* inside a select list at this level */
    opener stack[256];
    int depth = 0;
    size_t i = a;
    /* The output offsets where the current multiplicative term and the last
     * primary expression begin: '/' wraps the term, a subscript or a field
     * access the primary. after_op: the next primary starts a new term. */
    size_t term = x->out.len, prim = x->out.len;
    int after_op = 1;
/* '(' and CASE open a level (the term goes on), ')' and END close it. */
#define OPEN(what)                                                                                 \
    do {                                                                                           \
        if (depth >= 255) {                                                                        \
            fail(x, MB_EINVAL, "Query nests %s too deeply", what);                                 \
            return;                                                                                \
        }                                                                                          \
        if (after_op) term = x->out.len;                                                           \
        stack[depth] = (opener){term, x->out.len};                                                 \
        in_from[++depth] = 0;                                                                      \
        in_select[depth] = 0;                                                                      \
        after_op = 1;                                                                              \
    } while (0)
#define CLOSE()                                                                                    \
    do {                                                                                           \
        if (depth > 0) {                                                                           \
            depth--;                                                                               \
            term = stack[depth].term;                                                              \
            prim = stack[depth].prim;                                                              \
        }                                                                                          \
        after_op = 0;                                                                              \
    } while (0)
#define PRIMARY()                                                                                  \
    do {                                                                                           \
        if (after_op) term = x->out.len;                                                           \
        prim = x->out.len;                                                                         \
        after_op = 0;                                                                              \
    } while (0)
    while (i < b && !x->failed) {
        tok *t = T(x, i);
        if (t->type == T_EOF) break;
        mb_buf *o = &x->out;
        if (t->type == T_OP) {
            const char *s = t->text;
            if (!strcmp(s, "(") && !is_kw(x, i + 1, "SELECT") && !is_kw(x, i + 1, "WITH")) {
                /* a tuple (a, b): SQLite orders row values, BigQuery refuses to order STRUCTs */
                size_t c = match_paren(x, i);
                static const char *const ORD[] = {"<", ">", "<=", ">=", NULL};
                int tuple = 0, ordered = 0, d = 0;
                for (size_t k = i + 1; k < c && !tuple; k++) {
                    if (is_op(x, k, "(") || is_op(x, k, "[")) d++;
                    else if (is_op(x, k, ")") || is_op(x, k, "]")) d--;
                    else if (!d && is_op(x, k, ",")) tuple = 1;
                }
                for (const char *const *op = ORD; *op && tuple; op++)
                    ordered |= is_op(x, c + 1, *op) || is_op(x, i - 1, *op);
                if (ordered) {
                    unsupported(x, "ordering comparisons (<, >) of STRUCTs");
                    return;
                }
            }
            if (!strcmp(s, "(")) {
                OPEN("parentheses");
                expect_table = 0;
                put_sep(x);
                mb_buf_putc(o, '(');
                i++;
                continue;
            }
            if (!strcmp(s, ")")) {
                CLOSE();
                mb_buf_putc(o, ')');
                i++;
                continue;
            }
            if (!strcmp(s, "[") && after_op) {
                PRIMARY();
                i = array_literal(x, i);
                continue;
            }
            if (!strcmp(s, "[")) { /* a subscript of the last primary */
                size_t close = closing(x, i), ia = i + 1, ib = close;
                if (x->failed) return;
                int mode = 0;
                static const char *const MODES[] = {"OFFSET", "ORDINAL", "SAFE_OFFSET", "SAFE_ORDINAL"};
                for (int m = 0; m < 4; m++)
                    if (is_kw(x, ia, MODES[m]) && is_op(x, ia + 1, "(") && match_paren(x, ia + 1) + 1 == close) {
                        mode = m;
                        ib = close - 1;
                        ia += 2;
                    }
                if (!wrap_ok(x)) return;
                char *base = cut(x, prim);
                put_sep(x);
                mb_buf_printf(o, "bq_subscript(%s, ", base);
                free(base);
                xrange(x, ia, ib, 0);
                mb_buf_printf(o, ", %d)", mode);
                i = close + 1;
                continue;
            }
            if (!strcmp(s, "]") || !strcmp(s, "{") || !strcmp(s, "}")) {
                fail(x, MB_EINVAL, "Syntax error: Unexpected \"%s\"", s);
            } else if (!strcmp(s, ",")) {
                mb_buf_putc(o, ',');
                if (in_from[depth]) expect_table = 1;
            } else if (!strcmp(s, "/")) {
                if (after_op) {
                    fail(x, MB_EINVAL, "Syntax error: Unexpected \"/\"");
                    return;
                }
                if (!wrap_ok(x)) return;
                size_t e = operand_end(x, i + 1, b);
                char *lhs = cut(x, term);
                put_sep(x);
                mb_buf_printf(o, "bq_fdiv(%s, ", lhs);
                free(lhs);
                xrange(x, i + 1, e, 0);
                mb_buf_puts(o, ")");
                prim = term;
                i = e;
                continue;
            } else if (!strcmp(s, ".") && is_op(x, i + 1, "*")) {
                mb_buf_puts(o, ".*");
                i += 2;
                continue;
            } else if (!strcmp(s, ".") && !after_op &&
                       (T(x, i + 1)->type == T_IDENT || T(x, i + 1)->type == T_QIDENT)) {
                /* a field of a STRUCT value: (expr).f, a[OFFSET(0)].f */
                if (!wrap_ok(x)) return;
                char *base = cut(x, prim);
                put_sep(x);
                mb_buf_printf(o, "bq_field(%s, ", base);
                free(base);
                put_string(o, T(x, i + 1)->text);
                mb_buf_puts(o, ")");
                i += 2;
                continue;
            } else if (!strcmp(s, ".")) {
                fail(x, MB_EINVAL, "Syntax error: Unexpected \".\"");
            } else if (!strcmp(s, "*") && in_select[depth] && star_over_struct_unnest(x, i)) {
                unsupported(x, "SELECT * over an UNNEST of STRUCTs (select the fields by name)");
                return;
            } else if (!strcmp(s, "*") && (is_kw(x, i + 1, "EXCEPT") || is_kw(x, i + 1, "REPLACE")) &&
                       is_op(x, i + 2, "(")) {
                i = star_mods(x, i);
                continue;
            } else if (!strcmp(s, ";")) {
                fail(x, MB_EINVAL, "Syntax error: Unexpected \";\"");
            } else if (!strcmp(s, "=>") || !strcmp(s, ":") || !strcmp(s, "~") || !strcmp(s, "^") ||
                       !strcmp(s, "&") || !strcmp(s, "%")) {
                if (!strcmp(s, "%")) unsupported(x, "the % operator (use MOD)");
                else {
                    char w[32];
                    snprintf(w, sizeof w, "the %s operator", s);
                    unsupported(x, w);
                }
            } else {
                put_sep(x);
                mb_buf_puts(o, s);
                /* '*' and '||' continue a term; anything else ends it */
                if (!strcmp(s, "*") || !strcmp(s, "||")) {
                    if (after_op) PRIMARY(); /* SELECT * */
                } else {
                    after_op = 1;
                }
                i++;
                continue;
            }
            after_op = 1;
            i++;
            continue;
        }
        if (t->type == T_STR) {
            PRIMARY();
            put_sep(x);
            put_string(o, t->text);
            i++;
            continue;
        }
        if (t->type == T_BYTES) {
            PRIMARY();
            put_sep(x);
            mb_buf_puts(o, "X'");
            for (const unsigned char *c = (const unsigned char *)t->text; *c; c++)
                mb_buf_printf(o, "%02X", *c);
            mb_buf_puts(o, "'");
            i++;
            continue;
        }
        if (t->type == T_NUM || t->type == T_PARAM) {
            PRIMARY();
            put_sep(x);
            mb_buf_puts(o, t->text);
            i++;
            continue;
        }
        /* identifiers */
        if (t->type == T_IDENT) {
            for (const char *const *u = UNSUPPORTED_KW; *u; u++)
                if (!strcasecmp(t->text, *u)) {
                    unsupported(x, *u);
                    return;
                }
            if (is_kw(x, i, "UNNEST") && is_op(x, i + 1, "(")) {
                if (expect_table) {
                    i = unnest_from(x, i);
                    expect_table = 0;
                } else { /* x IN UNNEST(array) */
                    size_t close = closing(x, i + 1);
                    if (x->failed || !unnest_arg_ok(x, i + 2, close)) return;
                    x->uses_arrays = 1;
                    PRIMARY();
                    put_sep(x);
                    mb_buf_puts(o, "(SELECT \"__v\" FROM bq_unnest(");
                    xrange(x, i + 2, close, 0);
                    mb_buf_puts(o, "))");
                    i = close + 1;
                }
                continue;
            }
            if (is_kw(x, i, "UNNEST")) {
                fail(x, MB_EINVAL, "Syntax error: Expected \"(\" after UNNEST");
                return;
            }
            if (is_kw(x, i, "ARRAY") && !expect_table) {
                PRIMARY();
                if (is_op(x, i + 1, "<")) {
                    size_t gt = match_angle(x, i + 1);
                    if (!x->failed && !is_op(x, gt + 1, "[")) {
                        fail(x, MB_EINVAL, "Syntax error: Expected \"[\" after ARRAY<...>");
                        return;
                    }
                    if (!x->failed) {
                        json_t *typed = NULL; /* ARRAY<STRUCT<...>>: the fields name tuple elements */
                        if (is_kw(x, i + 2, "STRUCT") && is_op(x, i + 3, "<")) {
                            size_t k = i + 4;
                            typed = json_array();
                            if (parse_struct_fields(x, &k, typed, ">") || k != gt) {
                                json_decref(typed);
                                typed = NULL;
                            }
                        }
                        i = array_literal_typed(x, gt + 1, typed);
                        json_decref(typed);
                    }
                } else if (is_op(x, i + 1, "(")) {
                    i = array_subquery(x, i);
                } else if (is_op(x, i + 1, "[")) {
                    i = array_literal(x, i + 1);
                } else {
                    fail(x, MB_EINVAL, "Syntax error: Unexpected keyword ARRAY");
                    return;
                }
                continue;
            }
            if (is_kw(x, i, "STRUCT") && !expect_table) {
                PRIMARY();
                i = struct_value(x, i);
                continue;
            }
            /* typed literals */
            if (T(x, i + 1)->type == T_STR &&
                (is_kw(x, i, "DATE") || is_kw(x, i, "TIMESTAMP") || is_kw(x, i, "DATETIME") ||
                 is_kw(x, i, "NUMERIC") || is_kw(x, i, "BIGNUMERIC") || is_kw(x, i, "JSON") ||
                 is_kw(x, i, "TIME"))) {
                const char *v = T(x, i + 1)->text;
                char buf[40];
                PRIMARY();
                put_sep(x);
                if (is_kw(x, i, "DATE")) {
                    if (mb_gc__date_norm(v, buf) || strlen(v) > 10)
                        fail(x, MB_EINVAL, "Invalid DATE literal: '%s'", v);
                    else put_string(o, buf);
                } else if (is_kw(x, i, "TIMESTAMP") || is_kw(x, i, "DATETIME")) {
                    if (mb_gc__ts_norm(v, buf))
                        fail(x, MB_EINVAL, "Invalid %s literal: '%s'", t->text, v);
                    else put_string(o, buf);
                } else if (is_kw(x, i, "NUMERIC") || is_kw(x, i, "BIGNUMERIC")) {
                    char *end;
                    strtod(v, &end);
                    if (!*v || *end) fail(x, MB_EINVAL, "Invalid NUMERIC literal: '%s'", v);
                    else mb_buf_puts(o, v);
                } else if (is_kw(x, i, "TIME")) {
                    long long us = mb_gc__time_us(v);
                    char tb[24];
                    if (us < 0) fail(x, MB_EINVAL, "Invalid TIME literal: '%s'", v);
                    else {
                        mb_gc__time_text(us, tb);
                        put_string(o, tb);
                    }
                } else {
                    put_string(o, v);
                }
                i += 2;
                continue;
            }
            if (is_kw(x, i, "INTERVAL")) {
                unsupported(x, "INTERVAL outside DATE_ADD/DATE_SUB/TIMESTAMP_ADD/TIMESTAMP_SUB");
                return;
            }
            if ((is_kw(x, i, "CURRENT_DATE") || is_kw(x, i, "CURRENT_TIMESTAMP") ||
                 is_kw(x, i, "CURRENT_DATETIME") || is_kw(x, i, "CURRENT_TIME")) && !is_op(x, i + 1, "(")) {
                PRIMARY();
                put_sep(x);
                mb_buf_printf(o, "%s()", fn_of(t->text)->sq);
                i++;
                continue;
            }
            if (is_kw(x, i, "SAFE") && is_op(x, i + 1, ".")) {
                unsupported(x, "the SAFE. function prefix");
                return;
            }
            if ((is_op(x, i + 1, "(") && !is_keyword(t->text) && !is_kw(x, i, "IN") && !expect_table) ||
                ((is_kw(x, i, "IF") || is_kw(x, i, "REPLACE") || is_kw(x, i, "LEFT") || is_kw(x, i, "RIGHT")) &&
                 is_op(x, i + 1, "("))) {
                PRIMARY();
                i = function(x, i);
                continue;
            }
            if (i > a && is_kw(x, i - 1, "AS") && !is_op(x, i + 1, "(")) { /* an alias */
                put_sep(x);
                put_quoted_id(o, t->text);
                after_op = 1;
                i++;
                continue;
            }
            if (is_kw(x, i, "NULLS") && (is_kw(x, i + 1, "FIRST") || is_kw(x, i + 1, "LAST"))) {
                put_sep(x);
                mb_buf_puts(o, is_kw(x, i + 1, "FIRST") ? "NULLS FIRST" : "NULLS LAST");
                after_op = 1;
                i += 2;
                continue;
            }
            if (is_keyword(t->text) && !expect_table) {
                char *up = mb_strdup(t->text);
                for (char *c = up; *c; c++) *c = (char)toupper((unsigned char)*c);
                static const char *const ENDS_SELECT[] = {"FROM", "WHERE", "GROUP", "HAVING", "ORDER", "LIMIT",
                                                          "QUALIFY", "WINDOW", "UNION", "INTERSECT", "EXCEPT", NULL};
                for (const char *const *e = ENDS_SELECT; *e; e++)
                    if (!strcmp(up, *e)) in_select[depth] = 0;
                if (!strcmp(up, "SELECT")) in_select[depth] = 1;
                if (!strcmp(up, "FROM") || !strcmp(up, "JOIN")) {
                    expect_table = 1;
                    in_from[depth] = 1;
                } else if (!strcmp(up, "WHERE") || !strcmp(up, "GROUP") || !strcmp(up, "HAVING") ||
                           !strcmp(up, "ORDER") || !strcmp(up, "LIMIT") || !strcmp(up, "ON") ||
                           !strcmp(up, "USING") || !strcmp(up, "UNION") || !strcmp(up, "WINDOW") ||
                           !strcmp(up, "INTERSECT") || !strcmp(up, "EXCEPT") || !strcmp(up, "SELECT")) {
                    in_from[depth] = 0;
                }
                /* UNION DISTINCT / EXCEPT DISTINCT / INTERSECT DISTINCT */
                if ((!strcmp(up, "UNION") || !strcmp(up, "EXCEPT") || !strcmp(up, "INTERSECT")) &&
                    is_kw(x, i + 1, "DISTINCT")) {
                    put_sep(x);
                    mb_buf_puts(o, up);
                    free(up);
                    after_op = 1;
                    i += 2;
                    continue;
                }
                if ((!strcmp(up, "EXCEPT") || !strcmp(up, "INTERSECT")) && is_kw(x, i + 1, "ALL")) {
                    free(up);
                    unsupported(x, "EXCEPT ALL / INTERSECT ALL");
                    return;
                }
                if (!strcmp(up, "FOR") && is_kw(x, i + 1, "SYSTEM_TIME")) {
                    free(up);
                    unsupported(x, "FOR SYSTEM_TIME AS OF");
                    return;
                }
                int is_case = !strcmp(up, "CASE");
                if (is_case && depth >= 255) {
                    free(up);
                    up = NULL;
                }
                if (is_case) OPEN("CASE");
                else if (!strcmp(up, "END") && depth > 0) CLOSE();
                else if (!strcmp(up, "TRUE") || !strcmp(up, "FALSE") || !strcmp(up, "NULL")) {
                    PRIMARY();
                } else if (strcmp(up, "OVER")) {
                    after_op = 1;
                }
                put_sep(x);
                mb_buf_puts(o, up);
                free(up);
                i++;
                continue;
            }
        }
        /* a path: a table where one is expected, else a column */
        if (expect_table) {
            table_ref(x, &i);
            expect_table = 0;
            after_op = 1;
            continue;
        }
        PRIMARY();
        size_t p0 = i;
        json_t *parts = take_path(x, &i, 0);
        column_path(x, parts);
        /* a select item that is just t.col or rec.field is named col / field
         * (as BigQuery names it), so ORDER BY col finds it as SQLite would not */
        if (in_select[depth] && json_array_size(parts) >= 2 && p0 > a &&
            (is_op(x, p0 - 1, ",") || is_kw(x, p0 - 1, "SELECT") || is_kw(x, p0 - 1, "DISTINCT")) &&
            (is_op(x, i, ",") || is_kw(x, i, "FROM") || i >= b || T(x, i)->type == T_EOF) && !x->failed) {
            mb_buf_puts(&x->out, " AS ");
            put_quoted_id(&x->out, part(parts, json_array_size(parts) - 1));
        }
        json_decref(parts);
    }
#undef PRIMARY
#undef OPEN
#undef CLOSE
}

/* ------------------------------------------------------- result hints */

static const char *col_type(xl *x, const char *name)
{
    char *low = mb_strdup(name);
    for (char *c = low; *c; c++) *c = (char)tolower((unsigned char)*c);
    const char *t = json_string_value(json_object_get(x->coltypes, low));
    free(low);
    return t;
}

/* The type an item [a, b) of the outer select list has, when it is a call
 * whose result type is known, a comparison, or a typed literal. */
/* {type, mode: REPEATED, fields} of an array whose elements are `elem`. */
static json_t *repeated(json_t *elem)
{
    json_t *f = json_is_object(elem) ? json_deep_copy(elem) : json_object();
    if (json_is_string(elem)) json_object_set(f, "type", elem);
    json_object_set_new(f, "mode", json_string("REPEATED"));
    json_decref(elem);
    return f;
}

/* The element of an array hint (a type name or a RECORD field), or null. */
static json_t *element(json_t *arr)
{
    json_t *m = json_object_get(arr, "mode");
    if (!json_is_object(arr) || !json_is_string(m) || strcmp(json_string_value(m), "REPEATED")) {
        json_decref(arr);
        return json_null();
    }
    json_t *e;
    if (json_object_get(arr, "fields")) {
        e = json_deep_copy(arr);
        json_object_del(e, "mode");
        json_object_del(e, "name");
    } else {
        e = json_incref(json_object_get(arr, "type"));
        if (!e) e = json_null();
    }
    json_decref(arr);
    return e;
}

/* A field of a RECORD hint by name (a type name or a field), or null. */
static json_t *subfield(json_t *rec, const char *name)
{
    size_t i;
    json_t *f;
    json_array_foreach(json_object_get(rec, "fields"), i, f) {
        if (strcasecmp(json_string_value(json_object_get(f, "name")) ?: "", name)) continue;
        const char *m = json_string_value(json_object_get(f, "mode"));
        if (json_object_get(f, "fields") || (m && !strcmp(m, "REPEATED"))) return json_deep_copy(f);
        json_t *t = json_object_get(f, "type");
        return t ? json_incref(t) : json_null();
    }
    return json_null();
}

/* The hint of an ARRAY or STRUCT expression [a, end), of an UNNEST alias
 * or a RECORD column's field, of a subscript; NULL when [a, end) is none. */
static json_t *array_struct_hint(xl *x, size_t a, size_t end)
{
    if (end <= a) return NULL;
    if (end >= a + 3 && is_op(x, end - 2, ".") && (is_op(x, end - 3, ")") || is_op(x, end - 3, "]")) &&
        (T(x, end - 1)->type == T_IDENT || T(x, end - 1)->type == T_QIDENT)) { /* (struct).f */
        json_t *rec = item_hint(x, a, end - 2);
        json_t *f = json_is_object(rec) ? subfield(rec, T(x, end - 1)->text) : json_null();
        json_decref(rec);
        return f;
    }
    if (is_op(x, a, "[") && match_paren(x, a) + 1 == end) {
        size_t as[1], ae[1];
        if (!args_of(x, a, end - 1, as, ae, 1)) return repeated(json_null());
        return repeated(item_hint(x, as[0], ae[0]));
    }
    if (is_kw(x, a, "ARRAY") && is_op(x, a + 1, "<")) {
        size_t gt = match_angle(x, a + 1);
        if (gt + 1 < end && is_op(x, gt + 1, "[") && is_kw(x, a + 2, "STRUCT") && is_op(x, a + 3, "<")) {
            size_t k = a + 4;
            json_t *typed = json_array();
            mb_err e = {0};
            mb_err *keep = x->err;
            int was = x->failed;
            x->err = &e;
            parse_struct_fields(x, &k, typed, ">");
            x->err = keep;
            x->failed = was;
            return repeated(json_pack("{s:s,s:o}", "type", "RECORD", "fields", typed));
        }
        if (gt + 1 < end && is_op(x, gt + 1, "[")) {
            const char *c = gt == a + 3 ? mb_gc__type_canon(T(x, a + 2)->text) : NULL;
            json_t *lit = array_struct_hint(x, gt + 1, end);
            if (c && lit) json_object_set_new(lit, "type", json_string(c));
            return lit;
        }
    }
    if (is_kw(x, a, "ARRAY") && is_op(x, a + 1, "(") && match_paren(x, a + 1) + 1 == end) {
        json_t *h = select_hints(x, a + 2, end - 1);
        json_t *e = json_incref(json_array_get(h, 0));
        json_decref(h);
        return repeated(e ? e : json_null());
    }
    if (is_kw(x, a, "STRUCT") && (is_op(x, a + 1, "(") || is_op(x, a + 1, "<")) &&
        match_paren(x, is_op(x, a + 1, "<") ? match_angle(x, a + 1) + 1 : a + 1) + 1 == end) {
        json_t *rec = json_pack("{s:s,s:[]}", "type", "RECORD", "fields");
        size_t open = a + 1;
        json_t *typed = NULL;
        if (is_op(x, open, "<")) {
            size_t k = a + 2;
            typed = json_array();
            mb_err e = {0};
            mb_err *keep = x->err;
            int was = x->failed;
            x->err = &e;
            parse_struct_fields(x, &k, typed, ">");
            x->err = keep;
            x->failed = was;
            open = k;
        }
        size_t close = match_paren(x, open), as[256], ae[256];
        size_t n = is_op(x, open, "(") ? args_of(x, open, close, as, ae, 256) : 0;
        for (size_t i = 0; i < n; i++) {
            size_t e = ae[i];
            json_t *f = json_object();
            const char *name = NULL;
            if (typed) {
                json_t *tf = json_array_get(typed, i);
                name = json_string_value(json_object_get(tf, "name"));
                json_object_update(f, tf);
            } else if (e >= as[i] + 3 && is_kw(x, e - 2, "AS")) {
                name = T(x, e - 1)->text;
                e -= 2;
            } else {
                name = T(x, e - 1)->text;
            }
            json_object_set_new(f, "name", json_string(name ? name : ""));
            if (!typed) {
                json_t *h = item_hint(x, as[i], e);
                if (json_is_object(h)) json_object_update(f, h);
                else if (json_is_string(h)) json_object_set(f, "type", h);
                json_decref(h);
                json_object_set_new(f, "name", json_string(name ? name : ""));
            }
            json_array_append_new(json_object_get(rec, "fields"), f);
        }
        json_decref(typed);
        return rec;
    }
    if (is_kw(x, a, "ARRAY_AGG") && is_op(x, a + 1, "(") && is_kw(x, match_paren(x, a + 1) + 1, "OVER") &&
        is_op(x, match_paren(x, a + 1) + 2, "(") && match_paren(x, match_paren(x, a + 1) + 2) + 1 == end)
        return array_struct_hint(x, a, match_paren(x, a + 1) + 1); /* as a window */
    if (T(x, a)->type == T_IDENT && is_op(x, a + 1, "(") && match_paren(x, a + 1) + 1 == end) {
        size_t close = end - 1, as[8], ae[8];
        size_t n = args_of(x, a + 1, close, as, ae, 8);
        if (is_kw(x, a, "ARRAY_AGG") && n >= 1) {
            size_t s0 = as[0], e0 = ae[0];
            if (is_kw(x, s0, "DISTINCT")) s0++;
            for (size_t k = s0; k < e0; k++)
                if (is_kw(x, k, "IGNORE") || is_kw(x, k, "RESPECT") || is_kw(x, k, "ORDER") || is_kw(x, k, "LIMIT")) {
                    e0 = k;
                    break;
                }
            return repeated(item_hint(x, s0, e0));
        }
        if (is_kw(x, a, "APPROX_QUANTILES") && n == 2) return repeated(item_hint(x, as[0], ae[0]));
        if (is_kw(x, a, "GENERATE_DATE_ARRAY")) return repeated(json_string("DATE"));
        if (is_kw(x, a, "GENERATE_ARRAY")) {
            int real = 0;
            for (size_t k = a + 2; k < close; k++)
                real |= T(x, k)->type == T_NUM && strpbrk(T(x, k)->text, ".eE") != NULL;
            return repeated(json_string(real ? "FLOAT" : "INTEGER"));
        }
        if ((is_kw(x, a, "ARRAY_CONCAT") || is_kw(x, a, "ARRAY_REVERSE")) && n >= 1)
            return item_hint(x, as[0], ae[0]);
        return NULL;
    }
    if (is_op(x, end - 1, "]")) { /* a subscript: the element */
        size_t open = end - 1;
        int depth = 0;
        for (size_t k = end; k-- > a;) {
            if (is_op(x, k, "]") || is_op(x, k, ")")) depth++;
            else if ((is_op(x, k, "[") || is_op(x, k, "(")) && --depth == 0) {
                open = k;
                break;
            }
        }
        if (open > a) return element(item_hint(x, a, open));
        return NULL;
    }
    if (is_kw(x, a, "TRUE") || is_kw(x, a, "FALSE")) return end == a + 1 ? json_string("BOOLEAN") : NULL;
    if (T(x, a)->type == T_IDENT || T(x, a)->type == T_QIDENT) {
        size_t k = a;
        json_t *parts = take_path(x, &k, 0);
        json_t *h = NULL;
        size_t n = json_array_size(parts);
        if (k == end) {
            char *low = lower(part(parts, 0));
            json_t *un = json_object_get(x->unnest, low);
            free(low);
            size_t from = 1;
            if (un && n == 1) { /* the element itself: named after the alias */
                json_t *e = json_object_get(un, "h");
                h = json_is_object(e) ? json_deep_copy(e) : json_object();
                if (json_is_string(e)) json_object_set(h, "type", e);
                json_object_set_new(h, "name", json_string(part(parts, 0)));
                json_decref(parts);
                return h;
            }
            if (un) h = json_deep_copy(json_object_get(un, "h"));
            else if (n >= 2) { /* rec.f or alias.rec.f */
                for (size_t r = 0; r < 2 && r + 1 < n && !h; r++) {
                    char *l2 = lower(part(parts, r));
                    json_t *cf = json_object_get(x->colfields, l2);
                    free(l2);
                    if (json_is_object(cf) && json_object_get(cf, "fields")) {
                        h = json_deep_copy(cf);
                        from = r + 1;
                    }
                }
            }
            for (size_t p = from; h && p < n; p++) {
                json_t *sub = subfield(h, part(parts, p));
                json_decref(h);
                h = sub;
            }
            if (h && json_is_null(h)) {
                json_decref(h);
                h = NULL;
            }
        }
        json_decref(parts);
        return h;
    }
    return NULL;
}

/* The element hint of an UNNEST's array expression [a, b). */
static json_t *unnest_hint(xl *x, size_t a, size_t b)
{
    json_t *h = item_hint(x, a, b);
    if (json_is_null(h) && (T(x, a)->type == T_IDENT || T(x, a)->type == T_QIDENT)) {
        /* a REPEATED column by name */
        size_t k = a;
        json_t *parts = take_path(x, &k, 0);
        if (k == b) {
            char *low = lower(part(parts, json_array_size(parts) - 1));
            json_t *cf = json_object_get(x->colfields, low);
            free(low);
            if (json_is_object(cf)) {
                json_decref(h);
                h = json_deep_copy(cf);
            }
        }
        json_decref(parts);
    }
    return element(h);
}

static json_t *item_hint_in(xl *x, size_t a, size_t b);

static json_t *item_hint(xl *x, size_t a, size_t b)
{
    if (x->nest > XL_MAX_NEST) return json_null();
    x->nest++;
    json_t *h = item_hint_in(x, a, b);
    x->nest--;
    return h;
}

static json_t *item_hint_in(xl *x, size_t a, size_t b)
{
    size_t end = b;
    /* drop a trailing alias */
    if (end >= a + 2 && is_kw(x, end - 2, "AS")) end -= 2;
    else if (end >= a + 2 && (T(x, end - 1)->type == T_IDENT || T(x, end - 1)->type == T_QIDENT) &&
             !is_keyword(T(x, end - 1)->text) &&
             (is_op(x, end - 2, ")") || is_op(x, end - 2, "]") || T(x, end - 2)->type == T_IDENT ||
              T(x, end - 2)->type == T_QIDENT || T(x, end - 2)->type == T_STR ||
              T(x, end - 2)->type == T_NUM))
        end -= 1;
    int depth = 0;
    for (size_t k = a; k < end; k++) {
        if ((is_kw(x, k, "ARRAY") || is_kw(x, k, "STRUCT")) && is_op(x, k + 1, "<")) k = match_angle(x, k + 1);
        else if (is_op(x, k, "(") || is_op(x, k, "[") || is_kw(x, k, "CASE")) depth++;
        else if (is_op(x, k, ")") || is_op(x, k, "]") || is_kw(x, k, "END")) depth--;
        else if (!depth && (T(x, k)->type == T_OP || T(x, k)->type == T_IDENT)) {
            static const char *const CMP[] = {"=", "<", ">", "<=", ">=", "!=", "<>", NULL};
            static const char *const LOG[] = {"AND", "OR", "NOT", "IS", "IN", "LIKE", "BETWEEN", "EXISTS", NULL};
            for (const char *const *c = CMP; *c; c++)
                if (is_op(x, k, *c)) return json_string("BOOLEAN");
            for (const char *const *c = LOG; *c; c++)
                if (is_kw(x, k, *c)) return json_string("BOOLEAN");
        }
    }
    if (T(x, a)->type == T_IDENT && T(x, a + 1)->type == T_STR && end == a + 2) {
        if (is_kw(x, a, "DATE")) return json_string("DATE");
        if (is_kw(x, a, "TIMESTAMP")) return json_string("TIMESTAMP");
        if (is_kw(x, a, "DATETIME")) return json_string("DATETIME");
        if (is_kw(x, a, "TIME")) return json_string("TIME");
    }
    if (T(x, a)->type == T_IDENT && end == a + 1 &&
        (is_kw(x, a, "CURRENT_DATE") || is_kw(x, a, "CURRENT_TIMESTAMP") || is_kw(x, a, "CURRENT_DATETIME") ||
         is_kw(x, a, "CURRENT_TIME")))
        return json_string(fn_of(T(x, a)->text)->hint);
    json_t *av = array_struct_hint(x, a, end);
    if (av) return av;
    if (T(x, a)->type != T_IDENT || !is_op(x, a + 1, "(")) return json_null();
    size_t close = match_paren(x, a + 1);
    /* OVER (...) may follow */
    size_t after = close + 1;
    if (is_kw(x, after, "OVER") && is_op(x, after + 1, "(")) after = match_paren(x, after + 1) + 1;
    if (after != end) return json_null();
    const struct fn *f = fn_of(T(x, a)->text);
    if (!f) return json_null();
    if (f->kind == F_CAST) {
        for (size_t k = a + 2; k < close; k++)
            if (is_kw(x, k, "AS") && k + 2 == close) {
                const char *c = mb_gc__type_canon(T(x, k + 1)->text);
                return c ? json_string(c) : json_null();
            }
        return json_null();
    }
    if (f->kind == F_EXTRACT && is_kw(x, a + 2, "DATE")) return json_string("DATE");
    if (f->kind == F_PART && (!strcmp(f->hint, "DATE"))) {
        /* DATE_ADD of a TIMESTAMP is a TIMESTAMP: look at the first argument */
        if (T(x, a + 2)->type == T_IDENT || T(x, a + 2)->type == T_QIDENT) {
            const char *ct = col_type(x, T(x, a + 2)->text);
            if (ct && (!strcmp(ct, "TIMESTAMP") || !strcmp(ct, "DATETIME"))) return json_string(ct);
        }
    }
    if (!f->hint) return json_null();
    if (!strcmp(f->hint, "ARRAY<STRING>")) return repeated(json_string("STRING"));
    if (!strcmp(f->hint, "=arg")) {
        /* the argument's type when it is a plain column */
        size_t k = a + 2;
        if (is_kw(x, k, "DISTINCT")) k++;
        size_t j = k;
        if (T(x, j)->type == T_IDENT && is_op(x, j + 1, "(")) {
            size_t c2 = match_paren(x, j + 1);
            if (c2 + 1 == close || is_op(x, c2 + 1, ",")) return item_hint(x, j, c2 + 1);
            return json_null();
        }
        if (T(x, j)->type != T_IDENT && T(x, j)->type != T_QIDENT) return json_null();
        json_t *parts = take_path(x, &j, 0);
        const char *ct = NULL;
        if (is_op(x, j, ")") || is_op(x, j, ",")) ct = col_type(x, part(parts, json_array_size(parts) - 1));
        json_decref(parts);
        if (!ct) return json_null();
        if (!strcmp(T(x, a)->text, "SUM") || !strcasecmp(T(x, a)->text, "SUM"))
            return json_string(!strcmp(ct, "INTEGER") ? "INTEGER" : "FLOAT");
        return json_string(ct);
    }
    return json_string(f->hint);
}

static json_t *select_hints(xl *x, size_t a, size_t b)
{
    json_t *hints = json_array();
    /* the last SELECT at depth 0 */
    int depth = 0;
    size_t sel = (size_t)-1;
    for (size_t k = a; k < b; k++) {
        if (is_op(x, k, "(")) depth++;
        else if (is_op(x, k, ")")) depth--;
        else if (!depth && is_kw(x, k, "SELECT")) {
            sel = k;
            break; /* the first branch of a UNION names the columns */
        }
    }
    if (sel == (size_t)-1) return hints;
    size_t k = sel + 1;
    if (is_kw(x, k, "DISTINCT") || is_kw(x, k, "ALL")) k++;
    size_t start = k;
    depth = 0;
    for (; k <= b; k++) {
        int stop = k == b || (!depth && (is_kw(x, k, "FROM") || is_kw(x, k, "WHERE") ||
                                         is_kw(x, k, "GROUP") || is_kw(x, k, "ORDER") ||
                                         is_kw(x, k, "LIMIT") || is_kw(x, k, "UNION") ||
                                         is_kw(x, k, "HAVING") || T(x, k)->type == T_EOF));
        if (stop || (!depth && is_op(x, k, ","))) {
            if (k > start && (is_op(x, k - 1, "*") || is_op(x, start, "*"))) { /* *, t.*, * EXCEPT */
                json_array_append_new(hints, json_string("*"));
                break;
            }
            if (k > start) json_array_append_new(hints, item_hint(x, start, k));
            start = k + 1;
            if (stop) break;
            continue;
        }
        if ((is_kw(x, k, "ARRAY") || is_kw(x, k, "STRUCT")) && is_op(x, k + 1, "<")) {
            k = match_angle(x, k + 1);
            continue;
        }
        if (is_op(x, k, "(") || is_op(x, k, "[") || is_kw(x, k, "CASE")) depth++;
        if (is_op(x, k, ")") || is_op(x, k, "]") || is_kw(x, k, "END")) depth--;
    }
    return hints;
}

/* ----------------------------------------------------------- catalog */

static void load_catalog(xl *x)
{
    x->records = json_object();
    x->coltypes = json_object();
    x->ctes = json_object();
    x->colfields = json_object();
    x->unnest = json_object();
    x->unnest_at = json_object();
    x->unnest_order = json_array();
    x->star_hints = json_object();
    sqlite3_stmt *st;
    if (mb_gc__prep(x->gc, "SELECT fields FROM __bq_tables", &st, NULL)) return;
    while (sqlite3_step(st) == SQLITE_ROW) {
        json_t *f = json_loads((const char *)sqlite3_column_text(st, 0), 0, NULL);
        size_t i;
        json_t *fld;
        json_array_foreach(f, i, fld) {
            char *low = mb_strdup(json_string_value(json_object_get(fld, "name")));
            for (char *c = low; *c; c++) *c = (char)tolower((unsigned char)*c);
            const char *type = json_string_value(json_object_get(fld, "type"));
            const char *mode = json_string_value(json_object_get(fld, "mode"));
            if (!strcmp(type, "RECORD") || !strcmp(type, "JSON") || (mode && !strcmp(mode, "REPEATED")))
                json_object_set_new(x->records, low, json_true());
            json_t *have = json_object_get(x->coltypes, low);
            if (!have) json_object_set_new(x->coltypes, low, json_string(type));
            else if (json_is_string(have) && strcmp(json_string_value(have), type))
                json_object_set_new(x->coltypes, low, json_null());
            json_t *hf = json_object_get(x->colfields, low);
            if (!hf) json_object_set(x->colfields, low, fld);
            else if (!json_is_null(hf) && !json_equal(hf, fld)) json_object_set_new(x->colfields, low, json_null());
            free(low);
        }
        json_decref(f);
    }
    sqlite3_finalize(st);
    /* UNNEST(...) [AS] alias [WITH OFFSET [AS] name] in FROM clauses */
    for (size_t k = 1; k + 1 < x->l.n; k++) {
        if (!is_kw(x, k, "UNNEST") || !is_op(x, k + 1, "(") || is_kw(x, k - 1, "IN")) continue;
        size_t close = match_paren(x, k + 1), m = close + 1;
        char gen[32], key[32];
        snprintf(gen, sizeof gen, "__unnest%zu", k);
        snprintf(key, sizeof key, "%zu", k);
        const char *alias = NULL, *off = NULL;
        if (is_kw(x, m, "AS") && (T(x, m + 1)->type == T_IDENT || T(x, m + 1)->type == T_QIDENT)) {
            alias = T(x, m + 1)->text;
            m += 2;
        } else if (T(x, m)->type == T_QIDENT ||
                   (T(x, m)->type == T_IDENT && !is_keyword(T(x, m)->text) && !is_kw(x, m, "WITH"))) {
            alias = T(x, m)->text;
            m++;
        }
        if (is_kw(x, m, "WITH") && is_kw(x, m + 1, "OFFSET")) {
            m += 2;
            if (is_kw(x, m, "AS")) m++;
            if (T(x, m)->type == T_QIDENT || (T(x, m)->type == T_IDENT && !is_keyword(T(x, m)->text)))
                off = T(x, m)->text;
            else off = "offset";
        }
        const char *table = alias ? alias : gen;
        json_object_set_new(x->unnest_at, key, json_string(table));
        json_array_append_new(x->unnest_order, alias ? json_string(alias) : json_null());
        json_t *h = unnest_hint(x, k + 2, close);
        if (alias) {
            char *low = lower(alias);
            json_object_set_new(x->unnest, low, json_pack("{s:s,s:s,s:o}", "t", table, "c", "__v", "h", h));
            free(low);
        } else {
            /* UNNEST of STRUCTs without an alias: the fields are columns
             * (unless a table has a column of that name too) */
            json_t *sf;
            size_t q;
            json_array_foreach(json_is_object(h) ? json_object_get(h, "fields") : NULL, q, sf) {
                const char *fname = json_string_value(json_object_get(sf, "name"));
                if (!fname) continue;
                char *low = lower(fname);
                if (!json_object_get(x->coltypes, low) && !json_object_get(x->unnest, low))
                    json_object_set_new(x->unnest, low, json_pack("{s:s,s:s,s:O,s:s}", "t", table, "c", "__v", "h",
                                                                  sf, "field", fname));
                free(low);
            }
            json_decref(h);
        }
        if (off) {
            char *low = lower(off);
            json_object_set_new(x->unnest, low, json_pack("{s:s,s:s,s:s}", "t", table, "c", "__o", "h", "INTEGER"));
            free(low);
        }
    }
    /* CTE names: NAME AS ( after WITH, RECURSIVE or a ')' ',' */
    for (size_t k = 0; k + 2 < x->l.n; k++) {
        if ((T(x, k)->type == T_IDENT || T(x, k)->type == T_QIDENT) && is_kw(x, k + 1, "AS") &&
            is_op(x, k + 2, "(") && k > 0 &&
            (is_kw(x, k - 1, "WITH") || is_kw(x, k - 1, "RECURSIVE") || is_op(x, k - 1, ","))) {
            char *low = mb_strdup(T(x, k)->text);
            for (char *c = low; *c; c++) *c = (char)tolower((unsigned char)*c);
            json_object_set_new(x->ctes, low, json_true());
            free(low);
        }
    }
}

/* --------------------------------------------------------- statements */

/* The dataset.table named at *i (for DDL/DML targets), without checking it exists. */
static int target(xl *x, size_t *i, mb_gc_plan *p)
{
    if (T(x, *i)->type != T_IDENT && T(x, *i)->type != T_QIDENT)
        return fail(x, MB_EINVAL, "Syntax error: Expected a table name");
    json_t *parts = take_path(x, i, 1);
    const char *ds, *tb;
    int rc = resolve(x, parts, &ds, &tb);
    if (!rc) {
        p->dataset = mb_strdup(ds);
        p->table = mb_strdup(tb);
    }
    json_decref(parts);
    return rc;
}

static int parse_type(xl *x, size_t *i, json_t *field);

static int parse_struct_fields(xl *x, size_t *i, json_t *fields, const char *close)
{
    for (;;) {
        if (T(x, *i)->type != T_IDENT && T(x, *i)->type != T_QIDENT)
            return fail(x, MB_EINVAL, "Syntax error: Expected a column name");
        json_t *f = json_pack("{s:s}", "name", T(x, *i)->text);
        (*i)++;
        if (parse_type(x, i, f)) {
            json_decref(f);
            return x->failed;
        }
        /* NOT NULL, OPTIONS(description = '...') */
        for (;;) {
            if (is_kw(x, *i, "NOT") && is_kw(x, *i + 1, "NULL")) {
                json_object_set_new(f, "mode", json_string("REQUIRED"));
                *i += 2;
            } else if (is_kw(x, *i, "OPTIONS") && is_op(x, *i + 1, "(")) {
                size_t c = match_paren(x, *i + 1);
                for (size_t k = *i + 2; k + 2 < c; k++)
                    if (is_kw(x, k, "description") && is_op(x, k + 1, "=") && T(x, k + 2)->type == T_STR)
                        json_object_set_new(f, "description", json_string(T(x, k + 2)->text));
                *i = c + 1;
            } else break;
        }
        json_array_append_new(fields, f);
        if (is_op(x, *i, ",")) {
            (*i)++;
            continue;
        }
        if (is_op(x, *i, close)) {
            (*i)++;
            return MB_OK;
        }
        return fail(x, MB_EINVAL, "Syntax error: Unexpected \"%s\" in a column list", T(x, *i)->text);
    }
}

static int parse_type(xl *x, size_t *i, json_t *field)
{
    if (is_kw(x, *i, "ARRAY") && is_op(x, *i + 1, "<")) {
        *i += 2;
        if (parse_type(x, i, field)) return x->failed;
        json_object_set_new(field, "mode", json_string("REPEATED"));
        if (!is_op(x, *i, ">")) return fail(x, MB_EINVAL, "Syntax error: Expected \">\"");
        (*i)++;
        return MB_OK;
    }
    if (is_kw(x, *i, "STRUCT") && is_op(x, *i + 1, "<")) {
        *i += 2;
        json_t *sub = json_array();
        json_object_set_new(field, "type", json_string("RECORD"));
        json_object_set_new(field, "fields", sub);
        return parse_struct_fields(x, i, sub, ">");
    }
    if (T(x, *i)->type != T_IDENT || !mb_gc__type_canon(T(x, *i)->text))
        return fail(x, MB_EINVAL, "Type not found: %s", T(x, *i)->text);
    json_object_set_new(field, "type", json_string(mb_gc__type_canon(T(x, *i)->text)));
    (*i)++;
    /* NUMERIC(10, 2), STRING(20) */
    if (is_op(x, *i, "(")) *i = match_paren(x, *i) + 1;
    return MB_OK;
}

/* QUALIFY of the outermost SELECT: the query without it becomes a subquery,
 * the condition a hidden last column "__mb_qualify" of a wrapper that keeps
 * the rows where it holds (bigquery.c drops the column), then ORDER BY and
 * LIMIT. The condition sees the select list's columns, as BigQuery's does;
 * naming anything else fails in SQLite rather than answering otherwise.
 * Returns 0 when the statement has no QUALIFY at its top level. */
static int qualify(xl *x, size_t a, size_t b)
{
    int depth = 0;
    size_t q = 0, tail = b;
    for (size_t k = a; k < b; k++) {
        if (is_op(x, k, "(")) depth++;
        else if (is_op(x, k, ")")) depth--;
        else if (!depth && is_kw(x, k, "QUALIFY")) q = k;
        else if (!depth && q && tail == b && (is_kw(x, k, "ORDER") || is_kw(x, k, "LIMIT") || is_kw(x, k, "WINDOW")))
            tail = k;
        else if (!depth && (is_kw(x, k, "UNION") || is_kw(x, k, "INTERSECT") || is_kw(x, k, "EXCEPT")) &&
                 !is_op(x, k - 1, "*"))
            if (q) return unsupported(x, "QUALIFY with UNION, INTERSECT or EXCEPT"), 1;
    }
    if (!q) return 0;
    if (is_kw(x, tail, "WINDOW")) return unsupported(x, "QUALIFY with a WINDOW clause"), 1;
    mb_buf_puts(&x->out, "SELECT * FROM (SELECT *, (");
    xrange(x, q + 1, tail, 0);
    mb_buf_puts(&x->out, ") AS \"__mb_qualify\" FROM (");
    xrange(x, a, q, 0);
    mb_buf_puts(&x->out, ")) WHERE \"__mb_qualify\"");
    xrange(x, tail, b, 0);
    return 1;
}

static void plan_select(xl *x, size_t a, size_t b, mb_gc_plan *p)
{
    mb_buf_reset(&x->out);
    if (!qualify(x, a, b)) xrange(x, a, b, 0);
    if (!x->failed) {
        p->sql = mb_strndup(x->out.data ? x->out.data : "", x->out.len);
        p->hints = select_hints(x, a, b);
    }
}

/* ---------------------------------------------------------------- MERGE */

/* The SQLite text of range [a, b) as a string of its own. */
static char *xr(xl *x, size_t a, size_t b)
{
    mb_buf keep = x->out;
    memset(&x->out, 0, sizeof x->out);
    xrange(x, a, b, 0);
    char *s = x->out.data ? mb_buf_steal(&x->out) : mb_strdup("");
    mb_buf_free(&x->out);
    x->out = keep;
    return s;
}

/* The index of the next top-level WHEN at or after k (or end). */
static size_t next_when(xl *x, size_t k, size_t end)
{
    int depth = 0;
    for (; k < end; k++) {
        if (is_op(x, k, "(") || is_kw(x, k, "CASE")) depth++;
        else if (is_op(x, k, ")") || is_kw(x, k, "END")) depth--;
        else if (!depth && is_kw(x, k, "WHEN")) return k;
    }
    return end;
}

static void step(json_t *steps, int counts, char *sql)
{
    json_array_append_new(steps, json_pack("{s:s,s:b}", "sql", sql, "counts", counts));
    free(sql);
}

/* UPDATE SET a = e, T.b = e2 over [k, e): "a" = ..., "b" = ... */
static char *set_list(xl *x, size_t k, size_t e)
{
    size_t as[256], ae[256];
    size_t n = args_of(x, k - 1, e, as, ae, 256);
    mb_buf b = {0};
    for (size_t i = 0; i < n && !x->failed; i++) {
        size_t eq = as[i];
        while (eq < ae[i] && !is_op(x, eq, "=")) eq++;
        if (eq == as[i] || eq >= ae[i]) {
            fail(x, MB_EINVAL, "Syntax error: Expected column = expression in UPDATE SET");
            break;
        }
        if (i) mb_buf_puts(&b, ", ");
        put_quoted_id(&b, T(x, eq - 1)->text); /* T.col -> col */
        char *v = xr(x, eq + 1, ae[i]);
        mb_buf_printf(&b, " = %s", v);
        free(v);
    }
    char *s = b.data ? mb_buf_steal(&b) : mb_strdup("");
    mb_buf_free(&b);
    return s;
}

/* MERGE [INTO] target [[AS] T] USING source [[AS] S] ON cond WHEN ...:
 * the statements that do it on a snapshot of the match. */
static void plan_merge(xl *x, size_t end, mb_gc_plan *p)
{
    size_t i = 1;
    if (is_kw(x, i, "INTO")) i++;
    if (target(x, &i, p)) return;
    if (!table_exists(x, p->dataset, p->table)) {
        fail(x, MB_ENOTFOUND, "Not found: Table %s:%s.%s was not found in location US", x->gc->project,
             p->dataset, p->table);
        return;
    }
    const char *talias = p->table;
    if (is_kw(x, i, "AS")) i++;
    if ((T(x, i)->type == T_IDENT || T(x, i)->type == T_QIDENT) && !is_kw(x, i, "USING")) talias = T(x, i++)->text;
    if (!is_kw(x, i, "USING")) {
        fail(x, MB_EINVAL, "Syntax error: Expected keyword USING");
        return;
    }
    i++;
    char *src = NULL;
    const char *salias = "__mb_s";
    if (is_op(x, i, "(")) {
        size_t close = match_paren(x, i);
        src = xr(x, i + 1, close);
        i = close + 1;
    } else {
        mb_buf keep = x->out;
        memset(&x->out, 0, sizeof x->out);
        size_t k = i;
        json_t *parts = take_path(x, &k, 1);
        salias = part(parts, json_array_size(parts) - 1);
        salias = T(x, k - 1)->type == T_IDENT ? T(x, k - 1)->text : salias;
        json_decref(parts);
        table_ref(x, &i);
        src = x->out.data ? mb_buf_steal(&x->out) : mb_strdup("");
        mb_buf_free(&x->out);
        x->out = keep;
        char *s2 = mb_asprintf("SELECT * FROM %s", src);
        free(src);
        src = s2;
    }
    if (is_kw(x, i, "AS")) i++;
    if ((T(x, i)->type == T_IDENT || T(x, i)->type == T_QIDENT) && !is_kw(x, i, "ON")) salias = T(x, i++)->text;
    if (!is_kw(x, i, "ON") || x->failed) {
        free(src);
        if (!x->failed) fail(x, MB_EINVAL, "Syntax error: Expected keyword ON");
        return;
    }
    size_t w = next_when(x, i + 1, end);
    char *on = xr(x, i + 1, w);
    char *dt = mb_asprintf("%s.%s", p->dataset, p->table);
    mb_buf tq = {0}, ta = {0}, sa = {0};
    put_quoted_id(&tq, dt);
    put_quoted_id(&ta, talias);
    put_quoted_id(&sa, salias);
    json_t *steps = json_array(), *acts = json_array();
    step(steps, 0, mb_strdup("DROP TABLE IF EXISTS temp.\"__mb_src\""));
    step(steps, 0, mb_strdup("DROP TABLE IF EXISTS temp.\"__mb_pairs\""));
    step(steps, 0, mb_strdup("DROP TABLE IF EXISTS temp.\"__mb_sns\""));
    step(steps, 0, mb_strdup("DROP TABLE IF EXISTS temp.\"__mb_tns\""));
    step(steps, 0, mb_asprintf("CREATE TEMP TABLE \"__mb_src\" AS %s", src));
    step(steps, 0, mb_asprintf("CREATE TEMP TABLE \"__mb_pairs\" AS SELECT %s.rowid AS trid, %s.rowid AS srid, "
                               "NULL AS act FROM %s AS %s JOIN temp.\"__mb_src\" AS %s ON (%s)",
                               ta.data, sa.data, tq.data, ta.data, sa.data, on));
    step(steps, 0, mb_strdup("SELECT bq_error('UPDATE/MERGE must match at most one source row for each target "
                             "row') FROM temp.\"__mb_pairs\" GROUP BY trid HAVING count(*) > 1"));
    step(steps, 0, mb_strdup("CREATE TEMP TABLE \"__mb_sns\" AS SELECT rowid AS srid, NULL AS act FROM "
                             "temp.\"__mb_src\" WHERE rowid NOT IN (SELECT srid FROM temp.\"__mb_pairs\")"));
    step(steps, 0, mb_asprintf("CREATE TEMP TABLE \"__mb_tns\" AS SELECT rowid AS trid, NULL AS act FROM %s "
                               "WHERE rowid NOT IN (SELECT trid FROM temp.\"__mb_pairs\")", tq.data));
    int n = 0;
    while (!x->failed && w < end) {
        size_t k = w + 1;
        int kind; /* 0 matched, 1 not matched by target, 2 not matched by source */
        if (is_kw(x, k, "MATCHED")) {
            kind = 0;
            k++;
        } else if (is_kw(x, k, "NOT") && is_kw(x, k + 1, "MATCHED")) {
            k += 2;
            kind = 1;
            if (is_kw(x, k, "BY") && is_kw(x, k + 1, "TARGET")) k += 2;
            else if (is_kw(x, k, "BY") && is_kw(x, k + 1, "SOURCE")) {
                kind = 2;
                k += 2;
            }
        } else {
            fail(x, MB_EINVAL, "Syntax error: Expected MATCHED or NOT MATCHED after WHEN");
            break;
        }
        char *cond = NULL;
        size_t then = k;
        while (then < end && !is_kw(x, then, "THEN")) then++;
        if (then >= end) {
            fail(x, MB_EINVAL, "Syntax error: Expected keyword THEN");
            break;
        }
        if (is_kw(x, k, "AND")) cond = xr(x, k + 1, then);
        else if (then != k) {
            fail(x, MB_EINVAL, "Syntax error: Unexpected \"%s\" in a WHEN clause", T(x, k)->text);
            break;
        }
        size_t a = then + 1, next = next_when(x, a, end);
        n++;
        const char *pairs = kind == 0 ? "__mb_pairs" : kind == 1 ? "__mb_sns" : "__mb_tns";
        /* which rows the clause takes: the first clause whose condition holds */
        if (kind == 0)
            step(steps, 0, mb_asprintf("UPDATE temp.\"__mb_pairs\" SET act = %d WHERE act IS NULL AND EXISTS "
                                       "(SELECT 1 FROM %s AS %s, temp.\"__mb_src\" AS %s WHERE %s.rowid = "
                                       "\"__mb_pairs\".trid AND %s.rowid = \"__mb_pairs\".srid AND (%s))",
                                       n, tq.data, ta.data, sa.data, ta.data, sa.data, cond ? cond : "1"));
        else if (kind == 1)
            step(steps, 0, mb_asprintf("UPDATE temp.\"__mb_sns\" SET act = %d WHERE act IS NULL AND EXISTS "
                                       "(SELECT 1 FROM temp.\"__mb_src\" AS %s WHERE %s.rowid = \"__mb_sns\".srid "
                                       "AND (%s))", n, sa.data, sa.data, cond ? cond : "1"));
        else
            step(steps, 0, mb_asprintf("UPDATE temp.\"__mb_tns\" SET act = %d WHERE act IS NULL AND EXISTS "
                                       "(SELECT 1 FROM %s AS %s WHERE %s.rowid = \"__mb_tns\".trid AND (%s))",
                                       n, tq.data, ta.data, ta.data, cond ? cond : "1"));
        free(cond);
        /* what it does */
        if (is_kw(x, a, "DELETE") && a + 1 == next && kind != 1) {
            const char *col = kind == 0 ? "trid" : "trid";
            json_array_append_new(acts, json_pack("{s:s,s:b}", "sql", "", "counts", 1));
            char *q = mb_asprintf("DELETE FROM %s WHERE rowid IN (SELECT %s FROM temp.\"%s\" WHERE act = %d)",
                                  tq.data, col, pairs, n);
            json_object_set_new(json_array_get(acts, json_array_size(acts) - 1), "sql", json_string(q));
            free(q);
        } else if (is_kw(x, a, "UPDATE") && is_kw(x, a + 1, "SET") && kind != 1) {
            char *set = set_list(x, a + 2, next);
            char *q = kind == 0
                ? mb_asprintf("UPDATE %s AS %s SET %s FROM (SELECT \"__p\".trid AS \"__mb_trid\", \"__s\".* FROM "
                              "temp.\"__mb_pairs\" AS \"__p\" JOIN temp.\"__mb_src\" AS \"__s\" ON \"__s\".rowid = "
                              "\"__p\".srid WHERE \"__p\".act = %d) AS %s WHERE %s.rowid = %s.\"__mb_trid\"",
                              tq.data, ta.data, set, n, sa.data, ta.data, sa.data)
                : mb_asprintf("UPDATE %s AS %s SET %s WHERE %s.rowid IN (SELECT trid FROM temp.\"__mb_tns\" "
                              "WHERE act = %d)", tq.data, ta.data, set, ta.data, n);
            json_array_append_new(acts, json_pack("{s:s,s:b}", "sql", q, "counts", 1));
            free(q);
            free(set);
        } else if (is_kw(x, a, "INSERT") && kind == 1) {
            size_t k2 = a + 1;
            mb_buf cols = {0};
            if (is_op(x, k2, "(")) {
                size_t c = match_paren(x, k2);
                mb_buf_putc(&cols, '(');
                for (size_t m = k2 + 1; m < c; m++) {
                    if (is_op(x, m, ",")) mb_buf_puts(&cols, ", ");
                    else put_quoted_id(&cols, T(x, m)->text);
                }
                mb_buf_putc(&cols, ')');
                k2 = c + 1;
            }
            char *vals = NULL;
            if (is_kw(x, k2, "ROW") && k2 + 1 == next) {
                vals = mb_strdup("*");
            } else if (is_kw(x, k2, "VALUES") && is_op(x, k2 + 1, "(") && match_paren(x, k2 + 1) + 1 == next) {
                vals = xr(x, k2 + 2, match_paren(x, k2 + 1));
            } else {
                fail(x, MB_EINVAL, "Syntax error: Expected VALUES (...) or ROW after INSERT");
            }
            if (vals) {
                char *q = mb_asprintf("INSERT INTO %s%s%s SELECT %s FROM temp.\"__mb_src\" AS %s WHERE %s.rowid IN "
                                      "(SELECT srid FROM temp.\"__mb_sns\" WHERE act = %d) ORDER BY %s.rowid",
                                      tq.data, cols.len ? " " : "", cols.len ? cols.data : "", vals, sa.data,
                                      sa.data, n, sa.data);
                json_array_append_new(acts, json_pack("{s:s,s:b}", "sql", q, "counts", 1));
                free(q);
                free(vals);
            }
            mb_buf_free(&cols);
        } else {
            fail(x, MB_EINVAL, "Syntax error: WHEN %sMATCHED%s THEN takes %s", kind ? "NOT " : "",
                 kind == 2 ? " BY SOURCE" : "", kind == 1 ? "INSERT" : "UPDATE SET or DELETE");
        }
        w = next;
    }
    if (!x->failed && !n) fail(x, MB_EINVAL, "Syntax error: MERGE needs a WHEN clause");
    /* updates and deletes first (they address rows by rowid), inserts last */
    for (int pass = 0; pass < 2; pass++) {
        size_t k;
        json_t *s;
        json_array_foreach(acts, k, s) {
            int ins = !strncmp(json_string_value(json_object_get(s, "sql")), "INSERT", 6);
            if (ins == pass) json_array_append(steps, s);
        }
    }
    step(steps, 0, mb_strdup("DROP TABLE temp.\"__mb_src\""));
    step(steps, 0, mb_strdup("DROP TABLE temp.\"__mb_pairs\""));
    step(steps, 0, mb_strdup("DROP TABLE temp.\"__mb_sns\""));
    step(steps, 0, mb_strdup("DROP TABLE temp.\"__mb_tns\""));
    if (!x->failed) p->steps = json_incref(steps);
    json_decref(steps);
    json_decref(acts);
    mb_buf_free(&tq);
    mb_buf_free(&ta);
    mb_buf_free(&sa);
    free(dt);
    free(on);
    free(src);
}

/* ------------------------------------------------------------- PIVOT */

/* The text of tokens [a, b) in the source. */
static void put_src(mb_buf *o, const char *sql, xl *x, size_t a, size_t b)
{
    if (b <= a) return;
    size_t s0 = T(x, a)->start, s1 = T(x, b - 1)->start + T(x, b - 1)->len;
    mb_buf_append(o, sql + s0, s1 - s0);
}

static void put_backticked(mb_buf *o, const char *name)
{
    mb_buf_putc(o, '`');
    mb_buf_puts(o, name);
    mb_buf_putc(o, '`');
}

/* The output column names of the from item [f0, f1) before a PIVOT: a
 * table's columns, or a subquery's named select items. NULL: unknown. */
static json_t *pivot_input_columns(xl *x, size_t f0, size_t f1)
{
    if (is_op(x, f0, "(")) {
        size_t close = match_paren(x, f0);
        if (close >= f1 || !is_kw(x, f0 + 1, "SELECT")) return NULL;
        size_t k = f0 + 2, start = k;
        if (is_kw(x, k, "DISTINCT") || is_kw(x, k, "ALL")) start = ++k;
        json_t *names = json_array();
        int depth = 0;
        for (; k < close; k++) {
            if (is_op(x, k, "(") || is_op(x, k, "[")) depth++;
            else if (is_op(x, k, ")") || is_op(x, k, "]")) depth--;
            if (depth || !(is_op(x, k, ",") || is_kw(x, k, "FROM") || k + 1 == close)) continue;
            size_t e = (k + 1 == close && !is_op(x, k, ",") && !is_kw(x, k, "FROM")) ? k + 1 : k;
            const char *name = NULL;
            if (e >= start + 3 && is_kw(x, e - 2, "AS")) name = T(x, e - 1)->text;
            else if (e > start && (T(x, e - 1)->type == T_IDENT || T(x, e - 1)->type == T_QIDENT) &&
                     (e == start + 1 || is_op(x, e - 2, "."))) name = T(x, e - 1)->text;
            if (!name || (e > start && is_op(x, e - 1, "*"))) {
                json_decref(names);
                return NULL;
            }
            json_array_append_new(names, json_string(name));
            start = k + 1;
            if (is_kw(x, k, "FROM")) break;
        }
        return names;
    }
    size_t k = f0;
    json_t *parts = take_path(x, &k, 1);
    const char *ds, *tb;
    json_t *names = NULL;
    size_t n = json_array_size(parts);
    if (n >= 2 && n <= 3 && (n == 2 || !strcmp(part(parts, 0), x->gc->project))) {
        ds = part(parts, n - 2);
        tb = part(parts, n - 1);
        json_t *fields = mb_gc__table_fields(x->gc, ds, tb), *f;
        size_t i;
        if (fields) {
            names = json_array();
            json_array_foreach(fields, i, f) json_array_append(names, json_object_get(f, "name"));
            json_decref(fields);
        }
    }
    json_decref(parts);
    return names;
}

/* The first token of the from item that ends before token `op` (a PIVOT or
 * UNPIVOT): back to FROM / JOIN / ',' at its level. */
static size_t from_item_start(xl *x, size_t op)
{
    size_t f0 = op;
    int depth = 0;
    while (f0 > 0) {
        size_t k = f0 - 1;
        if (is_op(x, k, ")")) depth++;
        else if (is_op(x, k, "(")) {
            if (!depth) break;
            depth--;
        } else if (!depth && (is_kw(x, k, "FROM") || is_kw(x, k, "JOIN") || is_op(x, k, ","))) break;
        f0 = k;
    }
    return f0;
}

/* Rewrites the first `from_item PIVOT (agg [AS a], ... FOR col IN (v [AS a],
 * ...)) [AS alias]` of sql into GoogleSQL without PIVOT: a subquery grouping
 * the from item's other columns, with AGG(IF(col = v, arg, NULL)) per value
 * (and per aggregate). *out: the new text, or NULL when there is no PIVOT. */
static int pivot_rewrite(mb_gc *gc, const char *sql, size_t len, char **out, mb_err *err)
{
    *out = NULL;
    int any = 0; /* most statements have no PIVOT: skip the second lexing */
    for (size_t k = 0; k + 5 <= len && !any; k++) any = !strncasecmp(sql + k, "PIVOT", 5);
    if (!any) return MB_OK;
    xl x = {.gc = gc, .err = err};
    int rc = lex(sql, len, &x.l, err);
    if (rc) return rc;
    size_t pv = 0;
    for (size_t k = 1; k + 1 < x.l.n && !pv; k++)
        if (is_kw(&x, k, "PIVOT") && is_op(&x, k + 1, "(") &&
            (is_op(&x, k - 1, ")") || T(&x, k - 1)->type == T_IDENT || T(&x, k - 1)->type == T_QIDENT))
            pv = k;
    if (!pv) {
        lexed_free(&x.l);
        return MB_OK;
    }
    json_t *names = NULL, *aggs = json_array(), *vals = json_array();
    mb_buf o = {0};
    size_t f0 = from_item_start(&x, pv);
    int depth = 0;
    size_t f1 = pv; /* [f0, f1): the from item with any alias */
    size_t fe = f1;  /* the item without its alias */
    if (fe >= f0 + 3 && is_kw(&x, fe - 2, "AS")) fe -= 2;
    if (f0 >= pv || !is_kw(&x, f0 - 1, "FROM")) {
        unsupported(&x, "PIVOT after a join or in this position");
        goto done;
    }
    size_t open = pv + 1, close = match_paren(&x, open), forp = 0;
    depth = 0;
    for (size_t k = open + 1; k < close; k++) {
        if (is_op(&x, k, "(")) depth++;
        else if (is_op(&x, k, ")")) depth--;
        else if (!depth && is_kw(&x, k, "FOR")) {
            forp = k;
            break;
        }
    }
    if (!forp || (T(&x, forp + 1)->type != T_IDENT && T(&x, forp + 1)->type != T_QIDENT) ||
        !is_kw(&x, forp + 2, "IN") || !is_op(&x, forp + 3, "(") || match_paren(&x, forp + 3) + 1 != close) {
        fail(&x, MB_EINVAL, "Syntax error: Expected PIVOT (aggregate FOR column IN (values))");
        goto done;
    }
    const char *col = T(&x, forp + 1)->text;
    size_t as[64], ae[64];
    size_t na = args_of(&x, open, forp, as, ae, 64);
    ae[na ? na - 1 : 0] = forp; /* the last aggregate ends at FOR */
    for (size_t a = 0; a < na; a++) {
        size_t e = ae[a];
        const char *alias = NULL;
        if (e >= as[a] + 3 && is_kw(&x, e - 2, "AS")) {
            alias = T(&x, e - 1)->text;
            e -= 2;
        } else if (e >= as[a] + 2 && is_op(&x, e - 2, ")") && T(&x, e - 1)->type == T_IDENT) {
            alias = T(&x, e - 1)->text;
            e -= 1;
        }
        if (T(&x, as[a])->type != T_IDENT || !is_op(&x, as[a] + 1, "(") || match_paren(&x, as[a] + 1) + 1 != e) {
            fail(&x, MB_EINVAL, "PIVOT expects aggregate function calls");
            goto done;
        }
        json_array_append_new(aggs, json_pack("{s:I,s:I,s:s?}", "a", (json_int_t)as[a], "e", (json_int_t)e, "alias",
                                              alias));
    }
    if (!na || (na > 1 && json_array_size(aggs) != na)) goto done;
    for (size_t a = 0; a < na; a++)
        if (na > 1 && !json_object_get(json_array_get(aggs, a), "alias")) {
            unsupported(&x, "PIVOT with several aggregates without aliases");
            goto done;
        }
    size_t vs[256], ve[256];
    size_t nv = args_of(&x, forp + 3, close - 1, vs, ve, 256);
    if (!nv || nv == 256) {
        fail(&x, MB_EINVAL, "Syntax error: PIVOT needs between 1 and 255 values");
        goto done;
    }
    for (size_t v = 0; v < nv; v++) {
        size_t e = ve[v];
        const char *name = NULL;
        if (e >= vs[v] + 3 && is_kw(&x, e - 2, "AS")) {
            name = T(&x, e - 1)->text;
            e -= 2;
        } else if (e == vs[v] + 1 && T(&x, vs[v])->type == T_STR) {
            name = T(&x, vs[v])->text;
        }
        if (!name) {
            unsupported(&x, "PIVOT values other than string literals without an alias");
            goto done;
        }
        int ok = *name && !isdigit((unsigned char)*name);
        for (const char *c = name; *c && ok; c++) ok = isalnum((unsigned char)*c) || *c == '_';
        if (!ok) {
            unsupported(&x, "PIVOT values that do not make a column name (give them an alias)");
            goto done;
        }
        json_array_append_new(vals, json_pack("{s:I,s:I,s:s}", "a", (json_int_t)vs[v], "e", (json_int_t)e, "name",
                                              name));
    }
    names = pivot_input_columns(&x, f0, fe);
    if (!names) {
        unsupported(&x, "PIVOT over a from item whose columns are not named (name the subquery's columns)");
        goto done;
    }
    /* the grouping columns: the input's columns the aggregates and FOR leave */
    json_t *groups = json_array(), *nm;
    size_t gi;
    json_array_foreach(names, gi, nm) {
        const char *c = json_string_value(nm);
        int used = !strcasecmp(c, col);
        for (size_t a = 0; a < na && !used; a++)
            for (size_t k = as[a] + 2; k < ae[a] && !used; k++)
                used = (T(&x, k)->type == T_IDENT || T(&x, k)->type == T_QIDENT) && !strcasecmp(T(&x, k)->text, c);
        if (!used) json_array_append(groups, nm);
    }
    put_src(&o, sql, &x, 0, f0);
    mb_buf_puts(&o, " (SELECT ");
    json_array_foreach(groups, gi, nm) {
        put_backticked(&o, json_string_value(nm));
        mb_buf_puts(&o, ", ");
    }
    for (size_t a = 0; a < na; a++) {
        json_t *ag = json_array_get(aggs, a);
        size_t a0 = (size_t)json_integer_value(json_object_get(ag, "a"));
        size_t a1 = (size_t)json_integer_value(json_object_get(ag, "e"));
        size_t c1 = a1 - 1, arg0 = a0 + 2; /* ')' and the first argument */
        int distinct = is_kw(&x, arg0, "DISTINCT");
        if (distinct) arg0++;
        size_t cs[16], ce[16];
        size_t nargs = args_of(&x, a0 + 1, c1, cs, ce, 16);
        if (distinct && nargs) cs[0] = arg0;
        for (size_t v = 0; v < nv; v++) {
            json_t *vl = json_array_get(vals, v);
            if (a || v) mb_buf_puts(&o, ", ");
            put_src(&o, sql, &x, a0, a0 + 2); /* NAME( */
            if (distinct) mb_buf_puts(&o, "DISTINCT ");
            mb_buf_puts(&o, "IF(");
            put_backticked(&o, col);
            size_t v0 = (size_t)json_integer_value(json_object_get(vl, "a"));
            size_t v1 = (size_t)json_integer_value(json_object_get(vl, "e"));
            if (v1 == v0 + 1 && is_kw(&x, v0, "NULL")) {
                mb_buf_puts(&o, " IS NULL");
            } else {
                mb_buf_puts(&o, " = (");
                put_src(&o, sql, &x, v0, v1);
                mb_buf_puts(&o, ")");
            }
            mb_buf_puts(&o, ", ");
            if (nargs == 1 && is_op(&x, cs[0], "*") && ce[0] == cs[0] + 1) mb_buf_puts(&o, "1");
            else if (nargs) put_src(&o, sql, &x, cs[0], ce[0]);
            mb_buf_puts(&o, ", NULL)");
            for (size_t q = 1; q < nargs; q++) {
                mb_buf_puts(&o, ", ");
                put_src(&o, sql, &x, cs[q], ce[q]);
            }
            mb_buf_puts(&o, ") AS ");
            const char *alias = json_string_value(json_object_get(ag, "alias"));
            char *name = na > 1 ? mb_asprintf("%s_%s", alias, json_string_value(json_object_get(vl, "name")))
                                : mb_strdup(json_string_value(json_object_get(vl, "name")));
            put_backticked(&o, name);
            free(name);
        }
    }
    mb_buf_puts(&o, " FROM ");
    put_src(&o, sql, &x, f0, f1);
    if (json_array_size(groups)) {
        mb_buf_puts(&o, " GROUP BY ");
        json_array_foreach(groups, gi, nm) {
            if (gi) mb_buf_puts(&o, ", ");
            put_backticked(&o, json_string_value(nm));
        }
    }
    mb_buf_puts(&o, ") ");
    json_decref(groups);
    mb_buf_append(&o, sql + T(&x, close)->start + 1, len - (T(&x, close)->start + 1));
    *out = mb_buf_steal(&o);
done:
    mb_buf_free(&o);
    json_decref(names);
    json_decref(aggs);
    json_decref(vals);
    lexed_free(&x.l);
    return x.failed;
}

/* ----------------------------------------------------------- UNPIVOT */

static int is_name_tok(xl *x, size_t i) { return T(x, i)->type == T_IDENT || T(x, i)->type == T_QIDENT; }

/* Rewrites the first `from_item UNPIVOT [INCLUDE|EXCLUDE NULLS] (values FOR
 * name IN (items)) [AS alias]` of sql: values is a column or (columns), each
 * item a column or (columns) with an optional [AS] string or integer alias.
 * It becomes a subquery crossing the from item with the item numbers:
 *   (SELECT * FROM (SELECT others.., CASE k WHEN 0 THEN c0 .. END AS v..,
 *    CASE k WHEN 0 THEN 'c0' .. END AS name FROM item CROSS JOIN UNNEST([0,
 *    ..]) AS k) WHERE NOT (v IS NULL AND ..))
 * so each input row gives its items in order, as BigQuery lists them; the
 * WHERE is EXCLUDE NULLS, the default. *out: NULL when there is no UNPIVOT. */
static int unpivot_rewrite(mb_gc *gc, const char *sql, size_t len, char **out, mb_err *err)
{
    *out = NULL;
    int any = 0;
    for (size_t k = 0; k + 7 <= len && !any; k++) any = !strncasecmp(sql + k, "UNPIVOT", 7);
    if (!any) return MB_OK;
    xl x = {.gc = gc, .err = err};
    int rc = lex(sql, len, &x.l, err);
    if (rc) return rc;
    size_t up = 0;
    for (size_t k = 1; k + 1 < x.l.n && !up; k++)
        if (is_kw(&x, k, "UNPIVOT") && (is_op(&x, k + 1, "(") || is_kw(&x, k + 1, "INCLUDE") || is_kw(&x, k + 1, "EXCLUDE")) &&
            (is_op(&x, k - 1, ")") || is_name_tok(&x, k - 1)))
            up = k;
    if (!up) {
        lexed_free(&x.l);
        return MB_OK;
    }
    json_t *names = NULL, *vcols = json_array(), *items = json_array(), *used = json_array();
    mb_buf o = {0};
    size_t open = up + 1;
    int include_nulls = 0;
    if (is_kw(&x, open, "INCLUDE") || is_kw(&x, open, "EXCLUDE")) {
        include_nulls = is_kw(&x, open, "INCLUDE");
        if (!is_kw(&x, open + 1, "NULLS")) {
            fail(&x, MB_EINVAL, "Syntax error: Expected keyword NULLS after %s", T(&x, open)->text);
            goto done;
        }
        open += 2;
    }
    size_t f0 = from_item_start(&x, up), f1 = up, fe = up;
    if (fe >= f0 + 3 && is_kw(&x, fe - 2, "AS")) fe -= 2;
    if (f0 >= up || !is_kw(&x, f0 - 1, "FROM")) {
        unsupported(&x, "UNPIVOT after a join or in this position");
        goto done;
    }
    if (!is_op(&x, open, "(")) {
        fail(&x, MB_EINVAL, "Syntax error: Expected \"(\" after UNPIVOT");
        goto done;
    }
    size_t close = closing(&x, open), k = open + 1;
    if (x.failed) goto done;
    /* the values column, or a set of them */
    if (is_op(&x, k, "(")) {
        size_t c = closing(&x, k), as[64], ae[64];
        size_t n = x.failed ? 0 : args_of(&x, k, c, as, ae, 64);
        for (size_t i = 0; i < n; i++)
            if (ae[i] == as[i] + 1 && is_name_tok(&x, as[i])) json_array_append_new(vcols, json_string(T(&x, as[i])->text));
        if (!n || n == 64 || json_array_size(vcols) != n) {
            fail(&x, MB_EINVAL, "Syntax error: UNPIVOT expects a values column or a list of them");
            goto done;
        }
        k = c + 1;
    } else if (is_name_tok(&x, k)) {
        json_array_append_new(vcols, json_string(T(&x, k++)->text));
    }
    if (!json_array_size(vcols) || !is_kw(&x, k, "FOR") || !is_name_tok(&x, k + 1) || !is_kw(&x, k + 2, "IN") ||
        !is_op(&x, k + 3, "(") || match_paren(&x, k + 3) + 1 != close) {
        fail(&x, MB_EINVAL, "Syntax error: Expected UNPIVOT (values_column FOR name_column IN (columns))");
        goto done;
    }
    const char *namecol = T(&x, k + 1)->text;
    size_t nv = json_array_size(vcols);
    size_t is[256], ie[256];
    size_t ni = args_of(&x, k + 3, close - 1, is, ie, 256);
    if (!ni || ni == 256) {
        fail(&x, MB_EINVAL, "Syntax error: UNPIVOT needs between 1 and 255 columns to unpivot");
        goto done;
    }
    int str_alias = 0, int_alias = 0;
    for (size_t i = 0; i < ni; i++) {
        size_t s0 = is[i], e = ie[i], alias = 0;
        if (e >= s0 + 3 && is_kw(&x, e - 2, "AS")) alias = e - 1;
        else if (e >= s0 + 2 && (T(&x, e - 1)->type == T_STR || T(&x, e - 1)->type == T_NUM)) alias = e - 1;
        if (alias) {
            int isstr = T(&x, alias)->type == T_STR;
            if (!isstr && (T(&x, alias)->type != T_NUM || strpbrk(T(&x, alias)->text, ".eE"))) {
                fail(&x, MB_EINVAL, "UNPIVOT row value aliases must be string or integer literals");
                goto done;
            }
            str_alias |= isstr;
            int_alias |= !isstr;
            e = alias - (is_kw(&x, alias - 1, "AS") ? 1 : 0);
        }
        /* the item's columns: one name, or (names) as many as the values */
        json_t *cols = json_array();
        if (nv == 1 && e == s0 + 1 && is_name_tok(&x, s0)) {
            json_array_append_new(cols, json_integer((json_int_t)s0));
        } else if (nv > 1 && is_op(&x, s0, "(") && match_paren(&x, s0) + 1 == e) {
            size_t cs[64], ce[64];
            size_t n = args_of(&x, s0, e - 1, cs, ce, 64);
            for (size_t c = 0; c < n; c++)
                if (ce[c] == cs[c] + 1 && is_name_tok(&x, cs[c])) json_array_append_new(cols, json_integer((json_int_t)cs[c]));
        }
        if (json_array_size(cols) != nv) {
            json_decref(cols);
            fail(&x, MB_EINVAL, nv == 1 ? "Syntax error: UNPIVOT expects column names in IN (...)"
                                        : "UNPIVOT expects each item of IN (...) to list as many columns as the values "
                                          "columns (%zu)", nv);
            goto done;
        }
        size_t c;
        json_t *ci;
        json_array_foreach(cols, c, ci) json_array_append_new(used, json_string(T(&x, (size_t)json_integer_value(ci))->text));
        json_array_append_new(items, json_pack("{s:o,s:I}", "cols", cols, "alias", (json_int_t)alias));
    }
    if (str_alias && int_alias) {
        fail(&x, MB_EINVAL, "UNPIVOT row value aliases must all be strings or all integers");
        goto done;
    }
    if (int_alias && json_array_size(items) != 0) {
        for (size_t i = 0; i < ni; i++)
            if (!json_integer_value(json_object_get(json_array_get(items, i), "alias"))) {
                fail(&x, MB_EINVAL, "UNPIVOT with integer row value aliases needs one on every item");
                goto done;
            }
    }
    names = pivot_input_columns(&x, f0, fe);
    if (!names) {
        unsupported(&x, "UNPIVOT over a from item whose columns are not named (name the subquery's columns)");
        goto done;
    }
    size_t i, j;
    json_t *nm, *u;
    json_array_foreach(used, i, u) {
        int found = 0;
        json_array_foreach(names, j, nm) found |= !strcasecmp(json_string_value(nm), json_string_value(u));
        if (!found) {
            fail(&x, MB_EINVAL, "Unrecognized name: %s", json_string_value(u));
            goto done;
        }
    }
    put_src(&o, sql, &x, 0, f0);
    mb_buf_puts(&o, " (SELECT * FROM (SELECT ");
    json_array_foreach(names, j, nm) {
        int out_col = 1;
        json_array_foreach(used, i, u) out_col &= !!strcasecmp(json_string_value(nm), json_string_value(u));
        if (!out_col) continue;
        put_backticked(&o, json_string_value(nm));
        mb_buf_puts(&o, ", ");
    }
    for (size_t v = 0; v <= nv; v++) { /* the values columns, then the name column */
        mb_buf_puts(&o, v ? ", CASE `_mb_unpivot` " : "CASE `_mb_unpivot` ");
        for (i = 0; i < ni; i++) {
            json_t *it = json_array_get(items, i), *cols = json_object_get(it, "cols");
            mb_buf_printf(&o, "WHEN %zu THEN ", i);
            if (v < nv) {
                size_t t = (size_t)json_integer_value(json_array_get(cols, v));
                put_src(&o, sql, &x, t, t + 1);
            } else if (json_integer_value(json_object_get(it, "alias"))) {
                size_t t = (size_t)json_integer_value(json_object_get(it, "alias"));
                put_src(&o, sql, &x, t, t + 1);
            } else { /* the columns' names, joined by '_' */
                mb_buf_putc(&o, '\'');
                json_t *ci;
                json_array_foreach(cols, j, ci) {
                    if (j) mb_buf_putc(&o, '_');
                    for (const char *ch = T(&x, (size_t)json_integer_value(ci))->text; *ch; ch++) {
                        if (*ch == '\'' || *ch == '\\') mb_buf_putc(&o, '\\');
                        mb_buf_putc(&o, *ch);
                    }
                }
                mb_buf_putc(&o, '\'');
            }
            mb_buf_putc(&o, ' ');
        }
        mb_buf_puts(&o, "END AS ");
        put_backticked(&o, v < nv ? json_string_value(json_array_get(vcols, v)) : namecol);
    }
    mb_buf_puts(&o, " FROM ");
    put_src(&o, sql, &x, f0, f1);
    mb_buf_puts(&o, " CROSS JOIN UNNEST([");
    for (i = 0; i < ni; i++) mb_buf_printf(&o, "%s%zu", i ? ", " : "", i);
    mb_buf_puts(&o, "]) AS `_mb_unpivot`)");
    if (!include_nulls) {
        mb_buf_puts(&o, " WHERE NOT (");
        for (size_t v = 0; v < nv; v++) {
            if (v) mb_buf_puts(&o, " AND ");
            put_backticked(&o, json_string_value(json_array_get(vcols, v)));
            mb_buf_puts(&o, " IS NULL");
        }
        mb_buf_putc(&o, ')');
    }
    mb_buf_puts(&o, ") ");
    mb_buf_append(&o, sql + T(&x, close)->start + 1, len - (T(&x, close)->start + 1));
    *out = mb_buf_steal(&o);
done:
    mb_buf_free(&o);
    json_decref(names);
    json_decref(vcols);
    json_decref(items);
    json_decref(used);
    lexed_free(&x.l);
    return x.failed;
}

int mb_gc__translate(mb_gc *gc, const char *sql, size_t len, mb_gc_plan *p, mb_err *err)
{
    /* PIVOTs and UNPIVOTs first: each becomes a subquery, then the text is read again */
    char *rewritten = NULL;
    for (int round = 0;; round++) {
        char *next = NULL;
        const char *cur = rewritten ? rewritten : sql;
        size_t curlen = rewritten ? strlen(rewritten) : len;
        int prc = pivot_rewrite(gc, cur, curlen, &next, err);
        if (!prc && !next) prc = unpivot_rewrite(gc, cur, curlen, &next, err);
        if (!prc && next && round == 16) {
            free(next);
            prc = mb_err_set(err, MB_EINVAL, "Unsupported: more than 16 PIVOTs and UNPIVOTs in one statement");
        }
        if (prc) {
            free(rewritten);
            return prc;
        }
        if (!next) break;
        free(rewritten);
        rewritten = next;
    }
    if (rewritten) {
        int rrc = mb_gc__translate(gc, rewritten, strlen(rewritten), p, err);
        free(rewritten);
        return rrc;
    }
    memset(p, 0, sizeof *p);
    xl x = {.gc = gc, .err = err};
    int rc = lex(sql, len, &x.l, err);
    if (rc) return rc;
    load_catalog(&x);
    size_t i = 0, end = x.l.n - 1;
    while (end > 0 && is_op(&x, end - 1, ";")) end--;
    if (is_kw(&x, 0, "SELECT") || is_kw(&x, 0, "WITH") || is_op(&x, 0, "(")) {
        p->kind = GC_SELECT;
        plan_select(&x, 0, end, p);
    } else if (is_kw(&x, 0, "INSERT")) {
        p->kind = GC_INSERT;
        i = 1;
        if (is_kw(&x, i, "INTO")) i++;
        if (!target(&x, &i, p)) {
            if (!table_exists(&x, p->dataset, p->table))
                fail(&x, MB_ENOTFOUND, "Not found: Table %s:%s.%s was not found in location US",
                     gc->project, p->dataset, p->table);
            else {
                char *dt = mb_asprintf("%s.%s", p->dataset, p->table);
                mb_buf_puts(&x.out, "INSERT INTO ");
                put_quoted_id(&x.out, dt);
                free(dt);
                xrange(&x, i, end, 0);
                if (!x.failed) p->sql = mb_buf_steal(&x.out);
            }
        }
    } else if (is_kw(&x, 0, "DELETE") || is_kw(&x, 0, "UPDATE")) {
        int del = is_kw(&x, 0, "DELETE");
        p->kind = del ? GC_DELETE : GC_UPDATE;
        i = 1;
        if (del && is_kw(&x, i, "FROM")) i++;
        if (!target(&x, &i, p)) {
            int where = 0, depth = 0;
            for (size_t k = i; k < end; k++) {
                if (is_op(&x, k, "(")) depth++;
                if (is_op(&x, k, ")")) depth--;
                if (!depth && is_kw(&x, k, "WHERE")) where = 1;
            }
            if (!table_exists(&x, p->dataset, p->table))
                fail(&x, MB_ENOTFOUND, "Not found: Table %s:%s.%s was not found in location US",
                     gc->project, p->dataset, p->table);
            else if (!where)
                fail(&x, MB_EINVAL, "Syntax error: %s must have a WHERE clause",
                     del ? "DELETE" : "UPDATE");
            else {
                char *dt = mb_asprintf("%s.%s", p->dataset, p->table);
                mb_buf_puts(&x.out, del ? "DELETE FROM " : "UPDATE ");
                put_quoted_id(&x.out, dt);
                free(dt);
                if (is_kw(&x, i, "AS")) i++;
                if (T(&x, i)->type == T_IDENT && !is_kw(&x, i, "WHERE") && !is_kw(&x, i, "SET")) {
                    mb_buf_puts(&x.out, " AS ");
                    put_quoted_id(&x.out, T(&x, i)->text);
                    i++;
                }
                xrange(&x, i, end, 0);
                if (!x.failed) p->sql = mb_buf_steal(&x.out);
            }
        }
    } else if (is_kw(&x, 0, "MERGE")) {
        p->kind = GC_MERGE;
        plan_merge(&x, end, p);
    } else if (is_kw(&x, 0, "TRUNCATE") && is_kw(&x, 1, "TABLE")) {
        p->kind = GC_TRUNCATE;
        i = 2;
        target(&x, &i, p);
    } else if (is_kw(&x, 0, "DROP") && is_kw(&x, 1, "TABLE")) {
        p->kind = GC_DROP_TABLE;
        i = 2;
        if (is_kw(&x, i, "IF") && is_kw(&x, i + 1, "EXISTS")) {
            p->if_exists = 1;
            i += 2;
        }
        target(&x, &i, p);
    } else if ((is_kw(&x, 0, "CREATE") || is_kw(&x, 0, "DROP")) &&
               (is_kw(&x, 1, "SCHEMA") || is_kw(&x, 1, "DATASET"))) {
        p->kind = is_kw(&x, 0, "CREATE") ? GC_CREATE_SCHEMA : GC_DROP_SCHEMA;
        i = 2;
        if (is_kw(&x, i, "IF") && is_kw(&x, i + 1, "NOT") && is_kw(&x, i + 2, "EXISTS")) {
            p->if_not_exists = 1;
            i += 3;
        } else if (is_kw(&x, i, "IF") && is_kw(&x, i + 1, "EXISTS")) {
            p->if_exists = 1;
            i += 2;
        }
        json_t *parts = take_path(&x, &i, 1);
        size_t n = json_array_size(parts);
        if (n == 2 && strcmp(part(parts, 0), gc->project))
            fail(&x, MB_ENOTFOUND, "Not found: Project %s", part(parts, 0));
        else if (n > 2 || !*part(parts, n - 1))
            fail(&x, MB_EINVAL, "Syntax error: Expected a dataset name");
        else p->dataset = mb_strdup(part(parts, n - 1));
        json_decref(parts);
        if (is_kw(&x, i, "CASCADE")) {
            p->or_replace = 1; /* delete contents */
            i++;
        }
    } else if (is_kw(&x, 0, "CREATE")) {
        i = 1;
        if (is_kw(&x, i, "OR") && is_kw(&x, i + 1, "REPLACE")) {
            p->or_replace = 1;
            i += 2;
        }
        if (is_kw(&x, i, "TEMP") || is_kw(&x, i, "TEMPORARY")) unsupported(&x, "temporary tables");
        else if (!is_kw(&x, i, "TABLE")) {
            char *w = mb_asprintf("CREATE %s", T(&x, i)->text);
            unsupported(&x, w);
            free(w);
        } else {
            i++;
            if (is_kw(&x, i, "IF") && is_kw(&x, i + 1, "NOT") && is_kw(&x, i + 2, "EXISTS")) {
                p->if_not_exists = 1;
                i += 3;
            }
            if (!target(&x, &i, p)) {
                if (is_op(&x, i, "(")) {
                    p->fields = json_array();
                    i++;
                    parse_struct_fields(&x, &i, p->fields, ")");
                }
                /* PARTITION BY / CLUSTER BY / OPTIONS / AS query */
                size_t q = 0;
                int depth = 0;
                for (size_t k = i; k < end && !x.failed; k++) {
                    if (is_op(&x, k, "(")) depth++;
                    if (is_op(&x, k, ")")) depth--;
                    if (!depth && is_kw(&x, k, "AS")) {
                        q = k + 1;
                        break;
                    }
                    if (!depth && is_kw(&x, k, "OPTIONS") && is_op(&x, k + 1, "(")) {
                        size_t c = match_paren(&x, k + 1);
                        for (size_t m = k + 2; m + 2 < c; m++)
                            if (is_kw(&x, m, "description") && is_op(&x, m + 1, "=") &&
                                T(&x, m + 2)->type == T_STR)
                                p->description = mb_strdup(T(&x, m + 2)->text);
                        k = c;
                    }
                }
                if (q) {
                    p->kind = GC_CTAS;
                    if (!x.failed) plan_select(&x, q, end, p);
                } else {
                    p->kind = GC_CREATE_TABLE;
                    if (!p->fields && !x.failed)
                        fail(&x, MB_EINVAL, "Syntax error: CREATE TABLE needs a column list or AS query");
                }
            }
        }
    } else if (T(&x, 0)->type == T_EOF) {
        fail(&x, MB_EINVAL, "Syntax error: Unexpected end of script");
    } else {
        char *w = mb_asprintf("the statement %s", T(&x, 0)->text);
        for (char *c = w; *c; c++) *c = (char)toupper((unsigned char)*c);
        unsupported(&x, w);
        free(w);
    }
    rc = x.failed;
    mb_buf_free(&x.out);
    json_decref(x.records);
    json_decref(x.coltypes);
    json_decref(x.ctes);
    json_decref(x.colfields);
    json_decref(x.unnest);
    json_decref(x.unnest_at);
    if (!rc) {
        p->uses_arrays = x.uses_arrays;
        p->unnest = json_incref(x.unnest_order);
        p->star_hints = json_incref(x.star_hints);
    }
    json_decref(x.unnest_order);
    json_decref(x.star_hints);
    lexed_free(&x.l);
    if (rc) mb_gc__plan_free(p);
    return rc;
}

void mb_gc__plan_free(mb_gc_plan *p)
{
    free(p->sql);
    free(p->dataset);
    free(p->table);
    free(p->description);
    json_decref(p->fields);
    json_decref(p->hints);
    json_decref(p->unnest);
    json_decref(p->star_hints);
    json_decref(p->steps);
    memset(p, 0, sizeof *p);
}
