/*
 * files.c - desktop-commander's file tools (tools/filesystem.ts and
 * handlers/filesystem-handlers.ts of 0.2.7).
 *
 * read_file reads lines as Node's readline does (breaks at \n, \r\n and a
 * lone \r; no empty line after a final break), after the UTF-8 decoding Node
 * applies (invalid bytes become U+FFFD), and heads them with
 *   [Reading N lines from start (total: T lines, R remaining)]
 * where T is the count of '\n' plus one (so a file ending in a newline counts
 * one more line than it shows). Files of 10 MB and more have no total, and
 * use upstream's byte estimate (deep positive offsets) or backwards reading
 * (short tails). Binary files (isbinaryfile 5's check of the first 512
 * bytes) get the "Cannot read binary file as text" instructions; PNG, JPEG,
 * GIF and WebP (by extension) come back as image content.
 *
 * Errors are Node's texts with the validated path ("ENOENT: no such file or
 * directory, stat '/data/x'"), prefixed "Error: " by the dispatcher.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "servers/desktop-commander/dc.h"

#define LARGE_FILE (10 * 1024 * 1024)
#define MAX_READ ((size_t)1 << 30)

const char *dc_mime_type(const char *path)
{
    const char *dot = strrchr(path, '.');
    const char *ext = dot ? dot + 1 : path;
    static const struct {
        const char *ext, *mime;
    } m[] = {{"png", "image/png"}, {"jpg", "image/jpeg"}, {"jpeg", "image/jpeg"},
             {"gif", "image/gif"}, {"webp", "image/webp"}};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (!strcasecmp(ext, m[i].ext)) return m[i].mime;
    return "text/plain";
}

static int is_image(const char *mime) { return !strncmp(mime, "image/", 6); }

/* fs error text for errno e (caller frees). */
static char *nerr(int e, const char *sys, const char *p, const char *dest)
{
    return mb_node_fs_error(e, sys, p, dest);
}

/* isbinaryfile 5.0.7's isBinaryFile(path): 0/1, or -1 with *why. */
static int looks_protobuf(const unsigned char *b, size_t n)
{
    size_t off = 0;
    int err = 0, msgs = 0;
#define NEXT() (off >= n || err ? (err = 1, 0xff) : b[off++])
    for (;;) {
        /* one varint */
        unsigned long long v = 0;
        for (int idx = 0; !err; idx++) {
            unsigned c = NEXT();
            v |= (unsigned long long)(c & 0x7f) << (7 * (idx < 9 ? idx : 9));
            if (!(c & 0x80)) break;
            if (idx >= 10) {
                err = 1;
                break;
            }
        }
        int ok = 1;
        switch (v & 7) {
        case 0:
            for (int idx = 0; !err; idx++) {
                unsigned c = NEXT();
                if (!(c & 0x80)) break;
                if (idx >= 10) { err = 1; break; }
            }
            break;
        case 1:
            for (int i = 0; i < 8 && !err; i++) (void)NEXT();
            break;
        case 2: {
            unsigned long long len = 0;
            for (int idx = 0; !err; idx++) {
                unsigned c = NEXT();
                len |= (unsigned long long)(c & 0x7f) << (7 * (idx < 9 ? idx : 9));
                if (!(c & 0x80)) break;
                if (idx >= 10) { err = 1; break; }
            }
            len &= 0xffffffffu; /* JS bit operations are 32-bit */
            for (unsigned long long i = 0; i < len && !err; i++) (void)NEXT();
            break;
        }
        case 5:
            for (int i = 0; i < 4 && !err; i++) (void)NEXT();
            break;
        default:
            ok = 0;
        }
        if (!ok && !err) return 0;
        if (err) break;
        msgs++;
    }
#undef NEXT
    return msgs > 0;
}

