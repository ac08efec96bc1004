/*
 * catalog.c - the offline arXiv catalog: papers' metadata in SQLite with an
 * FTS5 index (external content, kept by triggers), PDFs and markdown as files
 * beside it (see arxiv.h for the layout).
 *
 * rowid = published << 20 | n, where n separates papers submitted in the same
 * second. Newest first is then ORDER BY rowid DESC, which FTS5 serves from
 * its index in that order, so a search reads max_results rows, not every
 * match; submittedDate ranges become rowid ranges.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "servers/arxiv/arxiv.h"

#define SEQ_BITS 20

struct mb_arxiv_catalog {
    sqlite3 *db;
    char *dir;
    int writable;
    sqlite3_stmt *get, *put, *del, *slot;
};

static const char SCHEMA[] =
    "CREATE TABLE IF NOT EXISTS papers("
    " rowid INTEGER PRIMARY KEY,"
    " id TEXT NOT NULL UNIQUE,"
    " version INTEGER NOT NULL,"
    " versions TEXT NOT NULL,"
    " updated INTEGER NOT NULL,"
    " ti TEXT NOT NULL, au TEXT NOT NULL, abs TEXT NOT NULL,"
    " co TEXT, jr TEXT, rn TEXT, doi TEXT,"
    " cats TEXT NOT NULL, cat TEXT NOT NULL, idx TEXT NOT NULL);"
    "CREATE INDEX IF NOT EXISTS papers_updated ON papers(updated);"
    "CREATE VIRTUAL TABLE IF NOT EXISTS papers_fts USING fts5("
    " ti, au, abs, co, jr, rn, cat, idx, content='papers', content_rowid='rowid',"
    " tokenize='unicode61 remove_diacritics 2');"
    "CREATE TRIGGER IF NOT EXISTS papers_ai AFTER INSERT ON papers BEGIN"
    " INSERT INTO papers_fts(rowid, ti, au, abs, co, jr, rn, cat, idx)"
    " VALUES (new.rowid, new.ti, new.au, new.abs, new.co, new.jr, new.rn, new.cat, new.idx);"
    " END;"
    "CREATE TRIGGER IF NOT EXISTS papers_ad AFTER DELETE ON papers BEGIN"
    " INSERT INTO papers_fts(papers_fts, rowid, ti, au, abs, co, jr, rn, cat, idx)"
    " VALUES ('delete', old.rowid, old.ti, old.au, old.abs, old.co, old.jr, old.rn, old.cat,"
    " old.idx);"
    " END;";

#define COLS "p.rowid, p.id, p.version, p.versions, p.ti, p.au, p.abs, p.co, p.jr, p.rn, " \
             "p.doi, p.cats"

static int db_err(mb_arxiv_catalog *c, mb_err *err, const char *what)
{
    return mb_err_set(err, MB_EIO, "arXiv catalog %s/catalog.sqlite: %s: %s", c->dir, what,
                      sqlite3_errmsg(c->db));
}

void mb_arxiv_catalog_close(mb_arxiv_catalog *c)
{
    if (!c) return;
    sqlite3_finalize(c->get);
    sqlite3_finalize(c->put);
    sqlite3_finalize(c->del);
    sqlite3_finalize(c->slot);
    sqlite3_close(c->db);
    free(c->dir);
    free(c);
}

/* "file:" URI of a path, with the characters URIs reserve escaped. */
static char *file_uri(const char *path, const char *query)
{
    mb_buf b = {0};
    mb_buf_puts(&b, "file:");
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if (*p == '%' || *p == '?' || *p == '#' || *p < 0x21 || *p >= 0x7f)
            mb_buf_printf(&b, "%%%02X", *p);
        else
            mb_buf_putc(&b, (char)*p);
    }
    mb_buf_printf(&b, "?%s", query);
    return mb_buf_steal(&b);
}

