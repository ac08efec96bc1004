/*
 * r_courses.c - the caller (users/self), accounts, users, courses, sections
 * and enrollments; roles and course visibility.
 */
#include "canvas/canvas_int.h"

#include <stdlib.h>
#include <string.h>

#define NOW "strftime('%Y-%m-%dT%H:%M:%SZ','now')"

/* ------------------------------------------------------------ roles */

int cv_role(cv *c, int64_t course_id)
{
    char *t = cv_text(c, "ii",
                      "SELECT type FROM enrollments WHERE course_id=? AND user_id=? AND"
                      " workflow_state IN ('active','invited') ORDER BY CASE type"
                      " WHEN 'TeacherEnrollment' THEN 0 WHEN 'TaEnrollment' THEN 1 WHEN"
                      " 'DesignerEnrollment' THEN 2 WHEN 'StudentEnrollment' THEN 3 ELSE 4 END LIMIT 1",
                      course_id, c->uid);
    int r = CV_NONE;
    if (t) {
        r = !strcmp(t, "TeacherEnrollment")    ? CV_TEACHER
            : !strcmp(t, "TaEnrollment")       ? CV_TA
            : !strcmp(t, "StudentEnrollment")  ? CV_STUDENT
            : !strcmp(t, "DesignerEnrollment") ? CV_DESIGNER
                                               : CV_OBSERVER;
        free(t);
    }
    return r;
}

static char *course_state(cv *c, int64_t id)
{
    return cv_text(c, "i", "SELECT workflow_state FROM courses WHERE id=?", id);
}

int cv_can_read(cv *c, int64_t course_id)
{
    char *st = course_state(c, course_id);
    if (!st || !strcmp(st, "deleted")) {
        free(st);
        cv_not_found(c);
        return 0;
    }
    int ok = c->admin;
    if (!ok) {
        int r = cv_role(c, course_id);
        /* Students and observers see a course once it is published. */
        ok = r == CV_TEACHER || r == CV_TA || r == CV_DESIGNER ||
             ((r == CV_STUDENT || r == CV_OBSERVER) && strcmp(st, "unpublished"));
    }
    free(st);
    if (!ok) cv_unauthorized(c);
    return ok;
}

int cv_can_manage(cv *c, int64_t course_id)
{
    if (!cv_can_read(c, course_id)) return 0;
    int r = c->admin ? CV_TEACHER : cv_role(c, course_id);
    if (r == CV_TEACHER || r == CV_TA || r == CV_DESIGNER) return 1;
    cv_unauthorized(c);
    return 0;
}

int cv_course_obj(cv *c, int i, const char *table, const char *where, int manage, int64_t *cid,
                  int64_t *id)
{
    *cid = cv_seg_id(c, 1);
    *id = cv_seg_id(c, i);
    if (!*cid || !*id) {
        cv_not_found(c);
        return 0;
    }
    if (!(manage ? cv_can_manage(c, *cid) : cv_can_read(c, *cid))) return 0;
    char *sql = mb_asprintf("SELECT count(*) FROM %s WHERE id=? AND course_id=? %s", table,
                            where ? where : "");
    int found = cv_int(c, 0, "ii", sql, *id, *cid) > 0;
    free(sql);
    if (!found) cv_not_found(c);
    return found;
}

const char *cv_create_in(cv *c, const char *obj, const char *key, int64_t *cid)
{
    *cid = cv_seg_id(c, 1);
    if (!*cid) {
        cv_not_found(c);
        return NULL;
    }
    if (!cv_can_manage(c, *cid)) return NULL;
    const char *v = cv_body_str(c, obj, key);
    if (!v || !*v) {
        cv_json(c, 400, json_pack("{s:{s:[{s:s,s:s,s:s}]}}", "errors", key, "attribute", key,
                                  "type", "blank", "message", "blank"));
        return NULL;
    }
    return v;
}

/* ------------------------------------------------------------ users */

#define USER_OBJ(u)                                                                          \
    "json_object('id'," u ".id,'name'," u ".name,'created_at'," u ".created_at,"             \
    "'sortable_name'," u ".sortable_name,'short_name'," u ".short_name,'sis_user_id',NULL,"   \
    "'integration_id',NULL,'sis_import_id',NULL,'login_id'," u ".login_id"

json_t *cv_user_json(cv *c, int64_t id)
{
    return cv_row(c, "i", "SELECT " USER_OBJ("u") ",'email',u.email) FROM users u WHERE id=?", id);
}

