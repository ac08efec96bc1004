/*
 * canvas_int.h - what the files of the canvas layer share: the database
 * handle, the per-request context of the REST core, SQL helpers that return
 * rows built by SQLite's json_object(), and the route handlers.
 */
#ifndef MB_CANVAS_INT_H
#define MB_CANVAS_INT_H

#include "canvas/canvas.h"

#include <pthread.h>
#include <sqlite3.h>

struct mb_canvas_db {
    sqlite3 *s;
    pthread_mutex_t lock;
    const char *origin; /* the request's origin while one is answered (lock held), or NULL */
};

/* Where URLs in bodies point when the request names no origin; SQL reads the
 * request's as cv_origin() (db.c). */
#define CV_ORIGIN "http://localhost:10001"

#define CV_MAX_SEG 10

/* One request being answered. */
typedef struct cv {
    mb_canvas_db *db;
    sqlite3 *s;
    const mb_canvas_req *req;
    mb_canvas_resp *out;
    int64_t uid;      /* the caller */
    int admin;        /* an account admin */
    char *seg[CV_MAX_SEG];
    int nseg;
} cv;

/* sql.c: statements with bindings given by a type string: 'i' int64_t,
 * 't' const char * (NULL binds null), 'd' double, 'j' json_t * (its text).
 * Queries whose first column is JSON text give parsed values. */
json_t *cv_rows(cv *c, const char *types, const char *sql, ...);   /* array, never NULL */
json_t *cv_row(cv *c, const char *types, const char *sql, ...);    /* NULL if none */
int64_t cv_int(cv *c, int64_t dflt, const char *types, const char *sql, ...);
char *cv_text(cv *c, const char *types, const char *sql, ...);     /* NULL if none */
int cv_exec(cv *c, const char *types, const char *sql, ...);       /* 0 or -1 */
int64_t cv_last_id(cv *c);
/* fn(c, id, arg) of each integer of ids (stolen), the NULLs left out. */
json_t *cv_map(cv *c, json_t *ids, json_t *(*fn)(cv *c, int64_t id, int arg), int arg);
int cv_sql_exec(sqlite3 *s, const char *sql, mb_err *err);
/* Each of the n members cols of body[obj] that the body has, written to the
 * column of that name of table's row id: a non-empty string as it is,
 * anything else (null, "", a number) as NULL. */
void cv_set_texts(cv *c, const char *obj, const char *table, int64_t id, const char *const *cols,
                  size_t n);

/* handle.c: answers. */
void cv_json(cv *c, int status, json_t *body);        /* body stolen */
void cv_list(cv *c, json_t *array);                    /* paginated 200 */
void cv_error(cv *c, int status, const char *message);
void cv_not_found(cv *c);
void cv_unauthorized(cv *c);
int64_t cv_seg_id(cv *c, int i);                       /* 0 if not a number */
const char *cv_param(cv *c, const char *key);          /* last value */
int cv_has_param(cv *c, const char *key, const char *val);
int cv_include(cv *c, const char *what);               /* include[]=what */
int cv_flag(const char *v);                            /* "true"/"1" */
const char *cv_origin(cv *c);                          /* for URLs in bodies */
/* Body members: body[obj][key] when obj, else body[key]. */
json_t *cv_body(cv *c, const char *obj, const char *key);
const char *cv_body_str(cv *c, const char *obj, const char *key);
int cv_body_bool(cv *c, const char *obj, const char *key, int dflt);
int cv_body_has(cv *c, const char *obj, const char *key);
double cv_body_num(cv *c, const char *obj, const char *key, double dflt);

/* Roles (r_courses.c). */
enum { CV_NONE = 0, CV_STUDENT = 1, CV_TA = 2, CV_TEACHER = 3, CV_OBSERVER = 4, CV_DESIGNER = 5 };
int cv_role(cv *c, int64_t course_id);   /* the caller's best enrollment role */
int cv_can_read(cv *c, int64_t course_id);    /* answers 404/401 itself when not */
int cv_can_manage(cv *c, int64_t course_id);  /* teacher, TA or admin; answers 401 */
/* Segment 1's course (readable, or with `manage` managed) and segment i's
 * object of `table` in it (`where`: more conditions, "AND ..."); answers
 * 404/401 itself and returns 0 when either is missing. */
int cv_course_obj(cv *c, int i, const char *table, const char *where, int manage, int64_t *cid,
                  int64_t *id);
/* A create in segment 1's course, which the caller manages: the course and
 * body[obj][key], which must be a non-empty string; NULL when answered
 * already (404, 401, or 400 naming key as blank). */
const char *cv_create_in(cv *c, const char *obj, const char *key, int64_t *cid);
json_t *cv_course_json(cv *c, int64_t id);
json_t *cv_user_json(cv *c, int64_t id);

