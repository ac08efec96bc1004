/*
 * sqlerr.c - SQLite's messages about a translated query, as BigQuery words
 * the same problem: an unknown column is "Unrecognized name: x" (or "Name x
 * not found inside t"), an ambiguous one "Column name x is ambiguous", a
 * tuple used as a value is named as unsupported. Messages of the layer's own
 * functions (BigQuery's texts already) pass unchanged.
 */
#include "gcloud/gcloud_int.h"

#include <stdio.h>
#include <string.h>

int mb_gc__sql_fail(mb_gc *gc, mb_err *err)
{
    const char *m = sqlite3_errmsg(gc->db);
    static const char NOCOL[] = "no such column: ", AMBIG[] = "ambiguous column name: ";
    if (!strncmp(m, NOCOL, sizeof NOCOL - 1)) {
        const char *name = m + sizeof NOCOL - 1, *dot = strrchr(name, '.');
        if (dot) return mb_err_set(err, MB_EINVAL, "Name %s not found inside %.*s", dot + 1, (int)(dot - name), name);
        return mb_err_set(err, MB_EINVAL, "Unrecognized name: %s", name);
    }
    if (!strncmp(m, AMBIG, sizeof AMBIG - 1))
        return mb_err_set(err, MB_EINVAL, "Column name %s is ambiguous", m + sizeof AMBIG - 1);
    if (!strcmp(m, "row value misused"))
        return mb_err_set(err, MB_EINVAL, "Unsupported: tuple STRUCT values (a, b) outside comparisons are not "
                                          "supported by this emulator (write STRUCT(a, b))");
    return mb_err_set(err, MB_EINVAL, "%s", m);
}
