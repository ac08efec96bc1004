/*
 * handle.c - the REST core's entry: authentication by bearer token, the
 * route table, Link-header pagination, Canvas's error shapes, and the
 * helpers handlers read parameters and bodies with.
 */
#include "canvas/canvas_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define PER_PAGE_DEFAULT 10
#define PER_PAGE_MAX 100

typedef struct route {
    const char *method;
    const char *pattern; /* segments; ":" matches one segment */
    cv_fn fn;
} route;

static const route ROUTES[] = {
    {"GET", "users/self/profile", r_self_profile},
    {"GET", "users/:/profile", r_self_profile},
    {"PUT", "users/self", r_self_update},
    {"GET", "users/self", r_self_get},
    {"GET", "users/:", r_user_get},
    {"GET", "users/self/upcoming_events", r_upcoming_events},
    {"GET", "users/self/activity_stream", r_activity_stream},
    {"POST", "users/self/files", r_file_upload_start},
    {"GET", "dashboard/dashboard_cards", r_dashboard_cards},
    {"GET", "calendar_events", r_calendar_events},
    {"GET", "courses", r_courses_list},
    {"GET", "courses/:", r_course_get},
    {"PUT", "courses/:", r_course_update},
    {"DELETE", "courses/:", r_course_delete},
    {"GET", "courses/:/users", r_course_users},
    {"GET", "courses/:/students", r_course_users},
    {"GET", "courses/:/sections", r_sections_list},
    {"GET", "courses/:/enrollments", r_enrollments_list},
    {"POST", "courses/:/enrollments", r_enrollment_create},
    {"DELETE", "courses/:/enrollments/:", r_enrollment_delete},
    {"GET", "courses/:/assignments", r_assignments_list},
    {"POST", "courses/:/assignments", r_assignment_create},
    {"GET", "courses/:/assignments/:", r_assignment_get},
    {"PUT", "courses/:/assignments/:", r_assignment_update},
    {"DELETE", "courses/:/assignments/:", r_assignment_delete},
    {"GET", "courses/:/assignment_groups", r_groups_list},
    {"GET", "courses/:/assignment_groups/:", r_group_get},
    {"GET", "courses/:/assignments/:/submissions", r_submissions_list},
    {"POST", "courses/:/assignments/:/submissions", r_submission_create},
    {"GET", "courses/:/assignments/:/submissions/:", r_submission_get},
    {"PUT", "courses/:/assignments/:/submissions/:", r_submission_grade},
    {"GET", "courses/:/quizzes", r_quizzes_list},
    {"POST", "courses/:/quizzes", r_quiz_create},
    {"GET", "courses/:/quizzes/:", r_quiz_get},
    {"PUT", "courses/:/quizzes/:", r_quiz_update},
    {"DELETE", "courses/:/quizzes/:", r_quiz_delete},
    {"GET", "courses/:/quizzes/:/questions", r_questions_list},
    {"POST", "courses/:/quizzes/:/questions", r_question_create},
    {"GET", "courses/:/quizzes/:/questions/:", r_question_get},
    {"PUT", "courses/:/quizzes/:/questions/:", r_question_update},
    {"DELETE", "courses/:/quizzes/:/questions/:", r_question_delete},
    {"GET", "courses/:/quizzes/:/submissions", r_qsubs_list},
    {"POST", "courses/:/quizzes/:/submissions", r_qsub_create},
    {"GET", "courses/:/quizzes/:/submission", r_qsub_self},
    {"GET", "courses/:/quizzes/:/submissions/self", r_qsub_self},
    {"GET", "courses/:/quizzes/:/submissions/:", r_qsub_get},
    {"POST", "courses/:/quizzes/:/submissions/:/complete", r_qsub_complete},
    {"GET", "courses/:/quizzes/:/statistics", r_quiz_statistics},
    {"POST", "quiz_submissions/:/questions", r_qsub_answer},
    {"GET", "quiz_submissions/:/questions", r_qsub_questions},
    {"GET", "courses/:/discussion_topics", r_topics_list},
    {"POST", "courses/:/discussion_topics", r_topic_create},
    {"GET", "courses/:/discussion_topics/:", r_topic_get},
    {"DELETE", "courses/:/discussion_topics/:", r_topic_delete},
    {"POST", "courses/:/discussion_topics/:/entries", r_entry_create},
    {"GET", "courses/:/discussion_topics/:/entries", r_entries_list},
    {"GET", "announcements", r_topics_list},
    {"GET", "courses/:/modules", r_modules_list},
    {"GET", "courses/:/modules/:", r_module_get},
    {"DELETE", "courses/:/modules/:", r_module_delete},
    {"POST", "courses/:/modules", r_module_create},
    {"POST", "courses/:/modules/:/items", r_module_item_create},
    {"POST", "courses/:/pages", r_page_create},
    {"GET", "courses/:/modules/:/items", r_module_items},
    {"GET", "courses/:/modules/:/items/:", r_module_item},
    {"PUT", "courses/:/modules/:/items/:/done", r_module_item_done},
    {"GET", "courses/:/pages", r_pages_list},
    {"GET", "courses/:/pages/:", r_page_get},
    {"GET", "courses/:/files", r_files_list},
    {"POST", "courses/:/files", r_file_upload_start},
    {"GET", "courses/:/folders", r_folders_list},
    {"GET", "folders/:/files", r_folder_files},
    {"POST", "folders/:/files", r_file_upload_start},
    {"GET", "files/:", r_file_get},
    {"POST", "files/:/upload", r_file_upload_data},
    {"GET", "courses/:/rubrics", r_rubrics_list},
    {"GET", "courses/:/rubrics/:", r_rubric_get},
    {"POST", "courses/:/rubrics", r_rubric_create},
    {"PUT", "courses/:/rubrics/:", r_rubric_update},
    {"DELETE", "courses/:/rubrics/:", r_rubric_delete},
    {"POST", "courses/:/rubric_associations", r_rubric_association_create},
    {"POST", "courses/:/rubric_associations/:/rubric_assessments", r_rubric_assessment_create},
    {"GET", "conversations", r_conversations_list},
    {"POST", "conversations", r_conversation_create},
    {"GET", "conversations/:", r_conversation_get},
    {"DELETE", "conversations/:", r_conversation_delete},
    {"POST", "conversations/:/add_message", r_conversation_add_message},
    {"GET", "accounts", r_accounts_list},
    {"GET", "accounts/:", r_account_get},
    {"GET", "accounts/:/courses", r_account_courses},
    {"POST", "accounts/:/courses", r_account_course_create},
    {"GET", "accounts/:/users", r_account_users},
    {"POST", "accounts/:/users", r_account_user_create},
    {"GET", "accounts/:/sub_accounts", r_sub_accounts},
    {"GET", "accounts/:/reports", r_reports_list},
    {"POST", "accounts/:/reports/:", r_report_create},
    {"GET", "accounts/:/reports/:/:", r_report_get},
};

