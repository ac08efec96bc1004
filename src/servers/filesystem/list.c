/*
 * list.c - the looking-around tools of the filesystem server:
 * list_directory, list_directory_with_sizes, directory_tree, search_files,
 * get_file_info.
 *
 * Directory entries come in Node's readdir order (libuv sorts them by byte
 * value) and are typed from the entry itself, as Node's Dirent is: a symlink
 * is neither a directory nor followed, so trees and searches never leave
 * through one.
 */
#define _GNU_SOURCE
#include "servers/filesystem/fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct entry {
    char *name;
    int is_dir;
    double size; /* list_directory_with_sizes only */
} entry;

static int by_bytes(const void *a, const void *b)
{
    return strcmp(((const entry *)a)->name, ((const entry *)b)->name);
}

static void free_entries(entry *v, size_t n)
{
    for (size_t i = 0; i < n; i++) free(v[i].name);
    free(v);
}

/* Node's fs.readdir(path, {withFileTypes: true}). */
static int read_dir(const char *path, entry **out, size_t *count, char **why)
{
    DIR *d = opendir(path);
    if (!d) {
        *why = mb_node_fs_error(errno, "scandir", path, NULL);
        return MB_EIO;
    }
    entry *v = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        int is_dir = de->d_type == DT_DIR;
        if (de->d_type == DT_UNKNOWN) {
            struct stat st;
            is_dir = fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 32;
            v = mb_realloc(v, cap * sizeof *v);
        }
        v[n++] = (entry){mb_strdup(de->d_name), is_dir, 0};
    }
    closedir(d);
    if (n) qsort(v, n, sizeof *v, by_bytes);
    *out = v;
    *count = n;
    return 0;
}

static int fail_why(mb_mcp_call *call, mb_mcp_result *res, char *why)
{
    fs_fail(call, res, why);
    free(why);
    return MB_MCP_FAILED;
}

/* ------------------------------------------------------ list_directory */

int fs_list_directory(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    char *path, *why;
    if (fs_resolve(call, res, mb_mcp_arg_str(args, "path", ""), &path)) return MB_MCP_FAILED;
    entry *v;
    size_t n;
    int rc = read_dir(path, &v, &n, &why);
    free(path);
    if (rc) return fail_why(call, res, why);
    mb_buf out = {0};
    for (size_t i = 0; i < n; i++) {
        if (i) mb_buf_putc(&out, '\n');
        mb_buf_printf(&out, "%s %s", v[i].is_dir ? "[DIR]" : "[FILE]", v[i].name);
    }
    fs_text_result(call, res, out.data ? out.data : "", out.len);
    mb_buf_free(&out);
    free_entries(v, n);
    return 0;
}

/* -------------------------------------------- list_directory_with_sizes */

/* upstream's formatSize; `clamped`: past TB stays in TB (else units[i] is
 * undefined and prints so, as 2025.7.1 does) */
static char *format_size(double bytes, int clamped)
{
    static const char *units[] = {"B", "KB", "MB", "GB", "TB"};
    if (bytes == 0) return mb_strdup("0 B");
    double i = floor(log(bytes) / log(1024));
    if (i <= 0) {
        char *num = mb_js_number(bytes);
        char *r = mb_asprintf("%s B", num);
        free(num);
        return r;
    }
    int unit = i > 4 && clamped ? 4 : (int)i;
    char *num = mb_js_to_fixed(bytes / pow(1024, unit), 2);
    char *r = mb_asprintf("%s %s", num, unit <= 4 ? units[unit] : "undefined");
    free(num);
    return r;
}

/* s padded with spaces to `width` UTF-16 units, on the right or left. */
static void pad(mb_buf *b, const char *s, size_t width, int left)
{
    size_t n = mb_utf16_len(s, strlen(s));
    if (!left) mb_buf_puts(b, s);
    for (; n < width; n++) mb_buf_putc(b, ' ');
    if (left) mb_buf_puts(b, s);
}

/* A stable merge sort (Array#sort is stable). */
static void stable_sort(entry *v, size_t n, int (*cmp)(const entry *, const entry *))
{
    if (n < 2) return;
    entry *tmp = mb_malloc(n * sizeof *tmp);
    for (size_t width = 1; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) tmp[k++] = cmp(&v[j], &v[i]) < 0 ? v[j++] : v[i++];
            while (i < mid) tmp[k++] = v[i++];
            while (j < hi) tmp[k++] = v[j++];
        }
        memcpy(v, tmp, n * sizeof *v);
    }
    free(tmp);
}

static int cmp_name(const entry *a, const entry *b) { return mb_js_locale_compare(a->name, b->name); }
static int cmp_size(const entry *a, const entry *b) { return b->size > a->size ? 1 : b->size < a->size ? -1 : 0; }

