/*
 * filesystem.c - the `filesystem` server: start-up (--upstream-version and
 * the allowed directories from the command line, /data by default), the
 * path rules of each version, how failures are reported, and the helpers
 * the tool files share. The tool tables are in tools.c.
 *
 * MCP Roots (roots/list) are not supported: the allowed directories are
 * fixed at start-up, which is how every benchmark runs it.
 */
#include "servers/filesystem/fs.h"
#include "servers/common/zod3.h"
#include "servers/servers.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------- helpers */

void fs_text_result(mb_mcp_call *call, mb_mcp_result *res, const char *text, size_t len)
{
    fs_server *fs = mb_mcp_call_data(call);
    mb_mcp_text_n(res, text, len);
    if (!fs->v->structured) return;
    size_t n;
    char *fixed = mb_utf8_repair(text, len, &n);
    json_t *s = json_stringn(fixed, n);
    free(fixed);
    mb_mcp_structured(res, json_pack("{s:o}", "content", s));
}

int fs_fail(mb_mcp_call *call, mb_mcp_result *res, const char *msg)
{
    fs_server *fs = mb_mcp_call_data(call);
    if (!fs->v->catch_all) return mb_mcp_fail_str(res, msg);
    /* catch (error) { return {content: [{type: "text", text: `Error: ${msg}`}], isError: true} }
     * Handlers fail before they add content, so the result holds only this. */
    char *text = mb_asprintf("Error: %s", msg);
    mb_mcp_text(res, text);
    mb_mcp_set_is_error(res, 1);
    free(text);
    return MB_MCP_FAILED;
}

int fs_failf(mb_mcp_call *call, mb_mcp_result *res, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mb_buf b = {0};
    mb_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    int rc = fs_fail(call, res, b.data ? b.data : "");
    mb_buf_free(&b);
    return rc;
}

/* isPathWithinAllowedDirectories for a normalized absolute path, roots
 * compared as they are (2025.7.1 keeps them normalized already). */
static int within_plain(const mb_mcp_roots *roots, const char *abs)
{
    for (size_t i = 0; i < mb_mcp_roots_count(roots); i++) {
        const char *d = mb_mcp_roots_get(roots, i);
        size_t dl = strlen(d);
        if (!strcmp(abs, d)) return 1;
        if (!strcmp(d, "/")) {
            if (abs[0] == '/') return 1;
        } else if (!strncmp(abs, d, dl) && abs[dl] == '/') {
            return 1;
        }
    }
    return 0;
}

/* 2025.7.1's validatePath: a relative path is taken from the working
 * directory; the normalized path, then its realpath (or, for a path that
 * does not exist, its parent's) must lie inside a root. The texts are
 * upstream's; its inner catch turns a parent outside the roots into
 * "Parent directory does not exist" too. */
static int validate_from_cwd(const mb_mcp_roots *roots, const char *requested, char **out, char **why)
{
    *out = NULL;
    *why = NULL;
    char *exp = mb_path_expand_home(requested);
    char *abs = mb_path_resolve(NULL, exp);
    free(exp);
    char *list = mb_mcp_roots_join(roots, ", ");
    int rc = 0;
    char real[PATH_MAX];
    if (!within_plain(roots, abs)) {
        *why = mb_asprintf("Access denied - path outside allowed directories: %s not in %s", abs, list);
        rc = MB_EDENIED;
    } else if (realpath(abs, real)) {
        if (within_plain(roots, real)) {
            *out = mb_strdup(real);
        } else {
            *why = mb_asprintf("Access denied - symlink target outside allowed directories: %s not in %s",
                               real, list);
            rc = MB_EDENIED;
        }
    } else if (errno == ENOENT) {
        const char *slash = strrchr(abs, '/');
        char *parent = slash == abs ? mb_strdup("/") : mb_strndup(abs, (size_t)(slash - abs));
        if (realpath(parent, real) && within_plain(roots, real)) {
            *out = mb_strdup(abs);
        } else {
            *why = mb_asprintf("Parent directory does not exist: %s", parent);
            rc = MB_ENOTFOUND;
        }
        free(parent);
    } else {
        *why = mb_node_fs_error(errno, "realpath", abs, NULL);
        rc = MB_EIO;
    }
    free(list);
    free(abs);
    return rc;
}

int fs_validate_path(const fs_server *fs, const char *path, char **out, char **why)
{
    if (fs->v->roots_relative) return mb_mcp_resolve(fs->roots, path, out, why);
    return validate_from_cwd(fs->roots, path, out, why);
}

int fs_resolve(mb_mcp_call *call, mb_mcp_result *res, const char *path, char **out)
{
    fs_server *fs = mb_mcp_call_data(call);
    char *why = NULL;
    if (fs_validate_path(fs, path, out, &why)) {
        fs_fail(call, res, why);
        free(why);
        return MB_MCP_FAILED;
    }
    return 0;
}

