/*
 * db.c - one sandbox's Canvas database: opening it (the schema when new),
 * seeding the root account and the users of a token set, token lookup, and a
 * consistent copy for reset and baselines.
 */
#include "canvas/canvas_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Timestamps are TEXT in ISO 8601 with Z ("2026-11-24T23:00:00Z"); JSON
 * columns (answers, submission types) are JSON text. */
static const char SCHEMA[] =
    "PRAGMA journal_mode=DELETE;"
    "PRAGMA synchronous=OFF;"
    "BEGIN;"
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);"
    "CREATE TABLE IF NOT EXISTS accounts(id INTEGER PRIMARY KEY, name TEXT, parent_account_id INTEGER,"
    " root_account_id INTEGER, workflow_state TEXT DEFAULT 'active', uuid TEXT);"
    "CREATE TABLE IF NOT EXISTS users(id INTEGER PRIMARY KEY, name TEXT, sortable_name TEXT,"
    " short_name TEXT, email TEXT, login_id TEXT, created_at TEXT, bio TEXT, title TEXT,"
    " time_zone TEXT DEFAULT 'America/Denver', locale TEXT, workflow_state TEXT DEFAULT 'registered');"
    "CREATE UNIQUE INDEX IF NOT EXISTS users_login ON users(login_id);"
    "CREATE TABLE IF NOT EXISTS tokens(token TEXT PRIMARY KEY, user_id INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS admins(account_id INTEGER, user_id INTEGER, PRIMARY KEY(account_id, user_id));"
    "CREATE TABLE IF NOT EXISTS courses(id INTEGER PRIMARY KEY, account_id INTEGER, name TEXT,"
    " course_code TEXT, workflow_state TEXT DEFAULT 'unpublished', start_at TEXT, end_at TEXT,"
    " created_at TEXT, syllabus_body TEXT, is_public INTEGER DEFAULT 0, license TEXT,"
    " time_zone TEXT DEFAULT 'America/Denver', default_view TEXT DEFAULT 'modules', uuid TEXT,"
    " public_description TEXT, sis_course_id TEXT, restrict_dates INTEGER DEFAULT 0);"
    "CREATE TABLE IF NOT EXISTS sections(id INTEGER PRIMARY KEY, course_id INTEGER, name TEXT,"
    " created_at TEXT);"
    "CREATE TABLE IF NOT EXISTS enrollments(id INTEGER PRIMARY KEY, course_id INTEGER,"
    " section_id INTEGER, user_id INTEGER, type TEXT, workflow_state TEXT DEFAULT 'active',"
    " created_at TEXT, updated_at TEXT);"
    "CREATE INDEX IF NOT EXISTS enr_user ON enrollments(user_id);"
    "CREATE INDEX IF NOT EXISTS enr_course ON enrollments(course_id);"
    "CREATE TABLE IF NOT EXISTS assignment_groups(id INTEGER PRIMARY KEY, course_id INTEGER, name TEXT,"
    " position INTEGER, group_weight REAL DEFAULT 0, created_at TEXT);"
    "CREATE TABLE IF NOT EXISTS assignments(id INTEGER PRIMARY KEY, course_id INTEGER, group_id INTEGER,"
    " name TEXT, description TEXT, due_at TEXT, lock_at TEXT, unlock_at TEXT, points_possible REAL,"
    " grading_type TEXT DEFAULT 'points', submission_types TEXT DEFAULT '[\"none\"]',"
    " allowed_extensions TEXT DEFAULT '[]', published INTEGER DEFAULT 0, position INTEGER,"
    " created_at TEXT, updated_at TEXT, quiz_id INTEGER, topic_id INTEGER,"
    " workflow_state TEXT DEFAULT 'unpublished', allowed_attempts INTEGER DEFAULT -1);"
    "CREATE TABLE IF NOT EXISTS submissions(id INTEGER PRIMARY KEY, assignment_id INTEGER, user_id INTEGER,"
    " body TEXT, url TEXT, submission_type TEXT, submitted_at TEXT, score REAL, grade TEXT,"
    " workflow_state TEXT DEFAULT 'unsubmitted', attempt INTEGER, grader_id INTEGER, graded_at TEXT,"
    " attachment_ids TEXT DEFAULT '[]', UNIQUE(assignment_id, user_id));"
    "CREATE TABLE IF NOT EXISTS submission_comments(id INTEGER PRIMARY KEY, submission_id INTEGER,"
    " author_id INTEGER, comment TEXT, created_at TEXT);"
    "CREATE TABLE IF NOT EXISTS quizzes(id INTEGER PRIMARY KEY, course_id INTEGER, title TEXT,"
    " description TEXT, quiz_type TEXT DEFAULT 'assignment', time_limit INTEGER, published INTEGER DEFAULT 0,"
    " due_at TEXT, lock_at TEXT, unlock_at TEXT, points_possible REAL, allowed_attempts INTEGER DEFAULT 1,"
    " shuffle_answers INTEGER DEFAULT 0, show_correct_answers INTEGER DEFAULT 1,"
    " scoring_policy TEXT DEFAULT 'keep_highest', assignment_id INTEGER, assignment_group_id INTEGER,"
    " created_at TEXT, updated_at TEXT, one_question_at_a_time INTEGER DEFAULT 0,"
    " cant_go_back INTEGER DEFAULT 0, access_code TEXT, hide_results TEXT);"
    "CREATE TABLE IF NOT EXISTS quiz_questions(id INTEGER PRIMARY KEY, quiz_id INTEGER, position INTEGER,"
    " question_name TEXT, question_text TEXT, question_type TEXT, points_possible REAL,"
    " correct_comments TEXT DEFAULT '', incorrect_comments TEXT DEFAULT '', neutral_comments TEXT DEFAULT '',"
    " answers TEXT DEFAULT '[]', matches TEXT, incorrect_matches TEXT);"
    "CREATE TABLE IF NOT EXISTS quiz_submissions(id INTEGER PRIMARY KEY, quiz_id INTEGER, user_id INTEGER,"
    " submission_id INTEGER, attempt INTEGER, validation_token TEXT, workflow_state TEXT,"
    " started_at TEXT, finished_at TEXT, end_at TEXT, score REAL, kept_score REAL,"
    " answers TEXT DEFAULT '{}');"
    "CREATE TABLE IF NOT EXISTS discussion_topics(id INTEGER PRIMARY KEY, course_id INTEGER, title TEXT,"
    " message TEXT, is_announcement INTEGER DEFAULT 0, published INTEGER DEFAULT 1, delayed_post_at TEXT,"
    " posted_at TEXT, created_at TEXT, user_id INTEGER, assignment_id INTEGER, locked INTEGER DEFAULT 0,"
    " pinned INTEGER DEFAULT 0, discussion_type TEXT DEFAULT 'side_comment');"
    "CREATE TABLE IF NOT EXISTS discussion_entries(id INTEGER PRIMARY KEY, topic_id INTEGER, user_id INTEGER,"
    " message TEXT, created_at TEXT, parent_id INTEGER);"
    "CREATE TABLE IF NOT EXISTS modules(id INTEGER PRIMARY KEY, course_id INTEGER, name TEXT,"
    " position INTEGER, published INTEGER DEFAULT 1, unlock_at TEXT,"
    " require_sequential_progress INTEGER DEFAULT 0);"
    "CREATE TABLE IF NOT EXISTS module_items(id INTEGER PRIMARY KEY, module_id INTEGER, title TEXT,"
    " type TEXT, content_id INTEGER, position INTEGER, indent INTEGER DEFAULT 0, page_url TEXT,"
    " external_url TEXT, published INTEGER DEFAULT 1);"
    "CREATE TABLE IF NOT EXISTS module_done(item_id INTEGER, user_id INTEGER, PRIMARY KEY(item_id, user_id));"
    "CREATE TABLE IF NOT EXISTS pages(id INTEGER PRIMARY KEY, course_id INTEGER, url TEXT, title TEXT,"
    " body TEXT, published INTEGER DEFAULT 1, front_page INTEGER DEFAULT 0, created_at TEXT, updated_at TEXT);"
    "CREATE TABLE IF NOT EXISTS folders(id INTEGER PRIMARY KEY, context_type TEXT, context_id INTEGER,"
    " name TEXT, full_name TEXT, parent_folder_id INTEGER, created_at TEXT);"
    "CREATE TABLE IF NOT EXISTS files(id INTEGER PRIMARY KEY, folder_id INTEGER, display_name TEXT,"
    " filename TEXT, content_type TEXT, size INTEGER, data BLOB, user_id INTEGER, created_at TEXT,"
    " uuid TEXT, state TEXT DEFAULT 'available');"
    "CREATE TABLE IF NOT EXISTS conversations(id INTEGER PRIMARY KEY, subject TEXT, created_at TEXT,"
    " context_code TEXT);"
    "CREATE TABLE IF NOT EXISTS conversation_participants(conversation_id INTEGER, user_id INTEGER,"
    " workflow_state TEXT DEFAULT 'unread', PRIMARY KEY(conversation_id, user_id));"
    "CREATE TABLE IF NOT EXISTS conversation_messages(id INTEGER PRIMARY KEY, conversation_id INTEGER,"
    " author_id INTEGER, body TEXT, created_at TEXT);"
    "CREATE TABLE IF NOT EXISTS rubrics(id INTEGER PRIMARY KEY, course_id INTEGER, title TEXT,"
    " points_possible REAL, data TEXT DEFAULT '[]', free_form INTEGER DEFAULT 0);"
    "CREATE TABLE IF NOT EXISTS rubric_associations(id INTEGER PRIMARY KEY, rubric_id INTEGER,"
    " association_type TEXT, association_id INTEGER, course_id INTEGER, purpose TEXT,"
    " use_for_grading INTEGER DEFAULT 0, hide_score_total INTEGER DEFAULT 0,"
    " hide_points INTEGER DEFAULT 0, created_at TEXT);"
    "CREATE TABLE IF NOT EXISTS rubric_assessments(id INTEGER PRIMARY KEY, rubric_id INTEGER,"
    " association_id INTEGER, submission_id INTEGER, assessor_id INTEGER, assessment_type TEXT,"
    " score REAL, data TEXT DEFAULT '[]', created_at TEXT);"
    "CREATE TABLE IF NOT EXISTS calendar_events(id INTEGER PRIMARY KEY, context_code TEXT, title TEXT,"
    " description TEXT, start_at TEXT, end_at TEXT, location_name TEXT, created_at TEXT,"
    " workflow_state TEXT DEFAULT 'active');"
    "CREATE TABLE IF NOT EXISTS account_reports(id INTEGER PRIMARY KEY, account_id INTEGER, report TEXT,"
    " parameters TEXT, status TEXT, created_at TEXT, user_id INTEGER);"
    "COMMIT;";

