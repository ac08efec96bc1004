/*
 * r_assign.c - assignment groups, assignments, submissions (grading and
 * comments).
 */
#include "canvas/canvas_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NOW "strftime('%Y-%m-%dT%H:%M:%SZ','now')"
#define JB(x) "json(CASE WHEN " x " THEN 'true' ELSE 'false' END)"

/* Two json_object()s patched together: SQLite allows 127 arguments a call. */
#define ASSIGNMENT_OBJ                                                                        \
    "json_patch(json_object('id',a.id,'description',a.description,'due_at',a.due_at,'unlock_at',"        \
    "a.unlock_at,'lock_at',a.lock_at,'points_possible',a.points_possible,'grading_type',"      \
    "a.grading_type,'assignment_group_id',a.group_id,'grading_standard_id',NULL,'created_at'," \
    "a.created_at,'updated_at',a.updated_at,'peer_reviews',json('false'),"                     \
    "'automatic_peer_reviews',json('false'),'position',a.position,"                           \
    "'grade_group_students_individually',json('false'),'anonymous_peer_reviews',json('false'),"\
    "'group_category_id',NULL,'post_to_sis',json('false'),'moderated_grading',json('false'),"  \
    "'omit_from_final_grade',json('false'),'intra_group_peer_reviews',json('false'),"          \
    "'anonymous_instructor_annotations',json('false'),'anonymous_grading',json('false'),"      \
    "'graders_anonymous_to_graders',json('false'),'grader_count',0,"                           \
    "'grader_comments_visible_to_graders',json('true'),'final_grader_id',NULL,"                \
    "'grader_names_visible_to_final_grader',json('true'),'allowed_attempts',a.allowed_attempts,"\
    "'annotatable_attachment_id',NULL,'hide_in_gradebook',json('false'),'secure_params','',"   \
    "'lti_context_id',printf('%08x',a.id)),json_object('course_id',a.course_id,'name',a.name,"\
    "'submission_types',json(a.submission_types),'has_submitted_submissions',"                 \
    JB("EXISTS(SELECT 1 FROM submissions s WHERE s.assignment_id=a.id AND s.submitted_at IS NOT NULL)") \
    ",'due_date_required',json('false'),'max_name_length',255,'in_closed_grading_period',"     \
    "json('false'),'graded_submissions_exist',"                                                \
    JB("EXISTS(SELECT 1 FROM submissions s WHERE s.assignment_id=a.id AND s.score IS NOT NULL)") \
    ",'is_quiz_assignment'," JB("a.quiz_id IS NOT NULL") ",'can_duplicate',"                   \
    JB("a.quiz_id IS NULL") ",'original_course_id',NULL,'original_assignment_id',NULL,"        \
    "'original_lti_resource_link_id',NULL,'original_assignment_name',NULL,'original_quiz_id',"  \
    "NULL,'workflow_state',a.workflow_state,'important_dates',json('false'),'muted',"          \
    "json('true'),'html_url',cv_origin() || '/courses/' || a.course_id ||"             \
    " '/assignments/' || a.id,'has_overrides',json('false'),'sis_assignment_id',NULL,"         \
    "'integration_id',NULL,'integration_data',json_object(),'allowed_extensions',"             \
    "json(a.allowed_extensions),'published'," JB("a.published") ",'unpublishable',"            \
    JB("NOT EXISTS(SELECT 1 FROM submissions s WHERE s.assignment_id=a.id AND s.submitted_at IS NOT NULL)") \
    ",'only_visible_to_overrides',json('false'),'visible_to_everyone',json('true'),"           \
    "'locked_for_user',json('false'),'submissions_download_url',"                              \
    "cv_origin() || '/courses/' || a.course_id || '/assignments/' || a.id ||"           \
    " '/submissions?zip=1','post_manually',json('false'),'anonymize_students',json('false'),"  \
    "'require_lockdown_browser',json('false'),'restrict_quantitative_data',json('false'),"     \
    "'quiz_id',a.quiz_id,'anonymous_submissions',json('false')))"

