/*
 * logging.c - Cloud Logging in the project database: entries (text or JSON
 * payload, severity, timestamp, resource), the filter language subset that
 * clients write, logs, sinks and log buckets (sinks and buckets are kept as
 * data; nothing is routed).
 *
 * Filter subset: comparisons FIELD OP VALUE with OP one of = != < <= > >= :
 * (":" = has / contains), FIELD one of logName, severity, timestamp,
 * textPayload, jsonPayload.K[.K...], resource.type, resource.labels.K,
 * insertId; bare words (searched in the payloads); AND, OR, NOT, '-' and
 * parentheses; juxtaposition is AND. Anything else is refused by name.
 */
#define _GNU_SOURCE
#include "gcloud/gcloud_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const struct {
    const char *name;
    int num;
} SEV[] = {{"DEFAULT", 0},   {"DEBUG", 100}, {"INFO", 200},     {"NOTICE", 300},
           {"WARNING", 400}, {"ERROR", 500}, {"CRITICAL", 600}, {"ALERT", 700},
           {"EMERGENCY", 800}};

static int sev_num(const char *s)
{
    for (size_t i = 0; s && i < sizeof SEV / sizeof *SEV; i++)
        if (!strcasecmp(s, SEV[i].name)) return SEV[i].num;
    if (s && !strcasecmp(s, "WARN")) return 400;
    return -1;
}

static void iso_ms(int64_t ms, char out[40])
{
    long days = (long)(ms >= 0 ? ms / 86400000LL : -((-ms + 86399999LL) / 86400000LL));
    int64_t r = ms - (int64_t)days * 86400000LL;
    int y, m, d;
    mb_gc__civil(days, &y, &m, &d);
    snprintf(out, 40, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", y, m, d, (int)(r / 3600000),
             (int)(r / 60000 % 60), (int)(r / 1000 % 60), (int)(r % 1000));
}

static int parse_ms(const char *s, int64_t *out)
{
    long days;
    long long us;
    int has_time;
    if (mb_gc__ts_parse(s, &days, &us, &has_time)) return -1;
    *out = (int64_t)days * 86400000LL + us / 1000;
    return 0;
}

/* The LogEntry fields kept beside the payload, as LogEntry's REST shape has
 * them: labels map<string,string>, trace and spanId strings, traceSampled
 * a bool, httpRequest / operation / sourceLocation objects. */
static int check_extra(json_t *x, mb_err *err)
{
    if (!json_is_object(x)) return mb_err_set(err, MB_EINVAL, "Invalid log entry fields: not an object");
    const char *k;
    json_t *v;
    json_object_foreach(x, k, v) {
        int ok;
        if (!strcmp(k, "labels")) {
            ok = json_is_object(v);
            const char *lk;
            json_t *lv;
            json_object_foreach(v, lk, lv) {
                if (!json_is_string(lv))
                    return mb_err_set(err, MB_EINVAL, "Invalid value of label %.*s: labels are strings",
                                      (int)mb_utf8_cut(lk, strlen(lk), 100), lk);
                if (!*lk || strlen(lk) > 512)
                    return mb_err_set(err, MB_EINVAL, "Invalid label key: 1 to 512 bytes");
            }
        } else if (!strcmp(k, "trace") || !strcmp(k, "spanId")) {
            ok = json_is_string(v) && json_string_length(v) <= 1024;
        } else if (!strcmp(k, "traceSampled")) {
            ok = json_is_boolean(v);
        } else if (!strcmp(k, "httpRequest") || !strcmp(k, "operation") || !strcmp(k, "sourceLocation")) {
            ok = json_is_object(v);
        } else {
            return mb_err_set(err, MB_EINVAL, "Unsupported: the log entry field %.*s is not supported by this "
                              "emulator", (int)mb_utf8_cut(k, strlen(k), 100), k);
        }
        if (!ok) return mb_err_set(err, MB_EINVAL, "Invalid value for log entry field %s", k);
    }
    return MB_OK;
}

