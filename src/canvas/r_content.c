/*
 * r_content.c - discussion topics and announcements (with entries), modules
 * and their items, pages, conversations, calendar events and the
 * caller's upcoming events, activity stream and dashboard cards, and account
 * reports.
 */
#include "canvas/canvas_int.h"

#include <stdlib.h>
#include <string.h>

#define NOW "strftime('%Y-%m-%dT%H:%M:%SZ','now')"
#define JB(x) "json(CASE WHEN " x " THEN 'true' ELSE 'false' END)"
#define HOST "cv_origin() || '"

/* ------------------------------------------------------------ topics */

#define TOPIC_OBJ                                                                             \
    "json_object('id',t.id,'title',t.title,'last_reply_at',(SELECT max(created_at) FROM"       \
    " discussion_entries e WHERE e.topic_id=t.id),'created_at',t.created_at,'delayed_post_at',"\
    "t.delayed_post_at,'posted_at',t.posted_at,'assignment_id',t.assignment_id,"              \
    "'root_topic_id',NULL,'position',t.id,'podcast_has_student_posts',json('false'),"          \
    "'discussion_type',t.discussion_type,'lock_at',NULL,'allow_rating',json('false'),"         \
    "'only_graders_can_rate',json('false'),'sort_by_rating',json('false'),"                    \
    "'is_section_specific',json('false'),'anonymous_state',NULL,'summary_enabled',"           \
    "json('false'),'user_name',u.name,'discussion_subentry_count',(SELECT count(*) FROM"       \
    " discussion_entries e WHERE e.topic_id=t.id),'permissions',json_object('attach',"        \
    "json('true'),'update',json('false'),'reply',json('true'),'delete',json('false')),"       \
    "'require_initial_post',NULL,'user_can_see_posts',json('true'),'podcast_url',NULL,"       \
    "'read_state','read','unread_count',0,'subscribed',json('false'),'attachments',"          \
    "json_array(),'published'," JB("t.published") ",'can_unpublish',json('true'),'locked',"   \
    JB("t.locked") ",'can_lock',json('true'),'comments_disabled',json('false'),'author',"     \
    "CASE WHEN u.id IS NULL THEN json_object() ELSE json_object('id',u.id,'anonymous_id',"    \
    "CAST(u.id AS TEXT),'display_name',u.short_name,'avatar_image_url'," HOST                   \
    "/images/messages/avatar-50.png','html_url'," HOST "/courses/' || t.course_id ||"          \
    " '/users/' || u.id,'pronouns',NULL) END,'html_url'," HOST "/courses/' || t.course_id ||"  \
    " CASE WHEN t.is_announcement THEN '/announcements/' ELSE '/discussion_topics/' END ||"   \
    " t.id,'url'," HOST "/courses/' || t.course_id || '/discussion_topics/' || t.id,"         \
    "'pinned'," JB("t.pinned") ",'group_category_id',NULL,'can_group',json('true'),"           \
    "'topic_children',json_array(),'group_topic_children',json_array(),'context_code',"       \
    "'course_' || t.course_id,'locked_for_user',json('false'),'message',t.message,"           \
    "'todo_date',NULL,'is_announcement'," JB("t.is_announcement") ")"

static json_t *topics(cv *c, const char *where, int64_t a, int64_t b)
{
    char *sql = mb_asprintf("SELECT " TOPIC_OBJ " FROM discussion_topics t LEFT JOIN users u ON"
                            " u.id=t.user_id WHERE %s ORDER BY t.pinned DESC, t.id DESC", where);
    json_t *r = cv_rows(c, "ii", sql, a, b);
    free(sql);
    return r;
}

static int student_like(cv *c, int64_t cid)
{
    if (c->admin) return 0;
    int r = cv_role(c, cid);
    return r == CV_STUDENT || r == CV_OBSERVER;
}

void r_topics_list(cv *c)
{
    if (c->nseg == 1) { /* GET /announcements?context_codes[]=course_N */
        json_t *out = json_array();
        for (size_t i = 0; i < c->req->n_params; i++) {
            const mb_canvas_param *p = &c->req->params[i];
            if (strcmp(p->key, "context_codes[]") || strncmp(p->val, "course_", 7)) continue;
            int64_t cid = strtoll(p->val + 7, NULL, 10);
            if (!cv_can_read(c, cid)) {
                json_decref(out);
                return;
            }
            json_t *t = topics(c, "t.course_id=? AND t.is_announcement=1 AND t.published=1 AND ?>=0",
                               cid, 0);
            json_array_extend(out, t);
            json_decref(t);
        }
        cv_list(c, out);
        return;
    }
    int64_t cid = cv_seg_id(c, 1);
    if (!cid) return cv_not_found(c);
    if (!cv_can_read(c, cid)) return;
    int ann = cv_flag(cv_param(c, "only_announcements"));
    int st = student_like(c, cid);
    json_t *t = topics(c, st ? "t.course_id=? AND t.is_announcement=? AND t.published=1 AND"
                               " (t.delayed_post_at IS NULL OR t.delayed_post_at <= " NOW ")"
                             : "t.course_id=? AND t.is_announcement=?",
                       cid, (int64_t)ann);
    if (cv_include(c, "assignment")) {
        size_t i;
        json_t *v;
        json_array_foreach(t, i, v) if (!json_is_null(json_object_get(v, "assignment_id")))
            json_object_set_new(v, "assignment", json_null());
    }
    cv_list(c, t);
}