static json_t *profile(cv *c, int64_t id)
{
    return cv_row(c, "i",
                  "SELECT json_object('id',id,'name',name,'short_name',short_name,"
                  "'sortable_name',sortable_name,'avatar_url',"
                  "cv_origin() || '/images/messages/avatar-50.png','title',title,'bio',bio,"
                  "'pronunciation',NULL,'primary_email',email,'login_id',login_id,"
                  "'integration_id',NULL,'time_zone',time_zone,'locale',locale,"
                  "'effective_locale',IFNULL(locale,'en'),'calendar',json_object('ics',"
                  "cv_origin() || '/feeds/calendars/user_' || id || '.ics'),'lti_user_id',"
                  "NULL,'k5_user',json('false'),'use_classic_font_in_k5',json('false'))"
                  " FROM users WHERE id=?",
                  id);
}

void r_self_profile(cv *c)
{
    int64_t id = c->uid;
    if (strcmp(c->seg[1], "self")) {
        id = cv_seg_id(c, 1);
        if (id != c->uid && !c->admin) {
            cv_unauthorized(c);
            return;
        }
    }
    json_t *p = profile(c, id);
    if (!p) return cv_not_found(c);
    cv_json(c, 200, p);
}

void r_self_get(cv *c)
{
    json_t *u = cv_row(c, "i",
                       "SELECT " USER_OBJ("u") ",'avatar_url',"
                       "cv_origin() || '/images/messages/avatar-50.png','locale',u.locale,"
                       "'effective_locale',IFNULL(u.locale,'en'),'permissions',json_object("
                       "'can_update_name',json('true'),'can_update_avatar',json('true'),"
                       "'limit_parent_app_web_access',json('false'))) FROM users u WHERE id=?",
                       c->uid);
    if (!u) return cv_not_found(c);
    cv_json(c, 200, u);
}

void r_user_get(cv *c)
{
    int64_t id = cv_seg_id(c, 1);
    if (!id) return cv_not_found(c);
    if (id != c->uid && !c->admin) return cv_unauthorized(c);
    json_t *u = cv_user_json(c, id);
    if (!u) return cv_not_found(c);
    cv_json(c, 200, u);
}

void r_self_update(cv *c)
{
    static const char *const fields[] = {"name", "short_name", "sortable_name", "bio", "title",
                                         "time_zone", "locale"};
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
        const char *v = cv_body_str(c, "user", fields[i]);
        if (!v) continue;
        char *sql = mb_asprintf("UPDATE users SET %s=? WHERE id=?", fields[i]);
        cv_exec(c, "ti", sql, v, c->uid);
        free(sql);
    }
    r_self_get(c);
}

void r_account_users(cv *c)
{
    int64_t acc = cv_seg_id(c, 1);
    if (acc != 1 || !cv_int(c, 0, "i", "SELECT count(*) FROM accounts WHERE id=?", acc))
        return cv_not_found(c);
    if (!c->admin) return cv_unauthorized(c);
    const char *term = cv_param(c, "search_term");
    if (term && strlen(term) < 2) {
        cv_json(c, 400, json_pack("{s:[{s:s,s:s}]}", "errors", "field", "search_term", "message",
                                  "2 or more characters is required"));
        return;
    }
    const char *sort = cv_param(c, "sort");
    const char *order = cv_param(c, "order");
    const char *col = !sort || !strcmp(sort, "username") ? "u.sortable_name"
                      : !strcmp(sort, "email")           ? "u.email"
                      : !strcmp(sort, "sis_id")          ? "u.id"
                                                         : "u.sortable_name";
    char *sql = mb_asprintf("SELECT " USER_OBJ("u") ",'email',u.email) FROM users u WHERE"
                            " u.workflow_state!='deleted' AND (?1 IS NULL OR instr(lower(u.name),"
                            " lower(?1)) OR instr(lower(u.login_id), lower(?1)) OR"
                            " instr(lower(u.email), lower(?1))) ORDER BY %s COLLATE NOCASE %s, u.id",
                            col, order && !strcmp(order, "desc") ? "DESC" : "ASC");
    cv_list(c, cv_rows(c, "t", sql, term));
    free(sql);
}

