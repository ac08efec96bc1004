/*
 * srvbins.c - the server executables sandboxes run their native servers
 * from. The daemon is one binary with every library any part of mcpbox uses
 * (about fifty with their dependencies); loading them costs a server process
 * ~40 ms of CPU and a megabyte of private memory. The build makes, beside
 * each mcpbox, one mcpbox-GROUP per link group of src/servers/servers.c with
 * only its servers' code and libraries (docs/ARCHITECTURE.md, "Server
 * executables"). At start the daemon finds them (beside itself, as in
 * build/, or in ../lib/mcpbox, as `make install` puts them), makes exec-only
 * copies in DATA/sandbox-bin (execbin.c: mode 0111, owned by host root, so
 * every server is non-dumpable from its first instruction, as with the
 * mcpbox copy), and every sandbox gets that directory at /.mcpbox/bin.
 * Profiles keep saying `${MCPBOX} mcp NAME`; the spawn maps it here.
 * The zygote is started from mcpbox-zygote, found the same way (zygmain.c).
 * A group without an executable (a binary copied alone, a noexec data dir)
 * runs from the mcpbox copy, as before, and the log says so once.
 */
#define _GNU_SOURCE
#include "core/core_int.h"
#include "servers/servers.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SRVBIN_DIR "sandbox-bin"
/* A group's executable inside a sandbox is INSIDE_PREFIX GROUP. */
#define INSIDE_PREFIX MB_SANDBOX_SERVER_BIN_DIR "/mcpbox-"

/* DIR/mcpbox-GROUP, else DIR/../lib/mcpbox/mcpbox-GROUP, where DIR holds the
 * daemon's binary. NULL when neither is executable. */
static char *find_exe(const char *self, const char *group)
{
    const char *slash = strrchr(self, '/');
    int dlen = slash ? (int)(slash - self) : 0;
    char *p = mb_asprintf("%.*s/mcpbox-%s", dlen, self, group);
    if (access(p, X_OK) == 0) return p;
    free(p);
    p = mb_asprintf("%.*s/../lib/mcpbox/mcpbox-%s", dlen, self, group);
    if (access(p, X_OK) == 0) return p;
    free(p);
    return NULL;
}

/* DATA/sandbox-bin: ours, a real directory, searchable but not listable by
 * others (sandbox root is another user). */
static int make_dir(const char *dir, mb_err *err)
{
    if (mkdir(dir, 0711) != 0 && errno != EEXIST)
        return mb_err_sys(err, errno, "cannot create %s", dir);
    struct stat st;
    if (lstat(dir, &st) != 0) return mb_err_sys(err, errno, "cannot stat %s", dir);
    if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid())
        return mb_err_set(err, MB_EINVAL, "%s is not a directory of this user", dir);
    if ((st.st_mode & 07777) != 0711 && chmod(dir, 0711) != 0)
        return mb_err_sys(err, errno, "cannot chmod %s", dir);
    return MB_OK;
}

static int listed(char **groups, size_t n, const char *g)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(groups[i], g)) return 1;
    return 0;
}

int mb_core__srvbins_open(mb_core *core, mb_err *err)
{
    size_t ngroups = 0;
    for (const mb_server_entry *e = mb_servers; e->name; e++) ngroups++;
    core->server_groups = mb_calloc(ngroups + 1, sizeof *core->server_groups);
    char *dir = mb_asprintf("%s/" SRVBIN_DIR, core->cfg.data_dir);
    size_t n = 0, seen_n = 0;
    char **seen = mb_calloc(ngroups + 1, sizeof *seen);
    int rc = MB_OK;
    for (const mb_server_entry *e = mb_servers; !rc && e->name; e++) {
        if (listed(seen, seen_n, e->group)) continue;
        seen[seen_n++] = (char *)e->group;
        char *bin = find_exe(core->mcpbox_bin, e->group);
        if (!bin) {
            mb_warn("no mcpbox-%s beside %s: the '%s' servers run from the mcpbox binary "
                    "(slower to start)", e->group, core->mcpbox_bin, e->group);
            continue;
        }
        if (!n) rc = make_dir(dir, err);
        char *name = mb_asprintf("mcpbox-%s", e->group), *copy = NULL;
        if (!rc) rc = mb_sandbox_exec_copy(bin, dir, name, 1, &copy, err);
        if (rc == MB_ECONFLICT) { /* noexec data dir: the mcpbox copy serves them all */
            mb_warn("%s: every server runs from the mcpbox binary", err ? err->msg : dir);
            mb_err_clear(err);
            rc = MB_OK;
            free(name), free(copy), free(bin);
            break;
        }
        if (!rc) core->server_groups[n++] = mb_asprintf(INSIDE_PREFIX "%s", e->group);
        free(name), free(copy), free(bin);
    }
    free(seen);
    if (rc || !n) {
        free(dir);
        return rc;
    }
    core->server_bin_dir = dir;
    return MB_OK;
}

void mb_core__srvbins_close(mb_core *core)
{
    for (char **g = core->server_groups; g && *g; g++) free(*g);
    free(core->server_groups);
    free(core->server_bin_dir);
    core->server_groups = NULL;
    core->server_bin_dir = NULL;
}

const char **mb_core__srvbin_argv(mb_core *core, const char *const *argv)
{
    if (!core->server_bin_dir || !argv[0] || strcmp(argv[0], MB_SANDBOX_MCPBOX_PATH) ||
        !argv[1] || strcmp(argv[1], "mcp") || !argv[2])
        return NULL;
    const mb_server_entry *e = mb_server_find(argv[2]);
    if (!e) return NULL;
    const char *path = NULL;
    for (char **g = core->server_groups; *g && !path; g++)
        if (!strcmp(*g + strlen(INSIDE_PREFIX), e->group)) path = *g;
    if (!path) return NULL;
    size_t n = 0;
    while (argv[n]) n++;
    const char **out = mb_calloc(n + 1, sizeof *out);
    memcpy(out, argv, n * sizeof *out);
    out[0] = path;
    return out;
}

char *mb_core__zygote_bin(mb_core *core)
{
    char *bin = find_exe(core->mcpbox_bin, "zygote");
    if (bin) return bin;
    mb_warn("no mcpbox-zygote beside %s: sandboxes are cloned from the mcpbox binary "
            "(slower server starts)", core->mcpbox_bin);
    return mb_strdup(core->mcpbox_bin);
}
