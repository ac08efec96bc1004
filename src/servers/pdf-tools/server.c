/*
 * server.c - `mcpbox mcp pdf-tools`: lockon-n/pdf-tools-mcp 0.1.4 (FastMCP
 * "pdf-tools"), the PDF server Toolathlon starts as
 *   pdf-tools-mcp --workspace_path <ws> --tempfile_dir <ws>/.pdf_tools_tempfiles
 *
 * This file holds the start-up options, the tool table (names, docstrings and
 * the pydantic-generated schemas as FastMCP lists them) and FastMCP's argument
 * validation: a pydantic model "<tool>Arguments" whose failures read
 *   1 validation error for read_pdf_pagesArguments
 *   pdf_file_path
 *     Field required [type=missing, input_value={}, input_type=dict]
 *       For further information visit https://errors.pydantic.dev/2.11/v/missing
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "servers/common/pyschema.h"
#include "servers/pdf-tools/pdftools.h"
#include "servers/servers.h"
#include "servers/terminal/terminal.h" /* mb_term_realpath */

#define PYDANTIC_URL "https://errors.pydantic.dev/2.11/v/"

/* ------------------------------------------------------ argument model */

void mb_pdf_args_begin(mb_pdf_args *v, const char *tool, json_t *args)
{
    memset(v, 0, sizeof *v);
    v->tool = tool;
    v->args = args;
}

static void error(mb_pdf_args *v, const char *loc, const char *msg, const char *type,
                  json_t *input)
{
    if (v->msg.len) mb_buf_putc(&v->msg, '\n');
    mb_buf_printf(&v->msg, "%s\n  %s [type=%s, input_value=", loc, msg, type);
    json_t *empty = NULL;
    if (!input) input = empty = json_object();
    mb_py_repr_json(&v->msg, input);
    mb_buf_printf(&v->msg, ", input_type=%s]\n    For further information visit " PYDANTIC_URL "%s",
                  mb_py_type_name(input), type);
    json_decref(empty);
    v->errors++;
}

static json_t *field(mb_pdf_args *v, const char *key)
{
    return json_is_object(v->args) ? json_object_get(v->args, key) : NULL;
}

const char *mb_pdf_arg_str(mb_pdf_args *v, const char *key)
{
    json_t *x = field(v, key);
    if (!x) {
        error(v, key, "Field required", "missing", v->args);
        return "";
    }
    if (!json_is_string(x)) {
        error(v, key, "Input should be a valid string", "string_type", x);
        return "";
    }
    return json_string_value(x);
}

/* pydantic's lax int: ints, bools, integral floats, and decimal strings */
static int to_int(mb_pdf_args *v, const char *loc, json_t *x, long long *out)
{
    if (json_is_integer(x)) {
        *out = json_integer_value(x);
        return 1;
    }
    if (json_is_boolean(x)) {
        *out = json_is_true(x);
        return 1;
    }
    if (json_is_real(x)) {
        double d = json_real_value(x);
        if (d == (double)(long long)d) {
            *out = (long long)d;
            return 1;
        }
        error(v, loc, "Input should be a valid integer, got a number with a fractional part",
              "int_from_float", x);
        return 0;
    }
    if (json_is_string(x)) {
        const char *s = json_string_value(x);
        while (*s == ' ' || (*s >= '\t' && *s <= '\r')) s++;
        char *e;
        errno = 0;
        long long n = strtoll(s, &e, 10);
        int digits = e > s && (e[-1] >= '0' && e[-1] <= '9');
        while (*e == ' ' || (*e >= '\t' && *e <= '\r')) e++;
        if (digits && !*e && !errno) {
            *out = n;
            return 1;
        }
        error(v, loc, "Input should be a valid integer, unable to parse string as an integer",
              "int_parsing", x);
        return 0;
    }
    error(v, loc, "Input should be a valid integer", "int_type", x);
    return 0;
}

long long mb_pdf_arg_int(mb_pdf_args *v, const char *key, long long dflt, int required)
{
    json_t *x = field(v, key);
    if (!x) {
        if (required) error(v, key, "Field required", "missing", v->args);
        return dflt;
    }
    long long n = dflt;
    to_int(v, key, x, &n);
    return n;
}