#define SUBMISSION_OBJ                                                                        \
    "json_object('id',s.id,'body',s.body,'url',s.url,'grade',s.grade,'score',s.score,"         \
    "'submitted_at',s.submitted_at,'assignment_id',s.assignment_id,'user_id',s.user_id,"       \
    "'submission_type',s.submission_type,'workflow_state',s.workflow_state,"                   \
    "'grade_matches_current_submission',json('true'),'graded_at',s.graded_at,'grader_id',"     \
    "s.grader_id,'attempt',s.attempt,'cached_due_date',a.due_at,'excused',json('false'),"      \
    "'late_policy_status',NULL,'points_deducted',NULL,'grading_period_id',NULL,"               \
    "'extra_attempts',NULL,'posted_at',s.graded_at,'redo_request',json('false'),"              \
    "'custom_grade_status_id',NULL,'sticky',NULL,'late',"                                       \
    JB("s.submitted_at IS NOT NULL AND a.due_at IS NOT NULL AND s.submitted_at > a.due_at")    \
    ",'missing'," JB("s.submitted_at IS NULL AND a.due_at IS NOT NULL AND a.due_at < " NOW)    \
    ",'seconds_late',CASE WHEN s.submitted_at > a.due_at THEN CAST(strftime('%s',s.submitted_at)" \
    " - strftime('%s',a.due_at) AS INTEGER) ELSE 0 END,'entered_grade',s.grade,'entered_score',"\
    "s.score,'preview_url',cv_origin() || '/courses/' || a.course_id || '/assignments/'" \
    " || a.id || '/submissions/' || s.user_id || '?preview=1')"

static json_t *assignment(cv *c, int64_t id)
{
    json_t *o = cv_row(c, "i", "SELECT " ASSIGNMENT_OBJ " FROM assignments a WHERE a.id=?", id);
    if (!o) return NULL;
    json_t *ext = json_object_get(o, "allowed_extensions");
    if (json_is_array(ext) && !json_array_size(ext)) json_object_del(o, "allowed_extensions");
    if (json_is_null(json_object_get(o, "quiz_id"))) json_object_del(o, "quiz_id");
    cv_rubric_of_assignment(c, o);
    return o;
}

static void add_includes(cv *c, json_t *a, int role)
{
    int64_t id = json_integer_value(json_object_get(a, "id"));
    if (role != CV_STUDENT)
        json_object_set_new(a, "needs_grading_count",
                            json_integer(cv_int(c, 0, "i",
                                                "SELECT count(*) FROM submissions WHERE"
                                                " assignment_id=? AND workflow_state IN"
                                                " ('submitted','pending_review')", id)));
    if (cv_include(c, "submission") && role == CV_STUDENT) {
        json_t *s = cv_row(c, "ii", "SELECT " SUBMISSION_OBJ " FROM submissions s JOIN assignments a"
                                    " ON a.id=s.assignment_id WHERE s.assignment_id=? AND s.user_id=?",
                           id, c->uid);
        if (s) json_object_set_new(a, "submission", s);
    }
    if (cv_include(c, "assignment_group")) {
        json_t *g = cv_row(c, "i",
                           "SELECT json_object('id',g.id,'name',g.name,'position',g.position,"
                           "'group_weight',g.group_weight,'sis_source_id',NULL,'integration_data',"
                           "json_object(),'rules',json_object()) FROM assignment_groups g JOIN"
                           " assignments a ON a.group_id=g.id WHERE a.id=?", id);
        if (g) json_object_set_new(a, "assignment_group", g);
    }
}

static int visible_to(cv *c, int role, json_t *a)
{
    return role != CV_STUDENT && role != CV_OBSERVER ? 1
                                                     : json_is_true(json_object_get(a, "published"));
}

