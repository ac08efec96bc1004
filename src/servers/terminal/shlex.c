/*
 * shlex.c - Python's shlex.split() (POSIX mode) and realpath(strict=False).
 *
 * cli-mcp-server splits commands with shlex.split and resolves paths with
 * os.path.realpath; both are reproduced state for state so that what the
 * terminal accepts, refuses and runs is what the upstream would.
 */
#include "servers/terminal/terminal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void mb_term_strv_free(char **v)
{
    if (!v) return;
    for (char **p = v; *p; p++) free(*p);
    free(v);
}

static int is_ws(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

typedef struct strv {
    char **v;
    size_t n, cap;
} strv;

static void strv_push(strv *s, char *item)
{
    if (s->n + 2 > s->cap) {
        s->cap = s->cap ? s->cap * 2 : 8;
        s->v = mb_realloc(s->v, s->cap * sizeof(char *));
    }
    s->v[s->n++] = item;
    s->v[s->n] = NULL;
}

/* States of shlex.read_token: ' ' between tokens, 'a' in a word, a quote char
 * inside quotes, '\\' after an escape (escaped_from says where we came from). */
int mb_term_shlex_split(const char *s, char ***out, mb_buf *errmsg)
{
    strv toks = {0};
    mb_buf tok = {0};
    mb_buf_puts(&tok, "");
    char state = ' ', escaped_from = ' ';
    int quoted = 0;
    const char *p = s;
    for (;;) {
        char c = *p; /* '\0' is end of input */
        if (state == ' ') {
            if (!c) break;
            p++;
            if (is_ws(c)) continue;
            if (c == '\\') {
                escaped_from = 'a';
                state = '\\';
            } else if (c == '\'' || c == '"') {
                state = c;
            } else {
                mb_buf_putc(&tok, c);
                state = 'a';
            }
        } else if (state == '\'' || state == '"') {
            quoted = 1;
            if (!c) {
                mb_buf_puts(errmsg, "No closing quotation");
                goto fail;
            }
            p++;
            if (c == state) state = 'a';
            else if (c == '\\' && state == '"') {
                escaped_from = state;
                state = '\\';
            } else mb_buf_putc(&tok, c);
        } else if (state == '\\') {
            if (!c) {
                mb_buf_puts(errmsg, "No escaped character");
                goto fail;
            }
            p++;
            /* inside quotes only the quote itself or the escape may be escaped */
            if ((escaped_from == '"' || escaped_from == '\'') && c != '\\' && c != escaped_from)
                mb_buf_putc(&tok, '\\');
            mb_buf_putc(&tok, c);
            state = escaped_from;
        } else { /* 'a' */
            if (!c || is_ws(c)) {
                if (tok.len || quoted) strv_push(&toks, mb_strndup(tok.data, tok.len));
                mb_buf_reset(&tok);
                mb_buf_puts(&tok, "");
                quoted = 0;
                state = ' ';
                if (!c) break;
                p++;
                continue;
            }
            p++;
            if (c == '\'' || c == '"') state = c;
            else if (c == '\\') {
                escaped_from = 'a';
                state = '\\';
            } else mb_buf_putc(&tok, c);
        }
    }
    mb_buf_free(&tok);
    if (!toks.v) toks.v = mb_calloc(1, sizeof(char *));
    *out = toks.v;
    return MB_OK;
fail:
    mb_buf_free(&tok);
    mb_term_strv_free(toks.v);
    *out = NULL;
    return MB_EINVAL;
}

/* ------------------------------------------------------------ realpath */

typedef struct seen_link {
    char *path;     /* symlink path */
    char *resolved; /* NULL while being resolved */
} seen_link;

typedef struct seen_set {
    seen_link *v;
    size_t n, cap;
} seen_set;

static seen_link *seen_find(seen_set *s, const char *path)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->v[i].path, path) == 0) return &s->v[i];
    return NULL;
}

/* path := dirname(path) as posixpath.split does (keeps "/" for the root). */
static void path_pop(mb_buf *path, char *last_out, size_t last_cap)
{
    char *slash = strrchr(path->data, '/');
    const char *name = slash ? slash + 1 : path->data;
    if (last_out) snprintf(last_out, last_cap, "%s", name);
    if (!slash) {
        mb_buf_reset(path);
        mb_buf_puts(path, "");
        return;
    }
    size_t keep = (size_t)(slash - path->data);
    /* posixpath.split strips trailing slashes from head unless it is all slashes */
    size_t k = keep;
    while (k > 0 && path->data[k - 1] == '/') k--;
    if (k == 0) k = keep ? keep : 1;
    if (keep == 0) k = 1;
    path->len = k;
    path->data[k] = '\0';
}