static int binary_check(const unsigned char *b, size_t n)
{
    if (!n) return 0;
    size_t total = n < 515 ? n : 515, scan = total < 512 ? total : 512;
    if (n >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf) return 0;
    if (n >= 4 && b[0] == 0 && b[1] == 0 && b[2] == 0xfe && b[3] == 0xff) return 0;
    if (n >= 4 && b[0] == 0xff && b[1] == 0xfe && b[2] == 0 && b[3] == 0) return 0;
    if (n >= 4 && b[0] == 0x84 && b[1] == 0x31 && b[2] == 0x95 && b[3] == 0x33) return 0;
    if (total >= 5 && !memcmp(b, "%PDF-", 5)) return 1;
    if (n >= 2 && b[0] == 0xfe && b[1] == 0xff) return 0;
    if (n >= 2 && b[0] == 0xff && b[1] == 0xfe) return 0;
    size_t sus = 0;
    for (size_t i = 0; i < scan; i++) {
        unsigned c = b[i];
        if (c == 0) return 1;
        if ((c < 7 || c > 14) && (c < 32 || c > 127)) {
            /* bytes past the read are 0 (Buffer.alloc) */
#define AT(k) ((k) < total ? b[k] : 0)
            if (c >= 0xc0 && c <= 0xdf && i + 1 < total) {
                i++;
                if (AT(i) >= 0x80 && AT(i) <= 0xbf) continue;
            } else if (c >= 0xe0 && c <= 0xef && i + 2 < total) {
                i++;
                if (AT(i) >= 0x80 && AT(i) <= 0xbf && AT(i + 1) >= 0x80 && AT(i + 1) <= 0xbf) {
                    i++;
                    continue;
                }
            } else if (c >= 0xf0 && c <= 0xf7 && i + 3 < total) {
                i++;
                if (AT(i) >= 0x80 && AT(i) <= 0xbf && AT(i + 1) >= 0x80 && AT(i + 1) <= 0xbf &&
                    AT(i + 2) >= 0x80 && AT(i + 2) <= 0xbf) {
                    i += 2;
                    continue;
                }
            }
#undef AT
            sus++;
            if (i >= 32 && (double)sus * 100 / (double)scan > 10) return 1;
        }
    }
    if ((double)sus * 100 / (double)scan > 10) return 1;
    if (sus > 1 && looks_protobuf(b, scan)) return 1;
    return 0;
}

static int is_binary_file(const char *path, char **why)
{
    struct stat st;
    if (stat(path, &st)) {
        *why = nerr(errno, "stat", path, NULL);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        *why = mb_strdup("Path provided was not a file!");
        return -1;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        *why = nerr(errno, "open", path, NULL);
        return -1;
    }
    unsigned char buf[515];
    ssize_t n = pread(fd, buf, sizeof buf, 0);
    int e = errno;
    close(fd);
    if (n < 0) {
        *why = nerr(e, "read", NULL, NULL);
        return -1;
    }
    return binary_check(buf, (size_t)n);
}

static char *binary_instructions(const char *path, const char *mime)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return mb_asprintf("Cannot read binary file as text: %s (%s)\n\n"
                       "Use start_process + interact_with_process to analyze binary files with "
                       "appropriate tools (Node.js or Python libraries, command-line utilities, "
                       "etc.).\n\nThe read_file tool only handles text files and images.",
                       base, mime);
}

int dc_slurp(const char *path, char **data, size_t *len, char **why)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        *why = nerr(errno, "open", path, NULL);
        return -1;
    }
    mb_buf b = {0};
    for (;;) {
        mb_buf_reserve(&b, 65536);
        ssize_t n = read(fd, b.data + b.len, 65536);
        if (n < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            close(fd);
            mb_buf_free(&b);
            *why = nerr(e, "read", NULL, NULL);
            return -1;
        }
        if (n == 0) break;
        b.len += (size_t)n;
        if (b.len > MAX_READ) {
            close(fd);
            mb_buf_free(&b);
            *why = mb_strdup("Cannot create a string longer than 0x1fffffe8 characters");
            return -1;
        }
    }
    close(fd);
    mb_buf_reserve(&b, 1);
    b.data[b.len] = 0;
    *len = b.len;
    *data = mb_buf_steal(&b);
    return 0;
}

/* A line of decoded text: [off, off+len). */
typedef struct span {
    size_t off, len;
} span;

