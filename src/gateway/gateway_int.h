/*
 * gateway_int.h - the gateway's internal header, shared by the files of
 * src/gateway/ and by tests/unit/test_gateway.c. Nothing outside the gateway
 * includes it; the public face is gateway.h.
 *
 * OBJECTS AND OWNERSHIP
 *
 *   mb_gateway       the registry of sandboxes and their backends, the table
 *                    of sessions, the options, the reactor.
 *   mb_gw_sandbox    a sandbox id and the list of its backends.
 *   mb_gw_backend    one (sandbox, server): the spec to run, the process
 *                    (stdin queue, generation), the id map of messages in
 *                    flight, the remembered InitializeResult and tools hash,
 *                    the sessions bound to it. Refcounted (atomic): the
 *                    registry, every session, stream and pipe, and every
 *                    thread working on it hold a reference.
 *   mb_gw_session    one client session (Mcp-Session-Id): its negotiated
 *                    version, client capabilities, open GET streams, calls in
 *                    flight. Refcounted (atomic): the session table, streams
 *                    and requests using it.
 *   mb_gw_stream     where messages for a client go: the response of one POST
 *                    (an "exchange": JSON or SSE) or one GET stream. Messages
 *                    are queued already serialized; the thread serving the
 *                    HTTP response takes them. Refcounted under b->lock.
 *   mb_gw_pending    one entry of a backend's id map: a client request sent
 *                    upstream (CALL), a server request sent to a client
 *                    (SREQ), or the gateway's own initialize/tools/list.
 *   mb_gw_pipe       the read side of one spawned process (stdout, stderr),
 *                    owned by the reactor thread.
 *
 * LOCKING
 *
 *   gw->lock (rwlock) guards the registry and the session table. b->lock
 *   (mutex) guards everything reachable from one backend: its process state,
 *   id map, sessions' mutable fields, streams and pendings. Order: gw->lock
 *   before b->lock; never two backend locks at once. Condition variables
 *   (b->cond for state changes, st->cond per stream) wait on b->lock.
 *
 * GENERATIONS
 *
 *   b->gen changes whenever a process is spawned or stopped. A pipe remembers
 *   the generation it was spawned in; anything it reads after the backend
 *   moved on is discarded. Only the reactor closes a pipe's fds or frees it.
 */
#ifndef MB_GATEWAY_INT_H
#define MB_GATEWAY_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "gateway/gateway.h"

/* ---------------------------------------------------------------- limits */

#define MB_GW_DEFAULT_CALL_TIMEOUT_MS 120000
#define MB_GW_DEFAULT_CANCEL_GRACE_MS 5000
#define MB_GW_DEFAULT_INIT_TIMEOUT_MS 30000
#define MB_GW_DEFAULT_KEEPALIVE_MS 15000
#define MB_GW_DEFAULT_SESSION_IDLE_MS (60 * 60 * 1000)
#define MB_GW_DEFAULT_MAX_MESSAGE (16u << 20)
#define MB_GW_DEFAULT_MAX_SESSIONS 10000

/* Bytes read from one pipe per reactor turn, so a flooding server cannot
 * starve the others. */
#define MB_GW_READ_BUDGET (256u << 10)
/* Notifications waiting on one stream beyond this are dropped (responses are
 * never dropped; they are bounded by the calls in flight). */
#define MB_GW_STREAM_MAX_QUEUED (8u << 20)
/* GET streams one session may hold open at once. */
#define MB_GW_MAX_GET_STREAMS 4
/* Calls one session may have in flight at once. */
#define MB_GW_MAX_CALLS_PER_SESSION 1024
/* A session's client_initialized note is kept this small (session.c). */
#define MB_GW_NOTE_MAX (64u << 10)
/* Messages one POST may carry (JSON-RPC batch). */
#define MB_GW_MAX_BATCH 256
/* Kept from the end of a server's stderr, quoted when it fails. */
#define MB_GW_STDERR_TAIL 1024
/* A stderr line is logged up to this length. */
#define MB_GW_STDERR_LINE_MAX 2048
/* Server messages up to this size are fully validated with jansson; larger
 * ones (big tool results) only structurally, to keep the reactor fast. */
#define MB_GW_FULL_VALIDATE_MAX (1u << 20)
/* Restart backoff after a crash: doubles from MIN to MAX while the process
 * keeps dying within HEALTHY_MS of its start. */
