/*
 * log.c - one record per line on stderr, as text for people
 * ("2026-11-21T10:00:00.123Z info  message") or as a JSON object for
 * machines ({"ts","level","msg","request_id"?,"sandbox_id"?}).
 *
 * The level and the format are the only process-wide state of the utility
 * layer; they are set at start-up and read racily afterwards (atomics, so
 * that ThreadSanitizer agrees it is harmless). The request and sandbox a
 * thread works for are thread-local: the HTTP layer sets the request id when
 * a request begins, the API and the gateway add the sandbox id.
 */
#include "util.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static atomic_int log_level = MB_LOG_INFO;
static atomic_int log_format = MB_LOG_TEXT;

static _Thread_local char ctx_request[64];
static _Thread_local char ctx_sandbox[40];

void mb_log_set_level(mb_log_level level) { atomic_store(&log_level, (int)level); }
void mb_log_set_format(mb_log_format format) { atomic_store(&log_format, (int)format); }

int mb_log_parse_format(const char *name, mb_log_format *out)
{
    if (!name) return -1;
    if (!strcmp(name, "text")) *out = MB_LOG_TEXT;
    else if (!strcmp(name, "json")) *out = MB_LOG_JSON;
    else return -1;
    return 0;
}

void mb_log_init(void)
{
    const char *e = getenv("MCPBOX_LOG");
    if (e) {
        if (!strcmp(e, "debug")) mb_log_set_level(MB_LOG_DEBUG);
        else if (!strcmp(e, "info")) mb_log_set_level(MB_LOG_INFO);
        else if (!strcmp(e, "warn")) mb_log_set_level(MB_LOG_WARN);
        else if (!strcmp(e, "error")) mb_log_set_level(MB_LOG_ERROR);
    }
    mb_log_format f;
    if (mb_log_parse_format(getenv("MCPBOX_LOG_FORMAT"), &f) == 0) mb_log_set_format(f);
}

void mb_log_context_set(const char *request_id, const char *sandbox_id)
{
    mb_utf8_copy(ctx_request, sizeof ctx_request, request_id ? request_id : "",
                 request_id ? strlen(request_id) : 0);
    mb_log_context_sandbox(sandbox_id);
}

void mb_log_context_sandbox(const char *sandbox_id)
{
    mb_utf8_copy(ctx_sandbox, sizeof ctx_sandbox, sandbox_id ? sandbox_id : "",
                 sandbox_id ? strlen(sandbox_id) : 0);
}

const char *mb_log_request_id(void) { return ctx_request; }

static int isxdigit_ascii(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* JSON string body of valid UTF-8 s (quotes, backslashes, controls escaped). */
static void json_str(mb_buf *b, const char *s, size_t n)
{
    mb_buf_putc(b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            mb_buf_putc(b, '\\');
            mb_buf_putc(b, (char)c);
        } else if (c < 0x20 || c == 0x7f) {
            mb_buf_printf(b, "\\u%04x", c);
        } else {
            mb_buf_putc(b, (char)c);
        }
    }
    mb_buf_putc(b, '"');
}

/* The first UUID-shaped word of a message ("[ID/server]", "sandbox ID"), for
 * JSON records written by threads with no sandbox in their context. */
static size_t find_uuid(const char *s, size_t n)
{
    for (size_t i = 0; i + 36 <= n; i++) {
        if (i > 0 && (isxdigit_ascii(s[i - 1]) || s[i - 1] == '-')) continue;
        size_t k = 0;
        for (; k < 36; k++) {
            char c = s[i + k];
            int dash = k == 8 || k == 13 || k == 18 || k == 23;
            if (dash ? c != '-' : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) break;
        }
        if (k == 36 && (i + 36 == n || !isxdigit_ascii(s[i + 36]))) return i;
    }
    return (size_t)-1;
}

void mb_log(mb_log_level level, const char *fmt, ...)
{
    static const char *names[] = {"debug", "info", "warn", "error"};
    if ((int)level < atomic_load_explicit(&log_level, memory_order_relaxed)) return;
    char line[2048];
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    char stamp[96];
    snprintf(stamp, sizeof stamp, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
    va_list ap;
    va_start(ap, fmt);
    /* Records are valid UTF-8 whatever a client sent (the text may hold
     * ids, paths and headers), cut on a character boundary. */
    size_t m = mb_text_vformat(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (atomic_load_explicit(&log_format, memory_order_relaxed) == MB_LOG_JSON) {
        mb_buf b = {0};
        mb_buf_reserve(&b, m + 160);
        mb_buf_printf(&b, "{\"ts\":\"%s\",\"level\":\"%s\",\"msg\":", stamp, names[level]);
        json_str(&b, line, m);
        if (ctx_request[0]) {
            mb_buf_puts(&b, ",\"request_id\":");
            json_str(&b, ctx_request, strlen(ctx_request));
        }
        size_t u;
        if (ctx_sandbox[0]) {
            mb_buf_puts(&b, ",\"sandbox_id\":");
            json_str(&b, ctx_sandbox, strlen(ctx_sandbox));
        } else if ((u = find_uuid(line, m)) != (size_t)-1) {
            mb_buf_puts(&b, ",\"sandbox_id\":");
            json_str(&b, line + u, 36);
        }
        mb_buf_puts(&b, "}\n");
        fwrite(b.data, 1, b.len, stderr);
        mb_buf_free(&b);
        return;
    }
    char out[2200];
    int n = snprintf(out, sizeof out, "%s %-5s ", stamp, names[level]);
    for (size_t i = 0; i < m; i++) /* one record, one line */
        if ((unsigned char)line[i] < 0x20 && line[i] != '\t') line[i] = ' ';
    memcpy(out + n, line, m);
    out[(size_t)n + m] = '\n';
    fwrite(out, 1, (size_t)n + m + 1, stderr);
}
