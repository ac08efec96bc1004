/*
 * util.c - upstream's file helpers (ensure_docx_extension,
 * check_file_writeable) and the Python string rules its texts depend on
 * (str.split() word counts, slicing in code points, json.dumps(indent=2)).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <locale.h>
#include <pthread.h>
#include <unistd.h>
#include <wctype.h>

#include "servers/word/word.h"

char *wd_docx_name(const char *filename)
{
    if (mb_str_has_suffix(filename, ".docx")) return mb_strdup(filename);
    return mb_asprintf("%s.docx", filename);
}

int wd_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

xmlNodePtr wd_table_at(wd_doc *d, json_int_t i, mb_mcp_result *res)
{
    xmlNodePtr *ts;
    size_t nt = wd_tables(d, &ts);
    xmlNodePtr t = NULL;
    if (i < 0 || (size_t)i >= nt)
        mb_mcp_textf(res, "Invalid table index. Document has %zu tables (0-%lld).", nt, (long long)nt - 1);
    else t = ts[i];
    free(ts);
    return t;
}

int wd_writeable(const char *path, char **msg)
{
    *msg = NULL;
    struct stat st;
    if (stat(path, &st)) {
        const char *slash = strrchr(path, '/');
        char *dir = slash ? mb_strndup(path, (size_t)(slash - path)) : mb_strdup("");
        if (slash == path) {
            free(dir);
            dir = mb_strdup("/");
        }
        const char *shown = *dir ? dir : ".";
        int ok = 1;
        if (stat(shown, &st)) {
            *msg = mb_asprintf("Directory %s does not exist", shown);
            ok = 0;
        } else if (access(shown, W_OK)) {
            *msg = mb_asprintf("Directory %s is not writeable", shown);
            ok = 0;
        }
        free(dir);
        return ok;
    }
    if (access(path, W_OK)) {
        *msg = mb_asprintf("File %s is not writeable (permission denied)", path);
        return 0;
    }
    return 1;
}

/* Python's str.isspace() for the code points str.split() splits on. */
static int py_space(unsigned cp)
{
    return (cp >= 9 && cp <= 13) || (cp >= 0x1c && cp <= 0x20) || cp == 0x85 || cp == 0xa0 ||
           cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 ||
           cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

size_t wd_word_count(const char *s)
{
    size_t n = 0, len = strlen(s), i = 0;
    int in = 0;
    while (i < len) {
        unsigned cp = mb_utf8_next(s, len, &i);
        if (py_space(cp)) in = 0;
        else if (!in) {
            in = 1;
            n++;
        }
    }
    return n;
}

char *wd_preview(const char *s, size_t n)
{
    size_t len = strlen(s), i = 0, k = 0;
    while (i < len && k < n) {
        mb_utf8_next(s, len, &i);
        k++;
    }
    return mb_asprintf("%.*s%s", (int)i, s, i < len ? "..." : "");
}

void wd_json_result(mb_mcp_result *res, json_t *v)
{
    char *t = mb_py_json_dumps(v, 2, 1);
    mb_mcp_text(res, t);
    free(t);
    json_decref(v);
}

char *wd_py_strip(const char *s)
{
    size_t len = strlen(s), a = len, b = 0, i = 0;
    while (i < len) {
        size_t at = i;
        if (!py_space(mb_utf8_next(s, len, &i))) {
            if (a == len) a = at;
            b = i;
        }
    }
    return a == len ? mb_strdup("") : mb_strndup(s + a, b - a);
}

static locale_t utf8_locale;
static void make_locale(void) { utf8_locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0); }

char *wd_py_lower(const char *s)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, make_locale);
    locale_t loc = utf8_locale;
    mb_buf b = {0};
    mb_buf_puts(&b, "");
    size_t len = strlen(s), i = 0;
    while (i < len) {
        unsigned cp = mb_utf8_next(s, len, &i);
        if (loc) cp = (unsigned)towlower_l((wint_t)cp, loc);
        else if (cp >= 'A' && cp <= 'Z') cp += 32;
        mb_utf8_put(&b, cp);
    }
    return mb_buf_steal(&b);
}
