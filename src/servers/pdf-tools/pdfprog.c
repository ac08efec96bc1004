/*
 * pdfprog.c - the programs that read and write PDFs for pdf-tools.
 *
 * PDFs come from the agent and may be hostile (truncated, garbage, bombs), so
 * mcpbox never parses them itself: poppler-utils (pdfinfo, pdftotext) and
 * qpdf do, as children of the server process (which runs inside the sandbox),
 * each under a timeout, an address-space cap (prlimit) and an output cap. A
 * child that fails, overruns or dies yields an mb_err whose text says why:
 * the program's own last complaint, or the limit it hit.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "servers/common/proc.h"
#include "servers/pdf-tools/pdftools.h"

#define PRLIMIT "/usr/bin/prlimit"
#define MAX_ERR_OUTPUT ((size_t)1 << 20)

void mb_pdf_meta_dispose(mb_pdf_meta *m)
{
    free(m->title), free(m->author), free(m->creator), free(m->creation_date);
    memset(m, 0, sizeof *m);
}

/* The last non-blank line of a program's stderr, without "qpdf: " style
 * prefixes naming the program; NULL if there is none. Caller frees. */
static char *last_line(const mb_buf *b)
{
    if (!b->data || !b->len) return NULL;
    size_t end = b->len;
    while (end > 0) {
        while (end > 0 && isspace((unsigned char)b->data[end - 1])) end--;
        size_t start = end;
        while (start > 0 && b->data[start - 1] != '\n') start--;
        if (end > start) {
            const char *s = b->data + start;
            size_t n = end - start;
            if (n > 6 && !strncmp(s, "qpdf: ", 6)) s += 6, n -= 6;
            if (n > 300) n = 300;
            return mb_strndup(s, n);
        }
        end = start;
    }
    return NULL;
}

/* Runs argv under the limits. On success (the child ran and exit status is in
 * ok_codes) returns MB_OK with *pr filled (caller frees); otherwise an error. */
static int run(const mb_pdf_limits *lim, const char *const *argv, size_t max_out,
               const int *ok_codes, mb_proc_result *pr, mb_err *err)
{
    size_t words = 0;
    while (argv[words]) words++;
    const char **full = mb_calloc(words + 4, sizeof *full);
    size_t k = 0;
    char as[64];
    int wrapped = access(PRLIMIT, X_OK) == 0 && lim->memory_bytes > 0;
    if (wrapped) {
        snprintf(as, sizeof as, "--as=%llu", (unsigned long long)lim->memory_bytes);
        full[k++] = PRLIMIT;
        full[k++] = as;
        full[k++] = "--";
    }
    for (size_t i = 0; i < words; i++) full[k++] = argv[i];
    full[k] = NULL;
    mb_proc_spec spec = {
        .argv = full,
        .timeout_ms = lim->timeout_ms,
        .max_output = max_out,
        .kill_on_overflow = 1,
        .kill_group = 1,
        .watch_fd = -1,
    };
    memset(pr, 0, sizeof *pr);
    int rc = mb_proc_run(&spec, pr, err);
    free(full);
    if (rc != MB_OK) return rc;
    const char *prog = argv[0];
    if (pr->spawn_errno) {
        rc = mb_err_set(err, MB_EIO, "%s is not installed in the sandbox (%s)", prog,
                        strerror(pr->spawn_errno));
    } else if (pr->timed_out) {
        rc = mb_err_set(err, MB_ETIMEOUT, "%s took longer than %d seconds and was stopped", prog,
                        lim->timeout_ms / 1000);
    } else if (pr->out_truncated) {
        rc = mb_err_set(err, MB_ETOOBIG, "the output of %s exceeds %zu bytes and was stopped", prog,
                        max_out);
    } else if (pr->err_truncated) {
        rc = mb_err_set(err, MB_ETOOBIG, "%s reported more than %zu bytes of errors and was stopped",
                        prog, max_out);
    } else if (!pr->exited) {
        rc = mb_err_set(err, MB_EIO,
                        "%s was stopped by signal %d (the memory cap is %llu MiB)", prog,
                        pr->term_signal, (unsigned long long)(lim->memory_bytes >> 20));
    } else {
        for (const int *c = ok_codes; *c >= 0; c++)
            if (pr->exit_code == *c) return MB_OK;
        char *why = last_line(&pr->err);
        rc = mb_err_set(err, MB_EINVAL, "%s", why ? why : "");
        if (!why) mb_err_set(err, MB_EINVAL, "%s failed with exit status %d", prog, pr->exit_code);
        free(why);
    }
    mb_proc_result_free(pr);
    return rc;
}

static const int OK0[] = {0, -1};
static const int OK_QPDF[] = {0, 3, -1}; /* 3: succeeded with warnings */

