/*
 * sweep.c - removing what a crashed run left behind.
 *
 * Three places can hold leftovers of a sandbox, and each is searched on its
 * own so that a partial leftover (a cgroup whose state dir is gone, a
 * workspace mount whose cgroup is gone) is found too:
 *   - <state_root>/<id>/ directories (their meta file names the workspace);
 *   - cgroups mcpbox/<scope>.<id> in every hierarchy;
 *   - tmpfs mounts whose source is "mcpbox-ws-<scope>.<id>" (our workspaces).
 * The scope is a hash of state_root's absolute path (cgroup.c), so only
 * sandboxes of this daemon's data dir are ever considered: another daemon's
 * on the same host are invisible here. state_root itself may be gone (an
 * `rm -rf` of the data dir that stopped at busy workspace mounts): the
 * mounts and cgroups are still found by that hash.
 * Every id found that keep() rejects is torn down like destroy_by_opts does:
 * processes killed (through the init, then the cgroup), cgroups removed,
 * workspace unmounted, state dir removed. Names that are not UUIDs are never
 * touched.
 */
#define _GNU_SOURCE
#include "sandbox/sandbox_int.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct sweep_ctx {
    const char *state_root;
    char scope[MB__SCOPE_LEN + 1];
    int (*keep)(void *ctx, const char *id);
    void *kctx;
    int rc;
    mb_err *err;
} sweep_ctx;

/* The workspace recorded in a state dir's meta file, or NULL. */
static char *meta_workspace(const char *state_dir)
{
    char *path = mb_asprintf("%s/" MB__META_NAME, state_dir);
    char *text = NULL;
    char *ws = NULL;
    if (mb_read_file(path, 65536, &text, NULL, NULL) == 0) {
        for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
            if (!strncmp(line, "workspace=", 10) && line[10] == '/') ws = mb_strdup(line + 10);
        free(text);
    }
    free(path);
    return ws;
}

static void record(sweep_ctx *s, int rc, const mb_err *e)
{
    if (rc && !s->rc) {
        s->rc = rc;
        if (s->err && e) *s->err = *e;
    }
}

static void sweep_id(sweep_ctx *s, const char *id, const char *workspace_hint)
{
    if (!mb_is_uuid(id) || s->keep(s->kctx, id)) return;
    char *state = mb_asprintf("%s/%s", s->state_root, id);
    struct stat st;
    int has_state = stat(state, &st) == 0 && S_ISDIR(st.st_mode);
    char *ws = has_state ? meta_workspace(state) : NULL;
    if (!ws && workspace_hint) ws = mb_strdup(workspace_hint);
    mb_sandbox_opts o = {.id = id, .state_dir = state, .workspace = ws ? ws : "/nonexistent"};
    mb_err e;
    int rc;
    if (ws) {
        rc = mb_sandbox_destroy_by_opts(&o, &e);
    } else {
        /* No workspace known: kill and remove what there is. */
        char name[MB__NAME_MAX];
        snprintf(name, sizeof name, "%s.%s", s->scope, id);
        rc = mb__cg_kill(name, 10000, &e);
        if (!rc) rc = mb__cg_remove(name, &e);
        if (!rc && has_state) rc = mb_rm_rf(state, &e);
    }
    if (rc) mb_warn("sandbox sweep: %s: %s", id, e.msg);
    record(s, rc, &e);
    free(ws);
    free(state);
}

static void on_cgroup(void *ctx, const char *name)
{
    sweep_ctx *s = ctx;
    size_t n = strlen(s->scope);
    if (!strncmp(name, s->scope, n) && name[n] == '.') sweep_id(s, name + n + 1, NULL);
}

int mb_sandbox_sweep(const char *state_root, int (*keep)(void *ctx, const char *id), void *ctx,
                     mb_err *err)
{
    /* state_root itself may be gone: then the mount table and the cgroup
     * tree still name what it held (the scope hashes its absolute path). */
    char *abs_root = mb__resolve_partly(state_root);
    if (!abs_root) return mb_err_sys(err, errno, "cannot resolve %s", state_root);
    state_root = abs_root;
    sweep_ctx s = {.state_root = state_root, .keep = keep, .kctx = ctx, .err = err};
    mb__scope_of_root(state_root, s.scope);
    char prefix[64];
    snprintf(prefix, sizeof prefix, MB__WS_SOURCE_PREFIX "%s.", s.scope);
    size_t plen = strlen(prefix);

    /* 1. State dirs. */
    DIR *d = opendir(state_root);
    if (d) {
        char **names = NULL;
        size_t n = 0;
        struct dirent *de;
        while ((de = readdir(d)))
            if (mb_is_uuid(de->d_name)) {
                names = mb_realloc(names, (n + 1) * sizeof *names);
                names[n++] = mb_strdup(de->d_name);
            }
        closedir(d);
        for (size_t i = 0; i < n; i++) {
            sweep_id(&s, names[i], NULL);
            free(names[i]);
        }
        free(names);
    }

    /* 2. Workspace mounts (before the cgroups, so their path is known). */
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (f) {
        char *line = NULL;
        size_t cap = 0;
        char **ids = NULL, **paths = NULL;
        size_t n = 0;
        while (getline(&line, &cap, f) > 0) {
            char *sep = strstr(line, " - ");
            if (!sep) continue;
            char mnt[4096], fstype[64], source[256];
            if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1) continue;
            if (sscanf(sep + 3, "%63s %255s", fstype, source) != 2) continue;
            if (strcmp(fstype, "tmpfs") || strncmp(source, prefix, plen)) continue;
            if (strchr(mnt, '\\')) continue; /* escaped names: not ours */
            ids = mb_realloc(ids, (n + 1) * sizeof *ids);
            paths = mb_realloc(paths, (n + 1) * sizeof *paths);
            ids[n] = mb_strdup(source + plen);
            paths[n] = mb_strdup(mnt);
            n++;
        }
        free(line);
        fclose(f);
        for (size_t i = 0; i < n; i++) {
            sweep_id(&s, ids[i], paths[i]);
            free(ids[i]);
            free(paths[i]);
        }
        free(ids);
        free(paths);
    }

    /* 3. Cgroups. */
    mb_err e;
    int rc = mb__cg_list(on_cgroup, &s, &e);
    record(&s, rc, &e);
    free(abs_root);
    return s.rc;
}
