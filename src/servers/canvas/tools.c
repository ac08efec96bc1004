/*
 * tools.c - the 69 tool handlers: each makes the calls of the fork's
 * CanvasClient method behind it (src/client.ts) and answers as its
 * CallTool handler does (src/index.ts): the data as JSON.stringify(data,
 * null, 2), "Error: MESSAGE" with isError on any throw.
 */
#include "servers/canvas/canvas_int.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BEGIN tx t = {mb_mcp_call_data(call), args, res, NULL}
#define A(k) cs_arg(&t, k)
#define MISSING(...) return cs_throw(&t, __VA_ARGS__)
#define F(k) cs_falsy(A(k))

/* A path from a format whose %s are String(value) of the json_t * given. */
static char *path(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mb_buf b = {0};
    for (const char *p = fmt; *p; p++) {
        if (p[0] == '%' && p[1] == 's') {
            char *s = cs_str(va_arg(ap, json_t *));
            mb_buf_puts(&b, s);
            free(s);
            p++;
        } else {
            mb_buf_putc(&b, *p);
        }
    }
    va_end(ap);
    mb_buf_putc(&b, 0);
    return mb_buf_steal(&b);
}

/* One call whose data is the tool's result. */
static int call_done(tx *t, const char *method, char *p, json_t *query, json_t *body)
{
    json_t *d = cs_api(t, method, p, query, body);
    free(p);
    json_decref(query);
    json_decref(body);
    return d ? cs_done(t, d) : cs_fail(t);
}

/* A call whose data is dropped; the tool answers `msg` (both freed). */
static int call_then_text(tx *t, const char *method, char *p, json_t *body, char *msg)
{
    json_t *d = cs_api(t, method, p, NULL, body);
    free(p);
    json_decref(body);
    if (d) {
        json_decref(d);
        cs_text(t, msg);
    }
    free(msg);
    return d ? 0 : cs_fail(t);
}

/* A copy of args without the named keys (`const {a, ...rest} = args`). */
static json_t *rest(tx *t, const char *a, const char *b, const char *c)
{
    json_t *o = json_is_object(t->args) ? json_deep_copy(t->args) : json_object();
    if (a) json_object_del(o, a);
    if (b) json_object_del(o, b);
    if (c) json_object_del(o, c);
    return o;
}

static json_t *includes(const char *const *v)
{
    json_t *a = json_array();
    for (; *v; v++) json_array_append_new(a, json_string(*v));
    return a;
}

/* ------------------------------------------------------------ courses */

CS_TOOL(health_check)
{
    BEGIN;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char when[40], stamp[64];
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(stamp, sizeof stamp, "%s.%03dZ", when, (int)(ts.tv_nsec / 1000000) % 1000);
    json_t *u = cs_api(&t, "GET", "/users/self/profile", NULL, NULL);
    free(t.err);
    t.err = NULL;
    if (!u) return cs_done(&t, json_pack("{s:s,s:s}", "status", "error", "timestamp", stamp));
    json_t *id = json_object_get(u, "id"), *name = json_object_get(u, "name");
    json_t *user = json_object();
    if (id) json_object_set(user, "id", id);
    if (name) json_object_set(user, "name", name);
    json_decref(u);
    return cs_done(&t, json_pack("{s:s,s:s,s:o}", "status", "ok", "timestamp", stamp, "user", user));
}

CS_TOOL(list_courses)
{
    BEGIN;
    static const char *const inc[] = {"total_students", "teachers", "term", "course_progress", NULL};
    json_t *q = json_pack("{s:o}", "include", includes(inc));
    if (cs_falsy(A("include_ended"))) json_object_set_new(q, "state", json_pack("[s,s]", "available", "completed"));
    return call_done(&t, "GET", mb_strdup("/courses"), q, NULL);
}

CS_TOOL(get_course)
{
    BEGIN;
    if (F("course_id")) MISSING("Missing required field: course_id");
    static const char *const inc[] = {"total_students", "teachers", "term", "course_progress",
                                      "sections", "syllabus_body", NULL};
    return call_done(&t, "GET", path("/courses/%s", A("course_id")),
                     json_pack("{s:o}", "include", includes(inc)), NULL);
}

CS_TOOL(create_course)
{
    BEGIN;
    if (F("account_id") || F("name")) MISSING("Missing required fields: account_id and name");
    return call_done(&t, "POST", path("/accounts/%s/courses", A("account_id")), NULL,
                     json_pack("{s:o}", "course", rest(&t, "account_id", NULL, NULL)));
}

CS_TOOL(update_course)
{
    BEGIN;
    if (F("course_id")) MISSING("Missing required field: course_id");
    return call_done(&t, "PUT", path("/courses/%s", A("course_id")), NULL,
                     json_pack("{s:o}", "course", rest(&t, "course_id", NULL, NULL)));
}

CS_TOOL(delete_course)
{
    BEGIN;
    if (F("course_id")) MISSING("Missing required field: course_id");
    json_t *ev = A("event");
    char *e = ev ? cs_str(ev) : mb_strdup("delete");
    char *cid = cs_str(A("course_id"));
    char *msg = mb_asprintf("Successfully %sd course %s", e, cid);
    free(cid);
    free(e);
    return call_then_text(&t, "DELETE", path("/courses/%s", A("course_id")),
                          ev ? json_pack("{s:O}", "event", ev) : json_pack("{s:s}", "event", "delete"),
                          msg);
}