void r_topic_get(cv *c)
{
    int64_t cid = cv_seg_id(c, 1), tid = cv_seg_id(c, 3);
    if (!cid || !tid) return cv_not_found(c);
    if (!cv_can_read(c, cid)) return;
    json_t *t = topics(c, "t.id=? AND t.course_id=?", tid, cid);
    json_t *one = json_array_get(t, 0);
    if (!one || (student_like(c, cid) && !json_is_true(json_object_get(one, "published")))) {
        json_decref(t);
        return cv_not_found(c);
    }
    json_incref(one);
    json_decref(t);
    cv_json(c, 200, one);
}

void r_topic_create(cv *c)
{
    int64_t cid = cv_seg_id(c, 1);
    if (!cid) return cv_not_found(c);
    if (!cv_can_read(c, cid)) return;
    int ann = cv_body_bool(c, NULL, "is_announcement", 0);
    int manager = c->admin || cv_role(c, cid) == CV_TEACHER || cv_role(c, cid) == CV_TA;
    if (ann && !manager) return cv_unauthorized(c);
    const char *delayed = cv_body_str(c, NULL, "delayed_post_at");
    int published = cv_body_bool(c, NULL, "published", ann ? 1 : manager ? 0 : 1);
    if (ann) published = 1;
    cv_exec(c, "itttiiit",
            "INSERT INTO discussion_topics(course_id, title, message, delayed_post_at, is_announcement,"
            " published, pinned, discussion_type, user_id, created_at, posted_at) VALUES(?,"
            " IFNULL(?,'No Title'), ?, ?, ?, ?, ?, IFNULL(?,'side_comment'), ?9, " NOW ", " NOW ")",
            cid, cv_body_str(c, NULL, "title"), cv_body_str(c, NULL, "message"),
            delayed && *delayed ? delayed : NULL, (int64_t)ann, (int64_t)published,
            (int64_t)cv_body_bool(c, NULL, "pinned", 0), cv_body_str(c, NULL, "discussion_type"));
    int64_t id = cv_last_id(c);
    cv_exec(c, "ii", "UPDATE discussion_topics SET user_id=? WHERE id=?", c->uid, id);
    json_t *t = topics(c, "t.id=? AND ?>=0", id, 0);
    json_t *one = json_incref(json_array_get(t, 0));
    json_decref(t);
    cv_json(c, 200, one);
}

void r_topic_delete(cv *c)
{
    int64_t cid = cv_seg_id(c, 1), tid = cv_seg_id(c, 3);
    if (!cid || !tid) return cv_not_found(c);
    if (!cv_can_manage(c, cid)) return;
    json_t *t = topics(c, "t.id=? AND t.course_id=?", tid, cid);
    json_t *one = json_incref(json_array_get(t, 0));
    json_decref(t);
    if (!one) return cv_not_found(c);
    cv_exec(c, "i", "DELETE FROM discussion_entries WHERE topic_id=?", tid);
    cv_exec(c, "i", "DELETE FROM discussion_topics WHERE id=?", tid);
    cv_json(c, 200, one);
}

#define ENTRY_OBJ                                                                             \
    "json_object('id',e.id,'user_id',e.user_id,'parent_id',e.parent_id,'created_at',"         \
    "e.created_at,'updated_at',e.created_at,'rating_count',NULL,'rating_sum',NULL,'user_name',"\
    "u.name,'message',e.message,'user',json_object('id',u.id,'anonymous_id',CAST(u.id AS TEXT),"\
    "'display_name',u.short_name,'avatar_image_url'," HOST "/images/messages/avatar-50.png',"  \
    "'html_url'," HOST "/users/' || u.id,'pronouns',NULL),'read_state','read',"               \
    "'forced_read_state',json('false'))"

void r_entry_create(cv *c)
{
    int64_t cid, tid;
    if (!cv_course_obj(c, 3, "discussion_topics", NULL, 0, &cid, &tid)) return;
    cv_exec(c, "iit", "INSERT INTO discussion_entries(topic_id, user_id, message, created_at)"
                      " VALUES(?,?,?," NOW ")", tid, c->uid, cv_body_str(c, NULL, "message"));
    int64_t id = cv_last_id(c);
    cv_json(c, 201, cv_row(c, "i", "SELECT " ENTRY_OBJ " FROM discussion_entries e LEFT JOIN users u"
                                   " ON u.id=e.user_id WHERE e.id=?", id));
}

void r_entries_list(cv *c)
{
    int64_t cid, tid;
    if (!cv_course_obj(c, 3, "discussion_topics", NULL, 0, &cid, &tid)) return;
    cv_list(c, cv_rows(c, "i", "SELECT " ENTRY_OBJ " FROM discussion_entries e LEFT JOIN users u ON"
                               " u.id=e.user_id WHERE e.topic_id=? ORDER BY e.id DESC", tid));
}

/* ------------------------------------------------------------ modules */

