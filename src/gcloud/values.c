/*
 * values.c - BigQuery values in SQLite: how a JSON or CSV value of a column
 * type is stored (INT64 and BOOL as integers, FLOAT64/NUMERIC as reals,
 * DATE as "YYYY-MM-DD", TIMESTAMP and DATETIME as "YYYY-MM-DD HH:MM:SS[.f]"
 * in UTC so that text order is time order, RECORD and REPEATED as JSON),
 * and how a stored value comes back as JSON.
 */
#define _GNU_SOURCE
#include "gcloud/gcloud_int.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long mb_gc__days(int y, int m, int d)
{
    /* days from civil (Howard Hinnant's algorithm) */
    y -= m <= 2;
    long era = (y >= 0 ? y : y - 399) / 400;
    long yoe = y - era * 400;
    long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

void mb_gc__civil(long z, int *y, int *m, int *d)
{
    z += 719468;
    long era = (z >= 0 ? z : z - 146096) / 146097;
    long doe = z - era * 146097;
    long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    long yy = yoe + era * 400;
    long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    long mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = (int)(yy + (*m <= 2));
}

static int digits(const char **p, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)(*p)[i])) return 0;
        v = v * 10 + ((*p)[i] - '0');
    }
    *p += n;
    *out = v;
    return 1;
}

/* The width of a one- or two-digit field at p: 2 when two digits are there.
 * p[1] is read only after p[0] is a digit, never past the terminator. */
static int width12(const char *p) { return isdigit((unsigned char)p[0]) && isdigit((unsigned char)p[1]) ? 2 : 1; }