void r_assignments_list(cv *c)
{
    int64_t cid = cv_seg_id(c, 1);
    if (!cid) return cv_not_found(c);
    if (!cv_can_read(c, cid)) return;
    int role = c->admin ? CV_TEACHER : cv_role(c, cid);
    json_t *ids = cv_rows(c, "i", "SELECT id FROM assignments WHERE course_id=? AND"
                                  " workflow_state!='deleted' ORDER BY position, id", cid);
    json_t *out = json_array();
    size_t i;
    json_t *v;
    const char *term = cv_param(c, "search_term");
    json_array_foreach(ids, i, v) {
        json_t *a = assignment(c, json_integer_value(v));
        if (!a) continue;
        if (!visible_to(c, role, a) ||
            (term && !strstr(json_string_value(json_object_get(a, "name")), term))) {
            json_decref(a);
            continue;
        }
        add_includes(c, a, role);
        json_array_append_new(out, a);
    }
    json_decref(ids);
    cv_list(c, out);
}

void r_assignment_get(cv *c)
{
    int64_t cid = cv_seg_id(c, 1), aid = cv_seg_id(c, 3);
    if (!cid || !aid) return cv_not_found(c);
    if (!cv_can_read(c, cid)) return;
    int role = c->admin ? CV_TEACHER : cv_role(c, cid);
    json_t *a = cv_int(c, 0, "ii", "SELECT count(*) FROM assignments WHERE id=? AND course_id=? AND"
                                   " workflow_state!='deleted'", aid, cid)
                    ? assignment(c, aid)
                    : NULL;
    if (!a || !visible_to(c, role, a)) {
        json_decref(a);
        return cv_not_found(c);
    }
    add_includes(c, a, role);
    cv_json(c, 200, a);
}

static int64_t default_group(cv *c, int64_t cid)
{
    int64_t g = cv_int(c, 0, "i", "SELECT min(id) FROM assignment_groups WHERE course_id=?", cid);
    if (!g) {
        cv_exec(c, "i", "INSERT INTO assignment_groups(course_id, name, position, created_at)"
                        " VALUES(?, 'Assignments', 1, " NOW ")", cid);
        g = cv_last_id(c);
    }
    return g;
}

/* Writes the assignment fields present in body[assignment] to row id. */
static void assignment_fields(cv *c, int64_t id)
{
    static const char *const text[] = {"name", "description", "due_at", "lock_at", "unlock_at",
                                       "grading_type"};
    cv_set_texts(c, "assignment", "assignments", id, text, sizeof text / sizeof *text);
    if (cv_body_has(c, "assignment", "points_possible"))
        cv_exec(c, "di", "UPDATE assignments SET points_possible=? WHERE id=?",
                cv_body_num(c, "assignment", "points_possible", 0), id);
    if (cv_body_has(c, "assignment", "allowed_attempts"))
        cv_exec(c, "ii", "UPDATE assignments SET allowed_attempts=? WHERE id=?",
                (int64_t)cv_body_num(c, "assignment", "allowed_attempts", -1), id);
    if (cv_body_has(c, "assignment", "position"))
        cv_exec(c, "ii", "UPDATE assignments SET position=? WHERE id=?",
                (int64_t)cv_body_num(c, "assignment", "position", 1), id);
    if (cv_body_has(c, "assignment", "assignment_group_id"))
        cv_exec(c, "ii", "UPDATE assignments SET group_id=? WHERE id=?",
                (int64_t)cv_body_num(c, "assignment", "assignment_group_id", 0), id);
    json_t *st = cv_body(c, "assignment", "submission_types");
    if (json_is_string(st)) {
        json_t *arr = json_pack("[O]", st);
        cv_exec(c, "ji", "UPDATE assignments SET submission_types=? WHERE id=?", arr, id);
        json_decref(arr);
    } else if (json_is_array(st)) {
        cv_exec(c, "ji", "UPDATE assignments SET submission_types=? WHERE id=?", st, id);
    }
    json_t *ext = cv_body(c, "assignment", "allowed_extensions");
    if (json_is_array(ext))
        cv_exec(c, "ji", "UPDATE assignments SET allowed_extensions=? WHERE id=?", ext, id);
    if (cv_body_has(c, "assignment", "published")) {
        int p = cv_body_bool(c, "assignment", "published", 0);
        cv_exec(c, "iti", "UPDATE assignments SET published=?, workflow_state=? WHERE id=?",
                (int64_t)p, p ? "published" : "unpublished", id);
    }
    cv_exec(c, "i", "UPDATE assignments SET updated_at=" NOW " WHERE id=?", id);
}

