/*
 * timefmt.c - clocks and the ISO 8601 timestamps the API prints.
 */
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

double mb_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int64_t mb_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void mb_iso8601(double t, char out[40])
{
    time_t sec = (time_t)t;
    long usec = (long)((t - (double)sec) * 1e6);
    if (usec < 0) usec = 0;
    if (usec > 999999) usec = 999999;
    struct tm tm;
    localtime_r(&sec, &tm);
    long off = tm.tm_gmtoff;
    char sign = off < 0 ? '-' : '+';
    if (off < 0) off = -off;
    char date[24];
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, 40, "%.19s.%06ld%c%02d:%02d", date, usec, sign, (int)(off / 3600) % 100,
             (int)((off % 3600) / 60));
}
