/*
 * sandbox_int.h - what the files of the sandbox layer share and nobody else
 * sees: the control protocol between the daemon and a sandbox's init, the
 * host cgroup and workspace helpers, the root filesystem plan, the launcher
 * and the confinement (seccomp + capabilities) applied to every child.
 *
 * Names with a double underscore (mb__*) are private to src/sandbox/.
 *
 * Process picture of one sandbox (host view on the left):
 *
 *   daemon ──request──> zygote ──clone(NEWUSER|NEWNS|NEWPID|...)──> init (pid 1)
 *     │  connect(state_dir/ctl.sock)                                   │ accept
 *     └──── SEQPACKET connection per child ──────────────> shepherd (fork of init,
 *                                                            child subreaper)
 *                                                               └─> command (exec'd,
 *                                                                   confined)
 *
 * One connection = one child: the shepherd owns the connection and the
 * command's process tree; EOF on the connection kills that tree.
 */
#ifndef MB_SANDBOX_INT_H
#define MB_SANDBOX_INT_H

#include <linux/filter.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "sandbox/sandbox.h"
#include "util/util.h"

/* ------------------------------------------------------------ protocol */

/* Bumped whenever a message changes shape; adopt refuses another version. */
#define MB__PROTO_VERSION 1
/* Largest message (argv + envp of a spawn). */
#define MB__MSG_MAX (1u << 20)

enum mb__msg_type {
    MB__MSG_PING = 1,  /* -> PONG */
    MB__MSG_PONG,      /* a = protocol version, b = live children */
    MB__MSG_SPAWN,     /* a = argc, b = envc, flags = MB__SPAWN_*; strs = cwd, argv, envp */
    MB__MSG_SPAWNED,   /* a = child id, b = pid inside */
    MB__MSG_ERROR,     /* a = errno; strs[0] = what failed */
    MB__MSG_EXIT,      /* a = wait status of the command */
    MB__MSG_KILL,      /* a = signal; flags = MB__KILL_TREE */
    MB__MSG_KILL_ID,   /* a = child id, b = signal -> OK / ERROR */
    MB__MSG_RESET,     /* kill all but init, empty /tmp /run /dev/shm -> OK */
    MB__MSG_OK,
    /* daemon -> zygote (zygote.c): a = uid_base, b = allow_network; strs =
     * id, state_dir, workspace, data_subdir, image_dir, mcpbox_bin, root,
     * hostname, "memory pids cpu disk", cgroup name, then (host, inside)
     * per bind; fds =
     * the child's sync end, the control socket, the log. -> SPAWNED (a =
     * host pid, fd = its pidfd) or ERROR. */
    MB__MSG_ZY_CREATE,
};

/* SPAWN flags: which of stdin/stdout/stderr travel as SCM_RIGHTS (in order). */
#define MB__SPAWN_FD0 0x1u
#define MB__SPAWN_FD1 0x2u
#define MB__SPAWN_FD2 0x4u
/* SPAWN flag: the connection ends after SPAWNED (no EXIT is sent); the
 * process's life line is its stdin instead (a socket whose far end the
 * daemon holds): when that end closes, the tree is killed, and when the
 * command exits, what it left behind is killed. */
#define MB__SPAWN_LIFELINE 0x8u
/* KILL flag: signal the whole tree the command started, not its group. */
#define MB__KILL_TREE 0x1u

typedef struct mb__msg_hdr {
    uint32_t type;
    uint32_t flags;
    int64_t a;
    int64_t b;
    uint32_t nstr; /* NUL-terminated strings that follow the header */
    uint32_t pad;
} mb__msg_hdr;

typedef struct mb__msg {
    mb__msg_hdr h;
    char **strs; /* h.nstr pointers into buf */
    int fds[3];  /* received descriptors, -1 when absent or taken */
    int nfds;
    mb_buf buf;
} mb__msg;

/* Sends one message (header, strings, optional fds). 0 or -errno. */
int mb__msg_send(int fd, const mb__msg_hdr *h, const char *const *strs, const int *fds,
                 int nfds);
/* Convenience: a header-only message. */
int mb__msg_send_simple(int fd, uint32_t type, uint32_t flags, int64_t a, int64_t b);
int mb__msg_send_error(int fd, int errnum, const char *what);
/* Receives one message; timeout_ms < 0 waits forever. 0, -ETIMEDOUT, -EPIPE
 * when the peer closed, -EPROTO on a malformed message, or -errno. */
