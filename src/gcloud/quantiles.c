/*
 * quantiles.c - GoogleSQL's quantile functions on SQLite:
 *   bq_percentile(x, p, disc)   PERCENTILE_CONT (disc 0: linear interpolation
 *                               between the neighbouring values) and
 *                               PERCENTILE_DISC (disc 1: the first value whose
 *                               cumulative distribution reaches p), window
 *                               functions over the partition; NULLs ignored;
 *                               p outside [0, 1] is BigQuery's error;
 *   bq_approx_quantiles(x, n)   APPROX_QUANTILES: n + 1 boundaries of the
 *                               sorted non-NULL values (minimum, the values at
 *                               ranks floor(i * (N - 1) / n), maximum), as an
 *                               ARRAY. BigQuery's answer is approximate; on
 *                               the small inputs its documentation shows it is
 *                               this one.
 */
#define _GNU_SOURCE
#include "gcloud/gcloud_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define JSON_SUBTYPE 74
#define QMAX 10000000

typedef struct qstate {
    double *v;  /* values in arrival order */
    size_t n, cap, head;
    int is_int; /* all values were integers (APPROX_QUANTILES keeps INT64) */
    int seen;
    double p;
    int disc;
    long long buckets;
    int bad;
    double *cache; /* the values sorted, while no row came or went */
    size_t cache_n;
    int fresh;
} qstate;

static int push(qstate *q, double d)
{
    if (q->n - q->head >= QMAX) return -1;
    if (q->n == q->cap) {
        if (q->head > 0) { /* reuse what inverse removed */
            memmove(q->v, q->v + q->head, (q->n - q->head) * sizeof *q->v);
            q->n -= q->head;
            q->head = 0;
        }
        if (q->n == q->cap) {
            q->cap = q->cap ? q->cap * 2 : 64;
            q->v = mb_realloc(q->v, q->cap * sizeof *q->v);
        }
    }
    q->v[q->n++] = d;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* A sorted copy of the values held; *count gets how many. */
static double *sorted(qstate *q, size_t *count)
{
    *count = q->n - q->head;
    if (!*count) return NULL;
    double *s = mb_malloc(*count * sizeof *s);
    memcpy(s, q->v + q->head, *count * sizeof *s);
    qsort(s, *count, sizeof *s, cmp_double);
    return s;
}

static void pct_step(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    qstate *q = sqlite3_aggregate_context(cx, sizeof *q);
    if (!q || argc != 3) return;
    if (!q->seen) {
        q->seen = 1;
        q->disc = sqlite3_value_int(argv[2]);
        q->p = sqlite3_value_double(argv[1]);
        if (sqlite3_value_type(argv[1]) == SQLITE_NULL || !(q->p >= 0 && q->p <= 1)) q->bad = 1;
    }
    if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return;
    if (sqlite3_value_type(argv[0]) == SQLITE_TEXT || sqlite3_value_type(argv[0]) == SQLITE_BLOB) q->bad = 3;
    if (sqlite3_value_type(argv[0]) != SQLITE_INTEGER) q->is_int = -1;
    else if (!q->is_int) q->is_int = 1;
    if (push(q, sqlite3_value_double(argv[0]))) q->bad = 2;
    q->fresh = 0;
}

static void pct_inverse(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    qstate *q = sqlite3_aggregate_context(cx, 0);
    if (!q || argc != 3 || sqlite3_value_type(argv[0]) == SQLITE_NULL) return;
    if (q->head < q->n) q->head++;
    q->fresh = 0;
}

static void pct_value(sqlite3_context *cx)
{
    qstate *q = sqlite3_aggregate_context(cx, 0);
    if (q && q->bad == 1) {
        sqlite3_result_error(cx, "Percentile argument must be in [0, 1]", -1);
        return;
    }
    if (q && q->bad == 3) {
        sqlite3_result_error(cx, "Unsupported: PERCENTILE_CONT/PERCENTILE_DISC of non-numeric values is not "
                                 "supported by this emulator", -1);
        return;
    }
    if (q && q->bad == 2) {
        sqlite3_result_error(cx, "Too many values for PERCENTILE_CONT", -1);
        return;
    }
    if (!q) {
        sqlite3_result_null(cx);
        return;
    }
    if (!q->fresh) {
        free(q->cache);
        q->cache = sorted(q, &q->cache_n);
        q->fresh = 1;
    }
    size_t n = q->cache_n;
    double *s = q->cache;
    if (!n) {
        sqlite3_result_null(cx);
        return;
    }
    if (q->disc) {
        /* the first value whose cumulative distribution (rank / n) is >= p */
        size_t k = (size_t)ceil(q->p * (double)n);
        double d = s[k ? k - 1 : 0];
        if (q->is_int == 1) sqlite3_result_int64(cx, (sqlite3_int64)d);
        else sqlite3_result_double(cx, d);
    } else {
        double pos = q->p * (double)(n - 1);
        size_t lo = (size_t)floor(pos), hi = (size_t)ceil(pos);
        sqlite3_result_double(cx, s[lo] + (s[hi] - s[lo]) * (pos - (double)lo));
    }
}

static void pct_final(sqlite3_context *cx)
{
    qstate *q = sqlite3_aggregate_context(cx, 0);
    pct_value(cx);
    if (q) {
        free(q->v);
        free(q->cache);
    }
}

static void aq_step(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    qstate *q = sqlite3_aggregate_context(cx, sizeof *q);
    if (!q || argc != 2) return;
    if (!q->seen) {
        q->seen = 1;
        q->is_int = 1;
        q->buckets = sqlite3_value_int64(argv[1]);
        if (sqlite3_value_type(argv[1]) != SQLITE_INTEGER || q->buckets < 1 || q->buckets > 100000) q->bad = 1;
    }
    int t = sqlite3_value_type(argv[0]);
    if (t == SQLITE_NULL) return;
    if (t != SQLITE_INTEGER) q->is_int = 0;
    if (push(q, sqlite3_value_double(argv[0]))) q->bad = 2;
}

static void aq_final(sqlite3_context *cx)
{
    qstate *q = sqlite3_aggregate_context(cx, 0);
    if (!q) {
        sqlite3_result_null(cx);
        return;
    }
    if (q->bad == 1) {
        sqlite3_result_error(cx, "APPROX_QUANTILES: number must be in [1, 100000]", -1);
    } else if (q->bad == 2) {
        sqlite3_result_error(cx, "Too many values for APPROX_QUANTILES", -1);
    } else {
        size_t n = 0;
        double *s = sorted(q, &n);
        if (!n) {
            sqlite3_result_null(cx);
        } else {
            json_t *a = json_array();
            for (long long i = 0; i <= q->buckets; i++) {
                double d = s[(size_t)((unsigned long long)i * (n - 1) / (unsigned long long)q->buckets)];
                json_array_append_new(a, q->is_int ? json_integer((json_int_t)d) : json_real(d));
            }
            char *t = json_dumps(a, JSON_COMPACT);
            json_decref(a);
            sqlite3_result_text(cx, t, -1, free);
            sqlite3_result_subtype(cx, JSON_SUBTYPE);
        }
        free(s);
    }
    free(q->v);
}

int mb_gc__quantiles_register(sqlite3 *db)
{
    const int F = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
    int rc = sqlite3_create_window_function(db, "bq_percentile", 3, F, NULL, pct_step, pct_final, pct_value,
                                            pct_inverse, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_create_function(db, "bq_approx_quantiles", 2, F, NULL, NULL, aq_step, aq_final);
    return rc;
}
