/*
 * download.c - download_paper of arxiv-mcp-server 0.2.x (tools/download.py):
 * the PDF is put into the storage directory as <paper_id>.pdf and converted
 * to <paper_id>.md in the background; the first call answers "converting",
 * later calls "success" once the markdown exists. Upstream's per-process
 * status table is kept as it is, quirks included: a download that failed
 * (unknown id, no PDF) stays "downloading" for the life of the process.
 *
 * The PDF comes from the catalog (or, online, from arxiv.org). The markdown
 * is the catalog's pre-converted file when it has one, else the text poppler's
 * pdftotext extracts (a child process under a timeout and a memory cap), each
 * page followed by a "-----" rule as pymupdf4llm separates pages.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "mcp/mcp.h"
#include "servers/arxiv/arxiv.h"
#include "servers/common/proc.h"

#define PDF_MEMORY_LIMIT "--as=2147483648"

/* datetime.now().isoformat() (naive local time). */
static void py_isoformat(double t, char out[40])
{
    time_t sec = (time_t)t;
    long us = (long)((t - (double)sec) * 1e6);
    if (us < 0) us = 0;
    if (us > 999999) us = 999999;
    struct tm tm;
    localtime_r(&sec, &tm);
    size_t n = strftime(out, 40, "%Y-%m-%dT%H:%M:%S", &tm);
    if (us) snprintf(out + n, 40 - n, ".%06ld", us);
}

static double now_seconds(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static void dumps(mb_buf *out, json_t *v)
{
    char *s = mb_py_json_dumps(v, -1, 1);
    mb_buf_puts(out, s);
    free(s);
    json_decref(v);
}

static json_t *obj2(const char *status, const char *message)
{
    json_t *o = json_object();
    json_object_set_new(o, "status", json_string(status));
    json_object_set_new(o, "message", json_string(message));
    return o;
}

static mb_arxiv_conv *find(mb_arxiv_server *s, const char *paper_id)
{
    for (size_t i = 0; i < s->nconvs; i++)
        if (!strcmp(s->convs[i]->paper_id, paper_id)) return s->convs[i];
    return NULL;
}

/* storage / f"{paper_id}{suffix}", or NULL for ids that would leave the
 * storage directory (upstream joins blindly; such ids are never arXiv ids). */
static char *paper_path(mb_arxiv_server *s, const char *paper_id, const char *suffix)
{
    if (!*paper_id || paper_id[0] == '/' || strstr(paper_id, "..") || strlen(paper_id) > 512)
        return NULL;
    return mb_asprintf("%s/%s%s", s->storage, paper_id, suffix);
}

static int is_file(const char *path)
{
    struct stat st;
    return path && stat(path, &st) == 0;
}

/* Copies a file (the storage copy of a catalog PDF). 0 or an errno. */
static int copy_file(const char *src, const char *dst)
{
    int in = open(src, O_RDONLY | O_CLOEXEC);
    if (in < 0) return errno;
    int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out < 0) {
        int e = errno;
        close(in);
        return e;
    }
    char buf[65536];
    int e = 0;
    for (;;) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            e = errno;
            break;
        }
        if (n == 0) break;
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(out, buf + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR) continue;
            if (w < 0) {
                e = errno;
                break;
            }
            off += w;
        }
        if (e) break;
    }
    close(in);
    if (close(out) != 0 && !e) e = errno;
    return e;
}

/* -------------------------------------------------------- conversion */

/* pdftotext's pages (each ends in a form feed) as markdown text. */
static void pages_to_markdown(const char *text, size_t len, mb_buf *md)
{
    size_t start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && text[i] != '\f') continue;
        size_t end = i;
        if (i == len && end == start) break; /* nothing after the last page */
        while (end > start && (text[end - 1] == '\n' || text[end - 1] == ' ')) end--;
        size_t b = start;
        while (b < end && text[b] == '\n') b++;
        mb_buf_append(md, text + b, end - b);
        mb_buf_puts(md, "\n\n-----\n\n");
        start = i + 1;
    }
}

