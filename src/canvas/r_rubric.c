/*
 * r_rubric.c - rubrics: creation with criteria and ratings, association with
 * an assignment (or a bookmark in the course), reading back with
 * include[]=assessments|associations, assessments of submissions (which grade
 * them when the association is used for grading), and the rubric an
 * assignment's JSON carries.
 */
#include "canvas/canvas_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NOW "strftime('%Y-%m-%dT%H:%M:%SZ','now')"
#define JB(x) "json(CASE WHEN " x " THEN 'true' ELSE 'false' END)"
#define MAX_CRITERIA 100
#define MAX_RATINGS 50

#define RUBRIC_OBJ                                                                            \
    "json_object('id',id,'title',title,'context_id',course_id,'context_type','Course',"       \
    "'points_possible',points_possible,'reusable',json('false'),'public',json('false'),"      \
    "'read_only',json('false'),'free_form_criterion_comments'," JB("IFNULL(free_form,0)") ","  \
    "'hide_score_total',json('false'),'data',json(data))"

#define ASSOC_OBJ                                                                             \
    "json_object('id',id,'rubric_id',rubric_id,'association_id',association_id,"              \
    "'association_type',association_type,'use_for_grading'," JB("use_for_grading") ","        \
    "'summary_data',NULL,'purpose',purpose,'hide_score_total'," JB("hide_score_total") ","    \
    "'hide_points'," JB("hide_points") ",'hide_outcome_results',json('false'),"               \
    "'context_id',course_id,'context_type','Course','created_at',created_at)"

/* ------------------------------------------------------------ input */

static int cmp_index(const void *a, const void *b)
{
    long x = strtol(*(const char *const *)a, NULL, 10), y = strtol(*(const char *const *)b, NULL, 10);
    return x < y ? -1 : x > y;
}

/* Criteria and ratings come as arrays (JSON) or as objects keyed "0", "1", ...
 * (forms, as Rails reads them): a new array in index order, objects only. */
static json_t *in_order(json_t *v, size_t max)
{
    json_t *out = json_array();
    if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x) if (json_is_object(x) && json_array_size(out) < max)
            json_array_append(out, x);
        return out;
    }
    if (!json_is_object(v)) return out;
    size_t n = json_object_size(v), k = 0;
    const char **keys = mb_calloc(n ? n : 1, sizeof *keys);
    const char *key;
    json_t *x;
    json_object_foreach(v, key, x) keys[k++] = key;
    qsort(keys, k, sizeof *keys, cmp_index);
    for (size_t i = 0; i < k && json_array_size(out) < max; i++) {
        json_t *o = json_object_get(v, keys[i]);
        if (json_is_object(o)) json_array_append(out, o);
    }
    free(keys);
    return out;
}

/* A number given as a number or a numeric string; dflt otherwise. */
static double num_of(json_t *v, double dflt)
{
    if (json_is_number(v)) return json_number_value(v);
    if (json_is_string(v) && *json_string_value(v)) {
        char *end;
        double d = strtod(json_string_value(v), &end);
        if (!*end && isfinite(d)) return d;
    }
    return dflt;
}

static const char *str_of(json_t *o, const char *key, const char *dflt)
{
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : dflt;
}

static int truthy(json_t *v)
{
    if (json_is_boolean(v)) return json_is_true(v);
    if (json_is_integer(v)) return json_integer_value(v) != 0;
    return json_is_string(v) && cv_flag(json_string_value(v));
}

static int by_points_desc(const void *a, const void *b)
{
    double x = json_number_value(json_object_get(*(json_t *const *)a, "points"));
    double y = json_number_value(json_object_get(*(json_t *const *)b, "points"));
    return x > y ? -1 : x < y;
}

/* Canvas's rubric data from rubric[criteria]: each criterion gets an id, its
 * ratings sorted by points (highest first; "Full Marks"/"No Marks" when none
 * are given) and the points of its best rating. *total: the rubric's points. */