int mb_gc_log_write(mb_gc *gc, const char *log_name, const char *text, json_t *json_payload,
                    const char *severity, int64_t timestamp_ms, const char *resource_type,
                    json_t *resource_labels, json_t *extra, mb_err *err)
{
    size_t n = log_name ? strlen(log_name) : 0;
    if (!n || n > 512) return mb_err_set(err, MB_EINVAL, "Invalid log name");
    int sv = sev_num(severity && *severity ? severity : "DEFAULT");
    if (sv < 0) return mb_err_set(err, MB_EINVAL, "Invalid severity: %.40s", severity);
    char *xs = NULL;
    if (json_object_size(extra)) {
        int rc = check_extra(extra, err);
        if (rc) return rc;
        xs = json_dumps(extra, JSON_COMPACT | JSON_PRESERVE_ORDER);
        if (!xs || strlen(xs) > MB_GC_LOG_EXTRA_MAX) {
            free(xs);
            return mb_err_set(err, MB_EINVAL, "Log entry too large: its labels, trace and request fields "
                              "exceed %d bytes", MB_GC_LOG_EXTRA_MAX);
        }
    }
    /* projects/P/logs/NAME -> NAME */
    const char *ln = log_name;
    const char *slash = strstr(log_name, "/logs/");
    if (!strncmp(log_name, "projects/", 9) && slash) ln = slash + 6;
    sqlite3_stmt *st;
    int rc = mb_gc__prep(gc, "INSERT INTO __log_entries(log_name, severity, severity_num, ts, "
                             "text_payload, json_payload, resource_type, resource_labels, insert_id, received, extra) "
                             "VALUES(?,?,?,?,?,?,?,?, lower(hex(randomblob(8))), ?9, ?10)", &st, err);
    if (rc) {
        free(xs);
        return rc;
    }
    char sevname[16];
    snprintf(sevname, sizeof sevname, "%s", severity && *severity ? severity : "DEFAULT");
    for (char *c = sevname; *c; c++) *c = (char)toupper((unsigned char)*c);
    if (!strcmp(sevname, "WARN")) strcpy(sevname, "WARNING");
    sqlite3_bind_text(st, 1, ln, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, sevname, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 3, sv);
    int64_t now = mb_gc_clock_ms(gc);
    sqlite3_bind_int64(st, 4, timestamp_ms ? timestamp_ms : now);
    sqlite3_bind_int64(st, 9, now); /* receiveTimestamp */
    sqlite3_bind_text(st, 5, json_payload ? NULL : text, -1, SQLITE_STATIC);
    if (json_payload) sqlite3_bind_text(st, 6, json_dumps(json_payload, JSON_COMPACT | JSON_PRESERVE_ORDER), -1, free);
    sqlite3_bind_text(st, 7, resource_type && *resource_type ? resource_type : "global", -1, SQLITE_STATIC);
    if (resource_labels) sqlite3_bind_text(st, 8, json_dumps(resource_labels, JSON_COMPACT), -1, free);
    if (xs) sqlite3_bind_text(st, 10, xs, -1, free);
    rc = sqlite3_step(st) == SQLITE_DONE ? MB_OK : mb_err_set(err, MB_EIO, "database: %s", sqlite3_errmsg(gc->db));
    sqlite3_finalize(st);
    return rc;
}

/* --------------------------------------------------------------- filter */

typedef struct flt {
    const char *s;
    size_t i;
    mb_err *err;
    int failed;
    json_t *entry;
    const char *project;
} flt;

static void ws(flt *f)
{
    while (isspace((unsigned char)f->s[f->i])) f->i++;
}

static int ffail(flt *f, const char *msg)
{
    if (!f->failed) f->failed = mb_err_set(f->err, MB_EINVAL, "Invalid filter: %s", msg);
    return 0;
}

/* A value: "quoted" or a bare word. */
static char *value(flt *f)
{
    ws(f);
    mb_buf b = {0};
    mb_buf_puts(&b, "");
    if (f->s[f->i] == '"') {
        f->i++;
        while (f->s[f->i] && f->s[f->i] != '"') {
            if (f->s[f->i] == '\\' && f->s[f->i + 1]) f->i++;
            mb_buf_putc(&b, f->s[f->i++]);
        }
        if (f->s[f->i] != '"') {
            mb_buf_free(&b);
            ffail(f, "unterminated string");
            return NULL;
        }
        f->i++;
    } else {
        while (f->s[f->i] && !isspace((unsigned char)f->s[f->i]) && f->s[f->i] != ')' && f->s[f->i] != '(')
            mb_buf_putc(&b, f->s[f->i++]);
    }
    return mb_buf_steal(&b);
}

