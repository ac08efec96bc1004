/*
 * expo.c - the Prometheus text exposition format (version 0.0.4): family
 * headers, samples, escaped label values.
 */
#include "metrics/metrics.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

void mb_expo_family(mb_buf *out, const char *name, const char *type, const char *help)
{
    mb_buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void mb_expo_label_value(mb_buf *out, const char *s)
{
    size_t n = strlen(s);
    char *fixed = mb_utf8_valid(s, n) ? NULL : mb_utf8_repair(s, n, &n);
    const char *v = fixed ? fixed : s;
    for (size_t i = 0; i < n; i++) {
        if (v[i] == '\\') mb_buf_puts(out, "\\\\");
        else if (v[i] == '"') mb_buf_puts(out, "\\\"");
        else if (v[i] == '\n') mb_buf_puts(out, "\\n");
        else mb_buf_putc(out, v[i]);
    }
    free(fixed);
}

static void head(mb_buf *out, const char *name, const char *const *labels)
{
    mb_buf_puts(out, name);
    if (!labels || !labels[0]) return;
    mb_buf_putc(out, '{');
    for (size_t i = 0; labels[i] && labels[i + 1]; i += 2) {
        if (i) mb_buf_putc(out, ',');
        mb_buf_printf(out, "%s=\"", labels[i]);
        mb_expo_label_value(out, labels[i + 1]);
        mb_buf_putc(out, '"');
    }
    mb_buf_putc(out, '}');
}

void mb_expo_sample(mb_buf *out, const char *name, const char *const *labels, double value)
{
    head(out, name, labels);
    if (isnan(value)) mb_buf_puts(out, " NaN\n");
    else if (isinf(value)) mb_buf_puts(out, value > 0 ? " +Inf\n" : " -Inf\n");
    else mb_buf_printf(out, " %.17g\n", value);
}

void mb_expo_sample_u64(mb_buf *out, const char *name, const char *const *labels,
                        uint64_t value)
{
    head(out, name, labels);
    mb_buf_printf(out, " %llu\n", (unsigned long long)value);
}
