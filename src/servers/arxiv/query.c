/*
 * query.c - arXiv's search_query grammar, compiled for the catalog.
 *
 * The arXiv API (a Lucene index) takes field-prefixed terms (ti: au: abs: co:
 * jr: cat: rn: id: all:), "phrases", boolean operators AND / OR / ANDNOT,
 * parentheses and submittedDate:[FROM TO TO] ranges. This file tokenizes such
 * a query, parses it into a tree and compiles the tree into
 *   - one FTS5 MATCH expression for every full-text part that can be
 *     answered by the index (which walks it newest first, see catalog.c), and
 *   - an SQL condition for the rest (date ranges; OR / ANDNOT mixing text
 *     with dates, where the text becomes an IN-subquery).
 * Like Lucene it is lenient: odd input never fails; stop words are dropped
 * from bare terms; terms that analyse to nothing vanish from the query.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "servers/arxiv/arxiv.h"

#define MAX_DEPTH 64
#define MAX_NODES 4096

enum field { F_ALL, F_TI, F_AU, F_ABS, F_CO, F_JR, F_CAT, F_RN, F_ID, F_SUBMITTED, F_UPDATED };

static const struct { const char *name; enum field f; } FIELDS[] = {
    {"all", F_ALL}, {"ti", F_TI}, {"au", F_AU}, {"abs", F_ABS}, {"co", F_CO},
    {"jr", F_JR}, {"cat", F_CAT}, {"rn", F_RN}, {"id", F_ID},
    {"submittedDate", F_SUBMITTED}, {"lastUpdatedDate", F_UPDATED},
};

/* The FTS5 columns a field searches. */
static const char *field_columns(enum field f)
{
    switch (f) {
    case F_TI: return "ti";
    case F_AU: return "au";
    case F_ABS: return "abs";
    case F_CO: return "co";
    case F_JR: return "jr";
    case F_RN: return "rn";
    case F_CAT: return "cat";
    case F_ID: return "idx";
    default: return "{ti au abs co jr rn}";
    }
}

/* Lucene's classic English stop words (StandardAnalyzer). */
static const char *const STOP[] = {
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is",
    "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there",
    "these", "they", "this", "to", "was", "will", "with", NULL,
};

/* ---------------------------------------------------------------- tokens */

enum tok { T_END, T_LP, T_RP, T_AND, T_OR, T_ANDNOT, T_NOT, T_FIELD, T_WORD, T_PHRASE, T_RANGE };

typedef struct token {
    enum tok t;
    char *text;        /* T_WORD, T_PHRASE */
    enum field field;  /* T_FIELD */
    int64_t lo, hi;    /* T_RANGE; -1 = open */
    int bad;           /* T_RANGE that did not parse */
} token;

typedef struct lexer {
    const char *s;
    size_t i, n;
    token *toks;
    size_t ntoks, cap;
    int open, dropped; /* parenthesis nesting; '(' beyond MAX_DEPTH are dropped */
} lexer;

static void push(lexer *lx, token t)
{
    if (t.t != T_END && lx->ntoks >= MAX_NODES - 1) {
        free(t.text);
        return;
    }
    if (lx->ntoks == lx->cap) {
        lx->cap = lx->cap ? lx->cap * 2 : 32;
        lx->toks = mb_realloc(lx->toks, lx->cap * sizeof *lx->toks);
    }
    lx->toks[lx->ntoks++] = t;
}

static int sep(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' || c == '+';
}

/* "20230101", "202301010000", "20230101000000" or "*": unix seconds of the
 * start (end = 0) or the last second (end = 1) of that period; -1 for "*",
 * -2 when malformed. */
