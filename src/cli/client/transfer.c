/*
 * transfer.c - archive bytes to and from the daemon's signed blob URLs:
 * PUT a file (push), GET into a file (pull), with the progress bar when
 * stdout is a terminal. Signed URLs carry their own authority: no key is
 * sent with them.
 */
#include "cli/client/client.h"

#include <curl/curl.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

typedef struct xfer {
    mb_cl *cl;
    CURL *curl;
    mb_cl_bar bar;
    int upload;
    FILE *f;          /* download target */
    uint64_t written; /* bytes put in f */
    int write_failed;
    mb_buf err;       /* the answer's body when it is not the download, capped */
} xfer;

static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
    xfer *x = ud;
    if (x->upload) mb_cl_bar_draw(&x->bar, (uint64_t)ulnow, (uint64_t)ultotal, 0);
    else mb_cl_bar_draw(&x->bar, (uint64_t)dlnow, (uint64_t)dltotal, 0);
    return 0;
}

static size_t on_data(char *p, size_t size, size_t nmemb, void *ud)
{
    xfer *x = ud;
    size_t n = size * nmemb;
    long status = 0;
    curl_easy_getinfo(x->curl, CURLINFO_RESPONSE_CODE, &status);
    if (x->upload || status < 200 || status >= 300) {
        if (x->err.len < 65536) mb_buf_append(&x->err, p, n < 65536 ? n : 65536);
        return n;
    }
    if (fwrite(p, 1, n, x->f) != n) {
        x->write_failed = errno ? errno : EIO;
        return 0;
    }
    x->written += n;
    return n;
}

static int perform(xfer *x, const char *url, uint64_t *bytes)
{
    mb_cl *cl = x->cl;
    CURL *c = x->curl;
    char errbuf[CURL_ERROR_SIZE] = "";
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, x);
    if (cl->progress) {
        curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
        curl_easy_setopt(c, CURLOPT_XFERINFODATA, x);
        curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    }
    /* A transfer may take long: it fails when it stalls, not after a
     * fixed time. */
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 0L);
    if (cl->timeout_s > 0) {
        curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, cl->timeout_s);
    }
    CURLcode crc = curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_off_t up = 0, down = 0, total = 0;
    curl_easy_getinfo(c, CURLINFO_SIZE_UPLOAD_T, &up);
    curl_easy_getinfo(c, CURLINFO_SIZE_DOWNLOAD_T, &down);
    curl_easy_getinfo(c, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &total);
    if (cl->progress && x->bar.shown)
        mb_cl_bar_draw(&x->bar, x->upload ? (uint64_t)up : x->written,
                       x->upload ? (uint64_t)up : (uint64_t)(total > 0 ? total : 0), 1);
    int rc = MB_CL_OK;
    if (x->write_failed)
        rc = mb_cl_fail(cl, MB_CL_FAIL, "cannot write the download: %s", strerror(x->write_failed));
    else if (status >= 300)
        rc = mb_cl_http_error(cl, status, x->err.data, x->err.len, NULL);
    else if (crc != CURLE_OK)
        rc = mb_cl_transport_error(cl, url, crc, errbuf);
    else if (status < 200)
        rc = mb_cl_fail(cl, MB_CL_FAIL, "no HTTP answer from %s", url);
    if (bytes) *bytes = x->upload ? (uint64_t)up : x->written;
    mb_buf_free(&x->err);
    return rc;
}

int mb_cl_upload(mb_cl *cl, const char *url, FILE *f, uint64_t *sent)
{
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode))
        return mb_cl_fail(cl, MB_CL_FAIL, "the archive to push is not a regular file");
    rewind(f);
    xfer x = {.cl = cl, .curl = mb_cl_handle(cl), .upload = 1, .bar = {.label = "push"}};
    struct curl_slist *hdrs = curl_slist_append(NULL, "Content-Type: application/gzip");
    hdrs = curl_slist_append(hdrs, "Expect:");
    curl_easy_setopt(x.curl, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(x.curl, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(x.curl, CURLOPT_READDATA, f);
    curl_easy_setopt(x.curl, CURLOPT_INFILESIZE_LARGE, (curl_off_t)st.st_size);
    int rc = perform(&x, url, sent);
    curl_slist_free_all(hdrs);
    return rc;
}

int mb_cl_download(mb_cl *cl, const char *url, FILE *f, uint64_t *got)
{
    xfer x = {.cl = cl, .curl = mb_cl_handle(cl), .f = f, .bar = {.label = "pull"}};
    curl_easy_setopt(x.curl, CURLOPT_HTTPGET, 1L);
    int rc = perform(&x, url, got);
    if (!rc && fflush(f) != 0)
        rc = mb_cl_fail(cl, MB_CL_FAIL, "cannot write the download: %s", strerror(errno));
    return rc;
}
