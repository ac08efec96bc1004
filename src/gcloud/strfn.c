/*
 * strfn.c - smaller GoogleSQL scalar functions on SQLite, in characters
 * (UTF-8) where BigQuery counts characters:
 *   bq_left(s, n), bq_right(s, n)     LEFT / RIGHT (n < 0 is BigQuery's error)
 *   bq_reverse(s), bq_repeat(s, n)    REVERSE / REPEAT (n < 0 is an error)
 *   bq_contains_substr(s, t)          CONTAINS_SUBSTR: case-insensitive (ASCII
 *                                     letters; no Unicode normalisation)
 *   bq_initcap(s)                     INITCAP with BigQuery's default delimiters
 *   bq_byte_length(s), bq_ascii(s), bq_chr(n)
 *   bq_safe_arith(op, a, b)           SAFE_ADD / SUBTRACT / MULTIPLY / NEGATE:
 *                                     NULL on INT64 overflow or a non-finite result
 *   bq_unix_date(d), bq_date_from_unix_date(n), bq_last_day(d, part)
 */
#define _GNU_SOURCE
#include "gcloud/gcloud_int.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define REPEAT_MAX (16 << 20) /* bytes */

static int nulls(int argc, sqlite3_value **argv)
{
    for (int i = 0; i < argc; i++)
        if (sqlite3_value_type(argv[i]) == SQLITE_NULL) return 1;
    return 0;
}

/* Byte offset of the n-th UTF-8 character of s (or len). */
static size_t char_off(const char *s, size_t len, long long n)
{
    size_t i = 0;
    for (long long c = 0; c < n && i < len; c++) {
        i++;
        while (i < len && ((unsigned char)s[i] & 0xC0) == 0x80) i++;
    }
    return i;
}

static size_t char_count(const char *s, size_t len)
{
    size_t c = 0;
    for (size_t i = 0; i < len; i++) c += ((unsigned char)s[i] & 0xC0) != 0x80;
    return c;
}

static void f_left_right(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    if (nulls(argc, argv)) return;
    int right = sqlite3_user_data(cx) != NULL;
    const char *s = (const char *)sqlite3_value_text(argv[0]);
    size_t len = (size_t)sqlite3_value_bytes(argv[0]);
    long long n = sqlite3_value_int64(argv[1]);
    if (n < 0) {
        sqlite3_result_error(cx, right ? "Second argument in RIGHT() cannot be negative"
                                       : "Second argument in LEFT() cannot be negative", -1);
        return;
    }
    if (!right) {
        sqlite3_result_text(cx, s, (int)char_off(s, len, n), SQLITE_TRANSIENT);
        return;
    }
    size_t total = char_count(s, len);
    size_t from = (size_t)n >= total ? 0 : char_off(s, len, (long long)(total - (size_t)n));
    sqlite3_result_text(cx, s + from, (int)(len - from), SQLITE_TRANSIENT);
}

static void f_reverse(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    if (nulls(argc, argv)) return;
    const char *s = (const char *)sqlite3_value_text(argv[0]);
    size_t len = (size_t)sqlite3_value_bytes(argv[0]);
    char *out = mb_malloc(len + 1);
    size_t o = len;
    for (size_t i = 0; i < len;) {
        size_t k = i + 1;
        while (k < len && ((unsigned char)s[k] & 0xC0) == 0x80) k++;
        o -= k - i;
        memcpy(out + o, s + i, k - i);
        i = k;
    }
    out[len] = 0;
    sqlite3_result_text(cx, out, (int)len, free);
}

static void f_repeat(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    if (nulls(argc, argv)) return;
    const char *s = (const char *)sqlite3_value_text(argv[0]);
    size_t len = (size_t)sqlite3_value_bytes(argv[0]);
    long long n = sqlite3_value_int64(argv[1]);
    if (n < 0) {
        sqlite3_result_error(cx, "Second argument in REPEAT() cannot be negative", -1);
        return;
    }
    if (len && (unsigned long long)n > REPEAT_MAX / len) {
        sqlite3_result_error(cx, "REPEAT: the result is too large", -1);
        return;
    }
    mb_buf b = {0};
    mb_buf_puts(&b, "");
    for (long long i = 0; i < n && len; i++) mb_buf_append(&b, s, len);
    sqlite3_result_text(cx, mb_buf_steal(&b), -1, free);
}