void r_account_user_create(cv *c)
{
    if (cv_seg_id(c, 1) != 1) return cv_not_found(c);
    if (!c->admin) return cv_unauthorized(c);
    const char *name = cv_body_str(c, "user", "name");
    const char *login = cv_body_str(c, "pseudonym", "unique_id");
    if (!login || !*login) {
        cv_json(c, 400, json_pack("{s:{s:{s:{s:[{s:s,s:s,s:s}]}}}}", "errors", "pseudonym",
                                  "unique_id", "errors", "attribute", "unique_id", "type",
                                  "blank", "message", "blank"));
        return;
    }
    if (cv_int(c, 0, "t", "SELECT count(*) FROM users WHERE login_id=?", login)) {
        cv_json(c, 400, json_pack("{s:{s:{s:[{s:s,s:s,s:s}]}}}", "errors", "unique_id", "errors",
                                  "attribute", "unique_id", "type", "taken", "message",
                                  "ID already in use for this account and authentication provider"));
        return;
    }
    if (!name || !*name) name = login;
    const char *sn = cv_body_str(c, "user", "short_name");
    const char *srt = cv_body_str(c, "user", "sortable_name");
    const char *email = cv_body_str(c, "communication_channel", "address");
    cv_exec(c, "ttttt",
            "INSERT INTO users(name, short_name, sortable_name, email, login_id, created_at)"
            " VALUES(?1, IFNULL(?2,?1), IFNULL(?3,?1), IFNULL(?4,?5), ?5, " NOW ")",
            name, sn, srt, email, login);
    int64_t id = cv_last_id(c);
    json_t *u = cv_row(c, "i", "SELECT " USER_OBJ("u") ") FROM users u WHERE id=?", id);
    cv_json(c, 200, u);
}

/* ------------------------------------------------------------ accounts */

#define ACCOUNT_OBJ                                                                          \
    "json_object('id',id,'name',name,'workflow_state',workflow_state,'parent_account_id',"   \
    "parent_account_id,'root_account_id',root_account_id,'uuid',uuid,'default_storage_quota_mb',"\
    "500,'default_user_storage_quota_mb',50,'default_group_storage_quota_mb',50,"            \
    "'default_time_zone','America/Denver')"

void r_account_get(cv *c)
{
    int64_t id = cv_seg_id(c, 1);
    json_t *a = cv_row(c, "i", "SELECT " ACCOUNT_OBJ " FROM accounts WHERE id=?", id);
    if (!a) return cv_not_found(c);
    if (!c->admin) {
        json_decref(a);
        return cv_unauthorized(c);
    }
    cv_json(c, 200, a);
}

void r_accounts_list(cv *c)
{
    if (!c->admin) return cv_list(c, json_array());
    cv_list(c, cv_rows(c, NULL, "SELECT " ACCOUNT_OBJ " FROM accounts ORDER BY id"));
}

void r_sub_accounts(cv *c)
{
    int64_t id = cv_seg_id(c, 1);
    if (!cv_int(c, 0, "i", "SELECT count(*) FROM accounts WHERE id=?", id)) return cv_not_found(c);
    if (!c->admin) return cv_unauthorized(c);
    cv_list(c, cv_rows(c, "i", "SELECT " ACCOUNT_OBJ " FROM accounts WHERE parent_account_id=?"
                               " ORDER BY id", id));
}

/* ------------------------------------------------------------ courses */

json_t *cv_course_json(cv *c, int64_t id)
{
    return cv_row(c, "i",
                  "SELECT json_object('id',id,'name',name,'account_id',account_id,'uuid',uuid,"
                  "'start_at',start_at,'grading_standard_id',NULL,'is_public',"
                  "json(CASE WHEN is_public THEN 'true' ELSE 'false' END),'created_at',created_at,"
                  "'course_code',course_code,'default_view',default_view,'root_account_id',1,"
                  "'enrollment_term_id',1,'license',license,'grade_passback_setting',NULL,"
                  "'end_at',end_at,'public_syllabus',json('false'),'public_syllabus_to_auth',"
                  "json('false'),'storage_quota_mb',500,'is_public_to_auth_users',json('false'),"
                  "'homeroom_course',json('false'),'course_color',NULL,'friendly_name',NULL,"
                  "'apply_assignment_group_weights',json('false'),'calendar',json_object('ics',"
                  "cv_origin() || '/feeds/calendars/course_' || uuid || '.ics'),"
                  "'time_zone',time_zone,'blueprint',json('false'),'template',json('false'),"
                  "'sis_course_id',sis_course_id,'integration_id',NULL,'hide_final_grades',"
                  "json('false'),'workflow_state',workflow_state,"
                  "'restrict_enrollments_to_course_dates',"
                  "json(CASE WHEN restrict_dates THEN 'true' ELSE 'false' END))"
                  " FROM courses WHERE id=?",
                  id);
}

