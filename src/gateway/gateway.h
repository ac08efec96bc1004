/*
 * gateway.h - the face of the MCP gateway: MCP Streamable HTTP in front of
 * long-lived stdio MCP server processes.
 *
 * Every MCP URL `{public_url}/{server}/mcp[/]?local_sandbox_id={id}` is served
 * by one gateway "backend": the stdio server process of that (sandbox, server)
 * pair. One process serves every client session of its URL, so that server
 * state (open browsers, presentations, background processes) survives the
 * session-per-tool-call pattern of the benchmarks. The gateway
 *
 *   - initializes each process once and answers every session's `initialize`
 *     from the remembered InitializeResult, negotiating the protocol version
 *     per session (2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25);
 *   - rewrites JSON-RPC ids in both directions so that every response reaches
 *     the session and request it belongs to (progress tokens and
 *     notifications/cancelled included), and sends server-to-client requests
 *     (roots/list, sampling, elicitation) to the session whose request is in
 *     flight;
 *   - starts processes lazily (or eagerly with mb_gateway_start), restarts
 *     them with backoff when they die, answers hung calls with a JSON-RPC
 *     error after a timeout, and keeps one misbehaving server from affecting
 *     any other.
 *
 * Threads: the gateway runs one reactor thread (epoll over every backend's
 * stdout/stderr/stdin pipe, plus a 1-second housekeeping tick). HTTP requests
 * are served on the caller's threads: mb_gateway_handle() blocks its own
 * connection's thread, which is why the HTTP server must run libmicrohttpd in
 * MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION mode. All
 * functions here are thread-safe.
 *
 * Transport details, limits and options are described in docs/GATEWAY.md.
 */
#ifndef MB_GATEWAY_H
#define MB_GATEWAY_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <microhttpd.h>

#include "util/util.h"

typedef struct mb_gateway mb_gateway;

/* What to run for one (sandbox, server). Borrowed by mb_gateway_add, which
 * copies it. argv is NULL-terminated; envp NULL-terminated or NULL (inherit);
 * cwd NULL to inherit. tools_static: the server's tools/list answer changes
 * only after it says notifications/tools/list_changed, so the gateway answers
 * clients' tools/list (without a cursor) with the text of the one it fetched
 * itself, byte for byte, instead of a round trip through the process. */
typedef struct mb_backend_spec {
    const char *const *argv;
    const char *const *envp;
    const char *cwd;
    /* Request headers the server reads per request (NULL-terminated HTTP
     * header names, e.g. "x-email-config"; NULL: none). The gateway copies
     * their values from each client POST into every request it forwards,
     * under params._meta[MB_GW_META_HEADERS] as {"name": "value"} (names
     * lowercase; only the headers given), after dropping any value of that
     * key the client sent. A value over MB_GW_MAX_HEADER_VALUE bytes, not
     * UTF-8, holding control characters, or a header given twice gets 400.
     * At most MB_GW_MAX_FORWARD_HEADERS names. */
    const char *const *forward_headers;
    int tools_static;
} mb_backend_spec;

/* The _meta key of forwarded headers (docs/GATEWAY.md), and its limits. */
#define MB_GW_META_HEADERS "mcpbox/headers"
#define MB_GW_MAX_HEADER_VALUE 8192
#define MB_GW_MAX_FORWARD_HEADERS 8

/* A started process as the spawn callback hands it over: the host-side pipe
 * ends (the gateway owns them from then on and closes them) and an opaque
 * handle the kill callback receives. in_fd and out_fd may be one descriptor
 * (a socket that is both the server's stdin and stdout; closed once). err_fd
 * may be -1 (stderr not captured here; see stderr_tail). */
typedef struct mb_backend_proc {
    int in_fd;      /* write end of the server's stdin */
    int out_fd;     /* read end of the server's stdout (may equal in_fd) */
    int err_fd;     /* read end of the server's stderr, or -1 */
    int64_t handle; /* e.g. a pid; meaningful only to the callbacks */
} mb_backend_proc;