/* ------------------------------------------------------------ answers */

void cv_json(cv *c, int status, json_t *body)
{
    json_decref(c->out->body);
    c->out->status = status;
    c->out->body = body ? body : json_null();
}

void cv_error(cv *c, int status, const char *message)
{
    cv_json(c, status, json_pack("{s:[{s:s}]}", "errors", "message", message));
}

void cv_not_found(cv *c) { cv_error(c, 404, "The specified resource does not exist."); }

void cv_unauthorized(cv *c)
{
    cv_json(c, 401, json_pack("{s:s,s:[{s:s}]}", "status", "unauthorized", "errors", "message",
                              "user not authorized to perform that action"));
}

static void url_escape(mb_buf *b, const char *s)
{
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (isalnum(ch) || strchr("-_.~[]", ch)) mb_buf_putc(b, (char)ch);
        else mb_buf_printf(b, "%%%02X", ch);
    }
}

static void link_one(cv *c, mb_buf *b, const char *rel, long page, long per_page)
{
    if (b->len) mb_buf_putc(b, ',');
    mb_buf_printf(b, "<%s%s?", c->req->link_base ? c->req->link_base : "", c->req->path);
    for (size_t i = 0; i < c->req->n_params; i++) {
        const mb_canvas_param *p = &c->req->params[i];
        if (!strcmp(p->key, "page") || !strcmp(p->key, "per_page")) continue;
        url_escape(b, p->key);
        mb_buf_putc(b, '=');
        url_escape(b, p->val);
        mb_buf_putc(b, '&');
    }
    mb_buf_printf(b, "page=%ld&per_page=%ld>; rel=\"%s\"", page, per_page, rel);
}

