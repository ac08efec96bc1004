/*
 * gcloud_int.h - shared between the files of src/gcloud only.
 */
#ifndef MB_GCLOUD_INT_H
#define MB_GCLOUD_INT_H

#include <sqlite3.h>

#include "gcloud/gcloud.h"

struct mb_gc {
    sqlite3 *db;
    char *project;
    int clock_mode;       /* clock.c */
    int64_t clock_ms;     /* offset (running) or instant (frozen) */
    int64_t clock_pinned; /* the instant a running query sees, 0 = none */
    int clock_pin_depth;
};

/* clock.c: reads the clock into gc and lists the handle (mb_gc_open);
 * forget unlists it (mb_gc_close). */
int mb_gc__clock_load(mb_gc *gc);
/* When the project was made (its clock's ms; __meta 'created'), 0 unknown;
 * set_created stamps it with the project's clock now. */
int64_t mb_gc__created_ms(mb_gc *gc);
int mb_gc__set_created(mb_gc *gc, mb_err *err);
/* identity.c: a project's number (the 48 bits of its id's hex digits, as
 * a decimal) and its service account's unique id (21 digits). */
unsigned long long mb_gc__project_number(const char *project);
/* The project id a project number names (malloc'ed), NULL when s is not one. */
char *mb_gc__project_of_number(const char *s);
void mb_gc__sa_unique_id(const char *project, char out[24]);
/* Reads the clock again (after a rolled-back change). */
void mb_gc__clock_reload(mb_gc *gc);
void mb_gc__clock_forget(mb_gc *gc);
/* Holds the clock still (on) for the duration of a query, or lets it go. */
void mb_gc__clock_pin(mb_gc *gc, int on);
/* The project's clock for a UDF: its connection's handle, else the host's time. */
int64_t mb_gc__clock_cx(sqlite3_context *cx);
int64_t mb_gc__clock_of_db(sqlite3 *db);

/* Runs SQL without results; MB_EIO with SQLite's message on failure. */
int mb_gc__exec(mb_gc *gc, const char *sql, mb_err *err);
/* Prepares; MB_EIO on failure. */
int mb_gc__prep(mb_gc *gc, const char *sql, sqlite3_stmt **st, mb_err *err);
/* Steps a statement that returns no rows and finalizes it. */
int mb_gc__step_done(mb_gc *gc, sqlite3_stmt *st, mb_err *err);
/* RFC 3339 with milliseconds and Z of epoch milliseconds. */
void mb_gc__iso_ms(int64_t ms, char out[40]);
int mb_gc__begin(mb_gc *gc, mb_err *err);
int mb_gc__commit(mb_gc *gc, mb_err *err);
void mb_gc__rollback(mb_gc *gc);
/* The SQLite table holding dataset.table's rows: "dataset.table". */
char *mb_gc__data_table(const char *dataset, const char *table);
/* Checks a BigQuery dataset / table / bucket name. */
int mb_gc__check_id(const char *what, const char *id, mb_err *err);
/* Fields of a table (borrowed from a fresh json; caller decrefs), NULL when absent. */
json_t *mb_gc__table_fields(mb_gc *gc, const char *dataset, const char *table);
/* Canonical type name (INTEGER->INT64, ...); NULL when unknown. */
const char *mb_gc__type_canon(const char *type);
/* Normalises fields in place (types canonical, mode default NULLABLE). */
int mb_gc__fields_check(json_t *fields, mb_err *err);
/* The SQLite declaration of a column of this type. */
const char *mb_gc__affinity(const char *type, const char *mode);

/* A JSON value as BigQuery takes it for schema field `field` ({name, type,
 * mode, fields}), bound to parameter i; MB_EINVAL naming the problem. */
int mb_gc__bind_value(sqlite3_stmt *st, int i, json_t *v, json_t *field, mb_err *err);
/* A text value (CSV cell) converted for the field; empty = NULL but for STRING. */
int mb_gc__bind_text(sqlite3_stmt *st, int i, const char *s, size_t n, json_t *field,
                     mb_err *err);
/* Column i of a result row as a JSON value of `type`. */
json_t *mb_gc__column_json(sqlite3_stmt *st, int i, const char *type, const char *mode);

/* Canonical timestamp text "YYYY-MM-DD HH:MM:SS[.ffffff]" (UTC) of s;
 * 0 on success. Accepts ISO 8601 with T or space, Z / +hh:mm / " UTC". */
