/*
 * clock.c - a project's clock. Every sandbox's project has its own "now":
 *   real     the host's time (the default);
 *   running  the host's time shifted by an offset (a sandbox that starts on
 *            a given day and whose time then runs);
 *   frozen   one fixed instant.
 * It is kept in the project database (__meta keys clock_mode, clock_ms), so
 * the MCP server inside the sandbox, the daemon and the REST facade see the
 * same clock, a snapshot (initialize) keeps it and a reset restores it.
 *
 * Everything the emulator stamps (table and dataset creation, job times,
 * object timeCreated / updated, log entry timestamps, operations) and the
 * GoogleSQL clock functions (CURRENT_DATE / TIMESTAMP / DATETIME / TIME,
 * udf.c) read it. Within one query the clock stands still, as BigQuery's
 * CURRENT_TIMESTAMP() does for a statement: mb_gc__clock_pin.
 *
 * The UDFs only have their SQLite connection, so open handles are listed
 * here (connection -> handle) under a mutex.
 */
#define _GNU_SOURCE
#include "gcloud/gcloud_int.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

enum { CLOCK_REAL, CLOCK_RUNNING, CLOCK_FROZEN };

static const char *const MODES[] = {"real", "running", "frozen"};

int64_t mb_gc_now_ms(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

int64_t mb_gc_clock_ms(const mb_gc *gc)
{
    if (!gc) return mb_gc_now_ms();
    if (gc->clock_pinned) return gc->clock_pinned;
    switch (gc->clock_mode) {
    case CLOCK_FROZEN: return gc->clock_ms;
    case CLOCK_RUNNING: return mb_gc_now_ms() + gc->clock_ms;
    default: return mb_gc_now_ms();
    }
}

void mb_gc__clock_pin(mb_gc *gc, int on)
{
    /* nested queries keep the outermost instant */
    if (on && gc->clock_pin_depth++ == 0) gc->clock_pinned = mb_gc_clock_ms(gc);
    if (!on && gc->clock_pin_depth > 0 && --gc->clock_pin_depth == 0) gc->clock_pinned = 0;
}

/* ------------------------------------------------- connection -> handle */

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static mb_gc **g_open;
static size_t g_n, g_cap;

static void registry_add(mb_gc *gc)
{
    pthread_mutex_lock(&g_lock);
    if (g_n == g_cap) {
        g_cap = g_cap ? g_cap * 2 : 16;
        g_open = mb_realloc(g_open, g_cap * sizeof *g_open);
    }
    g_open[g_n++] = gc;
    pthread_mutex_unlock(&g_lock);
}

void mb_gc__clock_forget(mb_gc *gc)
{
    pthread_mutex_lock(&g_lock);
    for (size_t i = 0; i < g_n; i++)
        if (g_open[i] == gc) {
            g_open[i] = g_open[--g_n];
            break;
        }
    if (!g_n) {
        free(g_open);
        g_open = NULL;
        g_cap = 0;
    }
    pthread_mutex_unlock(&g_lock);
}

int64_t mb_gc__clock_of_db(sqlite3 *db)
{
    int64_t now = 0;
    int found = 0;
    pthread_mutex_lock(&g_lock);
    for (size_t i = 0; i < g_n && !found; i++)
        if (g_open[i]->db == db) {
            now = mb_gc_clock_ms(g_open[i]);
            found = 1;
        }
    pthread_mutex_unlock(&g_lock);
    return found ? now : mb_gc_now_ms();
}

int64_t mb_gc__clock_cx(sqlite3_context *cx)
{
    return mb_gc__clock_of_db(sqlite3_context_db_handle(cx));
}

/* ------------------------------------------------------- keeping it */

static int meta_get(mb_gc *gc, const char *key, char **out)
{
    sqlite3_stmt *st;
    *out = NULL;
    if (mb_gc__prep(gc, "SELECT value FROM __meta WHERE key=?", &st, NULL)) return -1;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        *out = mb_strdup((const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return 0;
}

void mb_gc__clock_reload(mb_gc *gc)
{
    char *mode = NULL, *ms = NULL;
    gc->clock_mode = CLOCK_REAL;
    gc->clock_ms = 0;
    if (!meta_get(gc, "clock_mode", &mode) && mode && !meta_get(gc, "clock_ms", &ms) && ms) {
        char *end;
        long long v = strtoll(ms, &end, 10);
        /* the file is the sandbox's to write: anything odd is the real clock */
        if (!*end && v > -(1LL << 50) && v < (1LL << 50)) {
            for (int m = CLOCK_RUNNING; m <= CLOCK_FROZEN; m++)
                if (!strcmp(mode, MODES[m])) {
                    gc->clock_mode = m;
                    gc->clock_ms = v;
                }
            if (gc->clock_mode == CLOCK_FROZEN && v < 0) gc->clock_mode = CLOCK_REAL;
        }
    }
    free(mode);
    free(ms);
}

int mb_gc__clock_load(mb_gc *gc)
{
    mb_gc__clock_reload(gc);
    registry_add(gc);
    return MB_OK;
}

/* Latest instant a clock may show: 9999-12-31T23:59:59.999Z. */
#define CLOCK_MAX 253402300799999LL

int mb_gc_clock_set(mb_gc *gc, const char *now, int frozen, mb_err *err)
{
    int mode = CLOCK_REAL;
    int64_t v = 0;
    if (now) {
        long days;
        long long us;
        int has_time;
        if (mb_gc__ts_parse(now, &days, &us, &has_time))
            return mb_err_set(err, MB_EINVAL, "Invalid clock time \"%.64s\": use RFC 3339 such as 2025-03-10T09:00:00Z",
                              now);
        int64_t at = (int64_t)days * 86400000LL + us / 1000;
        if (at < 0 || at > CLOCK_MAX)
            return mb_err_set(err, MB_EINVAL, "Invalid clock time \"%.64s\": it must lie in 1970-9999", now);
        mode = frozen ? CLOCK_FROZEN : CLOCK_RUNNING;
        v = frozen ? at : at - mb_gc_now_ms();
    } else if (frozen) {
        /* freeze the clock where it stands */
        mode = CLOCK_FROZEN;
        v = mb_gc_clock_ms(gc);
    }
    sqlite3_stmt *st;
    int rc = mb_gc__prep(gc, "INSERT OR REPLACE INTO __meta VALUES('clock_mode', ?1), ('clock_ms', ?2)", &st, err);
    if (rc) return rc;
    char b[32];
    snprintf(b, sizeof b, "%lld", (long long)v);
    sqlite3_bind_text(st, 1, MODES[mode], -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, b, -1, SQLITE_TRANSIENT);
    rc = mb_gc__step_done(gc, st, err);
    if (!rc) {
        gc->clock_mode = mode;
        gc->clock_ms = v;
        if (gc->clock_pinned) gc->clock_pinned = mb_gc_clock_ms(&(mb_gc){.clock_mode = mode, .clock_ms = v});
    }
    return rc;
}

json_t *mb_gc_clock_get(const mb_gc *gc)
{
    char now[40];
    mb_gc__iso_ms(mb_gc_clock_ms(gc), now);
    return json_pack("{s:s,s:s}", "now", now, "mode", MODES[gc->clock_mode]);
}

int mb_gc_clock_apply(mb_gc *gc, json_t *spec, mb_err *err)
{
    if (json_is_null(spec)) return mb_gc_clock_set(gc, NULL, 0, err);
    if (!json_is_object(spec)) return mb_err_set(err, MB_EINVAL, "clock must be an object {now, frozen} or null");
    json_t *now = json_object_get(spec, "now"), *frozen = json_object_get(spec, "frozen");
    if (now && !json_is_null(now) && !json_is_string(now))
        return mb_err_set(err, MB_EINVAL, "clock.now must be an RFC 3339 time or null");
    if (frozen && !json_is_boolean(frozen)) return mb_err_set(err, MB_EINVAL, "clock.frozen must be a boolean");
    const char *k;
    json_t *v;
    json_object_foreach(spec, k, v)
        if (strcmp(k, "now") && strcmp(k, "frozen") && strcmp(k, "mode"))
            return mb_err_set(err, MB_EINVAL, "clock: unknown field %.40s", k);
    /* a dump's {now, mode} reads back as the same clock */
    const char *mode = json_string_value(json_object_get(spec, "mode"));
    if (json_object_get(spec, "mode") && (!mode || (strcmp(mode, "real") && strcmp(mode, "running") &&
                                                    strcmp(mode, "frozen"))))
        return mb_err_set(err, MB_EINVAL, "clock.mode must be real, running or frozen");
    if (mode && !strcmp(mode, "real")) return mb_gc_clock_set(gc, NULL, 0, err);
    return mb_gc_clock_set(gc, json_string_value(now), json_is_true(frozen) || (mode && !strcmp(mode, "frozen")),
                           err);
}

int mb_gc_clock_env(mb_gc *gc, const char *spec, mb_err *err)
{
    if (!spec || !*spec || !strcmp(spec, "real")) return MB_OK;
    const char *slash = strchr(spec, '/');
    int frozen = 0;
    if (slash) {
        if (strcmp(slash + 1, "frozen") && strcmp(slash + 1, "running"))
            return mb_err_set(err, MB_EINVAL, "MCPBOX_GCLOUD_CLOCK: use TIME, TIME/running or TIME/frozen");
        frozen = !strcmp(slash + 1, "frozen");
    }
    char *t = slash ? mb_strndup(spec, (size_t)(slash - spec)) : mb_strdup(spec);
    int rc = mb_gc_clock_set(gc, t, frozen, err);
    free(t);
    return rc;
}

int64_t mb_gc__created_ms(mb_gc *gc)
{
    char *v = NULL;
    meta_get(gc, "created", &v);
    long long ms = v ? strtoll(v, NULL, 10) : 0;
    free(v);
    return ms > 0 ? ms : 0;
}

int mb_gc__set_created(mb_gc *gc, mb_err *err)
{
    sqlite3_stmt *st;
    int rc = mb_gc__prep(gc, "INSERT OR REPLACE INTO __meta VALUES('created', ?)", &st, err);
    if (rc) return rc;
    char b[32];
    snprintf(b, sizeof b, "%lld", (long long)mb_gc_clock_ms(gc));
    sqlite3_bind_text(st, 1, b, -1, SQLITE_TRANSIENT);
    return mb_gc__step_done(gc, st, err);
}