/* readline's lines of s (breaks \r\n, \n, lone \r). */
static span *split_lines(const char *s, size_t n, size_t *count)
{
    size_t cap = 64, k = 0, start = 0;
    span *v = mb_malloc(cap * sizeof *v);
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\n' && s[i] != '\r') continue;
        if (k == cap) v = mb_realloc(v, (cap *= 2) * sizeof *v);
        v[k++] = (span){start, i - start};
        if (s[i] == '\r' && i + 1 < n && s[i + 1] == '\n') i++;
        start = i + 1;
    }
    if (start < n) {
        if (k == cap) v = mb_realloc(v, (cap + 1) * sizeof *v);
        v[k++] = (span){start, n - start};
    }
    *count = k;
    return v;
}

static size_t count_nl(const char *s, size_t n)
{
    size_t c = 1;
    for (size_t i = 0; i < n; i++) c += s[i] == '\n';
    return c;
}

static void put_num(mb_buf *b, double d)
{
    char *s = mb_js_number(d);
    mb_buf_puts(b, s);
    free(s);
}

static void header_forward(mb_buf *b, size_t nread, double offset, long long total)
{
    mb_buf_printf(b, "[Reading %zu lines ", nread);
    if (offset == 0) mb_buf_puts(b, "from start");
    else {
        mb_buf_puts(b, "from line ");
        put_num(b, offset);
    }
    if (total >= 0) {
        double rem = (double)total - (offset + (double)nread);
        mb_buf_printf(b, " (total: %lld lines, ", total);
        put_num(b, rem > 0 ? rem : 0);
        mb_buf_puts(b, " remaining)");
    }
    mb_buf_puts(b, "]\n\n");
}

static void header_tail(mb_buf *b, size_t nread, long long total)
{
    if (total >= 0) mb_buf_printf(b, "[Reading last %zu lines (total: %lld lines)]\n\n", nread, total);
    else mb_buf_printf(b, "[Reading last %zu lines]\n\n", nread);
}

static void join_lines(mb_buf *b, const char *s, const span *l, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++) {
        if (i > from) mb_buf_putc(b, '\n');
        mb_buf_append(b, s + l[i].off, l[i].len);
    }
}

/* Tail of a large file read backwards in 8 KiB chunks, each decoded alone,
 * split at '\n' only (readLastNLinesReverse). */
static void tail_reverse(mb_buf *b, const char *raw, size_t size, size_t n, long long total)
{
    size_t pos = size;
    char **lines = NULL;
    size_t nl = 0, cap = 0;
    char *partial = mb_strdup("");
    while (pos > 0 && nl < n) {
        size_t rs = pos < 8192 ? pos : 8192;
        pos -= rs;
        size_t dl;
        char *chunk = mb_utf8_repair(raw + pos, rs, &dl);
        char *text = mb_asprintf("%s%s", chunk, partial);
        free(chunk);
        free(partial);
        /* split at '\n': first piece is the new partial, the rest go in front */
        char *first_nl = strchr(text, '\n');
        if (!first_nl) {
            partial = text;
            continue;
        }
        partial = mb_strndup(text, (size_t)(first_nl - text));
        size_t pieces = 0;
        for (char *p = first_nl; p; p = strchr(p + 1, '\n')) pieces++;
        if (nl + pieces > cap) {
            cap = (nl + pieces) * 2;
            lines = mb_realloc(lines, cap * sizeof *lines);
        }
        memmove(lines + pieces, lines, nl * sizeof *lines);
        size_t k = 0;
        for (char *p = first_nl + 1;; k++) {
            char *e = strchr(p, '\n');
            lines[k] = e ? mb_strndup(p, (size_t)(e - p)) : mb_strdup(p);
            if (!e) break;
            p = e + 1;
        }
        nl += pieces;
        free(text);
    }
    if (pos == 0 && *partial) {
        lines = mb_realloc(lines, (nl + 1) * sizeof *lines);
        memmove(lines + 1, lines, nl * sizeof *lines);
        lines[0] = partial;
        partial = NULL;
        nl++;
    }
    free(partial);
    size_t from = nl > n ? nl - n : 0;
    header_tail(b, nl - from, total);
    for (size_t i = from; i < nl; i++) {
        if (i > from) mb_buf_putc(b, '\n');
        mb_buf_puts(b, lines[i]);
    }
    for (size_t i = 0; i < nl; i++) free(lines[i]);
    free(lines);
}