/* One client request the gateway forwarded and saw answered, for the
 * on_call observer (docs/OBSERVABILITY.md). Strings are borrowed for the
 * call; tool and error may be NULL. */
typedef struct mb_gateway_call {
    const char *sandbox_id, *server;
    const char *method;       /* as the client sent it */
    const char *tool;         /* tools/call: params.name as sent, else NULL */
    int tool_listed;          /* the server's tools/list names that tool */
    size_t arg_bytes;         /* JSON text of params.arguments (tools/call) or params */
    size_t result_bytes;      /* JSON text of the result or error */
    double started;           /* wall clock when the request arrived */
    int64_t micros;           /* from the request to its answer */
    int outcome;              /* 0 ok, 1 a tool result with isError, 2 a JSON-RPC error
                                 from the server, 3 answered by the gateway (timeout,
                                 crash, cancellation, shutdown) */
    const char *error;        /* the error's message (outcomes 2, 3) */
    const char *request_id;   /* the HTTP request's id (mb_log_request_id), or "" */
} mb_gateway_call;

typedef struct mb_gateway_opts {
    /* Starts the process for (sandbox_id, server): inside the sandbox in the
     * daemon, plain fork/exec (mb_gateway_spawn_local) in tests and in
     * `mcpbox bridge`. Returns 0 or a negative mb_code with `err` filled.
     * Called from any thread, including the reactor when a crashed server is
     * restarted, so it must not block for long. */
    int (*spawn)(void *ctx, const char *sandbox_id, const char *server,
                 const mb_backend_spec *spec, mb_backend_proc *out, mb_err *err);
    /* Stops the process (if still running) and reaps it. The gateway has
     * already closed the pipe ends. Called exactly once per successful spawn. */
    void (*kill)(void *ctx, const char *sandbox_id, const char *server, int64_t handle);
    /* Optional, for processes spawned with err_fd = -1 whose stderr goes
     * elsewhere (a file): copies the last bytes the process wrote there, at
     * most cap, into buf and returns how many. Errors about the process quote
     * them ("its stderr ended with: ..."). Called under the backend's lock:
     * it must be quick and must not call into the gateway. */
    size_t (*stderr_tail)(void *ctx, const char *sandbox_id, const char *server, int64_t handle,
                          char *buf, size_t cap);
    void *ctx;

    int call_timeout_ms;      /* a request unanswered this long gets a JSON-RPC
                                 error and is cancelled upstream; 0 = 120000 */
    int init_timeout_ms;      /* start + initialize + tools/list; 0 = 30000 */
    int cancel_grace_ms;      /* after a request is cancelled (by its client or
                                 by call_timeout_ms) the gateway pings the
                                 server; one that does not answer within this
                                 is wedged, and is killed and restarted;
                                 0 = 5000 */
    int keepalive_ms;         /* ": keepalive" comment on idle SSE streams, and
                                 a POST waiting this long switches to SSE so
                                 that its headers go out; 0 = 15000 */
    int session_idle_ms;      /* a session with no traffic and no open stream
                                 for this long is forgotten; 0 = 1 hour */
    size_t max_message_bytes; /* per JSON-RPC message, both directions;
                                 0 = 16 MiB */
    size_t max_sessions;      /* across the gateway; 0 = 10000 */
    size_t max_sessions_per_sandbox; /* 0 = no cap of its own */
    size_t max_sessions_per_tenant;  /* 0 = no cap of its own */
    /* At a cap, the least recently used idle session of the same scope makes
     * room: of the same sandbox for the sandbox cap, of the same tenant for
     * the tenant cap and the global one (of the same sandbox when there is
     * no tenant). Another tenant's session is never evicted; with none of
     * its own idle, initialize gets 503. tenant_of (optional; called outside
     * the gateway's locks, once per initialize) writes the tenant (the key
     * owner) of a sandbox into buf and returns 0, or returns non-zero when
     * there is none. */
    int (*tenant_of)(void *ctx, const char *sandbox_id, char *buf, size_t cap);
    /* Origin allow list (DNS-rebinding and cross-site protection). An Origin
     * is allowed when its host is one of the allowed hosts (a "*" there does
     * not count) or it matches an entry here: a full origin
     * ("http://app.example:3000"), a bare host name ("app.example", any
     * scheme and port) or "*". May be NULL. A request without Origin (not
     * from a browser) is always allowed. */
    const char *const *allowed_origins;
    /* Host header allow list: host names without port (IPv6 in brackets) or
     * "*". NULL = localhost, 127.0.0.1, [::1]. Callers add their listen host
     * and public host. */
    const char *const *allowed_hosts;
    /* Observers (optional). on_call: every forwarded client request once it
     * is answered (by its server or by the gateway). on_restart: a server
     * process is started again after it died, hung or failed to start. Both
     * are called under a backend's lock, on whichever thread saw the event:
     * they must be quick, must not block on anything but leaf locks, and
     * must not call into the gateway. */
    void (*on_call)(void *ctx, const mb_gateway_call *call);
    void (*on_restart)(void *ctx, const char *sandbox_id, const char *server);
} mb_gateway_opts;