#define ITEM_OBJ                                                                              \
    "json_object('id',i.id,'title',i.title,'position',i.position,'indent',i.indent,"         \
    "'quiet_lock',json('false'),'type',i.type,'module_id',i.module_id,'html_url'," HOST         \
    "/courses/' || m.course_id || '/modules/items/' || i.id,'content_id',i.content_id,'url',"\
    HOST "/api/v1/courses/' || m.course_id || '/modules/' || m.id || '/items/' || i.id,"       \
    "'page_url',i.page_url,'external_url',i.external_url,'published'," JB("i.published") ","   \
    "'unpublishable',json('true'))"

static json_t *items_of(cv *c, int64_t mid)
{
    json_t *rows = cv_rows(c, "i", "SELECT " ITEM_OBJ " FROM module_items i JOIN modules m ON"
                                   " m.id=i.module_id WHERE i.module_id=? ORDER BY i.position, i.id",
                           mid);
    size_t k;
    json_t *it;
    json_array_foreach(rows, k, it) {
        if (json_is_null(json_object_get(it, "page_url"))) json_object_del(it, "page_url");
        if (json_is_null(json_object_get(it, "external_url"))) json_object_del(it, "external_url");
        if (cv_include(c, "content_details"))
            json_object_set_new(it, "content_details", json_pack("{s:b}", "locked_for_user", 0));
        int64_t id = json_integer_value(json_object_get(it, "id"));
        if (cv_int(c, 0, "ii", "SELECT count(*) FROM module_done WHERE item_id=? AND user_id=?", id,
                   c->uid))
            json_object_set_new(it, "completion_requirement",
                                json_pack("{s:s,s:b}", "type", "must_mark_done", "completed", 1));
    }
    return rows;
}

static json_t *module_json(cv *c, int64_t mid, int unused)
{
    (void)unused;
    json_t *m = cv_row(c, "i",
                       "SELECT json_object('id',m.id,'name',m.name,'position',m.position,'unlock_at',"
                       "m.unlock_at,'require_sequential_progress'," JB("m.require_sequential_progress")
                       ",'requirement_type','all','publish_final_grade',json('false'),"
                       "'prerequisite_module_ids',json_array(),'published'," JB("m.published") ","
                       "'items_count',(SELECT count(*) FROM module_items i WHERE i.module_id=m.id),"
                       "'items_url'," HOST "/api/v1/courses/' || m.course_id || '/modules/' || m.id"
                       " || '/items') FROM modules m WHERE m.id=?", mid);
    if (m && cv_include(c, "items")) json_object_set_new(m, "items", items_of(c, mid));
    return m;
}

void r_modules_list(cv *c)
{
    int64_t cid = cv_seg_id(c, 1);
    if (!cid) return cv_not_found(c);
    if (!cv_can_read(c, cid)) return;
    json_t *ids = cv_rows(c, "ii", "SELECT id FROM modules WHERE course_id=? AND (?=0 OR published=1)"
                                   " ORDER BY position, id", cid, (int64_t)student_like(c, cid));
    cv_list(c, cv_map(c, ids, module_json, 0));
}

static int module_in(cv *c, int64_t mid, int64_t cid)
{
    return cv_int(c, 0, "ii", "SELECT count(*) FROM modules WHERE id=? AND course_id=?", mid, cid) > 0;
}

void r_module_get(cv *c)
{
    int64_t cid, mid;
    if (!cv_course_obj(c, 3, "modules", NULL, 0, &cid, &mid)) return;
    cv_json(c, 200, module_json(c, mid, 0));
}

void r_module_create(cv *c)
{
    int64_t cid;
    const char *name = cv_create_in(c, "module", "name", &cid);
    if (!name) return;
    cv_exec(c, "itii", "INSERT INTO modules(course_id, name, position, published,"
                       " require_sequential_progress) VALUES(?1,?2,IFNULL(NULLIF(?3,0),(SELECT"
                       " IFNULL(max(position),0)+1 FROM modules WHERE course_id=?1)),1,?4)",
            cid, name, (int64_t)cv_body_num(c, "module", "position", 0),
            (int64_t)cv_body_bool(c, "module", "require_sequential_progress", 0));
    cv_json(c, 200, module_json(c, cv_last_id(c), 0));
}

void r_module_item_create(cv *c)
{
    int64_t cid, mid;
    if (!cv_course_obj(c, 3, "modules", NULL, 1, &cid, &mid)) return;
    const char *type = cv_body_str(c, "module_item", "type");
    static const char *const types[] = {"File", "Page", "Discussion", "Assignment", "Quiz",
                                        "SubHeader", "ExternalUrl", "ExternalTool"};
    int ok = 0;
    for (size_t i = 0; type && i < sizeof types / sizeof *types; i++) ok |= !strcmp(type, types[i]);
    if (!ok) {
        cv_json(c, 400, json_pack("{s:{s:[{s:s,s:s,s:s}]}}", "errors", "type", "attribute", "type",
                                  "type", "invalid", "message", "invalid"));
        return;
    }
    cv_exec(c, "ittiitt",
            "INSERT INTO module_items(module_id, title, type, content_id, indent, page_url,"
            " external_url, position) VALUES(?1,IFNULL(?2,?3),?3,NULLIF(?4,0),?5,?6,?7,(SELECT"
            " IFNULL(max(position),0)+1 FROM module_items WHERE module_id=?1))",
            mid, cv_body_str(c, "module_item", "title"), type,
            (int64_t)cv_body_num(c, "module_item", "content_id", 0),
            (int64_t)cv_body_num(c, "module_item", "indent", 0),
            cv_body_str(c, "module_item", "page_url"), cv_body_str(c, "module_item", "external_url"));
    int64_t iid = cv_last_id(c);
    json_t *items = items_of(c, mid);
    json_t *found = NULL;
    size_t i;
    json_t *v;
    json_array_foreach(items, i, v) if (json_integer_value(json_object_get(v, "id")) == iid) found = v;
    cv_json(c, 200, json_incref(found));
    json_decref(items);
}

