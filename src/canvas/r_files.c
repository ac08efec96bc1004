/*
 * r_files.c - folders and files, and Canvas's 3-step upload: POST
 * .../files {name, size} answers {upload_url, upload_params}; the bytes go
 * to upload_url (no token: the URL carries the pending file's secret);
 * that answer is the file.
 */
#include "canvas/canvas_int.h"

#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#define NOW "strftime('%Y-%m-%dT%H:%M:%SZ','now')"
#define HOST "cv_origin() || '"
#define MAX_FILE_BYTES (64u << 20)

#define FILE_OBJ                                                                              \
    "json_object('id',f.id,'uuid',f.uuid,'folder_id',f.folder_id,'display_name',"             \
    "f.display_name,'filename',f.filename,'upload_status','success','content-type',"          \
    "f.content_type,'url'," HOST "/files/' || f.id || '/download?download_frd=1&verifier=' ||"  \
    " f.uuid,'size',f.size,'created_at',f.created_at,'updated_at',f.created_at,'unlock_at',"   \
    "NULL,'locked',json('false'),'hidden',json('false'),'lock_at',NULL,'hidden_for_user',"    \
    "json('false'),'thumbnail_url',NULL,'modified_at',f.created_at,'mime_class',CASE WHEN"     \
    " f.content_type LIKE 'image/%' THEN 'image' WHEN f.content_type='application/pdf' THEN"   \
    " 'pdf' WHEN f.content_type LIKE 'text/%' THEN 'text' ELSE 'file' END,'media_entry_id',"  \
    "NULL,'category','uncategorized','locked_for_user',json('false'),'visibility_level',"     \
    "'inherit')"

#define FOLDER_OBJ                                                                            \
    "json_object('id',d.id,'name',d.name,'full_name',d.full_name,'context_id',d.context_id,"  \
    "'context_type',d.context_type,'parent_folder_id',d.parent_folder_id,'created_at',"       \
    "d.created_at,'updated_at',d.created_at,'lock_at',NULL,'unlock_at',NULL,'position',NULL," \
    "'locked',json('false'),'folders_url'," HOST "/api/v1/folders/' || d.id || '/folders',"     \
    "'files_url'," HOST "/api/v1/folders/' || d.id || '/files','files_count',(SELECT count(*)"  \
    " FROM files f WHERE f.folder_id=d.id AND f.state='available'),'folders_count',(SELECT"    \
    " count(*) FROM folders x WHERE x.parent_folder_id=d.id),'hidden',NULL,'locked_for_user',"  \
    "json('false'),'hidden_for_user',json('false'),'for_submissions',json('false'),"          \
    "'can_upload',json('true'))"

static int64_t root_folder(cv *c, const char *ctype, int64_t cid)
{
    int64_t id = cv_int(c, 0, "ti", "SELECT id FROM folders WHERE context_type=? AND context_id=? AND"
                                    " parent_folder_id IS NULL", ctype, cid);
    if (!id) {
        const char *name = !strcmp(ctype, "Course") ? "course files" : "my files";
        cv_exec(c, "tit", "INSERT INTO folders(context_type, context_id, name, full_name, created_at)"
                          " VALUES(?,?,?,?3," NOW ")", ctype, cid, name);
        id = cv_last_id(c);
    }
    return id;
}

/* Who may read a folder: its course's readers, or its user. */
static int folder_ok(cv *c, int64_t fid, int manage)
{
    json_t *d = cv_row(c, "i", "SELECT json_object('t',context_type,'id',context_id) FROM folders"
                               " WHERE id=?", fid);
    if (!d) {
        cv_not_found(c);
        return 0;
    }
    const char *t = json_string_value(json_object_get(d, "t"));
    int64_t id = json_integer_value(json_object_get(d, "id"));
    int ok;
    if (t && !strcmp(t, "Course")) {
        ok = manage ? cv_can_manage(c, id) : cv_can_read(c, id);
    } else {
        ok = id == c->uid || c->admin;
        if (!ok) cv_unauthorized(c);
    }
    json_decref(d);
    return ok;
}

