/*
 * mcp.h - the face of the MCP server framework that every native server
 * (`mcpbox mcp NAME`) is built on.
 *
 * What it does:
 *   - JSON-RPC 2.0 over newline-delimited stdio (one message per line, batches
 *     tolerated), with the MCP lifecycle: initialize (protocol negotiation),
 *     notifications/initialized, ping, tools/list, tools/call,
 *     resources/list and prompts/list (empty, when the capabilities name them),
 *     notifications/cancelled, logging/setLevel. Unknown notifications are
 *     ignored; unknown methods get -32601; bad JSON gets -32700; a line over
 *     the size cap gets -32600 and is discarded.
 *   - A tool registry: each server declares its tools as static tables
 *     (name, description, JSON Schema text, annotations, handler).
 *   - Failures surface the way the mirrored upstream's SDK surfaces them (the
 *     server's "flavor"): the handler says `return mb_mcp_fail(res, "...")`,
 *     just as the upstream code would `throw new Error("...")` or `raise`.
 *   - Helpers the mirrored servers keep needing: path confinement under
 *     allowed roots (server-filesystem's validatePath, with its error texts),
 *     Node.js error texts ("ENOENT: no such file or directory, open '/x'"),
 *     byte-exact JSON.stringify / Python json.dumps, UTF-8 repair, minimatch
 *     globs, and a few other JavaScript formatting rules.
 *
 * What it does not do: HTTP (the gateway speaks Streamable HTTP and talks to
 * servers over this stdio protocol), sandboxing, or server->client requests
 * (sampling, roots/list; MCP Roots are not supported).
 *
 * Threading: mb_mcp_serve() reads stdin and answers every request on the
 * calling thread. tools/call runs there too, one at a time, unless the server
 * sets mb_mcp_info.concurrent_calls > 1: then each call is queued and run on
 * one of up to that many worker threads (workers.c, started on demand and
 * joined before mb_mcp_serve returns), so the tool handlers and the server's
 * data must be safe to use from several threads at once. Responses from any
 * thread are written whole under one output lock (transport.c); the queue is
 * guarded by the workers' own lock, a job's cancellation flag is atomic.
 * Everything else (initialize, tools/list, on_initialize) runs on the reading
 * thread. A long-running handler stays responsive to cancellation and pings
 * by calling mb_mcp_call_cancelled() now and then (or polling
 * mb_mcp_call_input_fd() along with its own descriptors).
 *
 * Ownership: pointers passed in as `const` are borrowed; tool tables and the
 * mb_mcp_info must outlive the server (declare them `static const`). Strings
 * returned as `char *` belong to the caller (free()).
 *
 * See docs/servers/FRAMEWORK.md (and /work/notes/mcp-framework-ready.md) for a
 * walk-through with a complete example server.
 */
#ifndef MB_MCP_H
#define MB_MCP_H

#include <jansson.h>
#include <stdarg.h>
#include <stddef.h>

#include "util/util.h"

/* ----------------------------------------------------------- constants */

/* Protocol revisions we speak; initialize echoes the client's if listed,
 * else answers the latest. */
#define MB_MCP_PROTOCOL_LATEST "2025-11-25"
extern const char *const mb_mcp_protocol_versions[]; /* NULL-terminated */

/* JSON-RPC error codes. */
#define MB_RPC_PARSE_ERROR (-32700)
#define MB_RPC_INVALID_REQUEST (-32600)
#define MB_RPC_METHOD_NOT_FOUND (-32601)
#define MB_RPC_INVALID_PARAMS (-32602)
#define MB_RPC_INTERNAL_ERROR (-32603)

/* Default cap on one incoming message (a line), in bytes. */
#define MB_MCP_MAX_MESSAGE_DEFAULT (32u * 1024 * 1024)

/* Returned by mb_mcp_fail()/mb_mcp_rpc_error() so handlers can
 * `return mb_mcp_fail(res, ...)`. Positive: it is not an mb_code. */
#define MB_MCP_FAILED 1

/* ------------------------------------------------------------- flavors */