static int convert_pdf(const char *pdf, int timeout_s, mb_buf *md, mb_buf *why)
{
    const char *argv[] = {"prlimit", PDF_MEMORY_LIMIT, "--", "pdftotext", "-q", "-enc", "UTF-8",
                          pdf, "-", NULL};
    if (access("/usr/bin/prlimit", X_OK) != 0) memmove(argv, argv + 3, 7 * sizeof *argv);
    mb_proc_spec spec = {.argv = argv, .timeout_ms = timeout_s * 1000,
                         .max_output = (size_t)256 << 20, .kill_on_overflow = 1,
                         .kill_group = 1, .watch_fd = -1};
    mb_proc_result r;
    mb_err err = {0};
    if (mb_proc_run(&spec, &r, &err) != MB_OK) {
        mb_buf_puts(why, err.msg);
        return -1;
    }
    int rc = 0;
    if (r.spawn_errno) {
        char *m = mb_py_os_error(r.spawn_errno, "pdftotext");
        mb_buf_puts(why, m);
        free(m);
        rc = -1;
    } else if (r.timed_out) {
        mb_buf_printf(why, "conversion of %s took longer than %d seconds", pdf, timeout_s);
        rc = -1;
    } else if (!r.exited || r.exit_code != 0) {
        size_t n = r.err.len;
        while (n && (r.err.data[n - 1] == '\n' || r.err.data[n - 1] == ' ')) n--;
        if (n) mb_buf_printf(why, "%.*s", (int)(n > 300 ? 300 : n), r.err.data);
        else mb_buf_printf(why, "cannot open document: %s (pdftotext exit %d)", pdf, r.exit_code);
        rc = -1;
    } else {
        size_t len;
        char *text = mb_utf8_repair(r.out.data ? r.out.data : "", r.out.len, &len);
        pages_to_markdown(text, len, md);
        free(text);
    }
    mb_proc_result_free(&r);
    return rc;
}

typedef struct job {
    mb_arxiv_server *s;
    mb_arxiv_conv *c;
} job;

static void *convert_main(void *arg)
{
    job *j = arg;
    mb_arxiv_conv *c = j->c;
    mb_buf md = {0}, why = {0};
    mb_buf_puts(&md, ""), mb_buf_puts(&why, "");
    int rc;
    if (c->src_is_md) {
        char *data = NULL;
        size_t len = 0;
        mb_err err = {0};
        rc = mb_read_file(c->src, (size_t)1 << 30, &data, &len, &err);
        if (rc == MB_OK) mb_buf_append(&md, data, len);
        else mb_buf_puts(&why, err.msg);
        free(data);
        rc = rc == MB_OK ? 0 : -1;
    } else {
        rc = convert_pdf(c->src, j->s->convert_timeout_s, &md, &why);
    }
    if (rc == 0) {
        mb_err err = {0};
        if (mb_write_file_atomic(c->dest, md.data, md.len, 0644, &err) != MB_OK) {
            mb_buf_reset(&why);
            mb_buf_puts(&why, err.msg);
            rc = -1;
        }
    }
    pthread_mutex_lock(&j->s->lock);
    snprintf(c->status, sizeof c->status, "%s", rc == 0 ? "success" : "error");
    c->completed_at = now_seconds();
    if (rc) c->error = mb_strdup(why.data);
    pthread_mutex_unlock(&j->s->lock);
    if (rc) fprintf(stderr, "arxiv: conversion of %s failed: %s\n", c->paper_id, why.data);
    mb_buf_free(&md), mb_buf_free(&why);
    free(j);
    return NULL;
}

void mb_arxiv_convs_free(mb_arxiv_server *s)
{
    for (size_t i = 0; i < s->nconvs; i++) {
        mb_arxiv_conv *c = s->convs[i];
        if (c->has_thread) pthread_join(c->thread, NULL);
        free(c->paper_id), free(c->error), free(c->src), free(c->dest);
        free(c);
    }
    free(s->convs);
    s->convs = NULL;
    s->nconvs = 0;
}

/* ------------------------------------------------------------ the tool */

static void status_reply(mb_buf *out, mb_arxiv_conv *c, int full)
{
    char started[40], completed[40];
    py_isoformat(c->started_at, started);
    json_t *o = json_object();
    json_object_set_new(o, "status", json_string(c->status));
    if (full) {
        json_object_set_new(o, "started_at", json_string(started));
        if (c->completed_at > 0) {
            py_isoformat(c->completed_at, completed);
            json_object_set_new(o, "completed_at", json_string(completed));
        } else {
            json_object_set_new(o, "completed_at", json_null());
        }
        json_object_set_new(o, "error", c->error ? json_string(c->error) : json_null());
    }
    char *msg = mb_asprintf("Paper conversion %s", c->status);
    json_object_set_new(o, "message", json_string(msg));
    free(msg);
    if (!full) json_object_set_new(o, "started_at", json_string(started));
    dumps(out, o);
}

static void success_reply(mb_buf *out, const char *message, const char *md)
{
    json_t *o = obj2("success", message);
    char *uri = mb_asprintf("file://%s", md);
    json_object_set_new(o, "resource_uri", json_string(uri));
    free(uri);
    dumps(out, o);
}

static void error_reply(mb_buf *out, const char *message)
{
    dumps(out, obj2("error", message));
}