void r_files_list(cv *c)
{
    int64_t cid = cv_seg_id(c, 1);
    if (!cid) return cv_not_found(c);
    if (!cv_can_read(c, cid)) return;
    const char *term = cv_param(c, "search_term");
    cv_list(c, cv_rows(c, "it",
                       "SELECT " FILE_OBJ " FROM files f JOIN folders d ON d.id=f.folder_id WHERE"
                       " d.context_type='Course' AND d.context_id=? AND f.state='available' AND"
                       " (?2 IS NULL OR instr(lower(f.display_name), lower(?2))) ORDER BY"
                       " f.display_name COLLATE NOCASE, f.id", cid, term));
}

void r_folder_files(cv *c)
{
    int64_t fid = cv_seg_id(c, 1);
    if (!fid) return cv_not_found(c);
    if (!folder_ok(c, fid, 0)) return;
    cv_list(c, cv_rows(c, "i", "SELECT " FILE_OBJ " FROM files f WHERE f.folder_id=? AND"
                               " f.state='available' ORDER BY f.display_name COLLATE NOCASE, f.id",
                       fid));
}

void r_folders_list(cv *c)
{
    int64_t cid = cv_seg_id(c, 1);
    if (!cid) return cv_not_found(c);
    if (!cv_can_read(c, cid)) return;
    root_folder(c, "Course", cid);
    cv_list(c, cv_rows(c, "i", "SELECT " FOLDER_OBJ " FROM folders d WHERE d.context_type='Course'"
                               " AND d.context_id=? ORDER BY d.full_name, d.id", cid));
}

void r_file_get(cv *c)
{
    int64_t id = cv_seg_id(c, 1);
    int64_t folder = id ? cv_int(c, 0, "i", "SELECT folder_id FROM files WHERE id=? AND"
                                            " state='available'", id)
                        : 0;
    if (!folder) return cv_not_found(c);
    if (!folder_ok(c, folder, 0)) return;
    cv_json(c, 200, cv_row(c, "i", "SELECT " FILE_OBJ " FROM files f WHERE f.id=?", id));
}

void r_file_upload_start(cv *c)
{
    int64_t folder;
    if (!strcmp(c->seg[0], "users")) {
        folder = root_folder(c, "User", c->uid);
    } else if (!strcmp(c->seg[0], "courses")) {
        int64_t cid = cv_seg_id(c, 1);
        if (!cid) return cv_not_found(c);
        if (!cv_can_manage(c, cid)) return;
        folder = root_folder(c, "Course", cid);
    } else {
        folder = cv_seg_id(c, 1);
        if (!folder) return cv_not_found(c);
        if (!folder_ok(c, folder, 1)) return;
    }
    const char *name = cv_body_str(c, NULL, "name");
    if (!name || !*name) {
        cv_error(c, 400, "name is required");
        return;
    }
    const char *ctype = cv_body_str(c, NULL, "content_type");
    const char *dup = cv_body_str(c, NULL, "on_duplicate");
    char *display = mb_strdup(name);
    if (dup && !strcmp(dup, "rename")) {
        for (int n = 1; n < 1000 && cv_int(c, 0, "it", "SELECT count(*) FROM files WHERE folder_id=?"
                                                       " AND display_name=? AND state='available'",
                                           folder, display); n++) {
            free(display);
            const char *dot = strrchr(name, '.');
            if (dot && dot != name)
                display = mb_asprintf("%.*s-%d%s", (int)(dot - name), name, n, dot);
            else
                display = mb_asprintf("%s-%d", name, n);
        }
    } else {
        cv_exec(c, "it", "UPDATE files SET state='deleted' WHERE folder_id=? AND display_name=? AND"
                         " state='available'", folder, name);
    }
    cv_exec(c, "ittti", "INSERT INTO files(folder_id, display_name, filename, content_type, size,"
                        " user_id, created_at, uuid, state) VALUES(?,?,?,IFNULL(?,"
                        "'application/octet-stream'),0,?," NOW ",lower(hex(randomblob(20))),'pending')",
            folder, display, name, ctype, c->uid);
    free(display);
    int64_t id = cv_last_id(c);
    char *uuid = cv_text(c, "i", "SELECT uuid FROM files WHERE id=?", id);
    char *url = mb_asprintf("%s/files/%lld/upload?uuid=%s", c->req->link_base ? c->req->link_base : "",
                            (long long)id, uuid ? uuid : "");
    cv_json(c, 200, json_pack("{s:s,s:{s:s,s:s},s:s}", "upload_url", url, "upload_params",
                              "filename", name, "content_type",
                              ctype ? ctype : "application/octet-stream", "file_param", "file"));
    free(url);
    free(uuid);
}

