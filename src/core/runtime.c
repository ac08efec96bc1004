/*
 * runtime.c - starting and stopping the running half of the core: this
 * binary's path and its sandbox copy, the profiles, the environment passed
 * to servers, the zygote that clones every sandbox's init, the gateway, the
 * egress proxy, adoption of surviving sandboxes and the warm pool; and
 * stopping them again (sandboxes keep running across a restart).
 *
 * The rest of the runtime, one concern per file: sandboxes.c (bringing a
 * sandbox up and down), servers.c (its MCP servers), gwhooks.c (the
 * gateway's hooks), pool.c (the warm pool), seed.c, reset.c, adopt.c
 * (restarts); live.c (the table of running sandboxes); paths.c (where all
 * of it lives on disk).
 */
#define _GNU_SOURCE
#include "core/core_int.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

static char *self_exe(void)
{
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return NULL;
    buf[n] = '\0';
    return mb_strdup(buf);
}

/* --profiles-dir, else profiles/ in the source tree the binary sits in
 * (build/mcpbox, build/asan/mcpbox), else share/mcpbox/profiles beside the
 * bin/ it sits in (`make install PREFIX=...`), else /usr/share/mcpbox. */
static char *find_profiles_dir(mb_core *core)
{
    if (core->cfg.profiles_dir) return mb_strdup(core->cfg.profiles_dir);
    char *dir = mb_strdup(core->mcpbox_bin);
    for (int up = 0; up < 4; up++) {
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir) break;
        *slash = '\0';
        static const char *const under[] = {"profiles", "share/mcpbox/profiles"};
        for (size_t i = 0; i < 2; i++) {
            char *probe = mb_asprintf("%s/%s/" MB_PROFILE_DEFAULT ".json", dir, under[i]);
            int found = access(probe, R_OK) == 0;
            free(probe);
            if (found) {
                char *p = mb_asprintf("%s/%s", dir, under[i]);
                free(dir);
                return p;
            }
        }
    }
    free(dir);
    return mb_strdup("/usr/share/mcpbox/profiles");
}

/* Where relative sandbox.binds of the profiles start (runtime/playwright):
 * the source tree the binary sits in when it has runtime/, else the
 * directory holding the profiles directory. NULL = that default. */
static char *find_base_dir(mb_core *core)
{
    char *dir = mb_strdup(core->mcpbox_bin);
    for (int up = 0; up < 4; up++) {
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir) break;
        *slash = '\0';
        char *probe = mb_asprintf("%s/runtime", dir);
        struct stat st;
        int found = stat(probe, &st) == 0 && S_ISDIR(st.st_mode);
        free(probe);
        if (found) return dir;
    }
    free(dir);
    return NULL;
}

static int load_profiles(mb_core *core, mb_err *err)
{
    char **names;
    int rc = mb_profile_names(core->profiles_dir, &names, err);
    if (rc) return rc;
    size_t n = 0;
    while (names[n]) n++;
    core->profiles = mb_calloc(n ? n : 1, sizeof *core->profiles);
    char *base = find_base_dir(core);
    mb_profile_vars vars = {.mcpbox_bin = MB_SANDBOX_MCPBOX_PATH,
                            .data_dir = MB_SANDBOX_DATA_PATH, .base_dir = base,
                            .state_dir = core->cfg.data_dir};
    for (size_t i = 0; !rc && i < n; i++) {
        rc = mb_profile_load(core->profiles_dir, names[i], &vars, &core->profiles[i], err);
        if (!rc) core->n_profiles++;
    }
    free(base);
    mb_profile_names_free(names);
    if (!rc && !mb_core__profile(core, NULL))
        rc = mb_err_set(err, MB_ENOTFOUND,
                        "no profile '" MB_PROFILE_DEFAULT "' in %s (give --profiles-dir)",
                        core->profiles_dir);
    return rc;
}

const mb_profile *mb_core__profile(mb_core *core, const char *benchmark)
{
    const char *name = benchmark && *benchmark ? benchmark : MB_PROFILE_DEFAULT;
    for (size_t i = 0; i < core->n_profiles; i++)
        if (!strcmp(core->profiles[i]->name, name)) return core->profiles[i];
    return NULL;
}

/* Sanitizer settings reach the servers, so that a sanitized build of mcpbox
 * reports the same way inside a sandbox as outside. */
static void collect_server_env(mb_core *core)
{
    static const char *const pass[] = {"ASAN_OPTIONS=", "UBSAN_OPTIONS=", "LSAN_OPTIONS=", NULL};
    size_t n = 0;
    core->server_env = mb_calloc(4, sizeof *core->server_env);
    for (char **e = environ; e && *e; e++)
        for (size_t i = 0; pass[i]; i++)
            if (!strncmp(*e, pass[i], strlen(pass[i])) && n < 3)
                /* LeakSanitizer stops the world with ptrace, which the
                 * sandbox's seccomp filter forbids; servers are leak-checked
                 * outside a sandbox by their own tests. */
                core->server_env[n++] = i == 0 ? mb_asprintf("%s:detect_leaks=0", *e)
                                               : mb_strdup(*e);
}

/* What a mb_sandbox_opts points to. */
int mb_core__runtime_open(mb_core *core, mb_err *err)
{
    collect_server_env(core);
    core->mcpbox_bin = self_exe();
    if (!core->mcpbox_bin)
        return mb_err_sys(err, errno, "cannot find the mcpbox binary (/proc/self/exe)");
    core->profiles_dir = find_profiles_dir(core);
    int rc = mb_sandbox_exec_copy(core->mcpbox_bin, core->cfg.data_dir, "sandbox-mcpbox", 0,
                                  &core->sandbox_bin, err);
    if (!rc) rc = mb_core__srvbins_open(core, err);
    if (!rc) rc = load_profiles(core, err);
    if (!rc) {
        char *zbin = mb_core__zygote_bin(core);
        rc = mb_zygote_start(zbin, &core->zygote, err);
        free(zbin);
    }
    if (!rc) rc = mb_core__gateway_open(core, err);
    if (!rc) rc = mb_core__egress_open(core, err);
    if (!rc) mb_core__adopt_all(core);
    /* The warm pool starts in mb_core_start, once the node services are
     * registered: its sandboxes need their binds. */
    return rc;
}

void mb_core__runtime_close(mb_core *core)
{
    mb_pool_free(core->pool);
    core->pool = NULL;
    mb_gateway_destroy(core->gw); /* stops every server process */
    core->gw = NULL;
    mb_core__egress_close(core);
    mb_live *l;
    while ((l = mb_core__live_take_any(core))) {
        mb_sandbox_close(l->sb); /* the sandbox keeps running for the next start */
        free(l);
    }
    mb_zygote_stop(core->zygote); /* its sandboxes keep running too */
    core->zygote = NULL;
    for (size_t i = 0; i < core->n_profiles; i++) mb_profile_free(core->profiles[i]);
    free(core->profiles);
    core->profiles = NULL;
    core->n_profiles = 0;
    for (char **e = core->server_env; e && *e; e++) free(*e);
    free(core->server_env);
    core->server_env = NULL;
    free(core->profiles_dir);
    free(core->mcpbox_bin);
    free(core->sandbox_bin);
    mb_core__srvbins_close(core);
    core->profiles_dir = core->mcpbox_bin = core->sandbox_bin = NULL;
}