CS_TOOL(get_syllabus)
{
    BEGIN;
    if (F("course_id")) MISSING("Missing required field: course_id");
    char *p = path("/courses/%s", A("course_id"));
    json_t *d = cs_api(&t, "GET", p, json_pack("{s:[s]}", "include", "syllabus_body"), NULL);
    free(p);
    if (!d) return cs_fail(&t);
    json_t *o = json_pack("{s:O}", "course_id", A("course_id"));
    json_t *sb = json_object_get(d, "syllabus_body");
    if (sb) json_object_set(o, "syllabus_body", sb);
    json_decref(d);
    return cs_done(&t, o);
}

/* ------------------------------------------------------------ assignments */

CS_TOOL(list_assignments)
{
    BEGIN;
    if (F("course_id")) MISSING("Missing required field: course_id");
    json_t *inc = json_pack("[s,s,s]", "assignment_group", "rubric", "due_at");
    if (!cs_falsy(A("include_submissions"))) json_array_append_new(inc, json_string("submission"));
    return call_done(&t, "GET", path("/courses/%s/assignments", A("course_id")),
                     json_pack("{s:o}", "include", inc), NULL);
}

CS_TOOL(get_assignment)
{
    BEGIN;
    if (F("course_id") || F("assignment_id"))
        MISSING("Missing required fields: course_id and assignment_id");
    json_t *inc = json_pack("[s,s]", "assignment_group", "rubric");
    if (!cs_falsy(A("include_submission"))) json_array_append_new(inc, json_string("submission"));
    return call_done(&t, "GET", path("/courses/%s/assignments/%s", A("course_id"), A("assignment_id")),
                     json_pack("{s:o}", "include", inc), NULL);
}

CS_TOOL(create_assignment)
{
    BEGIN;
    if (F("course_id") || F("name")) MISSING("Missing required fields: course_id and name");
    return call_done(&t, "POST", path("/courses/%s/assignments", A("course_id")), NULL,
                     json_pack("{s:o}", "assignment", rest(&t, "course_id", NULL, NULL)));
}

CS_TOOL(update_assignment)
{
    BEGIN;
    if (F("course_id") || F("assignment_id"))
        MISSING("Missing required fields: course_id and assignment_id");
    return call_done(&t, "PUT", path("/courses/%s/assignments/%s", A("course_id"), A("assignment_id")),
                     NULL, json_pack("{s:o}", "assignment", rest(&t, "course_id", "assignment_id", NULL)));
}

CS_TOOL(delete_assignment)
{
    BEGIN;
    if (F("course_id") || F("assignment_id"))
        MISSING("Missing required fields: course_id and assignment_id");
    return call_then_text(&t, "DELETE", path("/courses/%s/assignments/%s", A("course_id"),
                                              A("assignment_id")), NULL,
                          path("Successfully deleted assignment %s from course %s",
                               A("assignment_id"), A("course_id")));
}

CS_TOOL(list_assignment_groups)
{
    BEGIN;
    if (F("course_id")) MISSING("Missing required field: course_id");
    return call_done(&t, "GET", path("/courses/%s/assignment_groups", A("course_id")),
                     json_pack("{s:[s]}", "include", "assignments"), NULL);
}

static json_t *submission_includes(void)
{
    return json_pack("{s:[s,s,s]}", "include", "submission_comments", "rubric_assessment",
                     "assignment");
}

CS_TOOL(get_submission)
{
    BEGIN;
    if (F("course_id") || F("assignment_id"))
        MISSING("Missing required fields: course_id and assignment_id");
    json_t *self = json_string("self");
    json_t *u = F("user_id") ? self : A("user_id");
    char *p = path("/courses/%s/assignments/%s/submissions/%s", A("course_id"), A("assignment_id"), u);
    json_decref(self);
    return call_done(&t, "GET", p, submission_includes(), NULL);
}

/* submitAssignment: {submission: {submission_type, body?, url?, file_ids?}} */
static int submit(tx *t, json_t *course, json_t *assignment, json_t *type, json_t *body, json_t *url,
                  json_t *files)
{
    json_t *s = json_pack("{s:O}", "submission_type", type);
    if (!cs_falsy(body)) json_object_set(s, "body", body);
    if (!cs_falsy(url)) json_object_set(s, "url", url);
    if (json_is_array(files) && json_array_size(files)) json_object_set(s, "file_ids", files);
    return call_done(t, "POST", path("/courses/%s/assignments/%s/submissions", course, assignment),
                     NULL, json_pack("{s:o}", "submission", s));
}

CS_TOOL(submit_assignment)
{
    BEGIN;
    if (F("course_id") || F("assignment_id") || F("submission_type"))
        MISSING("Missing required fields: course_id, assignment_id, and submission_type");
    return submit(&t, A("course_id"), A("assignment_id"), A("submission_type"), A("body"), A("url"),
                  A("file_ids"));
}