static int64_t range_bound(const char *s, size_t n, int end)
{
    if (n == 1 && s[0] == '*') return -1;
    if (n != 8 && n != 12 && n != 14) return -2;
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i])) return -2;
    int v[6] = {0, 1, 1, 0, 0, 0};
    const int w[6] = {4, 2, 2, 2, 2, 2};
    size_t pos = 0;
    for (int k = 0; k < 6 && pos < n; k++) {
        int x = 0;
        for (int j = 0; j < w[k]; j++) x = x * 10 + (s[pos++] - '0');
        v[k] = x;
    }
    if (v[1] < 1 || v[1] > 12 || v[2] < 1 || v[2] > 31 || v[3] > 23 || v[4] > 59 || v[5] > 59)
        return -2;
    struct tm tm = {.tm_year = v[0] - 1900, .tm_mon = v[1] - 1, .tm_mday = v[2],
                    .tm_hour = v[3], .tm_min = v[4], .tm_sec = v[5]};
    int64_t t = (int64_t)timegm(&tm);
    if (end) t += n == 8 ? 86399 : n == 12 ? 59 : 0;
    return t;
}

/* Reads "[lo TO hi]" at lx->i (which is at '['). */
static void lex_range(lexer *lx)
{
    size_t start = ++lx->i;
    while (lx->i < lx->n && lx->s[lx->i] != ']') lx->i++;
    size_t stop = lx->i;
    if (lx->i < lx->n) lx->i++;
    token t = {.t = T_RANGE, .bad = 1};
    char *body = mb_strndup(lx->s + start, stop - start);
    char *words[4] = {0};
    int nw = 0;
    char *save = NULL;
    for (char *w = strtok_r(body, " \t+", &save); w && nw < 4; w = strtok_r(NULL, " \t+", &save))
        words[nw++] = w;
    if (nw == 3 && !strcmp(words[1], "TO")) {
        t.lo = range_bound(words[0], strlen(words[0]), 0);
        t.hi = range_bound(words[2], strlen(words[2]), 1);
        t.bad = t.lo == -2 || t.hi == -2;
    }
    free(body);
    push(lx, t);
}

static void lex(lexer *lx)
{
    while (lx->i < lx->n) {
        char c = lx->s[lx->i];
        if (sep(c)) {
            lx->i++;
        } else if (c == '(') {
            lx->i++;
            if (lx->open >= MAX_DEPTH) lx->dropped++;
            else lx->open++, push(lx, (token){.t = T_LP});
        } else if (c == ')') {
            lx->i++;
            if (lx->dropped) lx->dropped--;
            else if (lx->open) lx->open--, push(lx, (token){.t = T_RP});
            else push(lx, (token){.t = T_RP});
        } else if (c == '"') {
            size_t start = ++lx->i;
            while (lx->i < lx->n && lx->s[lx->i] != '"') lx->i++;
            push(lx, (token){.t = T_PHRASE, .text = mb_strndup(lx->s + start, lx->i - start)});
            if (lx->i < lx->n) lx->i++;
        } else {
            size_t start = lx->i;
            while (lx->i < lx->n && !sep(lx->s[lx->i]) && !strchr("()\"", lx->s[lx->i])) {
                if (lx->s[lx->i] == ':') {
                    /* a known field name followed by ':' starts a new token */
                    size_t len = lx->i - start;
                    int found = -1;
                    for (size_t k = 0; k < sizeof FIELDS / sizeof *FIELDS; k++)
                        if (strlen(FIELDS[k].name) == len &&
                            !strncasecmp(FIELDS[k].name, lx->s + start, len))
                            found = (int)k;
                    if (found >= 0) {
                        lx->i++;
                        push(lx, (token){.t = T_FIELD, .field = FIELDS[found].f});
                        if ((FIELDS[found].f == F_SUBMITTED || FIELDS[found].f == F_UPDATED) &&
                            lx->i < lx->n && lx->s[lx->i] == '[')
                            lex_range(lx);
                        start = lx->i;
                        goto next;
                    }
                }
                lx->i++;
            }
            {
                size_t len = lx->i - start;
                const char *w = lx->s + start;
                if (len == 3 && !strncmp(w, "AND", 3)) push(lx, (token){.t = T_AND});
                else if (len == 2 && !strncmp(w, "OR", 2)) push(lx, (token){.t = T_OR});
                else if (len == 6 && !strncmp(w, "ANDNOT", 6)) push(lx, (token){.t = T_ANDNOT});
                else if (len == 3 && !strncmp(w, "NOT", 3)) push(lx, (token){.t = T_NOT});
                else if (len) push(lx, (token){.t = T_WORD, .text = mb_strndup(w, len)});
            }
        next:;
        }
    }
    push(lx, (token){.t = T_END});
}