static json_t *build_criteria(int64_t rid, json_t *criteria, double *total)
{
    json_t *in = in_order(criteria, MAX_CRITERIA), *out = json_array();
    int64_t seq = 0;
    *total = 0;
    size_t i;
    json_t *cr;
    json_array_foreach(in, i, cr) {
        char *cid = mb_asprintf("%lld_%lld", (long long)rid, (long long)++seq);
        json_t *rs = in_order(json_object_get(cr, "ratings"), MAX_RATINGS);
        double pts = num_of(json_object_get(cr, "points"), 5);
        size_t n = json_array_size(rs);
        json_t **sorted = mb_calloc(n ? n : 1, sizeof *sorted);
        for (size_t j = 0; j < n; j++) {
            json_t *r = json_array_get(rs, j);
            sorted[j] = json_pack("{s:s,s:f}", "description", str_of(r, "description", ""), "points",
                                  num_of(json_object_get(r, "points"), 0));
            json_object_set_new(sorted[j], "long_description",
                                json_string(str_of(r, "long_description", "")));
        }
        qsort(sorted, n, sizeof *sorted, by_points_desc);
        json_t *ratings = json_array();
        for (size_t j = 0; j < n; j++) json_array_append_new(ratings, sorted[j]);
        free(sorted);
        if (!n) {
            json_array_append_new(ratings, json_pack("{s:s,s:s,s:f}", "description", "Full Marks",
                                                     "long_description", "", "points", pts));
            json_array_append_new(ratings, json_pack("{s:s,s:s,s:f}", "description", "No Marks",
                                                     "long_description", "", "points", 0.0));
        } else {
            pts = json_number_value(json_object_get(json_array_get(ratings, 0), "points"));
        }
        size_t j;
        json_t *r;
        json_array_foreach(ratings, j, r) {
            char *id = mb_asprintf("%lld_%lld", (long long)rid, (long long)++seq);
            json_object_set_new(r, "id", json_string(id));
            json_object_set_new(r, "criterion_id", json_string(cid));
            free(id);
        }
        json_t *o = json_pack("{s:s,s:s,s:s,s:f,s:b,s:o}", "id", cid, "description",
                              str_of(cr, "description", "No Description"), "long_description",
                              str_of(cr, "long_description", ""), "points", pts,
                              "criterion_use_range", truthy(json_object_get(cr, "criterion_use_range")),
                              "ratings", ratings);
        json_array_append_new(out, o);
        *total += pts;
        free(cid);
        json_decref(rs);
    }
    json_decref(in);
    return out;
}

/* ------------------------------------------------------------ reading */

static json_t *rubric_json(cv *c, int64_t rid)
{
    return cv_row(c, "i", "SELECT " RUBRIC_OBJ " FROM rubrics WHERE id=?", rid);
}

static json_t *assoc_json(cv *c, int64_t id)
{
    return cv_row(c, "i", "SELECT " ASSOC_OBJ " FROM rubric_associations WHERE id=?", id);
}

static json_t *assessment_json(cv *c, int64_t id, int comments_only)
{
    json_t *a = cv_row(c, "i",
                       "SELECT json_object('id',x.id,'rubric_id',x.rubric_id,'rubric_association_id',"
                       "x.association_id,'score',x.score,'artifact_type','Submission','artifact_id',"
                       "x.submission_id,'artifact_attempt',s.attempt,'assessment_type',"
                       "x.assessment_type,'assessor_id',x.assessor_id,'data',json(x.data))"
                       " FROM rubric_assessments x LEFT JOIN submissions s ON s.id=x.submission_id"
                       " WHERE x.id=?", id);
    if (a && comments_only) {
        json_t *comments = json_array();
        size_t i;
        json_t *d;
        json_array_foreach(json_object_get(a, "data"), i, d) {
            const char *t = str_of(d, "comments", "");
            if (*t) json_array_append_new(comments, json_string(t));
        }
        json_object_del(a, "data");
        json_object_set_new(a, "comments", comments);
    }
    return a;
}

