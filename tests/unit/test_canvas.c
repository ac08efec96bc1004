/*
 * test_canvas.c - unit tests for the canvas layer's core: query and form
 * parsing, and requests answered by mb_canvas_handle on an in-memory
 * database (tokens, errors, pagination, the quiz attempt flow, hostile
 * inputs).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "canvas/canvas.h"

static void test_params_and_forms(void **state)
{
    (void)state;
    mb_canvas_param *p;
    size_t n;
    mb_canvas_params_parse("include%5B%5D=a&include[]=b+c&x&empty=&bad=%ZZ", &p, &n);
    assert_int_equal(n, 5);
    assert_string_equal(p[0].key, "include[]");
    assert_string_equal(p[1].val, "b c");
    assert_string_equal(p[2].key, "x");
    assert_string_equal(p[2].val, "");
    assert_string_equal(p[4].val, "%ZZ");
    mb_canvas_params_free(p, n);
    const char *form = "quiz[title]=T&quiz[published]=true&question[answers][][x]=1&"
                       "question[answers][][y]=2&question[answers][][x]=3&ids[]=1&ids[]=2&a[][";
    json_t *o = mb_canvas_form_to_json(form, strlen(form));
    char *s = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
    assert_string_equal(s, "{\"a\":[\"\"],\"ids\":[\"1\",\"2\"],\"question\":{\"answers\":"
                           "[{\"x\":\"1\",\"y\":\"2\"},{\"x\":\"3\"}]},"
                           "\"quiz\":{\"published\":\"true\",\"title\":\"T\"}}");
    free(s);
    json_decref(o);
}

typedef struct env {
    mb_canvas_db *db;
} env;

static int setup(void **state)
{
    env *e = calloc(1, sizeof *e);
    mb_err err;
    assert_int_equal(mb_canvas_db_open(":memory:", &e->db, &err), 0);
    mb_canvas_users u = {0};
    mb_canvas_user v[3] = {{"Ada Admin", "admin@x", "tok-admin", 1},
                           {"Sam Student", "sam@x", "tok-sam", 0},
                           {"Tia Teacher", "tia@x", "tok-tia", 0}};
    u.v = v;
    u.n = 3;
    assert_int_equal(mb_canvas_db_seed(e->db, &u, &err), 0);
    *state = e;
    return 0;
}

static int teardown(void **state)
{
    env *e = *state;
    mb_canvas_db_close(e->db);
    free(e);
    return 0;
}

/* One request; the answer's status, body kept in *body (caller frees). */
static int req(env *e, const char *token, const char *method, const char *pq, const char *body,
               json_t **out, char **link)
{
    char *path = strdup(pq);
    char *q = strchr(path, '?');
    if (q) *q++ = 0;
    mb_canvas_param *p;
    size_t n;
    mb_canvas_params_parse(q, &p, &n);
    json_t *b = body ? json_loads(body, 0, NULL) : NULL;
    mb_canvas_req r = {.method = method, .path = path, .params = p, .n_params = n, .body = b,
                       .token = token, .link_base = "http://h/api/v1"};
    mb_canvas_resp resp;
    mb_canvas_handle(e->db, &r, &resp);
    int status = resp.status;
    if (out) *out = json_incref(resp.body);
    if (link) *link = resp.link ? strdup(resp.link) : NULL;
    mb_canvas_resp_free(&resp);
    json_decref(b);
    mb_canvas_params_free(p, n);
    free(path);
    return status;
}

static json_int_t id_of(json_t *o) { return json_integer_value(json_object_get(o, "id")); }

static void test_tokens_errors_and_pages(void **state)
{
    env *e = *state;
    json_t *o;
    assert_int_equal(req(e, NULL, "GET", "/courses", NULL, &o, NULL), 401);
    json_decref(o);
    assert_int_equal(req(e, "nope", "GET", "/courses", NULL, &o, NULL), 401);
    assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(o, "errors"), 0), "message")),
                        "Invalid access token.");
    json_decref(o);
    assert_int_equal(req(e, "tok-admin", "GET", "/a/b/c/d/e/f/g/h/i/j/k/l", NULL, &o, NULL), 404);
    json_decref(o);
    assert_int_equal(req(e, "tok-sam", "GET", "/accounts/1/users", NULL, &o, NULL), 401);
    json_decref(o);
    char *link = NULL;
    assert_int_equal(req(e, "tok-admin", "GET", "/accounts/1/users?per_page=2&include[]=x", NULL,
                         &o, &link), 200);
    assert_int_equal(json_array_size(o), 2);
    assert_non_null(strstr(link, "<http://h/api/v1/accounts/1/users?include[]=x&page=2&per_page=2>; rel=\"next\""));
    assert_non_null(strstr(link, "page=2&per_page=2>; rel=\"last\""));
    free(link);
    json_decref(o);
    /* hostile ids and bodies */
    assert_int_equal(req(e, "tok-admin", "GET", "/courses/99999999999999999999", NULL, &o, NULL), 404);
    json_decref(o);
    assert_int_equal(req(e, "tok-admin", "POST", "/accounts/1/courses", "{\"course\":[1,2]}", &o, NULL),
                     200); /* Canvas names it "Unnamed Course" */
    assert_string_equal(json_string_value(json_object_get(o, "name")), "Unnamed Course");
    json_decref(o);
}