void r_module_delete(cv *c)
{
    int64_t cid, mid;
    if (!cv_course_obj(c, 3, "modules", NULL, 1, &cid, &mid)) return;
    json_t *m = module_json(c, mid, 0);
    cv_exec(c, "i", "DELETE FROM module_done WHERE item_id IN (SELECT id FROM module_items WHERE"
                    " module_id=?)", mid);
    cv_exec(c, "i", "DELETE FROM module_items WHERE module_id=?", mid);
    cv_exec(c, "i", "DELETE FROM modules WHERE id=?", mid);
    cv_json(c, 200, m);
}

void r_module_items(cv *c)
{
    int64_t cid, mid;
    if (!cv_course_obj(c, 3, "modules", NULL, 0, &cid, &mid)) return;
    cv_list(c, items_of(c, mid));
}

void r_module_item(cv *c)
{
    int64_t cid = cv_seg_id(c, 1), mid = cv_seg_id(c, 3), iid = cv_seg_id(c, 5);
    if (!cid || !mid || !iid) return cv_not_found(c);
    if (!cv_can_read(c, cid)) return;
    if (!module_in(c, mid, cid)) return cv_not_found(c);
    json_t *items = items_of(c, mid);
    size_t i;
    json_t *v;
    json_array_foreach(items, i, v) {
        if (json_integer_value(json_object_get(v, "id")) == iid) {
            json_incref(v);
            json_decref(items);
            cv_json(c, 200, v);
            return;
        }
    }
    json_decref(items);
    cv_not_found(c);
}

void r_module_item_done(cv *c)
{
    int64_t cid = cv_seg_id(c, 1), mid = cv_seg_id(c, 3), iid = cv_seg_id(c, 5);
    if (!cid || !mid || !iid) return cv_not_found(c);
    if (!cv_can_read(c, cid)) return;
    if (!cv_int(c, 0, "ii", "SELECT count(*) FROM module_items WHERE id=? AND module_id=?", iid, mid) ||
        !module_in(c, mid, cid))
        return cv_not_found(c);
    cv_exec(c, "ii", "INSERT OR IGNORE INTO module_done VALUES(?,?)", iid, c->uid);
    cv_json(c, 204, json_null());
}

/* ------------------------------------------------------------ pages */

#define PAGE_OBJ                                                                              \
    "json_object('page_id',p.id,'url',p.url,'title',p.title,'created_at',p.created_at,"       \
    "'updated_at',p.updated_at,'hide_from_students',json('false'),'editing_roles','teachers',"\
    "'last_edited_by',NULL,'published'," JB("p.published") ",'front_page'," JB("p.front_page")  \
    ",'locked_for_user',json('false'),'html_url'," HOST "/courses/' || p.course_id ||"        \
    " '/pages/' || p.url,'todo_date',NULL,'publish_at',NULL"

void r_pages_list(cv *c)
{
    int64_t cid = cv_seg_id(c, 1);
    if (!cid) return cv_not_found(c);
    if (!cv_can_read(c, cid)) return;
    cv_list(c, cv_rows(c, "ii", "SELECT " PAGE_OBJ ") FROM pages p WHERE p.course_id=? AND (?=0 OR"
                                " p.published=1) ORDER BY p.title COLLATE NOCASE, p.id",
                       cid, (int64_t)student_like(c, cid)));
}

void r_page_get(cv *c)
{
    int64_t cid = cv_seg_id(c, 1);
    if (!cid) return cv_not_found(c);
    if (!cv_can_read(c, cid)) return;
    json_t *p = cv_row(c, "iti", "SELECT " PAGE_OBJ ",'body',p.body) FROM pages p WHERE p.course_id=?"
                                 " AND (p.url=?2 OR p.id=?3) AND (?4=0 OR p.published=1)",
                       cid, c->seg[3], cv_seg_id(c, 3), (int64_t)student_like(c, cid));
    if (!p) return cv_not_found(c);
    cv_json(c, 200, p);
}