static int mdays(int y, int m)
{
    static const int dm[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : dm[m - 1];
}

/* "H[H]:MM[:SS[.f{1,9}]]" at *p, advancing it; the fraction in microseconds
 * (digits past the sixth dropped). -1 when it is not a valid time of day. */
static int clock_part(const char **p, int *H, int *M, int *S, long long *frac)
{
    *S = 0;
    *frac = 0;
    int nh = width12(*p);
    if (!digits(p, nh, H) || *(*p)++ != ':' || !digits(p, 2, M)) return -1;
    if (**p == ':') {
        (*p)++;
        if (!digits(p, 2, S)) return -1;
        if (**p == '.') {
            (*p)++;
            int n = 0;
            while (isdigit((unsigned char)**p)) {
                if (n < 6) *frac = *frac * 10 + (**p - '0');
                n++;
                (*p)++;
            }
            if (!n || n > 9) return -1;
            for (; n < 6; n++) *frac *= 10;
        }
    }
    return *H > 23 || *M > 59 || *S > 59 ? -1 : 0;
}

/* Parses date [time [zone]]; *has_time tells whether a time was present. */
int mb_gc__ts_parse(const char *s, long *days, long long *micros, int *has_time)
{
    const char *p = s;
    while (*p == ' ') p++;
    int y, m, d, H = 0, M = 0, S = 0;
    long long frac = 0;
    /* years of 1 to 4 digits */
    int ny = 0;
    while (isdigit((unsigned char)p[ny])) ny++;
    if (ny < 1 || ny > 4 || !digits(&p, ny, &y) || *p++ != '-') return -1;
    int nm = width12(p);
    if (!digits(&p, nm, &m) || *p++ != '-') return -1;
    int nd = width12(p);
    if (!digits(&p, nd, &d)) return -1;
    if (m < 1 || m > 12 || d < 1 || d > mdays(y, m) || y < 1) return -1;
    *has_time = 0;
    if (*p == 'T' || *p == 't' || (*p == ' ' && isdigit((unsigned char)p[1]))) {
        p++;
        if (clock_part(&p, &H, &M, &S, &frac)) return -1;
        *has_time = 1;
    }
    long off = 0; /* seconds east of UTC */
    while (*p == ' ') p++;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (!strncasecmp(p, "UTC", 3)) {
        p += 3;
    } else if (*p == '+' || *p == '-') {
        int sign = *p++ == '-' ? -1 : 1, oh, om = 0;
        int nh = width12(p);
        if (!digits(&p, nh, &oh)) return -1;
        if (*p == ':') p++;
        if (isdigit((unsigned char)*p) && !digits(&p, 2, &om)) return -1;
        off = sign * (oh * 3600L + om * 60L);
    }
    while (*p == ' ') p++;
    if (*p) return -1;
    long long t = ((long long)mb_gc__days(y, m, d) * 86400 + H * 3600 + M * 60 + S - off);
    long long dd = t >= 0 ? t / 86400 : -((-t + 86399) / 86400);
    *days = (long)dd;
    *micros = (t - dd * 86400) * 1000000LL + frac;
    return 0;
}

int mb_gc__ts_norm(const char *s, char out[40])
{
    long days;
    long long us;
    int has_time;
    if (!s || mb_gc__ts_parse(s, &days, &us, &has_time)) return -1;
    int y, m, d;
    mb_gc__civil(days, &y, &m, &d);
    long long secs = us / 1000000;
    int frac = (int)(us % 1000000);
    int n = snprintf(out, 40, "%04d-%02d-%02d %02lld:%02lld:%02lld", y, m, d, secs / 3600,
                     secs / 60 % 60, secs % 60);
    if (frac) {
        char f[8];
        snprintf(f, sizeof f, "%06d", frac);
        for (int k = 5; k > 0 && f[k] == '0'; k--) f[k] = '\0';
        snprintf(out + n, 40 - (size_t)n, ".%s", f);
    }
    return 0;
}

/* A FLOAT64 as CAST(x AS STRING) writes it: integers without a fraction,
 * else the shortest text that reads back as the same double; inf, nan. */
void mb_gc__float_text(double d, char out[40])
{
    if (isnan(d)) snprintf(out, 40, "nan");
    else if (isinf(d)) snprintf(out, 40, d > 0 ? "inf" : "-inf");
    else if (d == floor(d) && fabs(d) < 1e16) snprintf(out, 40, "%.0f", d);
    else
        for (int prec = 15; prec <= 17; prec++) {
            snprintf(out, 40, "%.*g", prec, d);
            if (strtod(out, NULL) == d) break;
        }
}

long long mb_gc__time_us(const char *s)
{
    const char *p = s;
    while (*p == ' ') p++;
    int H, M, S;
    long long frac;
    if (clock_part(&p, &H, &M, &S, &frac)) return -1;
    while (*p == ' ') p++;
    if (*p) return -1;
    return ((H * 60LL + M) * 60 + S) * 1000000 + frac;
}

void mb_gc__time_text(long long us, char out[24])
{
    us %= 86400000000LL;
    if (us < 0) us += 86400000000LL;
    long long s = us / 1000000, f = us % 1000000;
    if (f) snprintf(out, 24, "%02lld:%02lld:%02lld.%06lld", s / 3600, s / 60 % 60, s % 60, f);
    else snprintf(out, 24, "%02lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
}

int mb_gc__date_norm(const char *s, char out[16])
{
    long days;
    long long us;
    int has_time;
    if (!s || mb_gc__ts_parse(s, &days, &us, &has_time)) return -1;
    int y, m, d;
    mb_gc__civil(days, &y, &m, &d);
    snprintf(out, 16, "%04d-%02d-%02d", y, m, d);
    return 0;
}

static int bad(mb_err *err, const char *type, json_t *v)
{
    char *t = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    int rc = mb_err_set(err, MB_EINVAL, "Invalid %s value: %.100s", type, t ? t : "?");
    free(t);
    return rc;
}

/* A RECORD value checked against its fields, normalised into a new object. */
static int record_norm(json_t *v, json_t *fields, json_t **out, mb_err *err);

static int scalar_norm(json_t *v, const char *type, json_t *fields, json_t **out, mb_err *err)
{
    *out = NULL;
    if (json_is_null(v)) {
        *out = json_null();
        return MB_OK;
    }
    if (!strcmp(type, "RECORD")) return record_norm(v, fields, out, err);
    if (!strcmp(type, "INTEGER")) {
        if (json_is_integer(v)) *out = json_incref(v);
        else if (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)) &&
                 fabs(json_real_value(v)) < 9.2e18)
            *out = json_integer((json_int_t)json_real_value(v));
        else if (json_is_string(v)) {
            char *end;
            errno = 0;
            long long x = strtoll(json_string_value(v), &end, 10);
            if (!errno && *json_string_value(v) && !*end) *out = json_integer(x);
        }
    } else if (!strcmp(type, "FLOAT") || !strcmp(type, "NUMERIC") || !strcmp(type, "BIGNUMERIC")) {
        if (json_is_number(v)) *out = json_real(json_number_value(v));
        else if (json_is_string(v)) {
            char *end;
            const char *s = json_string_value(v);
            double x = strtod(s, &end);
            if (*s && !*end) *out = json_real(x);
        }
    } else if (!strcmp(type, "BOOLEAN")) {
        if (json_is_boolean(v)) *out = json_integer(json_is_true(v));
        else if (json_is_string(v)) {
            const char *s = json_string_value(v);
            if (!strcasecmp(s, "true") || !strcmp(s, "1")) *out = json_integer(1);
            else if (!strcasecmp(s, "false") || !strcmp(s, "0")) *out = json_integer(0);
        } else if (json_is_integer(v) && (json_integer_value(v) == 0 || json_integer_value(v) == 1))
            *out = json_incref(v);
    } else if (!strcmp(type, "TIMESTAMP") || !strcmp(type, "DATETIME")) {
        char buf[40];
        if (json_is_string(v) && !mb_gc__ts_norm(json_string_value(v), buf)) *out = json_string(buf);
        else if (json_is_number(v) && !strcmp(type, "TIMESTAMP")) {
            double t = json_number_value(v);
            long long us = (long long)llround(t * 1e6);
            long days = (long)(us >= 0 ? us / 86400000000LL : -((-us + 86399999999LL) / 86400000000LL));
            long long rem = us - (long long)days * 86400000000LL;
            int y, m, d;
            mb_gc__civil(days, &y, &m, &d);
            char s[48];
            snprintf(s, sizeof s, "%04d-%02d-%02d %02lld:%02lld:%02lld.%06lld", y, m, d,
                     rem / 3600000000LL, rem / 60000000LL % 60, rem / 1000000 % 60, rem % 1000000);
            if (!mb_gc__ts_norm(s, buf)) *out = json_string(buf);
        }
    } else if (!strcmp(type, "DATE")) {
        char buf[16];
        if (json_is_string(v) && strlen(json_string_value(v)) <= 10 &&
            !mb_gc__date_norm(json_string_value(v), buf))
            *out = json_string(buf);
    } else if (!strcmp(type, "JSON")) {
        *out = json_incref(v);
    } else { /* STRING, BYTES, TIME, GEOGRAPHY */
        if (json_is_string(v)) *out = json_incref(v);
        else if (!strcmp(type, "STRING") && json_is_number(v)) {
            char *t = json_dumps(v, JSON_ENCODE_ANY);
            *out = json_string(t);
            free(t);
        }
    }
    if (!*out) return bad(err, !strcmp(type, "INTEGER") ? "INT64" : type, v);
    return MB_OK;
}