/*
 * Which SDK the mirrored upstream server is written with. It decides how
 * failures reach the client, so that error texts match upstream's:
 *
 * MB_MCP_TS_MCPSERVER  TypeScript SDK >= 1.2x, McpServer.registerTool (e.g.
 *     server-filesystem). Arguments are validated against the input schema
 *     with zod's messages and schema defaults are filled in before the
 *     handler runs. Unknown tool / invalid arguments / mb_mcp_fail() all
 *     become results with isError:true; the first two read
 *     "MCP error -32602: Tool X not found" and "MCP error -32602: Input
 *     validation error: Invalid arguments for tool X: ...". tools/list
 *     entries carry execution.taskSupport "forbidden".
 * MB_MCP_TS_SERVER     TypeScript SDK low-level Server.setRequestHandler (e.g.
 *     server-memory). No argument validation; `args` is NULL when the request
 *     had no "arguments". mb_mcp_fail() becomes a JSON-RPC error -32603 with
 *     the message. Unknown tools go to mb_mcp_info.unknown_tool if set, else
 *     a -32603 "Unknown tool: X".
 * MB_MCP_PY_FASTMCP    Python FastMCP. mb_mcp_fail(res, msg) becomes an
 *     isError result "Error executing tool X: msg"; unknown tools become an
 *     isError result "Unknown tool: X". No validation by the framework:
 *     check arguments in the handler (pydantic's texts are yours to mimic).
 * MB_MCP_PY_SERVER     Python low-level mcp.server.Server (e.g.
 *     mcp-server-git). mb_mcp_fail(res, msg) becomes an isError result with
 *     exactly msg (str(exception)); unknown tools go to
 *     mb_mcp_info.unknown_tool if set, else isError "Unknown tool: X".
 *     No validation by the framework.
 */
typedef enum mb_mcp_flavor {
    MB_MCP_TS_MCPSERVER = 0,
    MB_MCP_TS_SERVER = 1,
    MB_MCP_PY_FASTMCP = 2,
    MB_MCP_PY_SERVER = 3,
} mb_mcp_flavor;

/* ------------------------------------------------------------- objects */

typedef struct mb_mcp_server mb_mcp_server; /* one stdio server */
typedef struct mb_mcp_call mb_mcp_call;     /* one tools/call in progress */
typedef struct mb_mcp_result mb_mcp_result; /* what the handler answers */

/*
 * A tool handler. `args` is the "arguments" object (borrowed; with the
 * schema's defaults filled in for MB_MCP_TS_MCPSERVER; may be NULL for
 * MB_MCP_TS_SERVER when absent). Fill `res` with content and return 0, or
 * `return mb_mcp_fail(res, ...)`. A negative mb_code return without
 * mb_mcp_fail() is reported as a failure with a generic text.
 */
typedef int (*mb_mcp_tool_fn)(mb_mcp_call *call, json_t *args, mb_mcp_result *res);

/*
 * One tool. The JSON fields are JSON text, parsed once when the tool is added
 * and emitted in tools/list with their key order kept - paste upstream's
 * tools/list output. Entries of a table end with a zeroed entry.
 */
typedef struct mb_mcp_tool {
    const char *name;
    const char *title;         /* optional */
    const char *description;
    const char *input_schema;  /* JSON object text; required */
    const char *output_schema; /* optional JSON object text */
    const char *annotations;   /* optional JSON object text */
    mb_mcp_tool_fn fn;
    const char *meta;          /* optional JSON object text, listed as "_meta" (last) */
} mb_mcp_tool;

/* What initialize reports, and how the server behaves. */
typedef struct mb_mcp_info {
    const char *name;    /* serverInfo.name, as the upstream reports it */
    const char *version; /* serverInfo.version, as the upstream reports it */
    const char *instructions; /* optional */
    mb_mcp_flavor flavor;
    /* Optional JSON object text for initialize's "capabilities"; default
     * {"tools":{"listChanged":true},"logging":{}}. */
    const char *capabilities;
    /* Optional: answers tools/call for names not in the registry (TS_SERVER
     * and PY_SERVER flavors), with mb_mcp_call_tool() telling the name. */
    mb_mcp_tool_fn unknown_tool;
    /* Optional (MB_MCP_TS_MCPSERVER): replaces mb_mcp_validate_zod for servers
     * whose upstream bundles another validator (code-runner ships zod 3, whose
     * texts differ). Same contract as mb_mcp_validate_zod. */
    int (*validate)(const json_t *schema, json_t *args, char **msg);
    /* 0 or 1: tools/call runs on the thread that reads stdin, one at a time.
     * N > 1: up to N calls run at once on worker threads, so a long call
     * does not hold up the others; the tool handlers and the server's data
     * must then be safe to use from several threads. */
    int concurrent_calls;
    /* Optional: the newest protocol version the mirrored SDK knows (e.g.
     * "2024-11-05" for TypeScript SDK 1.0.1). initialize answers a newer
     * request with it, as that SDK would; NULL: MB_MCP_PROTOCOL_LATEST. */
    const char *max_protocol;
    /* Optional: told the params of every initialize request, and of the
     * gateway's notifications/mcpbox/client_initialized (a client session
     * opened through mcpbox's gateway), e.g. to keep the client's clientInfo
     * as desktop-commander reports it. Runs on the reading thread; the
     * server's data is mb_mcp_server_data(srv). */
    void (*on_initialize)(mb_mcp_server *srv, const json_t *params);
    /* Optional: runs before every tool handler (after the framework's own
     * validation), e.g. to refuse requests whose forwarded headers
     * (mb_mcp_call_header) are unusable; non-zero: `res` holds the answer
     * (mb_mcp_fail / mb_mcp_rpc_error) and the handler does not run. */
    int (*before_call)(mb_mcp_call *call, mb_mcp_result *res);
} mb_mcp_info;