void r_page_create(cv *c)
{
    int64_t cid;
    const char *title = cv_create_in(c, "wiki_page", "title", &cid);
    if (!title) return;
    /* The url: the title in lower case, runs of other characters as '-'. */
    mb_buf u = {0};
    for (const char *p = title; *p; p++) {
        char ch = *p;
        if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9')) mb_buf_putc(&u, ch);
        else if (ch >= 'A' && ch <= 'Z') mb_buf_putc(&u, (char)(ch + 32));
        else if (u.len && u.data[u.len - 1] != '-') mb_buf_putc(&u, '-');
    }
    while (u.len && u.data[u.len - 1] == '-') u.len--;
    mb_buf_putc(&u, 0);
    char *url = mb_buf_steal(&u);
    if (!*url) {
        free(url);
        url = mb_strdup("page");
    }
    char *base = url;
    url = mb_strdup(base);
    for (int n = 2; n < 10000 && cv_int(c, 0, "it", "SELECT count(*) FROM pages WHERE course_id=?"
                                                    " AND url=?", cid, url); n++) {
        free(url);
        url = mb_asprintf("%s-%d", base, n);
    }
    free(base);
    cv_exec(c, "itttii", "INSERT INTO pages(course_id, url, title, body, published, front_page,"
                        " created_at, updated_at) VALUES(?,?,?,?,?,?," NOW "," NOW ")",
            cid, url, title, cv_body_str(c, "wiki_page", "body"),
            (int64_t)cv_body_bool(c, "wiki_page", "published", 0),
            (int64_t)cv_body_bool(c, "wiki_page", "front_page", 0));
    cv_json(c, 200, cv_row(c, "i", "SELECT " PAGE_OBJ ",'body',p.body) FROM pages p WHERE p.id=?",
                           cv_last_id(c)));
    free(url);
}

/* ------------------------------------------------------------ conversations */

static json_t *conversation_json(cv *c, int64_t id, int messages)
{
    json_t *o = cv_row(c, "ii",
                       "SELECT json_object('id',v.id,'subject',IFNULL(v.subject,''),'workflow_state',"
                       "p.workflow_state,'last_message',(SELECT substr(body,1,100) FROM"
                       " conversation_messages m WHERE m.conversation_id=v.id ORDER BY m.id DESC"
                       " LIMIT 1),'last_message_at',(SELECT max(created_at) FROM conversation_messages"
                       " m WHERE m.conversation_id=v.id),'last_authored_message',NULL,"
                       "'last_authored_message_at',NULL,'message_count',(SELECT count(*) FROM"
                       " conversation_messages m WHERE m.conversation_id=v.id),'subscribed',"
                       "json('true'),'private',json(CASE WHEN (SELECT count(*) FROM"
                       " conversation_participants x WHERE x.conversation_id=v.id)=2 THEN 'true'"
                       " ELSE 'false' END),'starred',json('false'),'properties',json_array(),"
                       "'audience',(SELECT json_group_array(user_id) FROM conversation_participants x"
                       " WHERE x.conversation_id=v.id AND x.user_id!=?2),'audience_contexts',"
                       "json_object('courses',json_object(),'groups',json_object()),'avatar_url',"
                       HOST "/images/messages/avatar-group-50.png','participants',(SELECT"
                       " json_group_array(json_object('id',u.id,'name',u.name,'full_name',u.name))"
                       " FROM conversation_participants x JOIN users u ON u.id=x.user_id WHERE"
                       " x.conversation_id=v.id),'visible',json('true'),'context_code',"
                       "v.context_code,'context_name',NULL) FROM conversations v JOIN"
                       " conversation_participants p ON p.conversation_id=v.id AND p.user_id=?2"
                       " WHERE v.id=?1 AND p.workflow_state!='deleted'",
                       id, c->uid);
    if (o && messages)
        json_object_set_new(o, "messages",
                            cv_rows(c, "i",
                                    "SELECT json_object('id',id,'created_at',created_at,'body',body,"
                                    "'author_id',author_id,'generated',json('false'),'media_comment',"
                                    "NULL,'forwarded_messages',json_array(),'attachments',"
                                    "json_array(),'participating_user_ids',(SELECT"
                                    " json_group_array(user_id) FROM conversation_participants x"
                                    " WHERE x.conversation_id=?1)) FROM conversation_messages WHERE"
                                    " conversation_id=?1 ORDER BY id DESC", id));
    return o;
}

void r_conversations_list(cv *c)
{
    const char *scope = cv_param(c, "scope");
    json_t *ids = cv_rows(c, "it",
                          "SELECT v.id FROM conversations v JOIN conversation_participants p ON"
                          " p.conversation_id=v.id WHERE p.user_id=? AND p.workflow_state!='deleted'"
                          " AND (?2 IS NULL OR ?2='inbox' AND p.workflow_state!='archived' OR"
                          " ?2='unread' AND p.workflow_state='unread' OR ?2='archived' AND"
                          " p.workflow_state='archived' OR ?2='sent' AND EXISTS(SELECT 1 FROM"
                          " conversation_messages m WHERE m.conversation_id=v.id AND m.author_id=p.user_id))"
                          " ORDER BY (SELECT max(id) FROM conversation_messages m WHERE"
                          " m.conversation_id=v.id) DESC",
                          c->uid, scope);
    json_t *out = json_array();
    size_t i;
    json_t *v;
    json_array_foreach(ids, i, v) {
        json_t *o = conversation_json(c, json_integer_value(v), 0);
        if (o) json_array_append_new(out, o);
    }
    json_decref(ids);
    cv_list(c, out);
}

void r_conversation_get(cv *c)
{
    int64_t id = cv_seg_id(c, 1);
    json_t *o = id ? conversation_json(c, id, 1) : NULL;
    if (!o) return cv_not_found(c);
    cv_exec(c, "ii", "UPDATE conversation_participants SET workflow_state='read' WHERE"
                     " conversation_id=? AND user_id=? AND workflow_state='unread'", id, c->uid);
    json_object_set_new(o, "workflow_state", json_string("read"));
    cv_json(c, 200, o);
}