static void f_contains_substr(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    if (nulls(argc, argv)) return;
    const char *s = (const char *)sqlite3_value_text(argv[0]), *t = (const char *)sqlite3_value_text(argv[1]);
    sqlite3_result_int(cx, strcasestr(s, t) != NULL);
}

static void f_initcap(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    if (nulls(argc, argv)) return;
    const char *s = (const char *)sqlite3_value_text(argv[0]);
    size_t len = (size_t)sqlite3_value_bytes(argv[0]);
    static const char DELIMS[] = " \t\n\r\v\f[](){}/|<>!?@\"^#$&~_,.:;*%+-";
    char *out = mb_malloc(len + 1);
    int start = 1;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x80) {
            out[i] = (char)(start ? toupper(c) : tolower(c));
            start = strchr(DELIMS, c) != NULL && c;
        } else {
            out[i] = (char)c;
            if ((c & 0xC0) != 0x80) start = 0;
        }
    }
    out[len] = 0;
    sqlite3_result_text(cx, out, (int)len, free);
}

static void f_byte_length(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    if (nulls(argc, argv)) return;
    sqlite3_result_int64(cx, sqlite3_value_bytes(argv[0]));
}

static void f_ascii(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    if (nulls(argc, argv)) return;
    const unsigned char *s = sqlite3_value_text(argv[0]);
    sqlite3_result_int(cx, s && *s ? s[0] : 0);
}