static int field_norm(json_t *v, json_t *f, json_t **out, mb_err *err)
{
    const char *type = json_string_value(json_object_get(f, "type"));
    const char *mode = json_string_value(json_object_get(f, "mode"));
    json_t *sub = json_object_get(f, "fields");
    if (mode && !strcmp(mode, "REPEATED")) {
        if (json_is_null(v)) {
            *out = json_array();
            return MB_OK;
        }
        if (!json_is_array(v))
            return mb_err_set(err, MB_EINVAL, "Field %s is REPEATED: a list is expected",
                              json_string_value(json_object_get(f, "name")));
        json_t *arr = json_array();
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) {
            json_t *n;
            int rc = scalar_norm(e, type, sub, &n, err);
            if (rc) {
                json_decref(arr);
                return rc;
            }
            json_array_append_new(arr, n);
        }
        *out = arr;
        return MB_OK;
    }
    if (json_is_null(v) && mode && !strcmp(mode, "REQUIRED"))
        return mb_err_set(err, MB_EINVAL, "Missing required field: %s.",
                          json_string_value(json_object_get(f, "name")));
    return scalar_norm(v, type, sub, out, err);
}

static int record_norm(json_t *v, json_t *fields, json_t **out, mb_err *err)
{
    if (!json_is_object(v)) return bad(err, "RECORD", v);
    json_t *o = json_object();
    size_t i;
    json_t *f;
    json_array_foreach(fields, i, f) {
        const char *name = json_string_value(json_object_get(f, "name"));
        json_t *x = json_object_get(v, name), *n;
        int rc = field_norm(x ? x : json_null(), f, &n, err);
        if (rc) {
            json_decref(o);
            return rc;
        }
        if (!strcmp(json_string_value(json_object_get(f, "type")), "BOOLEAN") && json_is_integer(n)) {
            json_t *b = json_boolean(json_integer_value(n));
            json_decref(n);
            n = b;
        }
        json_object_set_new(o, name, n);
    }
    const char *k;
    json_t *x;
    json_object_foreach(v, k, x) {
        int known = 0;
        json_array_foreach(fields, i, f) known |= !strcmp(k, json_string_value(json_object_get(f, "name")));
        if (!known) {
            json_decref(o);
            return mb_err_set(err, MB_EINVAL, "no such field: %.100s.", k);
        }
    }
    *out = o;
    return MB_OK;
}