/* Recipients: user ids ("12" or 12) and course_N (its active members). */
static json_t *recipient_ids(cv *c, json_t *list)
{
    json_t *ids = json_array();
    size_t i;
    json_t *r;
    json_array_foreach(list, i, r) {
        if (json_is_integer(r)) {
            json_array_append(ids, r);
        } else if (json_is_string(r)) {
            const char *s = json_string_value(r);
            if (!strncmp(s, "course_", 7)) {
                int64_t cid = strtoll(s + 7, NULL, 10);
                json_t *m = cv_rows(c, "i", "SELECT DISTINCT user_id FROM enrollments WHERE"
                                            " course_id=? AND workflow_state='active'", cid);
                json_array_extend(ids, m);
                json_decref(m);
            } else {
                char *end;
                long long id = strtoll(s, &end, 10);
                if (*s && !*end) json_array_append_new(ids, json_integer(id));
            }
        }
    }
    return ids;
}

void r_conversation_create(cv *c)
{
    json_t *rec = cv_body(c, NULL, "recipients");
    if (json_is_string(rec)) rec = json_pack("[O]", rec);
    else json_incref(rec);
    json_t *ids = recipient_ids(c, rec);
    json_decref(rec);
    const char *body = cv_body_str(c, NULL, "body");
    if (!json_array_size(ids) || !body || !*body) {
        json_decref(ids);
        cv_json(c, 400, json_pack("[{s:s,s:s}]", "attribute", json_array_size(ids) ? "body"
                                                                                   : "recipients",
                                  "message", json_array_size(ids) ? "blank" : "invalid"));
        return;
    }
    size_t i;
    json_t *v;
    json_array_foreach(ids, i, v) {
        if (!cv_int(c, 0, "i", "SELECT count(*) FROM users WHERE id=?", json_integer_value(v))) {
            json_decref(ids);
            cv_json(c, 400, json_pack("[{s:s,s:s}]", "attribute", "recipients", "message", "invalid"));
            return;
        }
    }
    int group = cv_body_bool(c, NULL, "group_conversation", 0);
    json_t *made = json_array();
    size_t n = json_array_size(ids);
    for (size_t k = 0; k < (group ? 1 : n); k++) {
        cv_exec(c, "tt", "INSERT INTO conversations(subject, created_at, context_code) VALUES(?," NOW
                         ",?)", cv_body_str(c, NULL, "subject"), cv_body_str(c, NULL, "context_code"));
        int64_t cid = cv_last_id(c);
        cv_exec(c, "ii", "INSERT OR IGNORE INTO conversation_participants VALUES(?,?,'read')", cid,
                c->uid);
        for (size_t j = 0; j < n; j++) {
            if (!group && j != k) continue;
            cv_exec(c, "ii", "INSERT OR IGNORE INTO conversation_participants VALUES(?,?,'unread')",
                    cid, json_integer_value(json_array_get(ids, j)));
        }
        cv_exec(c, "iit", "INSERT INTO conversation_messages(conversation_id, author_id, body,"
                          " created_at) VALUES(?,?,?," NOW ")", cid, c->uid, body);
        json_t *o = conversation_json(c, cid, 1);
        if (o) json_array_append_new(made, o);
    }
    json_decref(ids);
    cv_json(c, 201, made);
}

void r_conversation_add_message(cv *c)
{
    int64_t id = cv_seg_id(c, 1);
    json_t *o = id ? conversation_json(c, id, 0) : NULL;
    if (!o) return cv_not_found(c);
    json_decref(o);
    const char *body = cv_body_str(c, NULL, "body");
    if (!body || !*body) {
        cv_json(c, 400, json_pack("[{s:s,s:s}]", "attribute", "body", "message", "blank"));
        return;
    }
    cv_exec(c, "iit", "INSERT INTO conversation_messages(conversation_id, author_id, body,"
                      " created_at) VALUES(?,?,?," NOW ")", id, c->uid, body);
    int64_t mid = cv_last_id(c);
    cv_exec(c, "ii", "UPDATE conversation_participants SET workflow_state='unread' WHERE"
                     " conversation_id=? AND user_id!=? AND workflow_state!='deleted'", id, c->uid);
    o = conversation_json(c, id, 1);
    /* Canvas answers the conversation with the new message only. */
    json_t *msgs = json_object_get(o, "messages");
    json_t *keep = json_array();
    size_t i;
    json_t *m;
    json_array_foreach(msgs, i, m) if (json_integer_value(json_object_get(m, "id")) == mid)
        json_array_append(keep, m);
    json_object_set_new(o, "messages", keep);
    cv_json(c, 200, o);
}

void r_conversation_delete(cv *c)
{
    int64_t id = cv_seg_id(c, 1);
    json_t *o = id ? conversation_json(c, id, 0) : NULL;
    if (!o) return cv_not_found(c);
    cv_exec(c, "ii", "UPDATE conversation_participants SET workflow_state='deleted' WHERE"
                     " conversation_id=? AND user_id=?", id, c->uid);
    cv_json(c, 200, o);
}

/* ------------------------------------------------------------ calendar */