int dc_read_disk(dc_server *dc, const char *requested, double offset, double length, char **text,
                 size_t *tlen, const char **mime, int *image, char **why)
{
    char *path;
    if (dc_validate_path(dc, requested, &path, why)) return -1;
    *mime = dc_mime_type(path);
    *image = is_image(*mime);
    char *raw = NULL;
    size_t size = 0;
    if (*image) {
        if (dc_slurp(path, &raw, &size, why)) {
            free(path);
            return -1;
        }
        char *b64 = mb_base64_encode(raw, size);
        free(raw);
        free(path);
        *text = b64;
        *tlen = strlen(b64);
        return 0;
    }
    struct stat st;
    if (stat(path, &st)) {
        /* readFileWithSmartPositioning's stat fails; the retry through
         * isBinaryFile then throws the same ENOENT */
        *why = nerr(errno, "stat", path, NULL);
        free(path);
        return -1;
    }
    int bin = is_binary_file(path, why);
    if (bin < 0) {
        free(path);
        return -1;
    }
    if (bin) {
        *text = binary_instructions(path, *mime);
        *tlen = strlen(*text);
        *mime = "text/plain";
        free(path);
        return 0;
    }
    if (dc_slurp(path, &raw, &size, why)) {
        free(path);
        return -1;
    }
    free(path);
    size_t dlen;
    char *dec = mb_utf8_repair(raw, size, &dlen);
    long long total = size < LARGE_FILE ? (long long)count_nl(dec, dlen) : -1;
    mb_buf b = {0};
    size_t nlines;
    span *l = split_lines(dec, dlen, &nlines);
    if (offset < 0) {
        double req = -offset;
        if (size > LARGE_FILE && req <= 100) {
            tail_reverse(&b, raw, size, (size_t)req, total);
        } else {
            size_t want = (size_t)req;
            size_t from = nlines > want ? nlines - want : 0;
            header_tail(&b, nlines - from, total);
            join_lines(&b, dec, l, from, nlines);
        }
    } else if (size >= LARGE_FILE && offset > 1000) {
        /* readFromEstimatedPosition: average line length of the first
         * ~10000 bytes, a seek to offset * average, first partial line skipped */
        double bytes = 0;
        size_t sample = 0;
        for (size_t i = 0; i < nlines && bytes < 10000; i++, sample++) {
            size_t bl = l[i].len;
            bytes += (double)bl + 1;
        }
        size_t from = 0, to = 0;
        if (!sample) {
            from = (size_t)ceil(offset);
        } else {
            double est = floor(offset * (bytes / (double)sample));
            size_t startpos = est < (double)size ? (size_t)est : size;
            /* re-decode from the byte position */
            size_t dl2;
            char *dec2 = mb_utf8_repair(raw + startpos, size - startpos, &dl2);
            size_t n2;
            span *l2 = split_lines(dec2, dl2, &n2);
            size_t skip = startpos > 0 ? 1 : 0;
            to = n2;
            from = skip;
            size_t cnt = 0;
            while (from + cnt < to && (double)cnt < length) cnt++;
            header_forward(&b, cnt, offset, total);
            join_lines(&b, dec2, l2, from, from + cnt);
            free(l2);
            free(dec2);
            goto done;
        }
        size_t cnt = 0;
        while (from + cnt < nlines && (double)cnt < length) cnt++;
        header_forward(&b, cnt, offset, total);
        join_lines(&b, dec, l, from, from + cnt);
    } else {
        size_t from = (size_t)ceil(offset), cnt = 0;
        if (from > nlines) from = nlines;
        while (from + cnt < nlines && (double)cnt < length) cnt++;
        header_forward(&b, cnt, offset, total);
        join_lines(&b, dec, l, from, from + cnt);
    }
done:
    free(l);
    free(dec);
    free(raw);
    *tlen = b.len;
    *text = b.data ? mb_buf_steal(&b) : mb_strdup("");
    return 0;
}

/* ------------------------------------------------------------- tools */