int mb_gc__bind_value(sqlite3_stmt *st, int i, json_t *v, json_t *field, mb_err *err)
{
    json_t *n;
    int rc = field_norm(v ? v : json_null(), field, &n, err);
    if (rc) return rc;
    if (json_is_null(n)) sqlite3_bind_null(st, i);
    else if (json_is_array(n) || json_is_object(n) ||
             !strcmp(json_string_value(json_object_get(field, "type")), "JSON")) {
        char *t = json_dumps(n, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
        sqlite3_bind_text(st, i, t, -1, free);
    } else if (json_is_integer(n)) sqlite3_bind_int64(st, i, json_integer_value(n));
    else if (json_is_real(n)) sqlite3_bind_double(st, i, json_real_value(n));
    else sqlite3_bind_text(st, i, json_string_value(n), -1, SQLITE_TRANSIENT);
    json_decref(n);
    return MB_OK;
}

int mb_gc__bind_text(sqlite3_stmt *st, int i, const char *s, size_t n, json_t *field, mb_err *err)
{
    const char *type = json_string_value(json_object_get(field, "type"));
    if (!n && strcmp(type, "STRING")) {
        sqlite3_bind_null(st, i);
        return MB_OK;
    }
    if (!strcmp(type, "STRING") || !strcmp(type, "BYTES")) {
        sqlite3_bind_text(st, i, s, (int)n, SQLITE_TRANSIENT);
        return MB_OK;
    }
    json_t *v = json_stringn(s, n);
    if (!v) return mb_err_set(err, MB_EINVAL, "CSV value is not valid UTF-8");
    int rc = mb_gc__bind_value(st, i, v, field, err);
    json_decref(v);
    return rc;
}

json_t *mb_gc__column_json(sqlite3_stmt *st, int i, const char *type, const char *mode)
{
    int t = sqlite3_column_type(st, i);
    if (t == SQLITE_NULL) return json_null();
    if ((mode && !strcmp(mode, "REPEATED")) || (type && !strcmp(type, "RECORD"))) {
        json_t *v = json_loads((const char *)sqlite3_column_text(st, i), JSON_DECODE_ANY, NULL);
        return v ? v : json_null();
    }
    if (type && !strcmp(type, "BOOLEAN")) return json_boolean(sqlite3_column_int64(st, i) != 0);
    if (type && !strcmp(type, "INTEGER") && t != SQLITE_TEXT)
        return json_integer(sqlite3_column_int64(st, i));
    if (type && (!strcmp(type, "FLOAT") || !strcmp(type, "NUMERIC")) && t != SQLITE_TEXT)
        return json_real(sqlite3_column_double(st, i));
    switch (t) {
    case SQLITE_INTEGER: return json_integer(sqlite3_column_int64(st, i));
    case SQLITE_FLOAT: return json_real(sqlite3_column_double(st, i));
    case SQLITE_BLOB: {
        /* BYTES come back base64 as the REST API sends them */
        static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        const unsigned char *p = sqlite3_column_blob(st, i);
        size_t n = (size_t)sqlite3_column_bytes(st, i);
        mb_buf b = {0};
        for (size_t k = 0; k < n; k += 3) {
            unsigned v = (unsigned)p[k] << 16 | (k + 1 < n ? (unsigned)p[k + 1] << 8 : 0) |
                         (k + 2 < n ? p[k + 2] : 0);
            mb_buf_putc(&b, b64[v >> 18 & 63]);
            mb_buf_putc(&b, b64[v >> 12 & 63]);
            mb_buf_putc(&b, k + 1 < n ? b64[v >> 6 & 63] : '=');
            mb_buf_putc(&b, k + 2 < n ? b64[v & 63] : '=');
        }
        json_t *s = json_stringn(b.data ? b.data : "", b.len);
        mb_buf_free(&b);
        return s;
    }
    default: {
        const char *s = (const char *)sqlite3_column_text(st, i);
        size_t n = (size_t)sqlite3_column_bytes(st, i);
        json_t *v = json_stringn(s, n);
        if (!v) {
            size_t m;
            char *r = mb_utf8_repair(s, n, &m);
            v = json_stringn(r, m);
            free(r);
        }
        return v;
    }
    }
}

void mb_gc_isoformat(int64_t ms, char out[48])
{
    long days = (long)(ms >= 0 ? ms / 86400000LL : -((-ms + 86399999LL) / 86400000LL));
    int64_t r = ms - (int64_t)days * 86400000LL;
    int y, m, d;
    mb_gc__civil(days, &y, &m, &d);
    int n = snprintf(out, 48, "%04d-%02d-%02dT%02d:%02d:%02d", y, m, d, (int)(r / 3600000),
                     (int)(r / 60000 % 60), (int)(r / 1000 % 60));
    if (r % 1000) n += snprintf(out + n, 48 - (size_t)n, ".%03d000", (int)(r % 1000));
    snprintf(out + n, 48 - (size_t)n, "+00:00");
}

int mb_gc_parse_ms(const char *s, int64_t *out)
{
    long days;
    long long us;
    int has_time;
    if (!s || mb_gc__ts_parse(s, &days, &us, &has_time)) return -1;
    *out = (int64_t)days * 86400000LL + us / 1000;
    return 0;
}

void mb_gc_py_datetime(mb_buf *out, const char *value, const char *type)
{
    long days;
    long long us;
    int has_time;
    unsigned h, mi, se, frac = 0;
    int nf = 0;
    if (!strcmp(type, "TIME") && sscanf(value, "%2u:%2u:%2u%n", &h, &mi, &se, &nf) == 3) {
        if (value[nf] == '.') sscanf(value + nf + 1, "%6u", &frac);
        mb_buf_printf(out, "datetime.time(%u, %u", h, mi);
        if (se || frac) mb_buf_printf(out, ", %u", se);
        if (frac) mb_buf_printf(out, ", %u", frac);
        mb_buf_puts(out, ")");
        return;
    }
    if (mb_gc__ts_parse(value, &days, &us, &has_time)) {
        mb_buf_printf(out, "'%s'", value);
        return;
    }
    int y, m, d;
    mb_gc__civil(days, &y, &m, &d);
    if (!strcmp(type, "DATE")) {
        mb_buf_printf(out, "datetime.date(%d, %d, %d)", y, m, d);
        return;
    }
    long long s = us / 1000000, f = us % 1000000;
    mb_buf_printf(out, "datetime.datetime(%d, %d, %d, %lld, %lld", y, m, d, s / 3600, s / 60 % 60);
    if (s % 60 || f) mb_buf_printf(out, ", %lld", s % 60);
    if (f) mb_buf_printf(out, ", %lld", f);
    mb_buf_puts(out, strcmp(type, "TIMESTAMP") ? ")" : ", tzinfo=datetime.timezone.utc)");
}
