/*
 * r_quiz.c - quizzes, quiz questions and quiz submissions: the attempt and
 * validation-token flow and automatic grading of the question types that
 * have one right answer (multiple choice, true/false, multiple answers,
 * short answer, numerical); essays leave the attempt pending review.
 * As in Canvas, a user has one quiz submission per quiz whose attempt count
 * grows; kept_score follows the quiz's scoring policy.
 */
#include "canvas/canvas_int.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NOW "strftime('%Y-%m-%dT%H:%M:%SZ','now')"
#define JB(x) "json(CASE WHEN " x " THEN 'true' ELSE 'false' END)"

#define QUIZ_OBJ                                                                              \
    "json_object('id',q.id,'title',q.title,'html_url',cv_origin() || '/courses/' ||"    \
    " q.course_id || '/quizzes/' || q.id,'mobile_url',cv_origin() || '/courses/' ||"    \
    " q.course_id || '/quizzes/' || q.id || '?force_user=1&persist_headless=1','description',"  \
    "IFNULL(q.description,''),'quiz_type',q.quiz_type,'time_limit',q.time_limit,'timer_autosubmit_disabled',"\
    "json('false'),'shuffle_answers'," JB("q.shuffle_answers") ",'show_correct_answers',"      \
    JB("q.show_correct_answers") ",'scoring_policy',q.scoring_policy,'allowed_attempts',"       \
    "q.allowed_attempts,'one_question_at_a_time'," JB("q.one_question_at_a_time") ","           \
    "'question_count',(SELECT count(*) FROM quiz_questions x WHERE x.quiz_id=q.id),"            \
    "'points_possible',q.points_possible,'cant_go_back'," JB("q.cant_go_back") ",'access_code',"\
    "q.access_code,'ip_filter',NULL,'due_at',q.due_at,'lock_at',q.lock_at,'unlock_at',"        \
    "q.unlock_at,'published'," JB("q.published") ",'unpublishable'," JB("NOT EXISTS(SELECT 1"  \
    " FROM quiz_submissions s WHERE s.quiz_id=q.id)") ",'locked_for_user',json('false'),"       \
    "'hide_results',q.hide_results,'show_correct_answers_at',NULL,'hide_correct_answers_at',"  \
    "NULL,'all_dates',json_array(json_object('due_at',q.due_at,'unlock_at',q.unlock_at,"       \
    "'lock_at',q.lock_at,'base',json('true'))),'can_unpublish'," JB("NOT EXISTS(SELECT 1 FROM" \
    " quiz_submissions s WHERE s.quiz_id=q.id)") ",'can_update',json('true'),'require_lockdown_browser',"\
    "json('false'),'require_lockdown_browser_for_results',json('false'),"                      \
    "'require_lockdown_browser_monitor',json('false'),'lockdown_browser_monitor_data',NULL,"   \
    "'speed_grader_url',NULL,'permissions',json_object('read',json('true'),'submit',json('true'),"\
    "'create',json('true'),'manage',json('true'),'read_statistics',json('true'),"             \
    "'review_grades',json('true'),'update',json('true')),'quiz_reports_url',"                 \
    "cv_origin() || '/api/v1/courses/' || q.course_id || '/quizzes/' || q.id ||"       \
    " '/reports','quiz_statistics_url',cv_origin() || '/api/v1/courses/' || q.course_id" \
    " || '/quizzes/' || q.id || '/statistics','message_students_url',"                         \
    "cv_origin() || '/api/v1/courses/' || q.course_id || '/quizzes/' || q.id ||"       \
    " '/submission_users/message','section_count',1,'important_dates',json('false'),"          \
    "'quiz_submission_versions_html_url',cv_origin() || '/courses/' || q.course_id ||"  \
    " '/quizzes/' || q.id || '/submission_versions','assignment_id',q.assignment_id,"         \
    "'one_time_results',json('false'),'only_visible_to_overrides',json('false'),"             \
    "'assignment_group_id',q.assignment_group_id,'show_correct_answers_last_attempt',"        \
    "json('false'),'version_number',1,'has_access_code'," JB("q.access_code IS NOT NULL") ","   \
    "'post_to_sis',json('false'),'migration_id',NULL,'in_paced_course',json('false'),"        \
    "'question_types',(SELECT json_group_array(DISTINCT question_type) FROM quiz_questions x"   \
    " WHERE x.quiz_id=q.id),'anonymous_submissions',json('false'))"

#define QUESTION_OBJ                                                                          \
    "json_object('id',x.id,'quiz_id',x.quiz_id,'quiz_group_id',NULL,'assessment_question_id',"\
    "x.id,'position',x.position,'question_name',x.question_name,'question_type',"             \
    "x.question_type,'question_text',x.question_text,'points_possible',x.points_possible,"    \
    "'correct_comments',x.correct_comments,'incorrect_comments',x.incorrect_comments,"        \
    "'neutral_comments',x.neutral_comments,'correct_comments_html',x.correct_comments,"       \
    "'incorrect_comments_html',x.incorrect_comments,'neutral_comments_html',"                 \
    "x.neutral_comments,'answers',json(x.answers),'variables',NULL,'formulas',NULL,"          \
    "'answer_tolerance',NULL,'formula_decimal_places',NULL,'matches',json(x.matches),"       \
    "'matching_answer_incorrect_matches',x.incorrect_matches)"

#define QSUB_OBJ                                                                              \
    "json_object('id',s.id,'quiz_id',s.quiz_id,'quiz_version',1,'user_id',s.user_id,"         \
    "'submission_id',s.submission_id,'score',s.score,'kept_score',s.kept_score,'started_at',"  \
    "s.started_at,'end_at',s.end_at,'finished_at',s.finished_at,'attempt',s.attempt,"          \
    "'workflow_state',s.workflow_state,'fudge_points',0,'quiz_points_possible',"              \
    "q.points_possible,'extra_attempts',NULL,'extra_time',NULL,'manually_unlocked',NULL,"     \
    "'validation_token',s.validation_token,'score_before_regrade',NULL,'has_seen_results',"   \
    "json('false'),'time_spent',CASE WHEN s.finished_at IS NOT NULL THEN"                     \
    " CAST(strftime('%s',s.finished_at)-strftime('%s',s.started_at) AS INTEGER) ELSE"          \
    " CAST(strftime('%s','now')-strftime('%s',s.started_at) AS INTEGER) END,'attempts_left',"  \
    "CASE WHEN q.allowed_attempts < 0 THEN -1 ELSE max(0, q.allowed_attempts - s.attempt +"    \
    " (s.workflow_state='untaken')) END,'overdue_and_needs_submission',json('false'),"         \
    "'excused?',json('false'),'html_url',cv_origin() || '/courses/' || q.course_id ||"  \
    " '/quizzes/' || q.id || '/submissions/' || s.id,'result_url',"                           \
    "cv_origin() || '/courses/' || q.course_id || '/quizzes/' || q.id ||"             \
    " '/history?quiz_submission_id=' || s.id || '&version=' || s.attempt)"