static int cmp_op(int c, const char *op)
{
    if (!strcmp(op, "=") || !strcmp(op, ":")) return c == 0;
    if (!strcmp(op, "!=")) return c != 0;
    if (!strcmp(op, "<")) return c < 0;
    if (!strcmp(op, "<=")) return c <= 0;
    if (!strcmp(op, ">")) return c > 0;
    return c >= 0;
}

static int text_match(const char *have, const char *op, const char *want)
{
    if (!have) return !strcmp(op, "!=");
    if (!strcmp(op, ":")) return strcasestr(have, want) != NULL;
    return cmp_op(strcmp(have, want), op);
}

/* The object a dotted filter field walks into, and the path left in it:
 * jsonPayload.a.b, labels.k, resource.labels.k, httpRequest.k, operation.k,
 * sourceLocation.k; NULL for any other field. */
static json_t *nested_root(json_t *e, const char *field, const char **sub)
{
    static const char *const extra[] = {"labels.", "httpRequest.", "operation.", "sourceLocation."};
    if (!strncmp(field, "jsonPayload.", 12)) {
        *sub = field + 12;
        return json_object_get(e, "json_payload") ?: json_null();
    }
    if (!strncmp(field, "resource.labels.", 16)) {
        *sub = field + 16;
        return json_object_get(json_object_get(e, "resource"), "labels") ?: json_null();
    }
    for (size_t i = 0; i < sizeof extra / sizeof *extra; i++) {
        size_t n = strlen(extra[i]);
        if (!strncmp(field, extra[i], n)) {
            char key[32];
            snprintf(key, sizeof key, "%.*s", (int)(n - 1), extra[i]);
            *sub = field + n;
            return json_object_get(json_object_get(e, "extra"), key) ?: json_null();
        }
    }
    return NULL;
}

static int term(flt *f)
{
    ws(f);
    size_t st = f->i;
    while (f->s[f->i] && (isalnum((unsigned char)f->s[f->i]) || f->s[f->i] == '.' || f->s[f->i] == '_'))
        f->i++;
    char *field = mb_strndup(f->s + st, f->i - st);
    ws(f);
    char op[3] = {0};
    const char *p = f->s + f->i;
    if (!strncmp(p, ">=", 2) || !strncmp(p, "<=", 2) || !strncmp(p, "!=", 2)) {
        memcpy(op, p, 2);
        f->i += 2;
    } else if (*p == '=' || *p == '<' || *p == '>' || *p == ':') {
        op[0] = *p;
        f->i++;
    }
    json_t *e = f->entry;
    const char *sub = NULL;
    json_t *root = NULL;
    int r = 0;
    if (!op[0]) {
        /* a bare word: search the payloads */
        f->i = st;
        char *w = value(f);
        if (!w) { free(field); return 0; }
        if (!*w) ffail(f, "expected a term");
        const char *t = json_string_value(json_object_get(e, "text_payload"));
        char *j = json_object_get(e, "json_payload") ? json_dumps(json_object_get(e, "json_payload"), JSON_COMPACT) : NULL;
        r = (t && strcasestr(t, w)) || (j && strcasestr(j, w));
        free(j);
        free(w);
        free(field);
        return r;
    }
    char *v = value(f);
    if (!v) { free(field); return 0; }
    if (!strcmp(field, "logName") || !strcmp(field, "log_name")) {
        char *full = mb_asprintf("projects/%s/logs/%s", f->project,
                                 json_string_value(json_object_get(e, "short_name")));
        /* %2F in a filter's log name is a slash */
        mb_buf dec = {0};
        for (const char *c = v; *c; c++) {
            if (c[0] == '%' && c[1] == '2' && (c[2] == 'F' || c[2] == 'f')) {
                mb_buf_putc(&dec, '/');
                c += 2;
            } else mb_buf_putc(&dec, *c);
        }
        const char *want = dec.data ? dec.data : "";
        r = strncmp(want, "projects/", 9) ? text_match(json_string_value(json_object_get(e, "short_name")), op, want)
                                          : text_match(full, op, want);
        mb_buf_free(&dec);
        free(full);
    } else if (!strcmp(field, "severity")) {
        int want = sev_num(v), have = sev_num(json_string_value(json_object_get(e, "severity")));
        if (want < 0) ffail(f, "unknown severity");
        else r = cmp_op(have < want ? -1 : have > want, !strcmp(op, ":") ? "=" : op);
    } else if (!strcmp(field, "timestamp") || !strcmp(field, "receiveTimestamp")) {
        int64_t want, have;
        const char *k = !strcmp(field, "timestamp") ? "timestamp" : "receive_timestamp";
        if (parse_ms(v, &want) || parse_ms(json_string_value(json_object_get(e, k)), &have))
            ffail(f, "invalid timestamp");
        else r = cmp_op(have < want ? -1 : have > want, op);
    } else if (!strcmp(field, "textPayload")) {
        r = text_match(json_string_value(json_object_get(e, "text_payload")), op, v);
    } else if (!strcmp(field, "insertId")) {
        r = text_match(json_string_value(json_object_get(e, "insert_id")), op, v);
    } else if (!strcmp(field, "resource.type")) {
        r = text_match(json_string_value(json_object_get(json_object_get(e, "resource"), "type")), op, v);
    } else if (!strcmp(field, "trace") || !strcmp(field, "spanId")) {
        r = text_match(json_string_value(json_object_get(json_object_get(e, "extra"), field)), op, v);
    } else if (!strcmp(field, "traceSampled")) {
        json_t *b = json_object_get(json_object_get(e, "extra"), field);
        r = text_match(json_is_true(b) ? "true" : "false", op, v);
    } else if ((root = nested_root(e, field, &sub))) {
        json_t *cur = root;
        char *path = mb_strdup(sub);
        for (char *save = NULL, *k = strtok_r(path, ".", &save); k && cur; k = strtok_r(NULL, ".", &save))
            cur = json_object_get(cur, k);
        free(path);
        if (!cur || json_is_null(cur)) r = !strcmp(op, "!=");
        else if (json_is_string(cur)) r = text_match(json_string_value(cur), op, v);
        else if (json_is_number(cur)) {
            char *end;
            double want = strtod(v, &end), have = json_number_value(cur);
            r = *end ? !strcmp(op, "!=") : cmp_op(have < want ? -1 : have > want, op);
        } else if (json_is_boolean(cur)) {
            r = text_match(json_is_true(cur) ? "true" : "false", op, v);
        } else {
            char *t = json_dumps(cur, JSON_COMPACT);
            r = text_match(t, ":", v);
            free(t);
        }
    } else {
        char msg[160];
        snprintf(msg, sizeof msg, "field %.80s is not supported by this emulator", field);
        ffail(f, msg);
    }
    free(v);
    free(field);
    return r;
}