static void test_quiz_attempt_flow(void **state)
{
    env *e = *state;
    json_t *o;
    assert_int_equal(req(e, "tok-admin", "POST", "/accounts/1/courses",
                         "{\"course\":{\"name\":\"C\",\"course_code\":\"C1\"}}", &o, NULL), 200);
    json_int_t cid = id_of(o);
    json_decref(o);
    char path[128], body[512];
    snprintf(path, sizeof path, "/courses/%lld", (long long)cid);
    assert_int_equal(req(e, "tok-admin", "PUT", path, "{\"course\":{\"event\":\"offer\"}}", &o, NULL), 200);
    json_decref(o);
    snprintf(path, sizeof path, "/courses/%lld/enrollments", (long long)cid);
    assert_int_equal(req(e, "tok-admin", "POST", path,
                         "{\"enrollment\":{\"user_id\":2,\"type\":\"StudentEnrollment\","
                         "\"enrollment_state\":\"active\"}}", &o, NULL), 200);
    json_decref(o);
    snprintf(path, sizeof path, "/courses/%lld/quizzes", (long long)cid);
    assert_int_equal(req(e, "tok-admin", "POST", path, "{\"quiz\":{\"title\":\"Q\",\"published\":true}}",
                         &o, NULL), 200);
    json_int_t qid = id_of(o);
    json_decref(o);
    snprintf(path, sizeof path, "/courses/%lld/quizzes/%lld/questions", (long long)cid, (long long)qid);
    assert_int_equal(req(e, "tok-admin", "POST", path,
                         "{\"question\":{\"question_text\":\"?\",\"question_type\":"
                         "\"multiple_choice_question\",\"points_possible\":4,\"answers\":["
                         "{\"answer_text\":\"y\",\"answer_weight\":100},{\"answer_text\":\"n\","
                         "\"answer_weight\":0}]}}", &o, NULL), 200);
    json_int_t question = id_of(o);
    json_int_t right = id_of(json_array_get(json_object_get(o, "answers"), 0));
    json_decref(o);
    snprintf(path, sizeof path, "/courses/%lld/quizzes/%lld/submissions", (long long)cid, (long long)qid);
    assert_int_equal(req(e, "tok-sam", "POST", path, NULL, &o, NULL), 200);
    json_t *qs = json_incref(json_array_get(json_object_get(o, "quiz_submissions"), 0));
    json_decref(o);
    assert_int_equal(req(e, "tok-sam", "POST", path, NULL, &o, NULL), 409);
    json_decref(o);
    const char *token = json_string_value(json_object_get(qs, "validation_token"));
    snprintf(path, sizeof path, "/quiz_submissions/%lld/questions", (long long)id_of(qs));
    snprintf(body, sizeof body, "{\"attempt\":1,\"validation_token\":\"%s\",\"quiz_questions\":"
                                "[{\"id\":\"%lld\",\"answer\":%lld}]}", token, (long long)question,
             (long long)right);
    assert_int_equal(req(e, "tok-tia", "POST", path, body, &o, NULL), 401); /* not the owner */
    json_decref(o);
    assert_int_equal(req(e, "tok-sam", "POST", path, body, &o, NULL), 200);
    json_decref(o);
    snprintf(path, sizeof path, "/courses/%lld/quizzes/%lld/submissions/%lld/complete", (long long)cid,
             (long long)qid, (long long)id_of(qs));
    snprintf(body, sizeof body, "{\"attempt\":2,\"validation_token\":\"%s\"}", token);
    assert_int_equal(req(e, "tok-sam", "POST", path, body, &o, NULL), 400); /* wrong attempt */
    json_decref(o);
    snprintf(body, sizeof body, "{\"attempt\":1,\"validation_token\":\"%s\"}", token);
    assert_int_equal(req(e, "tok-sam", "POST", path, body, &o, NULL), 200);
    json_t *done = json_array_get(json_object_get(o, "quiz_submissions"), 0);
    assert_true(json_number_value(json_object_get(done, "score")) == 4);
    assert_true(json_number_value(json_object_get(done, "quiz_points_possible")) == 4);
    assert_string_equal(json_string_value(json_object_get(done, "workflow_state")), "complete");
    json_decref(o);
    json_decref(qs);
}