int fs_list_directory_with_sizes(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    char *path, *why;
    if (fs_resolve(call, res, mb_mcp_arg_str(args, "path", ""), &path)) return MB_MCP_FAILED;
    entry *v;
    size_t n;
    int rc = read_dir(path, &v, &n, &why);
    if (rc) {
        free(path);
        return fail_why(call, res, why);
    }
    size_t files = 0, dirs = 0;
    double total = 0;
    for (size_t i = 0; i < n; i++) {
        char *full = fs_path_join(path, v[i].name);
        struct stat st;
        v[i].size = stat(full, &st) == 0 ? (double)st.st_size : 0;
        free(full);
        if (v[i].is_dir) dirs++;
        else files++, total += v[i].size;
    }
    free(path);
    const char *sort_by = mb_mcp_arg_str(args, "sortBy", "name");
    int clamped = ((fs_server *)mb_mcp_call_data(call))->v->size_units_clamped;
    stable_sort(v, n, strcmp(sort_by, "size") ? cmp_name : cmp_size);
    mb_buf out = {0};
    for (size_t i = 0; i < n; i++) {
        mb_buf_puts(&out, v[i].is_dir ? "[DIR] " : "[FILE] ");
        pad(&out, v[i].name, 30, 0);
        mb_buf_putc(&out, ' ');
        if (!v[i].is_dir) {
            char *sz = format_size(v[i].size, clamped);
            pad(&out, sz, 10, 1);
            free(sz);
        }
        mb_buf_putc(&out, '\n');
    }
    char *ts = format_size(total, clamped);
    mb_buf_printf(&out, "\nTotal: %zu files, %zu directories\nCombined size: %s", files, dirs, ts);
    free(ts);
    fs_text_result(call, res, out.data, out.len);
    mb_buf_free(&out);
    free_entries(v, n);
    return 0;
}

/* ----------------------------------------------------- directory_tree */

static int excluded(const char *rel, json_t *patterns)
{
    size_t i;
    json_t *p;
    json_array_foreach(patterns, i, p) {
        const char *pat = json_string_value(p);
        if (strchr(pat, '*')) {
            if (mb_minimatch(rel, pat, MB_GLOB_DOT)) return 1;
            continue;
        }
        char *a = mb_asprintf("**/%s", pat), *b = mb_asprintf("**/%s/**", pat);
        int hit = mb_minimatch(rel, pat, MB_GLOB_DOT) || mb_minimatch(rel, a, MB_GLOB_DOT) ||
                  mb_minimatch(rel, b, MB_GLOB_DOT);
        free(a);
        free(b);
        if (hit) return 1;
    }
    return 0;
}

/* upstream's buildTree: `cur` is the user's path joined with the entry
 * names (validated at every level), `rel` the path relative to the root. */
static json_t *build_tree(mb_mcp_call *call, mb_mcp_result *res, const char *cur, const char *rel,
                          json_t *patterns, int depth)
{
    char *path, *why;
    if (fs_resolve(call, res, cur, &path)) return NULL;
    entry *v;
    size_t n;
    if (depth > 256) {
        free(path);
        fs_fail(call, res, "Maximum directory depth exceeded");
        return NULL;
    }
    int rc = read_dir(path, &v, &n, &why);
    free(path);
    if (rc) {
        fail_why(call, res, why);
        return NULL;
    }
    json_t *list = json_array();
    for (size_t i = 0; i < n; i++) {
        char *erel = *rel ? mb_asprintf("%s/%s", rel, v[i].name) : mb_strdup(v[i].name);
        if (excluded(erel, patterns)) {
            free(erel);
            continue;
        }
        json_t *e = json_pack("{s:s, s:s}", "name", v[i].name, "type", v[i].is_dir ? "directory" : "file");
        if (!e) { /* a name that is not UTF-8 */
            size_t nl;
            char *fixed = mb_utf8_repair(v[i].name, strlen(v[i].name), &nl);
            e = json_pack("{s:s, s:s}", "name", fixed, "type", v[i].is_dir ? "directory" : "file");
            free(fixed);
        }
        if (v[i].is_dir) {
            char *sub = fs_path_join(cur, v[i].name);
            json_t *children = build_tree(call, res, sub, erel, patterns, depth + 1);
            free(sub);
            if (!children) {
                free(erel);
                json_decref(e);
                json_decref(list);
                free_entries(v, n);
                return NULL;
            }
            json_object_set_new(e, "children", children);
        }
        free(erel);
        json_array_append_new(list, e);
    }
    free_entries(v, n);
    return list;
}

int fs_directory_tree(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    fs_server *fs = mb_mcp_call_data(call);
    json_t *excludes = fs->v->tree_excludes ? json_object_get(args, "excludePatterns") : NULL;
    json_t *tree = build_tree(call, res, mb_mcp_arg_str(args, "path", ""), "", excludes, 0);
    if (!tree) return MB_MCP_FAILED;
    char *text = mb_js_stringify(tree, 2);
    json_decref(tree);
    fs_text_result(call, res, text, strlen(text));
    free(text);
    return 0;
}

/* ------------------------------------------------------- search_files */

typedef struct search {
    const fs_server *fs;
    const char *pattern;
    char *lower_pattern; /* substring search: the pattern, lower-cased */
    json_t *excludes;
    mb_buf out;
    size_t hits;
} search;