int mb__msg_recv(int fd, mb__msg *m, int timeout_ms);
/* Frees the buffer and closes fds still held. */
void mb__msg_free(mb__msg *m);

/* ------------------------------------------------------------- cgroups */

enum {
    MB__CG_MEMORY = 1 << 0,
    MB__CG_PIDS = 1 << 1,
    MB__CG_CPU = 1 << 2,
    MB__CG_CPUACCT = 1 << 3,
};

#define MB__CG_MAX_HIER 4
#define MB__CG_PARENT "mcpbox"

/* One mounted hierarchy we use: v1 hosts have one per controller (or per
 * co-mounted group), v2 hosts a single one. */
typedef struct mb__cg_hier {
    char path[256]; /* mount point, e.g. /sys/fs/cgroup/memory */
    int version;    /* 1 or 2 */
    unsigned ctrls; /* MB__CG_* it provides to us */
} mb__cg_hier;

typedef struct mb__cg_layout {
    mb__cg_hier h[MB__CG_MAX_HIER];
    int n;
    unsigned ctrls; /* union */
    const char *mode;
} mb__cg_layout;

/* Cgroups and workspace mounts are named "<scope>.<id>", where scope is a
 * hash of the directory that holds the state dirs (the state root): two
 * daemons with different data dirs on one host never sweep each other's
 * sandboxes. */
#define MB__SCOPE_LEN 16
#define MB__NAME_MAX (MB__SCOPE_LEN + 1 + 36 + 1)
/* realpath() of a path whose last components may be gone (a data dir whose
 * run/ was removed): the deepest existing ancestor resolved, the rest
 * appended as written ("." dropped, ".." taken lexically). NULL if not even
 * "/" or the working directory resolves. Freed by the caller. */
char *mb__resolve_partly(const char *path);
/* Scope of a state root (its absolute path, resolved even if it is gone). */
void mb__scope_of_root(const char *state_root, char out[MB__SCOPE_LEN + 1]);
/* Scope and name of a sandbox from its state dir and id. */
void mb__sb_name(const char *state_dir, const char *id, char out[MB__NAME_MAX]);

/* The host's layout, probed once (see sandbox.h "Host state"). */
int mb__cg_layout_get(const mb__cg_layout **out, mb_err *err);
/* Derives a layout from mountinfo text; read_ctrl reads a v2 mount's
 * cgroup.controllers (exposed for tests of v1, v2 and hybrid hosts). */
int mb__cg_layout_parse(const char *mountinfo,
                        int (*read_ctrl)(void *ctx, const char *mnt, char *out, size_t cap),
                        void *ctx, mb__cg_layout *out, mb_err *err);
/* Creates mcpbox/<name> in every hierarchy and writes the limits. */
int mb__cg_create(const char *name, const mb_sandbox_limits *lim, mb_err *err);
/* The same against a given layout (tests point it at a fake tree). */
int mb__cg_create_in(const mb__cg_layout *l, const char *name, const mb_sandbox_limits *lim,
                     mb_err *err);
int mb__cg_stats_in(const mb__cg_layout *l, const char *name, mb_sandbox_stats *st,
                    mb_err *err);
/* Moving a process into a cgroup by writing its pid to cgroup.procs takes a
 * global lock whose acquisition waits for an RCU grace period (5-15 ms on a
 * busy host, most of a sandbox create). A single-threaded process that
 * writes "0" to a v1 hierarchy's `tasks` file moves itself without it. So:
 * mb__cg_open_self_join opens mcpbox/<name>/tasks of every v1 hierarchy
 * (fds[] gets up to MB__CG_MAX_HIER, -1 padded; *n how many), for the new
 * process to write "0" to as its first act; mb__cg_attach moves pid into
 * the hierarchies that cannot be joined that way (v2, where the parent
 * writes cgroup.procs), or into all of them with all = 1. */
int mb__cg_open_self_join(const char *name, int fds[MB__CG_MAX_HIER], int *n, mb_err *err);
int mb__cg_attach(const char *name, pid_t pid, int all, mb_err *err);
/* SIGKILLs every task of mcpbox/<name> (cgroup.kill on v2) and waits up to
 * timeout_ms for them to be gone. 0 when empty, MB_ETIMEOUT otherwise. */