#define MB_GW_BACKOFF_MIN_MS 250
#define MB_GW_BACKOFF_MAX_MS 30000
#define MB_GW_HEALTHY_MS 10000
/* How long a server removed from a sandbox (mb_gateway_remove_server) keeps
 * running, unreachable, before its stdin is closed (see gateway.c). */
#define MB_GW_RETIRE_DELAY_MS 250
/* Bytes of the over-long line kept to guess its id. */
#define MB_GW_FRAMER_EDGE 256

#define MB_GW_PROTO_LATEST "2025-11-25"

/* JSON-RPC error codes the gateway answers with. */
#define MB_GW_EPARSE (-32700)
#define MB_GW_EINVALID (-32600)
#define MB_GW_ENOMETHOD (-32601)
#define MB_GW_EPARAMS (-32602)
#define MB_GW_EINTERNAL (-32603)
#define MB_GW_ESERVER (-32000)  /* the server is unavailable, died, refused */
#define MB_GW_ETIMEOUT (-32001) /* as the SDKs' RequestTimeout */

/* ----------------------------------------------------------------- lists */

/* Intrusive circular doubly-linked list with a sentinel head. A node that is
 * not on a list points to itself, so unlinking twice is harmless. */
typedef struct mb_gw_link {
    struct mb_gw_link *prev, *next;
} mb_gw_link;

#define MB_GW_CONTAINER(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

static inline void mb_gw__list_init(mb_gw_link *h) { h->prev = h->next = h; }
static inline int mb_gw__list_empty(const mb_gw_link *h) { return h->next == h; }
static inline void mb_gw__list_push(mb_gw_link *h, mb_gw_link *n)
{
    n->prev = h->prev;
    n->next = h;
    h->prev->next = n;
    h->prev = n;
}
static inline void mb_gw__list_del(mb_gw_link *n)
{
    n->prev->next = n->next;
    n->next->prev = n->prev;
    n->prev = n->next = n;
}

/* ------------------------------------------------------ table.c: hashing */

/* A chained hash table of intrusive nodes keyed by 64-bit integers. Several
 * nodes may share a key (callers compare their own payload); lookups are
 * O(1) on average; the table doubles when it holds more nodes than slots.
 * Not thread-safe: its owner's lock guards it. */
typedef struct mb_gw_hnode {
    struct mb_gw_hnode *next;
    uint64_t key;
} mb_gw_hnode;

typedef struct mb_gw_table {
    mb_gw_hnode **slots;
    size_t nslots; /* a power of two, or 0 before the first insert */
    size_t count;
} mb_gw_table;

void mb_gw__table_init(mb_gw_table *t);
/* Frees the slot array; the nodes belong to the caller. */
void mb_gw__table_dispose(mb_gw_table *t);
void mb_gw__table_insert(mb_gw_table *t, mb_gw_hnode *n, uint64_t key);
/* Removes n (which must be in t). */
void mb_gw__table_remove(mb_gw_table *t, mb_gw_hnode *n);
/* First node with `key`, then the next one with the same key, or NULL. */
mb_gw_hnode *mb_gw__table_find(const mb_gw_table *t, uint64_t key);
mb_gw_hnode *mb_gw__table_next(const mb_gw_hnode *n);
/* Iteration: for (i = 0; (n = mb_gw__table_at(t, &i)); ) visits every node
 * once; the table must not change meanwhile. */
mb_gw_hnode *mb_gw__table_at(const mb_gw_table *t, size_t *cursor);

/* --------------------------------------------- framing.c: stdout framing */

/* Splits a byte stream into newline-terminated lines ("\r\n" too) of at most
 * `max` bytes. A longer line is not kept: its first and last
 * MB_GW_FRAMER_EDGE bytes are, and are handed to `oversize` when it ends, so
 * that the caller can still answer the request it belonged to. Blank lines
 * are skipped. */
typedef struct mb_gw_framer {
    mb_buf line;
    size_t max;
    int skipping;
    size_t skipped;
    char head[MB_GW_FRAMER_EDGE];
    size_t head_len;
    char tail[MB_GW_FRAMER_EDGE];
    size_t tail_len;
} mb_gw_framer;