/* Creates a server. `info` is borrowed for the server's lifetime. */
int mb_mcp_server_new(const mb_mcp_info *info, mb_mcp_server **out, mb_err *err);
/* Frees the server, its registry and (through free_fn) its data. NULL ok. */
void mb_mcp_server_free(mb_mcp_server *srv);

/* Attaches the server's state; free_fn (may be NULL) runs at server free. */
void mb_mcp_server_set_data(mb_mcp_server *srv, void *data, void (*free_fn)(void *));
void *mb_mcp_server_data(const mb_mcp_server *srv);

/* The usual tail of a server's create function: a server for `info` holding
 * `data` (freed by free_fn with the server) with the zero-terminated `tools`
 * registered. On failure nothing is left: data is freed too. */
int mb_mcp_server_new_with_tools(const mb_mcp_info *info, const mb_mcp_tool *tools, void *data,
                                 void (*free_fn)(void *), mb_mcp_server **out, mb_err *err);

/* Registers one tool / a zero-terminated table of tools. The tool structs
 * are borrowed (keep them static). Fails on malformed schema text or a
 * duplicate name - programming errors that the server's unit test catches. */
int mb_mcp_add_tool(mb_mcp_server *srv, const mb_mcp_tool *tool, mb_err *err);
int mb_mcp_add_tools(mb_mcp_server *srv, const mb_mcp_tool *tools, mb_err *err);
/* The registered tool called `name`, or NULL. */
const mb_mcp_tool *mb_mcp_find_tool(const mb_mcp_server *srv, const char *name);

/* Caps one incoming message (default MB_MCP_MAX_MESSAGE_DEFAULT). */
void mb_mcp_set_max_message(mb_mcp_server *srv, size_t bytes);

/*
 * Serves newline-delimited JSON-RPC from in_fd to out_fd until in_fd reaches
 * EOF (returns 0) or out_fd breaks (returns MB_EIO). Ignore SIGPIPE first.
 */
int mb_mcp_serve(mb_mcp_server *srv, int in_fd, int out_fd, mb_err *err);

/*
 * Handles one incoming line (without its newline) and appends every message
 * it produces (responses, notifications), each ending in '\n', to `out`.
 * For tests and for embedding.
 */
void mb_mcp_handle_line(mb_mcp_server *srv, const char *line, size_t len, mb_buf *out);

/* --------------------------------------------------------- inside a call */

void *mb_mcp_call_data(const mb_mcp_call *call);        /* the server's data */
mb_mcp_server *mb_mcp_call_server(const mb_mcp_call *call);
const char *mb_mcp_call_tool(const mb_mcp_call *call);  /* the tool name */
/* The client's protocol version from initialize ("" before). */
const char *mb_mcp_call_protocol(const mb_mcp_call *call);
/* The request header `name` (lowercase) of this call's HTTP request, as
 * mcpbox's gateway forwards the headers a server is declared to read
 * (docs/GATEWAY.md#forwarded-headers: params._meta[MB_MCP_META_HEADERS]);
 * NULL when the request did not carry it. *forwarded (may be NULL) is 1 when
 * the request came through a gateway that forwards headers to this server. */
#define MB_MCP_META_HEADERS "mcpbox/headers" /* = MB_GW_META_HEADERS */
const char *mb_mcp_call_header(const mb_mcp_call *call, const char *name, int *forwarded);

/*
 * True once the client cancelled this request (notifications/cancelled) or
 * closed its input. Reads whatever input is pending without blocking: pings
 * are answered at once, other messages wait until the call ends. The answer
 * of a cancelled call is dropped, as the spec asks.
 */
int mb_mcp_call_cancelled(mb_mcp_call *call);
/* The descriptor incoming messages arrive on (-1 when there is none): poll
 * it along with your own and call mb_mcp_call_cancelled() when readable. */
int mb_mcp_call_input_fd(const mb_mcp_call *call);

/* notifications/progress, if the request carried a progressToken.
 * total < 0 and message NULL are left out. */