int mb_arxiv_catalog_open(const char *dir, int writable, mb_arxiv_catalog **out, mb_err *err)
{
    *out = NULL;
    if (writable) {
        int rc = mb_mkdir_p(dir, 0755, err);
        if (rc) return rc;
        char *sub = mb_asprintf("%s/pdf", dir);
        rc = mb_mkdir_p(sub, 0755, err);
        free(sub);
        if (rc) return rc;
        sub = mb_asprintf("%s/md", dir);
        rc = mb_mkdir_p(sub, 0755, err);
        free(sub);
        if (rc) return rc;
    }
    char *path = mb_asprintf("%s/catalog.sqlite", dir);
    if (!writable && access(path, R_OK) != 0) {
        int e = errno;
        free(path);
        return mb_err_sys(err, e, "no arXiv catalog at %s/catalog.sqlite (build one with "
                                  "`mcpbox arxiv import`)", dir);
    }
    mb_arxiv_catalog *c = mb_calloc(1, sizeof *c);
    c->dir = mb_strdup(dir);
    c->writable = writable;
    /* a read-only catalog may sit on a read-only mount: immutable needs no
     * lock or journal files */
    char *uri = file_uri(path, writable ? "mode=rwc" : "immutable=1");
    int flags = SQLITE_OPEN_URI | (writable ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
                                            : SQLITE_OPEN_READONLY);
    int rc = sqlite3_open_v2(uri, &c->db, flags, NULL);
    free(uri);
    free(path);
    if (rc != SQLITE_OK) {
        rc = db_err(c, err, "open");
        mb_arxiv_catalog_close(c);
        return rc;
    }
    sqlite3_busy_timeout(c->db, 10000);
    if (writable && sqlite3_exec(c->db, SCHEMA, NULL, NULL, NULL) != SQLITE_OK) {
        rc = db_err(c, err, "create schema");
        mb_arxiv_catalog_close(c);
        return rc;
    }
    if (sqlite3_prepare_v2(c->db, "SELECT " COLS " FROM papers p WHERE p.id = ?", -1, &c->get,
                           NULL) != SQLITE_OK) {
        rc = db_err(c, err, "read the schema (not an arXiv catalog?)");
        mb_arxiv_catalog_close(c);
        return rc;
    }
    if (writable &&
        (sqlite3_prepare_v2(c->db,
                            "INSERT INTO papers(rowid, id, version, versions, updated, ti, au, "
                            "abs, co, jr, rn, doi, cats, cat, idx) VALUES "
                            "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                            -1, &c->put, NULL) != SQLITE_OK ||
         sqlite3_prepare_v2(c->db, "DELETE FROM papers WHERE id = ?", -1, &c->del, NULL) !=
             SQLITE_OK ||
         sqlite3_prepare_v2(c->db, "SELECT max(rowid) FROM papers WHERE rowid BETWEEN ? AND ?",
                            -1, &c->slot, NULL) != SQLITE_OK)) {
        rc = db_err(c, err, "prepare");
        mb_arxiv_catalog_close(c);
        return rc;
    }
    *out = c;
    return MB_OK;
}

const char *mb_arxiv_catalog_dir(const mb_arxiv_catalog *c) { return c->dir; }
int mb_arxiv_catalog_writable(const mb_arxiv_catalog *c) { return c->writable; }

int mb_arxiv_catalog_begin(mb_arxiv_catalog *c, mb_err *err)
{
    if (sqlite3_exec(c->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) return db_err(c, err, "begin");
    return MB_OK;
}

int mb_arxiv_catalog_commit(mb_arxiv_catalog *c, mb_err *err)
{
    if (sqlite3_exec(c->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        return db_err(c, err, "commit");
    return MB_OK;
}

int64_t mb_arxiv_catalog_count(mb_arxiv_catalog *c)
{
    sqlite3_stmt *st;
    int64_t n = -1;
    if (sqlite3_prepare_v2(c->db, "SELECT count(*) FROM papers", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

/* ------------------------------------------------------------- rows */

static char *col_text(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? mb_strdup((const char *)t) : NULL;
}

static void split_into(const char *s, char sepc, char ***arr, size_t *n)
{
    *arr = NULL;
    *n = 0;
    if (!s || !*s) return;
    const char *start = s;
    for (const char *c = s;; c++) {
        if (*c == sepc || !*c) {
            if (c > start) {
                *arr = mb_realloc(*arr, (*n + 1) * sizeof **arr);
                (*arr)[(*n)++] = mb_strndup(start, (size_t)(c - start));
            }
            if (!*c) break;
            start = c + 1;
        }
    }
}

static void row_to_paper(sqlite3_stmt *st, mb_arxiv_paper *p)
{
    memset(p, 0, sizeof *p);
    p->published = sqlite3_column_int64(st, 0) >> SEQ_BITS;
    p->id = col_text(st, 1);
    p->version = sqlite3_column_int(st, 2);
    json_t *vs = json_loads((const char *)sqlite3_column_text(st, 3), 0, NULL);
    size_t i;
    json_t *v;
    json_array_foreach(vs, i, v) {
        if (i >= MB_ARXIV_MAX_VERSIONS) break;
        p->versions[i] = json_integer_value(v);
    }
    json_decref(vs);
    p->title = col_text(st, 4);
    split_into((const char *)sqlite3_column_text(st, 5), '\n', &p->authors, &p->n_authors);
    p->abstract = col_text(st, 6);
    p->comment = col_text(st, 7);
    p->journal_ref = col_text(st, 8);
    p->report_no = col_text(st, 9);
    p->doi = col_text(st, 10);
    split_into((const char *)sqlite3_column_text(st, 11), ' ', &p->cats, &p->n_cats);
    if (!p->title) p->title = mb_strdup("");
    if (!p->abstract) p->abstract = mb_strdup("");
}

int mb_arxiv_catalog_get(mb_arxiv_catalog *c, const char *id, mb_arxiv_paper *out, mb_err *err)
{
    memset(out, 0, sizeof *out);
    sqlite3_reset(c->get);
    sqlite3_bind_text(c->get, 1, id, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(c->get);
    if (rc == SQLITE_ROW) {
        row_to_paper(c->get, out);
        sqlite3_reset(c->get);
        return MB_OK;
    }
    sqlite3_reset(c->get);
    if (rc == SQLITE_DONE) return mb_err_set(err, MB_ENOTFOUND, "%s is not in the catalog", id);
    return db_err(c, err, "read");
}

static void bind_opt(sqlite3_stmt *st, int i, const char *s)
{
    if (s) sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
    else sqlite3_bind_null(st, i);
}

int mb_arxiv_catalog_put(mb_arxiv_catalog *c, const mb_arxiv_paper *p, mb_err *err)
{
    if (!c->writable) return mb_err_set(err, MB_EDENIED, "the arXiv catalog is read-only");
    if (p->published <= 0 || p->published >= ((int64_t)1 << 42))
        return mb_err_set(err, MB_EINVAL, "%s: submission date out of range", p->id);
    int64_t base = p->published << SEQ_BITS, rowid = -1;
    mb_arxiv_paper old;
    if (mb_arxiv_catalog_get(c, p->id, &old, NULL) == MB_OK) {
        sqlite3_stmt *st;
        /* keep the slot of a paper whose date did not change */
        if (old.published == p->published &&
            sqlite3_prepare_v2(c->db, "SELECT rowid FROM papers WHERE id = ?", -1, &st, NULL) ==
                SQLITE_OK) {
            sqlite3_bind_text(st, 1, p->id, -1, SQLITE_TRANSIENT);
            if (sqlite3_step(st) == SQLITE_ROW) rowid = sqlite3_column_int64(st, 0);
            sqlite3_finalize(st);
        }
        mb_arxiv_paper_dispose(&old);
        sqlite3_reset(c->del);
        sqlite3_bind_text(c->del, 1, p->id, -1, SQLITE_TRANSIENT);
        if (sqlite3_step(c->del) != SQLITE_DONE) {
            sqlite3_reset(c->del);
            return db_err(c, err, "replace");
        }
        sqlite3_reset(c->del);
    }
    if (rowid < 0) {
        sqlite3_reset(c->slot);
        sqlite3_bind_int64(c->slot, 1, base);
        sqlite3_bind_int64(c->slot, 2, base + ((1 << SEQ_BITS) - 1));
        rowid = base;
        if (sqlite3_step(c->slot) == SQLITE_ROW && sqlite3_column_type(c->slot, 0) != SQLITE_NULL)
            rowid = sqlite3_column_int64(c->slot, 0) + 1;
        sqlite3_reset(c->slot);
        if (rowid > base + ((1 << SEQ_BITS) - 1))
            return mb_err_set(err, MB_ETOOBIG, "%s: too many papers in one second", p->id);
    }
    mb_buf au = {0}, cats = {0}, cat = {0}, vs = {0};
    mb_buf_puts(&au, ""), mb_buf_puts(&cats, ""), mb_buf_puts(&cat, ""), mb_buf_puts(&vs, "[");
    for (size_t i = 0; i < p->n_authors; i++) {
        if (i) mb_buf_putc(&au, '\n');
        for (const char *ch = p->authors[i]; *ch; ch++) mb_buf_putc(&au, *ch == '\n' ? ' ' : *ch);
    }
    for (size_t i = 0; i < p->n_cats; i++) {
        char *tok = mb_arxiv_cat_token(p->cats[i]);
        mb_buf_printf(&cats, "%s%s", i ? " " : "", p->cats[i]);
        mb_buf_printf(&cat, "%s%s", i ? " " : "", tok);
        free(tok);
    }
    int nv = p->version < MB_ARXIV_MAX_VERSIONS ? p->version : MB_ARXIV_MAX_VERSIONS;
    for (int i = 0; i < nv; i++)
        mb_buf_printf(&vs, "%s%lld", i ? "," : "",
                      (long long)(i == 0 && !p->versions[0] ? p->published : p->versions[i]));
    mb_buf_putc(&vs, ']');
    char *idtok = mb_arxiv_id_token(p->id);
    sqlite3_stmt *st = c->put;
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, rowid);
    sqlite3_bind_text(st, 2, p->id, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 3, p->version);
    sqlite3_bind_text(st, 4, vs.data, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 5, mb_arxiv_paper_updated(p, p->version));
    sqlite3_bind_text(st, 6, p->title ? p->title : "", -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 7, au.data, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 8, p->abstract ? p->abstract : "", -1, SQLITE_TRANSIENT);
    bind_opt(st, 9, p->comment);
    bind_opt(st, 10, p->journal_ref);
    bind_opt(st, 11, p->report_no);
    bind_opt(st, 12, p->doi);
    sqlite3_bind_text(st, 13, cats.data, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 14, cat.data, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 15, idtok, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(st) == SQLITE_DONE ? MB_OK : db_err(c, err, "insert");
    sqlite3_reset(st);
    free(idtok);
    mb_buf_free(&au), mb_buf_free(&cats), mb_buf_free(&cat), mb_buf_free(&vs);
    return rc;
}

/* ----------------------------------------------------------- searching */

/* The where part for the MATCH form of the query: submittedDate ranges
 * ("p.rowid BETWEEN", see query.c) on papers_fts.rowid, the same value through
 * the join, which FTS5 can seek to instead of filtering every match. */
static char *on_fts_rowid(const char *where)
{
    static const char FROM[] = "p.rowid BETWEEN ", TO[] = "papers_fts.rowid BETWEEN ";
    mb_buf b = {0};
    mb_buf_puts(&b, "");
    for (const char *s = where, *hit; *s; s = hit + sizeof FROM - 1) {
        if (!(hit = strstr(s, FROM))) {
            mb_buf_puts(&b, s);
            break;
        }
        mb_buf_append(&b, s, (size_t)(hit - s));
        mb_buf_puts(&b, TO);
    }
    return mb_buf_steal(&b);
}

int mb_arxiv_catalog_search(mb_arxiv_catalog *c, const char *query, long limit,
                            mb_arxiv_each_fn each, void *ctx, mb_err *err)
{
    mb_arxiv_query q;
    mb_arxiv_query_compile(query, &q);
    if (q.nothing || limit == 0) {
        mb_arxiv_query_dispose(&q);
        return MB_OK;
    }
    mb_buf sql = {0};
    if (q.match) {
        mb_buf_puts(&sql, "SELECT " COLS " FROM papers_fts JOIN papers p ON p.rowid = "
                          "papers_fts.rowid WHERE papers_fts MATCH ?");
        if (q.where) {
            char *w = on_fts_rowid(q.where);
            mb_buf_printf(&sql, " AND (%s)", w);
            free(w);
        }
        mb_buf_puts(&sql, " ORDER BY papers_fts.rowid DESC");
    } else {
        mb_buf_printf(&sql, "SELECT " COLS " FROM papers p WHERE %s ORDER BY p.rowid DESC",
                      q.where);
    }
    if (limit > 0) mb_buf_printf(&sql, " LIMIT %ld", limit);
    sqlite3_stmt *st = NULL;
    int rc = MB_OK;
    if (sqlite3_prepare_v2(c->db, sql.data, -1, &st, NULL) != SQLITE_OK) {
        rc = db_err(c, err, "search");
        goto out;
    }
    size_t i;
    json_t *v;
    json_array_foreach(q.params, i, v) {
        if (json_is_string(v)) sqlite3_bind_text(st, (int)i + 1, json_string_value(v), -1,
                                                 SQLITE_TRANSIENT);
        else sqlite3_bind_int64(st, (int)i + 1, json_integer_value(v));
    }
    int s;
    while ((s = sqlite3_step(st)) == SQLITE_ROW) {
        mb_arxiv_paper p;
        row_to_paper(st, &p);
        int stop = each(&p, ctx);
        mb_arxiv_paper_dispose(&p);
        if (stop) break;
    }
    if (s != SQLITE_ROW && s != SQLITE_DONE) rc = db_err(c, err, "search");
out:
    sqlite3_finalize(st);
    mb_buf_free(&sql);
    mb_arxiv_query_dispose(&q);
    return rc;
}

/* --------------------------------------------------------------- files */

static char *existing(const mb_arxiv_catalog *c, const char *kind, const char *id, int v)
{
    char *name = mb_arxiv_id_file(id, v, kind);
    char *path = mb_asprintf("%s/%s/%s", c->dir, kind, name);
    free(name);
    struct stat st;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) return path;
    free(path);
    return NULL;
}

char *mb_arxiv_catalog_file(const mb_arxiv_catalog *c, const char *id, int version, int latest,
                            const char *kind)
{
    char *p;
    if (version > 0) {
        if ((p = existing(c, kind, id, version))) return p;
        return version == latest ? existing(c, kind, id, 0) : NULL;
    }
    if ((p = existing(c, kind, id, 0))) return p;
    for (int v = latest; v >= 1; v--)
        if ((p = existing(c, kind, id, v))) return p;
    return NULL;
}