static void add_rubric_includes(cv *c, json_t *r, int64_t rid)
{
    const char *atype = cv_include(c, "assessments")          ? NULL
                        : cv_include(c, "graded_assessments") ? "grading"
                        : cv_include(c, "peer_assessments")   ? "peer_review"
                                                              : "";
    if (!atype || *atype) {
        json_t *ids = cv_rows(c, "it", "SELECT id FROM rubric_assessments WHERE rubric_id=? AND"
                                       " (?2 IS NULL OR assessment_type=?2) ORDER BY id", rid, atype);
        const char *style = cv_param(c, "style");
        json_object_set_new(r, "assessments",
                            cv_map(c, ids, assessment_json, style && !strcmp(style, "comments_only")));
    }
    const char *type = cv_include(c, "associations")              ? NULL
                       : cv_include(c, "assignment_associations") ? "Assignment"
                       : cv_include(c, "course_associations")     ? "Course"
                                                                  : "";
    if (!type || *type)
        json_object_set_new(r, "associations",
                            cv_rows(c, "it", "SELECT " ASSOC_OBJ " FROM rubric_associations WHERE"
                                             " rubric_id=? AND (?2 IS NULL OR association_type=?2)"
                                             " ORDER BY id", rid, type));
}

void r_rubrics_list(cv *c)
{
    int64_t cid = cv_seg_id(c, 1);
    if (!cid) return cv_not_found(c);
    if (!cv_can_manage(c, cid)) return;
    cv_list(c, cv_rows(c, "i", "SELECT " RUBRIC_OBJ " FROM rubrics WHERE course_id=? ORDER BY id", cid));
}

void r_rubric_get(cv *c)
{
    int64_t cid, rid;
    if (!cv_course_obj(c, 3, "rubrics", NULL, 1, &cid, &rid)) return;
    json_t *r = rubric_json(c, rid);
    add_rubric_includes(c, r, rid);
    cv_json(c, 200, r);
}

/* ------------------------------------------------------------ writing */

/* Makes or updates the association that body[rubric_association] describes
 * for rubric rid; an assignment has one grading rubric, so a new grading
 * association replaces the old. Returns its id, 0 after answering an error. */
static int64_t associate(cv *c, int64_t cid, int64_t rid)
{
    const char *type = cv_body_str(c, "rubric_association", "association_type");
    int64_t target = (int64_t)cv_body_num(c, "rubric_association", "association_id", 0);
    if (!type || !strcmp(type, "Course")) {
        type = "Course";
        target = cid;
    } else if (!strcmp(type, "Assignment")) {
        if (!cv_int(c, 0, "ii", "SELECT count(*) FROM assignments WHERE id=? AND course_id=? AND"
                                " workflow_state!='deleted'", target, cid)) {
            cv_not_found(c);
            return 0;
        }
    } else {
        cv_error(c, 400, "invalid association type");
        return 0;
    }
    const char *purpose = cv_body_str(c, "rubric_association", "purpose");
    if (!purpose) purpose = !strcmp(type, "Assignment") ? "grading" : "bookmark";
    if (strcmp(purpose, "grading") && strcmp(purpose, "bookmark")) {
        cv_error(c, 400, "invalid purpose");
        return 0;
    }
    int grading = cv_body_bool(c, "rubric_association", "use_for_grading", 0);
    int hide_total = cv_body_bool(c, "rubric_association", "hide_score_total", 0);
    int hide_points = cv_body_bool(c, "rubric_association", "hide_points", 0);
    if (!strcmp(purpose, "grading") && !strcmp(type, "Assignment"))
        cv_exec(c, "ii", "DELETE FROM rubric_associations WHERE association_type='Assignment' AND"
                         " association_id=? AND purpose='grading' AND rubric_id!=?", target, rid);
    int64_t id = cv_int(c, 0, "iti", "SELECT id FROM rubric_associations WHERE rubric_id=? AND"
                                     " association_type=? AND association_id=?", rid, type, target);
    if (id) {
        cv_exec(c, "tiiii", "UPDATE rubric_associations SET purpose=?, use_for_grading=?,"
                            " hide_score_total=?, hide_points=? WHERE id=?",
                purpose, (int64_t)grading, (int64_t)hide_total, (int64_t)hide_points, id);
        return id;
    }
    cv_exec(c, "itiitiii",
            "INSERT INTO rubric_associations(rubric_id, association_type, association_id,"
            " course_id, purpose, use_for_grading, hide_score_total, hide_points, created_at)"
            " VALUES(?,?,?,?,?,?,?,?," NOW ")",
            rid, type, target, cid, purpose, (int64_t)grading, (int64_t)hide_total,
            (int64_t)hide_points);
    return cv_last_id(c);
}