int fs_read_all(const char *path, char **data, size_t *len, char **why)
{
    int fd = mb_open_file(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW, 0);
    if (fd < 0) {
        int e = errno;
        struct stat st;
        /* A dangling symlink: Node would follow it and find nothing. */
        if (e == ELOOP && lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) e = ENOENT;
        *why = mb_node_fs_error(e, "open", path, NULL);
        return MB_EIO;
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 2147483647) {
        /* Node's fs.readFile refuses these (ERR_FS_FILE_TOO_LARGE) */
        *why = mb_asprintf("File size (%lld) is greater than 2 GiB", (long long)st.st_size);
        close(fd);
        return MB_ETOOBIG;
    }
    mb_buf b = {0};
    char chunk[65536];
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0) {
            if (errno == EINTR) continue;
            *why = mb_node_fs_error(errno, "read", NULL, NULL);
            close(fd);
            mb_buf_free(&b);
            return MB_EIO;
        }
        if (n == 0) break;
        mb_buf_append(&b, chunk, (size_t)n);
    }
    close(fd);
    *len = b.len;
    *data = mb_buf_steal(&b);
    return 0;
}

static int write_fd(int fd, const char *data, size_t len, char **why)
{
    while (len) {
        ssize_t n = write(fd, data, len);
        if (n < 0) {
            if (errno == EINTR) continue;
            *why = mb_node_fs_error(errno, "write", NULL, NULL);
            close(fd);
            return MB_EIO;
        }
        data += n;
        len -= (size_t)n;
    }
    close(fd);
    return 0;
}

int fs_write_replace(const char *path, const char *data, size_t len, int exclusive_first, char **why)
{
    if (exclusive_first) {
        /* 'wx': exclusive creation fails on an existing file or symlink. */
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_TRUNC | O_CLOEXEC, 0666);
        if (fd >= 0) return write_fd(fd, data, len, why);
        if (errno != EEXIST) {
            *why = mb_node_fs_error(errno, "open", path, NULL);
            return MB_EIO;
        }
    }
    /* A sibling temp file renamed over the target: rename replaces a
     * symlink instead of writing through it. */
    unsigned char rnd[16];
    char hex[33];
    mb_random_bytes(rnd, sizeof rnd, NULL);
    mb_hex(rnd, sizeof rnd, hex);
    char *tmp = mb_asprintf("%s.%s.tmp", path, hex);
    int rc;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (fd < 0) {
        *why = mb_node_fs_error(errno, "open", tmp, NULL);
        rc = MB_EIO;
    } else {
        rc = write_fd(fd, data, len, why);
    }
    if (!rc && rename(tmp, path) != 0) {
        *why = mb_node_fs_error(errno, "rename", tmp, path);
        rc = MB_EIO;
    }
    if (rc) unlink(tmp);
    free(tmp);
    return rc;
}

char *fs_path_join(const char *a, const char *b)
{
    char *joined = *a ? mb_asprintf("%s/%s", a, b) : mb_strdup(b);
    int abs = joined[0] == '/';
    /* normalize segments, keeping leading ".." of relative paths */
    mb_buf out = {0};
    const char **segs = mb_malloc((strlen(joined) + 2) * sizeof *segs);
    size_t n = 0;
    char *save = NULL;
    for (char *s = strtok_r(joined, "/", &save); s; s = strtok_r(NULL, "/", &save)) {
        if (!strcmp(s, ".")) continue;
        if (!strcmp(s, "..")) {
            if (n && strcmp(segs[n - 1], "..")) {
                n--;
                continue;
            }
            if (abs) continue;
        }
        segs[n++] = s;
    }
    if (abs) mb_buf_putc(&out, '/');
    for (size_t i = 0; i < n; i++) {
        if (i) mb_buf_putc(&out, '/');
        mb_buf_puts(&out, segs[i]);
    }
    if (!out.len) mb_buf_putc(&out, '.');
    free(segs);
    free(joined);
    return mb_buf_steal(&out);
}

/* --------------------------------------------------------------- tools */

int fs_list_allowed_directories(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    fs_server *fs = mb_mcp_call_data(call);
    char *list = mb_mcp_roots_join(fs->roots, "\n");
    char *text = mb_asprintf("Allowed directories:\n%s", list);
    fs_text_result(call, res, text, strlen(text));
    free(text);
    free(list);
    return 0;
}

int fs_unknown_tool(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    return fs_failf(call, res, "Unknown tool: %s", mb_mcp_call_tool(call));
}

/* catch_all versions: every tool goes through here first, as through
 * upstream's `Schema.safeParse(args)`, then on to its handler. */