CS_TOOL(submit_grade)
{
    BEGIN;
    if (F("course_id") || F("assignment_id") || F("user_id") || !A("grade"))
        MISSING("Missing required fields for grade submission");
    json_t *s = json_pack("{s:O}", "posted_grade", A("grade"));
    if (!F("comment")) json_object_set_new(s, "comment", json_pack("{s:O}", "text_comment", A("comment")));
    return call_done(&t, "PUT", path("/courses/%s/assignments/%s/submissions/%s", A("course_id"),
                                     A("assignment_id"), A("user_id")),
                     NULL, json_pack("{s:o}", "submission", s));
}

/* ------------------------------------------------------------ files */

CS_TOOL(list_files)
{
    BEGIN;
    if (F("course_id")) MISSING("Missing required field: course_id");
    char *p = !F("folder_id") ? path("/folders/%s/files", A("folder_id"))
                              : path("/courses/%s/files", A("course_id"));
    return call_done(&t, "GET", p, NULL, NULL);
}

CS_TOOL(get_file)
{
    BEGIN;
    if (F("file_id")) MISSING("Missing required field: file_id");
    return call_done(&t, "GET", path("/files/%s", A("file_id")), NULL, NULL);
}

CS_TOOL(list_folders)
{
    BEGIN;
    if (F("course_id")) MISSING("Missing required field: course_id");
    return call_done(&t, "GET", path("/courses/%s/folders", A("course_id")), NULL, NULL);
}

#define MAX_UPLOAD (64u << 20)

/* uploadFileFromPath: stat, POST {name, size, on_duplicate}, the bytes to
 * upload_url, and the file. NULL with t->err on failure. */
static json_t *upload(tx *t, json_t *file_path, json_t *course, json_t *folder)
{
    char *fp = cs_str(file_path);
    struct stat st;
    if (stat(fp, &st) != 0) {
        free(t->err);
        t->err = mb_node_fs_error(errno, "stat", fp, NULL);
        free(fp);
        return NULL;
    }
    int fd = open(fp, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || !S_ISREG(st.st_mode) || st.st_size > (off_t)MAX_UPLOAD) {
        free(t->err);
        t->err = fd < 0 ? mb_node_fs_error(errno, "open", fp, NULL)
                        : mb_node_fs_error(S_ISREG(st.st_mode) ? EFBIG : EISDIR, "read", NULL, NULL);
        if (fd >= 0) close(fd);
        free(fp);
        return NULL;
    }
    unsigned char *bytes = mb_malloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t r = read(fd, bytes + got, (size_t)st.st_size - got);
        if (r <= 0) break;
        got += (size_t)r;
    }
    close(fd);
    const char *slash = strrchr(fp, '/');
    const char *name = slash ? slash + 1 : fp;
    char *endpoint = !cs_falsy(folder) ? path("/folders/%s/files", folder) : mb_strdup("/users/self/files");
    (void)course;
    json_t *body = json_pack("{s:s,s:I,s:s}", "name", name, "size", (json_int_t)st.st_size,
                             "on_duplicate", "rename");
    json_t *step1 = cs_api(t, "POST", endpoint, NULL, body);
    json_decref(body);
    free(endpoint);
    free(fp);
    json_t *file = NULL;
    const char *url = json_string_value(json_object_get(step1, "upload_url"));
    const char *api = url ? strstr(url, "/api/v1") : NULL;
    if (step1 && api) {
        char *b64 = mb_malloc(4 * (got / 3 + 1) + 1);
        EVP_EncodeBlock((unsigned char *)b64, bytes, (int)got);
        json_t *b = json_pack("{s:s}", "data_base64", b64);
        free(b64);
        file = cs_api(t, "POST", api + 7, NULL, b);
        json_decref(b);
        const char *loc = json_string_value(json_object_get(file, "location"));
        if (file && loc && strstr(loc, "/api/v1")) {
            json_t *f2 = cs_api(t, "GET", strstr(loc, "/api/v1") + 7, NULL, NULL);
            json_decref(file);
            file = f2;
        }
    } else if (step1) {
        free(t->err);
        t->err = mb_strdup("Invalid URL");
    }
    json_decref(step1);
    free(bytes);
    return file;
}

CS_TOOL(upload_file_from_path)
{
    BEGIN;
    if (F("file_path")) MISSING("Missing required field: file_path");
    json_t *f = upload(&t, A("file_path"), A("course_id"), A("folder_id"));
    return f ? cs_done(&t, f) : cs_fail(&t);
}

CS_TOOL(submit_assignment_with_file)
{
    BEGIN;
    if (F("course_id") || F("assignment_id") || F("file_path"))
        MISSING("Missing required fields: course_id, assignment_id, and file_path");
    json_t *f = upload(&t, A("file_path"), A("course_id"), NULL);
    if (!f) return cs_fail(&t);
    json_t *ids = json_pack("[O]", json_object_get(f, "id") ? json_object_get(f, "id") : json_null());
    json_decref(f);
    json_t *type = json_string("online_upload");
    int rc = submit(&t, A("course_id"), A("assignment_id"), type, NULL, NULL, ids);
    json_decref(type);
    json_decref(ids);
    return rc;
}

/* ------------------------------------------------------------ pages, calendar */

CS_TOOL(list_pages)
{
    BEGIN;
    if (F("course_id")) MISSING("Missing required field: course_id");
    return call_done(&t, "GET", path("/courses/%s/pages", A("course_id")), NULL, NULL);
}

