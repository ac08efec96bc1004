/*
 * paths.c - desktop-commander's validatePath (tools/filesystem.ts 0.2.7).
 *
 * The requested path has a leading `~` expanded, is made absolute against
 * the working directory and normalized; it must then equal or lie beneath
 * one of config.allowedDirectories, compared case-insensitively after
 * path.normalize (an empty list, or one holding "/", allows everything). An
 * existing path is returned as its realpath, a missing one as the absolute
 * path. Refusal: "Path not allowed: P. Must be within one of these
 * directories: D1, D2".
 *
 * One deliberate difference: upstream checks only the path as written, so a
 * symlink inside an allowed directory leads anywhere. Here the realpath of
 * the target (or of its deepest existing ancestor, for a path to be created)
 * must pass the same check, else the same refusal text is given.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "servers/desktop-commander/dc.h"

/* The allowed directories as strings (config order); a missing or non-array
 * value becomes [home] in the config, as upstream's getAllowedDirs does. */
static json_t *allowed_dirs(dc_server *dc)
{
    pthread_mutex_lock(&dc->lock);
    json_t *a = json_object_get(dc->config, "allowedDirectories");
    if (!json_is_array(a)) {
        a = json_pack("[s]", dc->home);
        json_object_set_new(dc->config, "allowedDirectories", a);
        dc_config_save_locked(dc, NULL);
    }
    json_t *r = json_deep_copy(a);
    pthread_mutex_unlock(&dc->lock);
    return r;
}

char *dc_allowed_joined(dc_server *dc)
{
    json_t *a = allowed_dirs(dc);
    mb_buf b = {0};
    mb_buf_puts(&b, "");
    size_t i;
    json_t *v;
    json_array_foreach(a, i, v) {
        if (i) mb_buf_puts(&b, ", ");
        if (json_is_string(v)) mb_buf_puts(&b, json_string_value(v));
        else if (!json_is_null(v)) {
            char *s = mb_js_stringify(v, 0);
            mb_buf_puts(&b, s);
            free(s);
        }
    }
    json_decref(a);
    return mb_buf_steal(&b);
}

static char *expand_home(dc_server *dc, const char *p)
{
    if (!strcmp(p, "~") || !strncmp(p, "~/", 2)) {
        char *j = mb_asprintf("%s/%s", dc->home, p + 1);
        char *r = mb_path_resolve("/", j); /* path.join normalizes */
        free(j);
        return r;
    }
    return mb_strdup(p);
}

/* path.normalize(expandHome(p)).toLowerCase() without a trailing '/'. */
static char *norm_lower(dc_server *dc, const char *p)
{
    char *e = expand_home(dc, p);
    char *n;
    if (e[0] == '/') {
        n = mb_path_resolve("/", e);
    } else {
        /* relative allowed entries never match an absolute path; keep them
         * relative so that they do not */
        n = mb_asprintf("./%s", e);
    }
    free(e);
    size_t len;
    char *l = mb_js_lower(n, strlen(n), &len);
    free(n);
    if (len > 1 && l[len - 1] == '/') l[len - 1] = 0;
    return l;
}

static int allowed(dc_server *dc, json_t *dirs, const char *abs)
{
    if (json_array_size(dirs) == 0) return 1;
    size_t i;
    json_t *v;
    json_array_foreach(dirs, i, v)
        if (json_is_string(v) && !strcmp(json_string_value(v), "/")) return 1;
    char *p = norm_lower(dc, abs);
    int ok = 0;
    json_array_foreach(dirs, i, v) {
        if (!json_is_string(v)) continue;
        char *d = norm_lower(dc, json_string_value(v));
        size_t dl = strlen(d);
        if (!strcmp(p, d) || (!strncmp(p, d, dl) && p[dl] == '/') || (dl == 1 && d[0] == '/'))
            ok = 1;
        free(d);
        if (ok) break;
    }
    free(p);
    return ok;
}

/* Is the real location `real` inside an allowed directory, as written or as
 * the directory's own realpath? */
static int real_allowed(dc_server *dc, json_t *dirs, const char *real)
{
    if (allowed(dc, dirs, real)) return 1;
    json_t *rd = json_array();
    size_t i;
    json_t *v;
    json_array_foreach(dirs, i, v) {
        if (!json_is_string(v)) continue;
        char *e = expand_home(dc, json_string_value(v));
        char *r = realpath(e, NULL);
        if (r) json_array_append_new(rd, json_string(r));
        free(r);
        free(e);
    }
    int ok = json_array_size(rd) && allowed(dc, rd, real);
    json_decref(rd);
    return ok;
}

/* realpath of p, or of its deepest existing ancestor joined with the rest. */
static char *real_of(const char *abs)
{
    char *r = realpath(abs, NULL);
    if (r) return r;
    char *copy = mb_strdup(abs);
    size_t n = strlen(copy);
    while (n > 1) {
        while (n > 1 && copy[n - 1] != '/') n--;
        if (n <= 1) break;
        copy[n - 1] = 0;
        char *base = realpath(copy, NULL);
        if (base) {
            char *joined = mb_asprintf("%s/%s", strcmp(base, "/") ? base : "", abs + n);
            free(base);
            free(copy);
            return joined;
        }
        n--;
    }
    free(copy);
    return mb_strdup(abs);
}

int dc_validate_path(dc_server *dc, const char *requested, char **out, char **why)
{
    *out = NULL;
    *why = NULL;
    char *exp = expand_home(dc, requested);
    char *abs = mb_path_resolve(NULL, exp);
    free(exp);
    json_t *dirs = allowed_dirs(dc);
    int ok = allowed(dc, dirs, abs);
    char *real = NULL;
    if (ok) {
        real = real_of(abs);
        ok = real_allowed(dc, dirs, real);
    }
    json_decref(dirs);
    if (!ok) {
        char *j = dc_allowed_joined(dc);
        *why = mb_asprintf("Path not allowed: %s. Must be within one of these directories: %s",
                           requested, j);
        free(j);
        free(abs);
        free(real);
        return -1;
    }
    struct stat st;
    if (stat(abs, &st) == 0) {
        *out = real;
        free(abs);
    } else {
        *out = abs;
        free(real);
    }
    return 0;
}