void r_assignment_create(cv *c)
{
    int64_t cid;
    const char *name = cv_create_in(c, "assignment", "name", &cid);
    if (!name) return;
    int64_t g = default_group(c, cid);
    cv_exec(c, "iii",
            "INSERT INTO assignments(course_id, group_id, position, created_at, updated_at,"
            " points_possible) VALUES(?,?,(SELECT IFNULL(max(position),0)+1 FROM assignments"
            " WHERE course_id=?1)," NOW "," NOW ", 0)",
            cid, g, cid);
    int64_t id = cv_last_id(c);
    assignment_fields(c, id);
    json_t *a = assignment(c, id);
    add_includes(c, a, CV_TEACHER);
    cv_json(c, 201, a);
    c->out->status = 200;
}

void r_assignment_update(cv *c)
{
    int64_t cid, aid;
    if (!cv_course_obj(c, 3, "assignments", "AND workflow_state!='deleted'", 1, &cid, &aid)) return;
    assignment_fields(c, aid);
    json_t *a = assignment(c, aid);
    add_includes(c, a, CV_TEACHER);
    cv_json(c, 200, a);
}

void r_assignment_delete(cv *c)
{
    int64_t cid, aid;
    if (!cv_course_obj(c, 3, "assignments", "AND workflow_state!='deleted'", 1, &cid, &aid)) return;
    cv_exec(c, "i", "UPDATE assignments SET workflow_state='deleted', updated_at=" NOW " WHERE id=?",
            aid);
    json_t *a = assignment(c, aid);
    cv_json(c, 200, a);
}

/* ------------------------------------------------------------ groups */

static json_t *group_json(cv *c, int64_t gid, int role)
{
    json_t *g = cv_row(c, "i",
                       "SELECT json_object('id',id,'name',name,'position',position,'group_weight',"
                       "group_weight,'sis_source_id',NULL,'integration_data',json_object(),'rules',"
                       "json_object()) FROM assignment_groups WHERE id=?", gid);
    if (g && cv_include(c, "assignments")) {
        json_t *ids = cv_rows(c, "i", "SELECT id FROM assignments WHERE group_id=? AND"
                                      " workflow_state!='deleted' ORDER BY position, id", gid);
        json_t *arr = json_array();
        size_t i;
        json_t *v;
        json_array_foreach(ids, i, v) {
            json_t *a = assignment(c, json_integer_value(v));
            if (a && visible_to(c, role, a)) json_array_append_new(arr, a);
            else json_decref(a);
        }
        json_decref(ids);
        json_object_set_new(g, "assignments", arr);
    }
    return g;
}

void r_groups_list(cv *c)
{
    int64_t cid = cv_seg_id(c, 1);
    if (!cid) return cv_not_found(c);
    if (!cv_can_read(c, cid)) return;
    int role = c->admin ? CV_TEACHER : cv_role(c, cid);
    default_group(c, cid);
    json_t *ids = cv_rows(c, "i", "SELECT id FROM assignment_groups WHERE course_id=? ORDER BY"
                                  " position, id", cid);
    cv_list(c, cv_map(c, ids, group_json, role));
}

