/*
 * tools_def.c - the 69 tools of canvas-mcp-server 2.2.3 (lockon-n/mcp-canvas-lms
 * @1097704): names, descriptions and input schemas as its tools/list lists them
 * (generated from that list; key order kept). Handlers are in tools.c.
 */
#include "servers/canvas/canvas_int.h"

const mb_mcp_tool mb_canvas__tools[] = {
    {.name = "canvas_health_check",
     .description = "Check the health and connectivity of the Canvas API",
     .input_schema = "{\"type\":\"object\",\"properties\":{},\"required\":[]}",
     .fn = t_health_check},
    {.name = "canvas_list_courses",
     .description = "List all courses for the current user",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"include_ended\":{\"type\":\"boolean\",\"descripti"
     "on\":\"Include ended courses\"}},\"required\":[]}",
     .fn = t_list_courses},
    {.name = "canvas_get_course",
     .description = "Get detailed information about a specific course",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"}},\"required\":[\"course_id\"]}",
     .fn = t_get_course},
    {.name = "canvas_create_course",
     .description = "Create a new course in Canvas",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"account_id\":{\"type\":\"number\",\"description\""
     ":\"ID of the account to create the course in\"},\"name\":{\"type\":\"string\",\"descript"
     "ion\":\"Name of the course\"},\"course_code\":{\"type\":\"string\",\"description\":\"Cou"
     "rse code (e.g., CS101)\"},\"start_at\":{\"type\":\"string\",\"description\":\"Course sta"
     "rt date (ISO format)\"},\"end_at\":{\"type\":\"string\",\"description\":\"Course end dat"
     "e (ISO format)\"},\"license\":{\"type\":\"string\",\"description\":\"Course license\"},\""
     "is_public\":{\"type\":\"boolean\",\"description\":\"Whether the course is public\"},\"is"
     "_public_to_auth_users\":{\"type\":\"boolean\",\"description\":\"Whether the course is pu"
     "blic to authenticated users\"},\"public_syllabus\":{\"type\":\"boolean\",\"description\""
     ":\"Whether the syllabus is public\"},\"public_syllabus_to_auth\":{\"type\":\"boolean\",\""
     "description\":\"Whether the syllabus is public to authenticated users\"},\"public_descri"
     "ption\":{\"type\":\"string\",\"description\":\"Public description of the course\"},\"all"
     "ow_student_wiki_edits\":{\"type\":\"boolean\",\"description\":\"Whether students can edi"
     "t the wiki\"},\"allow_wiki_comments\":{\"type\":\"boolean\",\"description\":\"Whether wi"
     "ki comments are allowed\"},\"allow_student_forum_attachments\":{\"type\":\"boolean\",\"d"
     "escription\":\"Whether students can add forum attachments\"},\"open_enrollment\":{\"type"
     "\":\"boolean\",\"description\":\"Whether the course has open enrollment\"},\"self_enroll"
     "ment\":{\"type\":\"boolean\",\"description\":\"Whether the course allows self enrollment"
     "\"},\"restrict_enrollments_to_course_dates\":{\"type\":\"boolean\",\"description\":\"Whe"
     "ther to restrict enrollments to course start/end dates\"},\"term_id\":{\"type\":\"number"
     "\",\"description\":\"ID of the enrollment term\"},\"sis_course_id\":{\"type\":\"string\""
     ",\"description\":\"SIS course ID\"},\"integration_id\":{\"type\":\"string\",\"descriptio"
     "n\":\"Integration ID for the course\"},\"hide_final_grades\":{\"type\":\"boolean\",\"des"
     "cription\":\"Whether to hide final grades\"},\"apply_assignment_group_weights\":{\"type\""
     ":\"boolean\",\"description\":\"Whether to apply assignment group weights\"},\"time_zone\""
     ":{\"type\":\"string\",\"description\":\"Course time zone\"},\"syllabus_body\":{\"type\":"
     "\"string\",\"description\":\"Course syllabus content\"}},\"required\":[\"account_id\",\""
     "name\"]}",
     .fn = t_create_course},
    {.name = "canvas_update_course",
     .description = "Update an existing course in Canvas. Use event='offer' to publish, event='claim' to unpu"
     "blish.",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course to update\"},\"name\":{\"type\":\"string\",\"description\":\"New name"
     " for the course\"},\"course_code\":{\"type\":\"string\",\"description\":\"New course cod"
     "e\"},\"start_at\":{\"type\":\"string\",\"description\":\"New start date (ISO format)\"},"
     "\"end_at\":{\"type\":\"string\",\"description\":\"New end date (ISO format)\"},\"event\""
     ":{\"type\":\"string\",\"enum\":[\"offer\",\"claim\",\"conclude\",\"delete\",\"undelete\""
     "],\"description\":\"Course event - 'offer' to publish, 'claim' to unpublish, 'conclude' "
     "to end, 'delete' to delete, 'undelete' to restore\"},\"is_public\":{\"type\":\"boolean\""
     ",\"description\":\"Whether the course is public\"},\"is_public_to_auth_users\":{\"type\""
     ":\"boolean\",\"description\":\"Whether the course is public to authenticated users\"},\""
     "public_syllabus\":{\"type\":\"boolean\",\"description\":\"Whether the syllabus is public"
     "\"},\"public_syllabus_to_auth\":{\"type\":\"boolean\",\"description\":\"Whether the syll"
     "abus is public to authenticated users\"},\"public_description\":{\"type\":\"string\",\"d"
     "escription\":\"Public description of the course\"},\"restrict_enrollments_to_course_date"
     "s\":{\"type\":\"boolean\",\"description\":\"Whether to restrict enrollments to course st"
     "art/end dates\"},\"time_zone\":{\"type\":\"string\",\"description\":\"Course time zone\""
     "},\"syllabus_body\":{\"type\":\"string\",\"description\":\"Updated syllabus content\"}},"
     "\"required\":[\"course_id\"]}",
     .fn = t_update_course},
    {.name = "canvas_list_assignments",
     .description = "List assignments for a course",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"},\"include_submissions\":{\"type\":\"boolean\",\"description\":\"In"
     "clude submission data\"}},\"required\":[\"course_id\"]}",
     .fn = t_list_assignments},
    {.name = "canvas_get_assignment",
     .description = "Get detailed information about a specific assignment",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"},\"assignment_id\":{\"type\":\"number\",\"description\":\"ID of the"
     " assignment\"},\"include_submission\":{\"type\":\"boolean\",\"description\":\"Include us"
     "er's submission data\"}},\"required\":[\"course_id\",\"assignment_id\"]}",
     .fn = t_get_assignment},
    {.name = "canvas_create_assignment",
     .description = "Create a new assignment in a Canvas course",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"},\"name\":{\"type\":\"string\",\"description\":\"Name of the assign"
     "ment\"},\"description\":{\"type\":\"string\",\"description\":\"Assignment description/in"
     "structions\"},\"due_at\":{\"type\":\"string\",\"description\":\"Due date (ISO format)\"}"
     ",\"points_possible\":{\"type\":\"number\",\"description\":\"Maximum points possible\"},\""
     "submission_types\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"description\":\""
     "Allowed submission types\"},\"allowed_extensions\":{\"type\":\"array\",\"items\":{\"type"
     "\":\"string\"},\"description\":\"Allowed file extensions for submissions\"},\"published\""
     ":{\"type\":\"boolean\",\"description\":\"Whether the assignment is published\"}},\"requi"
     "red\":[\"course_id\",\"name\"]}",
     .fn = t_create_assignment},
    {.name = "canvas_update_assignment",
     .description = "Update an existing assignment",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"},\"assignment_id\":{\"type\":\"number\",\"description\":\"ID of the"
     " assignment to update\"},\"name\":{\"type\":\"string\",\"description\":\"New name for th"
     "e assignment\"},\"description\":{\"type\":\"string\",\"description\":\"New assignment de"
     "scription\"},\"due_at\":{\"type\":\"string\",\"description\":\"New due date (ISO format)"
     "\"},\"points_possible\":{\"type\":\"number\",\"description\":\"New maximum points\"},\"p"
     "ublished\":{\"type\":\"boolean\",\"description\":\"Whether the assignment is published\""
     "}},\"required\":[\"course_id\",\"assignment_id\"]}",
     .fn = t_update_assignment},
    {.name = "canvas_list_assignment_groups",
     .description = "List assignment groups for a course",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"}},\"required\":[\"course_id\"]}",
     .fn = t_list_assignment_groups},
    {.name = "canvas_get_submission",
     .description = "Get submission details for an assignment",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"},\"assignment_id\":{\"type\":\"number\",\"description\":\"ID of the"
     " assignment\"},\"user_id\":{\"type\":\"number\",\"description\":\"ID of the user (option"
     "al, defaults to self)\"}},\"required\":[\"course_id\",\"assignment_id\"]}",
     .fn = t_get_submission},
    {.name = "canvas_submit_assignment",
     .description = "Submit work for an assignment",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"},\"assignment_id\":{\"type\":\"number\",\"description\":\"ID of the"
     " assignment\"},\"submission_type\":{\"type\":\"string\",\"enum\":[\"online_text_entry\","
     "\"online_url\",\"online_upload\"],\"description\":\"Type of submission\"},\"body\":{\"ty"
     "pe\":\"string\",\"description\":\"Text content for text submissions\"},\"url\":{\"type\""
     ":\"string\",\"description\":\"URL for URL submissions\"},\"file_ids\":{\"type\":\"array\""
     ",\"items\":{\"type\":\"number\"},\"description\":\"File IDs for file submissions\"}},\"r"
     "equired\":[\"course_id\",\"assignment_id\",\"submission_type\"]}",
     .fn = t_submit_assignment},
    {.name = "canvas_submit_grade",
     .description = "Submit a grade for a student's assignment (teacher only)",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"},\"assignment_id\":{\"type\":\"number\",\"description\":\"ID of the"
     " assignment\"},\"user_id\":{\"type\":\"number\",\"description\":\"ID of the student\"},\""
     "grade\":{\"oneOf\":[{\"type\":\"number\"},{\"type\":\"string\"}],\"description\":\"Grade"
     " to submit (number or letter grade)\"},\"comment\":{\"type\":\"string\",\"description\":"
     "\"Optional comment on the submission\"}},\"required\":[\"course_id\",\"assignment_id\",\""
     "user_id\",\"grade\"]}",
     .fn = t_submit_grade},
    {.name = "canvas_list_files",
     .description = "List files in a course or folder",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"},\"folder_id\":{\"type\":\"number\",\"description\":\"ID of the fol"
     "der (optional)\"}},\"required\":[\"course_id\"]}",
     .fn = t_list_files},
    {.name = "canvas_get_file",
     .description = "Get information about a specific file",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"file_id\":{\"type\":\"number\",\"description\":\""
     "ID of the file\"}},\"required\":[\"file_id\"]}",
     .fn = t_get_file},
    {.name = "canvas_list_folders",
     .description = "List folders in a course",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"}},\"required\":[\"course_id\"]}",
     .fn = t_list_folders},
    {.name = "canvas_list_pages",
     .description = "List pages in a course",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"}},\"required\":[\"course_id\"]}",
     .fn = t_list_pages},
    {.name = "canvas_get_page",
     .description = "Get content of a specific page",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"},\"page_url\":{\"type\":\"string\",\"description\":\"URL slug of th"
     "e page\"}},\"required\":[\"course_id\",\"page_url\"]}",
     .fn = t_get_page},
    {.name = "canvas_list_calendar_events",
     .description = "List calendar events",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"start_date\":{\"type\":\"string\",\"description\""
     ":\"Start date (ISO format)\"},\"end_date\":{\"type\":\"string\",\"description\":\"End da"
     "te (ISO format)\"}},\"required\":[]}",
     .fn = t_list_calendar_events},
    {.name = "canvas_get_upcoming_assignments",
     .description = "Get upcoming assignment due dates",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"limit\":{\"type\":\"number\",\"description\":\"Ma"
     "ximum number of assignments to return\"}},\"required\":[]}",
     .fn = t_get_upcoming_assignments},
    {.name = "canvas_get_dashboard",
     .description = "Get user's dashboard information",
     .input_schema = "{\"type\":\"object\",\"properties\":{},\"required\":[]}",
     .fn = t_get_dashboard},
    {.name = "canvas_get_dashboard_cards",
     .description = "Get dashboard course cards",
     .input_schema = "{\"type\":\"object\",\"properties\":{},\"required\":[]}",
     .fn = t_get_dashboard_cards},
    {.name = "canvas_get_course_grades",
     .description = "Get grades for a course",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"}},\"required\":[\"course_id\"]}",
     .fn = t_get_course_grades},
    {.name = "canvas_get_user_grades",
     .description = "Get all grades for the current user",
     .input_schema = "{\"type\":\"object\",\"properties\":{},\"required\":[]}",
     .fn = t_get_user_grades},
    {.name = "canvas_get_user_profile",
     .description = "Get current user's profile",
     .input_schema = "{\"type\":\"object\",\"properties\":{},\"required\":[]}",
     .fn = t_get_user_profile},
    {.name = "canvas_update_user_profile",
     .description = "Update current user's profile",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\",\"description\":\"Use"
     "r's name\"},\"short_name\":{\"type\":\"string\",\"description\":\"User's short name\"},\""
     "bio\":{\"type\":\"string\",\"description\":\"User's bio\"},\"title\":{\"type\":\"string\""
     ",\"description\":\"User's title\"},\"time_zone\":{\"type\":\"string\",\"description\":\""
     "User's time zone\"}},\"required\":[]}",
     .fn = t_update_user_profile},
    {.name = "canvas_enroll_user",
     .description = "Enroll a user in a course",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"},\"user_id\":{\"type\":\"number\",\"description\":\"ID of the user "
     "to enroll\"},\"role\":{\"type\":\"string\",\"description\":\"Role for the enrollment (St"
     "udentEnrollment, TeacherEnrollment, etc.)\"},\"enrollment_state\":{\"type\":\"string\",\""
     "description\":\"State of the enrollment (active, invited, etc.)\"}},\"required\":[\"cour"
     "se_id\",\"user_id\"]}",
     .fn = t_enroll_user},
    {.name = "canvas_list_modules",
     .description = "List all modules in a course",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"}},\"required\":[\"course_id\"]}",
     .fn = t_list_modules},
    {.name = "canvas_get_module",
     .description = "Get details of a specific module",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"},\"module_id\":{\"type\":\"number\",\"description\":\"ID of the mod"
     "ule\"}},\"required\":[\"course_id\",\"module_id\"]}",
     .fn = t_get_module},
    {.name = "canvas_list_module_items",
     .description = "List all items in a module",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"},\"module_id\":{\"type\":\"number\",\"description\":\"ID of the mod"
     "ule\"}},\"required\":[\"course_id\",\"module_id\"]}",
     .fn = t_list_module_items},
    {.name = "canvas_get_module_item",
     .description = "Get details of a specific module item",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"},\"module_id\":{\"type\":\"number\",\"description\":\"ID of the mod"
     "ule\"},\"item_id\":{\"type\":\"number\",\"description\":\"ID of the module item\"}},\"re"
     "quired\":[\"course_id\",\"module_id\",\"item_id\"]}",
     .fn = t_get_module_item},
    {.name = "canvas_mark_module_item_complete",
     .description = "Mark a module item as complete",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"},\"module_id\":{\"type\":\"number\",\"description\":\"ID of the mod"
     "ule\"},\"item_id\":{\"type\":\"number\",\"description\":\"ID of the module item\"}},\"re"
     "quired\":[\"course_id\",\"module_id\",\"item_id\"]}",
     .fn = t_mark_module_item_complete},
    {.name = "canvas_list_discussion_topics",
     .description = "List all discussion topics in a course",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"}},\"required\":[\"course_id\"]}",
     .fn = t_list_discussion_topics},
    {.name = "canvas_get_discussion_topic",
     .description = "Get details of a specific discussion topic",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"},\"topic_id\":{\"type\":\"number\",\"description\":\"ID of the disc"
     "ussion topic\"}},\"required\":[\"course_id\",\"topic_id\"]}",
     .fn = t_get_discussion_topic},
    {.name = "canvas_post_to_discussion",
     .description = "Post a message to a discussion topic",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"},\"topic_id\":{\"type\":\"number\",\"description\":\"ID of the disc"
     "ussion topic\"},\"message\":{\"type\":\"string\",\"description\":\"Message content\"}},\""
     "required\":[\"course_id\",\"topic_id\",\"message\"]}",
     .fn = t_post_to_discussion},
    {.name = "canvas_list_announcements",
     .description = "List all announcements in a course",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"}},\"required\":[\"course_id\"]}",
     .fn = t_list_announcements},
    {.name = "canvas_create_announcement",
     .description = "Create a new announcement in a course",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"},\"title\":{\"type\":\"string\",\"description\":\"Title of the anno"
     "uncement\"},\"message\":{\"type\":\"string\",\"description\":\"Content/message of the an"
     "nouncement\"},\"is_announcement\":{\"type\":\"boolean\",\"description\":\"Mark as announ"
     "cement (default: true)\"},\"published\":{\"type\":\"boolean\",\"description\":\"Whether "
     "the announcement is published\"},\"delayed_post_at\":{\"type\":\"string\",\"description\""
     ":\"Delayed posting time (ISO format)\"},\"attachment\":{\"type\":\"object\",\"descriptio"
     "n\":\"File attachment for the announcement\"}},\"required\":[\"course_id\",\"title\",\"m"
     "essage\"]}",
     .fn = t_create_announcement},
    {.name = "canvas_list_quizzes",
     .description = "List all quizzes in a course",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"}},\"required\":[\"course_id\"]}",
     .fn = t_list_quizzes},
    {.name = "canvas_get_quiz",
     .description = "Get details of a specific quiz",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"},\"quiz_id\":{\"type\":\"number\",\"description\":\"ID of the quiz\""
     "}},\"required\":[\"course_id\",\"quiz_id\"]}",
     .fn = t_get_quiz},
    {.name = "canvas_create_quiz",
     .description = "Create a new quiz in a course",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"},\"title\":{\"type\":\"string\",\"description\":\"Title of the quiz"
     "\"},\"quiz_type\":{\"type\":\"string\",\"description\":\"Type of the quiz (e.g., graded)"
     "\"},\"time_limit\":{\"type\":\"number\",\"description\":\"Time limit in minutes\"},\"pub"
     "lished\":{\"type\":\"boolean\",\"description\":\"Is the quiz published\"},\"description\""
     ":{\"type\":\"string\",\"description\":\"Description of the quiz\"},\"due_at\":{\"type\":"
     "\"string\",\"description\":\"Due date (ISO format)\"}},\"required\":[\"course_id\",\"tit"
     "le\"]}",
     .fn = t_create_quiz},
    {.name = "canvas_start_quiz_attempt",
     .description = "Start a new quiz attempt. Returns a quiz_submission object with 'id' field (the quiz_sub"
     "mission_id) and 'validation_token' needed for submitting answers. May return 500 error b"
     "ut still create submission (will auto-retry). Returns 409 if attempt already exists (wil"
     "l return existing).",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"},\"quiz_id\":{\"type\":\"number\",\"description\":\"ID of the quiz\""
     "}},\"required\":[\"course_id\",\"quiz_id\"]}",
     .fn = t_start_quiz_attempt},
    {.name = "canvas_submit_quiz_answers",
     .description = "Submit answers for a quiz attempt. Use the 'id' from canvas_start_quiz_attempt as submis"
     "sion_id, NOT the quiz_id or any other ID.",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"},\"quiz_id\":{\"type\":\"number\",\"description\":\"ID of the quiz\""
     "},\"submission_id\":{\"type\":\"number\",\"description\":\"The quiz_submission ID from c"
     "anvas_start_quiz_attempt response (the 'id' field, NOT 'submission_id' field)\"},\"valid"
     "ation_token\":{\"type\":\"string\",\"description\":\"REQUIRED: Validation token from can"
     "vas_start_quiz_attempt response. Without this, you'll get 403 'invalid token' error\"},\""
     "answers\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{\"question_"
     "id\":{\"type\":\"number\",\"description\":\"ID of the question\"},\"answer\":{\"descript"
     "ion\":\"Answer value - can be string, number, boolean, or array depending on question ty"
     "pe\"},\"answer_id\":{\"type\":\"number\",\"description\":\"ID of the answer choice (for "
     "multiple choice)\"},\"match\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"prope"
     "rties\":{\"answer_id\":{\"type\":\"number\"},\"match_id\":{\"type\":\"number\"}}},\"desc"
     "ription\":\"Matching pairs for matching questions\"}},\"required\":[\"question_id\"]},\""
     "description\":\"Array of answers to quiz questions\"}},\"required\":[\"course_id\",\"qui"
     "z_id\",\"submission_id\",\"answers\"]}",
     .fn = t_submit_quiz_answers},
    {.name = "canvas_list_quiz_questions",
     .description = "List all questions in a quiz. Students: First call canvas_start_quiz_attempt to get quiz"
     "_submission_id, then use that ID (NOT quiz_id) with use_submission_endpoint=true.",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"},\"quiz_id\":{\"type\":\"number\",\"description\":\"ID of the quiz\""
     "},\"quiz_submission_id\":{\"type\":\"number\",\"description\":\"For students: The 'id' f"
     "ield from canvas_start_quiz_attempt response (NOT the quiz_id or submission_id field)\"}"
     ",\"quiz_submission_attempt\":{\"type\":\"number\",\"description\":\"Optional: The attemp"
     "t number (required if quiz_submission_id is specified for courses API)\"},\"use_submissi"
     "on_endpoint\":{\"type\":\"boolean\",\"description\":\"Optional: Use /quiz_submissions/:i"
     "d/questions endpoint instead of courses API (recommended for students)\"}},\"required\":"
     "[\"course_id\",\"quiz_id\"]}",
     .fn = t_list_quiz_questions},
    {.name = "canvas_get_quiz_question",
     .description = "Get details of a specific quiz question",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"},\"quiz_id\":{\"type\":\"number\",\"description\":\"ID of the quiz\""
     "},\"question_id\":{\"type\":\"number\",\"description\":\"ID of the question\"}},\"requir"
     "ed\":[\"course_id\",\"quiz_id\",\"question_id\"]}",
     .fn = t_get_quiz_question},
    {.name = "canvas_create_quiz_question",
     .description = "Add a new question to a quiz",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"},\"quiz_id\":{\"type\":\"number\",\"description\":\"ID of the quiz\""
     "},\"question_name\":{\"type\":\"string\",\"description\":\"Name/title of the question\"}"
     ",\"question_text\":{\"type\":\"string\",\"description\":\"The question text (HTML suppor"
     "ted)\"},\"question_type\":{\"type\":\"string\",\"enum\":[\"multiple_choice_question\",\""
     "true_false_question\",\"short_answer_question\",\"fill_in_multiple_blanks_question\",\"m"
     "ultiple_answers_question\",\"multiple_dropdowns_question\",\"matching_question\",\"numer"
     "ical_question\",\"calculated_question\",\"essay_question\",\"file_upload_question\",\"te"
     "xt_only_question\"],\"description\":\"Type of question\"},\"points_possible\":{\"type\":"
     "\"number\",\"description\":\"Points for this question\"},\"position\":{\"type\":\"number"
     "\",\"description\":\"Position in the quiz\"},\"correct_comments\":{\"type\":\"string\",\""
     "description\":\"Comments shown for correct answers\"},\"incorrect_comments\":{\"type\":\""
     "string\",\"description\":\"Comments shown for incorrect answers\"},\"neutral_comments\":"
     "{\"type\":\"string\",\"description\":\"General comments\"},\"answers\":{\"type\":\"array"
     "\",\"items\":{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\",\"descri"
     "ption\":\"Answer text\"},\"weight\":{\"type\":\"number\",\"description\":\"Weight (100 f"
     "or correct, 0 for incorrect)\"},\"comments\":{\"type\":\"string\",\"description\":\"Comm"
     "ents for this answer\"}}},\"description\":\"Array of answer choices\"}},\"required\":[\""
     "course_id\",\"quiz_id\",\"question_name\",\"question_text\",\"question_type\",\"points_p"
     "ossible\"]}",
     .fn = t_create_quiz_question},
    {.name = "canvas_update_quiz_question",
     .description = "Update an existing quiz question",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"},\"quiz_id\":{\"type\":\"number\",\"description\":\"ID of the quiz\""
     "},\"question_id\":{\"type\":\"number\",\"description\":\"ID of the question to update\"}"
     ",\"question_name\":{\"type\":\"string\",\"description\":\"New name/title of the question"
     "\"},\"question_text\":{\"type\":\"string\",\"description\":\"New question text\"},\"poin"
     "ts_possible\":{\"type\":\"number\",\"description\":\"New points value\"},\"correct_comme"
     "nts\":{\"type\":\"string\",\"description\":\"New comments for correct answers\"},\"incor"
     "rect_comments\":{\"type\":\"string\",\"description\":\"New comments for incorrect answer"
     "s\"},\"answers\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{\"te"
     "xt\":{\"type\":\"string\"},\"weight\":{\"type\":\"number\"},\"comments\":{\"type\":\"str"
     "ing\"}}},\"description\":\"Updated answer choices\"}},\"required\":[\"course_id\",\"quiz"
     "_id\",\"question_id\"]}",
     .fn = t_update_quiz_question},
    {.name = "canvas_delete_quiz_question",
     .description = "Delete a question from a quiz",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"},\"quiz_id\":{\"type\":\"number\",\"description\":\"ID of the quiz\""
     "},\"question_id\":{\"type\":\"number\",\"description\":\"ID of the question to delete\"}"
     "},\"required\":[\"course_id\",\"quiz_id\",\"question_id\"]}",
     .fn = t_delete_quiz_question},
    {.name = "canvas_upload_file_from_path",
     .description = "Upload a file from local filesystem to Canvas",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"file_path\":{\"type\":\"string\",\"description\":"
     "\"Absolute path to the local file\"},\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course (optional)\"},\"folder_id\":{\"type\":\"number\",\"description\":\"ID"
     " of the folder to upload to (optional)\"}},\"required\":[\"file_path\"]}",
     .fn = t_upload_file_from_path},
    {.name = "canvas_submit_assignment_with_file",
     .description = "Submit an assignment with a local file upload",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"},\"assignment_id\":{\"type\":\"number\",\"description\":\"ID of the"
     " assignment\"},\"file_path\":{\"type\":\"string\",\"description\":\"Absolute path to the"
     " file to submit\"},\"comment\":{\"type\":\"string\",\"description\":\"Optional submissio"
     "n comment\"}},\"required\":[\"course_id\",\"assignment_id\",\"file_path\"]}",
     .fn = t_submit_assignment_with_file},
    {.name = "canvas_list_rubrics",
     .description = "List rubrics for a course",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"}},\"required\":[\"course_id\"]}",
     .fn = t_list_rubrics},
    {.name = "canvas_get_rubric",
     .description = "Get details of a specific rubric",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"},\"rubric_id\":{\"type\":\"number\",\"description\":\"ID of the rub"
     "ric\"}},\"required\":[\"course_id\",\"rubric_id\"]}",
     .fn = t_get_rubric},
    {.name = "canvas_list_conversations",
     .description = "List user's conversations",
     .input_schema = "{\"type\":\"object\",\"properties\":{},\"required\":[]}",
     .fn = t_list_conversations},
    {.name = "canvas_get_conversation",
     .description = "Get details of a specific conversation",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"conversation_id\":{\"type\":\"number\",\"descript"
     "ion\":\"ID of the conversation\"}},\"required\":[\"conversation_id\"]}",
     .fn = t_get_conversation},
    {.name = "canvas_create_conversation",
     .description = "Create a new conversation",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"recipients\":{\"type\":\"array\",\"items\":{\"typ"
     "e\":\"string\"},\"description\":\"Recipient user IDs or email addresses\"},\"body\":{\"t"
     "ype\":\"string\",\"description\":\"Message body\"},\"subject\":{\"type\":\"string\",\"de"
     "scription\":\"Message subject\"}},\"required\":[\"recipients\",\"body\"]}",
     .fn = t_create_conversation},
    {.name = "canvas_list_notifications",
     .description = "List user's notifications",
     .input_schema = "{\"type\":\"object\",\"properties\":{},\"required\":[]}",
     .fn = t_list_notifications},
    {.name = "canvas_get_syllabus",
     .description = "Get course syllabus",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"}},\"required\":[\"course_id\"]}",
     .fn = t_get_syllabus},
    {.name = "canvas_delete_course",
     .description = "Delete or conclude a course",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course to delete\"},\"event\":{\"type\":\"string\",\"enum\":[\"delete\",\"co"
     "nclude\"],\"description\":\"Action to take: 'delete' removes the course entirely, 'concl"
     "ude' makes it read-only\",\"default\":\"delete\"}},\"required\":[\"course_id\"]}",
     .fn = t_delete_course},
    {.name = "canvas_delete_assignment",
     .description = "Delete an assignment",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"},\"assignment_id\":{\"type\":\"number\",\"description\":\"ID of the"
     " assignment to delete\"}},\"required\":[\"course_id\",\"assignment_id\"]}",
     .fn = t_delete_assignment},
    {.name = "canvas_delete_announcement",
     .description = "Delete an announcement",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"},\"announcement_id\":{\"type\":\"number\",\"description\":\"ID of t"
     "he announcement to delete\"}},\"required\":[\"course_id\",\"announcement_id\"]}",
     .fn = t_delete_announcement},
    {.name = "canvas_delete_quiz",
     .description = "Delete a quiz",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"},\"quiz_id\":{\"type\":\"number\",\"description\":\"ID of the quiz "
     "to delete\"}},\"required\":[\"course_id\",\"quiz_id\"]}",
     .fn = t_delete_quiz},
    {.name = "canvas_delete_conversation",
     .description = "Delete a conversation",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"conversation_id\":{\"type\":\"number\",\"descript"
     "ion\":\"ID of the conversation to delete\"}},\"required\":[\"conversation_id\"]}",
     .fn = t_delete_conversation},
    {.name = "canvas_unenroll_user",
     .description = "Unenroll a user from a course",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"course_id\":{\"type\":\"number\",\"description\":"
     "\"ID of the course\"},\"enrollment_id\":{\"type\":\"number\",\"description\":\"ID of the"
     " enrollment to remove\"}},\"required\":[\"course_id\",\"enrollment_id\"]}",
     .fn = t_unenroll_user},
    {.name = "canvas_get_account",
     .description = "Get account details",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"account_id\":{\"type\":\"number\",\"description\""
     ":\"ID of the account\"}},\"required\":[\"account_id\"]}",
     .fn = t_get_account},
    {.name = "canvas_list_account_courses",
     .description = "List courses for an account",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"account_id\":{\"type\":\"number\",\"description\""
     ":\"ID of the account\"},\"with_enrollments\":{\"type\":\"boolean\",\"description\":\"Inc"
     "lude enrollment data\"},\"published\":{\"type\":\"boolean\",\"description\":\"Only inclu"
     "de published courses\"},\"completed\":{\"type\":\"boolean\",\"description\":\"Include co"
     "mpleted courses\"},\"search_term\":{\"type\":\"string\",\"description\":\"Search term to"
     " filter courses\"},\"sort\":{\"type\":\"string\",\"enum\":[\"course_name\",\"sis_course_"
     "id\",\"teacher\",\"account_name\"],\"description\":\"Sort order\"},\"order\":{\"type\":\""
     "string\",\"enum\":[\"asc\",\"desc\"],\"description\":\"Sort direction\"}},\"required\":["
     "\"account_id\"]}",
     .fn = t_list_account_courses},
    {.name = "canvas_list_account_users",
     .description = "List users for an account with pagination support and session management. Returns up to "
     "20 users per page. Use session_id to continue previous search or provide new parameters "
     "to start fresh.",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"session_id\":{\"type\":\"string\",\"description\""
     ":\"Session ID to continue previous search (when provided, other parameters except 'page'"
     " are ignored)\"},\"account_id\":{\"type\":\"number\",\"description\":\"ID of the account"
     " (required for new sessions)\"},\"search_term\":{\"type\":\"string\",\"description\":\"S"
     "earch term to filter users\"},\"sort\":{\"type\":\"string\",\"enum\":[\"username\",\"ema"
     "il\",\"sis_id\",\"last_login\"],\"description\":\"Sort order\"},\"order\":{\"type\":\"st"
     "ring\",\"enum\":[\"asc\",\"desc\"],\"description\":\"Sort direction\"},\"page\":{\"type\""
     ":\"number\",\"description\":\"Page number (starts from 1, default: 1)\",\"default\":1},\""
     "per_page\":{\"type\":\"number\",\"description\":\"Number of users per page (max: 20, def"
     "ault: 20)\",\"default\":20}},\"required\":[]}",
     .fn = t_list_account_users},
    {.name = "canvas_create_user",
     .description = "Create a new user in an account",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"account_id\":{\"type\":\"number\",\"description\""
     ":\"ID of the account\"},\"user\":{\"type\":\"object\",\"properties\":{\"name\":{\"type\""
     ":\"string\",\"description\":\"Full name of the user\"},\"short_name\":{\"type\":\"string"
     "\",\"description\":\"Short name of the user\"},\"sortable_name\":{\"type\":\"string\",\""
     "description\":\"Sortable name (Last, First)\"},\"time_zone\":{\"type\":\"string\",\"desc"
     "ription\":\"User's time zone\"}},\"required\":[\"name\"]},\"pseudonym\":{\"type\":\"obje"
     "ct\",\"properties\":{\"unique_id\":{\"type\":\"string\",\"description\":\"Unique login I"
     "D (email or username)\"},\"password\":{\"type\":\"string\",\"description\":\"User's pass"
     "word\"},\"sis_user_id\":{\"type\":\"string\",\"description\":\"SIS ID for the user\"},\""
     "send_confirmation\":{\"type\":\"boolean\",\"description\":\"Send confirmation email\"}},"
     "\"required\":[\"unique_id\"]}},\"required\":[\"account_id\",\"user\",\"pseudonym\"]}",
     .fn = t_create_user},
    {.name = "canvas_list_sub_accounts",
     .description = "List sub-accounts for an account",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"account_id\":{\"type\":\"number\",\"description\""
     ":\"ID of the parent account\"}},\"required\":[\"account_id\"]}",
     .fn = t_list_sub_accounts},
    {.name = "canvas_get_account_reports",
     .description = "List available reports for an account",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"account_id\":{\"type\":\"number\",\"description\""
     ":\"ID of the account\"}},\"required\":[\"account_id\"]}",
     .fn = t_get_account_reports},
    {.name = "canvas_create_account_report",
     .description = "Generate a report for an account",
     .input_schema = "{\"type\":\"object\",\"properties\":{\"account_id\":{\"type\":\"number\",\"description\""
     ":\"ID of the account\"},\"report\":{\"type\":\"string\",\"description\":\"Type of report"
     " to generate\"},\"parameters\":{\"type\":\"object\",\"description\":\"Report parameters\""
     "}},\"required\":[\"account_id\",\"report\"]}",
     .fn = t_create_account_report},
    {0},
};