/* ------------------------------------------------------------- pdfinfo */

/* pdfinfo prints "Key:" padded to 16 columns, a space, then the value. */
static const char *field(const char *line, size_t n, const char *key, size_t *vlen)
{
    size_t k = strlen(key);
    if (n < k + 1 || strncmp(line, key, k) || line[k] != ':') return NULL;
    for (size_t i = k + 1; i < 17 && i < n; i++)
        if (line[i] != ' ') return NULL;
    if (n <= 17) {
        *vlen = 0;
        return line + n;
    }
    *vlen = n - 17;
    return line + 17;
}

int mb_pdf_info(const mb_pdf_limits *lim, const char *path, mb_pdf_meta *out, mb_err *err)
{
    memset(out, 0, sizeof *out);
    out->pages = -1;
    const char *argv[] = {"pdfinfo", "-enc", "UTF-8", "-rawdates", path, NULL};
    mb_proc_result pr;
    int rc = run(lim, argv, MAX_ERR_OUTPUT, OK0, &pr, err);
    if (rc != MB_OK) return rc;
    static const char *const info_keys[] = {"Title", "Subject", "Keywords", "Author", "Creator",
                                            "Producer", "CreationDate", "ModDate", NULL};
    const char *p = pr.out.data ? pr.out.data : "";
    const char *end = p + pr.out.len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        size_t vl;
        const char *v;
        for (int i = 0; info_keys[i]; i++)
            if (field(p, n, info_keys[i], &vl)) out->has_info = 1;
        if ((v = field(p, n, "Custom Metadata", &vl)) && vl >= 3 && !strncmp(v, "yes", 3))
            out->has_info = 1;
        if ((v = field(p, n, "Title", &vl)) && !out->title) out->title = mb_strndup(v, vl);
        if ((v = field(p, n, "Author", &vl)) && !out->author) out->author = mb_strndup(v, vl);
        if ((v = field(p, n, "Creator", &vl)) && !out->creator) out->creator = mb_strndup(v, vl);
        if ((v = field(p, n, "CreationDate", &vl)) && !out->creation_date)
            out->creation_date = mb_strndup(v, vl);
        if ((v = field(p, n, "Pages", &vl))) {
            char *num = mb_strndup(v, vl), *e;
            long long pages = strtoll(num, &e, 10);
            if (e != num && *e == '\0' && pages >= 0) out->pages = pages;
            free(num);
        }
        p += n + 1;
    }
    mb_proc_result_free(&pr);
    if (out->pages < 0) {
        mb_pdf_meta_dispose(out);
        return mb_err_set(err, MB_EINVAL, "pdfinfo did not report a page count");
    }
    return MB_OK;
}

/* ----------------------------------------------------------- pdftotext */

int mb_pdf_text(const mb_pdf_limits *lim, const char *path, long long first, long long last,
                mb_pdf_texts *out, mb_err *err)
{
    memset(out, 0, sizeof *out);
    if (first < 1 || last < first)
        return mb_err_set(err, MB_EINVAL, "no pages to extract (%lld-%lld)", first, last);
    char f[32], l[32];
    snprintf(f, sizeof f, "%lld", first);
    snprintf(l, sizeof l, "%lld", last);
    /* -raw keeps content-stream order, which is what pypdf's extract_text follows */
    const char *argv[] = {"pdftotext", "-raw", "-enc", "UTF-8", "-f", f, "-l", l, path, "-", NULL};
    mb_proc_result pr;
    int rc = run(lim, argv, lim->max_text, OK0, &pr, err);
    if (rc != MB_OK) return rc;
    long long want = last - first + 1;
    out->text = mb_calloc((size_t)want, sizeof *out->text);
    out->len = mb_calloc((size_t)want, sizeof *out->len);
    const char *p = pr.out.data ? pr.out.data : "";
    const char *end = p + pr.out.len;
    /* one form feed ends each page */
    while (out->count < want) {
        const char *ff = p < end ? memchr(p, '\f', (size_t)(end - p)) : NULL;
        if (!ff) break;
        out->len[out->count] = (size_t)(ff - p);
        out->text[out->count] = mb_memdup0(p, (size_t)(ff - p));
        out->count++;
        p = ff + 1;
    }
    mb_proc_result_free(&pr);
    if (out->count != want) {
        int got = out->count;
        mb_pdf_texts_free(out);
        return mb_err_set(err, MB_EINVAL, "pdftotext returned %d of %lld pages", got, want);
    }
    return MB_OK;
}

/* ---------------------------------------------------------------- qpdf */

