/*
 * egress.h - the face of the egress layer: how a sandbox, which has no network
 * interface but loopback, reaches the web when its profile allows it.
 *
 * Daemon side (proxy.c): for every (sandbox, server) whose profile entry has an
 * "egress" allow-list, the daemon listens on a unix socket
 * `<sandbox's egress dir>/<server>.sock`; that directory is bound read-only into
 * the sandbox at MB_EGRESS_DIR_INSIDE. Each connection speaks HTTP proxy
 * protocol: `CONNECT host:port` (tunnels, e.g. https) or a plain request with an
 * absolute `http://` target. The daemon checks the host against the allow-list,
 * resolves it, refuses every address that is not public (loopback, private,
 * link-local, multicast, unspecified: the host's own services and other
 * sandboxes stay out of reach), connects, and relays bytes. Every attempt,
 * allowed or denied, is one line of the sandbox's egress log. Operator-named
 * fixture hosts (`--egress-fixture NAME=IP:PORT`) map a name to a fixed address
 * (typically a test site on the host's loopback) and are the only way to a
 * non-public address; they still obey the allow-list.
 *
 * Sandbox side (forward.c): a program inside listens on a loopback TCP port of
 * the sandbox's own network namespace and relays each connection to the unix
 * socket, so that programs that only take `--proxy-server http://HOST:PORT`
 * (Chromium) can use it.
 *
 * Allow-list entries: "*" (any host), "example.com" (that host and every
 * subdomain of it), an IP literal (exactly that). Matching is case-insensitive.
 *
 * Thread safety: every function of mb_egress may be called from any thread.
 */
#ifndef MB_EGRESS_H
#define MB_EGRESS_H

#include <stddef.h>
#include <sys/socket.h>

#include "util/util.h"

/* Where the per-sandbox socket directory appears inside the sandbox, and the
 * environment variable that tells a server the path of its socket there. */
#define MB_EGRESS_DIR_INSIDE "/mnt/egress"
#define MB_EGRESS_ENV "MCPBOX_EGRESS_PROXY"

typedef struct mb_egress mb_egress;

typedef struct mb_egress_opts {
    /* 1: nothing but fixture hosts is reachable (the host is offline, or the
     * operator wants no web); allow-lists still apply to fixtures. */
    int offline;
    /* "NAME=IP:PORT" or "NAME=[IPv6]:PORT" entries, NULL-terminated (may be NULL). */
    const char *const *fixtures;
    int connect_timeout_ms; /* 0 = 10000 */
    int idle_timeout_ms;    /* a relay with no byte either way for this long ends; 0 = 300000 */
} mb_egress_opts;

/* Starts the proxy's accept thread. Errors: MB_EINVAL (a malformed fixture). */
int mb_egress_new(const mb_egress_opts *opts, mb_egress **out, mb_err *err);
/* Closes every listener and connection and waits for their threads. The
 * socket files go, their directories stay (sandboxes outlive the daemon and
 * keep them bound). */
void mb_egress_free(mb_egress *eg);

/* Listens on `dir`/`server`.sock (mode 0666; `dir` is created, 0755) for
 * `server` of sandbox `sandbox_id`, with `allow` (NULL-terminated; copied; an
 * empty list denies everything) and appending to `log_path`. Opening a pair
 * that is open already replaces its allow-list and keeps the socket; when the
 * list changes, the pair's open connections are cut (they were let through by
 * the old list; the client reconnects and is checked against the new one). */
int mb_egress_open(mb_egress *eg, const char *sandbox_id, const char *server, const char *dir,
                   const char *const *allow, const char *log_path, mb_err *err);
/* Stops every listener of the sandbox, cuts its connections, removes the
 * socket files (and `dir` when it is then empty). Unknown ids are fine. */
void mb_egress_close_sandbox(mb_egress *eg, const char *sandbox_id);

/* ---- policy (policy.c), pure functions, exported for tests */

/* 1 if `host` (lower-case name or IP literal without brackets) matches an entry. */
int mb_egress_allowed(const char *const *allow, const char *host);
/* 1 if `entry` is a well-formed allow-list entry: "*", "*.NAME", a host NAME
 * (labels of letters, digits, '-' and '_', 1-63 bytes each, 253 in all, no
 * empty label) or an IPv4/IPv6 literal without brackets. */
int mb_egress_entry_valid(const char *entry);
/* 1 if every host `entry` (a valid entry) admits is admitted by `allow`:
 * `entry` narrows `allow` or equals a part of it, never widens it. */
int mb_egress_within(const char *const *allow, const char *entry);
/* 1 if the address is a public unicast address (not loopback, private, CGNAT,
 * link-local, multicast, unspecified, documentation, IPv4-mapped non-public...). */
int mb_egress_addr_public(const struct sockaddr *sa);
/* Splits "host:port" / "[v6]:port" (CONNECT) or the authority of an absolute
 * http URL. Lower-cases the host; validates its characters and the port
 * (1-65535). `default_port` applies when no port is given (0 = required).
 * Returns 0 or MB_EINVAL. */
int mb_egress_split_authority(const char *s, size_t n, int default_port, char *host,
                              size_t host_cap, int *port);

/* ---- sandbox side (forward.c) */

/* Listens on 127.0.0.1 (ephemeral port, returned in *port) and relays every
 * connection to the unix socket at `socket_path`, from a background thread
 * that lives as long as the process. */
int mb_egress_forward_start(const char *socket_path, int *port, mb_err *err);

#endif /* MB_EGRESS_H */