static int expr_or(flt *f);

static int unary(flt *f)
{
    ws(f);
    if (!strncmp(f->s + f->i, "NOT ", 4)) {
        f->i += 4;
        return !unary(f);
    }
    if (f->s[f->i] == '-') {
        f->i++;
        return !unary(f);
    }
    if (f->s[f->i] == '(') {
        f->i++;
        int r = expr_or(f);
        ws(f);
        if (f->s[f->i] != ')') return ffail(f, "missing )");
        f->i++;
        return r;
    }
    return term(f);
}

static int expr_and(flt *f)
{
    int r = unary(f);
    for (;;) {
        ws(f);
        const char *p = f->s + f->i;
        if (!*p || *p == ')' || !strncmp(p, "OR ", 3) || f->failed) return r;
        if (!strncmp(p, "AND ", 4)) f->i += 4;
        int r2 = unary(f);
        r = r && r2;
    }
}

static int expr_or(flt *f)
{
    int r = expr_and(f);
    for (;;) {
        ws(f);
        if (strncmp(f->s + f->i, "OR ", 3) || f->failed) return r;
        f->i += 3;
        int r2 = expr_and(f);
        r = r || r2;
    }
}

static json_t *entry_row(mb_gc *gc, sqlite3_stmt *st)
{
    char ts[40], rts[40];
    iso_ms(sqlite3_column_int64(st, 3), ts);
    /* entries made before the column existed were received when stamped */
    iso_ms(sqlite3_column_type(st, 9) == SQLITE_NULL ? sqlite3_column_int64(st, 3) : sqlite3_column_int64(st, 9), rts);
    const char *ln = (const char *)sqlite3_column_text(st, 0);
    char *full = mb_asprintf("projects/%s/logs/%s", gc->project, ln);
    json_t *jp = sqlite3_column_text(st, 5) ? json_loads((const char *)sqlite3_column_text(st, 5), 0, NULL) : NULL;
    json_t *rl = sqlite3_column_text(st, 7) ? json_loads((const char *)sqlite3_column_text(st, 7), 0, NULL) : NULL;
    json_t *e = json_pack("{s:s,s:s,s:s,s:s,s:s?,s:o?,s:{s:s,s:o},s:s}", "log_name", full,
                          "short_name", ln, "severity", sqlite3_column_text(st, 1), "timestamp", ts,
                          "text_payload", sqlite3_column_text(st, 4), "json_payload", jp,
                          "resource", "type", sqlite3_column_text(st, 6), "labels",
                          rl ? rl : json_object(), "insert_id", sqlite3_column_text(st, 8));
    json_object_set_new(e, "receive_timestamp", json_string(rts));
    json_t *x = sqlite3_column_text(st, 10) ? json_loads((const char *)sqlite3_column_text(st, 10), 0, NULL) : NULL;
    json_object_set_new(e, "extra", json_is_object(x) ? x : json_object());
    if (x && !json_is_object(x)) json_decref(x);
    free(full);
    return e;
}

