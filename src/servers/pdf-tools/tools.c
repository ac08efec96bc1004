/*
 * tools.c - the nine pdf-tools tools. Every reply is a plain string, as
 * upstream's functions return one: errors included (upstream catches its
 * exceptions and returns "Error ..." texts), so only argument validation ends
 * a call as isError. The texts follow pdf_tools_mcp/server.py 0.1.4; where the
 * cause comes from PyPDF2 there, here it is poppler's or qpdf's own message.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "servers/pdf-tools/pdftools.h"

#define MAX_MATCHES ((size_t)1000000)

static int reply_buf(mb_mcp_result *res, mb_buf *b)
{
    int rc = mb_pdf_reply(res, b->data ? b->data : "", b->len);
    mb_buf_free(b);
    return rc;
}

static int reply_own(mb_mcp_result *res, char *s)
{
    int rc = mb_pdf_reply(res, s, strlen(s));
    free(s);
    return rc;
}

/* Like Python's open(p, 'rb'): 0 when readable, else the errno it would raise. */
static int try_open(const mb_pdf_state *st, const char *p)
{
    if (!*p) return ENOENT;
    char *abs = mb_pdf_abs(st, p);
    int fd = mb_open_file(abs, O_RDONLY | O_CLOEXEC, 0);
    int e = fd < 0 ? errno : 0;
    struct stat sb;
    if (fd >= 0 && fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode)) e = EISDIR;
    if (fd >= 0) close(fd);
    free(abs);
    return e;
}

/* resolve_path() + validate_path() for one input. Returns the path to open
 * (caller frees) or NULL with *reply set (caller frees). `prefix` is what
 * upstream puts before a download failure. */
static char *input(mb_pdf_state *st, const char *p, const char *prefix, char **reply)
{
    *reply = NULL;
    if (mb_pdf_is_url(p)) {
        char *why;
        char *local = mb_pdf_fetch_url(st, p, &why);
        if (!local) {
            *reply = mb_asprintf("%s%s", prefix, why);
            free(why);
        }
        return local;
    }
    if ((*reply = mb_pdf_check_path(st, p))) return NULL;
    return mb_strdup(p);
}

/* The output rule of merge/extract. NULL when allowed, else the reply. */
static char *output(mb_pdf_state *st, const char *p)
{
    if (mb_pdf_is_url(p)) return mb_strdup("Error: Output path cannot be a URL, must be a local file path");
    return mb_pdf_check_path(st, p);
}

/* Writes the PDF through a temporary file beside `out`, renamed over it at the
 * end (inputs may be the output). Returns NULL or the error text to put after
 * upstream's prefix (caller frees). */
static char *write_pdf(mb_pdf_state *st, const char *const *paths, const char *const *ranges,
                       size_t n, const char *out)
{
    if (!*out) return mb_py_os_error(ENOENT, out);
    char *abs = mb_pdf_abs(st, out);
    struct stat sb;
    int existed = stat(abs, &sb) == 0;
    if (existed && S_ISDIR(sb.st_mode)) {
        free(abs);
        return mb_py_os_error(EISDIR, out);
    }
    int fd = mb_open_file(abs, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) {
        int e = errno;
        free(abs);
        return mb_py_os_error(e, out);
    }
    close(fd);
    char *tmp = mb_asprintf("%s.mcpbox-XXXXXX", abs);
    char *why = NULL;
    int tfd = mkostemp(tmp, O_CLOEXEC);
    if (tfd < 0) {
        why = mb_py_os_error(errno, out);
        goto out;
    }
    mode_t um = umask(0);
    umask(um);
    fchmod(tfd, 0666 & ~um);
    close(tfd);
    mb_err err = {0};
    if (mb_pdf_qpdf_write(&st->lim, paths, ranges, n, tmp, &err) != MB_OK) {
        why = mb_strdup(err.msg);
        unlink(tmp);
        if (!existed) unlink(abs);
        goto out;
    }
    if (rename(tmp, abs) != 0) {
        why = mb_py_os_error(errno, out);
        unlink(tmp);
    }
out:
    free(tmp);
    free(abs);
    return why;
}

