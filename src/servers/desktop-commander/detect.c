/*
 * detect.c - how desktop-commander 0.2.7 reads a process's output
 * (utils/process-detection.ts): whether it waits at a REPL prompt, whether
 * it finished (completion or error markers), the quick prompt check on one
 * chunk, and the cleaning of echoed input and prompts from
 * interact_with_process's answer. The regular expressions of upstream are
 * run with PCRE2 set up to behave as JavaScript's (multiline ^ after CR or
 * LF, $ only at the very end without the m flag).
 */
#define _GNU_SOURCE
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

#include "servers/desktop-commander/dc.h"

/* REPL_PROMPTS flattened in upstream's order. */
static const char *const prompts[] = {
    ">>> ", "... ",                 /* python */
    "> ", "... ",                   /* node */
    "> ", "+ ",                     /* r */
    "julia> ", "       ",           /* julia */
    "$ ", "# ", "% ", "bash-", "zsh-", /* shell */
    "mysql> ", "    -> ",           /* mysql */
    "=# ", "-# ",                   /* postgres */
    "redis> ",                      /* redis */
    "> ", "... ",                   /* mongo */
    NULL,
};

static const char *const completion[] = {"process finished", "command completed",
                                         "[process completed]", "program terminated",
                                         "exit code:", NULL};
static const char *const errors[] = {"error:",     "exception:",     "traceback",  "syntaxerror",
                                     "nameerror",  "typeerror",      "valueerror", "referenceerror",
                                     "uncaught",   "at object.",     NULL};

void dc_trim(const char *s, size_t len, size_t *off, size_t *n)
{
    size_t a = mb_js_space_prefix(s, len);
    if (a == len) {
        *off = 0;
        *n = 0;
        return;
    }
    size_t b = mb_js_space_suffix(s + a, len - a);
    *off = a;
    *n = len - a - b;
}

static int contains(const char *hay, size_t n, const char *needle)
{
    size_t m = strlen(needle);
    return m <= n && memmem(hay, n, needle, m) != NULL;
}

static int icontains(const char *hay, size_t n, const char *needle)
{
    size_t m = strlen(needle);
    for (size_t i = 0; i + m <= n; i++)
        if (!strncasecmp(hay + i, needle, m)) return 1;
    return 0;
}

/* /^\s*\^/m: a '^' with only whitespace before it on its line. */
static int caret_line(const char *s, size_t n)
{
    int blank = 1;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '\n' || c == '\r') blank = 1;
        else if (c == '^' && blank) return 1;
        else if (c != ' ' && c != '\t' && c != '\v' && c != '\f') blank = 0;
    }
    return 0;
}

void dc_analyze(const char *out, size_t len, dc_state *st)
{
    memset(st, 0, sizeof *st);
    size_t off, n;
    dc_trim(out, len, &off, &n);
    if (!n) return;
    const char *last = out;
    for (size_t i = 0; i < len; i++)
        if (out[i] == '\n') last = out + i + 1;
    size_t last_len = (size_t)(out + len - last);
    for (int i = 0; prompts[i]; i++)
        if (contains(last, last_len, prompts[i])) {
            st->waiting = 1;
            st->prompt = prompts[i];
            return;
        }
    for (int i = 0; completion[i]; i++)
        if (icontains(out, len, completion[i])) {
            st->finished = 1;
            return;
        }
    /* the last three lines */
    const char *few = out + len;
    int nl = 0;
    while (few > out) {
        if (few[-1] == '\n' && ++nl == 3) break;
        few--;
    }
    size_t few_len = (size_t)(out + len - few);
    for (int i = 0; errors[i]; i++)
        if (icontains(few, few_len, errors[i])) {
            st->finished = 1;
            return;
        }
    if (caret_line(few, few_len)) st->finished = 1;
}

int dc_quick_prompt(const char *s, size_t len)
{
    size_t off, n;
    dc_trim(s, len, &off, &n);
    if (!n) return 0;
    char c = s[off + n - 1];
    return c == '>' || c == '$' || c == '#';
}

char *dc_state_message(const dc_state *st, long pid)
{
    if (st->waiting) {
        size_t off, n;
        dc_trim(st->prompt, strlen(st->prompt), &off, &n);
        return mb_asprintf("Process %ld is waiting for input (detected: \"%.*s\")", pid, (int)n,
                           st->prompt + off);
    }
    if (st->finished) return mb_asprintf("Process %ld has finished execution", pid);
    return mb_asprintf("Process %ld is running", pid);
}

/* s.replace(re, '') - all matches with `global`, else the first. */
static char *replace(char *s, const char *pattern, int multiline, int global)
{
    int ec;
    PCRE2_SIZE eo;
    pcre2_compile_context *cc = pcre2_compile_context_create(NULL);
    pcre2_set_newline(cc, PCRE2_NEWLINE_ANYCRLF);
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
                                   PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | PCRE2_UCP |
                                       (multiline ? PCRE2_MULTILINE : PCRE2_DOLLAR_ENDONLY),
                                   &ec, &eo, cc);
    pcre2_compile_context_free(cc);
    if (!re) return s;
    size_t len = strlen(s);
    PCRE2_SIZE outlen = len + 1;
    char *out = mb_malloc(outlen);
    int rc = pcre2_substitute(re, (PCRE2_SPTR)s, len, 0,
                              (global ? PCRE2_SUBSTITUTE_GLOBAL : 0) | PCRE2_SUBSTITUTE_OVERFLOW_LENGTH,
                              NULL, NULL, (PCRE2_SPTR) "", 0, (PCRE2_UCHAR *)out, &outlen);
    if (rc == PCRE2_ERROR_NOMEMORY) {
        out = mb_realloc(out, outlen);
        rc = pcre2_substitute(re, (PCRE2_SPTR)s, len, 0, global ? PCRE2_SUBSTITUTE_GLOBAL : 0,
                              NULL, NULL, (PCRE2_SPTR) "", 0, (PCRE2_UCHAR *)out, &outlen);
    }
    pcre2_code_free(re);
    if (rc < 0) {
        free(out);
        return s;
    }
    free(s);
    return out;
}

char *dc_clean_output(const char *out, const char *input)
{
    size_t cl;
    char *s = mb_utf8_repair(out, strlen(out), &cl);
    if (input && *input) {
        const char *p = input;
        for (;;) {
            const char *e = strchr(p, '\n');
            size_t ll = e ? (size_t)(e - p) : strlen(p);
            size_t off, n;
            dc_trim(p, ll, &off, &n);
            if (n) {
                mb_buf re = {0};
                mb_buf_putc(&re, '^');
                for (size_t i = off; i < off + n; i++) {
                    if (strchr(".*+?^${}()|[]\\", p[i]) && p[i]) mb_buf_putc(&re, '\\');
                    mb_buf_putc(&re, p[i]);
                }
                mb_buf_puts(&re, "\\s*\\n?");
                s = replace(s, re.data, 1, 0);
                mb_buf_free(&re);
            }
            if (!e) break;
            p = e + 1;
        }
    }
    s = replace(s, "^>>>\\s*", 1, 1);
    s = replace(s, "^>\\s*", 1, 1);
    s = replace(s, "^\\.{3}\\s*", 1, 1);
    s = replace(s, "^\\+\\s*", 1, 1);
    s = replace(s, "\\n>>>\\s*$", 0, 0);
    s = replace(s, "\\n>\\s*$", 0, 0);
    s = replace(s, "\\n\\+\\s*$", 0, 0);
    size_t off, n;
    dc_trim(s, strlen(s), &off, &n);
    char *r = mb_strndup(s + off, n);
    free(s);
    return r;
}