/* ------------------------------------------------------------------ tree */

enum nk { N_EMPTY, N_TERM, N_RANGE, N_AND, N_OR, N_ANDNOT };

typedef struct node {
    enum nk k;
    struct node *a, *b;
    enum field field;
    char *fts;        /* N_TERM: the FTS5 phrase expression */
    int64_t lo, hi;   /* N_RANGE */
} node;

typedef struct parser {
    lexer lx;
    size_t pos;
    node **all; /* every node, for freeing */
    size_t nall, cap;
} parser;

static node *mk(parser *p, enum nk k)
{
    node *n = mb_calloc(1, sizeof *n);
    n->k = k;
    if (p->nall == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 32;
        p->all = mb_realloc(p->all, p->cap * sizeof *p->all);
    }
    p->all[p->nall++] = n;
    return n;
}

static node *bin(parser *p, enum nk k, node *a, node *b)
{
    if (b->k == N_EMPTY) return a;
    if (a->k == N_EMPTY) return k == N_ANDNOT ? a : b;
    node *n = mk(p, k);
    n->a = a, n->b = b;
    return n;
}

static token *cur(parser *p) { return &p->lx.toks[p->pos]; }

/* True if `s` holds a character the unicode61 tokenizer keeps in tokens
 * (letters and digits; every non-ASCII byte is taken as a letter). */
static int has_token_chars(const char *s)
{
    for (; *s; s++)
        if (isalnum((unsigned char)*s) || (unsigned char)*s >= 0x80) return 1;
    return 0;
}

static int single_token(const char *s)
{
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || (unsigned char)*s >= 0x80)) return 0;
    return 1;
}

static int is_stop(const char *s)
{
    for (size_t i = 0; STOP[i]; i++)
        if (!strcasecmp(STOP[i], s)) return 1;
    return 0;
}

/* `"text"` as an FTS5 string, quotes doubled. */
static void fts_string(mb_buf *b, const char *text)
{
    mb_buf_putc(b, '"');
    for (const char *c = text; *c; c++) {
        if (*c == '"') mb_buf_putc(b, '"');
        mb_buf_putc(b, *c);
    }
    mb_buf_putc(b, '"');
}

static node *term(parser *p, enum field f, const char *text, int phrase)
{
    if (f == F_SUBMITTED || f == F_UPDATED) return mk(p, N_EMPTY); /* needs a [range] */
    size_t len = strlen(text);
    int prefix = 0;
    char *word = mb_strdup(text);
    if (!phrase) {
        while (len > 0 && word[len - 1] == '*') word[--len] = '\0', prefix = 1;
        /* a trailing '?' or other wildcard is taken literally by the tokenizer */
    }
    node *n = mk(p, N_TERM);
    n->field = f;
    mb_buf b = {0};
    mb_buf_printf(&b, "%s : ", field_columns(f));
    if (f == F_CAT) {
        char *tok = mb_arxiv_cat_token(word);
        if (!*tok || !has_token_chars(tok)) {
            free(tok), free(word), mb_buf_free(&b);
            n->k = N_EMPTY;
            return n;
        }
        if (prefix || strchr(word, '.') || strchr(word, '-')) {
            fts_string(&b, tok);
            if (prefix) mb_buf_puts(&b, " *");
        } else {
            /* an archive ("cs", "math") also matches its categories ("cs.AI") */
            mb_buf_puts(&b, "(");
            fts_string(&b, tok);
            mb_buf_puts(&b, " OR ");
            char *dotted = mb_asprintf("%s.", word);
            char *dtok = mb_arxiv_cat_token(dotted);
            fts_string(&b, dtok);
            mb_buf_puts(&b, " *)");
            free(dotted), free(dtok);
        }
        free(tok);
    } else if (f == F_ID) {
        char *base = NULL;
        int v;
        char *tok = mb_arxiv_id_parse(word, &base, &v) == MB_OK ? mb_arxiv_id_token(base)
                                                                  : mb_arxiv_id_token(word);
        free(base);
        if (!has_token_chars(tok)) {
            free(tok), free(word), mb_buf_free(&b);
            n->k = N_EMPTY;
            return n;
        }
        fts_string(&b, tok);
        if (prefix) mb_buf_puts(&b, " *");
        free(tok);
    } else {
        if (!has_token_chars(word) ||
            (!phrase && !prefix && single_token(word) && is_stop(word))) {
            free(word), mb_buf_free(&b);
            n->k = N_EMPTY;
            return n;
        }
        fts_string(&b, word);
        if (prefix) mb_buf_puts(&b, " *");
    }
    free(word);
    n->fts = mb_buf_steal(&b);
    return n;
}