/* ------------------------------------------------------ read_pdf_pages */

int mb_pdf_t_read_pages(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    mb_pdf_state *st = mb_mcp_call_data(call);
    mb_pdf_args v;
    mb_pdf_args_begin(&v, "read_pdf_pages", args);
    const char *path = mb_pdf_arg_str(&v, "pdf_file_path");
    long long start = mb_pdf_arg_int(&v, "start_page", 1, 0);
    long long end = mb_pdf_arg_int(&v, "end_page", 1, 0);
    if (mb_pdf_args_end(&v, res)) return MB_MCP_FAILED;

    char *reply;
    char *actual = input(st, path, "Error resolving path: ", &reply);
    if (!actual) return reply_own(res, reply);
    mb_buf out = {0};
    int e = try_open(st, actual);
    if (e) { /* the outer try of upstream: no warning in front */
        if (e == ENOENT) mb_buf_printf(&out, "Error: File not found '%s'", actual);
        else if (e == EACCES || e == EPERM)
            mb_buf_printf(&out, "Error: No permission to read file '%s'", actual);
        else {
            char *os = mb_py_os_error(e, actual);
            mb_buf_printf(&out, "Error reading PDF file: %s", os);
            free(os);
        }
        free(actual);
        return reply_buf(res, &out);
    }
    if (end - start > 50)
        mb_buf_puts(&out, "Warning: Reading more than 50 pages at once may cause performance "
                          "issues or errors.\n");
    char *abs = mb_pdf_abs(st, actual);
    free(actual);
    mb_pdf_meta meta;
    mb_pdf_texts texts = {0};
    mb_err err = {0};
    if (mb_pdf_info(&st->lim, abs, &meta, &err) != MB_OK) {
        mb_buf_printf(&out, "Error processing PDF: %s", err.msg);
        goto done;
    }
    long long total = meta.pages;
    mb_pdf_meta_dispose(&meta);
    mb_pdf_clamp_range(&start, &end, total);
    if (total == 0) { /* PyPDF2: pages[-1] of an empty page list */
        mb_buf_puts(&out, "Error processing PDF: sequence index out of range");
        goto done;
    }
    if (mb_pdf_text(&st->lim, abs, start, end, &texts, &err) != MB_OK) {
        mb_buf_printf(&out, "Error processing PDF: %s", err.msg);
        goto done;
    }
    mb_buf body = {0};
    for (int i = 0; i < texts.count; i++) {
        if (!mb_pdf_has_text(texts.text[i], texts.len[i])) continue;
        if (body.len) mb_buf_puts(&body, "\n\n");
        mb_buf_printf(&body, "=== Page %lld ===\n", start + i);
        mb_buf_append(&body, texts.text[i], texts.len[i]);
    }
    if (!body.len)
        mb_buf_printf(&out,
                      "PDF total pages: %lld\nSpecified page range (%lld-%lld) has no extractable text content.",
                      total, start, end);
    else {
        mb_buf_printf(&out, "PDF total pages: %lld\nExtracted page range: %lld-%lld\n\n", total, start, end);
        mb_buf_append(&out, body.data, body.len);
    }
    mb_buf_free(&body);
done:
    mb_pdf_texts_free(&texts);
    free(abs);
    return reply_buf(res, &out);
}

/* -------------------------------------------------------- get_pdf_info */