static long num_param(cv *c, const char *key, long dflt, long lo, long hi)
{
    const char *v = cv_param(c, key);
    if (!v || !*v) return dflt;
    char *end;
    long n = strtol(v, &end, 10);
    if (*end) return dflt;
    return n < lo ? lo : n > hi ? hi : n;
}

void cv_list(cv *c, json_t *array)
{
    long per_page = num_param(c, "per_page", PER_PAGE_DEFAULT, 1, PER_PAGE_MAX);
    long page = num_param(c, "page", 1, 1, 1000000);
    long total = (long)json_array_size(array);
    long last = total ? (total + per_page - 1) / per_page : 1;
    json_t *slice = json_array();
    for (long i = (page - 1) * per_page; i < total && i < page * per_page; i++)
        json_array_append(slice, json_array_get(array, (size_t)i));
    json_decref(array);
    mb_buf b = {0};
    link_one(c, &b, "current", page, per_page);
    if (page < last) link_one(c, &b, "next", page + 1, per_page);
    if (page > 1) link_one(c, &b, "prev", page - 1, per_page);
    link_one(c, &b, "first", 1, per_page);
    link_one(c, &b, "last", last, per_page);
    free(c->out->link);
    c->out->link = mb_buf_steal(&b);
    cv_json(c, 200, slice);
}

/* ------------------------------------------------------------ reading */

int64_t cv_seg_id(cv *c, int i)
{
    if (i >= c->nseg) return 0;
    const char *s = c->seg[i];
    if (!*s || strlen(s) > 15) return 0;
    for (const char *p = s; *p; p++)
        if (!isdigit((unsigned char)*p)) return 0;
    return strtoll(s, NULL, 10);
}

const char *cv_param(cv *c, const char *key)
{
    const char *v = NULL;
    for (size_t i = 0; i < c->req->n_params; i++)
        if (!strcmp(c->req->params[i].key, key)) v = c->req->params[i].val;
    return v;
}

int cv_has_param(cv *c, const char *key, const char *val)
{
    for (size_t i = 0; i < c->req->n_params; i++)
        if (!strcmp(c->req->params[i].key, key) && !strcmp(c->req->params[i].val, val)) return 1;
    return 0;
}

int cv_include(cv *c, const char *what)
{
    return cv_has_param(c, "include[]", what) || cv_has_param(c, "include", what);
}

int cv_flag(const char *v) { return v && (!strcmp(v, "true") || !strcmp(v, "1")); }

const char *cv_origin(cv *c) { return c->req->origin ? c->req->origin : CV_ORIGIN; }

json_t *cv_body(cv *c, const char *obj, const char *key)
{
    json_t *b = c->req->body;
    if (!json_is_object(b)) return NULL;
    if (obj) {
        b = json_object_get(b, obj);
        if (!json_is_object(b)) return NULL;
    }
    return json_object_get(b, key);
}

int cv_body_has(cv *c, const char *obj, const char *key)
{
    json_t *v = cv_body(c, obj, key);
    return v != NULL;
}

const char *cv_body_str(cv *c, const char *obj, const char *key)
{
    json_t *v = cv_body(c, obj, key);
    if (json_is_string(v)) return json_string_value(v);
    return NULL;
}

int cv_body_bool(cv *c, const char *obj, const char *key, int dflt)
{
    json_t *v = cv_body(c, obj, key);
    if (json_is_boolean(v)) return json_is_true(v);
    if (json_is_integer(v)) return json_integer_value(v) != 0;
    if (json_is_string(v)) return cv_flag(json_string_value(v));
    return dflt;
}

double cv_body_num(cv *c, const char *obj, const char *key, double dflt)
{
    json_t *v = cv_body(c, obj, key);
    if (json_is_number(v)) return json_number_value(v);
    if (json_is_string(v) && *json_string_value(v)) {
        char *end;
        double d = strtod(json_string_value(v), &end);
        if (!*end) return d;
    }
    return dflt;
}

/* ------------------------------------------------------------ dispatch */

static int split(cv *c, char *path)
{
    c->nseg = 0;
    for (char *tok = strtok(path, "/"); tok; tok = strtok(NULL, "/")) {
        if (c->nseg == CV_MAX_SEG) return -1;
        c->seg[c->nseg++] = tok;
    }
    return 0;
}

