/*
 * klavis.c - Klavis's CanvasData: initialize loads courses (with
 * assignments, quizzes and their questions, enrollments by user email,
 * announcements) through the REST core as the first admin, so they get
 * exactly what the API would make; dump reads the same shape back.
 */
#include "canvas/canvas_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct loader {
    mb_canvas_db *db;
    int64_t admin;
    json_t *detail;
} loader;

static void problem(loader *l, json_t *loc, const char *msg, json_t *input)
{
    json_array_append_new(l->detail, json_pack("{s:s,s:o,s:s,s:O?}", "type", "value_error", "loc",
                                               loc, "msg", msg, "input", input));
}

/* One REST call as the admin; the created object's id, or 0. */
static int64_t call(loader *l, const char *method, const char *path, json_t *body, json_t **out)
{
    mb_canvas_req rq = {.method = method, .path = path, .body = body, .as_user = l->admin,
                        .link_base = ""};
    mb_canvas_resp r;
    mb_canvas_handle(l->db, &rq, &r);
    int64_t id = r.status < 300 ? json_integer_value(json_object_get(r.body, "id")) : 0;
    if (out) *out = json_incref(r.body);
    mb_canvas_resp_free(&r);
    return r.status < 300 ? (id ? id : 1) : 0;
}

static int flag(json_t *o, const char *key, int dflt)
{
    json_t *v = json_object_get(o, key);
    return json_is_boolean(v) ? json_is_true(v) : dflt;
}

static void copy_keys(json_t *dst, json_t *src, const char *const *keys)
{
    for (; *keys; keys++) {
        json_t *v = json_object_get(src, *keys);
        if (v && !json_is_null(v)) json_object_set(dst, *keys, v);
    }
}

