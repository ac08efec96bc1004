/*
 * roots.c - path confinement under allowed directories, the way
 * @modelcontextprotocol/server-filesystem does it (its validatePath and
 * start-up code), with the same error texts, so any server can confine the
 * paths it is given.
 *
 * The rules, in order (see mb_mcp_resolve in mcp.h):
 *   1. "~" and "~/x" are expanded with the home directory.
 *   2. An absolute path is normalized (Node's path.resolve); a relative one
 *      is tried against each root in turn and the first result inside a
 *      root wins (else it is taken against the first root).
 *   3. The normalized path must be a root or beneath one ("/a/bc" is not
 *      beneath "/a/b").
 *   4. realpath() of the path must still be inside - this is what stops a
 *      symlink from leading out. For a path that does not exist yet, the
 *      realpath of its parent must exist and be inside.
 * The check and the later use are separate system calls, as upstream; the
 * sandbox's mount namespace is what holds against a racing attacker.
 */
#include "mcp/mcp.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct mb_mcp_roots {
    char **dirs;
    size_t n;
};

/* ------------------------------------------------------------ path math */

/* Appends the segments of `p` to the segment stack in `b` (which holds an
 * absolute normalized path, "/" at least), resolving "." and "..". */
static void push_segments(mb_buf *b, const char *p)
{
    const char *s = p;
    while (*s) {
        while (*s == '/') s++;
        if (!*s) break;
        const char *e = strchr(s, '/');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        if (n == 1 && s[0] == '.') {
            /* nothing */
        } else if (n == 2 && s[0] == '.' && s[1] == '.') {
            char *last = strrchr(b->data, '/');
            b->len = last && last != b->data ? (size_t)(last - b->data) : 1;
            b->data[b->len] = '\0';
        } else {
            if (b->len > 1) mb_buf_putc(b, '/');
            mb_buf_append(b, s, n);
        }
        s += n;
    }
}

char *mb_path_resolve(const char *base, const char *p)
{
    mb_buf b = {0};
    mb_buf_putc(&b, '/');
    if (p[0] != '/') {
        if (base && base[0] == '/') {
            push_segments(&b, base);
        } else {
            char cwd[PATH_MAX];
            if (getcwd(cwd, sizeof cwd)) push_segments(&b, cwd);
            if (base) push_segments(&b, base);
        }
    }
    push_segments(&b, p);
    return mb_buf_steal(&b);
}

static const char *home_dir(void)
{
    const char *h = getenv("HOME");
    if (h && *h) return h;
    struct passwd *pw = getpwuid(getuid());
    return pw && pw->pw_dir ? pw->pw_dir : "/";
}

/* Node's path.join(a, b) for the home expansion: concatenation, then
 * normalization that keeps the path's absoluteness. */
char *mb_path_expand_home(const char *p)
{
    if (!strcmp(p, "~") || !strncmp(p, "~/", 2)) {
        const char *h = home_dir();
        char *joined = mb_asprintf("%s/%s", h, p + 1);
        char *r;
        if (joined[0] == '/') {
            r = mb_path_resolve("/", joined);
        } else {
            r = mb_strdup(joined); /* a relative HOME: leave it to the caller */
        }
        free(joined);
        return r;
    }
    return mb_strdup(p);
}

/* server-filesystem's normalizePath on POSIX, for absolute inputs: trimmed,
 * one surrounding quote removed at each end, slashes collapsed, trailing
 * slash dropped. */
static char *normalize(const char *p)
{
    size_t len = strlen(p);
    size_t pre = mb_js_space_prefix(p, len);
    size_t suf = pre < len ? mb_js_space_suffix(p + pre, len - pre) : 0;
    const char *s = p + pre;
    size_t n = len - pre - suf;
    if (n && (s[0] == '"' || s[0] == '\'')) s++, n--;
    if (n && (s[n - 1] == '"' || s[n - 1] == '\'')) n--;
    mb_buf b = {0};
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '/' && b.len && b.data[b.len - 1] == '/') continue;
        mb_buf_putc(&b, s[i]);
    }
    if (b.len > 1 && b.data[b.len - 1] == '/') b.data[--b.len] = '\0';
    if (!b.data) return mb_strdup("");
    return mb_buf_steal(&b);
}

static int within(const mb_mcp_roots *r, const char *abs)
{
    if (!abs[0]) return 0;
    char *p = mb_path_resolve(NULL, abs);
    int ok = 0;
    for (size_t i = 0; i < r->n && !ok; i++) {
        char *d = mb_path_resolve(NULL, r->dirs[i]);
        size_t dl = strlen(d);
        if (!strcmp(p, d)) ok = 1;
        else if (!strcmp(d, "/")) ok = p[0] == '/';
        else ok = !strncmp(p, d, dl) && p[dl] == '/';
        free(d);
    }
    free(p);
    return ok;
}

int mb_mcp_roots_contains(const mb_mcp_roots *roots, const char *abs)
{
    char *n = normalize(abs);
    int ok = within(roots, n);
    free(n);
    return ok;
}

/* ------------------------------------------------------------- roots */