int mb__cg_kill(const char *name, int timeout_ms, mb_err *err);
/* Removes mcpbox/<name> everywhere (missing = fine). */
int mb__cg_remove(const char *name, mb_err *err);
/* Fills the cgroup half of the stats. */
int mb__cg_stats(const char *name, mb_sandbox_stats *st, mb_err *err);
/* Calls fn for every name under the mcpbox parents (each once). */
int mb__cg_list(void (*fn)(void *ctx, const char *name), void *ctx, mb_err *err);
/* Effective limits after defaults. */
void mb__limits_resolve(const mb_sandbox_limits *in, mb_sandbox_limits *out);
/* Size of /tmp and of /dev/shm (each): a quarter of memory_bytes, so that
 * both full plus a full workspace leave half of memory_bytes for processes
 * under the cgroup limit of memory_bytes + disk_bytes, and filling them ends
 * in ENOSPC, not in an OOM kill. */
uint64_t mb__tmpfs_bytes(const mb_sandbox_limits *resolved);

/* ----------------------------------------------------------- workspace */

/* Mounts a tmpfs of `bytes` at path (created), owned by uid:uid, source name
 * "mcpbox-ws-<name>". MB_ECONFLICT if path is a non-empty directory. */
#define MB__WS_SOURCE_PREFIX "mcpbox-ws-"
int mb__ws_mount(const char *path, const char *name, uint64_t bytes, uint32_t uid,
                 mb_err *err);
/* 1 if path is the root of a mount. */
int mb__ws_is_mount(const char *path);
/* Detaches every mount stacked on path and removes the directory. */
int mb__ws_unmount(const char *path, mb_err *err);

/* ------------------------------------------------------------- rootfs */

typedef struct mb__plan mb__plan;

/* Builds the list of steps that assemble the root under `root` (a host
 * directory that the child mounts its tmpfs on), from the host or from
 * opts->image_dir. Runs in the parent: allocates freely. */
int mb__plan_build(const mb_sandbox_opts *o, const mb_sandbox_limits *lim,
                   const char *root, const char *hostname, mb__plan **out, mb_err *err);
/* In the freshly cloned child (system calls only, no allocation): first,
 * while still host uid 0, make mounts private and open every source
 * (mb__plan_open); then, as root of the user namespace, build the root and
 * pivot into it (mb__plan_run). 0, or -errno with *failed_step. */
int mb__plan_open(mb__plan *p, int *failed_step);
int mb__plan_run(mb__plan *p, int *failed_step);
/* "bind /usr on .../root/usr" for an error message about a step. */
const char *mb__plan_step_name(const mb__plan *p, int step);
void mb__plan_free(mb__plan *p);

/* ------------------------------------------------------------ confine */

/* The seccomp program every child gets, built once by the zygote. */
typedef struct mb__confine {
    struct sock_filter *insns;
    unsigned short len;
    int in_force; /* filter and bounding set applied to the init: children inherit them */
} mb__confine;

int mb__confine_build(mb__confine *c, mb_err *err);
void mb__confine_free(mb__confine *c);
/* Loads the program into the calling process (the init, once) and drops
 * the capabilities children do not keep from its bounding set, so that
 * every process it forks is under both from its first instruction; sets
 * c->in_force. 0 or -errno. */
int mb__confine_install(mb__confine *c);
/* In a child about to exec: no_new_privs, capability sets reduced, and the
 * bounding set and seccomp unless in force already. 0 or -errno. */
int mb__confine_apply(const mb__confine *c);
/* The capabilities children keep (bit mask of CAP_* numbers). */
uint64_t mb__confine_kept_caps(void);

/* ------------------------------------------------------------- launch */

typedef struct mb__launch_args {
    const mb_sandbox_opts *opts;
    const mb_sandbox_limits *lim;
    const char *root;     /* scratch mount point for the new root */
    const char *hostname;
    const char *name;     /* cgroup name */
    int listen_fd;        /* bound, not yet listening; init calls listen() */
} mb__launch_args;

/* Has opts->zygote clone the init into new namespaces, maps its ids, puts
 * it in the cgroup, lets it assemble its root and waits until it listens.
 * On success *pid and *pidfd identify the init; *is_child says whether it is
 * the caller's child (a local zygote) or the zygote process's. */
int mb__launch(const mb__launch_args *a, pid_t *pid, int *pidfd, int *is_child, mb_err *err);

/* What a zygote needs for one clone. The three fds are the child's; the
 * caller keeps (and closes) them. */