static json_t *course_full(cv *c, int64_t id)
{
    json_t *o = cv_course_json(c, id);
    if (!o) return NULL;
    json_t *enr = cv_rows(c, "ii",
                          "SELECT json_object('type',lower(replace(type,'Enrollment','')),'role',"
                          "type,'role_id',CASE type WHEN 'StudentEnrollment' THEN 3 WHEN"
                          " 'TeacherEnrollment' THEN 4 WHEN 'TaEnrollment' THEN 5 WHEN"
                          " 'DesignerEnrollment' THEN 6 ELSE 7 END,'user_id',user_id,"
                          "'enrollment_state',workflow_state,'limit_privileges_to_course_section',"
                          "json('false')) FROM enrollments WHERE course_id=? AND user_id=? AND"
                          " workflow_state!='deleted' ORDER BY id",
                          id, c->uid);
    json_object_set_new(o, "enrollments", enr);
    if (cv_include(c, "total_students"))
        json_object_set_new(o, "total_students",
                            json_integer(cv_int(c, 0, "i",
                                                "SELECT count(DISTINCT user_id) FROM enrollments"
                                                " WHERE course_id=? AND type='StudentEnrollment'"
                                                " AND workflow_state IN ('active','invited')",
                                                id)));
    if (cv_include(c, "teachers"))
        json_object_set_new(
            o, "teachers",
            cv_rows(c, "i",
                    "SELECT json_object('id',u.id,'anonymous_id',CAST(u.id AS TEXT),"
                    "'display_name',u.short_name,'avatar_image_url',"
                    "cv_origin() || '/images/messages/avatar-50.png','html_url',"
                    "cv_origin() || '/courses/' || e.course_id || '/users/' || u.id,"
                    "'pronouns',NULL) FROM enrollments e JOIN users u ON u.id=e.user_id WHERE"
                    " e.course_id=? AND e.type='TeacherEnrollment' AND e.workflow_state IN"
                    " ('active','invited') ORDER BY e.id",
                    id));
    if (cv_include(c, "term"))
        json_object_set_new(o, "term",
                            json_pack("{s:i,s:s,s:n,s:n,s:s,s:n,s:s}", "id", 1, "name",
                                      "Default Term", "start_at", "end_at", "created_at",
                                      "2025-01-01T00:00:00Z", "grading_period_group_id",
                                      "workflow_state", "active"));
    if (cv_include(c, "syllabus_body")) {
        char *sb = cv_text(c, "i", "SELECT syllabus_body FROM courses WHERE id=?", id);
        json_object_set_new(o, "syllabus_body", sb ? json_string(sb) : json_null());
        free(sb);
    }
    if (cv_include(c, "sections"))
        json_object_set_new(o, "sections",
                            cv_rows(c, "ii",
                                    "SELECT json_object('id',s.id,'name',s.name,'start_at',NULL,"
                                    "'end_at',NULL,'enrollment_role',e.type) FROM enrollments e"
                                    " JOIN sections s ON s.id=e.section_id WHERE e.course_id=?"
                                    " AND e.user_id=? AND e.workflow_state!='deleted'",
                                    id, c->uid));
    return o;
}

/* cv_map's shape of course_full and cv_course_json (arg: full). */
static json_t *course_of(cv *c, int64_t id, int full)
{
    return full ? course_full(c, id) : cv_course_json(c, id);
}

void r_courses_list(cv *c)
{
    /* The caller's courses through enrollments (admins too), as Canvas. */
    const char *es = cv_param(c, "enrollment_state");
    int want_states = 0;
    for (size_t i = 0; i < c->req->n_params; i++)
        if (!strcmp(c->req->params[i].key, "state[]")) want_states = 1;
    json_t *ids = cv_rows(c, "it",
                          "SELECT DISTINCT c.id FROM courses c JOIN enrollments e ON e.course_id=c.id"
                          " WHERE e.user_id=?1 AND c.workflow_state!='deleted' AND"
                          " e.workflow_state NOT IN ('deleted','rejected') AND"
                          " (?2 IS NULL OR e.workflow_state=?2) AND (c.workflow_state!='unpublished'"
                          " OR e.type IN ('TeacherEnrollment','TaEnrollment','DesignerEnrollment'))"
                          " ORDER BY c.id",
                          c->uid, es);
    if (want_states) {
        json_t *keep = json_array();
        size_t i;
        json_t *v;
        json_array_foreach(ids, i, v) {
            char *st = course_state(c, json_integer_value(v));
            if (st && cv_has_param(c, "state[]", st)) json_array_append(keep, v);
            free(st);
        }
        json_decref(ids);
        ids = keep;
    }
    cv_list(c, cv_map(c, ids, course_of, 1));
}