void mb_mcp_progress(mb_mcp_call *call, double progress, double total, const char *message);

typedef enum mb_mcp_level {
    MB_MCP_DEBUG, MB_MCP_INFO, MB_MCP_NOTICE, MB_MCP_WARNING,
    MB_MCP_ERROR, MB_MCP_CRITICAL, MB_MCP_ALERT, MB_MCP_EMERGENCY,
} mb_mcp_level;
/* notifications/message (string data), if at or above the level the client
 * set with logging/setLevel (all levels before it sets one). */
void mb_mcp_log(mb_mcp_call *call, mb_mcp_level level, const char *logger, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ----------------------------------------------------------- results */

/* Appends a text block. Invalid UTF-8 is replaced by U+FFFD as Node does. */
void mb_mcp_text(mb_mcp_result *res, const char *text);
void mb_mcp_text_n(mb_mcp_result *res, const char *text, size_t len);
void mb_mcp_textf(mb_mcp_result *res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends {type:"image"|"audio", data, mimeType}; data is base64 text. */
void mb_mcp_image(mb_mcp_result *res, const char *base64, const char *mime);
void mb_mcp_audio(mb_mcp_result *res, const char *base64, const char *mime);
/* Appends any content block (steals the reference). */
void mb_mcp_content(mb_mcp_result *res, json_t *block);
/* Sets structuredContent (steals the reference; replaces an earlier one). */
void mb_mcp_structured(mb_mcp_result *res, json_t *obj);
/* Marks a normal (not thrown) result as isError:true, for upstream tools that
 * return an error result themselves. */
void mb_mcp_set_is_error(mb_mcp_result *res, int is_error);
/*
 * "Throw": discards content added so far and ends the call as a failure with
 * this message, surfaced as the server's flavor dictates. Returns
 * MB_MCP_FAILED.
 */
int mb_mcp_fail(mb_mcp_result *res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Like mb_mcp_fail with a message that is not a format (paths with '%'). */
int mb_mcp_fail_str(mb_mcp_result *res, const char *msg);
/* Ends the call with a JSON-RPC error {code, message}, whatever the flavor. */
int mb_mcp_rpc_error(mb_mcp_result *res, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* --------------------------------------------------- argument helpers */

/* args[key] as a string / number / bool, or `def` when absent or of another
 * type (for MB_MCP_TS_MCPSERVER the types were already checked). */
const char *mb_mcp_arg_str(const json_t *args, const char *key, const char *def);
double mb_mcp_arg_num(const json_t *args, const char *key, double def);
int mb_mcp_arg_bool(const json_t *args, const char *key, int def);

/* The type name zod reports for a JSON value (getParsedType; zod 3 and 4
 * agree for JSON): "undefined" for NULL, "null", "string", "number",
 * "boolean", "array", "object". */
const char *mb_mcp_zod_type(const json_t *v);

/*
 * Validates `args` against a JSON Schema (the subset the SDKs emit: type,
 * properties, required, items, enum, const, min/max, anyOf, default) the way
 * zod 4 reports it, and fills in defaults. Returns 0, or MB_EINVAL with
 * *msg (caller frees) set to the SDK's joined issue list, e.g.
 * "Invalid input: expected string, received undefined at path".
 */
int mb_mcp_validate_zod(const json_t *schema, json_t *args, char **msg);

/* --------------------------------------------------- path confinement */

/*
 * Allowed roots, resolved the way server-filesystem does at start-up: each
 * directory has `~` expanded, is made absolute and normalized, and its
 * realpath is kept too when it differs; directories that do not exist or are
 * not directories are dropped with a warning on stderr.
 */
typedef struct mb_mcp_roots mb_mcp_roots;

/* Fails (MB_EINVAL) when directories were given and none is accessible:
 * "None of the specified directories are accessible". n may be 0. */
int mb_mcp_roots_new(char *const *dirs, size_t n, mb_mcp_roots **out, mb_err *err);
void mb_mcp_roots_free(mb_mcp_roots *roots);
size_t mb_mcp_roots_count(const mb_mcp_roots *roots);
const char *mb_mcp_roots_get(const mb_mcp_roots *roots, size_t i);
/* The roots joined by `sep` (caller frees). */
char *mb_mcp_roots_join(const mb_mcp_roots *roots, const char *sep);
/* True if the absolute path `abs` is a root or lies beneath one. */
int mb_mcp_roots_contains(const mb_mcp_roots *roots, const char *abs);

/*
 * Resolves a user path the way server-filesystem's validatePath does:
 * `~` expanded; relative paths tried against each root; normalized; refused
 * if outside the roots; then the realpath of the target (or, for a target
 * that does not exist, of its parent) must stay inside too - a symlink is
 * never followed out. On success *out (caller frees) is the real path (or
 * the normalized path of a new file). On refusal returns MB_EDENIED (or
 * MB_ENOTFOUND/MB_EIO) with *why (caller frees) set to upstream's text:
 *   "Access denied - path outside allowed directories: P not in R1, R2"
 *   "Access denied - symlink target outside allowed directories: P not in R"
 *   "Parent directory does not exist: P"
 *   or a Node error text such as "ENOTDIR: not a directory, realpath 'P'".
 */
int mb_mcp_resolve(const mb_mcp_roots *roots, const char *requested, char **out, char **why);

/* Node's path.resolve(base, p) on POSIX: absolute, normalized, no trailing
 * slash. base NULL means the current directory. Caller frees. */
char *mb_path_resolve(const char *base, const char *p);
/* `~` and `~/x` expanded with $HOME (else the passwd entry). Caller frees. */
char *mb_path_expand_home(const char *p);

/* -------------------------------------------------- upstream error texts */

/* libuv/Node names and texts for an errno: "ENOENT", "no such file or
 * directory". Unknown values give "UNKNOWN", "unknown error". */
const char *mb_node_errname(int errnum);
const char *mb_node_errdesc(int errnum);
/* A Node fs error message: "ENOENT: no such file or directory, open '/x'",
 * with " -> 'dest'" when dest is given; path NULL leaves the quote out
 * ("EISDIR: illegal operation on a directory, read"). Caller frees. */
char *mb_node_fs_error(int errnum, const char *syscall, const char *path, const char *dest);
/* Python's OSError text: "[Errno 2] No such file or directory: 'x'" (path
 * NULL leaves ": 'x'" out). Caller frees. */
char *mb_py_os_error(int errnum, const char *path);

/* --------------------------------------------- byte-exact JSON output */

/* JSON.stringify(v, null, indent) (indent 0 = compact), including number
 * formatting (shortest round-trip, 1e+21). Caller frees. */
char *mb_js_stringify(const json_t *v, int indent);
/* The same, appended to b. */
void mb_js_stringify_to(mb_buf *b, const json_t *v, int indent);
/* Python json.dumps(v, indent=indent or None, ensure_ascii=...): ", " and
 * ": " separators when indent < 0 (None), "," + newline otherwise; floats as
 * repr(). Caller frees. */
char *mb_py_json_dumps(const json_t *v, int indent, int ensure_ascii);
/* JavaScript's Number#toString and Number#toFixed(digits). Caller frees. */
char *mb_js_number(double d);
char *mb_js_to_fixed(double d, int digits);
/* Date#toString in the local time zone:
 * "Tue Nov 21 2025 05:26:00 GMT+0000 (Coordinated Universal Time)". */
char *mb_js_date_string(double epoch_seconds);

/* ------------------------------------------------------ text helpers */

/* A copy of n bytes plus a NUL, embedded NULs kept (mb_strndup stops at
 * the first NUL). Caller frees. */
char *mb_memdup0(const void *p, size_t n);
/* UTF-8 decoding, validation and repair (Node's TextDecoder rules) are in
 * util.h: mb_utf8_repair, mb_utf8_valid, mb_utf8_next, mb_utf8_put. */
/* Length in UTF-16 code units (JavaScript's String#length). */
size_t mb_utf16_len(const char *s, size_t len);
/* JavaScript's \s / String#trim whitespace set. */
int mb_js_is_space(unsigned cp);
/* Byte length of the JS-whitespace prefix / suffix of s[0..len). */
size_t mb_js_space_prefix(const char *s, size_t len);
size_t mb_js_space_suffix(const char *s, size_t len);
/* String#toLowerCase for the scripts we meet (Latin, Greek, Cyrillic...).
 * Caller frees. */
char *mb_js_lower(const char *s, size_t len, size_t *out_len);
/* String#localeCompare under ICU's root collation (what Node reports as
 * locale "und"): exact for ASCII, close for accented Latin, code point order
 * beyond. Returns <0, 0, >0. */
int mb_js_locale_compare(const char *a, const char *b);

/* ---------------------------------------------------------------- globs */

#define MB_GLOB_DOT 1 /* minimatch {dot:true}: wildcards match leading dots */
/* minimatch(path, pattern, {dot}) for '/'-separated paths: * ? [...] with
 * POSIX classes, ** segments, {a,b} and {1..3} braces, extglobs
 * @(...) !(...) ?(...) *(...) +(...), backslash escapes, leading ! negation
 * and # comments. */
int mb_minimatch(const char *path, const char *pattern, int flags);

#endif /* MB_MCP_H */