static void test_modules_and_pages(void **state)
{
    env *e = *state;
    json_t *o;
    char path[160];
    assert_int_equal(req(e, "tok-admin", "POST", "/accounts/1/courses",
                         "{\"course\":{\"name\":\"C\"},\"offer\":true}", &o, NULL), 200);
    json_int_t cid = id_of(o);
    json_decref(o);
    snprintf(path, sizeof path, "/courses/%lld/enrollments", (long long)cid);
    assert_int_equal(req(e, "tok-admin", "POST", path, "{\"enrollment\":{\"user_id\":2,"
                         "\"enrollment_state\":\"active\"}}", &o, NULL), 200);
    json_decref(o);
    snprintf(path, sizeof path, "/courses/%lld/modules", (long long)cid);
    assert_int_equal(req(e, "tok-sam", "POST", path, "{\"module\":{\"name\":\"W1\"}}", &o, NULL), 401);
    json_decref(o);
    assert_int_equal(req(e, "tok-admin", "POST", path, "{\"module\":{\"name\":\"W1\"}}", &o, NULL), 200);
    json_int_t mid = id_of(o);
    json_decref(o);
    snprintf(path, sizeof path, "/courses/%lld/pages", (long long)cid);
    assert_int_equal(req(e, "tok-admin", "POST", path, "{\"wiki_page\":{\"title\":\"Read Me!\","
                         "\"body\":\"<p>x</p>\",\"published\":true}}", &o, NULL), 200);
    assert_string_equal(json_string_value(json_object_get(o, "url")), "read-me");
    json_decref(o);
    assert_int_equal(req(e, "tok-admin", "POST", path, "{\"wiki_page\":{\"title\":\"read me\"}}",
                         &o, NULL), 200);
    assert_string_equal(json_string_value(json_object_get(o, "url")), "read-me-2");
    json_decref(o);
    snprintf(path, sizeof path, "/courses/%lld/pages/read-me", (long long)cid);
    assert_int_equal(req(e, "tok-sam", "GET", path, NULL, &o, NULL), 200);
    assert_string_equal(json_string_value(json_object_get(o, "body")), "<p>x</p>");
    json_decref(o);
    snprintf(path, sizeof path, "/courses/%lld/pages", (long long)cid);
    assert_int_equal(req(e, "tok-sam", "GET", path, NULL, &o, NULL), 200);
    assert_int_equal(json_array_size(o), 1); /* the unpublished one is hidden */
    json_decref(o);
    snprintf(path, sizeof path, "/courses/%lld/modules/%lld/items", (long long)cid, (long long)mid);
    assert_int_equal(req(e, "tok-admin", "POST", path, "{\"module_item\":{\"type\":\"Page\","
                         "\"page_url\":\"read-me\",\"title\":\"Read\"}}", &o, NULL), 200);
    json_int_t iid = id_of(o);
    assert_string_equal(json_string_value(json_object_get(o, "page_url")), "read-me");
    json_decref(o);
    assert_int_equal(req(e, "tok-admin", "POST", path, "{\"module_item\":{\"type\":\"Bogus\"}}",
                         &o, NULL), 400);
    json_decref(o);
    snprintf(path, sizeof path, "/courses/%lld/modules/%lld/items/%lld/done", (long long)cid,
             (long long)mid, (long long)iid);
    assert_int_equal(req(e, "tok-sam", "PUT", path, NULL, &o, NULL), 204);
    json_decref(o);
    snprintf(path, sizeof path, "/courses/%lld/modules?include[]=items", (long long)cid);
    assert_int_equal(req(e, "tok-sam", "GET", path, NULL, &o, NULL), 200);
    json_t *item = json_array_get(json_object_get(json_array_get(o, 0), "items"), 0);
    assert_true(json_is_true(json_object_get(json_object_get(item, "completion_requirement"), "completed")));
    assert_int_equal(json_integer_value(json_object_get(json_array_get(o, 0), "items_count")), 1);
    json_decref(o);
    snprintf(path, sizeof path, "/courses/%lld/modules/%lld", (long long)cid, (long long)mid);
    assert_int_equal(req(e, "tok-sam", "DELETE", path, NULL, &o, NULL), 401);
    json_decref(o);
    assert_int_equal(req(e, "tok-admin", "DELETE", path, NULL, &o, NULL), 200);
    json_decref(o);
    assert_int_equal(req(e, "tok-admin", "GET", path, NULL, &o, NULL), 404);
    json_decref(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_params_and_forms),
        cmocka_unit_test_setup_teardown(test_tokens_errors_and_pages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_quiz_attempt_flow, setup, teardown),
        cmocka_unit_test_setup_teardown(test_modules_and_pages, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