int mb_gc_log_list(mb_gc *gc, const char *filter, int max, json_t **out, mb_err *err)
{
    *out = NULL;
    sqlite3_stmt *st;
    int rc = mb_gc__prep(gc, "SELECT log_name, severity, severity_num, ts, text_payload, json_payload, "
                             "resource_type, resource_labels, insert_id, received, extra FROM __log_entries "
                             "ORDER BY ts DESC, seq DESC", &st, err);
    if (rc) return rc;
    json_t *arr = json_array();
    while (sqlite3_step(st) == SQLITE_ROW && (max <= 0 || (int)json_array_size(arr) < max)) {
        json_t *e = entry_row(gc, st);
        int keep = 1;
        if (filter && *filter) {
            flt f = {.s = filter, .err = err, .entry = e, .project = gc->project};
            keep = expr_or(&f);
            ws(&f);
            if (!f.failed && f.s[f.i]) ffail(&f, "unexpected text");
            if (f.failed) {
                json_decref(e);
                rc = f.failed;
                break;
            }
        }
        json_object_del(e, "short_name");
        if (keep) json_array_append(arr, e);
        json_decref(e);
    }
    sqlite3_finalize(st);
    if (rc) {
        json_decref(arr);
        return rc;
    }
    *out = arr;
    return MB_OK;
}

json_t *mb_gc_log_names(mb_gc *gc)
{
    json_t *arr = json_array();
    sqlite3_stmt *st;
    if (mb_gc__prep(gc, "SELECT DISTINCT log_name FROM __log_entries ORDER BY log_name", &st, NULL)) return arr;
    while (sqlite3_step(st) == SQLITE_ROW)
        json_array_append_new(arr, json_string((const char *)sqlite3_column_text(st, 0)));
    sqlite3_finalize(st);
    return arr;
}

int mb_gc_log_delete(mb_gc *gc, const char *log_name, mb_err *err)
{
    const char *ln = log_name;
    const char *slash = strstr(log_name, "/logs/");
    if (!strncmp(log_name, "projects/", 9) && slash) ln = slash + 6;
    sqlite3_stmt *st;
    int rc = mb_gc__prep(gc, "DELETE FROM __log_entries WHERE log_name=?", &st, err);
    if (rc) return rc;
    sqlite3_bind_text(st, 1, ln, -1, SQLITE_STATIC);
    sqlite3_step(st);
    sqlite3_finalize(st);
    if (!sqlite3_changes(gc->db))
        return mb_err_set(err, MB_ENOTFOUND, "Log %s does not exist", log_name);
    return MB_OK;
}

int mb_gc_log_sink_create(mb_gc *gc, const char *name, const char *destination,
                          const char *filter, mb_err *err)
{
    int rc = mb_gc__check_id("Sink", name, err);
    if (rc) return rc;
    sqlite3_stmt *st;
    if ((rc = mb_gc__prep(gc, "INSERT INTO __log_sinks VALUES(?,?,?,NULL,?,?)", &st, err))) return rc;
    int64_t now = mb_gc_clock_ms(gc);
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, destination, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, filter, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, now);
    sqlite3_bind_int64(st, 5, now);
    int s = sqlite3_step(st);
    sqlite3_finalize(st);
    if (s == SQLITE_CONSTRAINT)
        return mb_err_set(err, MB_ECONFLICT, "Sink %s already exists", name);
    return s == SQLITE_DONE ? MB_OK : mb_err_set(err, MB_EIO, "database: %s", sqlite3_errmsg(gc->db));
}