void r_course_get(cv *c)
{
    int64_t id = cv_seg_id(c, 1);
    if (!id || !cv_can_read(c, id)) {
        if (!id) cv_not_found(c);
        return;
    }
    cv_json(c, 200, course_full(c, id));
}

static const char *event_of(cv *c)
{
    const char *ev = cv_body_str(c, "course", "event");
    return ev ? ev : cv_body_str(c, NULL, "event");
}

void r_course_update(cv *c)
{
    int64_t id = cv_seg_id(c, 1);
    if (!id) return cv_not_found(c);
    if (!cv_can_manage(c, id)) return;
    static const char *const text_fields[] = {"name", "course_code", "start_at", "end_at",
                                              "license", "syllabus_body", "time_zone",
                                              "default_view", "public_description",
                                              "sis_course_id"};
    for (size_t i = 0; i < sizeof text_fields / sizeof *text_fields; i++) {
        json_t *v = cv_body(c, "course", text_fields[i]);
        if (!v) continue;
        char *sql = mb_asprintf("UPDATE courses SET %s=? WHERE id=?", text_fields[i]);
        cv_exec(c, "ti", sql, json_is_string(v) ? json_string_value(v) : NULL, id);
        free(sql);
    }
    if (cv_body_has(c, "course", "is_public"))
        cv_exec(c, "ii", "UPDATE courses SET is_public=? WHERE id=?",
                (int64_t)cv_body_bool(c, "course", "is_public", 0), id);
    const char *ev = event_of(c);
    const char *ws = cv_body_str(c, "course", "workflow_state");
    const char *to = NULL;
    if (ev) {
        to = !strcmp(ev, "offer")      ? "available"
             : !strcmp(ev, "claim")    ? "unpublished"
             : !strcmp(ev, "conclude") ? "completed"
             : !strcmp(ev, "delete")   ? "deleted"
             : !strcmp(ev, "undelete") ? "unpublished"
                                       : NULL;
        if (!to) {
            cv_error(c, 400, "invalid event");
            return;
        }
    } else if (ws && (!strcmp(ws, "deleted") || !strcmp(ws, "available") ||
                      !strcmp(ws, "unpublished") || !strcmp(ws, "completed"))) {
        to = ws;
    }
    if (to) cv_exec(c, "ti", "UPDATE courses SET workflow_state=? WHERE id=?", to, id);
    if (to && !strcmp(to, "deleted")) {
        cv_json(c, 200, cv_course_json(c, id));
        return;
    }
    cv_json(c, 200, course_full(c, id));
}

void r_course_delete(cv *c)
{
    int64_t id = cv_seg_id(c, 1);
    if (!id) return cv_not_found(c);
    if (!cv_can_read(c, id)) return;
    if (!c->admin && cv_role(c, id) != CV_TEACHER) return cv_unauthorized(c);
    const char *ev = cv_param(c, "event");
    if (!ev) ev = cv_body_str(c, NULL, "event");
    if (!ev || (strcmp(ev, "delete") && strcmp(ev, "conclude"))) {
        cv_json(c, 400, json_pack("{s:s}", "message", "Only 'delete' and 'conclude' events are allowed."));
        return;
    }
    int del = !strcmp(ev, "delete");
    cv_exec(c, "ti", "UPDATE courses SET workflow_state=? WHERE id=?",
            del ? "deleted" : "completed", id);
    cv_json(c, 200, json_pack("{s:b}", del ? "delete" : "conclude", 1));
}

void r_account_courses(cv *c)
{
    int64_t acc = cv_seg_id(c, 1);
    if (!cv_int(c, 0, "i", "SELECT count(*) FROM accounts WHERE id=?", acc)) return cv_not_found(c);
    if (!c->admin) return cv_unauthorized(c);
    const char *term = cv_param(c, "search_term");
    const char *we = cv_param(c, "with_enrollments");
    const char *pub = cv_param(c, "published");
    const char *done = cv_param(c, "completed");
    const char *sort = cv_param(c, "sort");
    const char *order = cv_param(c, "order");
    const char *col = sort && !strcmp(sort, "course_name") ? "c.name COLLATE NOCASE"
                      : sort && !strcmp(sort, "sis_course_id") ? "c.sis_course_id"
                                                               : "c.id";
    if (!sort) col = "c.id";
    char *sql = mb_asprintf(
        "SELECT c.id FROM courses c WHERE c.account_id=?1 AND c.workflow_state!='deleted' AND"
        " (?2 IS NULL OR instr(lower(c.name), lower(?2)) OR instr(lower(c.course_code), lower(?2)))"
        " AND (?3 IS NULL OR (?3 IN ('true','1')) = EXISTS(SELECT 1 FROM enrollments e WHERE"
        " e.course_id=c.id AND e.workflow_state!='deleted'))"
        " AND (?4 IS NULL OR (?4 IN ('true','1')) = (c.workflow_state IN ('available','completed')))"
        " AND (?5 IS NULL OR (?5 IN ('true','1')) = (c.workflow_state='completed'))"
        " ORDER BY %s %s, c.id",
        col, order && !strcmp(order, "desc") ? "DESC" : "ASC");
    json_t *ids = cv_rows(c, "ittt", sql, acc, term, we, pub, done);
    free(sql);
    cv_list(c, cv_map(c, ids, course_of, 0));
}

