/*
 * sandbox.h - the face of the sandbox layer: isolated Linux environments in
 * which MCP servers and commands run with /data as their workspace.
 *
 * A sandbox is
 *   - namespaces: user (root inside = host uids uid_base..uid_base+65535),
 *     mount, pid, ipc, uts, cgroup and, unless allow_network, net (loopback
 *     only);
 *   - a root assembled with pivot_root on a private read-only tmpfs: read-only
 *     binds of the host's /usr (plus the /bin, /lib*, /sbin symlinks) and of
 *     selected /etc files, or of an image directory; private /tmp, /run and
 *     /dev/shm; a minimal /dev; its own /proc; /data = the workspace;
 *   - a cgroup (memory, pids, cpu) under an "mcpbox" parent, v1 or v2;
 *   - a workspace with a size quota (a tmpfs mounted at opts->workspace on
 *     the host, so the daemon can fill and dump it);
 *   - an init process (PID 1 inside) that starts and supervises processes
 *     on request over a unix control socket in state_dir, so that a
 *     restarted daemon can re-attach (adopt). The init is cloned by a zygote
 *     (below), so it starts as a fork of a process that has mcpbox loaded
 *     and the seccomp program compiled, not as a fresh exec.
 * Every process started inside runs with no_new_privs, a reduced capability
 * bounding set and a seccomp filter. docs/SANDBOX.md describes the model.
 *
 * Nothing here knows about HTTP, SQLite or MCP.
 *
 * Threads: every function may be called from any thread. A handle may be used
 * by several threads at once (spawn/exec/stats/reset concurrently, and
 * destroy concurrently with them: in-flight calls then fail promptly and
 * destroy waits for them before freeing the handle).
 *
 * Host state: the first call probes the host's cgroup layout once
 * (/proc/self/mountinfo) and keeps the result for the life of the process;
 * that is the only static state in this layer and it never changes after the
 * probe.
 *
 * Children: the sandbox's init is a child of its zygote: of the zygote's
 * helper process, which reaps it, or of the caller for a local zygote, which
 * collects its exit through a pidfd. The helper itself is the caller's child
 * too. Callers must not reap children with
 * waitpid(-1, ...) or set SIGCHLD to SIG_IGN.
 */
#ifndef MB_SANDBOX_H
#define MB_SANDBOX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/util.h"

/* Where the mcpbox binary is bound inside every sandbox (read-only), so that
 * `/.mcpbox/mcpbox mcp NAME` servers can run there. */
#define MB_SANDBOX_MCPBOX_PATH "/.mcpbox/mcpbox"
/* Where mb_sandbox_opts.server_bin_dir is bound (read-only): the server
 * executables, /.mcpbox/bin/mcpbox-GROUP (src/servers/servers.c). */
#define MB_SANDBOX_SERVER_BIN_DIR "/.mcpbox/bin"
#define MB_SB_STATE_SUBDIR "state"
/* Where the workspace appears inside. */
#define MB_SANDBOX_DATA_PATH "/data"
/* PATH given to processes whose spec has no environment. */
#define MB_SANDBOX_DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* Defaults applied to a zero field of mb_sandbox_limits. */
#define MB_SANDBOX_DEFAULT_MEMORY (1ull << 30) /* 1 GiB */
#define MB_SANDBOX_DEFAULT_PIDS 512
#define MB_SANDBOX_DEFAULT_CPU_MILLIS 1000 /* one core */
#define MB_SANDBOX_DEFAULT_DISK (1ull << 30)   /* 1 GiB */

/* Size of the uid/gid range a sandbox maps (root inside = uid_base). */
#define MB_SANDBOX_UID_RANGE 65536u

typedef struct mb_sandbox mb_sandbox; /* opaque runtime handle */

/* ---------------------------------------------------------------- zygote */

/*
 * A zygote clones the init of every sandbox created through it. Exec'ing the
 * mcpbox binary for each init would load its 30-odd shared libraries and
 * compile the seccomp filter every time; a zygote does both once, and each
 * init is a fork of it (copy-on-write, so the loaded libraries and the
 * compiled filter are shared, not copied).
 *
 * Two kinds:
 *   - mb_zygote_start: a helper process, `mcpbox sandbox-zygote`, exec'd
 *     once from mcpbox_bin with a minimal environment. For multi-threaded
 *     callers (the daemon), whose own forks may only make raw system calls.
 *     Requests from several threads are served one at a time (a clone takes
 *     about a millisecond; the rest of a create runs on the caller's thread).
 *     The helper ends when the zygote is stopped or its creator dies; the
 *     inits it cloned are its children (it reaps them) and outlive it.
 *   - mb_zygote_local: the calling process itself clones the inits. Only for
 *     programs that stay single-threaded while they create sandboxes (the
 *     one-shot `mcpbox sandbox run`). Inits are the caller's children.
 *
 * Threads: mb_sandbox_create may use one zygote from any number of threads.
 * A zygote must outlive the creates that use it (not the sandboxes).
 */