typedef struct mb__clone_req {
    const mb_sandbox_opts *opts;
    mb_sandbox_limits lim; /* resolved */
    const char *root;
    const char *hostname;
    const char *name;      /* cgroup name, which the child joins itself */
    int sync_fd, listen_fd, log_fd;
} mb__clone_req;

/* In a single-threaded process (a zygote): builds the root plan and clones
 * the child that waits for "go", sets the sandbox up and becomes its init
 * with the seccomp program cf. title/title_len: the process's argument area
 * for the init's ps title (may be NULL). */
int mb__launch_clone(const mb__clone_req *r, const mb__confine *cf, char *title,
                     size_t title_len, pid_t *pid, int *pidfd, mb_err *err);

/* ------------------------------------------------------------- zygote */

/* Runs one clone through z: in this process for a local zygote, else in the
 * helper (started or restarted as needed). *is_child as mb__launch. */
int mb__zygote_clone(mb_zygote *z, const mb__clone_req *r, pid_t *pid, int *pidfd,
                     int *is_child, mb_err *err);
/* The body of `mcpbox sandbox-zygote`: serves requests on fd until it
 * closes. title/title_len as mb__launch_clone. Returns an exit status. */
int mb__zygote_main(int fd, char *title, size_t title_len);

/* --------------------------------------------------------------- init */

/* The init: runs as pid 1 of the sandbox, in the child the zygote cloned,
 * and returns only if it cannot start (after reporting why on status_fd).
 * cf is borrowed for the life of the process. */
int mb__init_main(int listen_fd, int status_fd, const mb__confine *cf);
/* Tells the inits cloned from here on that every signal but SIGPIPE has its
 * default action already (the zygote helper). */
void mb__init_signals_are_default(void);
/* The body of a shepherd: takes over conn and the spawn request. */
void mb__shepherd_main(int conn, mb__msg *spawn, int64_t child_id, const mb__confine *cf)
    __attribute__((noreturn));

/* Starts a SPAWN request's command as a child of the caller (a shepherd, or
 * the init for a server with a life line): a clone sharing the caller's
 * memory until its exec, confined by cf; the fds of m stay the caller's.
 * 0 with *pid, or an errno with what failed in what. */
int mb__cmd_start(mb__msg *m, const mb__confine *cf, pid_t *pid, char *what, size_t cap);
/* The pids whose parent chain reaches root, and with sid > 0 those of
 * session sid too (malloc'd array in *out). Their number. */
int mb__tree_pids(pid_t root, pid_t sid, pid_t **out);

/* Closes every descriptor >= 3 except those in keep[0..n) (-1 entries are
 * ignored). For freshly forked children. 0 or -errno. */
int mb__close_fds_except(const int *keep, int n);

/* ------------------------------------------------------------- handle */

struct mb_sandbox {
    char *id;
    char name[MB__NAME_MAX]; /* <scope>.<id>: cgroup and mount names */
    char *state_dir;
    char *workspace;
    char *ctl_path;
    uint32_t uid_base;
    mb_sandbox_limits lim; /* resolved */
    pid_t init_pid;        /* host pid */
    int pidfd;             /* -1 if unknown */
    int is_child;          /* init is our child: reap it */

    pthread_mutex_t mu;    /* guards refs and dying */
    pthread_cond_t cv;     /* signalled when refs drops to 0 */
    int refs;              /* calls in flight */
    int dying;             /* destroy started: new calls fail */
};

/* Takes a reference for a call in flight; MB_ECONFLICT if being destroyed. */
int mb__sb_ref(mb_sandbox *sb, mb_err *err);
void mb__sb_unref(mb_sandbox *sb);
/* Opens a new connection to the init. */
int mb__sb_connect(mb_sandbox *sb, int *fd, mb_err *err);
int mb__connect_path(const char *path, int *fd, mb_err *err);

/* pool.c: waits until usage (CPU ns so far; non-zero return: stop waiting)
 * grew by less than quiet_ns over one window_ms, at most max_ms; the
 * number of windows waited. */
int mb__pool_settle(int (*usage)(void *ctx, uint64_t *ns), void *ctx, int window_ms,
                    uint64_t quiet_ns, int max_ms);

/* Paths derived from a state dir. */
#define MB__CTL_NAME "ctl.sock"
#define MB__META_NAME "meta"
#define MB__ROOT_NAME "root"
#define MB__LOG_NAME "init.log"

#endif /* MB_SANDBOX_INT_H */