void r_account_course_create(cv *c)
{
    int64_t acc = cv_seg_id(c, 1);
    if (!cv_int(c, 0, "i", "SELECT count(*) FROM accounts WHERE id=?", acc)) return cv_not_found(c);
    if (!c->admin) return cv_unauthorized(c);
    const char *name = cv_body_str(c, "course", "name");
    const char *code = cv_body_str(c, "course", "course_code");
    cv_exec(c, "ittttttti",
            "INSERT INTO courses(account_id, name, course_code, start_at, end_at, license,"
            " syllabus_body, time_zone, is_public, created_at, uuid) VALUES(?,IFNULL(?,'Unnamed Course'),"
            " IFNULL(?,'Unnamed'),?,?,IFNULL(?,'private'),?,IFNULL(?,'America/Denver'),?," NOW ","
            " lower(hex(randomblob(20))))",
            acc, name, code, cv_body_str(c, "course", "start_at"),
            cv_body_str(c, "course", "end_at"), cv_body_str(c, "course", "license"),
            cv_body_str(c, "course", "syllabus_body"), cv_body_str(c, "course", "time_zone"),
            (int64_t)cv_body_bool(c, "course", "is_public", 0));
    int64_t id = cv_last_id(c);
    cv_exec(c, "it", "INSERT INTO sections(course_id, name, created_at) VALUES(?,?," NOW ")", id,
            name ? name : "Unnamed Course");
    if (cv_body_bool(c, NULL, "offer", 0))
        cv_exec(c, "i", "UPDATE courses SET workflow_state='available' WHERE id=?", id);
    cv_json(c, 200, cv_course_json(c, id));
}

/* ------------------------------------------------------------ enrollments */

#define ENROLLMENT_OBJ                                                                       \
    "json_object('id',e.id,'user_id',e.user_id,'course_id',e.course_id,'type',e.type,"       \
    "'created_at',e.created_at,'updated_at',e.updated_at,'associated_user_id',NULL,"         \
    "'start_at',NULL,'end_at',NULL,'course_section_id',e.section_id,'root_account_id',1,"   \
    "'limit_privileges_to_course_section',json('false'),'enrollment_state',e.workflow_state,"\
    "'role',e.type,'role_id',CASE e.type WHEN 'StudentEnrollment' THEN 3 WHEN"              \
    " 'TeacherEnrollment' THEN 4 WHEN 'TaEnrollment' THEN 5 WHEN 'DesignerEnrollment' THEN 6"\
    " ELSE 7 END,'last_activity_at',NULL,'last_attended_at',NULL,'total_activity_time',0,"  \
    "'sis_import_id',NULL,'sis_account_id',NULL,'sis_course_id',NULL,"                      \
    "'course_integration_id',NULL,'sis_section_id',NULL,'section_integration_id',NULL,"     \
    "'sis_user_id',NULL,'html_url',cv_origin() || '/courses/' || e.course_id ||"     \
    " '/users/' || e.user_id,'user'," USER_OBJ("u") "))"

static json_t *grades_of(cv *c, int64_t course_id, int64_t user_id)
{
    json_t *g = cv_row(c, "ii",
                       "SELECT json_object('html_url',cv_origin() || '/courses/' || ?1 ||"
                       " '/grades/' || ?2,'current_score',CASE WHEN sum(a.points_possible) > 0 THEN"
                       " round(100.0*sum(s.score)/sum(a.points_possible),2) END,'final_score',"
                       "round(100.0*IFNULL(sum(s.score),0)/max(1,(SELECT IFNULL(sum(points_possible),0)"
                       " FROM assignments WHERE course_id=?1 AND published=1 AND"
                       " workflow_state!='deleted')),2),'current_grade',NULL,'final_grade',NULL)"
                       " FROM submissions s JOIN assignments a ON a.id=s.assignment_id WHERE"
                       " a.course_id=?1 AND s.user_id=?2 AND s.score IS NOT NULL AND"
                       " a.workflow_state!='deleted'",
                       course_id, user_id);
    return g ? g : json_object();
}

