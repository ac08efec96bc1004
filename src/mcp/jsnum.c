/*
 * jsnum.c - JavaScript's number and date formatting: Number#toString (the
 * shortest round-trip digits, laid out per ECMA-262 Number::toString),
 * Number#toFixed (exact decimal value, ties rounded up) and Date#toString.
 */
#include "mcp/mcp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Shortest decimal digits of d > 0: digits in `dig` (no dot), returns the
 * exponent n with d = 0.DIG x 10^n. */
static int shortest(double d, char dig[32])
{
    char e[48];
    int p = 1;
    for (; p <= 17; p++) {
        snprintf(e, sizeof e, "%.*e", p - 1, d);
        if (strtod(e, NULL) == d) break;
    }
    char *ep = strchr(e, 'e');
    int exp10 = atoi(ep + 1);
    size_t k = 0;
    for (char *c = e; c < ep; c++)
        if (*c >= '0' && *c <= '9') dig[k++] = *c;
    while (k > 1 && dig[k - 1] == '0') k--;
    dig[k] = '\0';
    return exp10 + 1;
}

char *mb_js_number(double d)
{
    if (isnan(d)) return mb_strdup("NaN");
    if (isinf(d)) return mb_strdup(d > 0 ? "Infinity" : "-Infinity");
    if (d == 0) return mb_strdup("0");
    mb_buf b = {0};
    if (d < 0) {
        mb_buf_putc(&b, '-');
        d = -d;
    }
    char dig[32];
    int n = shortest(d, dig);
    int k = (int)strlen(dig);
    if (k <= n && n <= 21) {
        mb_buf_puts(&b, dig);
        for (int i = 0; i < n - k; i++) mb_buf_putc(&b, '0');
    } else if (0 < n && n <= 21) {
        mb_buf_append(&b, dig, (size_t)n);
        mb_buf_putc(&b, '.');
        mb_buf_puts(&b, dig + n);
    } else if (-6 < n && n <= 0) {
        mb_buf_puts(&b, "0.");
        for (int i = 0; i < -n; i++) mb_buf_putc(&b, '0');
        mb_buf_puts(&b, dig);
    } else {
        int e = n - 1;
        mb_buf_putc(&b, dig[0]);
        if (k > 1) {
            mb_buf_putc(&b, '.');
            mb_buf_puts(&b, dig + 1);
        }
        mb_buf_printf(&b, "e%c%d", e < 0 ? '-' : '+', e < 0 ? -e : e);
    }
    return mb_buf_steal(&b);
}

char *mb_js_to_fixed(double d, int digits)
{
    if (isnan(d)) return mb_strdup("NaN");
    if (fabs(d) >= 1e21 || isinf(d)) return mb_js_number(d);
    /* glibc prints the exact binary value; round half up on it by hand. */
    char exact[1200];
    snprintf(exact, sizeof exact, "%.1074f", fabs(d));
    char *dot = strchr(exact, '.');
    size_t ip = (size_t)(dot - exact);
    /* Work on "intpart" + first `digits` fraction digits as one digit run. */
    mb_buf run = {0};
    mb_buf_append(&run, exact, ip);
    mb_buf_append(&run, dot + 1, (size_t)digits);
    char next = dot[1 + digits];
    if (next >= '5') {
        size_t i = run.len;
        while (i > 0) {
            if (run.data[i - 1] == '9') {
                run.data[--i] = '0';
                continue;
            }
            run.data[i - 1]++;
            break;
        }
        if (i == 0) {
            mb_buf carry = {0};
            mb_buf_putc(&carry, '1');
            mb_buf_append(&carry, run.data, run.len);
            mb_buf_free(&run);
            run = carry;
        }
    }
    size_t intlen = run.len - (size_t)digits;
    mb_buf out = {0};
    int neg = d < 0;
    if (neg) mb_buf_putc(&out, '-'); /* (-0.001).toFixed(2) is "-0.00" */
    mb_buf_append(&out, run.data, intlen);
    if (digits > 0) {
        mb_buf_putc(&out, '.');
        mb_buf_append(&out, run.data + intlen, (size_t)digits);
    }
    mb_buf_free(&run);
    return mb_buf_steal(&out);
}

/* ICU's long names for the zones a sandbox is likely to run in. */
static const char *zone_long_name(const char *abbr, long off)
{
    static const struct {
        const char *abbr;
        const char *name;
    } names[] = {
        {"UTC", "Coordinated Universal Time"},   {"GMT", "Greenwich Mean Time"},
        {"BST", "British Summer Time"},          {"CET", "Central European Standard Time"},
        {"CEST", "Central European Summer Time"}, {"EET", "Eastern European Standard Time"},
        {"EEST", "Eastern European Summer Time"}, {"WET", "Western European Standard Time"},
        {"WEST", "Western European Summer Time"}, {"EST", "Eastern Standard Time"},
        {"EDT", "Eastern Daylight Time"},        {"CST", "Central Standard Time"},
        {"CDT", "Central Daylight Time"},        {"MST", "Mountain Standard Time"},
        {"MDT", "Mountain Daylight Time"},       {"PST", "Pacific Standard Time"},
        {"PDT", "Pacific Daylight Time"},        {"JST", "Japan Standard Time"},
        {"KST", "Korean Standard Time"},         {"IST", "India Standard Time"},
    };
    if (abbr && (!strcmp(abbr, "UTC") || !strcmp(abbr, "GMT")) && off == 0)
        return !strcmp(abbr, "GMT") ? "Greenwich Mean Time" : "Coordinated Universal Time";
    for (size_t i = 0; abbr && i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(abbr, names[i].abbr)) return names[i].name;
    return NULL;
}

char *mb_js_date_string(double epoch_seconds)
{
    static const char *days[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
    static const char *months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    time_t t = (time_t)floor(epoch_seconds);
    struct tm tm;
    if (!localtime_r(&t, &tm)) return mb_strdup("Invalid Date");
    long off = tm.tm_gmtoff;
    long aoff = off < 0 ? -off : off;
    const char *name = zone_long_name(tm.tm_zone, off);
    char zone[64];
    if (name) snprintf(zone, sizeof zone, "%s", name);
    else if (off == 0) snprintf(zone, sizeof zone, "GMT");
    else snprintf(zone, sizeof zone, "GMT%c%02ld:%02ld", off < 0 ? '-' : '+', aoff / 3600, aoff % 3600 / 60);
    int year = tm.tm_year + 1900;
    char ybuf[16];
    if (year >= 0) snprintf(ybuf, sizeof ybuf, "%04d", year);
    else snprintf(ybuf, sizeof ybuf, "-%06d", -year);
    return mb_asprintf("%s %s %02d %s %02d:%02d:%02d GMT%c%02ld%02ld (%s)", days[tm.tm_wday],
                       months[tm.tm_mon], tm.tm_mday, ybuf, tm.tm_hour, tm.tm_min, tm.tm_sec,
                       off < 0 ? '-' : '+', aoff / 3600, aoff % 3600 / 60, zone);
}