void cv_quiz_refresh_points(cv *c, int64_t quiz_id)
{
    if (cv_int(c, 0, "i", "SELECT count(*) FROM quiz_questions WHERE quiz_id=?", quiz_id))
        cv_exec(c, "i", "UPDATE quizzes SET points_possible=(SELECT sum(points_possible) FROM"
                        " quiz_questions WHERE quiz_id=?1) WHERE id=?1", quiz_id);
    cv_exec(c, "i", "UPDATE assignments SET points_possible=(SELECT points_possible FROM quizzes"
                    " WHERE id=?1) WHERE quiz_id=?1", quiz_id);
}

static int quiz_in(cv *c, int64_t qid, int64_t cid)
{
    return cv_int(c, 0, "ii", "SELECT count(*) FROM quizzes WHERE id=? AND course_id=?", qid, cid) > 0;
}

static int is_student(cv *c, int64_t cid)
{
    if (c->admin) return 0;
    int r = cv_role(c, cid);
    return r == CV_STUDENT || r == CV_OBSERVER;
}

static json_t *quiz_json(cv *c, int64_t qid, int student)
{
    json_t *q = cv_row(c, "i", "SELECT " QUIZ_OBJ " FROM quizzes q WHERE q.id=?", qid);
    if (q && student) {
        json_object_set_new(q, "permissions",
                            json_pack("{s:b,s:b,s:b,s:b,s:b,s:b,s:b}", "read", 1, "submit", 1,
                                      "create", 0, "manage", 0, "read_statistics", 0,
                                      "review_grades", 0, "update", 0));
        json_object_del(q, "access_code");
    }
    return q;
}

void r_quizzes_list(cv *c)
{
    int64_t cid = cv_seg_id(c, 1);
    if (!cid) return cv_not_found(c);
    if (!cv_can_read(c, cid)) return;
    int st = is_student(c, cid);
    const char *term = cv_param(c, "search_term");
    json_t *ids = cv_rows(c, "iit",
                          "SELECT id FROM quizzes WHERE course_id=? AND (?=0 OR published=1) AND"
                          " (?3 IS NULL OR instr(lower(title), lower(?3))) ORDER BY id",
                          cid, (int64_t)st, term);
    cv_list(c, cv_map(c, ids, quiz_json, st));
}

void r_quiz_get(cv *c)
{
    int64_t cid = cv_seg_id(c, 1), qid = cv_seg_id(c, 3);
    if (!cid || !qid) return cv_not_found(c);
    if (!cv_can_read(c, cid)) return;
    int st = is_student(c, cid);
    if (!quiz_in(c, qid, cid) ||
        (st && !cv_int(c, 0, "i", "SELECT published FROM quizzes WHERE id=?", qid)))
        return cv_not_found(c);
    cv_json(c, 200, quiz_json(c, qid, st));
}

/* The assignment a graded quiz stands behind (quiz_type assignment or
 * graded_survey), kept in step with the quiz. */
static void quiz_assignment(cv *c, int64_t qid)
{
    json_t *q = cv_row(c, "i", "SELECT json_object('course_id',course_id,'type',quiz_type,"
                               "'aid',assignment_id) FROM quizzes WHERE id=?", qid);
    if (!q) return;
    const char *type = json_string_value(json_object_get(q, "type"));
    int graded = type && (!strcmp(type, "assignment") || !strcmp(type, "graded_survey"));
    int64_t cid = json_integer_value(json_object_get(q, "course_id"));
    int64_t aid = json_integer_value(json_object_get(q, "aid"));
    json_decref(q);
    if (graded && !aid) {
        int64_t g = cv_int(c, 0, "i", "SELECT min(id) FROM assignment_groups WHERE course_id=?", cid);
        if (!g) {
            cv_exec(c, "i", "INSERT INTO assignment_groups(course_id, name, position, created_at)"
                            " VALUES(?, 'Assignments', 1, " NOW ")", cid);
            g = cv_last_id(c);
        }
        cv_exec(c, "iii", "INSERT INTO assignments(course_id, group_id, quiz_id, submission_types,"
                          " created_at, updated_at, position) VALUES(?1,?2,?3,'[\"online_quiz\"]',"
                          NOW "," NOW ",(SELECT IFNULL(max(position),0)+1 FROM assignments WHERE"
                          " course_id=?1))", cid, g, qid);
        aid = cv_last_id(c);
        cv_exec(c, "iii", "UPDATE quizzes SET assignment_id=?, assignment_group_id=? WHERE id=?",
                aid, g, qid);
    }
    if (aid)
        cv_exec(c, "i",
                "UPDATE assignments SET (name, description, due_at, lock_at, unlock_at,"
                " points_possible, published, workflow_state, updated_at) = (SELECT title,"
                " description, due_at, lock_at, unlock_at, points_possible, published, CASE WHEN"
                " published THEN 'published' ELSE 'unpublished' END, " NOW " FROM quizzes WHERE"
                " id=?1) WHERE quiz_id=?1", qid);
}