static json_t *enrollment_rows(cv *c, const char *where, const char *types, int64_t a, int64_t b)
{
    char *sql = mb_asprintf("SELECT " ENROLLMENT_OBJ " FROM enrollments e JOIN users u ON"
                            " u.id=e.user_id WHERE %s ORDER BY e.id", where);
    json_t *rows = cv_rows(c, types, sql, a, b);
    free(sql);
    {
        size_t i;
        json_t *e;
        json_array_foreach(rows, i, e) {
            if (strcmp(json_string_value(json_object_get(e, "type")), "StudentEnrollment")) continue;
            json_object_set_new(e, "grades",
                                grades_of(c, json_integer_value(json_object_get(e, "course_id")),
                                          json_integer_value(json_object_get(e, "user_id"))));
        }
    }
    return rows;
}

void r_enrollments_list(cv *c)
{
    int64_t id = cv_seg_id(c, 1);
    if (!id) return cv_not_found(c);
    if (!cv_can_read(c, id)) return;
    int r = c->admin ? CV_TEACHER : cv_role(c, id);
    json_t *rows;
    if (r == CV_STUDENT || r == CV_OBSERVER)
        rows = enrollment_rows(c, "e.course_id=? AND e.user_id=? AND e.workflow_state!='deleted'",
                               "ii", id, c->uid);
    else
        rows = enrollment_rows(c, "e.course_id=? AND e.workflow_state!='deleted' AND ?>=0", "ii",
                               id, 0);
    /* type[] and state[] filters */
    int has_type = 0, has_state = 0;
    for (size_t i = 0; i < c->req->n_params; i++) {
        if (!strcmp(c->req->params[i].key, "type[]")) has_type = 1;
        if (!strcmp(c->req->params[i].key, "state[]")) has_state = 1;
    }
    if (has_type || has_state) {
        json_t *keep = json_array();
        size_t i;
        json_t *e;
        json_array_foreach(rows, i, e) {
            if (has_type && !cv_has_param(c, "type[]", json_string_value(json_object_get(e, "type"))))
                continue;
            if (has_state &&
                !cv_has_param(c, "state[]",
                              json_string_value(json_object_get(e, "enrollment_state"))))
                continue;
            json_array_append(keep, e);
        }
        json_decref(rows);
        rows = keep;
    }
    cv_list(c, rows);
}

void r_enrollment_create(cv *c)
{
    int64_t cid = cv_seg_id(c, 1);
    if (!cid) return cv_not_found(c);
    if (!cv_can_manage(c, cid)) return;
    json_t *uidj = cv_body(c, "enrollment", "user_id");
    int64_t uid = json_is_integer(uidj) ? json_integer_value(uidj)
                  : json_is_string(uidj) ? strtoll(json_string_value(uidj), NULL, 10)
                                         : 0;
    if (!uid || !cv_int(c, 0, "i", "SELECT count(*) FROM users WHERE id=?", uid)) {
        cv_error(c, 404, "The specified resource does not exist.");
        return;
    }
    const char *type = cv_body_str(c, "enrollment", "type");
    if (!type) type = cv_body_str(c, "enrollment", "role");
    if (!type) type = "StudentEnrollment";
    static const char *const types[] = {"StudentEnrollment", "TeacherEnrollment", "TaEnrollment",
                                        "ObserverEnrollment", "DesignerEnrollment"};
    int ok = 0;
    for (size_t i = 0; i < 5; i++) ok |= !strcmp(type, types[i]);
    if (!ok) {
        cv_error(c, 400, "Invalid type");
        return;
    }
    const char *state = cv_body_str(c, "enrollment", "enrollment_state");
    if (!state || (strcmp(state, "active") && strcmp(state, "invited") && strcmp(state, "inactive")))
        state = "invited";
    int64_t sec = cv_int(c, 0, "i", "SELECT min(id) FROM sections WHERE course_id=?", cid);
    if (!sec) {
        cv_exec(c, "i", "INSERT INTO sections(course_id, name, created_at) SELECT id, name, " NOW
                        " FROM courses WHERE id=?", cid);
        sec = cv_last_id(c);
    }
    int64_t existing = cv_int(c, 0, "iit",
                              "SELECT id FROM enrollments WHERE course_id=? AND user_id=? AND type=?"
                              " AND workflow_state!='deleted'", cid, uid, type);
    if (existing) {
        cv_exec(c, "ti", "UPDATE enrollments SET workflow_state=?, updated_at=" NOW " WHERE id=?",
                state, existing);
    } else {
        cv_exec(c, "iiitt",
                "INSERT INTO enrollments(course_id, section_id, user_id, type, workflow_state,"
                " created_at, updated_at) VALUES(?,?,?,?,?," NOW "," NOW ")",
                cid, sec, uid, type, state);
        existing = cv_last_id(c);
    }
    cv_json(c, 200, cv_row(c, "i", "SELECT " ENROLLMENT_OBJ " FROM enrollments e JOIN users u ON"
                                   " u.id=e.user_id WHERE e.id=?", existing));
}