void r_group_get(cv *c)
{
    int64_t cid = cv_seg_id(c, 1), gid = cv_seg_id(c, 3);
    if (!cid || !gid) return cv_not_found(c);
    if (!cv_can_read(c, cid)) return;
    if (!cv_int(c, 0, "ii", "SELECT count(*) FROM assignment_groups WHERE id=? AND course_id=?", gid,
                cid))
        return cv_not_found(c);
    cv_json(c, 200, group_json(c, gid, c->admin ? CV_TEACHER : cv_role(c, cid)));
}

/* ------------------------------------------------------------ submissions */

/* The row of (assignment, user), made "unsubmitted" on first use. */
static int64_t submission_row(cv *c, int64_t aid, int64_t uid)
{
    int64_t id = cv_int(c, 0, "ii", "SELECT id FROM submissions WHERE assignment_id=? AND user_id=?",
                        aid, uid);
    if (!id) {
        cv_exec(c, "ii", "INSERT INTO submissions(assignment_id, user_id, workflow_state)"
                         " VALUES(?,?,'unsubmitted')", aid, uid);
        id = cv_last_id(c);
    }
    return id;
}

static json_t *submission_json(cv *c, int64_t sid)
{
    json_t *s = cv_row(c, "i", "SELECT " SUBMISSION_OBJ " FROM submissions s JOIN assignments a ON"
                               " a.id=s.assignment_id WHERE s.id=?", sid);
    if (!s) return NULL;
    /* Canvas lists comments whether or not include[] asks. */
        json_object_set_new(
            s, "submission_comments",
            cv_rows(c, "i",
                    "SELECT json_object('id',m.id,'comment',m.comment,'author_id',m.author_id,"
                    "'author_name',u.name,'created_at',m.created_at,'edited_at',NULL,"
                    "'media_comment',NULL,'author',json_object('id',u.id,'anonymous_id',"
                    "CAST(u.id AS TEXT),'display_name',u.short_name,'avatar_image_url',"
                    "cv_origin() || '/images/messages/avatar-50.png','html_url',"
                    "cv_origin() || '/users/' || u.id,'pronouns',NULL)) FROM"
                    " submission_comments m LEFT JOIN users u ON u.id=m.author_id WHERE"
                    " m.submission_id=? ORDER BY m.id", sid));
    char *ids = cv_text(c, "i", "SELECT attachment_ids FROM submissions WHERE id=?", sid);
    json_t *att = ids ? json_loads(ids, 0, NULL) : NULL;
    free(ids);
    if (json_array_size(att)) {
        json_t *arr = json_array();
        size_t i;
        json_t *v;
        json_array_foreach(att, i, v) {
            json_t *f = cv_row(c, "i",
                               "SELECT json_object('id',id,'uuid',uuid,'folder_id',folder_id,"
                               "'display_name',display_name,'filename',filename,'content-type',"
                               "content_type,'url',cv_origin() || '/files/' || id ||"
                               " '/download?download_frd=1&verifier=' || uuid,'size',size,'created_at',created_at) FROM files WHERE"
                               " id=?", json_integer_value(v));
            if (f) json_array_append_new(arr, f);
        }
        json_object_set_new(s, "attachments", arr);
    }
    json_decref(att);
    if (cv_include(c, "assignment")) {
        json_t *a = assignment(c, json_integer_value(json_object_get(s, "assignment_id")));
        if (a) json_object_set_new(s, "assignment", a);
    }
    json_t *ra = cv_include(c, "rubric_assessment") ? cv_rubric_assessment_of(c, sid) : NULL;
    if (ra) json_object_set_new(s, "rubric_assessment", ra);
    if (cv_include(c, "user"))
        json_object_set_new(s, "user", cv_user_json(c, json_integer_value(json_object_get(s, "user_id"))));
    return s;
}