CS_TOOL(get_page)
{
    BEGIN;
    if (F("course_id") || F("page_url")) MISSING("Missing required fields: course_id and page_url");
    return call_done(&t, "GET", path("/courses/%s/pages/%s", A("course_id"), A("page_url")), NULL, NULL);
}

CS_TOOL(list_calendar_events)
{
    BEGIN;
    json_t *q = json_pack("{s:s,s:b}", "type", "event", "all_events", 1);
    if (!F("start_date")) json_object_set(q, "start_date", A("start_date"));
    if (!F("end_date")) json_object_set(q, "end_date", A("end_date"));
    return call_done(&t, "GET", mb_strdup("/calendar_events"), q, NULL);
}

CS_TOOL(get_upcoming_assignments)
{
    BEGIN;
    json_t *limit = A("limit");
    json_t *q = json_pack("{s:O}", "limit", limit ? limit : json_integer(10));
    if (!limit) json_decref(json_object_get(q, "limit")); /* pack took a new reference */
    json_t *d = cs_api(&t, "GET", "/users/self/upcoming_events", q, NULL);
    json_decref(q);
    if (!d) return cs_fail(&t);
    json_t *out = json_array();
    size_t i;
    json_t *e;
    json_array_foreach(d, i, e) if (!cs_falsy(json_object_get(e, "assignment"))) json_array_append(out, e);
    json_decref(d);
    return cs_done(&t, out);
}

CS_TOOL(get_dashboard)
{
    BEGIN;
    return call_done(&t, "GET", mb_strdup("/users/self/dashboard"), NULL, NULL);
}

CS_TOOL(get_dashboard_cards)
{
    BEGIN;
    return call_done(&t, "GET", mb_strdup("/dashboard/dashboard_cards"), NULL, NULL);
}

CS_TOOL(get_course_grades)
{
    BEGIN;
    if (F("course_id")) MISSING("Missing required field: course_id");
    return call_done(&t, "GET", path("/courses/%s/enrollments", A("course_id")),
                     json_pack("{s:[s,s]}", "include", "grades", "observed_users"), NULL);
}

CS_TOOL(get_user_grades)
{
    BEGIN;
    return call_done(&t, "GET", mb_strdup("/users/self/grades"), NULL, NULL);
}

CS_TOOL(get_user_profile)
{
    BEGIN;
    return call_done(&t, "GET", mb_strdup("/users/self/profile"), NULL, NULL);
}

CS_TOOL(update_user_profile)
{
    BEGIN;
    return call_done(&t, "PUT", mb_strdup("/users/self"), NULL,
                     json_pack("{s:o}", "user", rest(&t, NULL, NULL, NULL)));
}

CS_TOOL(enroll_user)
{
    BEGIN;
    if (F("course_id") || F("user_id")) MISSING("Missing required fields: course_id and user_id");
    json_t *e = json_pack("{s:O}", "user_id", A("user_id"));
    json_object_set(e, "type", A("role") ? A("role") : json_string("StudentEnrollment"));
    if (!A("role")) json_decref(json_object_get(e, "type"));
    json_object_set(e, "enrollment_state", A("enrollment_state") ? A("enrollment_state") : json_string("active"));
    if (!A("enrollment_state")) json_decref(json_object_get(e, "enrollment_state"));
    return call_done(&t, "POST", path("/courses/%s/enrollments", A("course_id")), NULL,
                     json_pack("{s:o}", "enrollment", e));
}

CS_TOOL(unenroll_user)
{
    BEGIN;
    if (F("course_id") || F("enrollment_id")) MISSING("Missing required fields: course_id and enrollment_id");
    return call_then_text(&t, "DELETE", path("/courses/%s/enrollments/%s", A("course_id"),
                                              A("enrollment_id")), NULL,
                          path("Successfully unenrolled user (enrollment %s) from course %s",
                               A("enrollment_id"), A("course_id")));
}

/* ------------------------------------------------------------ modules */

CS_TOOL(list_modules)
{
    BEGIN;
    if (F("course_id")) MISSING("Missing required field: course_id");
    return call_done(&t, "GET", path("/courses/%s/modules", A("course_id")),
                     json_pack("{s:[s]}", "include", "items"), NULL);
}

CS_TOOL(get_module)
{
    BEGIN;
    if (F("course_id") || F("module_id")) MISSING("Missing required fields: course_id and module_id");
    return call_done(&t, "GET", path("/courses/%s/modules/%s", A("course_id"), A("module_id")),
                     json_pack("{s:[s]}", "include", "items"), NULL);
}

CS_TOOL(list_module_items)
{
    BEGIN;
    if (F("course_id") || F("module_id")) MISSING("Missing required fields: course_id and module_id");
    return call_done(&t, "GET", path("/courses/%s/modules/%s/items", A("course_id"), A("module_id")),
                     json_pack("{s:[s]}", "include", "content_details"), NULL);
}

CS_TOOL(get_module_item)
{
    BEGIN;
    if (F("course_id") || F("module_id") || F("item_id"))
        MISSING("Missing required fields: course_id, module_id, and item_id");
    return call_done(&t, "GET", path("/courses/%s/modules/%s/items/%s", A("course_id"), A("module_id"),
                                     A("item_id")),
                     json_pack("{s:[s]}", "include", "content_details"), NULL);
}