static node *parse_or(parser *p, enum field def);

static node *parse_unary(parser *p, enum field def)
{
    token *t = cur(p);
    switch (t->t) {
    case T_LP: {
        p->pos++;
        node *e = parse_or(p, def);
        if (cur(p)->t == T_RP) p->pos++;
        return e;
    }
    case T_FIELD: {
        enum field f = t->field;
        p->pos++;
        token *v = cur(p);
        if (v->t == T_RANGE) {
            p->pos++;
            if (v->bad || (f != F_SUBMITTED && f != F_UPDATED)) return mk(p, N_EMPTY);
            node *n = mk(p, N_RANGE);
            n->field = f, n->lo = v->lo, n->hi = v->hi;
            return n;
        }
        if (v->t == T_LP) return parse_unary(p, f);
        if (v->t == T_WORD || v->t == T_PHRASE) {
            p->pos++;
            return term(p, f, v->text, v->t == T_PHRASE);
        }
        return mk(p, N_EMPTY);
    }
    case T_WORD:
    case T_PHRASE:
        p->pos++;
        return term(p, def, t->text, t->t == T_PHRASE);
    case T_RANGE:
        p->pos++;
        return mk(p, N_EMPTY);
    case T_NOT:
    case T_ANDNOT:
        /* a purely negative clause matches nothing in Lucene */
        p->pos++;
        parse_unary(p, def);
        return mk(p, N_EMPTY);
    case T_AND:
    case T_OR:
        p->pos++;
        return parse_unary(p, def);
    default: /* T_END, T_RP */
        return mk(p, N_EMPTY);
    }
}

static node *parse_and(parser *p, enum field def)
{
    node *left = parse_unary(p, def);
    for (;;) {
        enum tok t = cur(p)->t;
        if (t == T_AND) {
            p->pos++;
            left = bin(p, N_AND, left, parse_unary(p, def));
        } else if (t == T_ANDNOT || t == T_NOT) {
            p->pos++;
            left = bin(p, N_ANDNOT, left, parse_unary(p, def));
        } else {
            return left;
        }
    }
}

static node *parse_or(parser *p, enum field def)
{
    node *left = parse_and(p, def);
    for (;;) {
        enum tok t = cur(p)->t;
        if (t == T_END || t == T_RP) return left;
        if (t == T_OR) p->pos++;
        size_t before = p->pos;
        node *right = parse_and(p, def);
        left = bin(p, N_OR, left, right);
        if (p->pos == before && cur(p)->t != T_END && cur(p)->t != T_RP) p->pos++;
    }
}

/* -------------------------------------------------------------- compiling */

typedef struct part {
    char *fts;      /* NULL: none */
    char *sql;      /* NULL: none */
    json_t *params; /* for sql, in order */
    const char *fts_op, *sql_op; /* "AND" / "OR" / "NOT" when the text is a chain
                                    of that operator at its top level, else NULL */
} part;