typedef struct mb_zygote mb_zygote;

/* Starts `mcpbox_bin sandbox-zygote` (an absolute path). It is restarted on
 * the next create if it dies. */
int mb_zygote_start(const char *mcpbox_bin, mb_zygote **out, mb_err *err);
/* A zygote that is the calling, single-threaded process. `title`/`title_len`
 * is an argument area of the caller (from after the program name to the end
 * of the last argument), which each init rewrites to read "sandbox-init" in
 * ps; NULL to leave it. */
int mb_zygote_local(char *title, size_t title_len, mb_zygote **out, mb_err *err);
/* Ends the helper process (if any) and frees the zygote; sandboxes it cloned
 * keep running. NULL is a no-op. */
void mb_zygote_stop(mb_zygote *z);
/* The body of the helper `mcpbox sandbox-zygote --fd FD` (mb_zygote_start
 * execs it): closes every other descriptor >= 3 and serves requests on fd
 * until it closes. title/title_len as mb_zygote_local. Returns an exit
 * status. */
int mb_zygote_helper_main(int fd, char *title, size_t title_len);
/* The helper's pid (0 for a local zygote or before its first start), for
 * tests and diagnostics. */
pid_t mb_zygote_pid(const mb_zygote *z);

/* Makes (or keeps, when it still matches) DIR/NAME: a copy of the
 * executable `bin` with mode 0111, owned by the caller (host root), for
 * mb_sandbox_opts.mcpbox_bin (NAME "sandbox-mcpbox") or for the server
 * executables in server_bin_dir (NAME "mcpbox-GROUP"). Sandbox root can
 * execute it but not read it, so the kernel marks every exec of it
 * non-dumpable: no process of the sandbox can open a native server's
 * /proc/PID/mem, fd/ or environ, not even in the moment after exec
 * (execbin.c). *out is the path (caller frees): `bin` itself, with a
 * warning, when DIR is on a noexec file system (then MB_ECONFLICT if
 * `noexec_fails`, for copies that have a fallback of their own). */
int mb_sandbox_exec_copy(const char *bin, const char *dir, const char *name, int noexec_fails,
                         char **out, mb_err *err);

typedef struct mb_sandbox_limits {
    /* Memory for the sandbox's processes and its /tmp and /dev/shm (tmpfs
     * pages are charged to whoever writes them), which are sized at a
     * quarter of it each. The cgroup limit is memory_bytes + disk_bytes so
     * that a full workspace, /tmp and /dev/shm written from inside end in
     * ENOSPC, not in an OOM kill. 0 = MB_SANDBOX_DEFAULT_MEMORY. */
    uint64_t memory_bytes;
    uint32_t pids_max;   /* processes and threads; 0 = default (512) */
    uint32_t cpu_millis; /* CPU quota in milli-cores; 0 = default (1000) */
    uint64_t disk_bytes; /* workspace quota; 0 = default (1 GiB) */
} mb_sandbox_limits;

/* A host file or directory shown read-only inside (third-party servers that
 * live outside /usr, test fixtures). */
typedef struct mb_sandbox_bind {
    const char *host;   /* absolute host path; symlinks are resolved on the host */
    const char *inside; /* absolute path under /opt, /srv or /mnt, without ".." */
} mb_sandbox_bind;