static void load_course(loader *l, json_t *c, size_t ci)
{
    const char *name = json_string_value(json_object_get(c, "name"));
    const char *code = json_string_value(json_object_get(c, "course_code"));
    if (!name || !code) {
        problem(l, json_pack("[s,s,I,s]", "body", "courses", (json_int_t)ci,
                             name ? "course_code" : "name"), "Field required", c);
        return;
    }
    json_t *body = json_pack("{s:{s:s,s:s}}", "course", "name", name, "course_code", code);
    int64_t cid = call(l, "POST", "/accounts/1/courses", body, NULL);
    json_decref(body);
    if (!cid) return;
    char path[128];
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(c, "enrollments"), i, v) {
        const char *email = json_string_value(json_object_get(v, "user_email"));
        const char *role = json_string_value(json_object_get(v, "role"));
        if (!role) role = "StudentEnrollment";
        char *type = strstr(role, "Enrollment") ? mb_strdup(role) : mb_asprintf("%sEnrollment", role);
        cv ctx = {.db = l->db, .s = l->db->s};
        int64_t uid = email ? cv_int(&ctx, 0, "t", "SELECT id FROM users WHERE lower(email)=lower(?1)"
                                                   " OR lower(login_id)=lower(?1)", email)
                            : 0;
        if (!uid) {
            problem(l, json_pack("[s,s,I,s,I,s]", "body", "courses", (json_int_t)ci, "enrollments",
                                 (json_int_t)i, "user_email"),
                    "no Canvas user has this email", json_object_get(v, "user_email"));
        } else {
            json_t *b = json_pack("{s:{s:I,s:s,s:s}}", "enrollment", "user_id", (json_int_t)uid,
                                  "type", type, "enrollment_state", "active");
            snprintf(path, sizeof path, "/courses/%lld/enrollments", (long long)cid);
            call(l, "POST", path, b, NULL);
            json_decref(b);
        }
        free(type);
    }
    static const char *const akeys[] = {"name", "description", "points_possible", "due_at",
                                        "submission_types", NULL};
    json_array_foreach(json_object_get(c, "assignments"), i, v) {
        json_t *a = json_object();
        copy_keys(a, v, akeys);
        json_object_set_new(a, "published", json_boolean(flag(v, "published", 1)));
        json_t *b = json_pack("{s:o}", "assignment", a);
        snprintf(path, sizeof path, "/courses/%lld/assignments", (long long)cid);
        call(l, "POST", path, b, NULL);
        json_decref(b);
    }
    static const char *const qkeys[] = {"title", "description", "quiz_type", "time_limit", "due_at",
                                        NULL};
    static const char *const xkeys[] = {"question_name", "question_text", "question_type",
                                        "points_possible", "answers", NULL};
    json_array_foreach(json_object_get(c, "quizzes"), i, v) {
        json_t *q = json_object();
        copy_keys(q, v, qkeys);
        if (!json_object_get(q, "quiz_type")) json_object_set_new(q, "quiz_type", json_string("assignment"));
        json_t *b = json_pack("{s:o}", "quiz", q);
        snprintf(path, sizeof path, "/courses/%lld/quizzes", (long long)cid);
        int64_t qid = call(l, "POST", path, b, NULL);
        json_decref(b);
        if (!qid) continue;
        size_t k;
        json_t *x;
        json_array_foreach(json_object_get(v, "questions"), k, x) {
            json_t *qq = json_object();
            copy_keys(qq, x, xkeys);
            if (!json_object_get(qq, "question_type"))
                json_object_set_new(qq, "question_type", json_string("multiple_choice_question"));
            if (!json_object_get(qq, "points_possible"))
                json_object_set_new(qq, "points_possible", json_real(1.0));
            json_t *qb = json_pack("{s:o}", "question", qq);
            snprintf(path, sizeof path, "/courses/%lld/quizzes/%lld/questions", (long long)cid,
                     (long long)qid);
            call(l, "POST", path, qb, NULL);
            json_decref(qb);
        }
        json_t *pub = json_pack("{s:{s:b}}", "quiz", "published", flag(v, "published", 1));
        snprintf(path, sizeof path, "/courses/%lld/quizzes/%lld", (long long)cid, (long long)qid);
        call(l, "PUT", path, pub, NULL);
        json_decref(pub);
    }
    json_array_foreach(json_object_get(c, "announcements"), i, v) {
        json_t *b = json_pack("{s:O?,s:O?,s:b,s:b}", "title", json_object_get(v, "title"),
                              "message", json_object_get(v, "message"), "is_announcement", 1,
                              "published", 1);
        snprintf(path, sizeof path, "/courses/%lld/discussion_topics", (long long)cid);
        call(l, "POST", path, b, NULL);
        json_decref(b);
    }
    if (flag(c, "published", 1)) {
        json_t *b = json_pack("{s:{s:s}}", "course", "event", "offer");
        snprintf(path, sizeof path, "/courses/%lld", (long long)cid);
        call(l, "PUT", path, b, NULL);
        json_decref(b);
    }
}

int mb_canvas_db_load_data(mb_canvas_db *db, json_t *data, json_t **detail, mb_err *err)
{
    loader l = {db, mb_canvas__admin_user(db), json_array()};
    json_t *courses = json_object_get(data, "courses");
    if (courses && !json_is_array(courses)) {
        problem(&l, json_pack("[s,s]", "body", "courses"), "Input should be a valid list", courses);
    } else if (!l.admin) {
        json_decref(l.detail);
        return mb_err_set(err, MB_ECONFLICT, "this Canvas has no admin to load data as");
    } else {
        size_t i;
        json_t *c;
        json_array_foreach(courses, i, c) {
            if (!json_is_object(c))
                problem(&l, json_pack("[s,s,I]", "body", "courses", (json_int_t)i),
                        "Input should be a valid dictionary", c);
            else
                load_course(&l, c, i);
        }
    }
    if (json_array_size(l.detail)) {
        *detail = l.detail;
        return mb_err_set(err, MB_EINVAL, "invalid CanvasData");
    }
    json_decref(l.detail);
    return MB_OK;
}