int mb_pdf_t_info(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    mb_pdf_state *st = mb_mcp_call_data(call);
    mb_pdf_args v;
    mb_pdf_args_begin(&v, "get_pdf_info", args);
    const char *path = mb_pdf_arg_str(&v, "pdf_file_path");
    if (mb_pdf_args_end(&v, res)) return MB_MCP_FAILED;

    char *reply;
    char *actual = input(st, path, "Error resolving path: ", &reply);
    if (!actual) return reply_own(res, reply);
    mb_buf out = {0};
    int e = try_open(st, actual);
    if (e == ENOENT) {
        mb_buf_printf(&out, "Error: File not found '%s'", actual);
    } else if (e) {
        char *os = mb_py_os_error(e, actual);
        mb_buf_printf(&out, "Error getting PDF information: %s", os);
        free(os);
    } else {
        char *abs = mb_pdf_abs(st, actual);
        mb_pdf_meta m;
        mb_err err = {0};
        if (mb_pdf_info(&st->lim, abs, &m, &err) != MB_OK) {
            mb_buf_printf(&out, "Error getting PDF information: %s", err.msg);
        } else {
            mb_buf_printf(&out, "PDF file information:\nTotal pages: %lld\n", m.pages);
            if (m.has_info)
                mb_buf_printf(&out, "Title: %s\nAuthor: %s\nCreator: %s\nCreation date: %s\n",
                              m.title ? m.title : "Unknown", m.author ? m.author : "Unknown",
                              m.creator ? m.creator : "Unknown",
                              m.creation_date ? m.creation_date : "Unknown");
            mb_pdf_meta_dispose(&m);
        }
        free(abs);
    }
    free(actual);
    return reply_buf(res, &out);
}

/* ---------------------------------------------------------- merge_pdfs */

int mb_pdf_t_merge(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    mb_pdf_state *st = mb_mcp_call_data(call);
    mb_pdf_args v;
    mb_pdf_args_begin(&v, "merge_pdfs", args);
    json_t *list = mb_pdf_arg_str_list(&v, "pdf_paths");
    const char *outp = mb_pdf_arg_str(&v, "output_path");
    if (mb_pdf_args_end(&v, res)) {
        json_decref(list);
        return MB_MCP_FAILED;
    }
    size_t n = json_array_size(list);
    char **actual = mb_calloc(n + 1, sizeof *actual);
    char **abs = mb_calloc(n + 1, sizeof *abs);
    const char **ranges = mb_calloc(n + 1, sizeof *ranges);
    char *reply = NULL;
    long long total = 0;
    for (size_t i = 0; i < n && !reply; i++) {
        const char *p = json_string_value(json_array_get(list, i));
        char *pre = mb_asprintf("Error resolving path '%s': ", p);
        actual[i] = input(st, p, pre, &reply);
        free(pre);
    }
    if (!reply) reply = output(st, outp);
    for (size_t i = 0; i < n && !reply; i++) {
        const char *orig = json_string_value(json_array_get(list, i));
        int e = try_open(st, actual[i]);
        if (e) {
            char *os = mb_py_os_error(e, actual[i]);
            reply = mb_asprintf("Error reading PDF '%s': %s", orig, os);
            free(os);
            break;
        }
        abs[i] = mb_pdf_abs(st, actual[i]);
        ranges[i] = "1-z";
        long long pages;
        mb_err err = {0};
        if (mb_pdf_qpdf_pages(&st->lim, abs[i], &pages, &err) != MB_OK) {
            reply = mb_asprintf("Error reading PDF '%s': %s", orig, err.msg);
            break;
        }
        total += pages;
    }
    if (!reply) {
        char *why = write_pdf(st, (const char *const *)abs, ranges, n, outp);
        if (why) reply = mb_asprintf("Error merging PDFs: %s", why);
        else
            reply = mb_asprintf("Successfully merged %zu PDFs into '%s'\nTotal pages: %lld", n, outp,
                                total);
        free(why);
    }
    for (size_t i = 0; i < n; i++) free(actual[i]), free(abs[i]);
    free(actual), free(abs), free(ranges);
    json_decref(list);
    return reply_own(res, reply);
}

/* --------------------------------------------------- extract_pdf_pages */

