/*
 * transfer.c - archives in and out of a workspace: the PUT upload, initialize
 * (extract into /data), dump (tar.gz of /data) and reset (back to the seed
 * plus the last initialized archive, with the servers restarted: the
 * sandbox half of it is in reset.c).
 *
 * Files per sandbox, in DIR/blobs/ID/:
 *   upload.tar.gz     the last complete PUT, until an initialize consumes it
 *   baseline.tar.gz   the archive of the last initialize: what reset replays
 *   dump.tar.gz       the last dump, served by the signed download URL
 * A PUT writes upload.tar.gz.part and renames it when the body is complete,
 * so a broken upload never replaces a good one.
 */
#define _GNU_SOURCE
#include "archive/archive.h"
#include "core/core_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

char *mb_core_upload_tmp_path(mb_core *core, const char *id)
{
    /* Made only while the sandbox is live, under its lock: a release that
     * ran since the caller checked must not get its blob dir back. The PUT
     * then fails to open its file, and the commit says 404. */
    mb_sandbox_rec rec;
    mb_sblock *lock;
    if (mb_core__lock_rec(core, NULL, id, &rec, &lock, NULL) == MB_OK) {
        char *dir = mb_core__path_blob(core, id, NULL);
        mb_mkdir_p(dir, 0700, NULL);
        free(dir);
        mb_core__unlock(core, lock);
    }
    char tag[37];
    mb_uuid4(tag);
    char *name = mb_asprintf("upload.tar.gz.part-%.8s", tag);
    char *path = mb_core__path_blob(core, id, name);
    free(name);
    return path;
}

int mb_core_upload_commit(mb_core *core, const char *id, const char *tmp_path, uint64_t size,
                          mb_err *err)
{
    mb_sandbox_rec rec;
    mb_sblock *lock;
    int rc = mb_core__lock_rec(core, NULL, id, &rec, &lock, err);
    if (rc) {
        unlink(tmp_path);
        return rc;
    }
    char *final = mb_core__path_blob(core, id, "upload.tar.gz");
    if (!rc && rename(tmp_path, final) != 0) rc = mb_err_sys(err, errno, "cannot keep the upload");
    if (!rc) {
        mb_blob_rec b = {0};
        snprintf(b.sandbox_id, sizeof b.sandbox_id, "%s", id);
        snprintf(b.kind, sizeof b.kind, "upload");
        snprintf(b.path, sizeof b.path, "%s", final);
        b.size = size;
        b.created_at = mb_now();
        rc = mb_store_blob_put(core->store, &b, err);
    }
    if (!rc) mb_metrics_bytes_add(core->metrics, MB_METRICS_UPLOAD_BYTES, size);
    if (!rc) {
        rec.has_upload = 1;
        rec.updated_at = mb_now();
        rc = mb_store_sandbox_update(core->store, &rec, err);
    }
    if (rc) unlink(tmp_path);
    free(final);
    mb_core__unlock(core, lock);
    return rc;
}