/* Title, criteria and the free-form flag of body[rubric] into row rid. */
static void rubric_fields(cv *c, int64_t rid)
{
    const char *title = cv_body_str(c, "rubric", "title");
    if (title && *title) cv_exec(c, "ti", "UPDATE rubrics SET title=? WHERE id=?", title, rid);
    if (cv_body_has(c, "rubric", "free_form_criterion_comments"))
        cv_exec(c, "ii", "UPDATE rubrics SET free_form=? WHERE id=?",
                (int64_t)cv_body_bool(c, "rubric", "free_form_criterion_comments", 0), rid);
    json_t *crit = cv_body(c, "rubric", "criteria");
    if (crit) {
        double total;
        json_t *data = build_criteria(rid, crit, &total);
        cv_exec(c, "jdi", "UPDATE rubrics SET data=?, points_possible=? WHERE id=?", data, total, rid);
        json_decref(data);
    }
}

static void answer_with_association(cv *c, int64_t rid, int64_t assoc)
{
    json_t *o = json_object();
    json_object_set_new(o, "rubric", rubric_json(c, rid));
    if (assoc) json_object_set_new(o, "rubric_association", assoc_json(c, assoc));
    cv_json(c, 200, o);
}

void r_rubric_create(cv *c)
{
    int64_t cid;
    const char *title = cv_create_in(c, "rubric", "title", &cid);
    if (!title) return;
    cv_exec(c, "it", "INSERT INTO rubrics(course_id, title, points_possible, data) VALUES(?,?,0,'[]')",
            cid, title);
    int64_t rid = cv_last_id(c);
    rubric_fields(c, rid);
    int64_t assoc = associate(c, cid, rid);
    if (!assoc) {
        /* The error is answered; nothing of this request is kept. */
        cv_exec(c, "i", "DELETE FROM rubrics WHERE id=?", rid);
        return;
    }
    answer_with_association(c, rid, assoc);
}

void r_rubric_update(cv *c)
{
    int64_t cid, rid;
    if (!cv_course_obj(c, 3, "rubrics", NULL, 1, &cid, &rid)) return;
    rubric_fields(c, rid);
    int64_t assoc = 0;
    json_t *ra = cv_body(c, NULL, "rubric_association");
    if (json_is_object(ra) && json_object_size(ra) && !(assoc = associate(c, cid, rid))) return;
    answer_with_association(c, rid, assoc);
}

void r_rubric_delete(cv *c)
{
    int64_t cid, rid;
    if (!cv_course_obj(c, 3, "rubrics", NULL, 1, &cid, &rid)) return;
    json_t *r = rubric_json(c, rid);
    cv_exec(c, "i", "DELETE FROM rubric_assessments WHERE rubric_id=?", rid);
    cv_exec(c, "i", "DELETE FROM rubric_associations WHERE rubric_id=?", rid);
    cv_exec(c, "i", "DELETE FROM rubrics WHERE id=?", rid);
    cv_json(c, 200, r);
}

void r_rubric_association_create(cv *c)
{
    int64_t cid = cv_seg_id(c, 1);
    if (!cid) return cv_not_found(c);
    if (!cv_can_manage(c, cid)) return;
    int64_t rid = (int64_t)cv_body_num(c, "rubric_association", "rubric_id", 0);
    if (!cv_int(c, 0, "ii", "SELECT count(*) FROM rubrics WHERE id=? AND course_id=?", rid, cid))
        return cv_not_found(c);
    int64_t assoc = associate(c, cid, rid);
    if (assoc) cv_json(c, 200, json_pack("{s:o}", "rubric_association", assoc_json(c, assoc)));
}

/* ------------------------------------------------------------ assessments */

/* Records the assessment `ratings` ({criterion_id: {points, rating_id,
 * comments}}) of submission sid under association assoc by the caller; a
 * grading association sets the submission's score. Returns its id. */
