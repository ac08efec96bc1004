/*
 * util.h - the face of the utility layer: errors, logging, growable buffers,
 * filesystem helpers, randomness and time formatting.
 *
 * Conventions used across mcpbox (see docs/ARCHITECTURE.md):
 *   - A function that can fail returns 0 on success or a negative mb_code, and
 *     fills an optional `mb_err *err` with a message a person can act on.
 *   - Nothing here keeps hidden global state except the log level, which is
 *     set once at start-up by mb_log_init().
 */
#ifndef MB_UTIL_H
#define MB_UTIL_H

#include <stdarg.h>
#include <pthread.h>
#include <spawn.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ---------------------------------------------------------------- asserts */

/* Internal contracts: checked when built with -DMB_ASSERTS (the test, TSan
 * and fuzz builds), compiled out of release builds. Never for conditions a
 * client or an agent can cause: those are errors, handled. */
void mb__assert_fail(const char *expr, const char *file, int line, const char *func)
    __attribute__((noreturn));
#ifdef MB_ASSERTS
#define mb_assert(cond) ((cond) ? (void)0 : mb__assert_fail(#cond, __FILE__, __LINE__, __func__))
#else
#define mb_assert(cond) ((void)0)
#endif
/* Lock contracts of *_locked functions: the calling thread holds m / holds
 * l for writing (glibc records the owner). */
int mb_mutex_held(const pthread_mutex_t *m);
int mb_rwlock_wrheld(const pthread_rwlock_t *l);
#define mb_assert_held(m) mb_assert(mb_mutex_held(m))
#define mb_assert_wrheld(l) mb_assert(mb_rwlock_wrheld(l))

/* ---------------------------------------------------------------- errors */

typedef enum mb_code {
    MB_OK = 0,
    MB_EINVAL = -1,     /* the caller's input is wrong (HTTP 400/422) */
    MB_ENOTFOUND = -2,  /* no such thing (404) */
    MB_ECONFLICT = -3,  /* wrong state for this operation (409) */
    MB_ETOOBIG = -4,    /* over a configured limit (413) */
    MB_EDENIED = -5,    /* not allowed (403) */
    MB_EEXPIRED = -6,   /* a signed URL or deadline passed (403) */
    MB_EIO = -7,        /* the system failed us (500) */
    MB_ENOMEM = -8,     /* out of memory (500) */
    MB_EBUSY = -9,      /* try again later (429/503) */
    MB_ETIMEOUT = -10,  /* took too long (504) */
    MB_EUNAUTH = -11,   /* no credentials (401) */
    MB_ENOSPACE = -12,  /* workspace quota exhausted (507) */
    MB_ELIMIT = -13,    /* over a per-key quota; retry later (429) */
} mb_code;

#define MB_ERR_MSG_MAX 512

typedef struct mb_err {
    int code;                 /* an mb_code */
    char msg[MB_ERR_MSG_MAX]; /* human-readable, no trailing newline */
} mb_err;

/* Records `code` and a printf-style message in `err` (which may be NULL) and
 * returns `code`, so that `return mb_err_set(err, MB_EINVAL, "...")` reads well.
 * The message is always valid UTF-8 (see mb_text_vformat), so it can go into
 * JSON or a log as it is. */