int mb_arxiv_t_download(mb_arxiv_server *s, json_t *args, mb_buf *out)
{
    const char *paper_id = json_string_value(json_object_get(args, "paper_id"));
    json_t *cs = json_object_get(args, "check_status");
    int check = cs && !json_is_false(cs) && !json_is_null(cs);
    mb_mkdir_p(s->storage, 0755, NULL); /* get_paper_path(): mkdir(parents=True) */
    char *md = paper_path(s, paper_id, ".md");
    int rc = 0;

    pthread_mutex_lock(&s->lock);
    mb_arxiv_conv *c = find(s, paper_id);
    if (check) {
        if (c) status_reply(out, c, 1);
        else if (is_file(md)) success_reply(out, "Paper is ready", md);
        else dumps(out, obj2("unknown", "No download or conversion in progress"));
        pthread_mutex_unlock(&s->lock);
        free(md);
        return 0;
    }
    if (is_file(md)) {
        pthread_mutex_unlock(&s->lock);
        success_reply(out, "Paper already available", md);
        free(md);
        return 0;
    }
    if (c) {
        status_reply(out, c, 0);
        pthread_mutex_unlock(&s->lock);
        free(md);
        return 0;
    }
    c = mb_calloc(1, sizeof *c);
    c->paper_id = mb_strdup(paper_id);
    snprintf(c->status, sizeof c->status, "downloading");
    c->started_at = now_seconds();
    s->convs = mb_realloc(s->convs, (s->nconvs + 1) * sizeof *s->convs);
    s->convs[s->nconvs++] = c;
    pthread_mutex_unlock(&s->lock);

    /* next(client.results(arxiv.Search(id_list=[paper_id]))) */
    char *id = NULL;
    int version = 0;
    mb_arxiv_paper p = {0};
    char *pdf = paper_path(s, paper_id, ".pdf");
    char *cat_pdf = NULL, *cat_md = NULL;
    if (mb_arxiv_id_parse(paper_id, &id, &version) != MB_OK || !pdf) {
        char *m = mb_arxiv_http_400(paper_id);
        char *msg = mb_asprintf("Error: %s", m);
        error_reply(out, msg);
        free(m), free(msg);
        goto out;
    }
    mb_err err = {0};
    rc = mb_arxiv_lookup(s, id, &p, &err);
    if (rc == MB_OK && version > p.version) rc = MB_ENOTFOUND;
    if (rc != MB_OK) {
        char *msg = rc == MB_ENOTFOUND ? mb_asprintf("Paper %s not found on arXiv", paper_id)
                                       : mb_asprintf("Error: %s", err.msg);
        error_reply(out, msg);
        free(msg);
        rc = 0;
        goto out;
    }
    int v = version ? version : p.version;
    const mb_arxiv_catalog *cat = s->catalog;
    if (cat) {
        cat_pdf = mb_arxiv_catalog_file(cat, id, v, p.version, "pdf");
        cat_md = mb_arxiv_catalog_file(cat, id, v, p.version, "md");
    }
    /* paper.download_pdf(dirpath=storage, filename=f"{paper_id}.pdf") */
    int e = 0;
    if (cat_pdf) {
        e = copy_file(cat_pdf, pdf);
    } else if (s->online) {
        if (mb_arxiv_online_pdf(&s->net, id, v, pdf, &err) != MB_OK) {
            char *msg = mb_asprintf("Error: %s", err.msg);
            error_reply(out, msg);
            free(msg);
            goto out;
        }
        /* keep a copy in the catalog so that the next run is offline */
        if (s->catalog && mb_arxiv_catalog_writable(s->catalog)) {
            char *name = mb_arxiv_id_file(id, v, "pdf");
            char *keep = mb_asprintf("%s/pdf/%s", mb_arxiv_catalog_dir(s->catalog), name);
            if (copy_file(pdf, keep)) unlink(keep);
            free(name), free(keep);
        }
    } else if (!cat_md) {
        char *msg = mb_asprintf("Error: the PDF of %sv%d is not in the offline arXiv catalog (%s) "
                                "and online mode is off", id, v, s->catalog_dir);
        error_reply(out, msg);
        free(msg);
        goto out;
    }
    if (e) {
        char *m = mb_py_os_error(e, pdf);
        char *msg = mb_asprintf("Error: %s", m);
        error_reply(out, msg);
        free(m), free(msg);
        goto out;
    }

    pthread_mutex_lock(&s->lock);
    snprintf(c->status, sizeof c->status, "converting");
    c->src_is_md = cat_md != NULL;
    c->src = cat_md ? cat_md : mb_strdup(pdf);
    cat_md = NULL;
    c->dest = mb_strdup(md);
    job *j = mb_calloc(1, sizeof *j);
    j->s = s, j->c = c;
    if (pthread_create(&c->thread, NULL, convert_main, j) == 0) {
        c->has_thread = 1;
    } else {
        free(j);
        snprintf(c->status, sizeof c->status, "error");
        c->error = mb_strdup("could not start the conversion thread");
    }
    char started[40];
    py_isoformat(c->started_at, started);
    pthread_mutex_unlock(&s->lock);
    json_t *o = obj2("converting", "Paper downloaded, conversion started");
    json_object_set_new(o, "started_at", json_string(started));
    dumps(out, o);
out:
    mb_arxiv_paper_dispose(&p);
    free(id), free(pdf), free(md), free(cat_pdf), free(cat_md);
    return rc;
}