static int64_t assess(cv *c, int64_t assoc, int64_t sid, const char *type, json_t *ratings)
{
    int64_t rid = cv_int(c, 0, "i", "SELECT rubric_id FROM rubric_associations WHERE id=?", assoc);
    char *text = cv_text(c, "i", "SELECT data FROM rubrics WHERE id=?", rid);
    json_t *criteria = text ? json_loads(text, 0, NULL) : NULL;
    free(text);
    json_t *data = json_array();
    double score = 0;
    size_t i;
    json_t *cr;
    json_array_foreach(criteria, i, cr) {
        const char *id = str_of(cr, "id", "");
        json_t *given = json_object_get(ratings, id);
        if (!json_is_object(given)) {
            char *alt = mb_asprintf("criterion_%s", id); /* the form Canvas's UI posts */
            given = json_object_get(ratings, alt);
            free(alt);
        }
        if (!json_is_object(given)) continue;
        const char *rating_id = str_of(given, "rating_id", NULL);
        json_t *rating = NULL;
        size_t j;
        json_t *r;
        json_array_foreach(json_object_get(cr, "ratings"), j, r)
            if (rating_id && !strcmp(str_of(r, "id", ""), rating_id)) rating = r;
        double pts = num_of(json_object_get(given, "points"), NAN);
        if (isnan(pts) && rating) pts = json_number_value(json_object_get(rating, "points"));
        json_t *d = json_pack("{s:s,s:s?,s:s,s:s?}", "criterion_id", id, "rating_id",
                              rating ? str_of(rating, "id", NULL) : NULL, "comments",
                              str_of(given, "comments", ""), "description",
                              rating ? str_of(rating, "description", NULL) : NULL);
        json_object_set_new(d, "points", isnan(pts) ? json_null() : json_real(pts));
        if (!isnan(pts)) score += pts;
        json_array_append_new(data, d);
    }
    json_decref(criteria);
    score = round(score * 100.0) / 100.0;
    int64_t id = cv_int(c, 0, "iit", "SELECT id FROM rubric_assessments WHERE association_id=? AND"
                                     " submission_id=? AND assessment_type=?", assoc, sid, type);
    if (id)
        cv_exec(c, "djii", "UPDATE rubric_assessments SET score=?, data=?, assessor_id=? WHERE id=?",
                score, data, c->uid, id);
    else
        cv_exec(c, "iiiitdj",
                "INSERT INTO rubric_assessments(rubric_id, association_id, submission_id, assessor_id,"
                " assessment_type, score, data, created_at) VALUES(?,?,?,?,?,?,?," NOW ")",
                rid, assoc, sid, c->uid, type, score, data);
    if (!id) id = cv_last_id(c);
    json_decref(data);
    if (!strcmp(type, "grading") &&
        cv_int(c, 0, "i", "SELECT use_for_grading FROM rubric_associations WHERE id=?", assoc)) {
        char grade[64];
        snprintf(grade, sizeof grade, "%.15g", score);
        cv_exec(c, "dtii", "UPDATE submissions SET score=?, grade=?, grader_id=?, graded_at=" NOW ","
                           " workflow_state='graded' WHERE id=?", score, grade, c->uid, sid);
    }
    return id;
}

static int64_t grading_association(cv *c, int64_t aid)
{
    return cv_int(c, 0, "i", "SELECT id FROM rubric_associations WHERE association_type='Assignment'"
                             " AND association_id=? AND purpose='grading' ORDER BY id DESC LIMIT 1",
                  aid);
}

void cv_rubric_assess_submission(cv *c, int64_t aid, int64_t sid)
{
    json_t *ratings = cv_body(c, NULL, "rubric_assessment");
    int64_t assoc = json_is_object(ratings) ? grading_association(c, aid) : 0;
    if (assoc) assess(c, assoc, sid, "grading", ratings);
}