static int matches(cv *c, const char *pattern)
{
    int i = 0;
    const char *p = pattern;
    while (*p) {
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (i >= c->nseg) return 0;
        if (!(n == 1 && *p == ':') && (strlen(c->seg[i]) != n || strncmp(c->seg[i], p, n)))
            return 0;
        i++;
        p += n;
        if (*p == '/') p++;
    }
    return i == c->nseg;
}

/* A literal segment beats ":" (users/self before users/:). */
static int literal_count(const char *pattern)
{
    int n = 0;
    for (const char *p = pattern; *p; p++)
        if ((p == pattern || p[-1] == '/') && !(p[0] == ':' && (p[1] == '/' || !p[1]))) n++;
    return n;
}

void mb_canvas_handle(mb_canvas_db *db, const mb_canvas_req *req, mb_canvas_resp *out)
{
    memset(out, 0, sizeof *out);
    cv c = {.db = db, .s = db->s, .req = req, .out = out};
    char *path = mb_strdup(req->path ? req->path : "/");
    pthread_mutex_lock(&db->lock);
    db->origin = req->origin;
    if (split(&c, path)) {
        cv_not_found(&c);
        goto done;
    }
    /* The upload step of a file carries its own secret instead of a token. */
    int upload = !strcmp(req->method, "POST") && matches(&c, "files/:/upload");
    if (upload) {
        c.uid = cv_int(&c, 0, "ti", "SELECT user_id FROM files WHERE uuid=? AND id=?",
                       cv_param(&c, "uuid") ? cv_param(&c, "uuid") : "", cv_seg_id(&c, 1));
        if (!c.uid) {
            cv_not_found(&c);
            goto done;
        }
    } else if (req->as_user > 0) {
        c.uid = req->as_user;
    } else if (req->token && *req->token) {
        c.uid = cv_int(&c, 0, "t", "SELECT user_id FROM tokens WHERE token=?", req->token);
        if (!c.uid) {
            cv_error(&c, 401, "Invalid access token.");
            goto done;
        }
    } else {
        cv_json(&c, 401, json_pack("{s:s,s:[{s:s}]}", "status", "unauthenticated", "errors",
                                   "message", "user authorization required"));
        goto done;
    }
    c.admin = cv_int(&c, 0, "i", "SELECT count(*) FROM admins WHERE user_id=?", c.uid) > 0;
    const route *best = NULL;
    int best_lits = -1, path_ok = 0;
    for (size_t i = 0; i < sizeof ROUTES / sizeof *ROUTES; i++) {
        if (!matches(&c, ROUTES[i].pattern)) continue;
        path_ok = 1;
        if (strcmp(ROUTES[i].method, req->method)) continue;
        int l = literal_count(ROUTES[i].pattern);
        if (l > best_lits) best = &ROUTES[i], best_lits = l;
    }
    if (!best) {
        (void)path_ok;
        cv_not_found(&c);
        goto done;
    }
    cv_exec(&c, NULL, "BEGIN");
    best->fn(&c);
    cv_exec(&c, NULL, "COMMIT");
done:
    if (!out->body) cv_json(&c, 500, json_pack("{s:[{s:s}]}", "errors", "message",
                                               "An error occurred."));
    db->origin = NULL;
    pthread_mutex_unlock(&db->lock);
    free(path);
}

void mb_canvas_handle_pq(mb_canvas_db *db, const char *method, const char *path_query,
                         json_t *body, const char *token, int64_t as_user, mb_canvas_resp *out)
{
    char *path = mb_strdup(path_query);
    char *q = strchr(path, '?');
    if (q) *q++ = '\0';
    mb_canvas_param *params;
    size_t np;
    mb_canvas_params_parse(q, &params, &np);
    mb_canvas_req req = {.method = method, .path = path, .params = params, .n_params = np,
                         .body = json_is_object(body) ? body : NULL, .token = token,
                         .as_user = as_user, .link_base = "http://canvas.mcpbox/api/v1"};
    mb_canvas_handle(db, &req, out);
    mb_canvas_params_free(params, np);
    free(path);
}

void mb_canvas_resp_free(mb_canvas_resp *r)
{
    if (!r) return;
    json_decref(r->body);
    free(r->link);
    r->body = NULL;
    r->link = NULL;
}