static void f_chr(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    if (nulls(argc, argv)) return;
    long long c = sqlite3_value_int64(argv[0]);
    char b[8];
    size_t n = 0;
    if (c == 0) {
        sqlite3_result_text(cx, "", 0, SQLITE_STATIC);
        return;
    }
    if (c < 0 || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) {
        sqlite3_result_error(cx, "Invalid codepoint in CHR", -1);
        return;
    }
    if (c < 0x80) b[n++] = (char)c;
    else if (c < 0x800) {
        b[n++] = (char)(0xC0 | (c >> 6));
        b[n++] = (char)(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
        b[n++] = (char)(0xE0 | (c >> 12));
        b[n++] = (char)(0x80 | ((c >> 6) & 0x3F));
        b[n++] = (char)(0x80 | (c & 0x3F));
    } else {
        b[n++] = (char)(0xF0 | (c >> 18));
        b[n++] = (char)(0x80 | ((c >> 12) & 0x3F));
        b[n++] = (char)(0x80 | ((c >> 6) & 0x3F));
        b[n++] = (char)(0x80 | (c & 0x3F));
    }
    sqlite3_result_text(cx, b, (int)n, SQLITE_TRANSIENT);
}

/* op: 0 add, 1 subtract, 2 multiply, 3 negate */
static void f_safe_arith(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    if (nulls(argc, argv)) return;
    int op = sqlite3_value_int(argv[0]);
    sqlite3_value *a = argv[1], *b = argc > 2 ? argv[2] : argv[1];
    if (sqlite3_value_type(a) == SQLITE_INTEGER && sqlite3_value_type(b) == SQLITE_INTEGER) {
        int64_t x = sqlite3_value_int64(a), y = sqlite3_value_int64(b), r;
        int over = op == 0   ? __builtin_add_overflow(x, y, &r)
                   : op == 1 ? __builtin_sub_overflow(x, y, &r)
                   : op == 2 ? __builtin_mul_overflow(x, y, &r)
                             : __builtin_sub_overflow((int64_t)0, x, &r);
        if (!over) sqlite3_result_int64(cx, r);
        return;
    }
    double x = sqlite3_value_double(a), y = sqlite3_value_double(b);
    double r = op == 0 ? x + y : op == 1 ? x - y : op == 2 ? x * y : -x;
    if (isfinite(r)) sqlite3_result_double(cx, r);
}

/* Days since 1970-01-01 of a DATE text, or -1 with an error set. */
static int date_days(sqlite3_context *cx, sqlite3_value *v, long *days)
{
    long long us;
    int has_time;
    const char *s = (const char *)sqlite3_value_text(v);
    if (!s || mb_gc__ts_parse(s, days, &us, &has_time)) {
        char *m = sqlite3_mprintf("Invalid date: '%.60s'", s ? s : "");
        sqlite3_result_error(cx, m, -1);
        sqlite3_free(m);
        return -1;
    }
    return 0;
}

static void result_date(sqlite3_context *cx, long days)
{
    int y, m, d;
    char b[16];
    mb_gc__civil(days, &y, &m, &d);
    if (y < 1 || y > 9999) {
        sqlite3_result_error(cx, "DATE value out of range", -1);
        return;
    }
    snprintf(b, sizeof b, "%04d-%02d-%02d", y, m, d);
    sqlite3_result_text(cx, b, -1, SQLITE_TRANSIENT);
}

static void f_unix_date(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    long days;
    if (nulls(argc, argv) || date_days(cx, argv[0], &days)) return;
    sqlite3_result_int64(cx, days);
}

static void f_date_from_unix_date(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    if (nulls(argc, argv)) return;
    long long n = sqlite3_value_int64(argv[0]);
    if (n < -719162 || n > 2932896) {
        sqlite3_result_error(cx, "DATE value out of range", -1);
        return;
    }
    result_date(cx, (long)n);
}

/* LAST_DAY(date [, WEEK|MONTH|QUARTER|YEAR]): the last day of its period
 * (WEEK ends on Saturday, as WEEK(SUNDAY)). */
static void f_last_day(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    long days;
    if (nulls(argc, argv) || date_days(cx, argv[0], &days)) return;
    const char *p = argc > 1 ? (const char *)sqlite3_value_text(argv[1]) : "MONTH";
    int y, m, d;
    mb_gc__civil(days, &y, &m, &d);
    if (!strcasecmp(p, "WEEK")) {
        long dow = ((days % 7) + 11) % 7; /* 0 = Sunday; 1970-01-01 was a Thursday */
        result_date(cx, days + (6 - dow));
    } else if (!strcasecmp(p, "MONTH") || !strcasecmp(p, "QUARTER") || !strcasecmp(p, "YEAR")) {
        int last_m = !strcasecmp(p, "MONTH") ? m : !strcasecmp(p, "QUARTER") ? ((m - 1) / 3 + 1) * 3 : 12;
        int ny = last_m == 12 ? y + 1 : y, nm = last_m == 12 ? 1 : last_m + 1;
        result_date(cx, mb_gc__days(ny, nm, 1) - 1);
    } else {
        char *msg = sqlite3_mprintf("Unsupported date part %s for LAST_DAY", p);
        sqlite3_result_error(cx, msg, -1);
        sqlite3_free(msg);
    }
}

int mb_gc__strfn_register(sqlite3 *db)
{
    const int F = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
    static const mb_gc__sqlfn S[] = {
        {"bq_left", 2, f_left_right, 0},         {"bq_right", 2, f_left_right, 1},
        {"bq_reverse", 1, f_reverse, 0},         {"bq_repeat", 2, f_repeat, 0},
        {"bq_contains_substr", 2, f_contains_substr, 0}, {"bq_initcap", 1, f_initcap, 0},
        {"bq_byte_length", 1, f_byte_length, 0}, {"bq_ascii", 1, f_ascii, 0},
        {"bq_chr", 1, f_chr, 0},                 {"bq_safe_arith", 2, f_safe_arith, 0},
        {"bq_safe_arith", 3, f_safe_arith, 0},   {"bq_unix_date", 1, f_unix_date, 0},
        {"bq_date_from_unix_date", 1, f_date_from_unix_date, 0}, {"bq_last_day", 1, f_last_day, 0},
        {"bq_last_day", 2, f_last_day, 0},
    };
    int rc = mb_gc__sqlfn_register(db, S, sizeof S / sizeof *S, F);
    return rc;
}
