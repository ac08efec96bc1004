/*
 * canvas_int.h - what the files of the canvas MCP server share: the
 * server's state (its Canvas client, the account-user list sessions) and
 * the per-call helpers that mirror canvas-mcp-server's CanvasClient (axios
 * query encoding, Link pagination, its error texts).
 */
#ifndef MB_SRV_CANVAS_INT_H
#define MB_SRV_CANVAS_INT_H

#include "canvas/canvas.h"
#include "mcp/mcp.h"

#include <pthread.h>

typedef struct cs_session {
    char id[64];
    json_t *params;  /* account_id, search_term, sort, order, per_page, current_page */
    double created;
} cs_session;

typedef struct cs {
    mb_canvas_client *cl;
    cs_session *sessions;
    size_t n_sessions;
} cs;

/* One tool call. */
typedef struct tx {
    cs *s;
    json_t *args;        /* never NULL (an empty object when absent) */
    mb_mcp_result *res;
    char *err;           /* the thrown Error's message */
} tx;

extern const mb_mcp_tool mb_canvas__tools[];

/* JavaScript semantics of argument values. */
json_t *cs_arg(tx *t, const char *key);      /* NULL = undefined */
int cs_falsy(const json_t *v);               /* !v */
char *cs_str(const json_t *v);               /* String(v) / template literal */

/* A Canvas call as CanvasClient makes it: query from an object (arrays as
 * key[]=v, undefined and null left out), JSON body, JSON array answers
 * followed through Link rel="next". NULL on failure with t->err set to
 * "Canvas API Error (STATUS): MESSAGE". `paginate` 0 for the one call that
 * uses a client without the interceptor; *link gets the Link header then. */
json_t *cs_api(tx *t, const char *method, const char *path, json_t *query, json_t *body);
json_t *cs_api_raw(tx *t, const char *method, const char *path, json_t *query, json_t *body,
                   char **link, int *status);

/* Results: JSON.stringify(v, null, 2) (v stolen), the error text, a text. */
int cs_done(tx *t, json_t *v);
int cs_fail(tx *t);
int cs_text(tx *t, const char *text);
int cs_throw(tx *t, const char *msg);  /* throw new Error(msg) */

#define CS_TOOL(n) int t_##n(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
CS_TOOL(health_check); CS_TOOL(list_courses); CS_TOOL(get_course); CS_TOOL(create_course);
CS_TOOL(update_course); CS_TOOL(list_assignments); CS_TOOL(get_assignment);
CS_TOOL(create_assignment); CS_TOOL(update_assignment); CS_TOOL(list_assignment_groups);
CS_TOOL(get_submission); CS_TOOL(submit_assignment); CS_TOOL(submit_grade); CS_TOOL(list_files);
CS_TOOL(get_file); CS_TOOL(list_folders); CS_TOOL(list_pages); CS_TOOL(get_page);
CS_TOOL(list_calendar_events); CS_TOOL(get_upcoming_assignments); CS_TOOL(get_dashboard);
CS_TOOL(get_dashboard_cards); CS_TOOL(get_course_grades); CS_TOOL(get_user_grades);
CS_TOOL(get_user_profile); CS_TOOL(update_user_profile); CS_TOOL(enroll_user);
CS_TOOL(list_modules); CS_TOOL(get_module); CS_TOOL(list_module_items); CS_TOOL(get_module_item);
CS_TOOL(mark_module_item_complete); CS_TOOL(list_discussion_topics);
CS_TOOL(get_discussion_topic); CS_TOOL(post_to_discussion); CS_TOOL(list_announcements);
CS_TOOL(create_announcement); CS_TOOL(list_quizzes); CS_TOOL(get_quiz); CS_TOOL(create_quiz);
CS_TOOL(start_quiz_attempt); CS_TOOL(submit_quiz_answers); CS_TOOL(list_quiz_questions);
CS_TOOL(get_quiz_question); CS_TOOL(create_quiz_question); CS_TOOL(update_quiz_question);
CS_TOOL(delete_quiz_question); CS_TOOL(upload_file_from_path);
CS_TOOL(submit_assignment_with_file); CS_TOOL(list_rubrics); CS_TOOL(get_rubric);
CS_TOOL(list_conversations); CS_TOOL(get_conversation); CS_TOOL(create_conversation);
CS_TOOL(list_notifications); CS_TOOL(get_syllabus); CS_TOOL(delete_course);
CS_TOOL(delete_assignment); CS_TOOL(delete_announcement); CS_TOOL(delete_quiz);
CS_TOOL(delete_conversation); CS_TOOL(unenroll_user); CS_TOOL(get_account);
CS_TOOL(list_account_courses); CS_TOOL(list_account_users); CS_TOOL(create_user);
CS_TOOL(list_sub_accounts); CS_TOOL(get_account_reports); CS_TOOL(create_account_report);

#endif /* MB_SRV_CANVAS_INT_H */
