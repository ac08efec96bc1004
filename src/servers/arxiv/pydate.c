/*
 * pydate.c - the dates search_papers accepts: upstream passes date_from /
 * date_to through dateutil.parser.parse(), then replaces the time zone with
 * UTC. This reproduces parse() for the forms people write (ISO 8601 with or
 * without time and offset, YYYYMMDD, MM/DD/YYYY, "January 2024", "Jan 5,
 * 2024", "5 January 2024 10:30"): fields that are not given come from today's
 * date at midnight, a default day past the month's end is clamped, and the
 * error texts are dateutil's ("Unknown string format: x", "month must be in
 * 1..12: x", "day is out of range for month: x", "String does not contain a
 * date: x").
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "servers/arxiv/arxiv.h"

static const char *const MONTHS[] = {"jan", "feb", "mar", "apr", "may", "jun",
                                     "jul", "aug", "sep", "oct", "nov", "dec"};
static const char *const MONTHS_LONG[] = {"january", "february", "march", "april", "may",
                                          "june", "july", "august", "september", "october",
                                          "november", "december"};
static const char *const DAYS[] = {"mon", "tue", "wed", "thu", "fri", "sat", "sun",
                                   "monday", "tuesday", "wednesday", "thursday", "friday",
                                   "saturday", "sunday", NULL};

static int month_name(const char *w, size_t n)
{
    for (int i = 0; i < 12; i++) {
        if ((n == 3 && !strncasecmp(w, MONTHS[i], 3)) ||
            (n == strlen(MONTHS_LONG[i]) && !strncasecmp(w, MONTHS_LONG[i], n)) ||
            (n == 4 && i == 8 && !strncasecmp(w, "sept", 4)))
            return i + 1;
    }
    return 0;
}

static int day_name(const char *w, size_t n)
{
    for (size_t i = 0; DAYS[i]; i++)
        if (strlen(DAYS[i]) == n && !strncasecmp(w, DAYS[i], n)) return 1;
    return 0;
}

static int days_in(int y, int m)
{
    static const int d[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0)) return 29;
    return d[m - 1];
}

typedef struct fields {
    int y, m, d, H, M, S, us; /* -1 = not given */
    int ylen;
} fields;

/* hh:mm[:ss[.ffffff]] at s; returns characters used or 0. */
static size_t parse_time(const char *s, fields *f)
{
    size_t i = 0;
    int h = 0, m = 0, sec = 0, us = 0, n = 0;
    while (isdigit((unsigned char)s[i]) && n < 2) h = h * 10 + (s[i++] - '0'), n++;
    if (!n || s[i] != ':') return 0;
    i++;
    n = 0;
    while (isdigit((unsigned char)s[i]) && n < 2) m = m * 10 + (s[i++] - '0'), n++;
    if (n != 2) return 0;
    if (s[i] == ':') {
        i++;
        n = 0;
        while (isdigit((unsigned char)s[i]) && n < 2) sec = sec * 10 + (s[i++] - '0'), n++;
        if (n != 2) return 0;
        if (s[i] == '.' || s[i] == ',') {
            i++;
            int digitsn = 0;
            while (isdigit((unsigned char)s[i])) {
                if (digitsn < 6) us = us * 10 + (s[i] - '0');
                digitsn++, i++;
            }
            while (digitsn < 6) us *= 10, digitsn++;
        }
    }
    f->H = h, f->M = m, f->S = sec, f->us = us;
    return i;
}

/* A trailing "Z", "UTC", "GMT" or +HH[:MM] offset (ignored: upstream
 * replaces the zone anyway). Returns characters used. */
static size_t parse_zone(const char *s)
{
    size_t i = 0;
    while (s[i] == ' ') i++;
    if (s[i] == 'Z' || s[i] == 'z') return i + 1;
    if (!strncasecmp(s + i, "UTC", 3) || !strncasecmp(s + i, "GMT", 3)) return i + 3;
    if (s[i] == '+' || s[i] == '-') {
        size_t j = i + 1, n = 0;
        while (isdigit((unsigned char)s[j])) j++, n++;
        if (n == 2 && s[j] == ':' && isdigit((unsigned char)s[j + 1]) &&
            isdigit((unsigned char)s[j + 2]))
            return j + 3;
        if (n == 2 || n == 4) return j;
    }
    return 0;
}

static int read_num(const char *s, size_t *i, int max_digits, int *len)
{
    int v = 0, n = 0;
    while (isdigit((unsigned char)s[*i]) && n < max_digits) v = v * 10 + (s[(*i)++] - '0'), n++;
    *len = n;
    return v;
}

/* ISO-ish: YYYY[-MM[-DD]][(T| )time][zone], YYYYMMDD[Ttime], YYYY/MM/DD. */
static int parse_iso(const char *s, fields *f)
{
    size_t i = 0;
    int n;
    int y = read_num(s, &i, 8, &n);
    if (n == 8) {
        f->y = y / 10000, f->m = y / 100 % 100, f->d = y % 100, f->ylen = 4;
    } else if (n == 4) {
        f->y = y, f->ylen = 4;
        char sepc = s[i];
        if (sepc == '-' || sepc == '/' || sepc == '.') {
            i++;
            f->m = read_num(s, &i, 2, &n);
            if (!n) return 0;
            if (s[i] == sepc) {
                i++;
                f->d = read_num(s, &i, 2, &n);
                if (!n) return 0;
            }
        }
    } else {
        return 0;
    }
    if (s[i] == 'T' || s[i] == 't' || (s[i] == ' ' && isdigit((unsigned char)s[i + 1]))) {
        size_t used = parse_time(s + i + 1, f);
        if (!used) return 0;
        i += 1 + used;
    }
    i += parse_zone(s + i);
    while (s[i] == ' ') i++;
    return s[i] == '\0';
}