/* FastMCP's pre_parse_json: a JSON text given for a list field is decoded */
static json_t *list_field(mb_pdf_args *v, const char *key)
{
    json_t *x = field(v, key);
    if (!x) {
        error(v, key, "Field required", "missing", v->args);
        return NULL;
    }
    if (json_is_string(x)) {
        json_t *parsed = json_loads(json_string_value(x), JSON_DECODE_ANY, NULL);
        if (parsed && !json_is_string(parsed) && !json_is_number(parsed)) {
            if (!json_is_array(parsed)) {
                error(v, key, "Input should be a valid list", "list_type", parsed);
                json_decref(parsed);
                return NULL;
            }
            return parsed;
        }
        json_decref(parsed);
    }
    if (!json_is_array(x)) {
        error(v, key, "Input should be a valid list", "list_type", x);
        return NULL;
    }
    return json_incref(x);
}

json_t *mb_pdf_arg_str_list(mb_pdf_args *v, const char *key)
{
    json_t *a = list_field(v, key);
    if (!a) return NULL;
    size_t i;
    json_t *x;
    json_array_foreach(a, i, x) if (!json_is_string(x))
    {
        char *loc = mb_asprintf("%s.%zu", key, i);
        error(v, loc, "Input should be a valid string", "string_type", x);
        free(loc);
    }
    return a;
}

json_t *mb_pdf_arg_int_list(mb_pdf_args *v, const char *key)
{
    json_t *a = list_field(v, key);
    if (!a) return NULL;
    json_t *ints = json_array();
    size_t i;
    json_t *x;
    json_array_foreach(a, i, x)
    {
        char *loc = mb_asprintf("%s.%zu", key, i);
        long long n;
        if (to_int(v, loc, x, &n)) json_array_append_new(ints, json_integer(n));
        free(loc);
    }
    json_decref(a);
    return ints;
}

int mb_pdf_args_end(mb_pdf_args *v, mb_mcp_result *res)
{
    if (!v->errors) {
        mb_buf_free(&v->msg);
        return 0;
    }
    mb_buf all = {0};
    mb_buf_printf(&all, "%d validation error%s for %sArguments\n", v->errors,
                  v->errors == 1 ? "" : "s", v->tool);
    mb_buf_append(&all, v->msg.data, v->msg.len);
    mb_mcp_fail_str(res, all.data);
    mb_buf_free(&all);
    mb_buf_free(&v->msg);
    return MB_MCP_FAILED;
}

int mb_pdf_reply(mb_mcp_result *res, const char *text, size_t len)
{
    size_t n;
    char *ok = mb_utf8_repair(text, len, &n);
    mb_mcp_text_n(res, ok, n);
    json_t *r = json_object();
    json_object_set_new(r, "result", json_stringn(ok, n));
    mb_mcp_structured(res, r);
    free(ok);
    return 0;
}

/* ---------------------------------------------------------- the tools */

#define OUT(tool)                                                                               \
    "{\"properties\": {\"result\": {\"title\": \"Result\", \"type\": \"string\"}}, \"required\": " \
    "[\"result\"], \"title\": \"" tool "Output\", \"type\": \"object\"}"
#define STR(name, title) "\"" name "\": {\"title\": \"" title "\", \"type\": \"string\"}"
#define INT(name, title) "\"" name "\": {\"title\": \"" title "\", \"type\": \"integer\"}"
#define INT_D(name, dflt, title) \
    "\"" name "\": {\"default\": " dflt ", \"title\": \"" title "\", \"type\": \"integer\"}"
#define LIST(name, item, title)                                                        \
    "\"" name "\": {\"items\": {\"type\": \"" item "\"}, \"title\": \"" title "\", " \
    "\"type\": \"array\"}"
#define SCHEMA(tool, props, required)                                                    \
    "{\"properties\": {" props "}, \"required\": [" required "], \"title\": \"" tool \
    "Arguments\", \"type\": \"object\"}"

/* FastMCP publishes the raw docstrings (Python 3.12: indentation kept). */
#define URL_NOTE                                                                          \
    "Supports both local file paths and URLs. For URLs, the PDF will be downloaded\n    " \
    "to a temporary directory and cached for future use.\n"