typedef struct mb_sandbox_opts {
    /* Canonical lower-case UUID. The cgroup is mcpbox/<scope>.<id> and the
     * workspace mount's source "mcpbox-ws-<scope>.<id>", where scope hashes
     * the directory holding state_dir, so that daemons with different data
     * dirs never sweep each other's sandboxes. The hostname inside is
     * "mcpbox-" + the id's first 8 characters. */
    const char *id;
    /* Host directory owned by this sandbox: control socket (ctl.sock), meta
     * file, mount scratch. Created (0711: the init, which runs as uid_base,
     * must be able to search it); removed by destroy. Must be
     * <state_root>/<id> for the sweep to find it. */
    const char *state_dir;
    /* Host directory at which the workspace (a tmpfs of disk_bytes) is
     * mounted, and which is bound at /data inside. Created; must be absent or
     * empty. Files the host writes there should be chowned to uid_base. */
    const char *workspace;
    /* With data_subdir, the workspace's MB_SB_STATE_SUBDIR directory is
     * bound at /.mcpbox/state: state of services the daemon keeps per
     * sandbox (the Google Cloud project database), outside /data.
     * NULL: the workspace tmpfs itself is /data. Otherwise the name of a
     * directory inside it (created, owned by uid_base) that is bound at /data
     * instead, so that the rest of the tmpfs is invisible from inside: the
     * daemon stages archives there, on the same file system as /data (rename
     * works) yet out of the sandbox's reach. A single name, no '/'. */
    const char *data_subdir;
    /* Optional root filesystem image (a directory): its top-level entries are
     * bound read-only instead of the host's /usr and selected /etc files.
     * NULL = the host's. */
    const char *image_dir;
    /* Absolute host path of the mcpbox binary, bound at MB_SANDBOX_MCPBOX_PATH
     * (native servers run from there). Give mb_sandbox_exec_copy's copy, so
     * that servers are non-dumpable from their first instruction. */
    const char *mcpbox_bin;
    /* Optional host directory bound read-only at MB_SANDBOX_SERVER_BIN_DIR:
     * exec-only copies (mb_sandbox_exec_copy) of the server executables,
     * searchable (0711) but not listable from inside. NULL = none. */
    const char *server_bin_dir;
    /* Host uid and gid that are root inside; the sandbox uses the range
     * uid_base .. uid_base + 65535. Must be >= 65536 and the range must not
     * be shared with anything else (the daemon allocates ranges). */
    uint32_t uid_base;
    mb_sandbox_limits limits;
    /* Extra read-only binds (nosuid, nodev), created in this order. */
    const mb_sandbox_bind *binds;
    size_t n_binds;
    /* 0 = own network namespace with loopback only. 1 = share the host's
     * network namespace (full egress, and the host's loopback services). */
    int allow_network;
    /* Who clones the init (borrowed; required by mb_sandbox_create, unused
     * by adopt and destroy). */
    mb_zygote *zygote;
} mb_sandbox_opts;

/* Creates and starts a sandbox. On failure nothing is left behind. */
int mb_sandbox_create(const mb_sandbox_opts *opts, mb_sandbox **out, mb_err *err);

/* Re-attaches to a running sandbox after a daemon restart, through the
 * control socket in opts->state_dir. MB_ENOTFOUND if it is gone (then call
 * mb_sandbox_destroy_by_opts to clean up what remains). opts must carry the
 * same id, state_dir, workspace and limits as at creation. */
int mb_sandbox_adopt(const mb_sandbox_opts *opts, mb_sandbox **out, mb_err *err);

/* Frees the handle and leaves the sandbox running (it can be adopted later).
 * Children whose control fds are still open die when those fds are closed. */
void mb_sandbox_close(mb_sandbox *sb);

/* Kills every process, unmounts, removes the cgroup, the state dir and the
 * workspace. Frees sb (NULL is a no-op). Never leaves a half-destroyed handle:
 * even when it reports an error, sb is freed and whatever could be removed is
 * gone; mb_sandbox_destroy_by_opts may be retried on the same opts. */
int mb_sandbox_destroy(mb_sandbox *sb, mb_err *err);

/* Same guarantees from opts alone (id, state_dir, workspace), for records
 * whose handle is gone. Succeeds if there is nothing left to remove. */
int mb_sandbox_destroy_by_opts(const mb_sandbox_opts *opts, mb_err *err);

/* At daemon start: tears down every sandbox that `keep(ctx, id)` rejects
 * (returns 0 for): state dirs under state_root, cgroups under the mcpbox
 * parents, workspace mounts, and their processes. Entries of state_root that
 * are not sandbox state dirs are left alone. */
int mb_sandbox_sweep(const char *state_root, int (*keep)(void *ctx, const char *id),
                     void *ctx, mb_err *err);

/* Accessors (borrowed strings, valid while the handle lives). */
const char *mb_sandbox_id(const mb_sandbox *sb);
const char *mb_sandbox_workspace(const mb_sandbox *sb);
pid_t mb_sandbox_init_pid(const mb_sandbox *sb); /* host pid of the init */

/* ------------------------------------------------------------- processes */

typedef struct mb_spawn_spec {
    const char *const *argv; /* argv[0] is looked up in envp's PATH */
    /* NULL = {PATH=MB_SANDBOX_DEFAULT_PATH, HOME=/tmp, LANG=C.UTF-8}. */
    const char *const *envp;
    const char *cwd; /* NULL = /data */
    /* NULL = new pipes for stdin/stdout/stderr, returned in mb_child.
     * Otherwise three host fds to give the child as 0, 1, 2 (-1 = /dev/null);
     * the caller keeps them, and the matching mb_child fds are -1. */
    const int *stdio;
} mb_spawn_spec;

