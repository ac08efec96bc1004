/*
 * read.c - the reading tools of the filesystem server: read_file (the
 * deprecated alias) / read_text_file with head and tail, read_media_file,
 * read_multiple_files.
 *
 * Upstream reads head and tail 1 KiB at a time and decodes every chunk as
 * UTF-8 on its own; a character split across two chunks therefore becomes
 * replacement characters. We do the same, so the texts stay identical.
 */
#include "servers/filesystem/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHUNK 1024

/* A growable list of (owned) strings. */
typedef struct lines {
    char **v;
    size_t *len;
    size_t n, cap;
} lines;

static void lines_push(lines *l, const char *s, size_t n)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 32;
        l->v = mb_realloc(l->v, l->cap * sizeof *l->v);
        l->len = mb_realloc(l->len, l->cap * sizeof *l->len);
    }
    l->v[l->n] = mb_memdup0(s, n);
    l->len[l->n++] = n;
}

static void lines_free(lines *l)
{
    for (size_t i = 0; i < l->n; i++) free(l->v[i]);
    free(l->v);
    free(l->len);
}

static char *lines_join(const lines *l, size_t *out_len)
{
    mb_buf b = {0};
    for (size_t i = 0; i < l->n; i++) {
        if (i) mb_buf_putc(&b, '\n');
        mb_buf_append(&b, l->v[i], l->len[i]);
    }
    *out_len = b.len;
    return mb_buf_steal(&b);
}

static int open_read(const char *path, char **why)
{
    int fd = mb_open_file(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW, 0);
    if (fd < 0) {
        int e = errno;
        struct stat st;
        if (e == ELOOP && lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) e = ENOENT;
        *why = mb_node_fs_error(e, "open", path, NULL);
    }
    return fd;
}

static ssize_t pread_all(int fd, char *buf, size_t n, off_t off)
{
    for (;;) {
        ssize_t r = pread(fd, buf, n, off);
        if (r < 0 && errno == EINTR) continue;
        return r;
    }
}

/* A buffer that grows at the front, for the text tail_file carries from
 * one chunk to the one before it. Holds buf[start..cap). */
typedef struct front {
    char *buf;
    size_t cap, start;
} front;

static void front_prepend(front *f, const char *p, size_t n)
{
    if (f->start < n) {
        size_t used = f->cap - f->start, cap = f->cap ? f->cap : 256;
        while (cap - used < n) cap *= 2;
        char *nb = mb_malloc(cap);
        if (used) memcpy(nb + cap - used, f->buf + f->start, used);
        free(f->buf);
        f->buf = nb;
        f->start = cap - used;
        f->cap = cap;
    }
    f->start -= n;
    if (n) memcpy(f->buf + f->start, p, n);
}

/* upstream's tailFile: chunks of 1 KiB from the end, each decoded on its
 * own, prepended to the unfinished first line of the previous chunk, CRLF
 * normalized, split on '\n'. The carried text holds no '\n', so only the
 * new chunk needs splitting; it is normalized again (as upstream does) only
 * when it holds a '\r', which keeps the common case linear. */
