/*
 * log.c - one-line log records on stderr: "2026-11-21T10:00:00.123 level message".
 *
 * The level is the only process-wide state of the utility layer; it is set at
 * start-up and read racily afterwards, which is harmless for an int.
 */
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static mb_log_level log_level = MB_LOG_INFO;

void mb_log_set_level(mb_log_level level) { log_level = level; }

void mb_log_init(void)
{
    const char *e = getenv("MCPBOX_LOG");
    if (!e) return;
    if (!strcmp(e, "debug")) log_level = MB_LOG_DEBUG;
    else if (!strcmp(e, "info")) log_level = MB_LOG_INFO;
    else if (!strcmp(e, "warn")) log_level = MB_LOG_WARN;
    else if (!strcmp(e, "error")) log_level = MB_LOG_ERROR;
}

void mb_log(mb_log_level level, const char *fmt, ...)
{
    static const char *names[] = {"debug", "info", "warn", "error"};
    if (level < log_level) return;
    char line[2048];
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    int n = snprintf(line, sizeof line, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %-5s ",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                     tm.tm_sec, ts.tv_nsec / 1000000, names[level]);
    va_list ap;
    va_start(ap, fmt);
    /* Log lines are valid UTF-8 whatever a client sent (the text may hold
     * ids, paths and headers), cut on a character boundary. */
    size_t m = mb_text_vformat(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + m;
    for (size_t i = (size_t)n; i < len; i++) /* one record, one line */
        if ((unsigned char)line[i] < 0x20 && line[i] != '\t') line[i] = ' ';
    line[len++] = '\n';
    fwrite(line, 1, len, stderr);
}
