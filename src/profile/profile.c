/*
 * profile.c - loading benchmark presets (profiles/<name>.json) with jansson.
 *
 * The file is validated as a whole before anything is returned: every error
 * names the file and the key that is wrong, so a person editing a preset can fix
 * it without reading this code. Unknown top-level keys are tolerated (they carry
 * documentation, e.g. "planned" entries for servers not implemented natively
 * yet); unknown keys inside a server entry are tolerated for the same reason.
 */
#include "profile/profile.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define PROFILE_MAX_BYTES (1 << 20)

void mb_profile_names_free(char **names) { mb_strv_free(names); }

void mb_profile_free(mb_profile *p)
{
    if (!p) return;
    for (size_t i = 0; i < p->nservers; i++) {
        mb_profile_server *s = &p->servers[i];
        free(s->name);
        free(s->upstream);
        mb_strv_free(s->argv);
        mb_strv_free(s->headers);
        mb_strv_free(s->envp);
        free(s->cwd);
    }
    free(p->servers);
    for (size_t i = 0; i < p->n_binds; i++) {
        free(p->binds[i].inside);
        free(p->binds[i].host);
    }
    free(p->binds);
    free(p->seed.description);
    free(p->seed.when_missing);
    free(p->name);
    free(p->description);
    json_decref(p->root);
    free(p);
}

static int name_ok(const char *name)
{
    if (!*name || strlen(name) > 64 || strstr(name, "..")) return 0;
    for (const char *c = name; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '_' || *c == '-' || *c == '.'))
            return 0;
    return 1;
}

/* Expands ${MCPBOX} and ${DATA} in `in`. */
static int expand(const char *in, const mb_profile_vars *vars, const char *file, const char *where,
                  char **out, mb_err *err)
{
    mb_buf b = {0};
    mb_buf_puts(&b, "");
    for (const char *c = in; *c;) {
        if (c[0] == '$' && c[1] == '{') {
            const char *end = strchr(c + 2, '}');
            if (!end) {
                mb_buf_free(&b);
                return mb_err_set(err, MB_EINVAL, "%s: %s: unterminated \"${\" in \"%s\"", file,
                                  where, in);
            }
            size_t n = (size_t)(end - (c + 2));
            const char *val = NULL;
            if (n == 6 && memcmp(c + 2, "MCPBOX", 6) == 0) val = vars->mcpbox_bin;
            else if (n == 4 && memcmp(c + 2, "DATA", 4) == 0)
                val = vars->data_dir ? vars->data_dir : "/data";
            if (!val) {
                mb_buf_free(&b);
                return mb_err_set(err, MB_EINVAL,
                                  "%s: %s: unknown placeholder \"${%.*s}\" (known: ${MCPBOX}, ${DATA})",
                                  file, where, (int)n, c + 2);
            }
            mb_buf_puts(&b, val);
            c = end + 1;
        } else {
            mb_buf_putc(&b, *c++);
        }
    }
    *out = mb_buf_steal(&b);
    return MB_OK;
}

static int get_string(json_t *obj, const char *key, const char *file, const char *where,
                      const char *dflt, char **out, mb_err *err)
{
    json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v)) {
        *out = mb_strdup(dflt);
        return MB_OK;
    }
    if (!json_is_string(v))
        return mb_err_set(err, MB_EINVAL, "%s: %s.%s must be a string", file, where, key);
    *out = mb_strdup(json_string_value(v));
    return MB_OK;
}

/* Merges `base` and `over` (objects of strings) into a NULL-terminated KEY=VALUE
 * vector; keys of `over` replace those of `base`, order is base's then new keys. */