/* ----------------------------------------------------------- lifecycle */

/* Creates a gateway and starts its reactor thread. `opts` is copied (the
 * allow lists too). Ignores SIGPIPE for the process: a write to a dead
 * server's stdin must fail with EPIPE rather than kill the daemon. */
int mb_gateway_create(const mb_gateway_opts *opts, mb_gateway **out, mb_err *err);

/* Ends every session and SSE stream and wakes every request waiting in the
 * gateway (they answer 503). Call before MHD_stop_daemon(), which would
 * otherwise wait for connection threads blocked on idle streams. Later
 * requests get 503. Idempotent. */
void mb_gateway_shutdown(mb_gateway *gw);

/* Stops every server process, joins the reactor and frees everything.
 * Requires that the HTTP server is stopped (no call into the gateway is in
 * progress or will follow). Implies mb_gateway_shutdown. NULL is a no-op. */
void mb_gateway_destroy(mb_gateway *gw);

/* ------------------------------------------------------------ registry */

/* Registers (sandbox_id, server) with what to run; nothing starts yet. Adding
 * an existing pair replaces its spec for the next start and returns 0. */
int mb_gateway_add(mb_gateway *gw, const char *sandbox_id, const char *server,
                   const mb_backend_spec *spec, mb_err *err);

/* Starts the pair's process now if it is not running and waits up to
 * wait_ready_ms until it answered initialize and tools/list. Errors:
 * MB_ENOTFOUND (not added), MB_EIO (spawn failed, the process died or refused
 * initialize; the message says why, with the tail of its stderr),
 * MB_ETIMEOUT (not ready in time; it keeps starting in the background).
 * wait_ready_ms <= 0 only starts it (0, or the spawn error): to start the
 * servers of a sandbox in parallel, call it with 0 for each, then again with
 * a wait for each. */
int mb_gateway_start(mb_gateway *gw, const char *sandbox_id, const char *server,
                     int wait_ready_ms, mb_err *err);

/* Tells the gateway the tenant of a sandbox it serves (what opts.tenant_of
 * would answer), so that its first sessions need not ask: an acquire knows
 * the owner, and a client opening all its servers' sessions at once would
 * otherwise have each of them look it up. Unknown sandboxes are ignored. */
void mb_gateway_set_tenant(mb_gateway *gw, const char *sandbox_id, const char *tenant);

/* Forgets every pair of the sandbox: ends its sessions (their requests get
 * JSON-RPC errors, their streams close, later requests get 404) and stops
 * its processes. Unknown sandboxes are ignored. */