int mb_gc__ts_norm(const char *s, char out[40]);
/* Same for DATE "YYYY-MM-DD" (a timestamp's date part is accepted). */
int mb_gc__date_norm(const char *s, char out[16]);
/* A TIME "H[H]:MM[:SS[.f]]" as microseconds into the day, -1 when s is not
 * one; time_text writes microseconds (taken modulo a day) back as BigQuery
 * does, "HH:MM:SS[.ffffff]". */
long long mb_gc__time_us(const char *s);
void mb_gc__time_text(long long us, char out[24]);
void mb_gc__float_text(double d, char out[40]); /* as CAST(x AS STRING) writes a FLOAT64 */
/* Parses a date or timestamp text: days since the epoch and microseconds
 * into the day (UTC); *has_time when a time part was given. 0 or -1. */
int mb_gc__ts_parse(const char *s, long *days, long long *micros, int *has_time);
/* Days since 1970-01-01 of y-m-d. */
long mb_gc__days(int y, int m, int d);
void mb_gc__civil(long days, int *y, int *m, int *d);

/* Resumable uploads (resumable.c): a session for bucket/name (total -1 =
 * unknown) whose id goes into the session URI; a chunk with its
 * Content-Range (NULL: the whole object) -> *meta when the object is made,
 * else *have = bytes held; cancel drops the session. */
int mb_gc__upload_start(mb_gc *gc, const char *bucket, const char *name, const char *ctype,
                        long long total, char id[40], mb_err *err);
int mb_gc__upload_put(mb_gc *gc, const char *id, const char *range, const void *data, size_t len,
                      long long *have, json_t **meta, mb_err *err);
int mb_gc__upload_cancel(mb_gc *gc, const char *id, mb_err *err);

/* The UDFs (udf.c). */
int mb_gc__udf_register(sqlite3 *db);

/* One scalar SQL function of a registration table (udf.c, strfn.c, arrays.c);
 * data is what sqlite3_user_data gives the function. */
typedef struct mb_gc__sqlfn {
    const char *name;
    int nargs;
    void (*fn)(sqlite3_context *, int, sqlite3_value **);
    intptr_t data;
} mb_gc__sqlfn;
/* Registers the n functions of t with the flags; stops at the first error. */
int mb_gc__sqlfn_register(sqlite3 *db, const mb_gc__sqlfn *t, size_t n, int flags);
/* ARRAY / STRUCT functions, ARRAY_AGG, '/', and the bq_unnest table (arrays.c). */
int mb_gc__arrays_register(sqlite3 *db);
int mb_gc__jsonfn_register(sqlite3 *db); /* jsonfn.c */
int mb_gc__quantiles_register(sqlite3 *db); /* quantiles.c */
int mb_gc__strfn_register(sqlite3 *db); /* strfn.c */
int mb_gc__sql_fail(mb_gc *gc, mb_err *err); /* sqlerr.c: SQLite's message in BigQuery's words */

/* translate.c: GoogleSQL statement -> plan. */
typedef enum mb_gc_stmt_kind {
    GC_SELECT, GC_INSERT, GC_DELETE, GC_UPDATE, GC_CREATE_TABLE, GC_CTAS, GC_DROP_TABLE,
    GC_CREATE_SCHEMA, GC_DROP_SCHEMA, GC_TRUNCATE, GC_MERGE
} mb_gc_stmt_kind;

typedef struct mb_gc_plan {
    mb_gc_stmt_kind kind;
    char *sql;            /* SQLite text (SELECT, DML, the SELECT of a CTAS) */
    char *dataset, *table; /* target of DDL/DML */
    int or_replace, if_not_exists, if_exists;
    json_t *fields;       /* CREATE TABLE column list */
    json_t *hints;        /* per result column: type name, a field ({type, mode, fields}) or null */
    json_t *unnest;       /* the FROM UNNESTs' aliases in order (null when unnamed) */
    int uses_arrays;      /* the statement makes ARRAY / STRUCT values */
    json_t *star_hints;   /* SELECT * REPLACE: column name -> the replacement's hint */
    json_t *steps;        /* MERGE: [{sql, counts}] run in order (counts: its changes are the DML count) */
    char *description;
} mb_gc_plan;

int mb_gc__translate(mb_gc *gc, const char *sql, size_t len, mb_gc_plan *out, mb_err *err);
void mb_gc__plan_free(mb_gc_plan *p);
/* Splits a script at top-level ';' (quotes and comments respected):
 * an array of statement strings, empty statements dropped. */
json_t *mb_gc__split(const char *sql, mb_err *err);

#endif /* MB_GCLOUD_INT_H */
