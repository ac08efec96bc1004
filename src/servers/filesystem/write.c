/*
 * write.c - the changing tools of the filesystem server: write_file,
 * edit_file (exact match, then whitespace-flexible line match, then a
 * git-style diff in a ```diff fence), create_directory, move_file.
 *
 * Writes never go through an existing symlink: a new file is created with
 * O_EXCL, an existing one is replaced by renaming a sibling temp file over
 * it (fs_write_replace), as upstream does.
 */
#define _GNU_SOURCE /* memmem */
#include "servers/filesystem/fs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int fs_write_file(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    const char *req = mb_mcp_arg_str(args, "path", "");
    json_t *content = json_object_get(args, "content");
    char *path, *why;
    if (fs_resolve(call, res, req, &path)) return MB_MCP_FAILED;
    int rc = fs_write_replace(path, json_string_value(content), json_string_length(content), 1, &why);
    free(path);
    if (rc) {
        fs_fail(call, res, why);
        free(why);
        return MB_MCP_FAILED;
    }
    char *text = mb_asprintf("Successfully wrote to %s", req);
    fs_text_result(call, res, text, strlen(text));
    free(text);
    return 0;
}

/* ------------------------------------------------------------ edit_file */

/* "\r\n" -> "\n" */
static char *crlf_to_lf(const char *s, size_t n, size_t *out)
{
    char *r = mb_malloc(n + 1);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\r' && i + 1 < n && s[i + 1] == '\n') continue;
        r[k++] = s[i];
    }
    r[k] = '\0';
    *out = k;
    return r;
}

typedef struct span {
    const char *p;
    size_t n;
} span;

/* Splits s on '\n' (like String#split("\n")). */
static span *split_lines(const char *s, size_t n, size_t *count)
{
    size_t c = 1;
    for (size_t i = 0; i < n; i++) c += s[i] == '\n';
    span *v = mb_malloc(c * sizeof *v);
    size_t k = 0, start = 0;
    for (size_t i = 0; i <= n; i++)
        if (i == n || s[i] == '\n') {
            v[k++] = (span){s + start, i - start};
            start = i + 1;
        }
    *count = k;
    return v;
}

static int trimmed_equal(span a, span b)
{
    size_t ap = mb_js_space_prefix(a.p, a.n), bp = mb_js_space_prefix(b.p, b.n);
    size_t as = ap < a.n ? mb_js_space_suffix(a.p + ap, a.n - ap) : 0;
    size_t bs = bp < b.n ? mb_js_space_suffix(b.p + bp, b.n - bp) : 0;
    size_t al = a.n - ap - as, bl = b.n - bp - bs;
    return al == bl && !memcmp(a.p + ap, b.p + bp, al);
}

/* String#replace(old, nw) with a string replacement: "$$" is "$", "$&" the
 * match, "$`" what precedes it, "$'" what follows; with no capture groups
 * every other "$" stays as it is. The match is s[at, at + mlen). */
static void put_replacement(mb_buf *b, const char *nw, size_t nlen, const char *s, size_t slen,
                            size_t at, size_t mlen)
{
    for (size_t i = 0; i < nlen; i++) {
        char next = i + 1 < nlen ? nw[i + 1] : '\0';
        if (nw[i] != '$' || !next || !strchr("$&`'", next)) {
            mb_buf_putc(b, nw[i]);
            continue;
        }
        i++;
        if (next == '$') mb_buf_putc(b, '$');
        else if (next == '&') mb_buf_append(b, s + at, mlen);
        else if (next == '`') mb_buf_append(b, s, at);
        else mb_buf_append(b, s + at + mlen, slen - at - mlen);
    }
}

/* Applies one edit to *content (len *clen); `literal`: newText is inserted
 * as is (else as a String#replace replacement). Returns 0, or -1 if no match. */