void r_enrollment_delete(cv *c)
{
    int64_t cid = cv_seg_id(c, 1), eid = cv_seg_id(c, 3);
    if (!cid || !eid) return cv_not_found(c);
    if (!cv_can_manage(c, cid)) return;
    if (!cv_int(c, 0, "ii", "SELECT count(*) FROM enrollments WHERE id=? AND course_id=?", eid, cid))
        return cv_not_found(c);
    const char *task = cv_param(c, "task");
    if (!task) task = cv_body_str(c, NULL, "task");
    const char *to = task && !strcmp(task, "delete")       ? "deleted"
                     : task && !strcmp(task, "inactivate") ? "inactive"
                     : task && !strcmp(task, "deactivate") ? "inactive"
                                                           : "completed";
    cv_exec(c, "ti", "UPDATE enrollments SET workflow_state=?, updated_at=" NOW " WHERE id=?", to,
            eid);
    cv_json(c, 200, cv_row(c, "i", "SELECT " ENROLLMENT_OBJ " FROM enrollments e JOIN users u ON"
                                   " u.id=e.user_id WHERE e.id=?", eid));
}

void r_course_users(cv *c)
{
    int64_t cid = cv_seg_id(c, 1);
    if (!cid) return cv_not_found(c);
    if (!cv_can_read(c, cid)) return;
    int students = !strcmp(c->seg[2], "students");
    const char *et = cv_param(c, "enrollment_type[]");
    if (!et) et = cv_param(c, "enrollment_type");
    char *want = NULL;
    if (students) want = mb_strdup("StudentEnrollment");
    else if (et) {
        want = mb_asprintf("%c%sEnrollment", et[0] >= 'a' && et[0] <= 'z' ? et[0] - 32 : et[0], et + 1);
        if (!strcmp(et, "ta")) { free(want); want = mb_strdup("TaEnrollment"); }
    }
    const char *term = cv_param(c, "search_term");
    json_t *rows = cv_rows(c, "itt",
                           "SELECT " USER_OBJ("u") ",'email',u.email) FROM users u WHERE u.id IN"
                           " (SELECT user_id FROM enrollments WHERE course_id=?1 AND workflow_state"
                           " NOT IN ('deleted','completed','inactive') AND (?2 IS NULL OR type=?2))"
                           " AND (?3 IS NULL OR instr(lower(u.name), lower(?3)))"
                           " ORDER BY u.sortable_name COLLATE NOCASE, u.id",
                           cid, want, term);
    free(want);
    if (cv_include(c, "enrollments")) {
        size_t i;
        json_t *u;
        json_array_foreach(rows, i, u) {
            json_object_set_new(u, "enrollments",
                                enrollment_rows(c, "e.course_id=? AND e.user_id=? AND"
                                                   " e.workflow_state!='deleted'",
                                                "ii", cid,
                                                json_integer_value(json_object_get(u, "id"))));
        }
    }
    if (cv_include(c, "avatar_url")) {
        size_t i;
        json_t *u;
        json_array_foreach(rows, i, u) json_object_set_new(
            u, "avatar_url", json_sprintf("%s/images/messages/avatar-50.png", cv_origin(c)));
    }
    cv_list(c, rows);
}

void r_sections_list(cv *c)
{
    int64_t cid = cv_seg_id(c, 1);
    if (!cid) return cv_not_found(c);
    if (!cv_can_read(c, cid)) return;
    cv_list(c, cv_rows(c, "i",
                       "SELECT json_object('id',id,'course_id',course_id,'name',name,'start_at',NULL,"
                       "'end_at',NULL,'created_at',created_at,'restrict_enrollments_to_section_dates',"
                       "NULL,'nonxlist_course_id',NULL,'sis_section_id',NULL,'sis_course_id',NULL,"
                       "'integration_id',NULL,'sis_import_id',NULL) FROM sections WHERE course_id=?"
                       " ORDER BY id", cid));
}