static int assignment_in(cv *c, int64_t aid, int64_t cid)
{
    return cv_int(c, 0, "ii", "SELECT count(*) FROM assignments WHERE id=? AND course_id=? AND"
                              " workflow_state!='deleted'", aid, cid) > 0;
}

void r_submissions_list(cv *c)
{
    int64_t cid, aid;
    if (!cv_course_obj(c, 3, "assignments", "AND workflow_state!='deleted'", 0, &cid, &aid)) return;
    int role = c->admin ? CV_TEACHER : cv_role(c, cid);
    json_t *uids;
    if (role == CV_STUDENT || role == CV_OBSERVER)
        uids = json_pack("[I]", (json_int_t)c->uid);
    else
        uids = cv_rows(c, "i", "SELECT DISTINCT user_id FROM enrollments WHERE course_id=? AND"
                               " type='StudentEnrollment' AND workflow_state IN ('active','invited')"
                               " ORDER BY user_id", cid);
    json_t *out = json_array();
    size_t i;
    json_t *v;
    json_array_foreach(uids, i, v) {
        json_t *s = submission_json(c, submission_row(c, aid, json_integer_value(v)));
        if (s) json_array_append_new(out, s);
    }
    json_decref(uids);
    cv_list(c, out);
}

static int64_t user_seg(cv *c, int i)
{
    return !strcmp(c->seg[i], "self") ? c->uid : cv_seg_id(c, i);
}

void r_submission_get(cv *c)
{
    int64_t cid = cv_seg_id(c, 1), aid = cv_seg_id(c, 3), uid = user_seg(c, 5);
    if (!cid || !aid || !uid) return cv_not_found(c);
    if (!cv_can_read(c, cid)) return;
    if (!assignment_in(c, aid, cid)) return cv_not_found(c);
    int role = c->admin ? CV_TEACHER : cv_role(c, cid);
    if (uid != c->uid && (role == CV_STUDENT || role == CV_OBSERVER)) return cv_unauthorized(c);
    if (!cv_int(c, 0, "ii", "SELECT count(*) FROM enrollments WHERE course_id=? AND user_id=? AND"
                            " workflow_state!='deleted'", cid, uid))
        return cv_not_found(c);
    cv_json(c, 200, submission_json(c, submission_row(c, aid, uid)));
}

/* posted_grade: "85", "85%", "pass"/"complete", "fail"/"incomplete". */
static int parse_grade(json_t *g, double points, double *score, char **grade)
{
    if (json_is_number(g)) {
        *score = json_number_value(g);
    } else if (json_is_string(g)) {
        const char *s = json_string_value(g);
        char *end;
        double d = strtod(s, &end);
        if (end != s && *end == '%' && !end[1]) *score = points * d / 100.0;
        else if (end != s && !*end) *score = d;
        else if (!strcmp(s, "pass") || !strcmp(s, "complete")) *score = points;
        else if (!strcmp(s, "fail") || !strcmp(s, "incomplete")) *score = 0;
        else if (!*s) return 1; /* ungraded */
        else return -1;
    } else {
        return -1;
    }
    *score = round(*score * 100.0) / 100.0;
    char buf[64];
    snprintf(buf, sizeof buf, "%.15g", *score);
    *grade = mb_strdup(buf);
    return 0;
}