static const mb_mcp_tool TOOLS[] = {
    {.name = "read_pdf_pages",
     .description = "Read content from PDF file for specified page range.\n    \n    " URL_NOTE
                    "    \n    Note: Avoid reading too many pages at once (recommended: <50 pages) "
                    "to prevent errors.\n\n    Args:\n        pdf_file_path: Path to the PDF file "
                    "or URL to PDF\n        start_page: Starting page number (default: 1)\n        "
                    "end_page: Ending page number (default: 1)\n        \n    Returns:\n        "
                    "Extracted text content from the specified pages\n    ",
     .input_schema = SCHEMA("read_pdf_pages",
                            STR("pdf_file_path", "Pdf File Path") ", " INT_D(
                                "start_page", "1", "Start Page") ", " INT_D("end_page", "1",
                                                                            "End Page"),
                            "\"pdf_file_path\""),
     .output_schema = OUT("read_pdf_pages"),
     .fn = mb_pdf_t_read_pages},
    {.name = "get_pdf_info",
     .description = "Get basic information about a PDF file including page count.\n    \n    " URL_NOTE
                    "\n    Args:\n        pdf_file_path: Path to the PDF file or URL to PDF\n"
                    "        \n    Returns:\n        Basic information about the PDF file\n    ",
     .input_schema = SCHEMA("get_pdf_info", STR("pdf_file_path", "Pdf File Path"),
                            "\"pdf_file_path\""),
     .output_schema = OUT("get_pdf_info"),
     .fn = mb_pdf_t_info},
    {.name = "merge_pdfs",
     .description = "Merge multiple PDF files into one.\n    \n    Supports both local file paths "
                    "and URLs. URLs will be downloaded to temporary\n    files before merging. "
                    "Mixed local and URL paths are supported.\n\n    Args:\n        pdf_paths: "
                    "List of paths to PDF files to merge (in order) - can include URLs\n        "
                    "output_path: Path where the merged PDF will be saved (must be local path)\n"
                    "        \n    Returns:\n        Success message with merge details or error "
                    "message\n    ",
     .input_schema = SCHEMA("merge_pdfs",
                            LIST("pdf_paths", "string", "Pdf Paths") ", " STR("output_path",
                                                                              "Output Path"),
                            "\"pdf_paths\", \"output_path\""),
     .output_schema = OUT("merge_pdfs"),
     .fn = mb_pdf_t_merge},
    {.name = "extract_pdf_pages",
     .description = "Extract specific pages from a PDF and create a new PDF.\n    \n    Supports "
                    "URLs for source PDF. The source PDF will be downloaded to a temporary\n    "
                    "directory if it's a URL. Output path must be a local file path.\n\n    "
                    "Args:\n        source_path: Path to the source PDF file or URL to PDF\n"
                    "        page_numbers: List of page numbers to extract (1-indexed)\n        "
                    "output_path: Path where the new PDF will be saved (must be local path)\n"
                    "        \n    Returns:\n        Success message with extraction details or "
                    "error message\n    ",
     .input_schema = SCHEMA("extract_pdf_pages",
                            STR("source_path", "Source Path") ", " LIST(
                                "page_numbers", "integer",
                                "Page Numbers") ", " STR("output_path", "Output Path"),
                            "\"source_path\", \"page_numbers\", \"output_path\""),
     .output_schema = OUT("extract_pdf_pages"),
     .fn = mb_pdf_t_extract},
    {.name = "search_pdf_content",
     .description = "Search for regex pattern in PDF content and return paginated results.\n"
                    "    \n    " URL_NOTE "    \n    Args:\n        pdf_file_path: Path to the PDF "
                    "file or URL to PDF\n        pattern: Regular expression pattern to search for\n"
                    "        page_size: Number of results per page (10-50, default: 10)\n    \n"
                    "    Returns:\n        Search results with UUID for pagination, or error "
                    "message\n    ",
     .input_schema = SCHEMA("search_pdf_content",
                            STR("pdf_file_path", "Pdf File Path") ", " STR(
                                "pattern", "Pattern") ", " INT_D("page_size", "10", "Page Size"),
                            "\"pdf_file_path\", \"pattern\""),
     .output_schema = OUT("search_pdf_content"),
     .fn = mb_pdf_t_search},
    {.name = "search_pdf_next_page",
     .description = "Get next page of search results.\n    \n    Args:\n        search_id: Search "
                    "session ID from previous search\n    \n    Returns:\n        Next page of "
                    "search results or error message\n    ",
     .input_schema = SCHEMA("search_pdf_next_page", STR("search_id", "Search Id"), "\"search_id\""),
     .output_schema = OUT("search_pdf_next_page"),
     .fn = mb_pdf_t_next},
    {.name = "search_pdf_prev_page",
     .description = "Get previous page of search results.\n    \n    Args:\n        search_id: "
                    "Search session ID from previous search\n    \n    Returns:\n        Previous "
                    "page of search results or error message\n    ",
     .input_schema = SCHEMA("search_pdf_prev_page", STR("search_id", "Search Id"), "\"search_id\""),
     .output_schema = OUT("search_pdf_prev_page"),
     .fn = mb_pdf_t_prev},
    {.name = "search_pdf_go_page",
     .description = "Go to specific page of search results.\n    \n    Args:\n        search_id: "
                    "Search session ID from previous search\n        page_number: Page number to go "
                    "to (1-indexed)\n    \n    Returns:\n        Specified page of search results or "
                    "error message\n    ",
     .input_schema = SCHEMA("search_pdf_go_page",
                            STR("search_id", "Search Id") ", " INT("page_number", "Page Number"),
                            "\"search_id\", \"page_number\""),
     .output_schema = OUT("search_pdf_go_page"),
     .fn = mb_pdf_t_go},
    {.name = "search_pdf_info",
     .description = "Get information about a search session.\n    \n    Args:\n        search_id: "
                    "Search session ID from previous search\n    \n    Returns:\n        Information "
                    "about the search session\n    ",
     .input_schema = SCHEMA("search_pdf_info", STR("search_id", "Search Id"), "\"search_id\""),
     .output_schema = OUT("search_pdf_info"),
     .fn = mb_pdf_t_search_info},
    {0},
};