int cv_sql_exec(sqlite3 *s, const char *sql, mb_err *err)
{
    char *msg = NULL;
    if (sqlite3_exec(s, sql, NULL, NULL, &msg) != SQLITE_OK) {
        int rc = mb_err_set(err, MB_EIO, "canvas database: %s", msg ? msg : "error");
        sqlite3_free(msg);
        return rc;
    }
    return MB_OK;
}

/* cv_origin(): the origin of the request being answered (URLs in bodies). */
static void origin_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    const mb_canvas_db *db = sqlite3_user_data(ctx);
    sqlite3_result_text(ctx, db->origin ? db->origin : CV_ORIGIN, -1, SQLITE_TRANSIENT);
}

int mb_canvas_db_open(const char *path, mb_canvas_db **out, mb_err *err)
{
    sqlite3 *s = NULL;
    if (sqlite3_open_v2(path, &s, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                        NULL) != SQLITE_OK) {
        int rc = mb_err_set(err, MB_EIO, "cannot open %s: %s", path, s ? sqlite3_errmsg(s) : "");
        sqlite3_close(s);
        return rc;
    }
    sqlite3_busy_timeout(s, 5000);
    int rc = cv_sql_exec(s, SCHEMA, err);
    /* A database of an older schema (a template kept over an upgrade) gets the
     * columns added since; the error of a column that exists is expected. */
    static const char *const added[] = {
        "ALTER TABLE rubrics ADD COLUMN free_form INTEGER DEFAULT 0",
        "ALTER TABLE quiz_questions ADD COLUMN matches TEXT",
        "ALTER TABLE quiz_questions ADD COLUMN incorrect_matches TEXT",
    };
    for (size_t i = 0; !rc && i < sizeof added / sizeof *added; i++)
        sqlite3_exec(s, added[i], NULL, NULL, NULL);
    if (rc) {
        sqlite3_close(s);
        return rc;
    }
    mb_canvas_db *db = mb_calloc(1, sizeof *db);
    db->s = s;
    pthread_mutex_init(&db->lock, NULL);
    sqlite3_create_function(s, "cv_origin", 0, SQLITE_UTF8, db, origin_fn, NULL, NULL);
    *out = db;
    return MB_OK;
}