/* Route handlers. */
typedef void (*cv_fn)(cv *c);
#define CV_ROUTE(name) void name(cv *c)
CV_ROUTE(r_self_profile); CV_ROUTE(r_self_update); CV_ROUTE(r_self_get);
CV_ROUTE(r_courses_list); CV_ROUTE(r_course_get); CV_ROUTE(r_course_update);
CV_ROUTE(r_course_delete); CV_ROUTE(r_account_courses); CV_ROUTE(r_account_course_create);
CV_ROUTE(r_account_get); CV_ROUTE(r_account_users); CV_ROUTE(r_account_user_create);
CV_ROUTE(r_sub_accounts); CV_ROUTE(r_accounts_list);
CV_ROUTE(r_enrollments_list); CV_ROUTE(r_enrollment_create); CV_ROUTE(r_enrollment_delete);
CV_ROUTE(r_course_users); CV_ROUTE(r_sections_list); CV_ROUTE(r_user_get);
CV_ROUTE(r_assignments_list); CV_ROUTE(r_assignment_get); CV_ROUTE(r_assignment_create);
CV_ROUTE(r_assignment_update); CV_ROUTE(r_assignment_delete);
CV_ROUTE(r_groups_list); CV_ROUTE(r_group_get);
CV_ROUTE(r_submissions_list); CV_ROUTE(r_submission_get); CV_ROUTE(r_submission_grade);
CV_ROUTE(r_submission_create);
CV_ROUTE(r_quizzes_list); CV_ROUTE(r_quiz_get); CV_ROUTE(r_quiz_create); CV_ROUTE(r_quiz_update);
CV_ROUTE(r_quiz_delete); CV_ROUTE(r_questions_list); CV_ROUTE(r_question_get);
CV_ROUTE(r_question_create); CV_ROUTE(r_question_update); CV_ROUTE(r_question_delete);
CV_ROUTE(r_qsubs_list); CV_ROUTE(r_qsub_create); CV_ROUTE(r_qsub_self); CV_ROUTE(r_qsub_get);
CV_ROUTE(r_qsub_complete); CV_ROUTE(r_qsub_answer); CV_ROUTE(r_qsub_questions);
CV_ROUTE(r_quiz_statistics);
CV_ROUTE(r_topics_list); CV_ROUTE(r_topic_get); CV_ROUTE(r_topic_create); CV_ROUTE(r_topic_delete);
CV_ROUTE(r_entry_create); CV_ROUTE(r_entries_list);
CV_ROUTE(r_modules_list); CV_ROUTE(r_module_get); CV_ROUTE(r_module_items); CV_ROUTE(r_module_item);
CV_ROUTE(r_module_item_done); CV_ROUTE(r_module_delete); CV_ROUTE(r_module_create);
CV_ROUTE(r_module_item_create); CV_ROUTE(r_page_create);
CV_ROUTE(r_pages_list); CV_ROUTE(r_page_get);
CV_ROUTE(r_conversations_list); CV_ROUTE(r_conversation_get); CV_ROUTE(r_conversation_create);
CV_ROUTE(r_conversation_delete); CV_ROUTE(r_conversation_add_message);
CV_ROUTE(r_rubrics_list); CV_ROUTE(r_rubric_get); CV_ROUTE(r_rubric_create);
CV_ROUTE(r_rubric_update); CV_ROUTE(r_rubric_delete); CV_ROUTE(r_rubric_association_create);
CV_ROUTE(r_rubric_assessment_create);
CV_ROUTE(r_calendar_events); CV_ROUTE(r_upcoming_events); CV_ROUTE(r_activity_stream);
CV_ROUTE(r_dashboard_cards);
CV_ROUTE(r_reports_list); CV_ROUTE(r_report_create); CV_ROUTE(r_report_get);
CV_ROUTE(r_files_list); CV_ROUTE(r_folder_files); CV_ROUTE(r_file_get); CV_ROUTE(r_folders_list);
CV_ROUTE(r_file_upload_start); CV_ROUTE(r_file_upload_data);

/* r_rubric.c: what assignments and submissions carry of rubrics. */
void cv_rubric_of_assignment(cv *c, json_t *a);           /* rubric, rubric_settings */
void cv_rubric_assess_submission(cv *c, int64_t aid, int64_t sid); /* body[rubric_assessment] */
json_t *cv_rubric_assessment_of(cv *c, int64_t sid);      /* {criterion: {...}} or NULL */

/* db.c */
int64_t mb_canvas__admin_user(mb_canvas_db *db); /* the first admin, or 0 */
/* Quiz points: the sum of its questions' points. */
void cv_quiz_refresh_points(cv *c, int64_t quiz_id);

#endif /* MB_CANVAS_INT_H */