CS_TOOL(mark_module_item_complete)
{
    BEGIN;
    if (F("course_id") || F("module_id") || F("item_id"))
        MISSING("Missing required fields: course_id, module_id, and item_id");
    char *p = path("/courses/%s/modules/%s/items/%s/done", A("course_id"), A("module_id"), A("item_id"));
    json_t *d = cs_api(&t, "PUT", p, NULL, NULL);
    free(p);
    if (!d) return cs_fail(&t);
    json_decref(d);
    return cs_done(&t, NULL); /* the method returns nothing */
}

/* ------------------------------------------------------------ discussions */

CS_TOOL(list_discussion_topics)
{
    BEGIN;
    if (F("course_id")) MISSING("Missing required field: course_id");
    return call_done(&t, "GET", path("/courses/%s/discussion_topics", A("course_id")),
                     json_pack("{s:[s]}", "include", "assignment"), NULL);
}

CS_TOOL(get_discussion_topic)
{
    BEGIN;
    if (F("course_id") || F("topic_id")) MISSING("Missing required fields: course_id and topic_id");
    return call_done(&t, "GET", path("/courses/%s/discussion_topics/%s", A("course_id"), A("topic_id")),
                     json_pack("{s:[s]}", "include", "assignment"), NULL);
}

CS_TOOL(post_to_discussion)
{
    BEGIN;
    if (F("course_id") || F("topic_id") || F("message"))
        MISSING("Missing required fields: course_id, topic_id, and message");
    return call_done(&t, "POST", path("/courses/%s/discussion_topics/%s/entries", A("course_id"),
                                      A("topic_id")),
                     NULL, json_pack("{s:O}", "message", A("message")));
}

CS_TOOL(list_announcements)
{
    BEGIN;
    if (F("course_id")) MISSING("Missing required field: course_id");
    char *p = path("/courses/%s/discussion_topics", A("course_id"));
    json_t *q = json_pack("{s:b}", "only_announcements", 1);
    json_t *d = cs_api(&t, "GET", p, q, NULL);
    free(p);
    json_decref(q);
    if (!d) return cs_fail(&t);
    return cs_done(&t, cs_falsy(d) ? json_array() : d);
}

CS_TOOL(create_announcement)
{
    BEGIN;
    if (F("course_id") || F("title") || F("message"))
        MISSING("Missing required fields: course_id, title, and message");
    json_t *b = json_pack("{s:O,s:O,s:b}", "title", A("title"), "message", A("message"),
                          "is_announcement", !json_is_false(A("is_announcement")));
    if (A("delayed_post_at")) json_object_set(b, "delayed_post_at", A("delayed_post_at"));
    if (A("attachment")) json_object_set(b, "attachment", A("attachment"));
    if (json_is_true(A("published")) || F("delayed_post_at")) json_object_set_new(b, "published", json_true());
    return call_done(&t, "POST", path("/courses/%s/discussion_topics", A("course_id")), NULL, b);
}

CS_TOOL(delete_announcement)
{
    BEGIN;
    if (F("course_id") || F("announcement_id"))
        MISSING("Missing required fields: course_id and announcement_id");
    return call_then_text(&t, "DELETE", path("/courses/%s/discussion_topics/%s", A("course_id"),
                                              A("announcement_id")), NULL,
                          path("Successfully deleted announcement %s from course %s",
                               A("announcement_id"), A("course_id")));
}

/* ------------------------------------------------------------ quizzes */

CS_TOOL(list_quizzes)
{
    BEGIN;
    if (F("course_id")) MISSING("Missing required field: course_id");
    return call_done(&t, "GET", path("/courses/%s/quizzes", A("course_id")), NULL, NULL);
}

CS_TOOL(get_quiz)
{
    BEGIN;
    if (F("course_id") || F("quiz_id")) MISSING("Missing required fields: course_id and quiz_id");
    return call_done(&t, "GET", path("/courses/%s/quizzes/%s", A("course_id"), A("quiz_id")), NULL, NULL);
}

CS_TOOL(create_quiz)
{
    BEGIN;
    if (F("course_id") || F("title")) MISSING("Missing required fields: course_id and title");
    json_t *q = json_pack("{s:O}", "title", A("title"));
    static const char *const keys[] = {"quiz_type", "time_limit", "published", "description", "due_at"};
    for (size_t i = 0; i < 5; i++)
        if (A(keys[i])) json_object_set(q, keys[i], A(keys[i]));
    return call_done(&t, "POST", path("/courses/%s/quizzes", A("course_id")), NULL,
                     json_pack("{s:o}", "quiz", q));
}

CS_TOOL(delete_quiz)
{
    BEGIN;
    if (F("course_id") || F("quiz_id")) MISSING("Missing required fields: course_id and quiz_id");
    return call_then_text(&t, "DELETE", path("/courses/%s/quizzes/%s", A("course_id"), A("quiz_id")),
                          NULL, path("Successfully deleted quiz %s from course %s", A("quiz_id"),
                                     A("course_id")));
}