/* read_file with isUrl: nothing is fetched (a sandbox has no network), and
 * the answer is what cross-fetch (node-fetch 2) says offline: its URL checks,
 * then the name lookup that fails, with the URL as WHATWG URL writes it back
 * (scheme and host in lower case, "/" for an empty path). */
static int url_error(mb_mcp_result *res, const char *url)
{
    const char *p = url;
    while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
           *p == '+' || *p == '-' || *p == '.')
        p++;
    size_t slen = (size_t)(p - url);
    if (!slen || strncmp(p, "://", 3)) return dc_error(res, "Failed to fetch URL: Only absolute URLs are supported");
    const char *auth = p + 3, *end = auth + strcspn(auth, "/?#");
    const char *at = memrchr(auth, '@', (size_t)(end - auth));
    const char *host = at ? at + 1 : auth;
    const char *colon = memchr(host, ':', (size_t)(end - host));
    size_t hlen = (size_t)((colon ? colon : end) - host);
    if (!hlen) return dc_error(res, "Failed to fetch URL: Only absolute URLs are supported");
    char *scheme = mb_js_lower(url, slen, &slen);
    if (strcmp(scheme, "http") && strcmp(scheme, "https")) {
        free(scheme);
        return dc_error(res, "Failed to fetch URL: Only HTTP(S) protocols are supported");
    }
    size_t n;
    char *lhost = mb_js_lower(host, hlen, &n);
    char *lauth = mb_js_lower(auth, (size_t)(end - auth), &n);
    int rc = dc_errorf(res, "Failed to fetch URL: request to %s://%s%s%s failed, reason: getaddrinfo ENOTFOUND %s",
                       scheme, lauth, *end == '/' ? "" : "/", end, lhost);
    free(scheme);
    free(lhost);
    free(lauth);
    return rc;
}

int dc_read_file(dc_server *dc, mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    (void)call;
    if (!args || json_is_null(args)) return dc_error(res, "No arguments provided for read_file command");
    if (dc_parse("read_file", args, res)) return 1;
    const char *path = json_string_value(json_object_get(args, "path"));
    if (json_is_true(json_object_get(args, "isUrl"))) return url_error(res, path);
    double offset = json_number_value(json_object_get(args, "offset"));
    double length = json_number_value(json_object_get(args, "length"));
    char *text, *why;
    size_t len;
    const char *mime;
    int image;
    if (dc_read_disk(dc, path, offset, length, &text, &len, &mime, &image, &why)) {
        dc_error(res, why);
        free(why);
        return 1;
    }
    if (image) {
        mb_mcp_textf(res, "Image file: %s (%s)\n", path, mime);
        mb_mcp_image(res, text, mime);
    } else {
        mb_mcp_text_n(res, text, len);
    }
    free(text);
    return 0;
}

int dc_read_multiple_files(dc_server *dc, mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    (void)call;
    if (dc_parse("read_multiple_files", args, res)) return 1;
    json_t *paths = json_object_get(args, "paths");
    size_t n = json_array_size(paths);
    mb_buf summary = {0};
    json_t *blocks = json_array();
    double limit = dc_config_num(dc, "fileReadLineLimit", 1000);
    for (size_t i = 0; i < n; i++) {
        const char *p = json_string_value(json_array_get(paths, i));
        char *text, *why, *valid;
        size_t len;
        const char *mime;
        int image;
        if (i) mb_buf_putc(&summary, '\n');
        /* validatePath first, then readFile(validPath) validates again */
        int rc = dc_validate_path(dc, p, &valid, &why);
        if (!rc) {
            rc = dc_read_disk(dc, valid, 0, limit, &text, &len, &mime, &image, &why);
            free(valid);
        }
        if (rc) {
            mb_buf_printf(&summary, "%s: Error - %s", p, why);
            free(why);
            continue;
        }
        mb_buf_printf(&summary, "%s: %s %s", p, mime, image ? "(image)" : "(text)");
        if (image) {
            json_array_append_new(blocks, json_pack("{s:s, s:s, s:s}", "type", "image", "data",
                                                    text, "mimeType", mime));
        } else {
            mb_buf t = {0};
            mb_buf_printf(&t, "\n--- %s contents: ---\n", p);
            mb_buf_append(&t, text, len);
            size_t fl;
            char *fixed = mb_utf8_repair(t.data, t.len, &fl);
            json_array_append_new(blocks, json_pack("{s:s, s:s%}", "type", "text", "text", fixed, fl));
            free(fixed);
            mb_buf_free(&t);
        }
        free(text);
    }
    mb_mcp_text_n(res, summary.data ? summary.data : "", summary.len);
    mb_buf_free(&summary);
    size_t i;
    json_t *bl;
    json_array_foreach(blocks, i, bl) mb_mcp_content(res, json_incref(bl));
    json_decref(blocks);
    return 0;
}