static int tail_file(const char *path, double num, char **out, size_t *out_len, char **why)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        *why = mb_node_fs_error(errno, "stat", path, NULL);
        return MB_EIO;
    }
    if (st.st_size == 0) {
        *out = mb_strdup("");
        *out_len = 0;
        return 0;
    }
    int fd = open_read(path, why);
    if (fd < 0) return MB_EIO;
    lines rev = {0}; /* collected last line first */
    off_t pos = st.st_size;
    double found = 0;
    front rem = {0};
    char chunk[CHUNK];
    int rc = 0;
    while (pos > 0 && found < num) {
        size_t size = pos < CHUNK ? (size_t)pos : CHUNK;
        pos -= (off_t)size;
        ssize_t got = pread_all(fd, chunk, size, pos);
        if (got < 0) {
            *why = mb_node_fs_error(errno, "read", NULL, NULL);
            rc = MB_EIO;
            break;
        }
        if (got == 0) break;
        size_t dl, added;
        char *data = mb_utf8_repair(chunk, (size_t)got, &dl);
        const char *rp = rem.buf ? rem.buf + rem.start : "";
        size_t rl = rem.cap - rem.start;
        if (memchr(rp, '\r', rl)) {
            /* the carried text may hold "\r\r\n" runs: normalize all again */
            mb_buf text = {0};
            mb_buf_append(&text, data, dl);
            mb_buf_append(&text, rp, rl);
            size_t k = 0;
            for (size_t i = 0; i < text.len; i++) {
                if (text.data[i] == '\r' && i + 1 < text.len && text.data[i + 1] == '\n') continue;
                text.data[k++] = text.data[i];
            }
            rem.start = rem.cap;
            front_prepend(&rem, text.data, k);
            added = k;
            mb_buf_free(&text);
        } else {
            size_t k = 0;
            for (size_t i = 0; i < dl; i++) {
                if (data[i] == '\r' && ((i + 1 < dl && data[i + 1] == '\n') || (i + 1 == dl && rl && rp[0] == '\n')))
                    continue;
                data[k++] = data[i];
            }
            front_prepend(&rem, data, k);
            added = k;
        }
        free(data);
        /* split rem; its '\n's all lie in the part just added */
        const char *t = rem.buf + rem.start;
        size_t tl = rem.cap - rem.start;
        const char *first_nl = memchr(t, '\n', added);
        size_t keep = pos > 0 ? (first_nl ? (size_t)(first_nl - t) : tl) : 0;
        size_t end = tl;
        /* walk lines from the end of t back to `keep` */
        while (found < num) {
            size_t ls = end;
            while (ls > keep && t[ls - 1] != '\n') ls--;
            if (ls == keep && pos > 0) break; /* that is the carried first line */
            lines_push(&rev, t + ls, end - ls);
            found++;
            if (ls == keep) break; /* pos == 0: the very first line was taken */
            end = ls - 1;          /* skip the '\n' */
        }
        /* carry the first line only */
        rem.start = rem.cap - keep;
        if (keep && t != rem.buf + rem.start) memmove(rem.buf + rem.start, t, keep);
    }
    close(fd);
    free(rem.buf);
    if (!rc) {
        lines fwd = {0};
        for (size_t i = rev.n; i > 0; i--) lines_push(&fwd, rev.v[i - 1], rev.len[i - 1]);
        *out = lines_join(&fwd, out_len);
        lines_free(&fwd);
    }
    lines_free(&rev);
    return rc;
}

/* upstream's headFile */
static int head_file(const char *path, double num, char **out, size_t *out_len, char **why)
{
    int fd = open_read(path, why);
    if (fd < 0) return MB_EIO;
    lines got = {0};
    mb_buf buffer = {0};
    off_t read_so_far = 0;
    char chunk[CHUNK];
    int rc = 0;
    while ((double)got.n < num) {
        ssize_t n = pread_all(fd, chunk, CHUNK, read_so_far);
        if (n < 0) {
            *why = mb_node_fs_error(errno, "read", NULL, NULL);
            rc = MB_EIO;
            break;
        }
        if (n == 0) break;
        read_so_far += n;
        size_t dl;
        char *data = mb_utf8_repair(chunk, (size_t)n, &dl);
        mb_buf_append(&buffer, data, dl);
        free(data);
        /* lastIndexOf('\n'): the older part of the buffer holds none */
        char *nl = NULL;
        for (size_t i = buffer.len; i > buffer.len - dl; i--)
            if (buffer.data[i - 1] == '\n') {
                nl = buffer.data + i - 1;
                break;
            }
        if (nl) {
            size_t idx = (size_t)(nl - buffer.data), start = 0;
            for (size_t i = 0; i <= idx; i++)
                if (i == idx || buffer.data[i] == '\n') {
                    lines_push(&got, buffer.data + start, i - start);
                    start = i + 1;
                    if ((double)got.n >= num) break;
                }
            mb_buf_consume(&buffer, idx + 1);
        }
    }
    close(fd);
    if (!rc) {
        if (buffer.len > 0 && (double)got.n < num) lines_push(&got, buffer.data, buffer.len);
        *out = lines_join(&got, out_len);
    }
    lines_free(&got);
    mb_buf_free(&buffer);
    return rc;
}

int fs_read_text_file(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    char *path;
    if (fs_resolve(call, res, mb_mcp_arg_str(args, "path", ""), &path)) return MB_MCP_FAILED;
    double head = mb_mcp_arg_num(args, "head", 0), tail = mb_mcp_arg_num(args, "tail", 0);
    if (head != 0 && tail != 0) {
        free(path);
        return fs_fail(call, res, "Cannot specify both head and tail parameters simultaneously");
    }
    char *text = NULL, *why = NULL;
    size_t len = 0;
    int rc;
    if (tail != 0) {
        rc = tail_file(path, tail, &text, &len, &why);
    } else if (head != 0) {
        rc = head_file(path, head, &text, &len, &why);
    } else {
        char *raw;
        size_t rl;
        rc = fs_read_all(path, &raw, &rl, &why);
        if (!rc) {
            text = mb_utf8_repair(raw, rl, &len);
            free(raw);
        }
    }
    free(path);
    if (rc) {
        fs_fail(call, res, why);
        free(why);
        return MB_MCP_FAILED;
    }
    fs_text_result(call, res, text, len);
    free(text);
    return 0;
}