/* A process started inside. All fds are O_CLOEXEC and owned by the caller;
 * mb_child_close closes them. ctl_fd is the process's supervision channel:
 * it becomes readable when the process exits (mb_child_wait), and closing it
 * kills the process and everything it started. */
typedef struct mb_child {
    int in_fd, out_fd, err_fd; /* host ends of the pipes, or -1 */
    int ctl_fd;
    int64_t child_id; /* unique within the sandbox */
    pid_t pid;        /* pid inside the sandbox's pid namespace */
    int exited;       /* set by mb_child_wait when the exit was seen */
    int wait_status;  /* waitpid-style status, valid once exited */
} mb_child;

/* Starts a long-lived process (an MCP server): a new session, cwd, argv/envp,
 * no_new_privs, reduced capabilities and the seccomp filter. Fails with
 * MB_ENOTFOUND if argv[0] cannot be found, MB_EDENIED if it cannot be
 * executed, MB_EBUSY if the sandbox is at its process limit. */
int mb_sandbox_spawn(mb_sandbox *sb, const mb_spawn_spec *spec, mb_child *out, mb_err *err);

/* Starts a long-lived stdio server (an MCP server) holding as few of the
 * caller's descriptors as possible: one. Its stdin and stdout are one end of
 * a socketpair whose other end is returned in *sock (O_CLOEXEC, the
 * caller's); its stderr is err_fd (a host fd, e.g. a log file, that the
 * caller keeps; -1 = /dev/null). No supervision channel is kept: *sock is
 * the process's life line. Closing it (or the caller dying) kills the
 * process and everything it started; when the process exits, what it left
 * behind is killed and *sock reads EOF. spec->stdio must be NULL. *pid is
 * its pid inside the sandbox. Errors as mb_sandbox_spawn. */
int mb_sandbox_spawn_server(mb_sandbox *sb, const mb_spawn_spec *spec, int err_fd, int *sock,
                            pid_t *pid, mb_err *err);

/* Sends `sig` to the child's process group (or, with sig == SIGKILL, to the
 * child and all its descendants). */
int mb_child_kill(mb_child *c, int sig, mb_err *err);

/* Waits up to timeout_ms (-1 = forever, 0 = poll) for the child to exit.
 * Returns 0 and fills c->wait_status when it has, MB_ETIMEOUT if not yet,
 * MB_EIO if the sandbox went away. */
int mb_child_wait(mb_child *c, int timeout_ms, mb_err *err);

/* Closes every fd of the child (killing it and its descendants if still
 * running) and marks them -1. Safe to call twice. */
void mb_child_close(mb_child *c);

/* Kills the child (same as mb_child_kill with SIGKILL) by id: kept for
 * callers that only kept the id; prefer mb_child_kill. */
int mb_sandbox_kill_child(mb_sandbox *sb, int64_t child_id, int sig, mb_err *err);

typedef struct mb_exec_spec {
    const char *const *argv;
    const char *const *envp; /* NULL = as in mb_spawn_spec */
    const char *cwd;         /* NULL = /data */
    const void *stdin_data;  /* written to the child's stdin, then closed */
    size_t stdin_len;
    int timeout_ms;    /* <= 0 = no timeout */
    size_t output_cap; /* per stream; 0 = 1 MiB */
} mb_exec_spec;

typedef struct mb_exec_result {
    int exit_code;   /* -1 if killed by a signal */
    int term_signal; /* 0 unless killed by a signal */
    int timed_out;   /* the timeout fired; the process tree was killed */
    int truncated;   /* some output beyond output_cap was dropped */
    mb_buf out;
    mb_buf err;
    int64_t duration_ms;
} mb_exec_result;

/* Runs a command to completion. Output beyond output_cap is counted and
 * dropped; beyond 16 x output_cap the pipes are closed (the writer gets
 * EPIPE). When the command exits, processes it left behind are killed. On
 * timeout the whole process tree is killed and timed_out set. Returns 0 when
 * the command ran (whatever its exit status), MB_ENOTFOUND / MB_EDENIED when
 * argv[0] could not be executed, MB_EBUSY at the process limit, MB_EIO if the
 * sandbox died. res must be freed with mb_exec_result_free in every case. */
int mb_sandbox_exec(mb_sandbox *sb, const mb_exec_spec *spec, mb_exec_result *res,
                    mb_err *err);
void mb_exec_result_free(mb_exec_result *res);

