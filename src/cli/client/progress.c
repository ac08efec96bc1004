/*
 * progress.c - the progress bar of push and pull: bytes done, total, rate,
 * redrawn on stderr at most ten times a second, only when stdout is a
 * terminal (mb_cl.progress).
 */
#include "cli/client/client.h"

#include <stdio.h>
#include <string.h>

void mb_cl_human_bytes(double n, char out[32])
{
    static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (n >= 1024 && u < 4) {
        n /= 1024;
        u++;
    }
    if (u == 0) snprintf(out, 32, "%.0f %s", n, units[u]);
    else snprintf(out, 32, "%.1f %s", n, units[u]);
}

void mb_cl_bar_draw(mb_cl_bar *bar, uint64_t done, uint64_t total, int final)
{
    int64_t now = mb_mono_ms();
    if (!bar->started_ms) bar->started_ms = now;
    if (!final && bar->shown && now - bar->drawn_ms < 100) return;
    bar->drawn_ms = now;
    bar->shown = 1;
    double secs = (double)(now - bar->started_ms) / 1000.0;
    double rate = secs > 0.05 ? (double)done / secs : 0;
    char d[32], t[32], r[32];
    mb_cl_human_bytes((double)done, d);
    mb_cl_human_bytes(rate, r);
    char line[160];
    if (total > 0) {
        uint64_t shown = done > total ? total : done;
        int width = 24, fill = (int)((double)shown * width / (double)total);
        char bars[32];
        memset(bars, '#', (size_t)fill);
        memset(bars + fill, '.', (size_t)(width - fill));
        bars[width] = '\0';
        mb_cl_human_bytes((double)total, t);
        snprintf(line, sizeof line, "%-5s [%s] %3d%%  %s / %s  %s/s", bar->label, bars,
                 (int)((double)shown * 100 / (double)total), d, t, r);
    } else {
        snprintf(line, sizeof line, "%-5s %s  %s/s", bar->label, d, r);
    }
    fprintf(stderr, "\r%-78s%s", line, final ? "\n" : "");
    fflush(stderr);
}