/* ------------------------------------------------------------ query, forms */

static char *url_decode(const char *s, size_t n, int plus)
{
    mb_buf b = {0};
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%' && i + 2 < n && isxdigit((unsigned char)s[i + 1]) &&
            isxdigit((unsigned char)s[i + 2])) {
            char hex[3] = {s[i + 1], s[i + 2], 0};
            mb_buf_putc(&b, (char)strtol(hex, NULL, 16));
            i += 2;
        } else if (plus && s[i] == '+') {
            mb_buf_putc(&b, ' ');
        } else {
            mb_buf_putc(&b, s[i]);
        }
    }
    mb_buf_putc(&b, 0);
    char *out = mb_buf_steal(&b);
    /* Keep only valid UTF-8 (what reaches JSON). */
    size_t len = strlen(out);
    if (!mb_utf8_valid(out, len)) {
        size_t rl;
        char *r = mb_utf8_repair(out, len, &rl);
        free(out);
        out = r;
    }
    return out;
}

void mb_canvas_params_parse(const char *query, mb_canvas_param **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (!query) return;
    size_t cap = 0;
    const char *p = query;
    while (*p && *n < 256) {
        const char *amp = strchr(p, '&');
        size_t len = amp ? (size_t)(amp - p) : strlen(p);
        if (len) {
            const char *eq = memchr(p, '=', len);
            size_t kl = eq ? (size_t)(eq - p) : len;
            if (*n == cap) {
                cap = cap ? cap * 2 : 8;
                *out = mb_realloc(*out, cap * sizeof **out);
            }
            (*out)[*n].key = url_decode(p, kl, 1);
            (*out)[*n].val = eq ? url_decode(eq + 1, len - kl - 1, 1) : mb_strdup("");
            (*n)++;
        }
        if (!amp) break;
        p = amp + 1;
    }
}

void mb_canvas_params_free(mb_canvas_param *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(p[i].key);
        free(p[i].val);
    }
    free(p);
}

/* Puts value at a[b][c], a[b][] or a[][c] of obj, as Rack reads form keys:
 * "a[][c]" adds to the array's last object unless that already has c. */
static void form_put(json_t *obj, const char *key, const char *val)
{
    size_t kl = strcspn(key, "[");
    char *name = mb_strndup(key, kl);
    const char *rest = key + kl;
    json_t *cur = obj;
    while (*rest == '[') {
        const char *close = strchr(rest, ']');
        if (!close) break;
        char *sub = mb_strndup(rest + 1, (size_t)(close - rest - 1));
        rest = close + 1;
        if (!*sub) {
            json_t *arr = json_object_get(cur, name);
            if (!json_is_array(arr)) {
                arr = json_array();
                json_object_set_new(cur, name, arr);
            }
            free(sub);
            free(name);
            const char *c2 = *rest == '[' ? strchr(rest, ']') : NULL;
            if (!c2) { /* name[] : an array of values */
                json_array_append_new(arr, json_string(val));
                return;
            }
            char *next = mb_strndup(rest + 1, (size_t)(c2 - rest - 1));
            json_t *last = json_array_get(arr, json_array_size(arr) ? json_array_size(arr) - 1 : 0);
            if (!json_is_object(last) || json_object_get(last, next)) {
                last = json_object();
                json_array_append_new(arr, last);
            }
            free(next);
            cur = last;
            name = mb_strndup(rest + 1, (size_t)(c2 - rest - 1));
            rest = c2 + 1;
            continue;
        }
        json_t *next = json_object_get(cur, name);
        if (!json_is_object(next)) {
            next = json_object();
            json_object_set_new(cur, name, next);
        }
        cur = next;
        free(name);
        name = sub;
    }
    json_object_set_new(cur, name, json_string(val));
    free(name);
}

json_t *mb_canvas_form_to_json(const char *body, size_t len)
{
    char *q = mb_strndup(body, len);
    mb_canvas_param *p;
    size_t n;
    mb_canvas_params_parse(q, &p, &n);
    json_t *obj = json_object();
    for (size_t i = 0; i < n; i++) form_put(obj, p[i].key, p[i].val);
    mb_canvas_params_free(p, n);
    free(q);
    return obj;
}