static void part_free(part *x)
{
    free(x->fts), free(x->sql);
    json_decref(x->params);
    memset(x, 0, sizeof *x);
}

/* The whole part as one SQL condition (over papers AS p); *top as join's. */
static char *as_sql(part *x, json_t *params, const char **top)
{
    mb_buf b = {0};
    mb_buf_puts(&b, "");
    *top = x->fts && x->sql ? "AND" : x->fts ? NULL : x->sql_op;
    if (x->fts) {
        mb_buf_puts(&b, "p.rowid IN (SELECT rowid FROM papers_fts WHERE papers_fts MATCH ?)");
        json_array_append_new(params, json_string(x->fts));
    }
    if (x->sql) {
        if (x->fts) mb_buf_printf(&b, " AND (%s)", x->sql);
        else mb_buf_puts(&b, x->sql);
        json_array_extend(params, x->params);
    }
    return mb_buf_steal(&b);
}

/* a op b. A side that is already a chain of the same associative operator
 * is not wrapped again, so that long chains stay flat: FTS5's parser and
 * SQLite's expression depth both have limits (100 and 1000 levels). *top
 * tells what the result is at its top level. */
static char *join(const char *a, const char *a_op, const char *op, const char *b,
                  const char *b_op, const char **top)
{
    if (!a || !b) {
        *top = a ? a_op : b_op;
        return a ? mb_strdup(a) : b ? mb_strdup(b) : NULL;
    }
    /* AND and OR are associative; NOT (FTS5's binary one) is left-associative */
    int assoc = !strcmp(op, "AND") || !strcmp(op, "OR");
    int flat_a = a_op && !strcmp(a_op, op);
    int flat_b = assoc && b_op && !strcmp(b_op, op);
    *top = op;
    return mb_asprintf("%s%s%s %s %s%s%s", flat_a ? "" : "(", a, flat_a ? "" : ")", op,
                       flat_b ? "" : "(", b, flat_b ? "" : ")");
}

static part compile(node *n)
{
    part r = {0};
    r.params = json_array();
    switch (n->k) {
    case N_EMPTY: break;
    case N_TERM: r.fts = mb_strdup(n->fts); break;
    case N_RANGE: {
        const char *col = n->field == F_SUBMITTED ? "p.rowid" : "p.updated";
        int64_t lo = n->lo < 0 ? INT64_MIN : n->field == F_SUBMITTED ? n->lo * (1 << 20) : n->lo;
        int64_t hi = n->hi < 0 ? INT64_MAX
                     : n->field == F_SUBMITTED ? n->hi * (1 << 20) + ((1 << 20) - 1) : n->hi;
        r.sql = mb_asprintf("%s BETWEEN %lld AND %lld", col, (long long)lo, (long long)hi);
        break;
    }
    case N_AND: {
        part a = compile(n->a), b = compile(n->b);
        r.fts = join(a.fts, a.fts_op, "AND", b.fts, b.fts_op, &r.fts_op);
        r.sql = join(a.sql, a.sql_op, "AND", b.sql, b.sql_op, &r.sql_op);
        json_array_extend(r.params, a.params);
        json_array_extend(r.params, b.params);
        part_free(&a), part_free(&b);
        break;
    }
    case N_OR: {
        part a = compile(n->a), b = compile(n->b);
        if (!a.sql && !b.sql) {
            r.fts = join(a.fts, a.fts_op, "OR", b.fts, b.fts_op, &r.fts_op);
        } else {
            const char *ta, *tb;
            char *sa = as_sql(&a, r.params, &ta);
            char *sb = as_sql(&b, r.params, &tb);
            r.sql = join(sa, ta, "OR", sb, tb, &r.sql_op);
            free(sa), free(sb);
        }
        part_free(&a), part_free(&b);
        break;
    }
    case N_ANDNOT: {
        part a = compile(n->a), b = compile(n->b);
        if (!b.sql && a.fts) {
            r.fts = join(a.fts, a.fts_op, "NOT", b.fts, b.fts_op, &r.fts_op);
            r.sql = a.sql ? mb_strdup(a.sql) : NULL;
            r.sql_op = a.sql_op;
            json_array_extend(r.params, a.params);
        } else {
            r.fts = a.fts ? mb_strdup(a.fts) : NULL;
            r.fts_op = a.fts_op;
            json_t *neg = json_array();
            const char *tb;
            char *sb = as_sql(&b, neg, &tb);
            if (a.sql) {
                r.sql = mb_asprintf("%s%s%s AND NOT (%s)", a.sql_op && !strcmp(a.sql_op, "AND")
                                    ? "" : "(", a.sql, a.sql_op && !strcmp(a.sql_op, "AND") ? ""
                                    : ")", sb);
                r.sql_op = "AND";
                json_array_extend(r.params, a.params);
            } else {
                r.sql = mb_asprintf("NOT (%s)", sb);
            }
            json_array_extend(r.params, neg);
            json_decref(neg);
            free(sb);
        }
        part_free(&a), part_free(&b);
        break;
    }
    }
    return r;
}