typedef struct mb_gw_framer_cb {
    void (*line)(void *payload, const char *line, size_t len);
    void (*oversize)(void *payload, size_t len, const char *head, size_t head_len,
                     const char *tail, size_t tail_len);
    void *payload;
} mb_gw_framer_cb;

void mb_gw__framer_init(mb_gw_framer *f, size_t max);
void mb_gw__framer_feed(mb_gw_framer *f, const char *data, size_t n, const mb_gw_framer_cb *cb);
void mb_gw__framer_dispose(mb_gw_framer *f);

/* ------------------------------------------- jsonrpc.c: messages as text */

/* The gateway forwards messages as the bytes the peer sent, with only ids
 * and progress tokens replaced in place ("spliced"), so numbers, key order
 * and formatting survive the trip. jansson validates and reads values; the
 * scanner below only finds where a top-level member's value starts and ends
 * in text that is already known to be (or trusted as) JSON. */

typedef struct mb_gw_span {
    size_t off, len; /* len 0 = absent */
} mb_gw_span;

/* Finds the values of top-level members `keys[0..nkeys)` of the JSON object
 * text s[0..n). spans[i] is the last occurrence of keys[i] (jansson keeps the
 * last duplicate too). Keys are compared as raw bytes (an escaped key does
 * not match). Returns the number of members of the object, or -1 if s is not
 * an object or is structurally broken (unbalanced, unterminated string,
 * trailing garbage). */
int mb_gw__scan(const char *s, size_t n, const char *const *keys, size_t nkeys, mb_gw_span *spans);

/* A copy of s[0..n) with s[at.off .. at.off+at.len) replaced by `with`;
 * caller frees. */
char *mb_gw__splice(const char *s, size_t n, mb_gw_span at, const char *with, size_t with_len,
                   size_t *out_len);

/* Spans of the elements of the JSON array text s[0..n) (at most max).
 * Returns their number, or -1 if s is not an array or has more than max. */
int mb_gw__array_items(const char *s, size_t n, mb_gw_span *items, size_t max);
/* The members of the object text s[0..n): keys[i] the text between the
 * quotes of the i-th key (escapes as sent), vals[i] its value. Returns the
 * count, or -1 when s is not an object or has more than max members. */
int mb_gw__object_members(const char *s, size_t n, mb_gw_span *keys, mb_gw_span *vals, size_t max);

/* The text of top-level member `key` of raw[0..raw_len) exactly as the
 * client wrote it (ids come back byte for byte), or v printed by jansson when
 * there is no raw text. Caller frees. */
char *mb_gw__member_text(const char *raw, size_t raw_len, const char *key, const json_t *v);

/* text (a JSON object with an "id" member, freed) with its id replaced by
 * id_text; NULL id_text leaves it unchanged. */
char *mb_gw__with_id(char *text, const char *id_text);

/* Parses the JSON value at s[sp] (jansson, any type). NULL if it is not. */
json_t *mb_gw__span_json(const char *s, mb_gw_span sp);

/* Canonical text of a JSON-RPC id or token (compact jansson dump); caller
 * frees. */
char *mb_gw__json_text(const json_t *v);

/* Guesses the id of an over-long response from its first and last bytes:
 * '{"jsonrpc":"2.0","id":N' at the start or '"id":N}' at the end. Returns 1
 * and *id on success. */
int mb_gw__guess_id(const char *head, size_t head_len, const char *tail, size_t tail_len,
                   int64_t *id);

/* {"jsonrpc":"2.0","id":<id_text or null>,"error":{"code":code,"message":...}}
 * as a malloc'd NUL-terminated string. */
