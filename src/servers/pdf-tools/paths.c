/*
 * paths.c - where pdf-tools may read and write, and URL inputs.
 *
 * Upstream (`--workspace_path W`) chdirs into W and accepts a path when
 * Path(p).resolve() is inside W; without the option everything is allowed.
 * Inputs that start with http:// or https:// are downloaded once into the
 * temp-file directory (`--tempfile_dir`, default ~/.pdf_tools_temp) under a
 * uuid4 name, remembered in url_tempfile_mapping.json there. The download is
 * curl run by the server process, so the sandbox's network policy applies.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "servers/pdf-tools/pdftools.h"
#include "servers/terminal/terminal.h" /* mb_term_realpath: Python's realpath(strict=False) */

#define MAPPING "url_tempfile_mapping.json"

int mb_pdf_is_url(const char *p)
{
    return !strncmp(p, "http://", 7) || !strncmp(p, "https://", 8);
}

char *mb_pdf_abs(const mb_pdf_state *st, const char *p)
{
    return mb_path_resolve(st->base, p);
}

static int inside(const char *real, const char *root)
{
    size_t n = strlen(root);
    if (!strcmp(root, "/")) return 1;
    return !strncmp(real, root, n) && (real[n] == '\0' || real[n] == '/');
}

char *mb_pdf_check_path(const mb_pdf_state *st, const char *p)
{
    if (!st->workspace) return NULL;
    char *abs = mb_pdf_abs(st, p);
    char *real = mb_term_realpath(abs);
    int ok = inside(real, st->workspace);
    free(abs);
    free(real);
    if (ok) return NULL;
    return mb_asprintf("Error: Path '%s' is outside the allowed workspace '%s'", p, st->workspace);
}

/* requests' HTTPError text needs the reason phrase; the common ones */
static const char *reason(long code)
{
    switch (code) {
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 410: return "Gone";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "";
    }
}

static json_t *load_mapping(const char *path)
{
    /* mb_read_file, not json_load_file: the temp dir is the agent's too, and
     * a FIFO planted under the mapping's name must not block the server */
    char *text = NULL;
    size_t len = 0;
    json_t *m = NULL;
    if (mb_read_file(path, (size_t)16 << 20, &text, &len, NULL) == MB_OK)
        m = json_loadb(text, len, 0, NULL);
    free(text);
    if (!json_is_object(m)) {
        json_decref(m);
        m = json_object();
    }
    return m;
}

static void save_mapping(const char *path, json_t *m)
{
    char *text = mb_py_json_dumps(m, 2, 0);
    mb_err err = {0};
    if (mb_write_file_atomic(path, text, strlen(text), 0644, &err) != MB_OK)
        mb_log(MB_LOG_WARN, "pdf-tools: Failed to save URL mapping: %s", err.msg);
    free(text);
}

static int file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

/* download_pdf_from_url(): the local file, or NULL with *why */
static char *download(mb_pdf_state *st, const char *url, char **why)
{
    char u[37];
    mb_uuid4(u);
    char *dest = mb_asprintf("%s/%s.pdf", st->tempdir, u);
    long status = 0;
    char *final = NULL;
    mb_err err = {0};
    if (mb_pdf_download(&st->lim, url, dest, &status, &final, &err) != MB_OK) {
        *why = mb_asprintf("Failed to download PDF from URL: %s", err.msg);
        goto fail;
    }
    if (status >= 400) {
        *why = mb_asprintf("Failed to download PDF from URL: %ld %s Error: %s for url: %s", status,
                           status < 500 ? "Client" : "Server", reason(status), final);
        goto fail;
    }
    char head[8] = {0};
    FILE *f = fopen(dest, "rb");
    size_t got = f ? fread(head, 1, sizeof head, f) : 0;
    if (f) fclose(f);
    if (got < 5 || memcmp(head, "%PDF-", 5)) {
        *why = mb_strdup("Error processing PDF download: Downloaded file is not a valid PDF format");
        goto fail;
    }
    mb_pdf_meta meta;
    if (mb_pdf_info(&st->lim, dest, &meta, &err) != MB_OK) {
        *why = mb_strdup(
            "Error processing PDF download: PDF file appears to be corrupted or unreadable");
        goto fail;
    }
    mb_pdf_meta_dispose(&meta);
    free(final);
    return dest;
fail:
    unlink(dest);
    free(dest);
    free(final);
    return NULL;
}

char *mb_pdf_fetch_url(mb_pdf_state *st, const char *url, char **why)
{
    *why = NULL;
    char *mpath = mb_asprintf("%s/" MAPPING, st->tempdir);
    json_t *map = load_mapping(mpath);
    const char *known = json_string_value(json_object_get(map, url));
    char *local = NULL;
    if (known && file_exists(known)) {
        local = mb_strdup(known);
        goto out;
    }
    if (known) { /* the file went away: forget it */
        json_object_del(map, url);
        save_mapping(mpath, map);
    }
    local = download(st, url, why);
    if (local) {
        json_object_set_new(map, url, json_string(local));
        save_mapping(mpath, map);
    }
out:
    json_decref(map);
    free(mpath);
    return local;
}