#define EVENT_OBJ                                                                             \
    "json_object('id',e.id,'title',e.title,'start_at',e.start_at,'end_at',e.end_at,"          \
    "'workflow_state',e.workflow_state,'created_at',e.created_at,'updated_at',e.created_at,"  \
    "'all_day',json('false'),'all_day_date',NULL,'comments',NULL,'location_address',NULL,"    \
    "'location_name',e.location_name,'type','event','description',e.description,"            \
    "'context_code',e.context_code,'effective_context_code',e.context_code,'all_context_codes',"\
    "e.context_code,'hidden',json('false'),'parent_event_id',NULL,'child_events_count',0,"   \
    "'child_events',json_array(),'url'," HOST "/api/v1/calendar_events/' || e.id,'html_url',"  \
    HOST "/calendar?event_id=' || e.id,'important_dates',json('false'))"

/* The assignment events ("assignment_N") of the caller's courses. */
static json_t *assignment_events(cv *c, const char *extra, const char *a, const char *b)
{
    char *sql = mb_asprintf(
        "SELECT json_object('id','assignment_' || a.id,'title',a.name,'start_at',a.due_at,"
        "'end_at',a.due_at,'type','assignment','all_day',json('false'),'context_code','course_' ||"
        " a.course_id,'html_url'," HOST "/courses/' || a.course_id || '/assignments/' || a.id,"
        "'assignment',json_object('id',a.id,'name',a.name,'description',a.description,'due_at',"
        "a.due_at,'points_possible',a.points_possible,'course_id',a.course_id,'submission_types',"
        "json(a.submission_types),'html_url'," HOST "/courses/' || a.course_id || '/assignments/' ||"
        " a.id,'published'," JB("a.published") "),'workflow_state','published','created_at',"
        "a.created_at,'updated_at',a.updated_at) FROM assignments a WHERE a.published=1 AND"
        " a.workflow_state!='deleted' AND a.due_at IS NOT NULL AND a.course_id IN (SELECT"
        " course_id FROM enrollments WHERE user_id=?1 AND workflow_state='active') %s ORDER BY"
        " a.due_at, a.id", extra);
    json_t *r = cv_rows(c, "itt", sql, c->uid, a, b);
    free(sql);
    return r;
}

void r_calendar_events(cv *c)
{
    const char *type = cv_param(c, "type");
    const char *start = cv_param(c, "start_date");
    const char *end = cv_param(c, "end_date");
    if (type && !strcmp(type, "assignment")) {
        cv_list(c, assignment_events(c, "AND (?2 IS NULL OR a.due_at >= ?2) AND (?3 IS NULL OR"
                                        " a.due_at <= ?3 || 'T23:59:59Z')", start, end));
        return;
    }
    cv_list(c, cv_rows(c, "itt",
                       "SELECT " EVENT_OBJ " FROM calendar_events e WHERE e.workflow_state!='deleted'"
                       " AND (e.context_code='user_' || ?1 OR e.context_code IN (SELECT 'course_' ||"
                       " course_id FROM enrollments WHERE user_id=?1 AND workflow_state!='deleted'))"
                       " AND (?2 IS NULL OR e.start_at >= ?2) AND (?3 IS NULL OR e.start_at <= ?3 ||"
                       " 'T23:59:59Z') ORDER BY e.start_at, e.id",
                       c->uid, start, end));
}

void r_upcoming_events(cv *c)
{
    json_t *ev = cv_rows(c, "i",
                         "SELECT " EVENT_OBJ " FROM calendar_events e WHERE e.workflow_state!='deleted'"
                         " AND e.start_at >= " NOW " AND (e.context_code='user_' || ?1 OR"
                         " e.context_code IN (SELECT 'course_' || course_id FROM enrollments WHERE"
                         " user_id=?1 AND workflow_state='active')) ORDER BY e.start_at", c->uid);
    json_t *as = assignment_events(c, "AND a.due_at >= " NOW " AND ?2 IS NULL AND ?3 IS NULL", NULL,
                                   NULL);
    json_array_extend(ev, as);
    json_decref(as);
    const char *limit = cv_param(c, "limit");
    long lim = limit ? strtol(limit, NULL, 10) : 10;
    if (lim < 1) lim = 10;
    while ((long)json_array_size(ev) > lim) json_array_remove(ev, json_array_size(ev) - 1);
    cv_json(c, 200, ev);
}

void r_activity_stream(cv *c)
{
    json_t *out = cv_rows(c, "i",
                          "SELECT json_object('id',t.id,'title',t.title,'message',t.message,'type',"
                          "'Announcement','read_state',json('true'),'created_at',t.created_at,"
                          "'updated_at',t.created_at,'context_type','Course','course_id',t.course_id,"
                          "'announcement_id',t.id,'html_url'," HOST "/courses/' || t.course_id ||"
                          " '/announcements/' || t.id) FROM discussion_topics t WHERE"
                          " t.is_announcement=1 AND t.published=1 AND t.course_id IN (SELECT"
                          " course_id FROM enrollments WHERE user_id=? AND workflow_state='active')"
                          " ORDER BY t.id DESC", c->uid);
    json_t *conv = cv_rows(c, "i",
                           "SELECT json_object('id',v.id,'title',v.subject,'message',(SELECT body FROM"
                           " conversation_messages m WHERE m.conversation_id=v.id ORDER BY m.id DESC"
                           " LIMIT 1),'type','Conversation','read_state',json(CASE WHEN"
                           " p.workflow_state='unread' THEN 'false' ELSE 'true' END),'created_at',"
                           "v.created_at,'updated_at',v.created_at,'conversation_id',v.id,"
                           "'private',json('false'),'participant_count',(SELECT count(*) FROM"
                           " conversation_participants x WHERE x.conversation_id=v.id),'html_url',"
                           HOST "/conversations/' || v.id) FROM conversations v JOIN"
                           " conversation_participants p ON p.conversation_id=v.id WHERE p.user_id=?"
                           " AND p.workflow_state!='deleted' ORDER BY v.id DESC", c->uid);
    json_array_extend(out, conv);
    json_decref(conv);
    cv_list(c, out);
}