/* --------------------------------------------------------- media files */

static const struct {
    const char *ext, *mime;
} mime_types[] = {
    {".png", "image/png"},   {".jpg", "image/jpeg"},     {".jpeg", "image/jpeg"},
    {".gif", "image/gif"},   {".webp", "image/webp"},    {".bmp", "image/bmp"},
    {".svg", "image/svg+xml"}, {".mp3", "audio/mpeg"},   {".wav", "audio/wav"},
    {".ogg", "audio/ogg"},   {".flac", "audio/flac"},
};

/* Node's path.extname, lower-cased. */
static char *extname_lower(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    if (!dot || dot == base) return mb_strdup("");
    /* a basename made only of dots ("..") has no extension */
    const char *p = base;
    while (*p == '.') p++;
    if (!*p) return mb_strdup("");
    size_t n;
    return mb_js_lower(dot, strlen(dot), &n);
}

/* Node's url.pathToFileURL(path).href for an absolute POSIX path. */
static char *file_url(const char *path)
{
    mb_buf b = {0};
    mb_buf_puts(&b, "file://");
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        unsigned c = *p;
        if (c <= 0x20 || c >= 0x7F || strchr("\"#%<>?`{}\\", (int)c)) mb_buf_printf(&b, "%%%02X", c);
        else mb_buf_putc(&b, (char)c);
    }
    return mb_buf_steal(&b);
}

int fs_read_media_file(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    char *path;
    if (fs_resolve(call, res, mb_mcp_arg_str(args, "path", ""), &path)) return MB_MCP_FAILED;
    char *ext = extname_lower(path);
    const char *mime = "application/octet-stream";
    for (size_t i = 0; i < sizeof mime_types / sizeof mime_types[0]; i++)
        if (!strcmp(ext, mime_types[i].ext)) mime = mime_types[i].mime;
    free(ext);
    char *raw, *why;
    size_t len;
    if (fs_read_all(path, &raw, &len, &why)) {
        free(path);
        fs_fail(call, res, why);
        free(why);
        return MB_MCP_FAILED;
    }
    char *b64 = mb_base64_encode(raw, len);
    free(raw);
    json_t *item;
    const fs_version *v = ((fs_server *)mb_mcp_call_data(call))->v;
    if (!strncmp(mime, "image/", 6) || !strncmp(mime, "audio/", 6) || v->media_blob) {
        item = json_pack("{s:s, s:s, s:s}", "type",
                         !strncmp(mime, "image/", 6)   ? "image"
                         : !strncmp(mime, "audio/", 6) ? "audio"
                                                       : "blob",
                         "data", b64, "mimeType", mime);
    } else {
        char *uri = file_url(path);
        size_t ul;
        char *uri_ok = mb_utf8_repair(uri, strlen(uri), &ul);
        item = json_pack("{s:s, s:{s:s, s:s, s:s}}", "type", "resource", "resource", "uri", uri_ok,
                         "mimeType", mime, "blob", b64);
        free(uri);
        free(uri_ok);
    }
    free(b64);
    free(path);
    mb_mcp_content(res, json_incref(item));
    mb_mcp_structured(res, json_pack("{s:[o]}", "content", item));
    return 0;
}

/* -------------------------------------------------- read_multiple_files */

int fs_read_multiple_files(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    fs_server *fs = mb_mcp_call_data(call);
    json_t *paths = json_object_get(args, "paths");
    mb_buf out = {0};
    size_t i;
    json_t *p;
    json_array_foreach(paths, i, p) {
        const char *req = json_string_value(p);
        if (i) mb_buf_puts(&out, "\n---\n");
        char *path = NULL, *why = NULL, *raw = NULL;
        size_t len;
        if (!fs_validate_path(fs, req, &path, &why) && !fs_read_all(path, &raw, &len, &why)) {
            size_t tl;
            char *text = mb_utf8_repair(raw, len, &tl);
            mb_buf_printf(&out, "%s:\n", req);
            mb_buf_append(&out, text, tl);
            mb_buf_putc(&out, '\n');
            free(text);
        } else {
            mb_buf_printf(&out, "%s: Error - %s", req, why);
        }
        free(raw);
        free(path);
        free(why);
    }
    fs_text_result(call, res, out.data ? out.data : "", out.len);
    mb_buf_free(&out);
    return 0;
}