static void quiz_fields(cv *c, int64_t qid)
{
    static const char *const text[] = {"title", "description", "quiz_type", "due_at", "lock_at",
                                       "unlock_at", "scoring_policy", "access_code", "hide_results"};
    cv_set_texts(c, "quiz", "quizzes", qid, text, sizeof text / sizeof *text);
    static const char *const nums[] = {"time_limit", "allowed_attempts"};
    for (size_t i = 0; i < 2; i++) {
        json_t *v = cv_body(c, "quiz", nums[i]);
        if (!v) continue;
        char *sql = mb_asprintf("UPDATE quizzes SET %s=? WHERE id=?", nums[i]);
        if (json_is_null(v)) cv_exec(c, "ti", sql, NULL, qid);
        else cv_exec(c, "ii", sql, (int64_t)cv_body_num(c, "quiz", nums[i], 0), qid);
        free(sql);
    }
    static const char *const flags[] = {"shuffle_answers", "show_correct_answers", "published",
                                        "one_question_at_a_time", "cant_go_back"};
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++) {
        if (!cv_body_has(c, "quiz", flags[i])) continue;
        char *sql = mb_asprintf("UPDATE quizzes SET %s=? WHERE id=?", flags[i]);
        cv_exec(c, "ii", sql, (int64_t)cv_body_bool(c, "quiz", flags[i], 0), qid);
        free(sql);
    }
    if (cv_body_has(c, "quiz", "points_possible"))
        cv_exec(c, "di", "UPDATE quizzes SET points_possible=? WHERE id=?",
                cv_body_num(c, "quiz", "points_possible", 0), qid);
    cv_exec(c, "i", "UPDATE quizzes SET updated_at=" NOW " WHERE id=?", qid);
    cv_quiz_refresh_points(c, qid);
    quiz_assignment(c, qid);
}

void r_quiz_create(cv *c)
{
    int64_t cid = cv_seg_id(c, 1);
    if (!cid) return cv_not_found(c);
    if (!cv_can_manage(c, cid)) return;
    const char *title = cv_body_str(c, "quiz", "title");
    const char *type = cv_body_str(c, "quiz", "quiz_type");
    if (type && strcmp(type, "practice_quiz") && strcmp(type, "assignment") &&
        strcmp(type, "graded_survey") && strcmp(type, "survey")) {
        cv_json(c, 400, json_pack("{s:{s:[{s:s,s:s,s:s}]}}", "errors", "quiz_type", "attribute",
                                  "quiz_type", "type", "invalid", "message", "invalid"));
        return;
    }
    cv_exec(c, "it", "INSERT INTO quizzes(course_id, title, created_at, updated_at) VALUES(?,"
                     " IFNULL(?,'Unnamed Quiz')," NOW "," NOW ")", cid, title);
    int64_t qid = cv_last_id(c);
    quiz_fields(c, qid);
    cv_json(c, 200, quiz_json(c, qid, 0));
}

void r_quiz_update(cv *c)
{
    int64_t cid, qid;
    if (!cv_course_obj(c, 3, "quizzes", NULL, 1, &cid, &qid)) return;
    quiz_fields(c, qid);
    cv_json(c, 200, quiz_json(c, qid, 0));
}

void r_quiz_delete(cv *c)
{
    int64_t cid, qid;
    if (!cv_course_obj(c, 3, "quizzes", NULL, 1, &cid, &qid)) return;
    json_t *q = quiz_json(c, qid, 0);
    cv_exec(c, "i", "UPDATE assignments SET workflow_state='deleted' WHERE quiz_id=?", qid);
    cv_exec(c, "i", "DELETE FROM quiz_questions WHERE quiz_id=?", qid);
    cv_exec(c, "i", "DELETE FROM quiz_submissions WHERE quiz_id=?", qid);
    cv_exec(c, "i", "DELETE FROM quizzes WHERE id=?", qid);
    cv_json(c, 200, q);
}

/* ------------------------------------------------------------ questions */

static json_t *question_json(cv *c, int64_t id, int student)
{
    json_t *q = cv_row(c, "i", "SELECT " QUESTION_OBJ " FROM quiz_questions x WHERE x.id=?", id);
    if (q && student) {
        json_t *ans = json_object_get(q, "answers");
        size_t i;
        json_t *a;
        json_array_foreach(ans, i, a) {
            json_object_del(a, "weight");
            json_object_del(a, "comments");
            json_object_del(a, "comments_html");
            json_object_del(a, "right");    /* matching: the pairs stay hidden */
            json_object_del(a, "match_id");
        }
        json_object_set_new(q, "correct_comments", json_string(""));
        json_object_set_new(q, "incorrect_comments", json_string(""));
    }
    return q;
}

/* Matching: the id of the right side of answer (or distractor) i. */
static json_int_t match_id(int64_t qid, size_t i)
{
    return 1000 + (json_int_t)((qid * 53 + (int64_t)i * 389) % 9000);
}

/* A matching question's choices: every answer's right side, then the
 * distractors of matching_answer_incorrect_matches (one a line). */
static json_t *matches_of(json_t *answers, const char *distractors, int64_t qid)
{
    json_t *out = json_array();
    size_t i;
    json_t *a;
    json_array_foreach(answers, i, a) {
        json_t *r = json_object_get(a, "right");
        if (json_is_string(r))
            json_array_append_new(out, json_pack("{s:O,s:O}", "text", r, "match_id",
                                                 json_object_get(a, "match_id")));
    }
    size_t k = json_array_size(answers);
    for (const char *p = distractors ? distractors : ""; *p && k < 1000;) {
        size_t n = strcspn(p, "\n");
        size_t m = n;
        while (m && (p[m - 1] == '\r' || p[m - 1] == ' ')) m--;
        if (m) {
            char *t = mb_strndup(p, m);
            json_array_append_new(out, json_pack("{s:s,s:I}", "text", t, "match_id", match_id(qid, k++)));
            free(t);
        }
        p += n;
        if (*p) p++;
    }
    return out;
}

/* Canvas's answer objects from the API's answers[] ({answer_text,
 * answer_weight, answer_comments, ...}). */