static void path_join(mb_buf *path, const char *name)
{
    if (path->len && path->data[path->len - 1] != '/') mb_buf_putc(path, '/');
    mb_buf_puts(path, name);
}

/* Returns 1 when fully resolved, 0 on a symlink loop (path then holds the
 * unresolved remainder joined on, as Python does). */
static int join_realpath(mb_buf *path, const char *rest_in, seen_set *seen, int depth)
{
    char *rest_copy = mb_strdup(rest_in);
    char *rest = rest_copy;
    int ok = 1;
    if (rest[0] == '/') {
        rest++;
        mb_buf_reset(path);
        mb_buf_puts(path, "/");
    }
    while (rest && *rest) {
        char *slash = strchr(rest, '/');
        char *name = rest;
        if (slash) {
            *slash = '\0';
            rest = slash + 1;
        } else {
            rest = NULL;
        }
        if (!*name || strcmp(name, ".") == 0) continue;
        if (strcmp(name, "..") == 0) {
            if (path->len) {
                char last[NAME_MAX + 1];
                path_pop(path, last, sizeof last);
                if (strcmp(last, "..") == 0) {
                    path_join(path, "..");
                    path_join(path, "..");
                }
            } else {
                mb_buf_puts(path, "..");
            }
            continue;
        }
        mb_buf newpath = {0};
        mb_buf_append(&newpath, path->data, path->len);
        mb_buf_puts(&newpath, "");
        path_join(&newpath, name);
        struct stat st;
        int is_link = lstat(newpath.data, &st) == 0 && S_ISLNK(st.st_mode);
        if (!is_link) {
            mb_buf_reset(path);
            mb_buf_append(path, newpath.data, newpath.len);
            mb_buf_free(&newpath);
            continue;
        }
        seen_link *sl = seen_find(seen, newpath.data);
        if (sl) {
            if (sl->resolved) {
                mb_buf_reset(path);
                mb_buf_puts(path, sl->resolved);
                mb_buf_free(&newpath);
                continue;
            }
            /* symlink loop: return newpath joined with the rest */
            mb_buf_reset(path);
            mb_buf_append(path, newpath.data, newpath.len);
            if (rest && *rest) path_join(path, rest);
            mb_buf_free(&newpath);
            ok = 0;
            goto out;
        }
        char target[PATH_MAX];
        ssize_t tn = readlink(newpath.data, target, sizeof target - 1);
        if (tn < 0 || depth > 40) {
            mb_buf_reset(path);
            mb_buf_append(path, newpath.data, newpath.len);
            mb_buf_free(&newpath);
            continue;
        }
        target[tn] = '\0';
        if (seen->n == seen->cap) {
            seen->cap = seen->cap ? seen->cap * 2 : 8;
            seen->v = mb_realloc(seen->v, seen->cap * sizeof(seen_link));
        }
        size_t idx = seen->n++;
        seen->v[idx] = (seen_link){mb_strdup(newpath.data), NULL};
        mb_buf_free(&newpath);
        if (!join_realpath(path, target, seen, depth + 1)) {
            if (rest && *rest) path_join(path, rest);
            ok = 0;
            goto out;
        }
        seen->v[idx].resolved = mb_strdup(path->data);
    }
out:
    free(rest_copy);
    return ok;
}

/* posixpath.normpath for an absolute path. */
static char *normpath_abs(const char *p)
{
    mb_buf b = {0};
    mb_buf_puts(&b, "/");
    char *copy = mb_strdup(p);
    char *save = NULL;
    for (char *name = strtok_r(copy, "/", &save); name; name = strtok_r(NULL, "/", &save)) {
        if (strcmp(name, ".") == 0) continue;
        if (strcmp(name, "..") == 0) {
            if (b.len > 1) path_pop(&b, NULL, 0);
            continue;
        }
        path_join(&b, name);
    }
    free(copy);
    return mb_buf_steal(&b);
}

char *mb_term_realpath(const char *abs_path)
{
    mb_buf path = {0};
    mb_buf_puts(&path, "");
    seen_set seen = {0};
    join_realpath(&path, abs_path, &seen, 0);
    for (size_t i = 0; i < seen.n; i++) {
        free(seen.v[i].path);
        free(seen.v[i].resolved);
    }
    free(seen.v);
    char *r;
    if (path.len && path.data[0] == '/') {
        r = normpath_abs(path.data);
    } else {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd)) snprintf(cwd, sizeof cwd, "/");
        char *joined = mb_asprintf("%s/%s", cwd, path.data);
        r = normpath_abs(joined);
        free(joined);
    }
    mb_buf_free(&path);
    return r;
}