void mb_canvas_db_close(mb_canvas_db *db)
{
    if (!db) return;
    sqlite3_close(db->s);
    pthread_mutex_destroy(&db->lock);
    free(db);
}

void mb_canvas_db_trim(mb_canvas_db *db)
{
    pthread_mutex_lock(&db->lock);
    sqlite3_db_release_memory(db->s);
    pthread_mutex_unlock(&db->lock);
}

static char *sortable(const char *name)
{
    const char *sp = strrchr(name, ' ');
    if (!sp) return mb_strdup(name);
    return mb_asprintf("%s, %.*s", sp + 1, (int)(sp - name), name);
}

int mb_canvas_db_seed(mb_canvas_db *db, const mb_canvas_users *users, mb_err *err)
{
    pthread_mutex_lock(&db->lock);
    int rc = cv_sql_exec(db->s,
                         "BEGIN;"
                         "INSERT OR IGNORE INTO accounts(id, name, root_account_id, uuid)"
                         " VALUES(1, 'Site Admin', NULL, lower(hex(randomblob(20))));"
                         "INSERT OR IGNORE INTO meta VALUES('created_at',"
                         " strftime('%Y-%m-%dT%H:%M:%SZ','now'));",
                         err);
    sqlite3_stmt *u = NULL, *t = NULL, *a = NULL;
    if (!rc &&
        (sqlite3_prepare_v2(db->s,
                            "INSERT INTO users(name, sortable_name, short_name, email, login_id,"
                            " created_at) VALUES(?,?,?,?,?, strftime('%Y-%m-%dT%H:%M:%SZ','now'))",
                            -1, &u, NULL) ||
         sqlite3_prepare_v2(db->s, "INSERT OR REPLACE INTO tokens VALUES(?,?)", -1, &t, NULL) ||
         sqlite3_prepare_v2(db->s, "INSERT OR IGNORE INTO admins VALUES(1,?)", -1, &a, NULL)))
        rc = mb_err_set(err, MB_EIO, "canvas seed: %s", sqlite3_errmsg(db->s));
    for (size_t i = 0; !rc && i < users->n; i++) {
        const mb_canvas_user *x = &users->v[i];
        char *sn = sortable(x->name);
        sqlite3_bind_text(u, 1, x->name, -1, SQLITE_STATIC);
        sqlite3_bind_text(u, 2, sn, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(u, 3, x->name, -1, SQLITE_STATIC);
        sqlite3_bind_text(u, 4, x->email, -1, SQLITE_STATIC);
        sqlite3_bind_text(u, 5, x->email, -1, SQLITE_STATIC);
        free(sn);
        if (sqlite3_step(u) != SQLITE_DONE) {
            rc = mb_err_set(err, MB_EINVAL, "canvas user %s: %s", x->email, sqlite3_errmsg(db->s));
            break;
        }
        sqlite3_reset(u);
        sqlite3_int64 id = sqlite3_last_insert_rowid(db->s);
        sqlite3_bind_text(t, 1, x->token, -1, SQLITE_STATIC);
        sqlite3_bind_int64(t, 2, id);
        if (sqlite3_step(t) != SQLITE_DONE) rc = mb_err_set(err, MB_EIO, "canvas token");
        sqlite3_reset(t);
        if (x->admin) {
            sqlite3_bind_int64(a, 1, id);
            if (sqlite3_step(a) != SQLITE_DONE) rc = mb_err_set(err, MB_EIO, "canvas admin");
            sqlite3_reset(a);
        }
    }
    sqlite3_finalize(u);
    sqlite3_finalize(t);
    sqlite3_finalize(a);
    mb_err ignored = {0};
    cv_sql_exec(db->s, rc ? "ROLLBACK" : "COMMIT", &ignored);
    pthread_mutex_unlock(&db->lock);
    return rc;
}

int64_t mb_canvas_db_token_user(mb_canvas_db *db, const char *token)
{
    if (!token || !*token) return 0;
    pthread_mutex_lock(&db->lock);
    sqlite3_stmt *st;
    int64_t id = 0;
    if (sqlite3_prepare_v2(db->s, "SELECT user_id FROM tokens WHERE token=?", -1, &st, NULL) ==
        SQLITE_OK) {
        sqlite3_bind_text(st, 1, token, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW) id = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    pthread_mutex_unlock(&db->lock);
    return id;
}

int64_t mb_canvas__admin_user(mb_canvas_db *db)
{
    pthread_mutex_lock(&db->lock);
    sqlite3_stmt *st;
    int64_t id = 0;
    if (sqlite3_prepare_v2(db->s, "SELECT min(user_id) FROM admins WHERE account_id=1", -1, &st,
                           NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW) id = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    pthread_mutex_unlock(&db->lock);
    return id;
}

int mb_canvas_db_backup(mb_canvas_db *db, const char *path, mb_err *err)
{
    pthread_mutex_lock(&db->lock);
    sqlite3_stmt *st;
    int rc = MB_OK;
    remove(path);
    if (sqlite3_prepare_v2(db->s, "VACUUM INTO ?", -1, &st, NULL) != SQLITE_OK) {
        rc = mb_err_set(err, MB_EIO, "canvas backup: %s", sqlite3_errmsg(db->s));
    } else {
        sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_DONE)
            rc = mb_err_set(err, MB_EIO, "canvas backup to %s: %s", path, sqlite3_errmsg(db->s));
        sqlite3_finalize(st);
    }
    pthread_mutex_unlock(&db->lock);
    return rc;
}

int mb_canvas_db_meta_set(mb_canvas_db *db, const char *key, const char *value, mb_err *err)
{
    pthread_mutex_lock(&db->lock);
    sqlite3_stmt *st;
    int rc = MB_OK;
    if (sqlite3_prepare_v2(db->s, "INSERT OR REPLACE INTO meta VALUES(?,?)", -1, &st, NULL) !=
        SQLITE_OK) {
        rc = mb_err_set(err, MB_EIO, "canvas meta: %s", sqlite3_errmsg(db->s));
    } else {
        sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_DONE)
            rc = mb_err_set(err, MB_EIO, "canvas meta: %s", sqlite3_errmsg(db->s));
        sqlite3_finalize(st);
    }
    pthread_mutex_unlock(&db->lock);
    return rc;
}

char *mb_canvas_db_meta_get(mb_canvas_db *db, const char *key)
{
    pthread_mutex_lock(&db->lock);
    sqlite3_stmt *st;
    char *v = NULL;
    if (sqlite3_prepare_v2(db->s, "SELECT value FROM meta WHERE key=?", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
            v = mb_strdup((const char *)sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
    }
    pthread_mutex_unlock(&db->lock);
    return v;
}