static json_t *normalize_answers(json_t *in, int64_t qid)
{
    json_t *out = json_array();
    size_t i;
    json_t *a;
    json_t *list = in;
    if (json_is_object(in)) { /* answers as {"0": {...}} from forms */
        list = json_array();
        const char *k;
        json_t *v;
        json_object_foreach(in, k, v) json_array_append(list, v);
    }
    json_array_foreach(list, i, a) {
        if (!json_is_object(a)) continue;
        json_t *t = json_object_get(a, "answer_text");
        if (!t) t = json_object_get(a, "text");
        json_t *w = json_object_get(a, "answer_weight");
        if (!w) w = json_object_get(a, "weight");
        double weight = json_is_number(w) ? json_number_value(w)
                        : json_is_string(w) ? strtod(json_string_value(w), NULL)
                                            : 0;
        json_t *cm = json_object_get(a, "answer_comments");
        if (!cm) cm = json_object_get(a, "comments");
        json_t *html = json_object_get(a, "answer_html");
        json_t *id = json_object_get(a, "id");
        json_int_t aid = json_is_integer(id) ? json_integer_value(id)
                                             : 1000 + (json_int_t)((qid * 37 + (int64_t)i * 211) % 9000);
        json_t *o = json_pack("{s:I,s:s,s:s,s:s,s:s,s:f}", "id", aid, "text",
                              json_is_string(t) ? json_string_value(t) : "", "html",
                              json_is_string(html) ? json_string_value(html) : "", "comments",
                              json_is_string(cm) ? json_string_value(cm) : "", "comments_html", "",
                              "weight", weight);
        static const char *const extra[] = {"blank_id", "numerical_answer_type", "exact",
                                            "margin", "start", "end", "approximate", "precision",
                                            "answer_match_left", "answer_match_right"};
        for (size_t k = 0; k < sizeof extra / sizeof *extra; k++) {
            json_t *v = json_object_get(a, extra[k]);
            if (v) json_object_set(o, extra[k], v);
        }
        json_t *left = json_object_get(a, "answer_match_left");
        if (json_is_string(left) || json_is_string(json_object_get(a, "answer_match_right"))) {
            json_t *right = json_object_get(a, "answer_match_right");
            json_object_set_new(o, "left", json_string(json_is_string(left) ? json_string_value(left) : ""));
            json_object_set_new(o, "right", json_string(json_is_string(right) ? json_string_value(right) : ""));
            if (!json_is_string(t)) json_object_set(o, "text", json_object_get(o, "left"));
            json_object_set_new(o, "match_id", json_integer(match_id(qid, i)));
        }
        json_array_append_new(out, o);
    }
    if (list != in) json_decref(list);
    return out;
}

static void question_fields(cv *c, int64_t id)
{
    static const char *const text[] = {"question_name", "question_text", "question_type",
                                       "correct_comments", "incorrect_comments",
                                       "neutral_comments"};
    for (size_t i = 0; i < sizeof text / sizeof *text; i++) {
        json_t *v = cv_body(c, "question", text[i]);
        if (!json_is_string(v)) continue;
        char *sql = mb_asprintf("UPDATE quiz_questions SET %s=? WHERE id=?", text[i]);
        cv_exec(c, "ti", sql, json_string_value(v), id);
        free(sql);
    }
    if (cv_body_has(c, "question", "points_possible"))
        cv_exec(c, "di", "UPDATE quiz_questions SET points_possible=? WHERE id=?",
                cv_body_num(c, "question", "points_possible", 0), id);
    if (cv_body_has(c, "question", "position"))
        cv_exec(c, "ii", "UPDATE quiz_questions SET position=? WHERE id=?",
                (int64_t)cv_body_num(c, "question", "position", 1), id);
    json_t *wrong = cv_body(c, "question", "matching_answer_incorrect_matches");
    if (json_is_string(wrong) || json_is_null(wrong))
        cv_exec(c, "ti", "UPDATE quiz_questions SET incorrect_matches=? WHERE id=?",
                json_string_value(wrong), id);
    json_t *ans = cv_body(c, "question", "answers");
    char *type = cv_text(c, "i", "SELECT question_type FROM quiz_questions WHERE id=?", id);
    if (json_is_array(ans) || json_is_object(ans)) {
        json_t *norm = normalize_answers(ans, id);
        /* Every answer of these types is a right one, as Canvas keeps them. */
        if (type && (!strcmp(type, "fill_in_multiple_blanks_question") ||
                     !strcmp(type, "short_answer_question"))) {
            size_t i;
            json_t *a;
            json_array_foreach(norm, i, a) json_object_set_new(a, "weight", json_real(100));
        }
        cv_exec(c, "ji", "UPDATE quiz_questions SET answers=? WHERE id=?", norm, id);
        json_decref(norm);
    }
    json_t *m = NULL;
    if (type && !strcmp(type, "matching_question")) {
        char *atext = cv_text(c, "i", "SELECT answers FROM quiz_questions WHERE id=?", id);
        char *dtext = cv_text(c, "i", "SELECT incorrect_matches FROM quiz_questions WHERE id=?", id);
        json_t *answers = atext ? json_loads(atext, 0, NULL) : NULL;
        m = matches_of(answers, dtext, id);
        json_decref(answers);
        free(atext);
        free(dtext);
    }
    cv_exec(c, "ji", "UPDATE quiz_questions SET matches=? WHERE id=?", m, id);
    json_decref(m);
    free(type);
}

void r_questions_list(cv *c)
{
    int64_t cid, qid;
    if (!cv_course_obj(c, 3, "quizzes", NULL, 0, &cid, &qid)) return;
    int st = is_student(c, cid);
    if (st) {
        /* Students see the questions of their own submission only. */
        const char *sid = cv_param(c, "quiz_submission_id");
        if (!sid || !cv_int(c, 0, "iii", "SELECT count(*) FROM quiz_submissions WHERE id=? AND"
                                         " quiz_id=? AND user_id=?",
                            (int64_t)strtoll(sid, NULL, 10), qid, c->uid))
            return cv_unauthorized(c);
    }
    json_t *ids = cv_rows(c, "i", "SELECT id FROM quiz_questions WHERE quiz_id=? ORDER BY position,"
                                  " id", qid);
    cv_list(c, cv_map(c, ids, question_json, st));
}

static int question_in(cv *c, int64_t id, int64_t qid)
{
    return cv_int(c, 0, "ii", "SELECT count(*) FROM quiz_questions WHERE id=? AND quiz_id=?", id,
                  qid) > 0;
}

/* Segment 5's question of segment 3's quiz of segment 1's course, which the
 * caller manages: 1 with its quiz and id; 0 when answered already. */