int mb_arxiv_query_compile(const char *q, mb_arxiv_query *out)
{
    memset(out, 0, sizeof *out);
    parser p = {0};
    p.lx.s = q ? q : "";
    p.lx.n = strlen(p.lx.s);
    lex(&p.lx);
    node *root = mk(&p, N_EMPTY);
    while (cur(&p)->t != T_END) {
        size_t before = p.pos;
        root = bin(&p, N_OR, root, parse_or(&p, F_ALL));
        if (cur(&p)->t == T_RP || p.pos == before) p.pos++; /* a stray ')' */
        if (p.pos >= p.lx.ntoks) break;
    }
    part r = compile(root);
    out->params = json_array();
    if (!r.fts && !r.sql) out->nothing = 1;
    if (r.fts) {
        out->match = r.fts;
        json_array_append_new(out->params, json_string(r.fts));
        r.fts = NULL;
    }
    if (r.sql) {
        out->where = r.sql;
        json_array_extend(out->params, r.params);
        r.sql = NULL;
    }
    part_free(&r);
    for (size_t i = 0; i < p.nall; i++) {
        free(p.all[i]->fts);
        free(p.all[i]);
    }
    free(p.all);
    for (size_t i = 0; i < p.lx.ntoks; i++) free(p.lx.toks[i].text);
    free(p.lx.toks);
    return MB_OK;
}

void mb_arxiv_query_dispose(mb_arxiv_query *q)
{
    if (!q) return;
    free(q->match), free(q->where);
    json_decref(q->params);
    memset(q, 0, sizeof *q);
}

/* ----------------------------------------------------------- token forms */

char *mb_arxiv_cat_token(const char *cat)
{
    /* categories hold letters, '.' and '-' only: digits can mark those */
    mb_buf b = {0};
    mb_buf_puts(&b, "");
    for (const char *c = cat; *c; c++) {
        if (isalpha((unsigned char)*c)) mb_buf_putc(&b, (char)tolower((unsigned char)*c));
        else if (*c == '.') mb_buf_putc(&b, '0');
        else if (*c == '-') mb_buf_putc(&b, '1');
        else if (*c == '_') mb_buf_putc(&b, '2');
    }
    return mb_buf_steal(&b);
}

char *mb_arxiv_id_token(const char *id)
{
    mb_buf b = {0};
    mb_buf_puts(&b, "");
    for (const char *c = id; *c; c++) {
        if (isalnum((unsigned char)*c)) mb_buf_putc(&b, (char)tolower((unsigned char)*c));
        else if (*c == '.') mb_buf_putc(&b, 'x');
        else if (*c == '/') mb_buf_putc(&b, 'y');
        else if (*c == '-') mb_buf_putc(&b, 'z');
    }
    return mb_buf_steal(&b);
}