int mb_pdf_qpdf_pages(const mb_pdf_limits *lim, const char *path, long long *pages, mb_err *err)
{
    const char *argv[] = {"qpdf", "--show-npages", path, NULL};
    mb_proc_result pr;
    int rc = run(lim, argv, MAX_ERR_OUTPUT, OK_QPDF, &pr, err);
    if (rc != MB_OK) return rc;
    char *e;
    const char *s = pr.out.data ? pr.out.data : "";
    long long n = strtoll(s, &e, 10);
    while (*e && isspace((unsigned char)*e)) e++;
    rc = e == s || *e || n < 0 ? mb_err_set(err, MB_EINVAL, "qpdf did not report a page count")
                               : MB_OK;
    if (rc == MB_OK) *pages = n;
    mb_proc_result_free(&pr);
    return rc;
}

/* The document information PyPDF2 3.0.1's PdfWriter gives every file it
 * writes ({/Producer (PyPDF2)}, upstream's merge and extract outputs), as a
 * qpdf JSON update of the empty document qpdf starts from (objects 1 Catalog
 * and 2 Pages): without it get_pdf_info would print no metadata lines for
 * those files where upstream prints four "Unknown" ones. */
static const char PYPDF2_INFO[] =
    "{\"qpdf\":[{\"jsonversion\":2,\"pushedinheritedpageresources\":false,"
    "\"calledgetallpages\":false,\"maxobjectid\":2},"
    "{\"obj:3 0 R\":{\"value\":{\"/Producer\":\"u:PyPDF2\"}},"
    "\"trailer\":{\"value\":{\"/Root\":\"1 0 R\",\"/Size\":4,\"/Info\":\"3 0 R\"}}}]}";

/* A private file holding PYPDF2_INFO (qpdf wants a seekable file), path in
 * `path`; the caller unlinks it. */
static int write_info_json(char *path, size_t cap, mb_err *err)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(path, cap, "%s/mcpbox-pdfinfo-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0)
        return mb_err_set(err, MB_EIO, "cannot create a temporary file in %s: %s",
                          tmp && *tmp ? tmp : "/tmp", strerror(errno));
    size_t len = sizeof PYPDF2_INFO - 1;
    ssize_t w = write(fd, PYPDF2_INFO, len);
    int saved = errno;
    close(fd);
    if (w != (ssize_t)len) {
        unlink(path);
        return mb_err_set(err, MB_EIO, "cannot write %s: %s", path,
                          w < 0 ? strerror(saved) : "short write");
    }
    return MB_OK;
}

int mb_pdf_qpdf_write(const mb_pdf_limits *lim, const char *const *paths,
                      const char *const *ranges, size_t n, const char *out_path, mb_err *err)
{
    char info_path[4096], info_opt[4200];
    int rc = write_info_json(info_path, sizeof info_path, err);
    if (rc != MB_OK) return rc;
    snprintf(info_opt, sizeof info_opt, "--update-from-json=%s", info_path);
    const char **argv = mb_calloc(2 * n + 9, sizeof *argv);
    size_t k = 0;
    argv[k++] = "qpdf";
    argv[k++] = "--empty";
    argv[k++] = info_opt;
    argv[k++] = "--pages";
    for (size_t i = 0; i < n; i++) {
        argv[k++] = paths[i];
        argv[k++] = ranges[i];
    }
    argv[k++] = "--";
    argv[k++] = out_path;
    argv[k] = NULL;
    mb_proc_result pr;
    rc = run(lim, argv, MAX_ERR_OUTPUT, OK_QPDF, &pr, err);
    if (rc == MB_OK) mb_proc_result_free(&pr);
    unlink(info_path);
    free(argv);
    return rc;
}

/* ---------------------------------------------------------------- curl */

int mb_pdf_download(const mb_pdf_limits *lim, const char *url, const char *dest, long *status,
                    char **final_url, mb_err *err)
{
    char maxsize[32];
    snprintf(maxsize, sizeof maxsize, "%zu", lim->max_text);
    const char *argv[] = {"curl", "-sS", "-L", "--max-time", "30", "--max-filesize", maxsize,
                          "--proto", "=http,https", "-o", dest, "-w", "%{http_code} %{url_effective}",
                          "--", url, NULL};
    mb_proc_result pr;
    mb_pdf_limits l = *lim;
    l.timeout_ms = 35000;
    int rc = run(&l, argv, MAX_ERR_OUTPUT, OK0, &pr, err);
    if (rc != MB_OK) return rc;
    const char *s = pr.out.data ? pr.out.data : "";
    char *sp;
    *status = strtol(s, &sp, 10);
    *final_url = mb_strdup(*sp == ' ' ? sp + 1 : url);
    mb_proc_result_free(&pr);
    return MB_OK;
}