void mb_gateway_remove_sandbox(mb_gateway *gw, const char *sandbox_id);

/* Forgets one pair (as mb_gateway_remove_sandbox does for all of them): its
 * sessions end, its process stops, its URL answers 404. Unknown pairs are
 * ignored. For sandboxes readied with more servers than a client asked for
 * (the warm pool). */
void mb_gateway_remove_server(mb_gateway *gw, const char *sandbox_id, const char *server);

/* For a sandbox reset: stops every process of the sandbox (in-flight calls
 * get a JSON-RPC error), calls between(ctx) if given (the caller resets the
 * workspace there, with no server running), then starts again those that
 * were running and waits for them (init_timeout_ms each). Sessions survive.
 * MB_ENOTFOUND for an unknown sandbox; the error of `between` (the servers
 * are restarted anyway); MB_EIO/MB_ETIMEOUT as mb_gateway_start. */
int mb_gateway_restart_sandbox(mb_gateway *gw, const char *sandbox_id,
                               int (*between)(void *ctx, mb_err *err), void *ctx, mb_err *err);

/* Readiness and drift of one pair. *ready is 1 once the process answered
 * initialize and its tools/list is known. *out_metadata (owned by the
 * caller, may be NULL to skip) is
 *   {"server_info": {"name", "version"}, "protocol_version",
 *    "tools_sha256", "tools_count", "state", "restarts", "sessions",
 *    "last_error"?}
 * where tools_sha256 is the SHA-256 (hex) of the canonical JSON (compact,
 * sorted keys) of [{"name", "inputSchema"}] sorted by name, and state is one
 * of "stopped", "starting", "ready", "crashed". Fields not known yet are
 * absent. Returns MB_ENOTFOUND if the pair is not registered. */
int mb_gateway_info(mb_gateway *gw, const char *sandbox_id, const char *server,
                    json_t **out_metadata, int *ready);

/* ---------------------------------------------------------------- HTTP */

/* The MCP endpoint. Call it from the MHD access handler for every call on an
 * MCP route (`/{server}/mcp`, with or without trailing slash), with the same
 * contract as MHD_AccessHandlerCallback: upload_data arrives in chunks and
 * *req_cls (NULL on the first call) is the gateway's per-request state.
 * sandbox_id is the `local_sandbox_id` query value (NULL if absent). Handles
 * POST, GET, DELETE and OPTIONS; other methods get 405. */
enum MHD_Result mb_gateway_handle(mb_gateway *gw, struct MHD_Connection *conn,
                                  const char *server, const char *sandbox_id,
                                  const char *method, const char *upload_data,
                                  size_t *upload_data_size, void **req_cls);

/* From MHD_OPTION_NOTIFY_COMPLETED, for every request whose *req_cls the
 * gateway set (non-NULL). Frees the per-request state. */
void mb_gateway_request_done(mb_gateway *gw, void *req_cls);

/* After the first call of a request: 1 if its headers named a live (sandbox,
 * server) pair, which the HTTP layer counts as an authenticated request (the
 * sandbox id is the MCP URL's capability); 0 if it was refused. */
int mb_gateway_request_routed(const void *req_cls);

/* ------------------------------------------------- plain local processes */

/* A spawn callback that runs spec->argv with posix_spawnp in its own process
 * group (stdin/stdout/stderr on pipes, signal mask and SIGPIPE reset), and
 * the matching kill callback (SIGKILL to the group, then waitpid). ctx is
 * unused. For `mcpbox bridge` and tests. */
int mb_gateway_spawn_local(void *ctx, const char *sandbox_id, const char *server,
                           const mb_backend_spec *spec, mb_backend_proc *out, mb_err *err);
void mb_gateway_kill_local(void *ctx, const char *sandbox_id, const char *server,
                           int64_t handle);

#endif /* MB_GATEWAY_H */