static int managed_question(cv *c, int64_t *qid, int64_t *id)
{
    int64_t cid = cv_seg_id(c, 1);
    *qid = cv_seg_id(c, 3);
    *id = cv_seg_id(c, 5);
    if (!cid || !*qid || !*id) {
        cv_not_found(c);
        return 0;
    }
    if (!cv_can_manage(c, cid)) return 0;
    if (!quiz_in(c, *qid, cid) || !question_in(c, *id, *qid)) {
        cv_not_found(c);
        return 0;
    }
    return 1;
}

void r_question_get(cv *c)
{
    int64_t qid, id;
    if (!managed_question(c, &qid, &id)) return;
    cv_json(c, 200, question_json(c, id, 0));
}

void r_question_create(cv *c)
{
    int64_t cid, qid;
    if (!cv_course_obj(c, 3, "quizzes", NULL, 1, &cid, &qid)) return;
    cv_exec(c, "i", "INSERT INTO quiz_questions(quiz_id, position, question_name, question_text,"
                    " question_type, points_possible) VALUES(?1, (SELECT IFNULL(max(position),0)+1"
                    " FROM quiz_questions WHERE quiz_id=?1), 'Question', '', 'text_only_question', 0)",
            qid);
    int64_t id = cv_last_id(c);
    question_fields(c, id);
    cv_quiz_refresh_points(c, qid);
    cv_json(c, 200, question_json(c, id, 0));
}

void r_question_update(cv *c)
{
    int64_t qid, id;
    if (!managed_question(c, &qid, &id)) return;
    question_fields(c, id);
    cv_quiz_refresh_points(c, qid);
    cv_json(c, 200, question_json(c, id, 0));
}

void r_question_delete(cv *c)
{
    int64_t qid, id;
    if (!managed_question(c, &qid, &id)) return;
    cv_exec(c, "i", "DELETE FROM quiz_questions WHERE id=?", id);
    cv_quiz_refresh_points(c, qid);
    c->out->status = 204;
    cv_json(c, 204, json_null());
}

/* ------------------------------------------------------------ taking */

static json_t *qsub_json(cv *c, int64_t id, int own)
{
    json_t *s = cv_row(c, "i", "SELECT " QSUB_OBJ " FROM quiz_submissions s JOIN quizzes q ON"
                               " q.id=s.quiz_id WHERE s.id=?", id);
    if (s && !own) json_object_del(s, "validation_token");
    return s;
}

static void qsub_envelope(cv *c, int status, json_t *list)
{
    cv_json(c, status, json_pack("{s:o}", "quiz_submissions", list));
}

void r_qsubs_list(cv *c)
{
    int64_t cid, qid;
    if (!cv_course_obj(c, 3, "quizzes", NULL, 0, &cid, &qid)) return;
    int st = is_student(c, cid);
    json_t *ids = cv_rows(c, "iii", "SELECT id FROM quiz_submissions WHERE quiz_id=? AND (?=0 OR"
                                    " user_id=?) ORDER BY id", qid, (int64_t)st, c->uid);
    json_t *out = json_array();
    size_t i;
    json_t *v;
    json_array_foreach(ids, i, v) {
        int64_t id = json_integer_value(v);
        json_array_append_new(out, qsub_json(c, id, st));
    }
    json_decref(ids);
    cv_list(c, out);
    json_t *page = c->out->body;
    c->out->body = NULL;
    qsub_envelope(c, 200, page);
}

void r_qsub_self(cv *c)
{
    int64_t cid, qid;
    if (!cv_course_obj(c, 3, "quizzes", NULL, 0, &cid, &qid)) return;
    int64_t id = cv_int(c, 0, "ii", "SELECT id FROM quiz_submissions WHERE quiz_id=? AND user_id=?",
                        qid, c->uid);
    json_t *list = json_array();
    if (id) json_array_append_new(list, qsub_json(c, id, 1));
    qsub_envelope(c, 200, list);
}

void r_qsub_get(cv *c)
{
    int64_t cid = cv_seg_id(c, 1), qid = cv_seg_id(c, 3), id = cv_seg_id(c, 5);
    if (!cid || !qid || !id) return cv_not_found(c);
    if (!cv_can_read(c, cid)) return;
    if (!quiz_in(c, qid, cid)) return cv_not_found(c);
    int64_t owner = cv_int(c, 0, "ii", "SELECT user_id FROM quiz_submissions WHERE id=? AND quiz_id=?",
                           id, qid);
    if (!owner) return cv_not_found(c);
    if (owner != c->uid && is_student(c, cid)) return cv_unauthorized(c);
    qsub_envelope(c, 200, json_pack("[o]", qsub_json(c, id, owner == c->uid)));
}