int mb_core__extract(mb_core *core, const mb_sandbox_rec *rec, const char *archive, mb_err *err)
{
    mb_archive_extract_opts opts = MB_ARCHIVE_EXTRACT_OPTS_INIT;
    opts.max_bytes = core->cfg.max_expanded_bytes;
    opts.max_entries = core->cfg.max_entries;
    opts.uid = (uid_t)rec->uid_base;
    opts.gid = (gid_t)rec->uid_base;
    int fd = open(archive, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return mb_err_sys(err, errno, "cannot open the uploaded archive");
    char *ws = mb_core_workspace(core, rec->id);
    /* Staged on the workspace's own tmpfs, outside what the sandbox sees. */
    char *volume = mb_core__path_volume(core, rec->id);
    opts.staging_dir = volume;
    mb_archive_stats stats = {0};
    int rc = mb_archive_extract(fd, ws, &opts, &stats, err);
    close(fd);
    if (!rc)
        mb_info("initialized %s: %llu entries, %llu bytes", rec->id,
                (unsigned long long)stats.entries, (unsigned long long)stats.bytes);
    free(ws);
    free(volume);
    return rc;
}

static int initialize(mb_core *core, const char *owner, const char *id, mb_err *err);

int mb_core_initialize(mb_core *core, const char *owner, const char *id, mb_err *err)
{
    int64_t t0 = mb_core__op_start();
    int rc = initialize(core, owner, id, err);
    mb_core__op_done(core, MB_METRICS_INITIALIZE, t0, rc);
    return rc;
}

static int initialize(mb_core *core, const char *owner, const char *id, mb_err *err)
{
    mb_sandbox_rec rec;
    mb_sblock *lock;
    int rc = mb_core__lock_rec(core, owner, id, &rec, &lock, err);
    if (rc) return rc;
    char *upload = mb_core__path_blob(core, id, "upload.tar.gz");
    char *baseline = mb_core__path_blob(core, id, "baseline.tar.gz");
    const char *source = NULL;
    if (access(upload, F_OK) == 0) source = upload;
    else if (access(baseline, F_OK) == 0) source = baseline;  /* re-initialize from the last one */
    if (!source) {
        rc = mb_err_set(err, MB_ECONFLICT, "Nothing to initialize from: PUT a tar.gz to the URL "
                        "from POST /local-sandbox/%s/upload-url first", id);
    } else {
        rc = mb_core__extract(core, &rec, source, err);
    }
    if (!rc && source == upload) {
        if (rename(upload, baseline) != 0) {
            rc = mb_err_sys(err, errno, "cannot keep the initialized archive");
        } else {
            mb_blob_rec b = {0};
            snprintf(b.sandbox_id, sizeof b.sandbox_id, "%s", id);
            snprintf(b.kind, sizeof b.kind, "baseline");
            snprintf(b.path, sizeof b.path, "%s", baseline);
            b.created_at = mb_now();
            struct stat st;
            if (stat(baseline, &st) == 0) b.size = (uint64_t)st.st_size;
            rc = mb_store_blob_put(core->store, &b, err);
            if (!rc) rc = mb_store_blob_delete(core->store, id, "upload", err);
        }
    }
    if (!rc) {
        if (mb_core_live(core, id, &rec, NULL) == MB_OK) {
            rec.has_upload = 0;
            rec.initialized_at = rec.updated_at = mb_now();
            rc = mb_store_sandbox_update(core->store, &rec, err);
        }
    }
    free(upload);
    free(baseline);
    mb_core__unlock(core, lock);
    return rc;
}

/* A dump is bounded by the workspace quota, counted as the tar would count
 * it (apparent sizes: a sparse file in full), and by --dump-timeout, so that
 * a few sparse gigabytes cannot buy minutes of the daemon's CPU. */
static void dump_bounds(mb_core *core, const char *id, mb_archive_write_opts *wo)
{
    char *volume = mb_core__path_volume(core, id);
    struct statvfs vfs;
    if (statvfs(volume, &vfs) == 0 && vfs.f_blocks)
        wo->max_bytes = (uint64_t)vfs.f_blocks * (uint64_t)vfs.f_frsize;
    free(volume);
    if (core->cfg.dump_timeout_s > 0)
        wo->deadline_ms = mb_mono_ms() + (int64_t)core->cfg.dump_timeout_s * 1000;
}

static int dump(mb_core *core, const char *owner, const char *id, mb_err *err);

int mb_core_dump(mb_core *core, const char *owner, const char *id, mb_err *err)
{
    int64_t t0 = mb_core__op_start();
    int rc = dump(core, owner, id, err);
    mb_core__op_done(core, MB_METRICS_DUMP, t0, rc);
    return rc;
}

static int dump(mb_core *core, const char *owner, const char *id, mb_err *err)
{
    mb_sandbox_rec rec;
    mb_sblock *lock;
    int rc = mb_core__lock_rec(core, owner, id, &rec, &lock, err);
    if (rc) return rc;
    char *dir = mb_core__path_blob(core, id, NULL);
    mb_mkdir_p(dir, 0700, NULL);
    char *tmp = mb_core__path_blob(core, id, "dump.tar.gz.part");
    char *final = mb_core__path_blob(core, id, "dump.tar.gz");
    char *ws = mb_core_workspace(core, id);
    mb_archive_stats stats = {0};
    mb_archive_write_opts wo = MB_ARCHIVE_WRITE_OPTS_INIT;
    dump_bounds(core, id, &wo);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        rc = mb_err_sys(err, errno, "cannot write the dump");
    } else {
        rc = mb_archive_write_dir(ws, fd, &wo, &stats, err);
        if (rc == MB_ENOSPACE && strstr(err->msg, "apparent size"))
            rc = mb_err_set(err, MB_ENOSPACE, "Cannot dump /data: %s (the workspace quota); "
                            "remove or shrink files first", err->msg);
        else if (rc == MB_ETIMEOUT)
            rc = mb_err_set(err, MB_ETIMEOUT, "Cannot dump /data: %s (--dump-timeout %d s)",
                            err->msg, core->cfg.dump_timeout_s);
        if (!rc && fsync(fd) != 0) rc = mb_err_sys(err, errno, "cannot write the dump");
        close(fd);
    }
    if (!rc && rename(tmp, final) != 0) rc = mb_err_sys(err, errno, "cannot keep the dump");
    if (!rc) {
        mb_blob_rec b = {0};
        snprintf(b.sandbox_id, sizeof b.sandbox_id, "%s", id);
        snprintf(b.kind, sizeof b.kind, "dump");
        snprintf(b.path, sizeof b.path, "%s", final);
        b.created_at = mb_now();
        struct stat st;
        if (stat(final, &st) == 0) b.size = (uint64_t)st.st_size;
        rc = mb_store_blob_put(core->store, &b, err);
        if (!rc) mb_metrics_bytes_add(core->metrics, MB_METRICS_DUMP_BYTES, b.size);
    }
    if (rc) unlink(tmp);
    free(dir);
    free(tmp);
    free(final);
    free(ws);
    mb_core__unlock(core, lock);
    return rc;
}

int mb_core_open_dump(mb_core *core, const char *id, int *fd, uint64_t *size, mb_err *err)
{
    char *path = mb_core__path_blob(core, id, "dump.tar.gz");
    *fd = open(path, O_RDONLY | O_CLOEXEC);
    free(path);
    if (*fd < 0)
        return mb_err_set(err, MB_ENOTFOUND, "No dump for this sandbox: call GET "
                          "/local-sandbox/%s/dump first", id);
    struct stat st;
    fstat(*fd, &st);
    *size = (uint64_t)st.st_size;
    return MB_OK;
}

int mb_core_reset(mb_core *core, const char *owner, const char *id, mb_err *err)
{
    int64_t t0 = mb_core__op_start();
    mb_sandbox_rec rec;
    mb_sblock *lock;
    int rc = mb_core__lock_rec(core, owner, id, &rec, &lock, err);
    if (rc) return rc;
    rc = mb_core__sandbox_reset(core, &rec, err);
    if (!rc) rc = mb_core__services_reset(core, &rec, err);
    if (!rc && mb_core_live(core, id, &rec, NULL) == MB_OK) {
        rec.updated_at = mb_now();
        rc = mb_store_sandbox_update(core->store, &rec, err);
    }
    if (!rc) mb_info("reset %s", id);
    mb_core__op_done(core, MB_METRICS_RESET, t0, rc);
    mb_core__unlock(core, lock);
    return rc;
}