json_t *mb_canvas_db_dump_data(mb_canvas_db *db)
{
    pthread_mutex_lock(&db->lock);
    cv c = {.db = db, .s = db->s};
    json_t *courses = cv_rows(
        &c, NULL,
        "SELECT json_object('id',c.id,'name',c.name,'course_code',c.course_code,'published',"
        "json(CASE WHEN c.workflow_state IN ('available','completed') THEN 'true' ELSE 'false' END),"
        "'workflow_state',c.workflow_state,"
        "'assignments',(SELECT json_group_array(json_object('id',a.id,'name',a.name,'description',"
        "a.description,'points_possible',a.points_possible,'due_at',a.due_at,'submission_types',"
        "json(a.submission_types),'published',json(CASE WHEN a.published THEN 'true' ELSE 'false'"
        " END),'submissions',(SELECT json_group_array(json_object('user_email',u.email,"
        "'workflow_state',s.workflow_state,'score',s.score,'grade',s.grade,'submitted_at',"
        "s.submitted_at,'body',s.body,'url',s.url)) FROM submissions s JOIN users u ON"
        " u.id=s.user_id WHERE s.assignment_id=a.id AND s.workflow_state!='unsubmitted')))"
        " FROM assignments a WHERE a.course_id=c.id AND a.workflow_state!='deleted' AND a.quiz_id"
        " IS NULL),"
        "'quizzes',(SELECT json_group_array(json_object('id',q.id,'title',q.title,'description',"
        "q.description,'quiz_type',q.quiz_type,'time_limit',q.time_limit,'published',json(CASE WHEN"
        " q.published THEN 'true' ELSE 'false' END),'due_at',q.due_at,'points_possible',"
        "q.points_possible,'questions',(SELECT json_group_array(json_object('id',x.id,"
        "'question_name',x.question_name,'question_text',x.question_text,'question_type',"
        "x.question_type,'points_possible',x.points_possible,'answers',(SELECT json_group_array("
        "json_object('id',json_extract(j.value,'$.id'),'answer_text',json_extract(j.value,'$.text'),"
        "'answer_weight',json_extract(j.value,'$.weight'))) FROM json_each(x.answers) j))) FROM"
        " quiz_questions x WHERE x.quiz_id=q.id),'submissions',(SELECT json_group_array("
        "json_object('user_email',u.email,'attempt',s.attempt,'workflow_state',s.workflow_state,"
        "'score',s.score,'kept_score',s.kept_score)) FROM quiz_submissions s JOIN users u ON"
        " u.id=s.user_id WHERE s.quiz_id=q.id))) FROM quizzes q WHERE q.course_id=c.id),"
        "'enrollments',(SELECT json_group_array(json_object('user_email',u.email,'role',e.type,"
        "'enrollment_state',e.workflow_state)) FROM enrollments e JOIN users u ON u.id=e.user_id"
        " WHERE e.course_id=c.id AND e.workflow_state!='deleted'),"
        "'announcements',(SELECT json_group_array(json_object('id',t.id,'title',t.title,'message',"
        "t.message)) FROM discussion_topics t WHERE t.course_id=c.id AND t.is_announcement=1),"
        "'discussion_topics',(SELECT json_group_array(json_object('id',t.id,'title',t.title,"
        "'message',t.message,'entries',(SELECT json_group_array(json_object('user_email',u.email,"
        "'message',e.message)) FROM discussion_entries e JOIN users u ON u.id=e.user_id WHERE"
        " e.topic_id=t.id))) FROM discussion_topics t WHERE t.course_id=c.id AND"
        " t.is_announcement=0)) FROM courses c WHERE c.workflow_state!='deleted' ORDER BY c.id");
    json_t *conv = cv_rows(
        &c, NULL,
        "SELECT json_object('id',v.id,'subject',v.subject,'participants',(SELECT json_group_array("
        "u.email) FROM conversation_participants p JOIN users u ON u.id=p.user_id WHERE"
        " p.conversation_id=v.id),'messages',(SELECT json_group_array(json_object('author_email',"
        "u.email,'body',m.body,'created_at',m.created_at)) FROM conversation_messages m JOIN users u"
        " ON u.id=m.author_id WHERE m.conversation_id=v.id)) FROM conversations v ORDER BY v.id");
    pthread_mutex_unlock(&db->lock);
    return json_pack("{s:o,s:o}", "courses", courses, "conversations", conv);
}
