/*
 * udf.c - GoogleSQL functions SQLite lacks, as SQLite functions the
 * translator (translate.c) calls by their bq_ names: dates and timestamps
 * (DATE, DATE_DIFF/ADD/SUB/TRUNC, TIMESTAMP_*, EXTRACT, FORMAT_* and PARSE_*),
 * CAST with BigQuery's conversions and errors, SAFE_DIVIDE, CONCAT, regular
 * expressions (PCRE2), and the aggregates COUNTIF, LOGICAL_AND/OR, ANY_VALUE
 * and STDDEV/VARIANCE (COUNTIF and the STDDEV family also as windows).
 *
 * Dates are "YYYY-MM-DD", timestamps "YYYY-MM-DD HH:MM:SS[.f]" in UTC, times
 * "HH:MM:SS[.f]" (see values.c); the date functions read a TIME as that time
 * on 1970-01-01. Errors carry BigQuery's wording.
 */
#define _GNU_SOURCE
#define PCRE2_CODE_UNIT_WIDTH 8
#include "gcloud/gcloud_int.h"

#include <ctype.h>
#include <math.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define US_DAY 86400000000LL

typedef struct tsv {
    long days;
    long long us; /* into the day */
    int has_time;
} tsv;

static int arg_ts(sqlite3_context *cx, sqlite3_value *v, tsv *t, const char *fn)
{
    const char *s = (const char *)sqlite3_value_text(v);
    if (s && !mb_gc__ts_parse(s, &t->days, &t->us, &t->has_time)) return 1;
    char *m = sqlite3_mprintf("%s: invalid date or timestamp value '%.60s'", fn, s ? s : "");
    sqlite3_result_error(cx, m, -1);
    sqlite3_free(m);
    return 0;
}

/* A date, timestamp or TIME argument (a TIME as that time on day 0). */
static int arg_tt(sqlite3_context *cx, sqlite3_value *v, tsv *t, const char *fn)
{
    const char *s = (const char *)sqlite3_value_text(v);
    long long us = s && strchr(s, ':') && !strchr(s, '-') ? mb_gc__time_us(s) : -1;
    if (us < 0) return arg_ts(cx, v, t, fn);
    t->days = 0;
    t->us = us;
    t->has_time = 1;
    return 1;
}

static void result_time(sqlite3_context *cx, long long us)
{
    char b[24];
    mb_gc__time_text(us, b);
    sqlite3_result_text(cx, b, -1, SQLITE_TRANSIENT);
}

static void result_date(sqlite3_context *cx, long days)
{
    int y, m, d;
    mb_gc__civil(days, &y, &m, &d);
    if (y < 1 || y > 9999) {
        sqlite3_result_error(cx, "Date overflow", -1);
        return;
    }
    char b[16];
    snprintf(b, sizeof b, "%04d-%02d-%02d", y, m, d);
    sqlite3_result_text(cx, b, -1, SQLITE_TRANSIENT);
}

static void result_ts(sqlite3_context *cx, long days, long long us)
{
    while (us < 0) {
        us += US_DAY;
        days--;
    }
    days += (long)(us / US_DAY);
    us %= US_DAY;
    int y, m, d;
    mb_gc__civil(days, &y, &m, &d);
    if (y < 1 || y > 9999) {
        sqlite3_result_error(cx, "Timestamp overflow", -1);
        return;
    }
    char b[48], out[40];
    long long s = us / 1000000;
    snprintf(b, sizeof b, "%04d-%02d-%02d %02lld:%02lld:%02lld.%06lld", y, m, d, s / 3600,
             s / 60 % 60, s % 60, us % 1000000);
    mb_gc__ts_norm(b, out);
    sqlite3_result_text(cx, out, -1, SQLITE_TRANSIENT);
}

static int any_null(int argc, sqlite3_value **argv)
{
    for (int i = 0; i < argc; i++)
        if (sqlite3_value_type(argv[i]) == SQLITE_NULL) return 1;
    return 0;
}

/* ------------------------------------------------------- date parts */

static int weekday(long days) { return (int)(((days % 7) + 11) % 7); } /* 0 = Sunday */


static void f_date(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    if (any_null(argc, argv)) return;
    if (argc == 3) {
        int y = sqlite3_value_int(argv[0]), m = sqlite3_value_int(argv[1]),
            d = sqlite3_value_int(argv[2]);
        char b[32], o[16];
        snprintf(b, sizeof b, "%04d-%02d-%02d", y, m, d);
        if (mb_gc__date_norm(b, o)) {
            sqlite3_result_error(cx, "Invalid date", -1);
            return;
        }
        sqlite3_result_text(cx, o, -1, SQLITE_TRANSIENT);
        return;
    }
    tsv t;
    if (arg_ts(cx, argv[0], &t, "DATE")) result_date(cx, t.days);
}

static void f_timestamp(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    if (any_null(argc, argv)) return;
    tsv t;
    if (arg_ts(cx, argv[0], &t, "TIMESTAMP")) result_ts(cx, t.days, t.us);
}

/* bq_time(ts) / bq_time(h, m, s): TIME as "HH:MM:SS[.ffffff]". */
static void f_time(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    if (any_null(argc, argv)) return;
    long long us;
    if (argc == 3) {
        long long h = sqlite3_value_int64(argv[0]), mi = sqlite3_value_int64(argv[1]),
                  se = sqlite3_value_int64(argv[2]);
        if (h < 0 || h > 23 || mi < 0 || mi > 59 || se < 0 || se > 59) {
            sqlite3_result_error(cx, "Input calculates to invalid time value", -1);
            return;
        }
        us = ((h * 60 + mi) * 60 + se) * 1000000;
    } else {
        tsv t;
        if (!arg_tt(cx, argv[0], &t, "TIME")) return;
        us = t.us;
    }
    result_time(cx, us);
}