static const mb_mcp_info INFO = {
    .name = "pdf-tools",
    .version = "1.23.2", /* FastMCP reports the mcp package's version */
    .flavor = MB_MCP_PY_FASTMCP,
    .capabilities = "{\"experimental\": {}, \"prompts\": {\"listChanged\": false}, \"resources\": "
                    "{\"subscribe\": false, \"listChanged\": false}, \"tools\": {\"listChanged\": false}}",
};

/* ------------------------------------------------------------ start-up */

static void state_free(void *p)
{
    mb_pdf_state *st = p;
    if (!st) return;
    free(st->workspace);
    free(st->base);
    free(st->tempdir);
    mb_pdf_sessions_dispose(&st->sessions);
    free(st);
}

int mb_srv_pdftools_create(int argc, char **argv, mb_mcp_server **out, mb_err *err)
{
    static const struct option opts[] = {
        {"workspace_path", required_argument, 0, 'w'},
        {"tempfile_dir", required_argument, 0, 't'},
        {"timeout", required_argument, 0, 'T'},
        {"memory-limit", required_argument, 0, 'm'},
        {"max-text", required_argument, 0, 'x'},
        {0, 0, 0, 0},
    };
    *out = NULL;
    const char *ws = NULL, *tmp = NULL;
    double timeout = 60;
    uint64_t mem = (uint64_t)1 << 30, max_text = (uint64_t)64 << 20;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        char *e;
        switch (c) {
        case 'w': ws = optarg; break;
        case 't': tmp = optarg; break;
        case 'T':
            timeout = strtod(optarg, &e);
            if (e == optarg || *e || timeout <= 0)
                return mb_err_set(err, MB_EINVAL, "--timeout wants seconds > 0, not \"%s\"", optarg);
            break;
        case 'm':
        case 'x': {
            uint64_t v;
            if (mb_parse_size(optarg, &v) != MB_OK || v == 0)
                return mb_err_set(err, MB_EINVAL, "--%s wants a size such as 512M, not \"%s\"",
                                  c == 'm' ? "memory-limit" : "max-text", optarg);
            if (c == 'm') mem = v;
            else max_text = v;
            break;
        }
        default:
            return mb_err_set(err, MB_EINVAL, "unknown option \"%s\"", argv[optind - 1]);
        }
    }
    if (optind < argc) return mb_err_set(err, MB_EINVAL, "unexpected argument \"%s\"", argv[optind]);

    mb_pdf_state *st = mb_calloc(1, sizeof *st);
    st->lim.timeout_ms = (int)(timeout * 1000);
    st->lim.memory_bytes = mem;
    st->lim.max_text = (size_t)max_text;
    mb_pdf_sessions_init(&st->sessions, 256, 30 * 60);
    int rc;
    if (ws) {
        char *abs = mb_path_resolve(NULL, ws);
        struct stat sb;
        if (stat(abs, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
            rc = mb_err_set(err, MB_EIO, "--workspace_path %s is not a directory", ws);
            free(abs);
            goto fail;
        }
        st->workspace = mb_term_realpath(abs);
        free(abs);
        st->base = mb_strdup(st->workspace);
    } else {
        st->base = mb_path_resolve(NULL, ".");
    }
    if (tmp) {
        char *abs = mb_path_resolve(st->base, tmp);
        st->tempdir = mb_term_realpath(abs);
        free(abs);
    } else {
        const char *home = getenv("HOME");
        st->tempdir = mb_asprintf("%s/.pdf_tools_temp", home && *home ? home : "/root");
    }
    if ((rc = mb_mkdir_p(st->tempdir, 0777, err)) != MB_OK) goto fail;

    return mb_mcp_server_new_with_tools(&INFO, TOOLS, st, state_free, out, err);
fail:
    state_free(st);
    return rc;
}
