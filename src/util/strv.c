/*
 * strv.c - the string hash and the string list every layer uses: FNV-1a
 * (64-bit) for string-keyed tables and stable names, and NULL-terminated
 * string arrays (argv/envp style).
 */
#include "util.h"

#include <stdlib.h>
#include <string.h>

uint64_t mb_hash_bytes(const void *p, size_t n)
{
    const unsigned char *s = p;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

uint64_t mb_hash_str(const char *s) { return mb_hash_bytes(s, strlen(s)); }

size_t mb_strv_len(const char *const *v)
{
    size_t n = 0;
    while (v && v[n]) n++;
    return n;
}

char **mb_strv_dup(const char *const *v)
{
    if (!v) return NULL;
    size_t n = mb_strv_len(v);
    char **out = mb_calloc(n + 1, sizeof *out);
    for (size_t i = 0; i < n; i++) out[i] = mb_strdup(v[i]);
    return out;
}

void mb_strv_free(char **v)
{
    if (!v) return;
    for (char **p = v; *p; p++) free(*p);
    free(v);
}

void mb_strv_push(const char ***v, size_t *n, const char *x)
{
    *v = mb_realloc(*v, (*n + 2) * sizeof **v);
    (*v)[(*n)++] = x;
    (*v)[*n] = NULL;
}