static int build_env(json_t *base, json_t *over, const mb_profile_vars *vars, const char *file,
                     const char *server, char ***out, mb_err *err)
{
    json_t *merged = json_object();
    int rc = MB_OK;
    json_t *srcs[2] = {base, over};
    for (int i = 0; i < 2; i++) {
        if (!srcs[i]) continue;
        const char *k;
        json_t *v;
        json_object_foreach(srcs[i], k, v) {
            if (!json_is_string(v)) {
                rc = mb_err_set(err, MB_EINVAL, "%s: %s env \"%s\" must be a string", file,
                                i == 0 ? "base_env" : server, k);
                goto out;
            }
            if (!*k || strchr(k, '=')) {
                rc = mb_err_set(err, MB_EINVAL, "%s: %s env has an invalid variable name \"%s\"",
                                file, i == 0 ? "base_env" : server, k);
                goto out;
            }
            json_object_set(merged, k, v);
        }
    }
    size_t n = json_object_size(merged), i = 0;
    char **env = mb_calloc(n + 1, sizeof(char *));
    const char *k;
    json_t *v;
    json_object_foreach(merged, k, v) {
        char *val = NULL, where[160];
        snprintf(where, sizeof where, "servers.%s.env.%s", server, k);
        rc = expand(json_string_value(v), vars, file, where, &val, err);
        if (rc) {
            mb_strv_free(env);
            goto out;
        }
        env[i++] = mb_asprintf("%s=%s", k, val);
        free(val);
    }
    *out = env;
out:
    json_decref(merged);
    return rc;
}

static int parse_size_field(json_t *obj, const char *key, const char *file, uint64_t *out,
                            mb_err *err)
{
    json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v)) return MB_OK;
    if (json_is_integer(v) && json_integer_value(v) >= 0) {
        *out = (uint64_t)json_integer_value(v);
        return MB_OK;
    }
    if (json_is_string(v) && mb_parse_size(json_string_value(v), out) == MB_OK) return MB_OK;
    return mb_err_set(err, MB_EINVAL,
                      "%s: sandbox.%s must be a byte count or a size like \"2G\"", file, key);
}

static int parse_u32_field(json_t *obj, const char *key, const char *file, uint32_t *out,
                           mb_err *err)
{
    json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v)) return MB_OK;
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > UINT32_MAX)
        return mb_err_set(err, MB_EINVAL, "%s: sandbox.%s must be a non-negative integer", file,
                          key);
    *out = (uint32_t)json_integer_value(v);
    return MB_OK;
}

/* as many as the gateway forwards (MB_GW_MAX_FORWARD_HEADERS) */
#define MAX_HEADERS 8