static int apply_edit(char **content, size_t *clen, const char *old, size_t olen, const char *nw, size_t nlen,
                      int literal)
{
    char *hit = NULL;
    if (olen == 0) hit = *content;
    else if (*clen >= olen) hit = memmem(*content, *clen, old, olen);
    if (hit) {
        size_t at = (size_t)(hit - *content);
        mb_buf b = {0};
        mb_buf_append(&b, *content, at);
        if (literal) mb_buf_append(&b, nw, nlen);
        else put_replacement(&b, nw, nlen, *content, *clen, at, olen);
        mb_buf_append(&b, *content + at + olen, *clen - at - olen);
        free(*content);
        *clen = b.len;
        *content = mb_buf_steal(&b);
        return 0;
    }
    /* Line by line, ignoring leading and trailing whitespace. */
    size_t no, nc;
    span *ol = split_lines(old, olen, &no);
    span *cl = split_lines(*content, *clen, &nc);
    int found = -1;
    for (size_t i = 0; no <= nc && i <= nc - no && found < 0; i++) {
        size_t j = 0;
        while (j < no && trimmed_equal(ol[j], cl[i + j])) j++;
        if (j < no) continue;
        found = (int)i;
        size_t nn;
        span *nl = split_lines(nw, nlen, &nn);
        size_t ind = mb_js_space_prefix(cl[i].p, cl[i].n);
        mb_buf b = {0};
        for (size_t k = 0; k < i; k++) {
            mb_buf_append(&b, cl[k].p, cl[k].n);
            mb_buf_putc(&b, '\n');
        }
        for (size_t k = 0; k < nn; k++) {
            if (k) mb_buf_putc(&b, '\n');
            size_t lead = mb_js_space_prefix(nl[k].p, nl[k].n);
            if (k == 0) {
                mb_buf_append(&b, cl[i].p, ind);
                mb_buf_append(&b, nl[k].p + lead, nl[k].n - lead);
                continue;
            }
            size_t old_ind = k < no ? mb_js_space_prefix(ol[k].p, ol[k].n) : 0;
            if (old_ind && lead) {
                long rel = (long)mb_utf16_len(nl[k].p, lead) - (long)mb_utf16_len(ol[k].p, old_ind);
                mb_buf_append(&b, cl[i].p, ind);
                for (long s = 0; s < rel; s++) mb_buf_putc(&b, ' ');
                mb_buf_append(&b, nl[k].p + lead, nl[k].n - lead);
            } else {
                mb_buf_append(&b, nl[k].p, nl[k].n);
            }
        }
        for (size_t k = i + no; k < nc; k++) {
            mb_buf_putc(&b, '\n');
            mb_buf_append(&b, cl[k].p, cl[k].n);
        }
        free(nl);
        free(cl);
        cl = NULL;
        free(*content);
        *clen = b.len;
        *content = b.data ? mb_buf_steal(&b) : mb_strdup("");
    }
    free(ol);
    free(cl);
    return found < 0 ? -1 : 0;
}