int mb_pdf_t_extract(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    mb_pdf_state *st = mb_mcp_call_data(call);
    mb_pdf_args v;
    mb_pdf_args_begin(&v, "extract_pdf_pages", args);
    const char *src = mb_pdf_arg_str(&v, "source_path");
    json_t *nums = mb_pdf_arg_int_list(&v, "page_numbers");
    const char *outp = mb_pdf_arg_str(&v, "output_path");
    if (mb_pdf_args_end(&v, res)) {
        json_decref(nums);
        return MB_MCP_FAILED;
    }
    char *reply = NULL, *abs = NULL;
    char *actual = input(st, src, "Error resolving source path: ", &reply);
    if (!reply) reply = output(st, outp);
    int e = reply ? 0 : try_open(st, actual);
    if (e == ENOENT) {
        reply = mb_asprintf("Error: File not found '%s'", actual);
    } else if (e) {
        char *os = mb_py_os_error(e, actual);
        reply = mb_asprintf("Error extracting pages: %s", os);
        free(os);
    }
    long long total = 0;
    mb_err err = {0};
    if (!reply) {
        abs = mb_pdf_abs(st, actual);
        if (mb_pdf_qpdf_pages(&st->lim, abs, &total, &err) != MB_OK)
            reply = mb_asprintf("Error extracting pages: %s", err.msg);
    }
    if (!reply) {
        mb_buf range = {0}, shown = {0};
        size_t kept = 0;
        mb_buf_putc(&shown, '[');
        for (size_t i = 0; i < json_array_size(nums); i++) {
            long long p = json_integer_value(json_array_get(nums, i));
            if (p < 1 || p > total) continue;
            mb_buf_printf(&range, "%s%lld", kept ? "," : "", p);
            mb_buf_printf(&shown, "%s%lld", kept ? ", " : "", p);
            kept++;
        }
        mb_buf_putc(&shown, ']');
        if (!kept) {
            reply = mb_asprintf("Error: No valid pages to extract from PDF (total pages: %lld)", total);
        } else {
            const char *paths[] = {abs};
            const char *ranges[] = {range.data};
            char *why = write_pdf(st, paths, ranges, 1, outp);
            if (why)
                reply = mb_asprintf("Error extracting pages: %s", why);
            else
                reply = mb_asprintf("Successfully extracted %zu pages from '%s' to '%s'\n"
                                    "Extracted pages: %s\nSource PDF total pages: %lld",
                                    kept, src, outp, shown.data, total);
            free(why);
        }
        mb_buf_free(&range);
        mb_buf_free(&shown);
    }
    free(actual);
    free(abs);
    json_decref(nums);
    return reply_own(res, reply);
}

/* -------------------------------------------------- search_pdf_content */