static long month_add(long days, long n, sqlite3_context *cx)
{
    int y, m, d;
    mb_gc__civil(days, &y, &m, &d);
    long mm = (long)y * 12 + (m - 1) + n;
    int ny = (int)(mm / 12), nm = (int)(mm % 12) + 1;
    static const int dm[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int last = dm[nm - 1] + (nm == 2 && ((ny % 4 == 0 && ny % 100) || ny % 400 == 0));
    (void)cx;
    return mb_gc__days(ny, nm, d > last ? last : d);
}

static const char *const ADD_FN[] = {"DATE_ADD", "TIMESTAMP_ADD", "TIME_ADD"};

/* bq_date_add(d, n, part), bq_date_sub; bq_ts_add(ts, n, part), bq_ts_sub;
 * bq_time_add(t, n, part), bq_time_sub (wrapping around midnight) */
static void date_add_impl(sqlite3_context *cx, sqlite3_value **argv, int sign, int kind)
{
    if (any_null(3, argv)) return;
    tsv t;
    int ts = kind == 1;
    if (!(kind == 2 ? arg_tt : arg_ts)(cx, argv[0], &t, ADD_FN[kind])) return;
    long long n = sqlite3_value_int64(argv[1]) * sign;
    const char *p = (const char *)sqlite3_value_text(argv[2]);
    static const struct { const char *name; long long us; } U[] = {
        {"MICROSECOND", 1},        {"MILLISECOND", 1000},        {"SECOND", 1000000},
        {"MINUTE", 60000000LL},    {"HOUR", 3600000000LL},       {"DAY", US_DAY},
        {"WEEK", 7 * US_DAY},
    };
    for (size_t i = 0; i < sizeof U / sizeof *U; i++)
        if (!strcasecmp(p, U[i].name)) {
            if (kind == 2) {
                if (U[i].us >= US_DAY) break;
                result_time(cx, (t.us + (n % (US_DAY / U[i].us)) * U[i].us) % US_DAY);
                return;
            }
            if (!ts && U[i].us < US_DAY) break;
            long long tot = t.us + n * U[i].us;
            long dd = t.days + (long)(tot / US_DAY);
            long long r = tot % US_DAY;
            if (ts || t.has_time) result_ts(cx, dd, r);
            else result_date(cx, dd);
            return;
        }
    long months = !strcasecmp(p, "MONTH") ? 1 : !strcasecmp(p, "QUARTER") ? 3
                  : !strcasecmp(p, "YEAR") ? 12 : 0;
    if (months && kind != 2) {
        long nd = month_add(t.days, (long)n * months, cx);
        if (ts || t.has_time) result_ts(cx, nd, t.us);
        else result_date(cx, nd);
        return;
    }
    char *m = sqlite3_mprintf("Unsupported date part %s for %s", p, ADD_FN[kind]);
    sqlite3_result_error(cx, m, -1);
    sqlite3_free(m);
}

/* bq_date_add .. bq_time_sub: the registration's data is the kind (0 date,
 * 1 timestamp, 2 time) plus ADD_SUB for the _sub functions. */
#define ADD_SUB 4
static void f_add(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    intptr_t d = (intptr_t)sqlite3_user_data(cx);
    date_add_impl(cx, argv, d & ADD_SUB ? -1 : 1, (int)(d & 3));
}

/* bq_generate_date_array(start, end, n, part): GENERATE_DATE_ARRAY, each date
 * start + k * n parts (so month steps keep the day where the month has it). */
static void f_generate_date_array(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    if (any_null(argc, argv)) return;
    tsv a, b;
    if (!arg_ts(cx, argv[0], &a, "GENERATE_DATE_ARRAY") || !arg_ts(cx, argv[1], &b, "GENERATE_DATE_ARRAY")) return;
    long long n = sqlite3_value_int64(argv[2]);
    const char *p = (const char *)sqlite3_value_text(argv[3]);
    long days = !strcasecmp(p, "DAY") ? 1 : !strcasecmp(p, "WEEK") ? 7 : 0;
    long months = !strcasecmp(p, "MONTH") ? 1 : !strcasecmp(p, "QUARTER") ? 3 : !strcasecmp(p, "YEAR") ? 12 : 0;
    if (!days && !months) {
        char *m = sqlite3_mprintf("Unsupported date part %s for GENERATE_DATE_ARRAY", p);
        sqlite3_result_error(cx, m, -1);
        sqlite3_free(m);
        return;
    }
    if (n == 0) {
        sqlite3_result_error(cx, "Sequence step cannot be 0.", -1);
        return;
    }
    mb_buf out = {0};
    mb_buf_putc(&out, '[');
    for (long long k = 0, count = 0;; k++) {
        long d = months ? month_add(a.days, (long)(k * n * months), cx) : a.days + (long)(k * n * days);
        if (n > 0 ? d > b.days : d < b.days) break;
        if (++count > 1000000) {
            mb_buf_free(&out);
            sqlite3_result_error(cx, "GENERATE_DATE_ARRAY would produce more than 1000000 elements", -1);
            return;
        }
        int y, m, dd;
        mb_gc__civil(d, &y, &m, &dd);
        mb_buf_printf(&out, "%s\"%04d-%02d-%02d\"", k ? "," : "", y, m, dd);
    }
    mb_buf_putc(&out, ']');
    sqlite3_result_text(cx, mb_buf_steal(&out), -1, free);
    sqlite3_result_subtype(cx, 74); /* JSON, as arrays.c marks ARRAY values */
}

static long long floordiv(long long a, long long b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

static const char *const DIFF_FN[] = {"DATE_DIFF", "TIMESTAMP_DIFF", "TIME_DIFF"};

/* bq_date_diff(a, b, part), bq_ts_diff and bq_time_diff (kind 0, 1, 2) */
static void diff_impl(sqlite3_context *cx, sqlite3_value **argv, int kind)
{
    if (any_null(3, argv)) return;
    tsv a, b;
    int (*arg)(sqlite3_context *, sqlite3_value *, tsv *, const char *) = kind == 2 ? arg_tt : arg_ts;
    if (!arg(cx, argv[0], &a, DIFF_FN[kind]) || !arg(cx, argv[1], &b, DIFF_FN[kind])) return;
    int ts = kind != 0;
    const char *p = (const char *)sqlite3_value_text(argv[2]);
    if (kind == 2 && (!strcasecmp(p, "DAY") || !strcasecmp(p, "WEEK") || !strcasecmp(p, "ISOWEEK"))) p = "?";
    int ya, ma, da, yb, mb, db;
    mb_gc__civil(a.days, &ya, &ma, &da);
    mb_gc__civil(b.days, &yb, &mb, &db);
    long long r;
    long long ua = (long long)a.days * US_DAY + a.us, ub = (long long)b.days * US_DAY + b.us;
    if (!strcasecmp(p, "DAY")) r = ts ? (ua - ub) / US_DAY : a.days - b.days;
    else if (!strcasecmp(p, "WEEK")) r = floordiv(a.days + 4, 7) - floordiv(b.days + 4, 7);
    else if (!strcasecmp(p, "ISOWEEK")) r = floordiv(a.days + 3, 7) - floordiv(b.days + 3, 7);
    else if (!strcasecmp(p, "MONTH") && !ts) r = (ya * 12LL + ma) - (yb * 12LL + mb);
    else if (!strcasecmp(p, "QUARTER") && !ts) r = (ya * 4LL + (ma - 1) / 3) - (yb * 4LL + (mb - 1) / 3);
    else if (!strcasecmp(p, "YEAR") && !ts) r = ya - yb;
    else if (!strcasecmp(p, "HOUR")) r = (ua - ub) / 3600000000LL;
    else if (!strcasecmp(p, "MINUTE")) r = (ua - ub) / 60000000LL;
    else if (!strcasecmp(p, "SECOND")) r = (ua - ub) / 1000000LL;
    else if (!strcasecmp(p, "MILLISECOND")) r = (ua - ub) / 1000LL;
    else if (!strcasecmp(p, "MICROSECOND")) r = ua - ub;
    else {
        char *m = sqlite3_mprintf("Unsupported date part %s for %s", (const char *)sqlite3_value_text(argv[2]),
                                  DIFF_FN[kind]);
        sqlite3_result_error(cx, m, -1);
        sqlite3_free(m);
        return;
    }
    sqlite3_result_int64(cx, r);
}

/* bq_date_diff, bq_ts_diff, bq_time_diff: the registration's data is the kind */
static void f_diff(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    diff_impl(cx, argv, (int)(intptr_t)sqlite3_user_data(cx));
}

/* bq_trunc(x, part, kind): kind 0 DATE_TRUNC, 1 TIMESTAMP/DATETIME_TRUNC,
 * 2 TIME_TRUNC */
static void f_trunc(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    if (any_null(2, argv)) return;
    tsv t;
    int kind = sqlite3_value_int(argv[2]), ts = kind != 0;
    const char *p = (const char *)sqlite3_value_text(argv[1]);
    if (kind == 2) {
        static const struct { const char *name; long long us; } U[] = {
            {"MICROSECOND", 1}, {"MILLISECOND", 1000}, {"SECOND", 1000000}, {"MINUTE", 60000000LL},
            {"HOUR", 3600000000LL}};
        if (!arg_tt(cx, argv[0], &t, "TIME_TRUNC")) return;
        for (size_t i = 0; i < sizeof U / sizeof *U; i++)
            if (!strcasecmp(p, U[i].name)) {
                result_time(cx, t.us / U[i].us * U[i].us);
                return;
            }
        char *msg = sqlite3_mprintf("Unsupported date part %s for TIME_TRUNC", p);
        sqlite3_result_error(cx, msg, -1);
        sqlite3_free(msg);
        return;
    }
    if (!arg_ts(cx, argv[0], &t, "DATE_TRUNC")) return;
    int y, m, d;
    mb_gc__civil(t.days, &y, &m, &d);
    long days = t.days;
    long long us = 0;
    if (!strcasecmp(p, "DAY")) ;
    else if (!strcasecmp(p, "WEEK")) days -= weekday(days);
    else if (!strcasecmp(p, "ISOWEEK")) days -= (weekday(days) + 6) % 7;
    else if (!strcasecmp(p, "MONTH")) days = mb_gc__days(y, m, 1);
    else if (!strcasecmp(p, "QUARTER")) days = mb_gc__days(y, (m - 1) / 3 * 3 + 1, 1);
    else if (!strcasecmp(p, "YEAR")) days = mb_gc__days(y, 1, 1);
    else if (ts && !strcasecmp(p, "HOUR")) us = t.us / 3600000000LL * 3600000000LL;
    else if (ts && !strcasecmp(p, "MINUTE")) us = t.us / 60000000LL * 60000000LL;
    else if (ts && !strcasecmp(p, "SECOND")) us = t.us / 1000000 * 1000000;
    else {
        char *msg = sqlite3_mprintf("Unsupported date part %s for %s", p,
                                    ts ? "TIMESTAMP_TRUNC" : "DATE_TRUNC");
        sqlite3_result_error(cx, msg, -1);
        sqlite3_free(msg);
        return;
    }
    if (ts) result_ts(cx, days, us);
    else result_date(cx, days);
}

static int iso_week(long days, int *iso_year)
{
    int wd = (weekday(days) + 6) % 7; /* 0 = Monday */
    long thursday = days - wd + 3;
    int y, m, d;
    mb_gc__civil(thursday, &y, &m, &d);
    *iso_year = y;
    return (int)((thursday - mb_gc__days(y, 1, 1)) / 7 + 1);
}

/* bq_extract(part, x) */
static void f_extract(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    if (any_null(2, argv)) return;
    tsv t;
    if (!arg_tt(cx, argv[1], &t, "EXTRACT")) return;
    const char *p = (const char *)sqlite3_value_text(argv[0]);
    int y, m, d, iy;
    mb_gc__civil(t.days, &y, &m, &d);
    long doy = t.days - mb_gc__days(y, 1, 1);
    long long r;
    if (!strcasecmp(p, "YEAR")) r = y;
    else if (!strcasecmp(p, "MONTH")) r = m;
    else if (!strcasecmp(p, "DAY")) r = d;
    else if (!strcasecmp(p, "QUARTER")) r = (m - 1) / 3 + 1;
    else if (!strcasecmp(p, "DAYOFWEEK")) r = weekday(t.days) + 1;
    else if (!strcasecmp(p, "DAYOFYEAR")) r = doy + 1;
    else if (!strcasecmp(p, "WEEK")) r = (doy + 7 - weekday(t.days)) / 7;
    else if (!strcasecmp(p, "ISOWEEK")) r = iso_week(t.days, &iy);
    else if (!strcasecmp(p, "ISOYEAR")) {
        iso_week(t.days, &iy);
        r = iy;
    } else if (!strcasecmp(p, "HOUR")) r = t.us / 3600000000LL;
    else if (!strcasecmp(p, "MINUTE")) r = t.us / 60000000LL % 60;
    else if (!strcasecmp(p, "SECOND")) r = t.us / 1000000 % 60;
    else if (!strcasecmp(p, "MILLISECOND")) r = t.us / 1000 % 1000;
    else if (!strcasecmp(p, "MICROSECOND")) r = t.us % 1000000;
    else if (!strcasecmp(p, "DATE")) {
        result_date(cx, t.days);
        return;
    } else {
        char *msg = sqlite3_mprintf("Unsupported date part %s for EXTRACT", p);
        sqlite3_result_error(cx, msg, -1);
        sqlite3_free(msg);
        return;
    }
    sqlite3_result_int64(cx, r);
}

static const char *const MONTHS[] = {"January", "February", "March",     "April",
                                     "May",     "June",     "July",      "August",
                                     "September", "October", "November", "December"};
static const char *const DAYS[] = {"Sunday",   "Monday", "Tuesday", "Wednesday",
                                   "Thursday", "Friday", "Saturday"};

/* bq_format(fmt, x, is_ts): FORMAT_DATE / FORMAT_TIMESTAMP / FORMAT_DATETIME */
static void f_format(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    if (any_null(2, argv)) return;
    const char *fmt = (const char *)sqlite3_value_text(argv[0]);
    tsv t;
    if (!arg_tt(cx, argv[1], &t, "FORMAT_DATE")) return;
    int ts = sqlite3_value_int(argv[2]);
    int y, m, d, iy;
    mb_gc__civil(t.days, &y, &m, &d);
    long long s = t.us / 1000000;
    int H = (int)(s / 3600), M = (int)(s / 60 % 60), S = (int)(s % 60);
    mb_buf b = {0};
    mb_buf_puts(&b, "");
    for (const char *p = fmt; *p; p++) {
        if (*p != '%' || !p[1]) {
            mb_buf_putc(&b, *p);
            continue;
        }
        char c = *++p;
        switch (c) {
        case 'Y': mb_buf_printf(&b, "%04d", y); break;
        case 'y': mb_buf_printf(&b, "%02d", y % 100); break;
        case 'C': mb_buf_printf(&b, "%02d", y / 100); break;
        case 'm': mb_buf_printf(&b, "%02d", m); break;
        case 'd': mb_buf_printf(&b, "%02d", d); break;
        case 'e': mb_buf_printf(&b, "%2d", d); break;
        case 'F': mb_buf_printf(&b, "%04d-%02d-%02d", y, m, d); break;
        case 'D': mb_buf_printf(&b, "%02d/%02d/%02d", m, d, y % 100); break;
        case 'x': mb_buf_printf(&b, "%02d/%02d/%02d", m, d, y % 100); break;
        case 'B': mb_buf_puts(&b, MONTHS[m - 1]); break;
        case 'b': case 'h': mb_buf_printf(&b, "%.3s", MONTHS[m - 1]); break;
        case 'A': mb_buf_puts(&b, DAYS[weekday(t.days)]); break;
        case 'a': mb_buf_printf(&b, "%.3s", DAYS[weekday(t.days)]); break;
        case 'j': mb_buf_printf(&b, "%03ld", t.days - mb_gc__days(y, 1, 1) + 1); break;
        case 'u': mb_buf_printf(&b, "%d", weekday(t.days) ? weekday(t.days) : 7); break;
        case 'w': mb_buf_printf(&b, "%d", weekday(t.days)); break;
        case 'Q': mb_buf_printf(&b, "%d", (m - 1) / 3 + 1); break;
        case 'V': mb_buf_printf(&b, "%02d", iso_week(t.days, &iy)); break;
        case 'G': iso_week(t.days, &iy); mb_buf_printf(&b, "%04d", iy); break;
        case 'U': mb_buf_printf(&b, "%02ld", (t.days - mb_gc__days(y, 1, 1) + 7 - weekday(t.days)) / 7); break;
        case 'H': mb_buf_printf(&b, "%02d", H); break;
        case 'I': mb_buf_printf(&b, "%02d", H % 12 ? H % 12 : 12); break;
        case 'p': mb_buf_puts(&b, H < 12 ? "AM" : "PM"); break;
        case 'M': mb_buf_printf(&b, "%02d", M); break;
        case 'S': mb_buf_printf(&b, "%02d", S); break;
        case 'T': mb_buf_printf(&b, "%02d:%02d:%02d", H, M, S); break;
        case 'R': mb_buf_printf(&b, "%02d:%02d", H, M); break;
        case 'c': mb_buf_printf(&b, "%.3s %.3s %2d %02d:%02d:%02d %04d", DAYS[weekday(t.days)],
                                MONTHS[m - 1], d, H, M, S, y); break;
        case 's': mb_buf_printf(&b, "%lld", (long long)t.days * 86400 + s); break;
        case 'Z': if (ts) mb_buf_puts(&b, "UTC"); break;
        case 'z': if (ts) mb_buf_puts(&b, "+0000"); break;
        case 'E':
            if (p[1] == '*' && p[2] == 'S') {
                mb_buf_printf(&b, "%02d.%06lld", S, t.us % 1000000);
                p += 2;
                break;
            }
            if (isdigit((unsigned char)p[1]) && p[2] == 'S') {
                int n = p[1] - '0';
                mb_buf_printf(&b, "%02d", S);
                if (n) {
                    char f[8];
                    snprintf(f, sizeof f, "%06lld", t.us % 1000000);
                    mb_buf_printf(&b, ".%.*s", n > 6 ? 6 : n, f);
                }
                p += 2;
                break;
            }
            /* fallthrough */
        default: {
            mb_buf_free(&b);
            char *msg = sqlite3_mprintf("Unsupported format element %%%c", c);
            sqlite3_result_error(cx, msg, -1);
            sqlite3_free(msg);
            return;
        }
        case '%': mb_buf_putc(&b, '%'); break;
        case 'n': mb_buf_putc(&b, '\n'); break;
        case 't': mb_buf_putc(&b, '\t'); break;
        }
    }
    sqlite3_result_text(cx, b.data, (int)b.len, free);
}

static int take_num(const char **s, int maxd, int *out)
{
    int n = 0, v = 0;
    while (n < maxd && isdigit((unsigned char)**s)) {
        v = v * 10 + (**s - '0');
        (*s)++;
        n++;
    }
    *out = v;
    return n > 0;
}

/* bq_parse(fmt, s, kind): kind 0 = DATE, 1 = DATETIME, 2 = TIMESTAMP */
static void f_parse(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    if (any_null(2, argv)) return;
    const char *fmt = (const char *)sqlite3_value_text(argv[0]);
    const char *s = (const char *)sqlite3_value_text(argv[1]);
    int kind = sqlite3_value_int(argv[2]);
    int y = 1970, m = 1, d = 1, H = 0, M = 0, S = 0, pm = -1;
    long long frac = 0;
    const char *p = fmt, *q = s;
    int ok = 1;
    for (; *p && ok; p++) {
        if (isspace((unsigned char)*p)) {
            while (isspace((unsigned char)*q)) q++;
            continue;
        }
        if (*p != '%') {
            ok = *q == *p;
            q++;
            continue;
        }
        char c = *++p;
        if (!c) { ok = 0; break; }
        switch (c) {
        case 'Y': ok = take_num(&q, 4, &y); break;
        case 'y': ok = take_num(&q, 2, &y); y += y < 69 ? 2000 : 1900; break;
        case 'm': ok = take_num(&q, 2, &m); break;
        case 'd': case 'e': while (*q == ' ') q++; ok = take_num(&q, 2, &d); break;
        case 'H': case 'I': ok = take_num(&q, 2, &H); break;
        case 'M': ok = take_num(&q, 2, &M); break;
        case 'S': ok = take_num(&q, 2, &S); break;
        case 'F': ok = take_num(&q, 4, &y) && *q++ == '-' && take_num(&q, 2, &m) && *q++ == '-' &&
                       take_num(&q, 2, &d); break;
        case 'T': ok = take_num(&q, 2, &H) && *q++ == ':' && take_num(&q, 2, &M) && *q++ == ':' &&
                       take_num(&q, 2, &S); break;
        case 'p':
            if (!strncasecmp(q, "AM", 2)) pm = 0;
            else if (!strncasecmp(q, "PM", 2)) pm = 1;
            else ok = 0;
            q += ok ? 2 : 0;
            break;
        case 'B': case 'b': case 'h': {
            ok = 0;
            for (int i = 0; i < 12 && !ok; i++) {
                size_t n = strlen(MONTHS[i]);
                if (!strncasecmp(q, MONTHS[i], n)) { m = i + 1; q += n; ok = 1; }
                else if (!strncasecmp(q, MONTHS[i], 3)) { m = i + 1; q += 3; ok = 1; }
            }
            break;
        }
        case 'A': case 'a': {
            ok = 0;
            for (int i = 0; i < 7 && !ok; i++) {
                size_t n = strlen(DAYS[i]);
                if (!strncasecmp(q, DAYS[i], n)) { q += n; ok = 1; }
                else if (!strncasecmp(q, DAYS[i], 3)) { q += 3; ok = 1; }
            }
            break;
        }
        case 'f': { /* fraction digits */
            int n = 0;
            frac = 0;
            while (isdigit((unsigned char)*q)) {
                if (n < 6) frac = frac * 10 + (*q - '0');
                n++;
                q++;
            }
            for (; n < 6; n++) frac *= 10;
            break;
        }
        case 'E':
            if ((p[1] == '*' || isdigit((unsigned char)p[1])) && p[2] == 'S') {
                ok = take_num(&q, 2, &S);
                if (ok && *q == '.') {
                    q++;
                    int n = 0;
                    while (isdigit((unsigned char)*q)) {
                        if (n < 6) frac = frac * 10 + (*q - '0');
                        n++;
                        q++;
                    }
                    for (; n < 6; n++) frac *= 10;
                }
                p += 2;
            } else ok = 0;
            break;
        case 'Z': while (isalpha((unsigned char)*q) || *q == '/' || *q == '_') q++; break;
        case 'z':
            if (*q == 'Z') q++;
            else if (*q == '+' || *q == '-') { q++; while (isdigit((unsigned char)*q) || *q == ':') q++; }
            else ok = 0;
            break;
        case '%': ok = *q++ == '%'; break;
        default: {
            char *msg = sqlite3_mprintf("Mismatch between format character '%%%c' and string "
                                        "character (unsupported element)", c);
            sqlite3_result_error(cx, msg, -1);
            sqlite3_free(msg);
            return;
        }
        }
    }
    if (pm == 1 && H < 12) H += 12;
    if (pm == 0 && H == 12) H = 0;
    if (ok && *q) ok = 0;
    char b[64], o[40];
    snprintf(b, sizeof b, "%04d-%02d-%02d %02d:%02d:%02d.%06lld", y, m, d, H, M, S, frac);
    if (!ok || mb_gc__ts_norm(b, o)) {
        char *msg = sqlite3_mprintf("Failed to parse input string \"%.80s\"", s);
        sqlite3_result_error(cx, msg, -1);
        sqlite3_free(msg);
        return;
    }
    if (kind == 3) { /* PARSE_TIME: the time of day */
        result_time(cx, ((H * 60LL + M) * 60 + S) * 1000000 + frac);
        return;
    }
    if (kind == 0) o[10] = '\0';
    sqlite3_result_text(cx, o, -1, SQLITE_TRANSIENT);
}

static void f_now_date(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    (void)argv;
    result_date(cx, (long)(mb_gc__clock_cx(cx) / 86400000LL));
}

static void f_now_ts(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    (void)argv;
    int64_t ms = mb_gc__clock_cx(cx);
    result_ts(cx, (long)(ms / 86400000LL), (ms % 86400000LL) * 1000);
}

static void f_now_time(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    (void)argv;
    result_time(cx, (mb_gc__clock_cx(cx) % 86400000LL) * 1000);
}

static void f_unix(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    if (any_null(1, argv)) return;
    tsv t;
    if (!arg_ts(cx, argv[0], &t, "UNIX_SECONDS")) return;
    long long div = sqlite3_value_int64(argv[1]);
    long long us = (long long)t.days * US_DAY + t.us;
    sqlite3_result_int64(cx, floordiv(us, div));
}

static void f_from_unix(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    if (any_null(1, argv)) return;
    long long us = sqlite3_value_int64(argv[0]) * sqlite3_value_int64(argv[1]);
    long long days = floordiv(us, US_DAY);
    result_ts(cx, (long)days, us - days * US_DAY);
}

/* ------------------------------------------------------------- casts */

/* bq_cast(x, type, safe) */
static void f_cast(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return;
    const char *type = (const char *)sqlite3_value_text(argv[1]);
    int safe = sqlite3_value_int(argv[2]);
    int vt = sqlite3_value_type(argv[0]);
    const char *s = (const char *)sqlite3_value_text(argv[0]);
    char buf[40];
    const char *what = type;
    if (!strcmp(type, "INT64")) {
        if (vt == SQLITE_INTEGER) { sqlite3_result_int64(cx, sqlite3_value_int64(argv[0])); return; }
        if (vt == SQLITE_FLOAT) {
            double v = sqlite3_value_double(argv[0]);
            if (isfinite(v) && fabs(v) < 9.2e18) { sqlite3_result_int64(cx, (long long)llround(v)); return; }
        } else {
            char *end;
            while (isspace((unsigned char)*s)) s++;
            long long v = strtoll(s, &end, 10);
            while (isspace((unsigned char)*end)) end++;
            if (*s && !*end) { sqlite3_result_int64(cx, v); return; }
        }
        what = "int64";
    } else if (!strcmp(type, "FLOAT64") || !strcmp(type, "NUMERIC") || !strcmp(type, "BIGNUMERIC")) {
        if (vt == SQLITE_INTEGER || vt == SQLITE_FLOAT) { sqlite3_result_double(cx, sqlite3_value_double(argv[0])); return; }
        char *end;
        double v = strtod(s, &end);
        while (isspace((unsigned char)*end)) end++;
        if (*s && !*end) { sqlite3_result_double(cx, v); return; }
        what = !strcmp(type, "FLOAT64") ? "double" : "numeric";
    } else if (!strcmp(type, "STRING")) {
        if (vt == SQLITE_FLOAT) {
            char t[40];
            mb_gc__float_text(sqlite3_value_double(argv[0]), t);
            sqlite3_result_text(cx, t, -1, SQLITE_TRANSIENT);
            return;
        }
        sqlite3_result_text(cx, s, -1, SQLITE_TRANSIENT);
        return;
    } else if (!strcmp(type, "BOOL")) {
        if (vt == SQLITE_INTEGER) { sqlite3_result_int(cx, sqlite3_value_int64(argv[0]) != 0); return; }
        if (!strcasecmp(s, "true")) { sqlite3_result_int(cx, 1); return; }
        if (!strcasecmp(s, "false")) { sqlite3_result_int(cx, 0); return; }
        what = "bool";
    } else if (!strcmp(type, "DATE")) {
        if (!mb_gc__date_norm(s, buf)) { sqlite3_result_text(cx, buf, -1, SQLITE_TRANSIENT); return; }
        what = "date";
    } else if (!strcmp(type, "TIMESTAMP") || !strcmp(type, "DATETIME")) {
        if (!mb_gc__ts_norm(s, buf)) { sqlite3_result_text(cx, buf, -1, SQLITE_TRANSIENT); return; }
        what = !strcmp(type, "DATETIME") ? "datetime" : "timestamp";
    } else {
        sqlite3_result_value(cx, argv[0]);
        return;
    }
    if (safe) return;
    char *msg = sqlite3_mprintf("Bad %s value: %.80s", what, s);
    sqlite3_result_error(cx, msg, -1);
    sqlite3_free(msg);
}

/* --------------------------------------------------------- scalars */

static void f_safe_divide(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    if (any_null(2, argv)) return;
    double b = sqlite3_value_double(argv[1]);
    if (b == 0) return;
    sqlite3_result_double(cx, sqlite3_value_double(argv[0]) / b);
}

static void f_div(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    if (any_null(2, argv)) return;
    long long a = sqlite3_value_int64(argv[0]), b = sqlite3_value_int64(argv[1]);
    if (!b) {
        sqlite3_result_error(cx, "division by zero", -1);
        return;
    }
    sqlite3_result_int64(cx, a / b);
}

static void f_mod(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    if (any_null(2, argv)) return;
    if (sqlite3_value_type(argv[0]) == SQLITE_INTEGER && sqlite3_value_type(argv[1]) == SQLITE_INTEGER) {
        long long a = sqlite3_value_int64(argv[0]), b = sqlite3_value_int64(argv[1]);
        if (!b) {
            sqlite3_result_error(cx, "division by zero", -1);
            return;
        }
        sqlite3_result_int64(cx, b == -1 ? 0 : a % b);
        return;
    }
    double b = sqlite3_value_double(argv[1]);
    if (b == 0) {
        sqlite3_result_error(cx, "division by zero", -1);
        return;
    }
    sqlite3_result_double(cx, fmod(sqlite3_value_double(argv[0]), b));
}

static void f_concat(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    if (any_null(argc, argv)) return;
    mb_buf b = {0};
    mb_buf_puts(&b, "");
    for (int i = 0; i < argc; i++) {
        if (sqlite3_value_type(argv[i]) == SQLITE_FLOAT) {
            double v = sqlite3_value_double(argv[i]);
            char t[40];
            mb_gc__float_text(v, t);
            if (v == floor(v) && fabs(v) < 1e16) mb_buf_printf(&b, "%.1f", v);
            else mb_buf_puts(&b, t);
        } else
            mb_buf_append(&b, sqlite3_value_text(argv[i]), (size_t)sqlite3_value_bytes(argv[i]));
    }
    sqlite3_result_text(cx, b.data, (int)b.len, free);
}

static void f_starts(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    if (any_null(2, argv)) return;
    const char *a = (const char *)sqlite3_value_text(argv[0]);
    const char *b = (const char *)sqlite3_value_text(argv[1]);
    int ends = sqlite3_user_data(cx) != NULL;
    size_t na = strlen(a), nb = strlen(b);
    sqlite3_result_int(cx, nb <= na && !memcmp(ends ? a + na - nb : a, b, nb));
}

static void f_pad(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    if (any_null(argc, argv)) return;
    const char *s = (const char *)sqlite3_value_text(argv[0]);
    long long n = sqlite3_value_int64(argv[1]);
    const char *pad = argc > 2 ? (const char *)sqlite3_value_text(argv[2]) : " ";
    int right = sqlite3_user_data(cx) != NULL;
    if (n < 0 || n > 1000000 || !*pad) {
        sqlite3_result_error(cx, "Invalid LPAD/RPAD length or pattern", -1);
        return;
    }
    size_t len = mb_utf8_length(s, strlen(s));
    mb_buf b = {0};
    mb_buf_puts(&b, "");
    if ((long long)len >= n) {
        mb_buf_append(&b, s, mb_utf8_cut(s, strlen(s), (size_t)n));
    } else {
        if (right) mb_buf_puts(&b, s);
        size_t need = (size_t)n - len, plen = strlen(pad);
        for (size_t k = 0; k < need; k++) mb_buf_putc(&b, pad[k % plen]);
        if (!right) mb_buf_puts(&b, s);
    }
    sqlite3_result_text(cx, b.data, (int)b.len, free);
}

/* bq_regexp(s, re, mode[, repl]): mode 0 contains, 1 extract, 2 replace */
static void f_regexp(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    if (any_null(argc, argv)) return;
    const char *s = (const char *)sqlite3_value_text(argv[0]);
    const char *re = (const char *)sqlite3_value_text(argv[1]);
    int mode = sqlite3_value_int(argv[2]);
    int ec;
    PCRE2_SIZE eo;
    pcre2_code *code = pcre2_compile((PCRE2_SPTR)re, PCRE2_ZERO_TERMINATED, PCRE2_UTF, &ec, &eo, NULL);
    if (!code) {
        char *msg = sqlite3_mprintf("Cannot parse regular expression: %.80s", re);
        sqlite3_result_error(cx, msg, -1);
        sqlite3_free(msg);
        return;
    }
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(code, NULL);
    size_t n = strlen(s);
    if (mode == 2) {
        const char *rep = argc > 3 ? (const char *)sqlite3_value_text(argv[3]) : "";
        mb_buf b = {0};
        mb_buf_puts(&b, "");
        size_t off = 0;
        while (off <= n && pcre2_match(code, (PCRE2_SPTR)s, n, off, 0, md, NULL) >= 0) {
            PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
            mb_buf_append(&b, s + off, ov[0] - off);
            for (const char *r = rep; *r; r++) {
                if (*r == '\\' && isdigit((unsigned char)r[1])) {
                    int g = *++r - '0';
                    if ((uint32_t)g < pcre2_get_ovector_count(md) && ov[2 * g] != PCRE2_UNSET)
                        mb_buf_append(&b, s + ov[2 * g], ov[2 * g + 1] - ov[2 * g]);
                } else if (*r == '\\' && r[1]) {
                    mb_buf_putc(&b, *++r);
                } else mb_buf_putc(&b, *r);
            }
            if (ov[1] == ov[0]) {
                if (ov[1] < n) mb_buf_putc(&b, s[ov[1]]);
                off = ov[1] + 1;
            } else off = ov[1];
        }
        if (off < n) mb_buf_append(&b, s + off, n - off);
        sqlite3_result_text(cx, b.data, (int)b.len, free);
    } else {
        int r = pcre2_match(code, (PCRE2_SPTR)s, n, 0, 0, md, NULL);
        if (mode == 0) sqlite3_result_int(cx, r >= 0);
        else if (r >= 0) {
            PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
            int g = pcre2_get_ovector_count(md) > 1 ? 1 : 0;
            if (ov[2 * g] != PCRE2_UNSET)
                sqlite3_result_text(cx, s + ov[2 * g], (int)(ov[2 * g + 1] - ov[2 * g]), SQLITE_TRANSIENT);
        }
    }
    pcre2_match_data_free(md);
    pcre2_code_free(code);
}

/* FORMAT(fmt, ...): %d %i %x %X %o %f %F %e %E %g %G %s %t %T %% with the
 * flags - + space 0 #, a width and a precision (BigQuery's subset of
 * printf); NULL arguments print as NULL. */
static void f_format_string(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return;
    const char *f = (const char *)sqlite3_value_text(argv[0]);
    mb_buf out = {0};
    mb_buf_puts(&out, "");
    int a = 1;
    const char *err = NULL;
    while (*f && !err) {
        if (*f != '%') {
            mb_buf_putc(&out, *f++);
            continue;
        }
        if (f[1] == '%') {
            mb_buf_putc(&out, '%');
            f += 2;
            continue;
        }
        char spec[32];
        size_t n = 0;
        spec[n++] = *f++;
        while (*f && strchr("-+ 0#", *f) && n < 8) spec[n++] = *f++;
        if (*f == '\'') {
            err = "FORMAT: the ' flag is not supported by this emulator";
            break;
        }
        for (int d = 0; isdigit((unsigned char)*f) && d < 2; d++) spec[n++] = *f++; /* widths <= 99: fits buf */
        if (*f == '.') {
            spec[n++] = *f++;
            for (int d = 0; isdigit((unsigned char)*f) && d < 2; d++) spec[n++] = *f++;
        }
        char conv = *f ? *f++ : 0;
        if (!conv || !strchr("dixXofFeEgGstT", conv)) {
            err = "FORMAT: invalid format specifier";
            break;
        }
        if (a >= argc) {
            err = "FORMAT: too few arguments for the format string";
            break;
        }
        sqlite3_value *v = argv[a++];
        char buf[512];
        if (sqlite3_value_type(v) == SQLITE_NULL) {
            mb_buf_puts(&out, "NULL");
            continue;
        }
        if (strchr("dixXo", conv)) {
            spec[n++] = 'l';
            spec[n++] = 'l';
            spec[n++] = conv == 'i' ? 'd' : conv;
            spec[n] = 0;
            snprintf(buf, sizeof buf, spec, (long long)sqlite3_value_int64(v));
        } else if (strchr("fFeEgG", conv)) {
            spec[n++] = conv;
            spec[n] = 0;
            snprintf(buf, sizeof buf, spec, sqlite3_value_double(v));
        } else {
            spec[n++] = 's';
            spec[n] = 0;
            const char *t = (const char *)sqlite3_value_text(v);
            snprintf(buf, sizeof buf, spec, t ? t : "");
            if (t && strlen(t) >= sizeof buf && n == 2) { /* a plain %s of a long text */
                mb_buf_puts(&out, t);
                continue;
            }
        }
        mb_buf_puts(&out, buf);
    }
    if (err) {
        sqlite3_result_error(cx, err, -1);
        mb_buf_free(&out);
        return;
    }
    sqlite3_result_text(cx, out.data, (int)out.len, free);
}

static void f_error(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    sqlite3_result_error(cx, (const char *)sqlite3_value_text(argv[0]), -1);
}

/* -------------------------------------------------------- aggregates */

typedef struct agg {
    long long n;
    double sum, sumsq;
    int set, value;
} agg;

static void countif_step(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    agg *a = sqlite3_aggregate_context(cx, sizeof *a);
    if (a && sqlite3_value_type(argv[0]) != SQLITE_NULL && sqlite3_value_double(argv[0]) != 0) a->n++;
}
static void countif_inverse(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    agg *a = sqlite3_aggregate_context(cx, sizeof *a);
    if (a && sqlite3_value_type(argv[0]) != SQLITE_NULL && sqlite3_value_double(argv[0]) != 0) a->n--;
}
static void countif_value(sqlite3_context *cx)
{
    agg *a = sqlite3_aggregate_context(cx, 0);
    sqlite3_result_int64(cx, a ? a->n : 0);
}

static void stat_step(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    agg *a = sqlite3_aggregate_context(cx, sizeof *a);
    if (!a || sqlite3_value_type(argv[0]) == SQLITE_NULL) return;
    double x = sqlite3_value_double(argv[0]);
    a->n++;
    a->sum += x;
    a->sumsq += x * x;
}
static void stat_inverse(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    agg *a = sqlite3_aggregate_context(cx, sizeof *a);
    if (!a || sqlite3_value_type(argv[0]) == SQLITE_NULL) return;
    double x = sqlite3_value_double(argv[0]);
    a->n--;
    a->sum -= x;
    a->sumsq -= x * x;
}
static void stat_value(sqlite3_context *cx)
{
    agg *a = sqlite3_aggregate_context(cx, 0);
    intptr_t kind = (intptr_t)sqlite3_user_data(cx); /* 0 var_samp 1 var_pop 2 sd_samp 3 sd_pop */
    int pop = kind & 1;
    if (!a || a->n < (pop ? 1 : 2)) return;
    double mean = a->sum / (double)a->n;
    double ss = a->sumsq - a->n * mean * mean;
    if (ss < 0) ss = 0;
    double v = ss / (double)(a->n - (pop ? 0 : 1));
    sqlite3_result_double(cx, kind >= 2 ? sqrt(v) : v);
}

static void logical_step(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    agg *a = sqlite3_aggregate_context(cx, sizeof *a);
    if (!a || sqlite3_value_type(argv[0]) == SQLITE_NULL) return;
    int v = sqlite3_value_double(argv[0]) != 0;
    int is_and = sqlite3_user_data(cx) != NULL;
    if (!a->set) {
        a->set = 1;
        a->value = v;
    } else a->value = is_and ? (a->value && v) : (a->value || v);
}
static void logical_final(sqlite3_context *cx)
{
    agg *a = sqlite3_aggregate_context(cx, 0);
    if (a && a->set) sqlite3_result_int(cx, a->value);
}

typedef struct anyv {
    sqlite3_value *v;
} anyv;
static void any_step(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    (void)argc;
    anyv *a = sqlite3_aggregate_context(cx, sizeof *a);
    if (a && !a->v && sqlite3_value_type(argv[0]) != SQLITE_NULL) a->v = sqlite3_value_dup(argv[0]);
}
static void any_final(sqlite3_context *cx)
{
    anyv *a = sqlite3_aggregate_context(cx, 0);
    if (a && a->v) {
        sqlite3_result_value(cx, a->v);
        sqlite3_value_free(a->v);
    }
}

int mb_gc__sqlfn_register(sqlite3 *db, const mb_gc__sqlfn *t, size_t n, int flags)
{
    int rc = SQLITE_OK;
    for (size_t i = 0; rc == SQLITE_OK && i < n; i++)
        rc = sqlite3_create_function(db, t[i].name, t[i].nargs, flags, (void *)t[i].data, t[i].fn,
                                     NULL, NULL);
    return rc;
}

int mb_gc__udf_register(sqlite3 *db)
{
    const int F = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
    const int V = SQLITE_UTF8 | SQLITE_INNOCUOUS; /* clock readers */
    static const mb_gc__sqlfn S[] = {
        {"bq_date", 1, f_date, 0},          {"bq_date", 3, f_date, 0},
        {"bq_timestamp", 1, f_timestamp, 0}, {"bq_date_add", 3, f_add, 0},
        {"bq_date_sub", 3, f_add, ADD_SUB}, {"bq_ts_add", 3, f_add, 1},
        {"bq_ts_sub", 3, f_add, 1 | ADD_SUB}, {"bq_date_diff", 3, f_diff, 0},
        {"bq_ts_diff", 3, f_diff, 1},       {"bq_trunc", 3, f_trunc, 0},
        {"bq_extract", 2, f_extract, 0},    {"bq_format", 3, f_format, 0},
        {"bq_parse", 3, f_parse, 0},        {"bq_unix", 2, f_unix, 0},
        {"bq_from_unix", 2, f_from_unix, 0}, {"bq_cast", 3, f_cast, 0},
        {"bq_safe_divide", 2, f_safe_divide, 0}, {"bq_div", 2, f_div, 0}, {"bq_mod", 2, f_mod, 0},
        {"bq_concat", -1, f_concat, 0},     {"bq_starts_with", 2, f_starts, 0},
        {"bq_ends_with", 2, f_starts, 1},   {"bq_lpad", 2, f_pad, 0},
        {"bq_lpad", 3, f_pad, 0},           {"bq_rpad", 2, f_pad, 1},
        {"bq_rpad", 3, f_pad, 1},           {"bq_regexp", 3, f_regexp, 0},
        {"bq_regexp", 4, f_regexp, 0},      {"bq_error", 1, f_error, 0},
        {"bq_format_string", -1, f_format_string, 0}, {"bq_time", 1, f_time, 0}, {"bq_time", 3, f_time, 0}, {"bq_generate_date_array", 4, f_generate_date_array, 0},
        {"bq_time_add", 3, f_add, 2},       {"bq_time_sub", 3, f_add, 2 | ADD_SUB},
        {"bq_time_diff", 3, f_diff, 2},
    };
    int rc = mb_gc__sqlfn_register(db, S, sizeof S / sizeof *S, F);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function(db, "bq_current_date", 0, V, NULL, f_now_date, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function(db, "bq_current_timestamp", 0, V, NULL, f_now_ts, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function(db, "bq_current_time", 0, V, NULL, f_now_time, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_window_function(db, "bq_countif", 1, F, NULL, countif_step,
                                            countif_value, countif_value, countif_inverse, NULL);
    static const char *const STATS[] = {"bq_var_samp", "bq_var_pop", "bq_stddev_samp",
                                        "bq_stddev_pop"};
    for (intptr_t k = 0; rc == SQLITE_OK && k < 4; k++)
        rc = sqlite3_create_window_function(db, STATS[k], 1, F, (void *)k, stat_step, stat_value,
                                            stat_value, stat_inverse, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function(db, "bq_logical_and", 1, F, (void *)1, NULL, logical_step,
                                     logical_final);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function(db, "bq_logical_or", 1, F, NULL, NULL, logical_step,
                                     logical_final);
    if (rc == SQLITE_OK)
        rc = sqlite3_create_function(db, "bq_any_value", 1, F, NULL, NULL, any_step, any_final);
    if (rc == SQLITE_OK) rc = mb_gc__arrays_register(db);
    if (rc == SQLITE_OK) rc = mb_gc__jsonfn_register(db);
    if (rc == SQLITE_OK) rc = mb_gc__quantiles_register(db);
    if (rc == SQLITE_OK) rc = mb_gc__strfn_register(db);
    return rc;
}