/* Is `rel` excluded? 2026: a pattern is a glob. 2025.7.1: a pattern with a
 * '*' is a glob; one without excludes that name at any depth and all that
 * lies below it (upstream turns it into the glob of any-dirs/name/any-dirs). */
static int is_excluded(const search *s, const char *rel)
{
    size_t i;
    json_t *p;
    json_array_foreach(s->excludes, i, p) {
        const char *pat = json_string_value(p);
        int hit;
        if (s->fs->v->glob_search || strchr(pat, '*')) {
            hit = mb_minimatch(rel, pat, MB_GLOB_DOT);
        } else {
            char *g = mb_asprintf("**/%s/**", pat);
            hit = mb_minimatch(rel, g, MB_GLOB_DOT);
            free(g);
        }
        if (hit) return 1;
    }
    return 0;
}

/* Does this entry match? A glob over the relative path, or (2025.7.1) the
 * lower-cased name containing the lower-cased pattern. */
static int is_match(const search *s, const char *rel, const char *name)
{
    if (s->fs->v->glob_search) return mb_minimatch(rel, s->pattern, MB_GLOB_DOT);
    char *lower = mb_js_lower(name, strlen(name), NULL);
    int hit = strstr(lower, s->lower_pattern) != NULL;
    free(lower);
    return hit;
}

static int search_dir(search *s, const char *dir, const char *rel, int depth, char **why)
{
    entry *v;
    size_t n;
    if (read_dir(dir, &v, &n, why)) return MB_EIO;
    for (size_t i = 0; i < n; i++) {
        char *full = fs_path_join(dir, v[i].name);
        char *erel = *rel ? mb_asprintf("%s/%s", rel, v[i].name) : mb_strdup(v[i].name);
        char *ok = NULL, *skip = NULL;
        /* an entry that resolves outside the roots (a symlink) is skipped */
        if (!fs_validate_path(s->fs, full, &ok, &skip) && !is_excluded(s, erel)) {
            if (is_match(s, erel, v[i].name)) {
                if (s->hits++) mb_buf_putc(&s->out, '\n');
                mb_buf_puts(&s->out, full);
            }
            if (v[i].is_dir && depth < 256) {
                char *ignored = NULL;
                search_dir(s, full, erel, depth + 1, &ignored); /* errors below the root are skipped */
                free(ignored);
            }
        }
        free(ok);
        free(skip);
        free(full);
        free(erel);
    }
    free_entries(v, n);
    return 0;
}

int fs_search_files(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    fs_server *fs = mb_mcp_call_data(call);
    char *path, *why = NULL;
    if (fs_resolve(call, res, mb_mcp_arg_str(args, "path", ""), &path)) return MB_MCP_FAILED;
    search s = {.fs = fs,
                .pattern = mb_mcp_arg_str(args, "pattern", ""),
                .excludes = json_object_get(args, "excludePatterns")};
    if (!fs->v->glob_search) s.lower_pattern = mb_js_lower(s.pattern, strlen(s.pattern), NULL);
    int rc = search_dir(&s, path, "", 0, &why);
    free(s.lower_pattern);
    free(path);
    if (rc) {
        mb_buf_free(&s.out);
        return fail_why(call, res, why);
    }
    if (s.hits) fs_text_result(call, res, s.out.data, s.out.len);
    else fs_text_result(call, res, "No matches found", 16);
    mb_buf_free(&s.out);
    return 0;
}

/* ------------------------------------------------------ get_file_info */

int fs_get_file_info(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    char *path;
    if (fs_resolve(call, res, mb_mcp_arg_str(args, "path", ""), &path)) return MB_MCP_FAILED;
    struct statx sx;
    if (statx(AT_FDCWD, path, 0, STATX_BASIC_STATS | STATX_BTIME, &sx) != 0) {
        char *why = mb_node_fs_error(errno, "stat", path, NULL);
        free(path);
        return fail_why(call, res, why);
    }
    free(path);
#define T(ts) ((double)(ts).tv_sec + (double)(ts).tv_nsec / 1e9)
    double btime = (sx.stx_mask & STATX_BTIME) ? T(sx.stx_btime) : 0;
    char *created = mb_js_date_string(btime), *modified = mb_js_date_string(T(sx.stx_mtime)),
         *accessed = mb_js_date_string(T(sx.stx_atime));
#undef T
    char *size = mb_js_number((double)sx.stx_size);
    char *text = mb_asprintf("size: %s\ncreated: %s\nmodified: %s\naccessed: %s\nisDirectory: %s\n"
                             "isFile: %s\npermissions: %03o",
                             size, created, modified, accessed, S_ISDIR(sx.stx_mode) ? "true" : "false",
                             S_ISREG(sx.stx_mode) ? "true" : "false", (unsigned)(sx.stx_mode & 0777));
    fs_text_result(call, res, text, strlen(text));
    free(text);
    free(size);
    free(created);
    free(modified);
    free(accessed);
    return 0;
}