int mb_pdf_t_search(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    mb_pdf_state *st = mb_mcp_call_data(call);
    mb_pdf_args v;
    mb_pdf_args_begin(&v, "search_pdf_content", args);
    const char *path = mb_pdf_arg_str(&v, "pdf_file_path");
    const char *pattern = mb_pdf_arg_str(&v, "pattern");
    long long page_size = mb_pdf_arg_int(&v, "page_size", 10, 0);
    if (mb_pdf_args_end(&v, res)) return MB_MCP_FAILED;

    char *reply;
    char *actual = input(st, path, "Error resolving path: ", &reply);
    if (!actual) return reply_own(res, reply);
    mb_buf out = {0};
    page_size = mb_pdf_page_size(page_size, &out);

    /* upstream's extract_all_text_from_pdf() turns every failure into {} */
    char *abs = mb_pdf_abs(st, actual);
    free(actual);
    mb_pdf_texts texts = {0};
    mb_pdf_meta meta = {0};
    mb_err err = {0};
    int ok = *path && try_open(st, abs) == 0 && mb_pdf_info(&st->lim, abs, &meta, &err) == MB_OK &&
             meta.pages > 0 && mb_pdf_text(&st->lim, abs, 1, meta.pages, &texts, &err) == MB_OK;
    mb_pdf_meta_dispose(&meta);
    free(abs);
    if (!ok) {
        mb_buf_free(&out);
        mb_pdf_texts_free(&texts);
        return reply_own(res, mb_strdup("Error: Could not extract text from PDF or PDF is empty"));
    }
    mb_pdf_match *matches = NULL;
    size_t count = 0;
    int rc = mb_pdf_find(&texts, pattern, MAX_MATCHES, &matches, &count, &err);
    if (rc == MB_ETOOBIG) {
        mb_buf_free(&out);
        mb_pdf_texts_free(&texts);
        return reply_own(res, mb_asprintf("Error searching PDF: %s", err.msg));
    }
    if (rc != MB_OK || count == 0) { /* a bad pattern finds nothing upstream */
        mb_buf_free(&out);
        mb_pdf_texts_free(&texts);
        free(matches);
        mb_buf_printf(&out, "No matches found for pattern: %s", pattern);
        return reply_buf(res, &out);
    }
    mb_pdf_session *s = mb_calloc(1, sizeof *s);
    char u[37];
    mb_uuid4(u);
    memcpy(s->id, u, 8);
    s->id[8] = '\0';
    s->pdf_path = mb_strdup(path);
    s->pattern = mb_strdup(pattern);
    s->texts = texts;
    s->matches = matches;
    s->count = count;
    s->current_page = 1;
    s->page_size = page_size;
    s->last_accessed = time(NULL);
    mb_pdf_sessions_add(&st->sessions, s, s->last_accessed);
    mb_pdf_format_first(&out, s);
    return reply_buf(res, &out);
}

/* ----------------------------------------------------- paging tools */

static mb_pdf_session *session(mb_pdf_state *st, const char *id, mb_buf *out)
{
    mb_pdf_session *s = mb_pdf_sessions_get(&st->sessions, id);
    if (!s) {
        mb_buf_puts(out, "Error: Search session '");
        mb_buf_puts(out, id);
        mb_buf_puts(out, "' not found or expired");
        return NULL;
    }
    s->last_accessed = time(NULL);
    return s;
}

static int page_tool(mb_mcp_call *call, json_t *args, mb_mcp_result *res, const char *tool,
                     mb_pdf_move move)
{
    mb_pdf_state *st = mb_mcp_call_data(call);
    mb_pdf_args v;
    mb_pdf_args_begin(&v, tool, args);
    const char *id = mb_pdf_arg_str(&v, "search_id");
    long long page = move == MB_PDF_GO ? mb_pdf_arg_int(&v, "page_number", 0, 1) : 0;
    if (mb_pdf_args_end(&v, res)) return MB_MCP_FAILED;
    mb_buf out = {0};
    mb_pdf_session *s = session(st, id, &out);
    if (s) mb_pdf_session_move(&out, s, move, page);
    return reply_buf(res, &out);
}

int mb_pdf_t_next(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    return page_tool(call, args, res, "search_pdf_next_page", MB_PDF_NEXT);
}

int mb_pdf_t_prev(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    return page_tool(call, args, res, "search_pdf_prev_page", MB_PDF_PREV);
}

int mb_pdf_t_go(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    return page_tool(call, args, res, "search_pdf_go_page", MB_PDF_GO);
}

int mb_pdf_t_search_info(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    mb_pdf_state *st = mb_mcp_call_data(call);
    mb_pdf_args v;
    mb_pdf_args_begin(&v, "search_pdf_info", args);
    const char *id = mb_pdf_arg_str(&v, "search_id");
    if (mb_pdf_args_end(&v, res)) return MB_MCP_FAILED;
    mb_buf out = {0};
    mb_pdf_session *s = session(st, id, &out);
    if (s) mb_pdf_format_info(&out, s, time(NULL));
    return reply_buf(res, &out);
}