static size_t count_split(const char *s, size_t n, char c)
{
    size_t k = 1;
    for (size_t i = 0; i < n; i++) k += s[i] == c;
    return k;
}

int dc_write_bytes(const char *path, const char *data, size_t len, int append, char **why)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0666);
    if (fd < 0) {
        *why = nerr(errno, "open", path, NULL);
        return -1;
    }
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            close(fd);
            *why = nerr(e, "write", NULL, NULL);
            return -1;
        }
        off += (size_t)w;
    }
    close(fd);
    return 0;
}

int dc_write_file(dc_server *dc, mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    (void)call;
    if (dc_parse("write_file", args, res)) return 1;
    const char *p = json_string_value(json_object_get(args, "path"));
    json_t *jc = json_object_get(args, "content");
    const char *content = json_string_value(jc);
    size_t clen = json_string_length(jc);
    int append = !strcmp(json_string_value(json_object_get(args, "mode")), "append");
    double max = dc_config_num(dc, "fileWriteLineLimit", 50);
    size_t lines = count_split(content, clen, '\n');
    char *valid = NULL, *why;
    if (dc_validate_path(dc, p, &valid, &why) || dc_write_bytes(valid, content, clen, append, &why)) {
        free(valid);
        dc_error(res, why);
        free(why);
        return 1;
    }
    free(valid);
    mb_buf b = {0};
    mb_buf_printf(&b, "Successfully %s %s (%zu lines) ", append ? "appended to" : "wrote to", p, lines);
    if ((double)lines > max)
        mb_buf_printf(&b, "\xE2\x9C\x85 File written successfully! (%zu lines)\n            \n"
                          "\xF0\x9F\x92\xA1 Performance tip: For optimal speed, consider chunking "
                          "files into \xE2\x89\xA4" "30 line pieces in future operations.", lines);
    mb_mcp_text_n(res, b.data, b.len);
    mb_buf_free(&b);
    return 0;
}

/* fs.mkdir(p, {recursive: true}) with Node's error texts. */
static int mkdir_rec(const char *path, char **why)
{
    struct stat st;
    if (mkdir(path, 0777) == 0) return 0;
    int e = errno;
    if (e == EEXIST) {
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return 0;
        *why = nerr(EEXIST, "mkdir", path, NULL);
        return -1;
    }
    if (e != ENOENT) {
        *why = nerr(e, "mkdir", path, NULL);
        return -1;
    }
    char *parent = mb_strdup(path);
    char *slash = strrchr(parent, '/');
    if (!slash || slash == parent) {
        free(parent);
        *why = nerr(e, "mkdir", path, NULL);
        return -1;
    }
    *slash = 0;
    int rc = mkdir_rec(parent, why);
    free(parent);
    if (rc) return -1;
    if (mkdir(path, 0777) == 0) return 0;
    e = errno;
    if (e == EEXIST && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) return 0;
    *why = nerr(e, "mkdir", path, NULL);
    return -1;
}