int mb_err_set(mb_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Like mb_err_set, appending ": strerror(errno_value)". */
int mb_err_sys(mb_err *err, int errno_value, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Wraps the message already in `err` in a new one: "NEW: OLD". The old
 * message is read before anything is written, so it is safe to pass; the
 * code is kept unless `code` is non-zero. Returns err's code. Use it instead
 * of formatting err->msg into itself. */
int mb_err_wrap(mb_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void mb_err_clear(mb_err *err);
/* Short name of a code ("invalid", "not found", ...). */
const char *mb_code_name(int code);

/* --------------------------------------------------------------- logging */

typedef enum mb_log_level {
    MB_LOG_DEBUG = 0,
    MB_LOG_INFO = 1,
    MB_LOG_WARN = 2,
    MB_LOG_ERROR = 3,
} mb_log_level;

/* Reads MCPBOX_LOG (debug|info|warn|error) once; default info. */
void mb_log_init(void);
void mb_log_set_level(mb_log_level level);
void mb_log(mb_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Record format (process-wide, like the level): MB_LOG_TEXT is the line
 * above; MB_LOG_JSON is one JSON object per line, {"ts","level","msg"} plus
 * "request_id" and "sandbox_id" when known (docs/OBSERVABILITY.md). The
 * format is also read from MCPBOX_LOG_FORMAT (text|json) by mb_log_init. */
typedef enum mb_log_format { MB_LOG_TEXT = 0, MB_LOG_JSON = 1 } mb_log_format;
void mb_log_set_format(mb_log_format format);
/* 0 and *out set for "text" or "json", else -1. */
int mb_log_parse_format(const char *name, mb_log_format *out);
/* The calling thread's context, carried by every JSON record it writes until
 * changed: the request being served (an HTTP request id) and the sandbox it
 * is about. NULL or "" clears a field. Copied (bounded, repaired). */
void mb_log_context_set(const char *request_id, const char *sandbox_id);
void mb_log_context_sandbox(const char *sandbox_id);
/* The calling thread's request id, or "" (valid until the next set). */
const char *mb_log_request_id(void);

#define mb_debug(...) mb_log(MB_LOG_DEBUG, __VA_ARGS__)
#define mb_info(...) mb_log(MB_LOG_INFO, __VA_ARGS__)
#define mb_warn(...) mb_log(MB_LOG_WARN, __VA_ARGS__)
#define mb_error(...) mb_log(MB_LOG_ERROR, __VA_ARGS__)

/* ---------------------------------------------------------------- memory */

/* Allocators that abort with a message on exhaustion: callers never see NULL. */
void *mb_malloc(size_t n);
void *mb_calloc(size_t count, size_t n);
void *mb_realloc(void *p, size_t n);
char *mb_strdup(const char *s);
char *mb_strndup(const char *s, size_t n);
char *mb_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* --------------------------------------------------------------- buffers */

/* A growable byte buffer, always NUL-terminated after `len` bytes.
 * Zero-initialise (`mb_buf b = {0};`) to start; mb_buf_free() to finish. */
typedef struct mb_buf {
    char *data;
    size_t len;
    size_t cap;
} mb_buf;

void mb_buf_reserve(mb_buf *b, size_t extra);
void mb_buf_append(mb_buf *b, const void *data, size_t n);
void mb_buf_puts(mb_buf *b, const char *s);
void mb_buf_putc(mb_buf *b, char c);
void mb_buf_printf(mb_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void mb_buf_vprintf(mb_buf *b, const char *fmt, va_list ap);
/* Drops the first n bytes, keeping the rest. */
void mb_buf_consume(mb_buf *b, size_t n);
void mb_buf_reset(mb_buf *b);
/* Hands the data to the caller (who frees it) and empties the buffer. */
char *mb_buf_steal(mb_buf *b);
void mb_buf_free(mb_buf *b);

/* ------------------------------------------------------------ filesystem */

/* mkdir -p with `mode` for every created component. */
int mb_mkdir_p(const char *path, mode_t mode, mb_err *err);
/* Removes `path` and everything beneath it without following symlinks.
 * A missing path is success. */
int mb_rm_rf(const char *path, mb_err *err);
/* Removes everything inside directory fd `dirfd`, keeping the directory. */
int mb_empty_dir_at(int dirfd, mb_err *err);
/* open(2) that never blocks on a FIFO or any other special file (a FIFO an
 * agent made in /data must not wedge the server that opens it): the open
 * itself is O_NONBLOCK, and anything but a regular file or a directory is
 * closed again and fails with ENXIO (the kernel's own answer to opening a
 * FIFO without a reader for writing). O_NONBLOCK is cleared again unless
 * flags asked for it. Returns the fd, or -1 with errno. */
int mb_open_file(const char *path, int flags, mode_t mode);
/* Reads a whole (small) regular file (mb_open_file); *out is NUL-terminated,
 * freed by the caller. */
int mb_read_file(const char *path, size_t max, char **out, size_t *len, mb_err *err);
/* Reads fd to its end into *out (malloc'ed, NUL-terminated, *len bytes),
 * leaving fd open: 0, or -1 with errno set (EFBIG past max bytes). */
int mb_read_fd(int fd, size_t max, char **out, size_t *len);
/* Writes a file atomically (temp file + fsync + rename) with `mode`. */
int mb_write_file_atomic(const char *path, const void *data, size_t len, mode_t mode,
                         mb_err *err);
/* Copies a directory tree (regular files, dirs, symlinks; modes and mtimes)
 * into dst, which is created if missing. Everything created is owned by
 * uid:gid, or by the caller with (uid_t)-1 / (gid_t)-1. */
int mb_copy_tree(const char *src, const char *dst, uid_t uid, gid_t gid, mb_err *err);

/* --------------------------------------------------------------- spawning */

/* posix_spawnattr_init plus a clean start: empty signal mask, default
 * actions for every signal, a process group of its own. */
void mb_spawnattr_init_clean(posix_spawnattr_t *attr);

/* ------------------------------------------------------------ randomness */

/* Fills `out` with cryptographically secure random bytes (getrandom). */
int mb_random_bytes(void *out, size_t n, mb_err *err);
/* Writes a random RFC 4122 version 4 UUID (36 chars + NUL). */
void mb_uuid4(char out[37]);
/* A UUIDv4 whose first byte is tag (0..255; a node's ordinal), the other
 * 114 random bits as usual; tag -1 = mb_uuid4. mb_uuid_tag reads it back
 * (-1 if id is not a UUID). */
void mb_uuid4_tagged(char out[37], int tag);
/* A RFC 9562 version 7 UUID: the Unix time in milliseconds, then 74 random
 * bits. Ids made later sort after earlier ones, so the rows they key go to
 * the end of an index instead of a random page of it. */
void mb_uuid7(char out[37]);
int mb_uuid_tag(const char *id);
/* Lower-case hex of `n` bytes into `out` (2n+1 bytes). */
void mb_hex(const void *data, size_t n, char *out);
/* true if s is a canonical lower-case UUID string. */
int mb_is_uuid(const char *s);

/* ------------------------------------------------------------------ time */

/* Wall-clock seconds since the epoch, with microseconds. */
double mb_now(void);
/* Monotonic milliseconds, for timeouts and measurements. */
int64_t mb_mono_ms(void);
/* ISO 8601 with microseconds and the local UTC offset, as Klavis prints it:
 * "2026-02-16T12:45:25.770231-08:00". `out` needs 40 bytes. */
void mb_iso8601(double t, char out[40]);

/* ---------------------------------------------------------------- strings */

int mb_str_has_prefix(const char *s, const char *prefix);
int mb_str_has_suffix(const char *s, const char *suffix);
/* Parses a size like "4G", "512M", "100k" or "1234" into bytes. */
int mb_parse_size(const char *s, uint64_t *out);

/* The one string hash (strv.c): FNV-1a, 64-bit. Stable across versions:
 * some results name things on disk (cgroup scopes). */
uint64_t mb_hash_bytes(const void *p, size_t n);
uint64_t mb_hash_str(const char *s);

/* The one string list (strv.c): NULL-terminated arrays of strings, argv and
 * envp style. _len and _free take NULL; _dup returns NULL for NULL and
 * copies every string; _push appends x (borrowed, not copied) to a list of
 * *n entries, keeping it NULL-terminated (free the array with free()). */
size_t mb_strv_len(const char *const *v);
char **mb_strv_dup(const char *const *v);
void mb_strv_free(char **v);
void mb_strv_push(const char ***v, size_t *n, const char *x);

/* ------------------------------------------------------------------ UTF-8 */

/* Every string that crosses a boundary is untrusted. These are the only
 * UTF-8 rules in mcpbox: RFC 3629 (no overlongs, surrogates, or code points
 * past U+10FFFF); repair replaces each maximal invalid subpart by U+FFFD
 * (WHATWG, as Node and Python's errors="replace" do). */

/* Length (1..4) of the valid sequence at s[0..n), or 0; then *bad (optional)
 * is the length of the maximal invalid subpart to replace. */
size_t mb_utf8_seq(const char *s, size_t n, size_t *bad);
/* Decodes one code point; returns its length or 0 for an invalid sequence. */
size_t mb_utf8_decode(const unsigned char *s, size_t n, unsigned *cp);
int mb_utf8_valid(const char *s, size_t len);
/* Length of the longest valid prefix. */
size_t mb_utf8_valid_prefix(const char *s, size_t len);
/* Repaired copy, NUL-terminated, *out_len (optional) without the NUL. */
char *mb_utf8_repair(const char *s, size_t len, size_t *out_len);
void mb_utf8_append_repaired(mb_buf *b, const char *s, size_t len);
/* Decodes one code point at s[*i] (valid UTF-8 assumed) and advances *i. */
unsigned mb_utf8_next(const char *s, size_t len, size_t *i);
/* Appends the UTF-8 encoding of code point cp. */
void mb_utf8_put(mb_buf *b, unsigned cp);
/* Number of code points (invalid bytes count one each). */
size_t mb_utf8_length(const char *s, size_t n);
/* The largest length <= max that does not split a character of s[0..len). */
size_t mb_utf8_cut(const char *s, size_t len, size_t max);
/* Copies src[0..len) repaired into dst (cap bytes incl. the NUL), cut on a
 * character boundary; returns the bytes written without the NUL. */
size_t mb_utf8_copy(char *dst, size_t cap, const char *src, size_t len);
/* vsnprintf into dst whose result is always valid UTF-8 and never ends in a
 * split character; the arguments may point into dst. Every message bound for
 * JSON or a log is made with this. */
size_t mb_text_vformat(char *dst, size_t cap, const char *fmt, va_list ap);
size_t mb_text_format(char *dst, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---------------------------------------------------------------- base64 */

/* Standard base64 (RFC 4648, '=' padded) of data[0..n), NUL-terminated; the
 * caller frees it. Servers use this rather than libcrypto's, so that their
 * executables need not load libcrypto (docs/PERFORMANCE.md, server start). */
char *mb_base64_encode(const void *data, size_t n);
/* Decodes s[0..n) (whitespace before and after is ignored, '=' padding
 * optional) into *out (NUL-terminated, the caller frees it) and its length
 * into *len. -1 (nothing allocated) if s is not base64. */
int mb_base64_decode(const char *s, size_t n, unsigned char **out, size_t *len);

#endif /* MB_UTIL_H */