void r_submission_grade(cv *c)
{
    int64_t cid = cv_seg_id(c, 1), aid = cv_seg_id(c, 3), uid = user_seg(c, 5);
    if (!cid || !aid || !uid) return cv_not_found(c);
    if (!cv_can_read(c, cid)) return;
    if (!assignment_in(c, aid, cid)) return cv_not_found(c);
    int role = c->admin ? CV_TEACHER : cv_role(c, cid);
    if (role == CV_STUDENT || role == CV_OBSERVER) return cv_unauthorized(c);
    if (!cv_int(c, 0, "ii", "SELECT count(*) FROM enrollments WHERE course_id=? AND user_id=? AND"
                            " workflow_state!='deleted'", cid, uid))
        return cv_not_found(c);
    int64_t sid = submission_row(c, aid, uid);
    json_t *pg = cv_body(c, "submission", "posted_grade");
    if (pg && !json_is_null(pg)) {
        double points = 0, score = 0;
        json_t *a = cv_row(c, "i", "SELECT points_possible FROM assignments WHERE id=?", aid);
        if (json_is_number(a)) points = json_number_value(a);
        json_decref(a);
        char *grade = NULL;
        int r = parse_grade(pg, points, &score, &grade);
        if (r < 0) {
            cv_error(c, 400, "invalid grade");
            return;
        }
        if (r == 0)
            cv_exec(c, "dtii",
                    "UPDATE submissions SET score=?, grade=?, grader_id=?, graded_at=" NOW ","
                    " workflow_state='graded' WHERE id=?", score, grade, c->uid, sid);
        else
            cv_exec(c, "i", "UPDATE submissions SET score=NULL, grade=NULL, workflow_state=CASE WHEN"
                            " submitted_at IS NULL THEN 'unsubmitted' ELSE 'submitted' END WHERE id=?",
                    sid);
        free(grade);
    }
    cv_rubric_assess_submission(c, aid, sid);
    /* comment[text_comment] only: a comment inside submission is not read. */
    const char *text = cv_body_str(c, "comment", "text_comment");
    if (text && *text)
        cv_exec(c, "iit", "INSERT INTO submission_comments(submission_id, author_id, comment,"
                          " created_at) VALUES(?,?,?," NOW ")", sid, c->uid, text);
    cv_json(c, 200, submission_json(c, sid));
}

void r_submission_create(cv *c)
{
    int64_t cid, aid;
    if (!cv_course_obj(c, 3, "assignments", "AND workflow_state!='deleted'", 0, &cid, &aid)) return;
    if (cv_role(c, cid) != CV_STUDENT) return cv_unauthorized(c);
    const char *type = cv_body_str(c, "submission", "submission_type");
    if (!type) {
        cv_error(c, 400, "Invalid submission[submission_type] given");
        return;
    }
    char *types = cv_text(c, "i", "SELECT submission_types FROM assignments WHERE id=?", aid);
    int allowed = types && strstr(types, type) != NULL;
    free(types);
    if (!allowed) {
        cv_error(c, 400, "Invalid submission[submission_type] given");
        return;
    }
    int64_t sid = submission_row(c, aid, c->uid);
    json_t *files = cv_body(c, "submission", "file_ids");
    json_t *ids = json_array();
    if (json_is_array(files)) {
        size_t i;
        json_t *v;
        json_array_foreach(files, i, v) {
            int64_t f = json_is_integer(v) ? json_integer_value(v)
                        : json_is_string(v) ? strtoll(json_string_value(v), NULL, 10)
                                            : 0;
            if (f) json_array_append_new(ids, json_integer(f));
        }
    }
    if (!strcmp(type, "online_upload") && !json_array_size(ids)) {
        json_decref(ids);
        cv_error(c, 400, "You must attach at least one file to this assignment");
        return;
    }
    cv_exec(c, "tttji",
            "UPDATE submissions SET submission_type=?, body=?, url=?, attachment_ids=?,"
            " submitted_at=" NOW ", attempt=IFNULL(attempt,0)+1, workflow_state=CASE WHEN"
            " score IS NULL THEN 'submitted' ELSE 'submitted' END WHERE id=?",
            type, cv_body_str(c, "submission", "body"), cv_body_str(c, "submission", "url"), ids,
            sid);
    json_decref(ids);
    const char *text = cv_body_str(c, "comment", "text_comment");
    if (text && *text)
        cv_exec(c, "iit", "INSERT INTO submission_comments(submission_id, author_id, comment,"
                          " created_at) VALUES(?,?,?," NOW ")", sid, c->uid, text);
    cv_json(c, 200, submission_json(c, sid));
}