static void add_dir(mb_mcp_roots *r, char *dir)
{
    r->dirs = mb_realloc(r->dirs, (r->n + 1) * sizeof *r->dirs);
    r->dirs[r->n++] = dir;
}

int mb_mcp_roots_new(char *const *dirs, size_t n, mb_mcp_roots **out, mb_err *err)
{
    mb_mcp_roots all = {0};
    for (size_t i = 0; i < n; i++) {
        char *exp = mb_path_expand_home(dirs[i]);
        char *abs = mb_path_resolve(NULL, exp);
        char *orig = normalize(abs);
        char real[PATH_MAX];
        if (realpath(abs, real)) {
            char *res = normalize(real);
            if (strcmp(orig, res)) {
                add_dir(&all, orig);
                add_dir(&all, res);
            } else {
                add_dir(&all, res);
                free(orig);
            }
        } else {
            add_dir(&all, orig);
        }
        free(exp);
        free(abs);
    }
    mb_mcp_roots *r = mb_calloc(1, sizeof *r);
    for (size_t i = 0; i < all.n; i++) {
        struct stat st;
        if (stat(all.dirs[i], &st) == 0) {
            if (S_ISDIR(st.st_mode)) {
                add_dir(r, all.dirs[i]);
                continue;
            }
            fprintf(stderr, "Warning: %s is not a directory, skipping\n", all.dirs[i]);
        } else {
            fprintf(stderr, "Warning: Cannot access directory %s, skipping\n", all.dirs[i]);
        }
        free(all.dirs[i]);
    }
    int any = all.n > 0;
    free(all.dirs);
    if (any && r->n == 0) {
        mb_mcp_roots_free(r);
        return mb_err_set(err, MB_EINVAL, "None of the specified directories are accessible");
    }
    *out = r;
    return 0;
}

void mb_mcp_roots_free(mb_mcp_roots *roots)
{
    if (!roots) return;
    for (size_t i = 0; i < roots->n; i++) free(roots->dirs[i]);
    free(roots->dirs);
    free(roots);
}

size_t mb_mcp_roots_count(const mb_mcp_roots *roots) { return roots->n; }

const char *mb_mcp_roots_get(const mb_mcp_roots *roots, size_t i)
{
    return i < roots->n ? roots->dirs[i] : NULL;
}

char *mb_mcp_roots_join(const mb_mcp_roots *roots, const char *sep)
{
    mb_buf b = {0};
    for (size_t i = 0; i < roots->n; i++) {
        if (i) mb_buf_puts(&b, sep);
        mb_buf_puts(&b, roots->dirs[i]);
    }
    return mb_buf_steal(&b);
}

/* ------------------------------------------------------------- resolve */

static char *dirname_of(const char *abs)
{
    const char *slash = strrchr(abs, '/');
    if (!slash || slash == abs) return mb_strdup("/");
    return mb_strndup(abs, (size_t)(slash - abs));
}

int mb_mcp_resolve(const mb_mcp_roots *roots, const char *requested, char **out, char **why)
{
    *out = NULL;
    *why = NULL;
    char *exp = mb_path_expand_home(requested);
    char *abs = NULL;
    if (exp[0] == '/') {
        abs = mb_path_resolve("/", exp);
    } else if (roots->n == 0) {
        abs = mb_path_resolve(NULL, exp);
    } else {
        for (size_t i = 0; i < roots->n && !abs; i++) {
            char *cand = mb_path_resolve(roots->dirs[i], exp);
            char *nc = normalize(cand);
            if (within(roots, nc)) abs = cand;
            else free(cand);
            free(nc);
        }
        if (!abs) abs = mb_path_resolve(roots->dirs[0], exp);
    }
    free(exp);

    int rc = 0;
    char *list = mb_mcp_roots_join(roots, ", ");
    char *norm = normalize(abs);
    int inside = within(roots, norm);
    free(norm);
    if (!inside) {
        *why = mb_asprintf("Access denied - path outside allowed directories: %s not in %s", abs, list);
        rc = MB_EDENIED;
        goto out;
    }
    char real[PATH_MAX];
    if (realpath(abs, real)) {
        char *nr = normalize(real);
        int ok = within(roots, nr);
        free(nr);
        if (!ok) {
            *why = mb_asprintf("Access denied - symlink target outside allowed directories: %s not in %s",
                               real, list);
            rc = MB_EDENIED;
            goto out;
        }
        *out = mb_strdup(real);
        goto out;
    }
    int e = errno;
    if (e == ENOENT) {
        char *parent = dirname_of(abs);
        char preal[PATH_MAX];
        int ok = 0;
        if (realpath(parent, preal)) {
            char *np = normalize(preal);
            ok = within(roots, np);
            free(np);
        }
        /* Upstream's inner catch turns "outside" into this text as well. */
        if (!ok) {
            *why = mb_asprintf("Parent directory does not exist: %s", parent);
            rc = MB_ENOTFOUND;
        } else {
            *out = mb_strdup(abs);
        }
        free(parent);
        goto out;
    }
    *why = mb_node_fs_error(e, "realpath", abs, NULL);
    rc = MB_EIO;
out:
    free(list);
    free(abs);
    return rc;
}