void r_qsub_create(cv *c)
{
    int64_t cid, qid;
    if (!cv_course_obj(c, 3, "quizzes", NULL, 0, &cid, &qid)) return;
    int student = cv_role(c, cid) == CV_STUDENT;
    if (student && !cv_int(c, 0, "i", "SELECT published FROM quizzes WHERE id=?", qid))
        return cv_not_found(c);
    const char *code = cv_body_str(c, NULL, "access_code");
    char *need = cv_text(c, "i", "SELECT access_code FROM quizzes WHERE id=?", qid);
    if (need && (!code || strcmp(code, need))) {
        free(need);
        cv_error(c, 403, "Invalid access code");
        return;
    }
    free(need);
    json_t *cur = cv_row(c, "ii", "SELECT json_object('id',id,'state',workflow_state,'attempt',"
                                  "attempt) FROM quiz_submissions WHERE quiz_id=? AND user_id=?",
                         qid, c->uid);
    int64_t allowed = cv_int(c, 1, "i", "SELECT allowed_attempts FROM quizzes WHERE id=?", qid);
    if (cur) {
        const char *state = json_string_value(json_object_get(cur, "state"));
        int64_t attempt = json_integer_value(json_object_get(cur, "attempt"));
        int64_t id = json_integer_value(json_object_get(cur, "id"));
        int untaken = state && !strcmp(state, "untaken");
        json_decref(cur);
        if (untaken) {
            cv_error(c, 409, "a quiz attempt is already in progress");
            return;
        }
        if (allowed >= 0 && attempt >= allowed) {
            cv_error(c, 403, "you are not allowed to participate in this quiz");
            return;
        }
        cv_exec(c, "i",
                "UPDATE quiz_submissions SET attempt=attempt+1, workflow_state='untaken',"
                " validation_token=lower(hex(randomblob(32))), started_at=" NOW ", finished_at=NULL,"
                " answers='{}', end_at=(SELECT CASE WHEN time_limit > 0 THEN strftime("
                "'%Y-%m-%dT%H:%M:%SZ','now','+' || time_limit || ' minutes') END FROM quizzes WHERE"
                " id=quiz_id) WHERE id=?", id);
        qsub_envelope(c, 200, json_pack("[o]", qsub_json(c, id, 1)));
        return;
    }
    int64_t asg = cv_int(c, 0, "i", "SELECT assignment_id FROM quizzes WHERE id=?", qid);
    int64_t sub = 0;
    if (asg) {
        sub = cv_int(c, 0, "ii", "SELECT id FROM submissions WHERE assignment_id=? AND user_id=?", asg,
                     c->uid);
        if (!sub) {
            cv_exec(c, "ii", "INSERT INTO submissions(assignment_id, user_id, workflow_state)"
                             " VALUES(?,?,'unsubmitted')", asg, c->uid);
            sub = cv_last_id(c);
        }
    }
    cv_exec(c, "iii",
            "INSERT INTO quiz_submissions(quiz_id, user_id, submission_id, attempt, validation_token,"
            " workflow_state, started_at, end_at) VALUES(?1,?2,NULLIF(?3,0),1,lower(hex(randomblob(32))),"
            "'untaken'," NOW ",(SELECT CASE WHEN time_limit > 0 THEN strftime('%Y-%m-%dT%H:%M:%SZ',"
            "'now','+' || time_limit || ' minutes') END FROM quizzes WHERE id=?1))",
            qid, c->uid, sub);
    int64_t id = cv_last_id(c);
    qsub_envelope(c, 200, json_pack("[o]", qsub_json(c, id, 1)));
}

/* The submission of the caller in progress, checked against attempt and
 * validation_token as Canvas does; answers the error itself. */
static int64_t in_progress(cv *c, int64_t id)
{
    json_t *s = cv_row(c, "i", "SELECT json_object('user_id',user_id,'attempt',attempt,'token',"
                               "validation_token,'state',workflow_state) FROM quiz_submissions WHERE"
                               " id=?", id);
    if (!s) {
        cv_not_found(c);
        return 0;
    }
    int64_t owner = json_integer_value(json_object_get(s, "user_id"));
    int64_t attempt = json_integer_value(json_object_get(s, "attempt"));
    const char *token = json_string_value(json_object_get(s, "token"));
    const char *state = json_string_value(json_object_get(s, "state"));
    json_t *ja = cv_body(c, NULL, "attempt");
    int64_t want = json_is_integer(ja) ? json_integer_value(ja)
                   : json_is_string(ja) ? strtoll(json_string_value(ja), NULL, 10)
                                        : -1;
    const char *vt = cv_body_str(c, NULL, "validation_token");
    int64_t rc = id;
    if (owner != c->uid) {
        cv_unauthorized(c);
        rc = 0;
    } else if (want < 0) {
        cv_error(c, 400, "attempt is required");
        rc = 0;
    } else if (want != attempt) {
        cv_error(c, 400, "attempt " "mismatch: the attempt is not the latest one");
        rc = 0;
    } else if (!vt || !token || strcmp(vt, token)) {
        cv_error(c, 403, "invalid token");
        rc = 0;
    } else if (!state || strcmp(state, "untaken")) {
        cv_error(c, 400, "quiz submission is not in progress");
        rc = 0;
    }
    json_decref(s);
    return rc;
}

static json_t *qsq_json(cv *c, int64_t question_id, json_t *answers)
{
    json_t *q = question_json(c, question_id, 1);
    if (!q) return NULL;
    char key[32];
    snprintf(key, sizeof key, "question_%lld", (long long)question_id);
    json_t *a = json_object_get(answers, key);
    json_object_set_new(q, "flagged", json_false());
    json_object_set(q, "answer", a ? a : json_null());
    return q;
}

void r_qsub_answer(cv *c)
{
    int64_t id = cv_seg_id(c, 1);
    if (!id) return cv_not_found(c);
    if (!in_progress(c, id)) return;
    char *txt = cv_text(c, "i", "SELECT answers FROM quiz_submissions WHERE id=?", id);
    json_t *answers = txt ? json_loads(txt, 0, NULL) : NULL;
    free(txt);
    if (!json_is_object(answers)) {
        json_decref(answers);
        answers = json_object();
    }
    int64_t quiz = cv_int(c, 0, "i", "SELECT quiz_id FROM quiz_submissions WHERE id=?", id);
    json_t *qs = cv_body(c, NULL, "quiz_questions");
    json_t *touched = json_array();
    size_t i;
    json_t *item;
    json_array_foreach(qs, i, item) {
        json_t *jid = json_object_get(item, "id");
        int64_t qq = json_is_integer(jid) ? json_integer_value(jid)
                     : json_is_string(jid) ? strtoll(json_string_value(jid), NULL, 10)
                                           : 0;
        if (!qq || !question_in(c, qq, quiz)) {
            json_decref(touched);
            json_decref(answers);
            cv_error(c, 400, "unknown quiz question");
            return;
        }
        char key[32];
        snprintf(key, sizeof key, "question_%lld", (long long)qq);
        json_t *ans = json_object_get(item, "answer");
        json_object_set(answers, key, ans ? ans : json_null());
        json_array_append_new(touched, json_integer(qq));
    }
    cv_exec(c, "ji", "UPDATE quiz_submissions SET answers=? WHERE id=?", answers, id);
    json_t *out = json_array();
    json_array_foreach(touched, i, item) {
        json_t *q = qsq_json(c, json_integer_value(item), answers);
        if (q) json_array_append_new(out, q);
    }
    json_decref(touched);
    json_decref(answers);
    cv_json(c, 200, json_pack("{s:o}", "quiz_submission_questions", out));
}