static int checked_call(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    fs_server *fs = mb_mcp_call_data(call);
    const char *name = mb_mcp_call_tool(call);
    for (size_t i = 0; i < fs->ntools; i++) {
        if (strcmp(fs->tools[i].name, name)) continue;
        json_t *issues = NULL;
        if (fs->schemas[i] && mb_zod3_check(fs->schemas[i], args, &issues)) {
            char *msg = mb_zod3_message(issues);
            int rc = fs_failf(call, res, "Invalid arguments for %s: %s", name, msg);
            free(msg);
            json_decref(issues);
            return rc;
        }
        return fs_version_tools(fs->v)[i].fn(call, args, res);
    }
    return fs_unknown_tool(call, args, res);
}

/* -------------------------------------------------------------- start */

static void fs_free(void *p)
{
    fs_server *fs = p;
    if (!fs) return;
    mb_mcp_roots_free(fs->roots);
    for (size_t i = 0; i < fs->ntools; i++) json_decref(fs->schemas[i]);
    free(fs->schemas);
    free(fs->tools);
    free(fs);
}

static int is_unchecked(const fs_version *v, const char *name)
{
    for (const char *const *u = v->unchecked; u && *u; u++)
        if (!strcmp(*u, name)) return 1;
    return 0;
}

/* The table to register: the version's own, or for catch_all versions
 * copies that go through checked_call. */
static const mb_mcp_tool *tools_to_register(fs_server *fs)
{
    if (!fs->v->catch_all) return fs_version_tools(fs->v);
    size_t n = 0;
    while (fs_version_tools(fs->v)[n].name) n++;
    fs->tools = mb_calloc(n + 1, sizeof *fs->tools);
    fs->schemas = mb_calloc(n + 1, sizeof *fs->schemas);
    for (size_t i = 0; i < n; i++) {
        fs->tools[i] = fs_version_tools(fs->v)[i];
        fs->tools[i].fn = checked_call;
        if (!is_unchecked(fs->v, fs->tools[i].name))
            fs->schemas[i] = json_loads(fs->tools[i].input_schema, 0, NULL);
    }
    fs->ntools = n;
    return fs->tools;
}

/* 2025.7.1's start-up: each directory must exist and be a directory, and
 * is kept as its realpath (or, if that fails, its normalized absolute path). */
static int realpath_roots(char **dirs, size_t n, char ***out, mb_err *err)
{
    char **r = mb_calloc(n + 1, sizeof *r);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        char *exp = mb_path_expand_home(dirs[i]);
        struct stat st;
        if (stat(exp, &st) != 0) {
            char *why = mb_node_fs_error(errno, "stat", exp, NULL);
            rc = mb_err_set(err, MB_ENOTFOUND, "Error accessing directory %s: %s", dirs[i], why);
            free(why);
        } else if (!S_ISDIR(st.st_mode)) {
            rc = mb_err_set(err, MB_ENOTFOUND, "Error: %s is not a directory", dirs[i]);
        } else {
            char *abs = mb_path_resolve(NULL, exp);
            char real[PATH_MAX];
            r[i] = realpath(abs, real) ? mb_strdup(real) : mb_strdup(abs);
            free(abs);
        }
        free(exp);
    }
    if (rc) {
        for (size_t i = 0; i < n; i++) free(r[i]);
        free(r);
        return rc;
    }
    *out = r;
    return 0;
}

int mb_srv_filesystem_create(int argc, char **argv, mb_mcp_server **out, mb_err *err)
{
    static const struct option opts[] = {
        {"upstream-version", required_argument, NULL, 'v'},
        {NULL, 0, NULL, 0},
    };
    const char *want = NULL;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'v') {
            want = optarg;
            continue;
        }
        return mb_err_set(err, MB_EINVAL, "unknown option '%s'", argv[optind - 1]);
    }
    const fs_version *v = fs_version_find(want);
    if (!v) {
        char *list = fs_version_list();
        int rc = mb_err_set(err, MB_EINVAL, "unknown --upstream-version \"%s\" (use one of %s)", want, list);
        free(list);
        return rc;
    }
    char *def[] = {"/data"};
    char **dirs = argv + optind;
    size_t n = (size_t)(argc - optind);
    if (n == 0) {
        struct stat st;
        if (stat("/data", &st) != 0 || !S_ISDIR(st.st_mode))
            return mb_err_set(err, MB_EINVAL,
                              "no allowed directory given and /data does not exist "
                              "(MCP Roots are not supported: name the directories)");
        dirs = def;
        n = 1;
    }
    char **real = NULL;
    int rc;
    if (v->roots_realpath_only && (rc = realpath_roots(dirs, n, &real, err))) return rc;
    fs_server *fs = mb_calloc(1, sizeof *fs);
    fs->v = v;
    rc = mb_mcp_roots_new(real ? real : dirs, n, &fs->roots, err);
    for (size_t i = 0; real && i < n; i++) free(real[i]);
    free(real);
    if (rc) {
        free(fs);
        return MB_ENOTFOUND;
    }
    return mb_mcp_server_new_with_tools(v->info, tools_to_register(fs), fs, fs_free, out, err);
}
