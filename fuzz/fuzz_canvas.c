/*
 * fuzz_canvas.c - the Canvas REST core (src/canvas): any method, path, query
 * and body (JSON or a form) on a fresh database with an admin, a student and
 * a teacher, a course, a quiz with multiple choice, matching and blanks
 * questions and an attempt in progress, an assignment with a grading rubric.
 * Invariants: an answer always comes, with a status between 200 and 599 and a
 * body that prints as JSON; a Link header only on 200s; the query and form
 * parsers never fail.
 *
 * Input: byte 0 picks the method, byte 1 the caller (admin, student,
 * teacher, no token, a wrong token); then path, query and body separated by
 * newlines.
 */
#include "fuzz.h"
#include "canvas/canvas.h"

#include <jansson.h>

static const char *const METHODS[] = {"GET", "POST", "PUT", "DELETE"};
static const char *const TOKENS[] = {"tok-admin", "tok-sam", "tok-tia", NULL, "wrong"};

static void call(mb_canvas_db *db, const char *token, const char *method, const char *pq,
                 const char *body)
{
    json_t *b = body ? json_loads(body, 0, NULL) : NULL;
    mb_canvas_resp r;
    mb_canvas_handle_pq(db, method, pq, b, token, 0, &r);
    json_decref(b);
    mb_canvas_resp_free(&r);
}

static mb_canvas_db *fresh(void)
{
    mb_canvas_db *db;
    mb_err err;
    if (mb_canvas_db_open(":memory:", &db, &err)) abort();
    mb_canvas_user v[3] = {{"Ada Admin", "admin@x", "tok-admin", 1},
                           {"Sam Student", "sam@x", "tok-sam", 0},
                           {"Tia Teacher", "tia@x", "tok-tia", 0}};
    mb_canvas_users u = {v, 3, NULL};
    if (mb_canvas_db_seed(db, &u, &err)) abort();
    call(db, "tok-admin", "POST", "/accounts/1/courses",
         "{\"course\":{\"name\":\"C\",\"course_code\":\"C1\"},\"offer\":true}");
    call(db, "tok-admin", "POST", "/courses/1/enrollments",
         "{\"enrollment\":{\"user_id\":2,\"enrollment_state\":\"active\"}}");
    call(db, "tok-admin", "POST", "/courses/1/enrollments",
         "{\"enrollment\":{\"user_id\":3,\"type\":\"TeacherEnrollment\",\"enrollment_state\":\"active\"}}");
    call(db, "tok-tia", "POST", "/courses/1/quizzes", "{\"quiz\":{\"title\":\"Q\",\"published\":true}}");
    call(db, "tok-tia", "POST", "/courses/1/quizzes/1/questions",
         "{\"question\":{\"question_type\":\"multiple_choice_question\",\"points_possible\":1,"
         "\"answers\":[{\"answer_text\":\"a\",\"answer_weight\":100}]}}");
    call(db, "tok-tia", "POST", "/courses/1/quizzes/1/questions",
         "{\"question\":{\"question_type\":\"matching_question\",\"points_possible\":2,"
         "\"matching_answer_incorrect_matches\":\"z\\ny\",\"answers\":[{\"answer_match_left\":\"a\","
         "\"answer_match_right\":\"b\"}]}}");
    call(db, "tok-tia", "POST", "/courses/1/quizzes/1/questions",
         "{\"question\":{\"question_type\":\"fill_in_multiple_blanks_question\","
         "\"points_possible\":2,\"answers\":[{\"answer_text\":\"red\",\"blank_id\":\"c1\"}]}}");
    call(db, "tok-sam", "POST", "/courses/1/quizzes/1/submissions", NULL);
    /* assignment 2 with a grading rubric (criterion 1_1, ratings 1_2 and 1_3) */
    call(db, "tok-tia", "POST", "/courses/1/assignments",
         "{\"assignment\":{\"name\":\"A\",\"published\":true}}");
    call(db, "tok-tia", "POST", "/courses/1/rubrics",
         "{\"rubric\":{\"title\":\"R\",\"criteria\":[{\"description\":\"c\",\"ratings\":"
         "[{\"points\":2},{\"points\":0}]}]},\"rubric_association\":{\"association_type\":"
         "\"Assignment\",\"association_id\":2,\"use_for_grading\":true}}");
    return db;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_in in = {data, size};
    const char *method = METHODS[fuzz_byte(&in) % 4];
    const char *token = TOKENS[fuzz_byte(&in) % 5];
    const uint8_t *pp, *qp, *bp;
    size_t pl = fuzz_part(&in, '\n', &pp), ql = fuzz_part(&in, '\n', &qp);
    size_t bl = fuzz_part(&in, 0xff, &bp);
    char *path = fuzz_str(pp, pl), *query = fuzz_str(qp, ql), *bs = fuzz_str(bp, bl);
    mb_canvas_param *params;
    size_t np;
    mb_canvas_params_parse(query, &params, &np);
    FUZZ_CHECK(np <= 256, "%zu parameters", np);
    json_t *body = json_loadb(bs, bl, 0, NULL);
    if (!body) body = mb_canvas_form_to_json(bs, bl);
    FUZZ_CHECK(json_is_object(body), "a form is not an object");
    mb_canvas_db *db = fresh();
    mb_canvas_req req = {.method = method, .path = path, .params = params, .n_params = np,
                         .body = json_is_object(body) ? body : NULL, .token = token,
                         .link_base = "http://h/api/v1"};
    mb_canvas_resp r;
    mb_canvas_handle(db, &req, &r);
    FUZZ_CHECK(r.status >= 200 && r.status <= 599, "status %d", r.status);
    FUZZ_CHECK(r.body != NULL, "no body");
    char *txt = json_dumps(r.body, JSON_ENCODE_ANY);
    FUZZ_CHECK(txt != NULL, "the body does not print");
    FUZZ_CHECK(!r.link || r.status == 200, "Link on %d", r.status);
    free(txt);
    mb_canvas_resp_free(&r);
    mb_canvas_db_close(db);
    json_decref(body);
    mb_canvas_params_free(params, np);
    free(path);
    free(query);
    free(bs);
    return 0;
}