char *mb_gw__error_text(const char *id_text, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Protocol versions the gateway speaks, oldest first, NULL-terminated. */
#define MB_GW_NVERSIONS 4
extern const char *const mb_gw_versions[MB_GW_NVERSIONS + 1];
int mb_gw__version_supported(const char *v);
/* The version a session gets when its client asks for `requested`: that one
 * if supported, else the latest. */
const char *mb_gw__version_negotiate(const char *requested);
/* JSON-RPC batches are allowed up to 2025-03-26. */
int mb_gw__version_allows_batch(const char *v);
/* POST SSE streams start with a priming event from 2025-11-25. */
int mb_gw__version_primes(const char *v);

/* SHA-256 (hex) of the canonical [{"name","inputSchema"}] sorted by name of a
 * tools/list `tools` array, and the number of tools. */
int mb_gw__tools_hash(const json_t *tools, char out_hex[65], size_t *count);

/* ------------------------------------------------------ core structures */

typedef struct mb_gw_backend mb_gw_backend;
typedef struct mb_gw_session mb_gw_session;
typedef struct mb_gw_stream mb_gw_stream;
typedef struct mb_gw_pending mb_gw_pending;
typedef struct mb_gw_reactor mb_gw_reactor;
typedef struct mb_gw_pipe mb_gw_pipe;

/* One serialized message waiting on a stream. */
typedef struct mb_gw_msg {
    struct mb_gw_msg *next;
    int is_response;
    size_t len;
    char data[];
} mb_gw_msg;

enum { MB_GW_STREAM_POST = 1, MB_GW_STREAM_GET = 2 };

struct mb_gw_stream {
    /* fixed at creation */
    int kind;
    mb_gw_backend *b;  /* reference */
    mb_gw_session *s;  /* reference */
    uint64_t no;       /* in event ids: "p<no>-<seq>" / "g<no>-<seq>" */
    int accepts_sse;   /* the client's Accept allows text/event-stream */
    int prime;         /* SSE starts with a priming event */
    int batch;         /* POST body was an array: JSON reply is an array */
    /* under b->lock */
    int refs;
    pthread_cond_t cond; /* a message arrived or the stream closed */
    mb_gw_msg *head, *tail;
    size_t queued_bytes;
    int outstanding;     /* POST: calls not answered yet */
    mb_gw_link calls;    /* POST: its CALL pendings (x_link) */
    mb_gw_link s_link;   /* GET: in s->streams */
    int closed;          /* nothing more will be queued */
    int sse;             /* POST: being answered as an SSE stream */
    int abandoned;       /* the HTTP side is gone */
    unsigned dropped;    /* notifications dropped for lack of room */
    /* only the thread serving the response touches these */
    mb_buf out;
    size_t out_off;
    uint64_t seq;
    int64_t last_write_ms;
    int ended;
};

enum { MB_GW_PEND_CALL = 1, MB_GW_PEND_SREQ, MB_GW_PEND_INIT, MB_GW_PEND_TOOLS, MB_GW_PEND_PROBE };

struct mb_gw_pending {
    mb_gw_hnode node;  /* in b->pending, key = id */
    int in_table;
    mb_gw_backend *b;  /* borrowed: pendings die before their backend */
    int kind;
    int64_t id;        /* upstream id (CALL/INIT/TOOLS), downstream id (SREQ) */
    char *orig_id;     /* CALL: the client's id; SREQ: the server's (JSON text) */
    char *orig_token;  /* CALL: the client's progressToken (JSON text), or NULL */
    char method[48];
    mb_gw_session *s;  /* CALL/SREQ: borrowed; ending a session removes its pendings */
    mb_gw_stream *x;   /* CALL: the exchange awaiting it; SREQ: where it went (reference) */
    int64_t started_ms, deadline_ms;
    mb_gw_link s_link; /* CALL: s->calls; SREQ: s->sreqs */
    mb_gw_link b_link; /* CALL: b->calls (oldest first); SREQ: b->sreqs */
    mb_gw_link x_link; /* CALL: x->calls */
    /* CALL, when the gateway has an on_call observer (route.c) */
    struct mb_gw_observed {
        int on;
        char tool[132];    /* tools/call: params.name as sent (cut), else "" */
        int tool_listed;
        size_t arg_bytes;
        int64_t started_us;
        double started;
        char request_id[64];
    } obs;
};

/* How many sessions in the table belong to one sandbox or one tenant
 * (under gw->lock; freed when it drops to 0). */
typedef struct mb_gw_tally {
    mb_gw_hnode node;  /* in gw->tally_sandbox or gw->tally_tenant */
    char *name;
    size_t n;
} mb_gw_tally;

struct mb_gw_session {
    atomic_int refs;
    mb_gw_hnode node;  /* in gw->sessions, key = first 16 hex digits */
    char id[33];
    mb_gw_backend *b;  /* reference */
    char version[16];  /* negotiated protocol version */
    json_t *caps;      /* client capabilities; read-only after creation */
    char *note;        /* the notifications/mcpbox/client_initialized text with the
                        * client's initialize params; read-only after creation.
                        * It goes to the server with the session's first message
                        * that reaches the process, and again with one after
                        * another session's (mb_gw__route_send_noted_locked), so
                        * a session the gateway answers alone (initialize,
                        * tools/list of a tools_static server) never wakes it */
    atomic_llong last_used_ms;
    atomic_int active; /* open GET streams + calls in flight: not idle */
    int in_table;      /* under gw->lock */
    mb_gw_tally *t_sandbox, *t_tenant; /* counted in these while in_table
                                          (t_tenant NULL: no tenant known) */
    /* under b->lock */
    int ended;
    mb_gw_link b_link; /* in b->sessions */
    mb_gw_link streams;
    int nstreams;
    mb_gw_link calls;
    int ncalls;
    mb_gw_link sreqs;
    json_t *subs;      /* resource URIs subscribed through this session */
    int64_t stream_opened_ms;
};

/* Backend states. Values differ in several bits so a stray value shows. */
enum {
    MB_GW_STOPPED = 0x11,  /* never started, or stopped on purpose */
    MB_GW_STARTING = 0x22, /* spawning, or waiting for initialize */
    MB_GW_READY = 0x44,    /* initialized; requests flow */
    MB_GW_CRASHED = 0x88,  /* died or failed to start; restarts after backoff */
};

struct mb_gw_backend {
    atomic_int refs;
    mb_gateway *gw;
    char *sandbox_id, *server;
    mb_gw_link sb_link; /* in its sandbox's list (under gw->lock) */

    pthread_mutex_t lock;
    pthread_cond_t cond; /* state, readiness and tools changes */
    /* everything below is under lock */
    char **argv, **envp, *cwd;
    char **fwd_headers;   /* spec's forward_headers, lowercased; NULL: none */
    int removed;
    int state;
    uint64_t gen;
    int have_proc;
    mb_backend_proc proc;
    int in_fd;
    int in_watched;     /* in_fd is in the epoll set for EPOLLOUT */
    mb_buf inq;         /* bytes for stdin the pipe did not take yet */
    size_t inq_off;     /* of which the first inq_off are written */
    mb_gw_pipe *pipe;   /* of the current generation; the reactor owns it */
    mb_gw_table pending;
    int64_t next_id;
    mb_gw_link calls, sreqs, sessions;
    size_t nsessions;
    json_t *init_result;
    /* init_result as clients get it, one text per protocol version they
     * negotiate (index into mb_gw_versions; built on first use, dropped
     * with init_result): a new session's initialize costs no JSON work. */
    char *init_texts[MB_GW_NVERSIONS];
    char up_version[16];
    /* The session whose client_initialized note the process heard last
     * (valid while noted_gen == gen + 1). */
    uint64_t noted_gen;
    char noted_sid[33];
    json_t *tools_acc;  /* pages of tools/list gathered so far */
    int tools_known, tools_fetching, tools_stale;
    int tools_static;   /* spec: clients' tools/list are answered from tools_text */
    char *tools_text;   /* the result of the gateway's last tools/list as the server
                         * wrote it, when that was one page (else NULL) */
    int64_t tools_deadline_ms;
    char tools_sha[65];
    size_t tools_count;
    int want_running;   /* restart it when it dies */
    int64_t next_start_ms, spawned_ms, init_deadline_ms;
    int64_t probe_deadline_ms; /* a liveness ping is in flight (0 = none) */
    int backoff_ms;
    unsigned restarts;  /* spawns after the first */
    uint64_t crashes;   /* deaths and failed starts */
    unsigned garbage_lines;
    char last_error[768];
    char err_tail[MB_GW_STDERR_TAIL];
    size_t err_tail_len;
};

typedef struct mb_gw_sandbox {
    mb_gw_hnode node;   /* in gw->sandboxes, key = mb_hash_str(id) */
    char *id;
    mb_gw_link backends;
    char *tenant;       /* opts.tenant_of's answer once it named one (a sandbox's
                         * owner does not change), so that new sessions do not
                         * ask the daemon's store each time; NULL: not known yet */
} mb_gw_sandbox;

struct mb_gateway {
    mb_gateway_opts opts; /* defaults applied; the lists point into origins/hosts */
    char **origins, **hosts;
    pthread_rwlock_t lock;
    mb_gw_table sandboxes;
    mb_gw_table sessions;
    size_t nsessions;
    mb_gw_table tally_sandbox, tally_tenant;
    atomic_int closing;
    atomic_ullong next_stream_no;
    mb_gw_reactor *reactor;
};

/* ------------------------------------------------- reactor.c: the thread */

struct mb_gw_pipe {
    mb_gw_link link;     /* reactor's list; reactor thread only */
    mb_gw_backend *b;    /* reference */
    uint64_t gen;
    int out_fd, err_fd;
    mb_gw_framer framer;
    mb_buf errline;
    int dead;            /* freed at the end of the current batch */
    struct mb_gw_watch {
        mb_gw_pipe *p;
        int kind;
    } w_out, w_err, w_in;
};

enum { MB_GW_W_OUT = 1, MB_GW_W_ERR, MB_GW_W_IN };

int mb_gw__reactor_start(mb_gateway *gw, mb_gw_reactor **out, mb_err *err);
void mb_gw__reactor_stop(mb_gw_reactor *r);
/* Hands a freshly spawned process's pipes to the reactor (any thread). */
void mb_gw__reactor_adopt(mb_gw_reactor *r, mb_gw_pipe *p);
/* Asks the reactor to close and free the pipe of (b, gen) if it still has it. */
void mb_gw__reactor_close(mb_gw_reactor *r, mb_gw_backend *b, uint64_t gen);
/* The same delay_ms from now (at the reactor's first wake-up after that, at
 * most a second later), first calling opts.kill(handle) if kill and closing
 * in_fd (the process's stdin when it is not its stdout socket; -1 if none),
 * which the reactor then owns. */
void mb_gw__reactor_close_later(mb_gw_reactor *r, mb_gw_backend *b, uint64_t gen, int in_fd,
                                int kill, int64_t handle, int delay_ms);
/* Adds/removes b->in_fd to/from the epoll set for EPOLLOUT (under b->lock). */
void mb_gw__reactor_watch_in(mb_gw_reactor *r, mb_gw_backend *b, int on);

/* ------------------------------------------ backend.c: process lifecycle */

mb_gw_backend *mb_gw__backend_new(mb_gateway *gw, const char *sandbox_id, const char *server,
                                 const mb_backend_spec *spec);
void mb_gw__backend_ref(mb_gw_backend *b);
void mb_gw__backend_unref(mb_gw_backend *b);
void mb_gw__backend_set_spec_locked(mb_gw_backend *b, const mb_backend_spec *spec);
/* Starts the process if it is not running (respecting the crash backoff)
 * and waits until it is READY or deadline_ms (monotonic) passes. */
int mb_gw__backend_ready(mb_gw_backend *b, int64_t deadline_ms, mb_err *err);
/* Starts the process if it is not running (or schedules the restart of a
 * crashed one) without waiting. */
int mb_gw__backend_kick(mb_gw_backend *b, mb_err *err);
/* Same as mb_gw__backend_ready, and also waits for the tools/list hash. */
int mb_gw__backend_ready_tools(mb_gw_backend *b, int64_t deadline_ms, mb_err *err);
/* Stops the process (if any): in-flight calls get `why` as a JSON-RPC error.
 * The backend becomes STOPPED (removed=1 keeps it from ever starting again). */
void mb_gw__backend_stop(mb_gw_backend *b, const char *why, int remove);
/* mb_gw__backend_stop with remove, except that the process is told to stop
 * (its stdin closed, opts.kill) delay_ms later, by the reactor: the backend
 * is STOPPED and answers nothing from now on. */
void mb_gw__backend_retire(mb_gw_backend *b, const char *why, int delay_ms);
/* Queues one message (a '\n' is added) for the server's stdin. Errors when
 * the process is not READY or is not reading (queue over its limit). */
int mb_gw__backend_send_locked(mb_gw_backend *b, const char *data, size_t len, mb_err *err);
/* The reactor's EPOLLOUT on stdin. */
void mb_gw__backend_flush(mb_gw_backend *b, uint64_t gen);
/* The reactor saw the process's stdout end (or the pipe fail). */
void mb_gw__backend_died(mb_gw_backend *b, uint64_t gen, const char *why);
/* One stderr line (already bounded). */
void mb_gw__backend_stderr(mb_gw_backend *b, uint64_t gen, const char *line, size_t len);
/* Once a second from the reactor: init deadline, restarts, expired calls. */
/* After a request was cancelled: pings the server (once at a time) and
 * arms the tick to kill and restart it if the ping is not answered within
 * opts.cancel_grace_ms (a server whose only reading thread is stuck). */
void mb_gw__backend_probe_locked(mb_gw_backend *b);
/* The probe's answer arrived. */
void mb_gw__backend_probe_answered_locked(mb_gw_backend *b);
void mb_gw__backend_tick(mb_gw_backend *b, int64_t now);
/* A new upstream/downstream id (under b->lock). */
int64_t mb_gw__backend_next_id_locked(mb_gw_backend *b);
const char *mb_gw__state_name(int state);

/* --------------------------------------------- route.c: message routing */

/* A line from the server's stdout (reactor thread). */
void mb_gw__route_from_server(mb_gw_backend *b, uint64_t gen, const char *line, size_t len);
/* An over-long line was dropped: answer the call it belonged to, if known. */
void mb_gw__route_oversize(mb_gw_backend *b, uint64_t gen, size_t len, const char *head,
                          size_t head_len, const char *tail, size_t tail_len);
/* Sends a message of session s to the server (len bytes of `then`), preceded in the same write by s's
 * client_initialized note (s->note) unless the last note the running
 * process heard was s's: the server hears of every session that reaches it,
 * before its first message and again whenever another session spoke in
 * between, so a server that keeps "the current client" (desktop-commander's
 * currentClient) sees the one whose request it serves. Returns what
 * mb_gw__backend_send_locked does for the whole. */
int mb_gw__route_send_noted_locked(mb_gw_session *s, const char *then, size_t len, mb_err *err);
/* The gateway's own requests (initialize, tools/list) and their answers. */
void mb_gw__route_send_initialize_locked(mb_gw_backend *b);
/* The InitializeResult text a client negotiating `version` (one of
 * mb_gw_versions) gets: the server's, with that protocolVersion; NULL before
 * the server answered initialize. Owned by b (valid while b->lock is held). */
const char *mb_gw__init_text_locked(mb_gw_backend *b, const char *version);
/* Forgets those texts (init_result changes or goes). */
void mb_gw__init_texts_clear_locked(mb_gw_backend *b);
void mb_gw__route_fetch_tools_locked(mb_gw_backend *b, const char *cursor_text);

/* One message of a client's POST, as parsed by http.c. */
/* headers.c: forwarded request headers (mb_backend_spec.forward_headers).
 * collect: the JSON object text {"name": "value"} of those of `names` the
 * request carries, or NULL with *why (the 400's message) when one is refused
 * (given twice, over MB_GW_MAX_HEADER_VALUE, control characters, not UTF-8).
 * apply: the request text raw[0..n) (parsed: j) with
 * params._meta[MB_GW_META_HEADERS] set to headers_json and the client's own
 * value of it dropped, everything else as sent; NULL when params is not an
 * object (nothing to carry it). Callers free. */
char *mb_gw__headers_collect(struct MHD_Connection *conn, char *const *names, char **why);
char *mb_gw__headers_apply(const char *raw, size_t n, const json_t *j, const char *headers_json,
                           size_t *out_len);

typedef struct mb_gw_cmsg {
    json_t *j;         /* the parsed message (borrowed) */
    const char *raw;   /* its text (borrowed; newlines already blanked) */
    size_t raw_len;
} mb_gw_cmsg;

/* Handles one client message of exchange x (a session's POST): forwards it
 * with ids rewritten, answers it locally, or queues an error response on x.
 * Returns 0, or -1 when a response or notification was refused (the caller
 * turns a lone refused message into HTTP 400 with *errtext, caller frees). */
int mb_gw__route_from_client_locked(mb_gw_stream *x, const mb_gw_cmsg *m, char **errtext);

/* --------------------------------------- session.c: sessions and streams */

/* params: the client's initialize params (borrowed; its note is made of them). */
mb_gw_session *mb_gw__session_new(mb_gw_backend *b, const char *version, const json_t *params);
void mb_gw__session_ref(mb_gw_session *s);
void mb_gw__session_unref(mb_gw_session *s);
/* Ends a session (under b->lock; the caller already took it out of the
 * session table): closes its streams, fails its calls with `why` (cancelling
 * them upstream), answers the server's requests to it with an error. */
void mb_gw__session_end_locked(mb_gw_session *s, const char *why);
/* Session table (gw->lock taken inside). Lookup returns a reference. */
int mb_gw__sessions_insert(mb_gateway *gw, mb_gw_session *s, mb_err *err);
mb_gw_session *mb_gw__sessions_lookup(mb_gateway *gw, const char *id);
/* Takes the session out of the table and ends it. */
void mb_gw__sessions_end(mb_gateway *gw, mb_gw_session *s, const char *why);
/* Ends idle sessions (no traffic for session_idle_ms, nothing open). */
void mb_gw__sessions_sweep(mb_gateway *gw, int64_t now);

mb_gw_stream *mb_gw__stream_new(int kind, mb_gw_session *s);
void mb_gw__stream_ref_locked(mb_gw_stream *st);
/* Drops a reference (locks st->b->lock itself, so never call it locked). */
void mb_gw__stream_unref(mb_gw_stream *st);
/* Queues a message; a notification/request is dropped (and counted) when the
 * stream is closed or over MB_GW_STREAM_MAX_QUEUED. Returns 0 if queued. */
int mb_gw__stream_push_locked(mb_gw_stream *st, const char *data, size_t len, int is_response);
void mb_gw__stream_close_locked(mb_gw_stream *st);
/* Takes the queued messages (caller frees the list). */
mb_gw_msg *mb_gw__stream_take_locked(mb_gw_stream *st);
/* A session's GET stream messages for the session go to (newest), or NULL. */
mb_gw_stream *mb_gw__session_stream_locked(mb_gw_session *s);

/* Pendings (all under b->lock). */
mb_gw_pending *mb_gw__pending_new_locked(mb_gw_backend *b, int kind, const char *method);
/* Unlinks from every list and the id map, drops the stream reference, frees. */
void mb_gw__pending_free_locked(mb_gw_pending *p);
/* CALL: queues `text` (the client-facing response) on its exchange and frees
 * the pending. */
void mb_gw__pending_answer_locked(mb_gw_pending *p, const char *text, size_t len);
/* CALL: answers with a JSON-RPC error; cancel=1 also sends
 * notifications/cancelled upstream. */
void mb_gw__pending_fail_locked(mb_gw_pending *p, int code, int cancel, const char *msg);
/* Fails CALLs of b whose deadline passed (all of them if x is NULL, else only
 * x's). Returns the earliest deadline still pending (INT64_MAX if none). */
int64_t mb_gw__expire_locked(mb_gw_backend *b, mb_gw_stream *x, int64_t now);

/* ------------------------------------------------- gateway.c: utilities */

static inline int64_t mb_gw__now(void) { return mb_mono_ms(); }
/* Monotonic microseconds (call latencies). */
int64_t mb_gw__now_us(void);
/* Reports a CALL pending's answer to opts.on_call (if any and if the call
 * was observed): outcome as in mb_gateway_call, result_bytes, error. */
/* Notes what the observer will want of a CALL pending made for client
 * message m (tool name, argument bytes, start time, request id). Nothing
 * without an on_call observer. */
void mb_gw__observe_begin_locked(mb_gw_pending *p, const mb_gw_cmsg *m);
/* Whether the tools/call result object at s[r.off .. r.off+r.len) has
 * "isError": true (a big result is checked only at its first and last
 * member, where MCP SDKs write isError). */
int mb_gw__result_is_error(const char *s, mb_gw_span r);
void mb_gw__observe_locked(mb_gw_pending *p, int outcome, size_t result_bytes,
                           const char *error);
/* pthread_cond_timedwait until a monotonic deadline in ms (INT64_MAX =
 * forever). */
void mb_gw__cond_wait_until(pthread_cond_t *c, pthread_mutex_t *m, int64_t deadline_ms);
void mb_gw__cond_init(pthread_cond_t *c);
/* Finds a registered backend; returns a reference, or NULL with *sandbox_known
 * telling whether the sandbox exists at all. */
mb_gw_backend *mb_gw__lookup(mb_gateway *gw, const char *sandbox_id, const char *server,
                            int *sandbox_known, char *servers_out, size_t servers_cap);
/* The tenant of a sandbox (opts.tenant_of, asked once per sandbox: the first
 * answer that names one is kept). 0 with buf filled, -1 when none is known.
 * Takes gw->lock itself: call it without. */
int mb_gw__tenant_of(mb_gateway *gw, const char *sandbox_id, char *buf, size_t cap);

#endif /* MB_GATEWAY_INT_H */