static int parse_server(const char *file, const char *name, json_t *js, json_t *base_env,
                        const mb_profile_vars *vars, mb_profile_server *s, mb_err *err)
{
    char where[160];
    int rc;
    if (!json_is_object(js))
        return mb_err_set(err, MB_EINVAL, "%s: servers.%s must be an object", file, name);
    s->name = mb_strdup(name);
    s->entry = js;
    snprintf(where, sizeof where, "servers.%s", name);
    if ((rc = get_string(js, "upstream", file, where, "", &s->upstream, err))) return rc;

    json_t *argv = json_object_get(js, "argv");
    if (!json_is_array(argv) || json_array_size(argv) == 0)
        return mb_err_set(err, MB_EINVAL,
                          "%s: servers.%s.argv must be a non-empty array of strings", file, name);
    size_t n = json_array_size(argv);
    s->argv = mb_calloc(n + 1, sizeof(char *));
    for (size_t i = 0; i < n; i++) {
        json_t *a = json_array_get(argv, i);
        if (!json_is_string(a))
            return mb_err_set(err, MB_EINVAL, "%s: servers.%s.argv[%zu] must be a string", file,
                              name, i);
        snprintf(where, sizeof where, "servers.%s.argv[%zu]", name, i);
        if ((rc = expand(json_string_value(a), vars, file, where, &s->argv[i], err))) return rc;
    }
    if (!s->argv[0][0])
        return mb_err_set(err, MB_EINVAL, "%s: servers.%s.argv[0] is empty", file, name);

    json_t *env = json_object_get(js, "env");
    if (env && !json_is_null(env) && !json_is_object(env))
        return mb_err_set(err, MB_EINVAL, "%s: servers.%s.env must be an object of strings",
                          file, name);
    if ((rc = build_env(base_env, json_is_object(env) ? env : NULL, vars, file, name, &s->envp,
                        err)))
        return rc;

    /* "egress": the hosts this server may reach through the daemon's proxy
     * (src/egress/egress.h); read by the daemon from `entry`. */
    json_t *eg = json_object_get(js, "egress");
    size_t ei;
    json_t *ev;
    if (eg && !json_is_array(eg))
        return mb_err_set(err, MB_EINVAL, "%s: servers.%s.egress must be an array of host names "
                          "(\"*\" for any)", file, name);
    json_array_foreach(eg, ei, ev) {
        const char *h = json_string_value(ev);
        if (!h || !*h || strlen(h) > 253 || strspn(h, "abcdefghijklmnopqrstuvwxyz"
                                                        "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_:*") !=
                                                    strlen(h))
            return mb_err_set(err, MB_EINVAL, "%s: servers.%s.egress[%zu] must be a host name, "
                              "\"*.domain\" or \"*\"", file, name, ei);
    }

    /* "tools_static": its tools/list answer changes only with a
     * notifications/tools/list_changed (the gateway answers clients with its
     * copy); read by the daemon from `entry`. */
    json_t *ts = json_object_get(js, "tools_static");
    if (ts && !json_is_boolean(ts))
        return mb_err_set(err, MB_EINVAL, "%s: servers.%s.tools_static must be true or false",
                          file, name);
    /* A native server (`${MCPBOX} mcp NAME`) is built on src/mcp, whose tools
     * are registered before it serves and never change: tools_static unless
     * its entry says false. */
    const char *a0 = json_string_value(json_array_get(argv, 0));
    const char *a1 = json_string_value(json_array_get(argv, 1));
    if (!ts && a0 && a1 && !strcmp(a0, "${MCPBOX}") && !strcmp(a1, "mcp"))
        json_object_set_new(js, "tools_static", json_true());
    /* "headers": request headers the gateway forwards to this server per
     * request (docs/GATEWAY.md#forwarded-headers). */
    json_t *hd = json_object_get(js, "headers");
    size_t hi, nh = 0;
    json_t *hv;
    if (hd && (!json_is_array(hd) || json_array_size(hd) > MAX_HEADERS))
        return mb_err_set(err, MB_EINVAL, "%s: servers.%s.headers must be an array of at most "
                          "%d header names", file, name, MAX_HEADERS);
    json_array_foreach(hd, hi, hv) {
        const char *h = json_string_value(hv);
        if (!h || !*h || strlen(h) > 64 ||
            strspn(h, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(h))
            return mb_err_set(err, MB_EINVAL, "%s: servers.%s.headers[%zu] must be a lowercase "
                              "HTTP header name (a-z, 0-9, '-'; at most 64)", file, name, hi);
        mb_strv_push((const char ***)&s->headers, &nh, mb_strdup(h));
    }

    char *cwd = NULL;
    snprintf(where, sizeof where, "servers.%s", name);
    if ((rc = get_string(js, "cwd", file, where, "${DATA}", &cwd, err))) return rc;
    snprintf(where, sizeof where, "servers.%s.cwd", name);
    rc = expand(cwd, vars, file, where, &s->cwd, err);
    free(cwd);
    return rc;
}

static int list_for_message(const char *dir, mb_buf *b)
{
    char **names = NULL;
    if (mb_profile_names(dir, &names, NULL) != MB_OK) return -1;
    for (char **p = names; *p; p++) mb_buf_printf(b, "%s%s", p == names ? "" : ", ", *p);
    mb_profile_names_free(names);
    return 0;
}

int mb_profile_load(const char *dir, const char *name, const mb_profile_vars *vars,
                    mb_profile **out, mb_err *err)
{
    *out = NULL;
    if (!name || !*name) name = MB_PROFILE_DEFAULT;
    if (!vars || !vars->mcpbox_bin)
        return mb_err_set(err, MB_EINVAL, "mb_profile_load: vars->mcpbox_bin is required");
    if (!name_ok(name))
        return mb_err_set(err, MB_EINVAL,
                          "invalid profile name \"%s\": use letters, digits, '_', '-' or '.'",
                          name);

    char *file = mb_asprintf("%s/%s.json", dir, name);
    char *text = NULL;
    size_t len = 0;
    json_t *root = NULL;
    mb_profile *p = NULL;
    mb_err rerr;
    int rc = mb_read_file(file, PROFILE_MAX_BYTES, &text, &len, &rerr);
    if (rc == MB_ENOTFOUND) {
        mb_buf known = {0};
        if (list_for_message(dir, &known) == 0 && known.len)
            rc = mb_err_set(err, MB_ENOTFOUND, "no profile \"%s\" in %s (available: %s)", name, dir,
                            known.data);
        else
            rc = mb_err_set(err, MB_ENOTFOUND, "no profile \"%s\" in %s", name, dir);
        mb_buf_free(&known);
        goto out;
    }
    if (rc) {
        rc = mb_err_set(err, rc, "cannot read profile: %s", rerr.msg);
        goto out;
    }
    json_error_t jerr;
    root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        rc = mb_err_set(err, MB_EINVAL, "%s:%d:%d: %s", file, jerr.line, jerr.column, jerr.text);
        goto out;
    }
    if (!json_is_object(root)) {
        rc = mb_err_set(err, MB_EINVAL, "%s: the top level must be a JSON object", file);
        goto out;
    }

    p = mb_calloc(1, sizeof *p);
    p->name = mb_strdup(name);
    if ((rc = get_string(root, "description", file, "(top level)", "", &p->description, err)))
        goto out;

    json_t *base_env = json_object_get(root, "base_env");
    if (base_env && !json_is_object(base_env)) {
        rc = mb_err_set(err, MB_EINVAL, "%s: base_env must be an object of strings", file);
        goto out;
    }

    json_t *sb = json_object_get(root, "sandbox");
    if (sb && !json_is_null(sb)) {
        if (!json_is_object(sb)) {
            rc = mb_err_set(err, MB_EINVAL, "%s: sandbox must be an object", file);
            goto out;
        }
        if ((rc = parse_size_field(sb, "memory", file, &p->limits.memory_bytes, err)) ||
            (rc = parse_size_field(sb, "disk", file, &p->limits.disk_bytes, err)) ||
            (rc = parse_u32_field(sb, "pids", file, &p->limits.pids_max, err)) ||
            (rc = parse_u32_field(sb, "cpu_millis", file, &p->limits.cpu_millis, err)))
            goto out;
        json_t *net = json_object_get(sb, "network");
        if (net && !json_is_boolean(net)) {
            rc = mb_err_set(err, MB_EINVAL, "%s: sandbox.network must be true or false", file);
            goto out;
        }
        p->limits.allow_network = json_is_true(net);
        json_t *binds = json_object_get(sb, "binds");
        if (binds && !json_is_object(binds)) {
            rc = mb_err_set(err, MB_EINVAL, "%s: sandbox.binds must be an object "
                            "{\"/opt/inside\": \"/host/path\"}", file);
            goto out;
        }
        const char *inside;
        json_t *host;
        p->binds = mb_calloc(binds ? json_object_size(binds) + 1 : 1, sizeof *p->binds);
        json_object_foreach(binds, inside, host) {
            const char *hp = json_is_string(host) ? json_string_value(host) : "";
            if (!*hp || (hp[0] != '/' && strstr(hp, "..")) ||
                (strncmp(inside, "/opt/", 5) && strncmp(inside, "/srv/", 5) &&
                 strncmp(inside, "/mnt/", 5)) || strstr(inside, "..")) {
                rc = mb_err_set(err, MB_EINVAL, "%s: sandbox.binds.%s: the key must be a path "
                                "under /opt, /srv or /mnt and the value a host path (absolute, "
                                "relative to the directory holding the profiles directory, or "
                                "${STATE}/... in the daemon's data dir)",
                                file, inside);
                goto out;
            }
            p->binds[p->n_binds].inside = mb_strdup(inside);
            /* Relative: from the base dir (the source tree or /usr/share/mcpbox,
             * whose runtime/ holds what scripts/install-* put there).
             * "${STATE}/...": from the daemon's data dir (what an operator builds
             * at run time, e.g. the arXiv catalog). */
            if (!strncmp(hp, "${STATE}/", 9))
                p->binds[p->n_binds].host =
                    vars && vars->state_dir ? mb_asprintf("%s/%s", vars->state_dir, hp + 9)
                                            : mb_strdup(hp);
            else
                p->binds[p->n_binds].host =
                    hp[0] == '/' ? mb_strdup(hp)
                    : vars && vars->base_dir ? mb_asprintf("%s/%s", vars->base_dir, hp)
                                             : mb_asprintf("%s/../%s", dir, hp);
            p->n_binds++;
        }
    }

    json_t *seed = json_object_get(root, "seed");
    if (seed && !json_is_null(seed)) {
        if (!json_is_object(seed)) {
            rc = mb_err_set(err, MB_EINVAL, "%s: seed must be an object", file);
            goto out;
        }
        json_t *req = json_object_get(seed, "required");
        if (req && !json_is_boolean(req)) {
            rc = mb_err_set(err, MB_EINVAL, "%s: seed.required must be true or false", file);
            goto out;
        }
        p->seed.required = json_is_true(req);
        if ((rc = get_string(seed, "description", file, "seed", "", &p->seed.description, err)))
            goto out;
        if ((rc = get_string(seed, "when_missing", file, "seed", "", &p->seed.when_missing, err)))
            goto out;
    } else {
        p->seed.description = mb_strdup("");
        p->seed.when_missing = mb_strdup("");
    }

    json_t *servers = json_object_get(root, "servers");
    if (!json_is_object(servers)) {
        rc = mb_err_set(err, MB_EINVAL, "%s: \"servers\" must be an object (server name → entry)",
                        file);
        goto out;
    }
    p->servers = mb_calloc(json_object_size(servers) + 1, sizeof *p->servers);
    const char *sname;
    json_t *sjs;
    json_object_foreach(servers, sname, sjs) {
        if (!name_ok(sname)) {
            rc = mb_err_set(err, MB_EINVAL, "%s: invalid server name \"%s\"", file, sname);
            goto out;
        }
        mb_profile_server *s = &p->servers[p->nservers++];
        if ((rc = parse_server(file, sname, sjs, base_env, vars, s, err))) goto out;
    }
    rc = MB_OK;
    p->root = root;
    root = NULL;
    *out = p;
    p = NULL;
out:
    mb_profile_free(p);
    json_decref(root);
    free(text);
    free(file);
    return rc;
}

const mb_profile_server *mb_profile_server_find(const mb_profile *p, const char *server)
{
    for (size_t i = 0; p && server && i < p->nservers; i++)
        if (strcmp(p->servers[i].name, server) == 0) return &p->servers[i];
    return NULL;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int mb_profile_names(const char *dir, char ***out, mb_err *err)
{
    *out = NULL;
    DIR *d = opendir(dir);
    if (!d) return mb_err_sys(err, errno, "cannot list profiles in %s", dir);
    size_t n = 0, cap = 8;
    char **v = mb_calloc(cap, sizeof(char *));
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || !mb_str_has_suffix(e->d_name, ".json")) continue;
        char *stem = mb_strndup(e->d_name, strlen(e->d_name) - 5);
        if (!name_ok(stem)) {
            free(stem);
            continue;
        }
        if (n + 2 > cap) {
            cap *= 2;
            v = mb_realloc(v, cap * sizeof(char *));
        }
        v[n++] = stem;
    }
    closedir(d);
    v[n] = NULL;
    qsort(v, n, sizeof(char *), cmp_str);
    *out = v;
    return MB_OK;
}