int fs_edit_file(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    const fs_version *v = ((fs_server *)mb_mcp_call_data(call))->v;
    char *path, *why = NULL, *raw;
    size_t rawlen;
    if (fs_resolve(call, res, mb_mcp_arg_str(args, "path", ""), &path)) return MB_MCP_FAILED;
    if (fs_read_all(path, &raw, &rawlen, &why)) {
        free(path);
        fs_fail(call, res, why);
        free(why);
        return MB_MCP_FAILED;
    }
    size_t dl, olen, clen;
    char *decoded = mb_utf8_repair(raw, rawlen, &dl);
    free(raw);
    char *original = crlf_to_lf(decoded, dl, &olen);
    free(decoded);
    char *content = mb_memdup0(original, olen);
    clen = olen;
    json_t *edits = json_object_get(args, "edits");
    size_t i;
    json_t *e;
    json_array_foreach(edits, i, e) {
        json_t *jo = json_object_get(e, "oldText"), *jn = json_object_get(e, "newText");
        size_t ol, nl;
        char *o = crlf_to_lf(json_string_value(jo), json_string_length(jo), &ol);
        char *n = crlf_to_lf(json_string_value(jn), json_string_length(jn), &nl);
        int miss = apply_edit(&content, &clen, o, ol, n, nl, v->replace_literal);
        free(o);
        free(n);
        if (miss) {
            mb_buf m = {0};
            mb_buf_puts(&m, "Could not find exact match for edit:\n");
            mb_buf_append(&m, json_string_value(jo), json_string_length(jo));
            fs_fail(call, res, m.data);
            mb_buf_free(&m);
            free(content);
            free(original);
            free(path);
            return MB_MCP_FAILED;
        }
    }
    char *diff = fs_unified_diff(path, original, olen, content, clen, v->jsdiff);
    int ticks = 3;
    for (;;) {
        char fence[64];
        memset(fence, '`', (size_t)ticks);
        fence[ticks] = '\0';
        if (ticks >= 63 || !strstr(diff, fence)) break;
        ticks++;
    }
    mb_buf out = {0};
    for (int k = 0; k < ticks; k++) mb_buf_putc(&out, '`');
    mb_buf_puts(&out, "diff\n");
    mb_buf_puts(&out, diff);
    for (int k = 0; k < ticks; k++) mb_buf_putc(&out, '`');
    mb_buf_puts(&out, "\n\n");
    free(diff);
    int rc = 0;
    if (!mb_mcp_arg_bool(args, "dryRun", 0)) rc = fs_write_replace(path, content, clen, 0, &why);
    if (rc) {
        fs_fail(call, res, why);
        free(why);
    } else {
        fs_text_result(call, res, out.data, out.len);
    }
    mb_buf_free(&out);
    free(content);
    free(original);
    free(path);
    return rc ? MB_MCP_FAILED : 0;
}

/* ---------------------------------------------------- create_directory */

/* Node's fs.mkdir(p, {recursive: true}); errors name the requested path. */
static int mkdir_recursive(const char *p, char **why)
{
    if (mkdir(p, 0777) == 0) return 0;
    int e = errno;
    struct stat st;
    if (e == EEXIST) {
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) return 0;
    } else if (e == ENOENT) {
        mb_err err;
        if (mb_mkdir_p(p, 0777, &err) == 0) return 0;
        e = errno ? errno : ENOENT;
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) return 0;
    }
    *why = mb_node_fs_error(e, "mkdir", p, NULL);
    return MB_EIO;
}

int fs_create_directory(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    const char *req = mb_mcp_arg_str(args, "path", "");
    char *path, *why;
    if (fs_resolve(call, res, req, &path)) return MB_MCP_FAILED;
    int rc = mkdir_recursive(path, &why);
    free(path);
    if (rc) {
        fs_fail(call, res, why);
        free(why);
        return MB_MCP_FAILED;
    }
    char *text = mb_asprintf("Successfully created directory %s", req);
    fs_text_result(call, res, text, strlen(text));
    free(text);
    return 0;
}

/* ----------------------------------------------------------- move_file */

int fs_move_file(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    const char *src = mb_mcp_arg_str(args, "source", ""), *dst = mb_mcp_arg_str(args, "destination", "");
    char *s, *d;
    if (fs_resolve(call, res, src, &s)) return MB_MCP_FAILED;
    if (fs_resolve(call, res, dst, &d)) {
        free(s);
        return MB_MCP_FAILED;
    }
    int rc = rename(s, d);
    if (rc) {
        char *why = mb_node_fs_error(errno, "rename", s, d);
        fs_fail(call, res, why);
        free(why);
    } else {
        char *text = mb_asprintf("Successfully moved %s to %s", src, dst);
        fs_text_result(call, res, text, strlen(text));
        free(text);
    }
    free(s);
    free(d);
    return rc ? MB_MCP_FAILED : 0;
}