int dc_create_directory(dc_server *dc, mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    (void)call;
    if (dc_parse("create_directory", args, res)) return 1;
    const char *p = json_string_value(json_object_get(args, "path"));
    char *valid, *why;
    if (dc_validate_path(dc, p, &valid, &why)) goto fail;
    int rc = mkdir_rec(valid, &why);
    free(valid);
    if (rc) goto fail;
    mb_mcp_textf(res, "Successfully created directory %s", p);
    return 0;
fail:
    dc_error(res, why);
    free(why);
    return 1;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* readdir(withFileTypes) in libuv's order (strcmp); *dirs[i] from d_type
 * (lstat when unknown). */
static int list_dir(const char *path, char ***names, int **isdir, size_t *n, char **why)
{
    DIR *d = opendir(path);
    if (!d) {
        *why = nerr(errno, "scandir", path, NULL);
        return -1;
    }
    size_t cap = 32, k = 0;
    char **v = mb_malloc(cap * sizeof *v);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        if (k + 1 >= cap) v = mb_realloc(v, (cap *= 2) * sizeof *v);
        /* type kept in the first byte */
        int dir = e->d_type == DT_DIR;
        if (e->d_type == DT_UNKNOWN) {
            struct stat st;
            dir = fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
        }
        v[k++] = mb_asprintf("%c%s", dir ? 'D' : 'F', e->d_name);
    }
    closedir(d);
    /* sort by name (skip the type byte) */
    char **names_only = mb_malloc((k ? k : 1) * sizeof *names_only);
    for (size_t i = 0; i < k; i++) names_only[i] = v[i] + 1;
    qsort(names_only, k, sizeof *names_only, cmp_str);
    *names = mb_malloc((k ? k : 1) * sizeof **names);
    *isdir = mb_malloc((k ? k : 1) * sizeof **isdir);
    for (size_t i = 0; i < k; i++) {
        (*names)[i] = mb_strdup(names_only[i]);
        (*isdir)[i] = names_only[i][-1] == 'D';
    }
    for (size_t i = 0; i < k; i++) free(v[i]);
    free(v);
    free(names_only);
    *n = k;
    return 0;
}

static void free_list(char **names, int *isdir, size_t n)
{
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
    free(isdir);
}

int dc_list_directory(dc_server *dc, mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    (void)call;
    if (dc_parse("list_directory", args, res)) return 1;
    const char *p = json_string_value(json_object_get(args, "path"));
    char *valid, *why, **names;
    int *isdir;
    size_t n;
    if (dc_validate_path(dc, p, &valid, &why)) goto fail;
    int rc = list_dir(valid, &names, &isdir, &n, &why);
    free(valid);
    if (rc) goto fail;
    mb_buf b = {0};
    mb_buf_puts(&b, "");
    for (size_t i = 0; i < n; i++)
        mb_buf_printf(&b, "%s%s %s", i ? "\n" : "", isdir[i] ? "[DIR]" : "[FILE]", names[i]);
    free_list(names, isdir, n);
    mb_mcp_text_n(res, b.data, b.len);
    mb_buf_free(&b);
    return 0;
fail:
    dc_error(res, why);
    free(why);
    return 1;
}

int dc_move_file(dc_server *dc, mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    (void)call;
    if (dc_parse("move_file", args, res)) return 1;
    const char *s = json_string_value(json_object_get(args, "source"));
    const char *d = json_string_value(json_object_get(args, "destination"));
    char *vs = NULL, *vd = NULL, *why;
    if (dc_validate_path(dc, s, &vs, &why) || dc_validate_path(dc, d, &vd, &why)) goto fail;
    if (rename(vs, vd)) {
        why = nerr(errno, "rename", vs, vd);
        goto fail;
    }
    free(vs);
    free(vd);
    mb_mcp_textf(res, "Successfully moved %s to %s", s, d);
    return 0;
fail:
    free(vs);
    free(vd);
    dc_error(res, why);
    free(why);
    return 1;
}

typedef struct sf {
    dc_server *dc;
    char *needle; /* lower-cased */
    mb_buf out;
    size_t hits;
    int64_t deadline;
    int timed_out;
} sf;