void r_dashboard_cards(cv *c)
{
    cv_json(c, 200,
            cv_rows(c, "i",
                    "SELECT json_object('longName',c.name || ' - ' || c.course_code,'shortName',"
                    "c.name,'originalName',c.name,'courseCode',c.course_code,'assetString',"
                    "'course_' || c.id,'href','/courses/' || c.id,'term',NULL,'subtitle',"
                    "'enrolled as: ' || replace(e.type,'Enrollment',''),'enrollmentState',"
                    "e.workflow_state,'enrollmentType',e.type,'observee',NULL,'id',c.id,"
                    "'isFavorited',json('true'),'isK5Subject',json('false'),'isHomeroom',"
                    "json('false'),'useClassicFont',json('false'),'canManage',json(CASE WHEN"
                    " e.type IN ('TeacherEnrollment','TaEnrollment') THEN 'true' ELSE 'false' END),"
                    "'canReadAnnouncements',json('true'),'image',NULL,'color',NULL,'position',NULL,"
                    "'published'," JB("c.workflow_state='available'") ",'canChangeCoursePublishState',"
                    "json(CASE WHEN e.type='TeacherEnrollment' THEN 'true' ELSE 'false' END),"
                    "'defaultView',c.default_view,'pagesUrl'," HOST "/courses/' || c.id || '/pages',"
                    "'frontPageTitle',NULL) FROM courses c JOIN enrollments e ON e.course_id=c.id"
                    " WHERE e.user_id=? AND e.workflow_state='active' AND c.workflow_state IN"
                    " ('available','unpublished') GROUP BY c.id ORDER BY c.id", c->uid));
}

/* ------------------------------------------------------------ reports */

static const char *const REPORTS[][2] = {
    {"grade_export_csv", "Grade Export"},
    {"provisioning_csv", "Provisioning"},
    {"student_assignment_outcome_map_csv", "Student Competency"},
    {"last_user_access_csv", "Last User Access"},
    {"unpublished_courses_csv", "Unpublished Courses"},
};

#define REPORT_OBJ                                                                            \
    "json_object('id',id,'report',report,'file_url',NULL,'attachment',NULL,'status',status,"  \
    "'created_at',created_at,'started_at',created_at,'ended_at',created_at,'parameters',"     \
    "json(parameters),'progress',100,'current_line',NULL)"

void r_reports_list(cv *c)
{
    if (!cv_int(c, 0, "i", "SELECT count(*) FROM accounts WHERE id=?", cv_seg_id(c, 1)))
        return cv_not_found(c);
    if (!c->admin) return cv_unauthorized(c);
    json_t *out = json_array();
    for (size_t i = 0; i < sizeof REPORTS / sizeof *REPORTS; i++) {
        json_t *last = cv_row(c, "it", "SELECT " REPORT_OBJ " FROM account_reports WHERE account_id=?"
                                       " AND report=? ORDER BY id DESC LIMIT 1",
                              cv_seg_id(c, 1), REPORTS[i][0]);
        json_array_append_new(out, json_pack("{s:s,s:s,s:o,s:o}", "report", REPORTS[i][0], "title",
                                             REPORTS[i][1], "parameters", json_object(),
                                             "last_run", last ? last : json_null()));
    }
    cv_list(c, out);
}

void r_report_create(cv *c)
{
    int64_t acc = cv_seg_id(c, 1);
    if (!cv_int(c, 0, "i", "SELECT count(*) FROM accounts WHERE id=?", acc)) return cv_not_found(c);
    if (!c->admin) return cv_unauthorized(c);
    int known = 0;
    for (size_t i = 0; i < sizeof REPORTS / sizeof *REPORTS; i++) known |= !strcmp(c->seg[3], REPORTS[i][0]);
    if (!known) return cv_not_found(c);
    json_t *params = cv_body(c, NULL, "parameters");
    json_t *p = json_is_object(params) ? json_incref(params) : json_object();
    cv_exec(c, "itji", "INSERT INTO account_reports(account_id, report, parameters, status, created_at,"
                       " user_id) VALUES(?,?,?,'complete'," NOW ",?)", acc, c->seg[3], p, c->uid);
    json_decref(p);
    cv_json(c, 200, cv_row(c, "i", "SELECT " REPORT_OBJ " FROM account_reports WHERE id=?",
                           cv_last_id(c)));
}

void r_report_get(cv *c)
{
    if (!c->admin) return cv_unauthorized(c);
    json_t *r = cv_row(c, "iti", "SELECT " REPORT_OBJ " FROM account_reports WHERE account_id=? AND"
                                 " report=? AND id=?", cv_seg_id(c, 1), c->seg[3], cv_seg_id(c, 4));
    if (!r) return cv_not_found(c);
    cv_json(c, 200, r);
}