json_t *cv_rubric_assessment_of(cv *c, int64_t sid)
{
    char *text = cv_text(c, "i", "SELECT x.data FROM rubric_assessments x JOIN submissions s ON"
                                 " s.id=x.submission_id JOIN rubric_associations r ON"
                                 " r.id=x.association_id AND r.association_id=s.assignment_id AND"
                                 " r.association_type='Assignment' WHERE x.submission_id=? AND"
                                 " x.assessment_type='grading' ORDER BY x.id DESC LIMIT 1", sid);
    json_t *data = text ? json_loads(text, 0, NULL) : NULL;
    free(text);
    if (!json_is_array(data)) {
        json_decref(data);
        return NULL;
    }
    json_t *out = json_object();
    size_t i;
    json_t *d;
    json_array_foreach(data, i, d) {
        json_t *v = json_object();
        json_object_set(v, "rating_id", json_object_get(d, "rating_id") ? json_object_get(d, "rating_id")
                                                                        : json_null());
        json_object_set(v, "comments", json_object_get(d, "comments"));
        json_object_set(v, "points", json_object_get(d, "points"));
        json_object_set_new(out, str_of(d, "criterion_id", ""), v);
    }
    json_decref(data);
    return out;
}

void r_rubric_assessment_create(cv *c)
{
    int64_t cid, assoc;
    if (!cv_course_obj(c, 3, "rubric_associations", NULL, 1, &cid, &assoc)) return;
    json_t *body = cv_body(c, NULL, "rubric_assessment");
    int64_t uid = (int64_t)cv_body_num(c, "rubric_assessment", "user_id", 0);
    char *atype = cv_text(c, "i", "SELECT association_type FROM rubric_associations WHERE id=?", assoc);
    int64_t aid = cv_int(c, 0, "i", "SELECT association_id FROM rubric_associations WHERE id=?", assoc);
    int ok = atype && !strcmp(atype, "Assignment");
    free(atype);
    if (!ok || !json_is_object(body)) {
        cv_error(c, 400, "invalid rubric assessment");
        return;
    }
    if (!cv_int(c, 0, "ii", "SELECT count(*) FROM enrollments WHERE course_id=? AND user_id=? AND"
                            " type='StudentEnrollment' AND workflow_state!='deleted'", cid, uid))
        return cv_not_found(c);
    int64_t sid = cv_int(c, 0, "ii", "SELECT id FROM submissions WHERE assignment_id=? AND user_id=?",
                         aid, uid);
    if (!sid) {
        cv_exec(c, "ii", "INSERT INTO submissions(assignment_id, user_id, workflow_state)"
                         " VALUES(?,?,'unsubmitted')", aid, uid);
        sid = cv_last_id(c);
    }
    const char *type = cv_body_str(c, "rubric_assessment", "assessment_type");
    if (!type || (strcmp(type, "grading") && strcmp(type, "peer_review") &&
                  strcmp(type, "provisional_grade"))) type = "grading";
    int64_t id = assess(c, assoc, sid, type, body);
    cv_json(c, 200, assessment_json(c, id, 0));
}

/* ------------------------------------------------------------ assignments */

void cv_rubric_of_assignment(cv *c, json_t *a)
{
    int64_t aid = json_integer_value(json_object_get(a, "id"));
    int64_t assoc = grading_association(c, aid);
    if (!assoc) return;
    json_t *r = cv_row(c, "i",
                       "SELECT json_object('id',r.id,'title',r.title,'points_possible',"
                       "r.points_possible,'free_form_criterion_comments'," JB("IFNULL(r.free_form,0)")
                       ",'hide_score_total'," JB("x.hide_score_total") ",'hide_points',"
                       JB("x.hide_points") ",'use_for_grading'," JB("x.use_for_grading")
                       ",'data',json(r.data)) FROM rubric_associations x JOIN rubrics r ON"
                       " r.id=x.rubric_id WHERE x.id=?", assoc);
    if (!r) return;
    json_t *data = json_incref(json_object_get(r, "data"));
    json_object_set(a, "use_rubric_for_grading", json_object_get(r, "use_for_grading"));
    json_object_set(a, "free_form_criterion_comments",
                    json_object_get(r, "free_form_criterion_comments"));
    json_object_del(r, "data");
    json_object_del(r, "use_for_grading");
    size_t i, j;
    json_t *cr, *rt;
    json_array_foreach(data, i, cr) json_array_foreach(json_object_get(cr, "ratings"), j, rt)
        json_object_del(rt, "criterion_id");
    json_object_set_new(a, "rubric", data);
    json_object_set_new(a, "rubric_settings", r);
}