static void sf_walk(sf *s, const char *dir)
{
    if (mb_mono_ms() > s->deadline) {
        s->timed_out = 1;
        return;
    }
    char **names, *why;
    int *isdir;
    size_t n;
    if (list_dir(dir, &names, &isdir, &n, &why)) {
        free(why);
        return;
    }
    for (size_t i = 0; i < n && !s->timed_out; i++) {
        char *full = strcmp(dir, "/") ? mb_asprintf("%s/%s", dir, names[i]) : mb_asprintf("/%s", names[i]);
        char *valid;
        if (dc_validate_path(s->dc, full, &valid, &why)) {
            free(why);
            free(full);
            continue;
        }
        free(valid);
        size_t ll;
        char *low = mb_js_lower(names[i], strlen(names[i]), &ll);
        if (strstr(low, s->needle)) {
            if (s->hits++) mb_buf_putc(&s->out, '\n');
            mb_buf_puts(&s->out, full);
        }
        free(low);
        if (isdir[i]) sf_walk(s, full);
        free(full);
    }
    free_list(names, isdir, n);
}

int dc_search_files(dc_server *dc, mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    (void)call;
    if (dc_parse("search_files", args, res)) return 1;
    const char *p = json_string_value(json_object_get(args, "path"));
    const char *pat = json_string_value(json_object_get(args, "pattern"));
    double t = json_number_value(json_object_get(args, "timeoutMs"));
    if (!(t != 0 && !isnan(t))) t = 30000;
    sf s = {.dc = dc, .deadline = mb_mono_ms() + (int64_t)t};
    size_t ll;
    s.needle = mb_js_lower(pat, strlen(pat), &ll);
    char *valid, *why;
    if (dc_validate_path(dc, p, &valid, &why)) {
        free(why); /* withTimeout's default: an error reads as no results */
    } else {
        sf_walk(&s, valid);
        free(valid);
    }
    free(s.needle);
    if (!s.hits || s.timed_out) {
        char *num = mb_js_number(t);
        if (t > 0) mb_mcp_textf(res, "No matches found or search timed out after %sms.", num);
        else mb_mcp_text(res, "No matches found");
        free(num);
    } else {
        mb_mcp_text_n(res, s.out.data, s.out.len);
    }
    mb_buf_free(&s.out);
    return 0;
}

int dc_get_file_info(dc_server *dc, mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    (void)call;
    if (dc_parse("get_file_info", args, res)) return 1;
    const char *p = json_string_value(json_object_get(args, "path"));
    char *valid, *why;
    if (dc_validate_path(dc, p, &valid, &why)) goto fail;
    struct statx sx;
    if (statx(AT_FDCWD, valid, 0, STATX_BASIC_STATS | STATX_BTIME, &sx) != 0) {
        why = nerr(errno, "stat", valid, NULL);
        free(valid);
        goto fail;
    }
#define T(ts) ((double)(ts).tv_sec + (double)(ts).tv_nsec / 1e9)
    double btime = (sx.stx_mask & STATX_BTIME) ? T(sx.stx_btime) : 0;
    char *created = mb_js_date_string(btime), *modified = mb_js_date_string(T(sx.stx_mtime)),
         *accessed = mb_js_date_string(T(sx.stx_atime));
#undef T
    mb_buf b = {0};
    mb_buf_printf(&b, "size: %llu\ncreated: %s\nmodified: %s\naccessed: %s\nisDirectory: %s\n"
                      "isFile: %s\npermissions: %03o",
                  (unsigned long long)sx.stx_size, created, modified, accessed,
                  S_ISDIR(sx.stx_mode) ? "true" : "false", S_ISREG(sx.stx_mode) ? "true" : "false",
                  (unsigned)(sx.stx_mode & 0777));
    free(created);
    free(modified);
    free(accessed);
    if (S_ISREG(sx.stx_mode) && sx.stx_size < LARGE_FILE && !is_image(dc_mime_type(valid))) {
        char *raw;
        size_t len;
        if (!dc_slurp(valid, &raw, &len, &why)) {
            size_t dl;
            char *dec = mb_utf8_repair(raw, len, &dl);
            size_t lc = count_nl(dec, dl);
            mb_buf_printf(&b, "\nlineCount: %zu\nlastLine: %zu\nappendPosition: %zu", lc, lc - 1, lc);
            free(dec);
            free(raw);
        } else {
            free(why);
        }
    }
    free(valid);
    mb_mcp_text_n(res, b.data, b.len);
    mb_buf_free(&b);
    return 0;
fail:
    dc_error(res, why);
    free(why);
    return 1;
}