/* The bytes of a pending file: {"data_base64"} (or {"data"} as text). */
void r_file_upload_data(cv *c)
{
    int64_t id = cv_seg_id(c, 1);
    const char *uuid = cv_param(c, "uuid");
    if (!id || !uuid ||
        !cv_int(c, 0, "it", "SELECT count(*) FROM files WHERE id=? AND uuid=? AND state='pending'", id,
                uuid))
        return cv_not_found(c);
    const char *b64 = cv_body_str(c, NULL, "data_base64");
    const char *raw = cv_body_str(c, NULL, "data");
    unsigned char *bytes = NULL;
    size_t n = 0;
    if (b64) {
        size_t len = strlen(b64);
        if (len > (size_t)MAX_FILE_BYTES / 3 * 4 + 4) {
            cv_error(c, 413, "file too large");
            return;
        }
        bytes = mb_malloc(len / 4 * 3 + 4);
        int r = len ? EVP_DecodeBlock(bytes, (const unsigned char *)b64, (int)len) : 0;
        if (r < 0) {
            free(bytes);
            cv_error(c, 400, "invalid base64");
            return;
        }
        n = (size_t)r;
        if (len >= 1 && b64[len - 1] == '=') n--;
        if (len >= 2 && b64[len - 2] == '=') n--;
    } else if (raw) {
        n = strlen(raw);
        bytes = (unsigned char *)mb_strdup(raw);
    }
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(c->s, "UPDATE files SET data=?, size=?, state='available' WHERE id=?", -1,
                           &st, NULL) == SQLITE_OK) {
        sqlite3_bind_blob(st, 1, bytes ? (const void *)bytes : "", (int)n, SQLITE_TRANSIENT);
        sqlite3_bind_int64(st, 2, (sqlite3_int64)n);
        sqlite3_bind_int64(st, 3, id);
        sqlite3_step(st);
        sqlite3_finalize(st);
    }
    free(bytes);
    cv_json(c, 201, cv_row(c, "i", "SELECT " FILE_OBJ " FROM files f WHERE f.id=?", id));
}

/* ------------------------------------------------------------ download */

int mb_canvas_file_download(mb_canvas_db *db, int64_t uid, int64_t id, const char *verifier,
                            mb_canvas_file *out)
{
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&db->lock);
    sqlite3_stmt *st;
    int rc = 404;
    if (sqlite3_prepare_v2(
            db->s,
            "SELECT f.data, f.content_type, f.filename FROM files f LEFT JOIN folders d ON"
            " d.id=f.folder_id WHERE f.id=?1 AND f.state='available' AND (f.uuid=?2 OR"
            " f.user_id=?3 OR EXISTS(SELECT 1 FROM admins a WHERE a.user_id=?3) OR"
            " (d.context_type='Course' AND EXISTS(SELECT 1 FROM enrollments e WHERE"
            " e.course_id=d.context_id AND e.user_id=?3 AND e.workflow_state='active')) OR"
            " EXISTS(SELECT 1 FROM submissions s JOIN assignments x ON x.id=s.assignment_id"
            " JOIN enrollments e ON e.course_id=x.course_id AND e.user_id=?3 AND"
            " e.workflow_state='active' AND e.type IN ('TeacherEnrollment','TaEnrollment'),"
            " json_each(s.attachment_ids) j WHERE j.value=f.id))",
            -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, id);
        if (verifier) sqlite3_bind_text(st, 2, verifier, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(st, 3, uid);
        if (sqlite3_step(st) == SQLITE_ROW) {
            int n = sqlite3_column_bytes(st, 0);
            out->len = (size_t)n;
            out->data = mb_malloc(out->len ? out->len : 1);
            if (n) memcpy(out->data, sqlite3_column_blob(st, 0), out->len);
            const char *ct = (const char *)sqlite3_column_text(st, 1);
            const char *fn = (const char *)sqlite3_column_text(st, 2);
            out->content_type = mb_strdup(ct && *ct ? ct : "application/octet-stream");
            out->filename = mb_strdup(fn ? fn : "file");
            rc = 0;
        }
        sqlite3_finalize(st);
    }
    pthread_mutex_unlock(&db->lock);
    return rc;
}

void mb_canvas_file_free(mb_canvas_file *f)
{
    if (!f) return;
    free(f->data);
    free(f->content_type);
    free(f->filename);
    memset(f, 0, sizeof *f);
}