CS_TOOL(start_quiz_attempt)
{
    BEGIN;
    if (F("course_id") || F("quiz_id")) MISSING("Missing required fields: course_id and quiz_id");
    char *p = path("/courses/%s/quizzes/%s/submissions", A("course_id"), A("quiz_id"));
    int status = 0;
    json_t *d = cs_api_raw(&t, "POST", p, NULL, NULL, NULL, &status);
    if (!d && (status == 409 || status == 500)) {
        /* The attempt exists: the client answers the first submission. */
        char *saved = t.err;
        t.err = NULL;
        json_t *g = cs_api(&t, "GET", p, NULL, NULL);
        if (!g) {
            free(t.err);
            t.err = saved;
        } else {
            free(saved);
            json_t *list = json_object_get(g, "quiz_submissions");
            if (json_array_size(list)) d = json_incref(json_array_get(list, 0));
            else d = json_incref(g);
            json_decref(g);
        }
    }
    free(p);
    return d ? cs_done(&t, d) : cs_fail(&t);
}

CS_TOOL(submit_quiz_answers)
{
    BEGIN;
    if (F("course_id") || F("quiz_id") || F("submission_id") || F("answers"))
        MISSING("Missing required fields: course_id, quiz_id, submission_id, and answers");
    json_t *vt = A("validation_token");
    json_t *token = cs_falsy(vt) ? json_null() : json_incref(vt);
    /* Answers go to /quiz_submissions/:id/questions; a failure there is
     * logged and ignored, as upstream does, and the attempt completed. */
    json_t *answers = A("answers");
    json_t *qs = json_array();
    int thrown = !json_is_array(answers);
    size_t i;
    json_t *a;
    json_array_foreach(answers, i, a) {
        json_t *qid = json_object_get(a, "question_id");
        if (!qid || json_is_null(qid)) {
            thrown = 1; /* answer.question_id.toString() throws */
            break;
        }
        json_t *o = json_object();
        char *s = cs_str(qid);
        json_object_set_new(o, "id", json_string(s));
        free(s);
        json_t *v;
        if ((v = json_object_get(a, "answer_id"))) json_object_set(o, "answer", v);
        else if ((v = json_object_get(a, "answer"))) json_object_set(o, "answer", v);
        else if ((v = json_object_get(a, "match"))) json_object_set(o, "answer", v);
        json_array_append_new(qs, o);
    }
    if (!thrown) {
        json_t *payload = json_pack("{s:i,s:O,s:o}", "attempt", 1, "validation_token", token,
                                    "quiz_questions", qs);
        qs = NULL;
        char *p = path("/quiz_submissions/%s/questions", A("submission_id"));
        json_t *d = cs_api(&t, "POST", p, NULL, payload);
        free(p);
        json_decref(payload);
        json_decref(d);
        free(t.err);
        t.err = NULL;
    }
    json_decref(qs);
    return call_done(&t, "POST", path("/courses/%s/quizzes/%s/submissions/%s/complete", A("course_id"),
                                      A("quiz_id"), A("submission_id")),
                     NULL, json_pack("{s:i,s:o}", "attempt", 1, "validation_token", token));
}

CS_TOOL(list_quiz_questions)
{
    BEGIN;
    if (F("course_id") || F("quiz_id")) MISSING("Missing required fields: course_id and quiz_id");
    json_t *sid = A("quiz_submission_id"), *att = A("quiz_submission_attempt");
    if (!F("use_submission_endpoint") && !cs_falsy(sid)) {
        char *p = path("/quiz_submissions/%s/questions", sid);
        json_t *d = cs_api(&t, "GET", p, NULL, NULL);
        free(p);
        if (!d) return cs_fail(&t);
        json_t *q = json_object_get(d, "quiz_submission_questions");
        json_t *out = cs_falsy(q) ? json_array() : json_incref(q);
        json_decref(d);
        return cs_done(&t, out);
    }
    json_t *q = json_object();
    if (!cs_falsy(sid)) json_object_set(q, "quiz_submission_id", sid);
    if (!cs_falsy(att)) json_object_set(q, "quiz_submission_attempt", att);
    return call_done(&t, "GET", path("/courses/%s/quizzes/%s/questions", A("course_id"), A("quiz_id")),
                     q, NULL);
}

CS_TOOL(get_quiz_question)
{
    BEGIN;
    if (F("course_id") || F("quiz_id") || F("question_id"))
        MISSING("Missing required fields: course_id, quiz_id, and question_id");
    return call_done(&t, "GET", path("/courses/%s/quizzes/%s/questions/%s", A("course_id"), A("quiz_id"),
                                     A("question_id")), NULL, NULL);
}

CS_TOOL(create_quiz_question)
{
    BEGIN;
    if (F("course_id") || F("quiz_id") || F("question_name") || F("question_text") ||
        F("question_type") || !A("points_possible"))
        MISSING("Missing required fields: course_id, quiz_id, question_name, question_text, "
                "question_type, and points_possible");
    return call_done(&t, "POST", path("/courses/%s/quizzes/%s/questions", A("course_id"), A("quiz_id")),
                     NULL, json_pack("{s:o}", "question", rest(&t, "course_id", "quiz_id", NULL)));
}