void r_qsub_questions(cv *c)
{
    int64_t id = cv_seg_id(c, 1);
    if (!id) return cv_not_found(c);
    int64_t owner = cv_int(c, 0, "i", "SELECT user_id FROM quiz_submissions WHERE id=?", id);
    if (!owner) return cv_not_found(c);
    if (owner != c->uid) return cv_unauthorized(c);
    char *txt = cv_text(c, "i", "SELECT answers FROM quiz_submissions WHERE id=?", id);
    json_t *answers = txt ? json_loads(txt, 0, NULL) : json_object();
    free(txt);
    json_t *ids = cv_rows(c, "i", "SELECT x.id FROM quiz_questions x JOIN quiz_submissions s ON"
                                  " s.quiz_id=x.quiz_id WHERE s.id=? ORDER BY x.position, x.id", id);
    json_t *out = json_array();
    size_t i;
    json_t *v;
    json_array_foreach(ids, i, v) {
        json_t *q = qsq_json(c, json_integer_value(v), answers);
        if (q) json_array_append_new(out, q);
    }
    json_decref(ids);
    json_decref(answers);
    cv_json(c, 200, json_pack("{s:o}", "quiz_submission_questions", out));
}

/* ------------------------------------------------------------ grading */

static int64_t as_id(json_t *v)
{
    if (json_is_integer(v)) return json_integer_value(v);
    if (json_is_string(v)) return strtoll(json_string_value(v), NULL, 10);
    if (json_is_real(v)) return (int64_t)json_real_value(v);
    return 0;
}

static int text_eq(const char *a, const char *b)
{
    while (isspace((unsigned char)*a)) a++;
    while (isspace((unsigned char)*b)) b++;
    size_t la = strlen(a), lb = strlen(b);
    while (la && isspace((unsigned char)a[la - 1])) la--;
    while (lb && isspace((unsigned char)b[lb - 1])) lb--;
    return la == lb && !strncasecmp(a, b, la);
}

/* Matching: the share of answers paired with their right side (a match id
 * whose answer has the same right text counts); given is
 * [{answer_id, match_id}] as the API takes it. */
static double grade_matching(json_t *answers, json_t *given)
{
    size_t n = json_array_size(answers), right = 0, i, k;
    json_t *a, *g;
    if (!n || !json_is_array(given)) return 0;
    json_array_foreach(answers, i, a) {
        int64_t aid = json_integer_value(json_object_get(a, "id"));
        int64_t pick = 0;
        json_array_foreach(given, k, g) if (json_is_object(g) && as_id(json_object_get(g, "answer_id")) == aid)
            pick = as_id(json_object_get(g, "match_id"));
        if (!pick) continue;
        json_t *found = NULL, *b;
        size_t j;
        json_array_foreach(answers, j, b) if (!found && json_integer_value(json_object_get(b, "match_id")) == pick)
            found = b;
        const char *want = json_string_value(json_object_get(a, "right"));
        const char *got = found ? json_string_value(json_object_get(found, "right")) : NULL;
        right += found == a || (want && got && !strcmp(want, got));
    }
    return (double)right / (double)n;
}

/* Fill in multiple blanks (given {blank_id: text}: trimmed, case-insensitive)
 * and multiple dropdowns (given {blank_id: answer id}): the share of blanks
 * answered with a 100-weight answer of that blank. */
static double grade_blanks(json_t *answers, json_t *given, int dropdowns)
{
    if (!json_is_object(given)) return 0;
    json_t *blanks = json_array();
    size_t i, j, right = 0;
    json_t *a, *b;
    json_array_foreach(answers, i, a) {
        json_t *id = json_object_get(a, "blank_id");
        int seen = !json_is_string(id);
        json_array_foreach(blanks, j, b) seen |= json_equal(b, id);
        if (!seen) json_array_append(blanks, id);
    }
    json_array_foreach(blanks, j, b) {
        json_t *resp = json_object_get(given, json_string_value(b));
        json_array_foreach(answers, i, a) {
            if (!json_equal(json_object_get(a, "blank_id"), b) ||
                json_number_value(json_object_get(a, "weight")) < 100)
                continue;
            int hit = dropdowns ? resp && as_id(resp) == json_integer_value(json_object_get(a, "id"))
                                : json_is_string(resp) &&
                                      text_eq(json_string_value(json_object_get(a, "text"))
                                                  ? json_string_value(json_object_get(a, "text"))
                                                  : "",
                                              json_string_value(resp));
            if (hit) {
                right++;
                break;
            }
        }
    }
    size_t n = json_array_size(blanks);
    json_decref(blanks);
    return n ? (double)right / (double)n : 0;
}

/* Points a question earns for the given answer; *manual set for essays. */
static double grade_question(json_t *q, json_t *given, int *manual)
{
    const char *type = json_string_value(json_object_get(q, "question_type"));
    double points = json_number_value(json_object_get(q, "points_possible"));
    json_t *answers = json_object_get(q, "answers");
    size_t i;
    json_t *a;
    if (!type || !given || json_is_null(given)) {
        if (type && !strcmp(type, "essay_question")) *manual = 1;
        return 0;
    }
    if (!strcmp(type, "multiple_choice_question") || !strcmp(type, "true_false_question")) {
        int64_t pick = as_id(given);
        json_array_foreach(answers, i, a) {
            if (json_integer_value(json_object_get(a, "id")) == pick)
                return json_number_value(json_object_get(a, "weight")) >= 100 ? points : 0;
        }
        return 0;
    }
    if (!strcmp(type, "multiple_answers_question")) {
        if (!json_is_array(given)) return 0;
        size_t right = 0, picked_right = 0, picked_wrong = 0;
        json_array_foreach(answers, i, a) {
            int correct = json_number_value(json_object_get(a, "weight")) >= 100;
            int64_t aid = json_integer_value(json_object_get(a, "id"));
            int picked = 0;
            size_t k;
            json_t *g;
            json_array_foreach(given, k, g) picked |= as_id(g) == aid;
            right += correct;
            picked_right += correct && picked;
            picked_wrong += !correct && picked;
        }
        /* Canvas's partial credit: each right pick earns, each wrong one docks,
         * a share of the points per right answer; never below 0. */
        double share = points / (double)(right ? right : 1);
        double got = share * (double)picked_right - share * (double)picked_wrong;
        return got > 0 ? got : 0;
    }
    if (!strcmp(type, "short_answer_question")) {
        if (!json_is_string(given)) return 0;
        json_array_foreach(answers, i, a) {
            if (json_number_value(json_object_get(a, "weight")) >= 100 &&
                text_eq(json_string_value(json_object_get(a, "text")), json_string_value(given)))
                return points;
        }
        return 0;
    }
    if (!strcmp(type, "numerical_question")) {
        double v;
        if (json_is_number(given)) v = json_number_value(given);
        else if (json_is_string(given)) {
            char *end;
            v = strtod(json_string_value(given), &end);
            if (end == json_string_value(given)) return 0;
        } else return 0;
        json_array_foreach(answers, i, a) {
            json_t *ex = json_object_get(a, "exact");
            json_t *mg = json_object_get(a, "margin");
            json_t *st = json_object_get(a, "start");
            json_t *en = json_object_get(a, "end");
            if (ex) {
                double e = json_is_number(ex) ? json_number_value(ex) : strtod(json_string_value(ex) ? json_string_value(ex) : "0", NULL);
                double m = json_is_number(mg) ? json_number_value(mg) : 0;
                if (fabs(v - e) <= m + 1e-9) return points;
            } else if (st && en) {
                if (v >= json_number_value(st) && v <= json_number_value(en)) return points;
            } else if (text_eq(json_string_value(json_object_get(a, "text")) ? json_string_value(json_object_get(a, "text")) : "", json_is_string(given) ? json_string_value(given) : "")) {
                return points;
            }
        }
        return 0;
    }
    if (!strcmp(type, "matching_question")) return points * grade_matching(answers, given);
    if (!strcmp(type, "fill_in_multiple_blanks_question") ||
        !strcmp(type, "multiple_dropdowns_question"))
        return points * grade_blanks(answers, given, !strcmp(type, "multiple_dropdowns_question"));
    if (!strcmp(type, "essay_question") || !strcmp(type, "file_upload_question")) *manual = 1;
    return 0;
}