json_t *mb_gc_log_sink_list(mb_gc *gc)
{
    json_t *arr = json_array();
    sqlite3_stmt *st;
    if (mb_gc__prep(gc, "SELECT name, destination, filter, description, created, updated FROM "
                        "__log_sinks ORDER BY name", &st, NULL))
        return arr;
    while (sqlite3_step(st) == SQLITE_ROW)
        json_array_append_new(arr, json_pack("{s:s,s:s?,s:s?,s:s?,s:I,s:I}", "name", sqlite3_column_text(st, 0),
                                             "destination", sqlite3_column_text(st, 1), "filter",
                                             sqlite3_column_text(st, 2), "description",
                                             sqlite3_column_text(st, 3), "created",
                                             (json_int_t)sqlite3_column_int64(st, 4), "updated",
                                             (json_int_t)sqlite3_column_int64(st, 5)));
    sqlite3_finalize(st);
    return arr;
}

int mb_gc_log_sink_delete(mb_gc *gc, const char *name, mb_err *err)
{
    sqlite3_stmt *st;
    int rc = mb_gc__prep(gc, "DELETE FROM __log_sinks WHERE name=?", &st, err);
    if (rc) return rc;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    sqlite3_step(st);
    sqlite3_finalize(st);
    if (!sqlite3_changes(gc->db)) return mb_err_set(err, MB_ENOTFOUND, "Sink %s does not exist", name);
    return MB_OK;
}

int mb_gc_log_bucket_create(mb_gc *gc, const char *id, const char *location, int retention_days,
                            const char *description, mb_err *err)
{
    int rc = mb_gc__check_id("Bucket", id, err);
    if (rc) return rc;
    /* Cloud Logging's own rule: up to 100 characters, the first a letter or
     * a digit (so _Default and _Required, which every project has, cannot
     * be made again) */
    if (strlen(id) > 100 || !isalnum((unsigned char)id[0]))
        return mb_err_set(err, MB_EINVAL, "Invalid bucket ID \"%s\": at most 100 characters, the first a "
                          "letter or a digit", id);
    if (retention_days < 1 || retention_days > 3650)
        return mb_err_set(err, MB_EINVAL, "retention_days must be between 1 and 3650");
    sqlite3_stmt *st;
    if ((rc = mb_gc__prep(gc, "INSERT INTO __log_buckets VALUES(?,?,?,?,?,?)", &st, err))) return rc;
    int64_t now = mb_gc_clock_ms(gc);
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, location && *location ? location : "global", -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 3, retention_days);
    sqlite3_bind_text(st, 4, description, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 5, now);
    sqlite3_bind_int64(st, 6, now);
    int s = sqlite3_step(st);
    sqlite3_finalize(st);
    if (s == SQLITE_CONSTRAINT)
        return mb_err_set(err, MB_ECONFLICT, "Bucket %s already exists", id);
    return s == SQLITE_DONE ? MB_OK : mb_err_set(err, MB_EIO, "database: %s", sqlite3_errmsg(gc->db));
}

json_t *mb_gc_log_bucket_list(mb_gc *gc)
{
    json_t *arr = json_array();
    sqlite3_stmt *st;
    if (mb_gc__prep(gc, "SELECT name, location, retention_days, description, created, updated FROM "
                        "__log_buckets ORDER BY name", &st, NULL))
        return arr;
    while (sqlite3_step(st) == SQLITE_ROW)
        json_array_append_new(arr, json_pack("{s:s,s:s,s:i,s:s?,s:I,s:I}", "name", sqlite3_column_text(st, 0),
                                             "location", sqlite3_column_text(st, 1), "retention_days",
                                             sqlite3_column_int(st, 2), "description",
                                             sqlite3_column_text(st, 3), "created",
                                             (json_int_t)sqlite3_column_int64(st, 4), "updated",
                                             (json_int_t)sqlite3_column_int64(st, 5)));
    sqlite3_finalize(st);
    return arr;
}

void mb_gc__iso_ms(int64_t ms, char out[40]) { iso_ms(ms, out); }