CS_TOOL(update_quiz_question)
{
    BEGIN;
    if (F("course_id") || F("quiz_id") || F("question_id"))
        MISSING("Missing required fields: course_id, quiz_id, and question_id");
    return call_done(&t, "PUT", path("/courses/%s/quizzes/%s/questions/%s", A("course_id"), A("quiz_id"),
                                     A("question_id")),
                     NULL, json_pack("{s:o}", "question", rest(&t, "course_id", "quiz_id", "question_id")));
}

CS_TOOL(delete_quiz_question)
{
    BEGIN;
    if (F("course_id") || F("quiz_id") || F("question_id"))
        MISSING("Missing required fields: course_id, quiz_id, and question_id");
    return call_then_text(&t, "DELETE", path("/courses/%s/quizzes/%s/questions/%s", A("course_id"),
                                              A("quiz_id"), A("question_id")),
                          NULL, mb_strdup("Quiz question deleted successfully"));
}

/* ------------------------------------------------------------ rubrics, messages */

CS_TOOL(list_rubrics)
{
    BEGIN;
    if (F("course_id")) MISSING("Missing required field: course_id");
    return call_done(&t, "GET", path("/courses/%s/rubrics", A("course_id")), NULL, NULL);
}

CS_TOOL(get_rubric)
{
    BEGIN;
    if (F("course_id") || F("rubric_id")) MISSING("Missing required fields: course_id and rubric_id");
    return call_done(&t, "GET", path("/courses/%s/rubrics/%s", A("course_id"), A("rubric_id")), NULL, NULL);
}

CS_TOOL(list_conversations)
{
    BEGIN;
    return call_done(&t, "GET", mb_strdup("/conversations"), NULL, NULL);
}

CS_TOOL(get_conversation)
{
    BEGIN;
    if (F("conversation_id")) MISSING("Missing required field: conversation_id");
    return call_done(&t, "GET", path("/conversations/%s", A("conversation_id")), NULL, NULL);
}

CS_TOOL(create_conversation)
{
    BEGIN;
    if (F("recipients") || F("body")) MISSING("Missing required fields: recipients and body");
    json_t *b = json_pack("{s:O,s:O}", "recipients", A("recipients"), "body", A("body"));
    if (A("subject")) json_object_set(b, "subject", A("subject"));
    return call_done(&t, "POST", mb_strdup("/conversations"), NULL, b);
}

CS_TOOL(delete_conversation)
{
    BEGIN;
    if (F("conversation_id")) MISSING("Missing required field: conversation_id");
    return call_then_text(&t, "DELETE", path("/conversations/%s", A("conversation_id")), NULL,
                          path("Successfully deleted conversation %s", A("conversation_id")));
}

CS_TOOL(list_notifications)
{
    BEGIN;
    return call_done(&t, "GET", mb_strdup("/users/self/activity_stream"), NULL, NULL);
}

/* ------------------------------------------------------------ accounts */

CS_TOOL(get_account)
{
    BEGIN;
    if (F("account_id")) MISSING("Missing required field: account_id");
    return call_done(&t, "GET", path("/accounts/%s", A("account_id")), NULL, NULL);
}

CS_TOOL(list_account_courses)
{
    BEGIN;
    if (F("account_id")) MISSING("Missing required field: account_id");
    return call_done(&t, "GET", path("/accounts/%s/courses", A("account_id")),
                     rest(&t, "account_id", NULL, NULL), NULL);
}

CS_TOOL(create_user)
{
    BEGIN;
    if (F("account_id") || F("user") || F("pseudonym"))
        MISSING("Missing required fields: account_id, user, and pseudonym");
    return call_done(&t, "POST", path("/accounts/%s/users", A("account_id")), NULL,
                     rest(&t, "account_id", NULL, NULL));
}

CS_TOOL(list_sub_accounts)
{
    BEGIN;
    if (F("account_id")) MISSING("Missing required field: account_id");
    return call_done(&t, "GET", path("/accounts/%s/sub_accounts", A("account_id")), NULL, NULL);
}

CS_TOOL(get_account_reports)
{
    BEGIN;
    if (F("account_id")) MISSING("Missing required field: account_id");
    return call_done(&t, "GET", path("/accounts/%s/reports", A("account_id")), NULL, NULL);
}

CS_TOOL(create_account_report)
{
    BEGIN;
    if (F("account_id") || F("report")) MISSING("Missing required fields: account_id and report");
    json_t *params = A("parameters");
    return call_done(&t, "POST", path("/accounts/%s/reports/%s", A("account_id"), A("report")), NULL,
                     json_pack("{s:o}", "parameters", cs_falsy(params) ? json_object()
                                                                       : json_incref(params)));
}

/* canvas_list_account_users: pages of at most 20 through sessions that
 * remember the search for 30 minutes. */
static cs_session *session_get(cs *s, const char *id)
{
    double now = (double)time(NULL);
    for (size_t i = 0; i < s->n_sessions; i++) {
        if (now - s->sessions[i].created > 1800) {
            json_decref(s->sessions[i].params);
            s->sessions[i--] = s->sessions[--s->n_sessions];
            continue;
        }
        if (!strcmp(s->sessions[i].id, id)) return &s->sessions[i];
    }
    return NULL;
}