void r_qsub_complete(cv *c)
{
    int64_t cid = cv_seg_id(c, 1), qid = cv_seg_id(c, 3), id = cv_seg_id(c, 5);
    if (!cid || !qid || !id) return cv_not_found(c);
    if (!cv_can_read(c, cid)) return;
    if (!quiz_in(c, qid, cid) ||
        !cv_int(c, 0, "ii", "SELECT count(*) FROM quiz_submissions WHERE id=? AND quiz_id=?", id, qid))
        return cv_not_found(c);
    if (!in_progress(c, id)) return;
    char *txt = cv_text(c, "i", "SELECT answers FROM quiz_submissions WHERE id=?", id);
    json_t *answers = txt ? json_loads(txt, 0, NULL) : json_object();
    free(txt);
    json_t *qs = cv_rows(c, "i", "SELECT " QUESTION_OBJ " FROM quiz_questions x WHERE x.quiz_id=?", qid);
    double score = 0;
    int manual = 0;
    size_t i;
    json_t *q;
    json_array_foreach(qs, i, q) {
        char key[32];
        snprintf(key, sizeof key, "question_%lld",
                 (long long)json_integer_value(json_object_get(q, "id")));
        score += grade_question(q, json_object_get(answers, key), &manual);
    }
    json_decref(qs);
    json_decref(answers);
    score = round(score * 100.0) / 100.0;
    char *policy = cv_text(c, "i", "SELECT scoring_policy FROM quizzes WHERE id=?", qid);
    int latest = policy && !strcmp(policy, "keep_latest");
    free(policy);
    cv_exec(c, "dtii",
            "UPDATE quiz_submissions SET score=?1, workflow_state=?2, finished_at=" NOW ","
            " kept_score=CASE WHEN ?3 OR kept_score IS NULL THEN ?1 ELSE max(kept_score, ?1) END"
            " WHERE id=?4",
            score, manual ? "pending_review" : "complete", (int64_t)latest, id);
    int64_t sub = cv_int(c, 0, "i", "SELECT submission_id FROM quiz_submissions WHERE id=?", id);
    if (sub)
        cv_exec(c, "ti",
                "UPDATE submissions SET score=(SELECT kept_score FROM quiz_submissions WHERE"
                " submission_id=?2), grade=(SELECT printf('%g', kept_score) FROM quiz_submissions"
                " WHERE submission_id=?2), submitted_at=" NOW ", submission_type='online_quiz',"
                " attempt=(SELECT attempt FROM quiz_submissions WHERE submission_id=?2),"
                " workflow_state=?1, graded_at=" NOW " WHERE id=?2",
                manual ? "pending_review" : "graded", sub);
    qsub_envelope(c, 200, json_pack("[o]", qsub_json(c, id, 1)));
}

void r_quiz_statistics(cv *c)
{
    int64_t cid, qid;
    if (!cv_course_obj(c, 3, "quizzes", NULL, 1, &cid, &qid)) return;
    json_t *st = cv_row(c, "i",
                        "SELECT json_object('id',?1,'url',cv_origin() || '/api/v1/courses/'"
                        " || q.course_id || '/quizzes/' || q.id || '/statistics','html_url',"
                        "cv_origin() || '/courses/' || q.course_id || '/quizzes/' || q.id ||"
                        " '/statistics','multiple_attempts_exist',json(CASE WHEN max(s.attempt)>1"
                        " THEN 'true' ELSE 'false' END),'generated_at'," NOW ",'includes_all_versions',"
                        "json('false'),'includes_sis_ids',json('false'),'points_possible',"
                        "q.points_possible,'anonymous_survey',json('false'),'speed_grader_url',NULL,"
                        "'quiz_submissions_zip_url',NULL,'question_statistics',json_array(),"
                        "'submission_statistics',json_object('scores',json_object(),'score_average',"
                        "avg(s.score),'score_high',max(s.score),'score_low',min(s.score),"
                        "'score_stdev',NULL,'correct_count_average',NULL,'incorrect_count_average',"
                        "NULL,'duration_average',NULL,'unique_count',count(s.id))) FROM quizzes q"
                        " LEFT JOIN quiz_submissions s ON s.quiz_id=q.id AND s.workflow_state IN"
                        " ('complete','pending_review') WHERE q.id=?1", qid);
    cv_json(c, 200, json_pack("{s:[o]}", "quiz_statistics", st ? st : json_object()));
}