/* MM/DD/YYYY or MM-DD-YY (dateutil's month-first default). */
static int parse_us(const char *s, fields *f)
{
    size_t i = 0;
    int n1, n2, n3;
    int a = read_num(s, &i, 2, &n1);
    char sepc = s[i];
    if (!n1 || (sepc != '/' && sepc != '-' && sepc != '.')) return 0;
    i++;
    int b = read_num(s, &i, 2, &n2);
    if (!n2 || s[i] != sepc) return 0;
    i++;
    int c = read_num(s, &i, 4, &n3);
    if (n3 != 2 && n3 != 4) return 0;
    if (s[i] == ' ' || s[i] == 'T') {
        size_t used = parse_time(s + i + 1, f);
        if (!used) return 0;
        i += 1 + used;
    }
    i += parse_zone(s + i);
    while (s[i] == ' ') i++;
    if (s[i]) return 0;
    f->m = a, f->d = b, f->y = c, f->ylen = n3;
    return 1;
}

/* Words: [weekday,] month name, day, year and a time, in any order. */
static int parse_words(const char *s, fields *f)
{
    size_t i = 0;
    int have_month = 0;
    int nums[3], lens[3], nn = 0;
    while (s[i]) {
        if (s[i] == ' ' || s[i] == ',' || s[i] == '.' || s[i] == '-' || s[i] == '/') {
            i++;
            continue;
        }
        if (isalpha((unsigned char)s[i])) {
            size_t j = i;
            while (isalpha((unsigned char)s[j])) j++;
            int m = month_name(s + i, j - i);
            if (m && !have_month) f->m = m, have_month = 1;
            else if (!day_name(s + i, j - i) && !(j - i == 2 && !strncasecmp(s + i, "of", 2)) &&
                     !(j - i == 2 && (!strncasecmp(s + i, "st", 2) || !strncasecmp(s + i, "nd", 2) ||
                                      !strncasecmp(s + i, "rd", 2) || !strncasecmp(s + i, "th", 2))))
                return 0;
            i = j;
            continue;
        }
        if (isdigit((unsigned char)s[i])) {
            fields t = *f;
            size_t used = parse_time(s + i, &t);
            if (used) {
                *f = t;
                i += used;
                continue;
            }
            int n;
            int v = read_num(s, &i, 4, &n);
            if (isdigit((unsigned char)s[i]) || nn == 3) return 0;
            nums[nn] = v, lens[nn] = n, nn++;
            continue;
        }
        return 0;
    }
    if (!have_month) return 0;
    for (int k = 0; k < nn; k++) {
        if ((lens[k] >= 3 || nums[k] > 31) && f->y < 0) f->y = nums[k], f->ylen = lens[k];
        else if (f->d < 0) f->d = nums[k];
        else if (f->y < 0) f->y = nums[k], f->ylen = lens[k];
        else return 0;
    }
    return 1;
}

int mb_arxiv_dateutil_parse(const char *s, int64_t now, int64_t *out_us, mb_buf *err)
{
    fields f = {-1, -1, -1, -1, -1, -1, -1, 0};
    const char *p = s;
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') p++;
    if (!*p) {
        mb_buf_printf(err, "String does not contain a date: %s", s);
        return -1;
    }
    char *t = mb_arxiv_strip(p);
    int ok = parse_iso(t, &f);
    if (!ok) f = (fields){-1, -1, -1, -1, -1, -1, -1, 0}, ok = parse_us(t, &f);
    if (!ok) f = (fields){-1, -1, -1, -1, -1, -1, -1, 0}, ok = parse_words(t, &f);
    free(t);
    if (!ok) {
        mb_buf_printf(err, "Unknown string format: %s", s);
        return -1;
    }
    time_t tt = (time_t)now;
    struct tm today;
    localtime_r(&tt, &today);
    int dy = today.tm_year + 1900;
    if (f.y >= 0 && f.ylen <= 2) {
        int century = dy / 100 * 100;
        f.y += century;
        if (f.y >= dy + 50) f.y -= 100;
        else if (f.y < dy - 50) f.y += 100;
    }
    int y = f.y >= 0 ? f.y : dy;
    int m = f.m >= 0 ? f.m : today.tm_mon + 1;
    if (m < 1 || m > 12) {
        mb_buf_printf(err, "month must be in 1..12: %s", s);
        return -1;
    }
    if (y < 1 || y > 9999) {
        mb_buf_printf(err, "year %d is out of range: %s", y, s);
        return -1;
    }
    int d = f.d >= 0 ? f.d : today.tm_mday;
    if (f.d < 0 && d > days_in(y, m)) d = days_in(y, m);
    if (d < 1 || d > days_in(y, m)) {
        mb_buf_printf(err, "day is out of range for month: %s", s);
        return -1;
    }
    int H = f.H >= 0 ? f.H : 0, M = f.M >= 0 ? f.M : 0, S = f.S >= 0 ? f.S : 0;
    if (H > 23) {
        mb_buf_printf(err, "hour must be in 0..23: %s", s);
        return -1;
    }
    if (M > 59) {
        mb_buf_printf(err, "minute must be in 0..59: %s", s);
        return -1;
    }
    if (S > 59) {
        mb_buf_printf(err, "second must be in 0..59: %s", s);
        return -1;
    }
    struct tm tm = {.tm_year = y - 1900, .tm_mon = m - 1, .tm_mday = d,
                    .tm_hour = H, .tm_min = M, .tm_sec = S};
    *out_us = (int64_t)timegm(&tm) * 1000000 + (f.us > 0 ? f.us : 0);
    return 0;
}