static const char *base36(unsigned long long v, char *buf, size_t cap)
{
    char tmp[32];
    size_t n = 0;
    do {
        tmp[n++] = "0123456789abcdefghijklmnopqrstuvwxyz"[v % 36];
        v /= 36;
    } while (v && n < sizeof tmp);
    size_t k = 0;
    while (n && k + 1 < cap) buf[k++] = tmp[--n];
    buf[k] = 0;
    return buf;
}

static long page_of(const char *url)
{
    const char *p = strstr(url, "?page=");
    if (!p) p = strstr(url, "&page=");
    return p ? strtol(p + 6, NULL, 10) : 1;
}

CS_TOOL(list_account_users)
{
    BEGIN;
    cs *s = t.s;
    char sid[64];
    json_t *q;
    json_t *sess_id = A("session_id");
    if (!cs_falsy(sess_id)) {
        char *id = cs_str(sess_id);
        cs_session *x = session_get(s, id);
        if (!x) {
            char *m = mb_asprintf("Session %s not found or expired. Please start a new search.", id);
            free(id);
            cs_throw(&t, m);
            free(m);
            return 0;
        }
        snprintf(sid, sizeof sid, "%s", id);
        free(id);
        q = json_deep_copy(x->params);
        if (!F("page")) json_object_set(q, "page", A("page"));
        json_object_set(x->params, "page", json_object_get(q, "page"));
    } else {
        if (F("account_id")) MISSING("Missing required field: account_id (required for new sessions)");
        double per = F("per_page") ? 20 : json_number_value(A("per_page"));
        q = json_pack("{s:O}", "account_id", A("account_id"));
        static const char *const keys[] = {"search_term", "sort", "order"};
        for (size_t i = 0; i < 3; i++) if (A(keys[i])) json_object_set(q, keys[i], A(keys[i]));
        json_object_set(q, "page", F("page") ? json_integer(1) : A("page"));
        if (F("page")) json_decref(json_object_get(q, "page"));
        json_object_set_new(q, "per_page", json_real(per < 20 ? per : 20));
        unsigned char r[8];
        mb_random_bytes(r, sizeof r, NULL);
        unsigned long long rv;
        memcpy(&rv, r, sizeof rv);
        char a[32], b[32];
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        snprintf(sid, sizeof sid, "sess_%s%s", base36(rv, a, sizeof a),
                 base36((unsigned long long)ts.tv_sec * 1000ull + (unsigned long long)ts.tv_nsec / 1000000, b,
                        sizeof b));
        s->sessions = mb_realloc(s->sessions, (s->n_sessions + 1) * sizeof *s->sessions);
        cs_session *x = &s->sessions[s->n_sessions++];
        snprintf(x->id, sizeof x->id, "%s", sid);
        x->params = json_deep_copy(q);
        x->created = (double)time(NULL);
    }
    json_t *query = json_deep_copy(q);
    json_object_del(query, "account_id");
    char *p = path("/accounts/%s/users", json_object_get(q, "account_id"));
    char *link = NULL;
    json_t *users = cs_api_raw(&t, "GET", p, query, NULL, &link, NULL);
    free(p);
    json_decref(query);
    if (!users) {
        json_decref(q);
        return cs_fail(&t);
    }
    char *cur = cs_str(json_object_get(q, "page"));
    long next = 0, prev = 0, last = 0;
    for (const char *l = link; l && *l;) {
        const char *lt = strchr(l, '<'), *gt = lt ? strchr(lt, '>') : NULL;
        if (!gt) break;
        char *url = mb_strndup(lt + 1, (size_t)(gt - lt - 1));
        const char *rel = strstr(gt, "rel=\"");
        if (rel) {
            rel += 5;
            if (!strncmp(rel, "next\"", 5)) next = page_of(url);
            else if (!strncmp(rel, "prev\"", 5)) prev = page_of(url);
            else if (!strncmp(rel, "last\"", 5)) last = page_of(url);
        }
        free(url);
        const char *comma = strchr(gt, ',');
        l = comma ? comma + 1 : NULL;
    }
    free(link);
    mb_buf b = {0};
    mb_buf_printf(&b, "Users (Page %s):\n\n", cur);
    char *js = mb_js_stringify(users, 2);
    mb_buf_puts(&b, js);
    free(js);
    json_decref(users);
    mb_buf_printf(&b, "\n\n=== Session & Pagination Info ===\nSession ID: %s\nCurrent page: %s\n", sid, cur);
    if (last) mb_buf_printf(&b, "Total pages: %ld\n", last);
    if (prev) mb_buf_printf(&b, "Previous page: Use {\"session_id\": \"%s\", \"page\": %ld}\n", sid, prev);
    if (next) mb_buf_printf(&b, "Next page: Use {\"session_id\": \"%s\", \"page\": %ld}\n", sid, next);
    mb_buf_printf(&b, "\n\xf0\x9f\x93\x9d Session Usage:\n"
                      "\xe2\x80\xa2 Continue browsing: Use session_id \"%s\" with different page numbers\n"
                      "\xe2\x80\xa2 New search: Omit session_id and provide account_id with new parameters\n"
                      "\xe2\x80\xa2 Sessions expire after 30 minutes of inactivity", sid);
    mb_buf_putc(&b, 0);
    cs_text(&t, b.data);
    mb_buf_free(&b);
    free(cur);
    json_decref(q);
    return 0;
}