/* Kills every process inside except the init and empties /tmp, /run and
 * /dev/shm: the process half of a reset (the caller restores the workspace). */
int mb_sandbox_reset(mb_sandbox *sb, mb_err *err);

/* ----------------------------------------------------------------- stats */

typedef struct mb_sandbox_stats {
    pid_t init_pid;
    uint64_t memory_bytes;       /* current cgroup charge */
    uint64_t memory_peak_bytes;  /* 0 if the host does not say */
    uint64_t memory_limit_bytes;
    uint32_t pids;               /* tasks now */
    uint32_t pids_max;
    uint64_t pids_denied;        /* forks refused at pids_max so far */
    uint64_t cpu_usage_ns;       /* 0 if the host does not account */
    uint64_t oom_kills;          /* processes killed by the OOM killer */
    uint64_t disk_used_bytes;
    uint64_t disk_limit_bytes;
} mb_sandbox_stats;

int mb_sandbox_stats_get(mb_sandbox *sb, mb_sandbox_stats *out, mb_err *err);

/* Which cgroup version limits sandboxes on this host ("v1", "v2", "hybrid"),
 * or an error saying which controller is missing. */
int mb_sandbox_cgroup_mode(const char **mode, mb_err *err);

/* ------------------------------------------------------------ warm pool */

/*
 * A pool keeps N idle sandboxes per profile key, so that acquiring one is a
 * list pop. A background thread refills each key up to its target. The
 * factory decides everything about a new sandbox (ids, dirs, uid ranges,
 * limits) and may ready it further before it becomes idle (the daemon
 * starts its servers and fills its workspace there); the pool only creates,
 * holds, hands out and destroys.
 */
typedef struct mb_pool mb_pool;

typedef struct mb_pool_factory {
    /* Fills *opts for a new idle sandbox of profile `key`. Strings in opts
     * must stay valid until `retire` or a successful claim of that sandbox;
     * *cookie travels with the sandbox and is returned by mb_pool_claim.
     * Runs on the refill thread. Nonzero = cannot make one now. */
    int (*make_opts)(void *ctx, const char *key, mb_sandbox_opts *opts, void **cookie,
                     mb_err *err);
    /* Readies a freshly created sandbox before it becomes idle (on the refill
     * thread). Nonzero = it is not usable: the pool calls unprepare, destroys
     * it and backs off like after a failed create. May be NULL. */
    int (*prepare)(void *ctx, const char *key, mb_sandbox *sb, void *cookie, mb_err *err);
    /* Undoes prepare (also a partial one) before the pool destroys a sandbox
     * it did not hand out. May be NULL. */
    void (*unprepare)(void *ctx, const char *key, mb_sandbox *sb, void *cookie);
    /* The sandbox made from cookie is gone (creation failed, or the pool
     * destroyed it): release its id, dirs and uid range. May be NULL. */
    void (*retire)(void *ctx, const char *key, void *cookie);
    void *ctx;
} mb_pool_factory;

typedef struct mb_pool_stats {
    unsigned target;       /* configured idle size */
    unsigned idle;         /* ready to claim */
    unsigned creating;     /* being built now */
    uint64_t claimed;      /* total successful claims */
    uint64_t misses;       /* claims that found no idle sandbox */
    uint64_t failures;     /* creations that failed */
    char last_error[MB_ERR_MSG_MAX];
} mb_pool_stats;

/* Starts the refill thread. No key has a target until mb_pool_set_target. */
int mb_pool_new(const mb_pool_factory *factory, mb_pool **out, mb_err *err);
/* Sets how many idle sandboxes to keep for `key` (0 drains it). */
int mb_pool_set_target(mb_pool *p, const char *key, unsigned n, mb_err *err);
/* Takes an idle (created and prepared) sandbox of `key` (O(1)); MB_ENOTFOUND
 * if none is idle, in which case the caller creates one itself. The pool
 * refills behind it. */
int mb_pool_claim(mb_pool *p, const char *key, mb_sandbox **out, void **cookie);
/* Blocks until `key` has its target of idle sandboxes or timeout_ms passes
 * (for tests and start-up). MB_ETIMEOUT if not. */
int mb_pool_wait_ready(mb_pool *p, const char *key, int timeout_ms);
int mb_pool_stats_get(mb_pool *p, const char *key, mb_pool_stats *out);
/* Stops the refill thread, destroys every idle sandbox (retiring each) and
 * frees the pool. Claimed sandboxes are the caller's. NULL is a no-op. */
void mb_pool_free(mb_pool *p);

#endif /* MB_SANDBOX_H */
