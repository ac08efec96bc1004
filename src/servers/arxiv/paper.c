/*
 * paper.c - arXiv papers as values: identifiers, the Kaggle/OAI snapshot
 * record format, dates, and the small text rules the arxiv Python package
 * and feedparser apply to what the API returns (titles with whitespace runs
 * collapsed, stripped abstracts, author names without TeX accents).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "servers/arxiv/arxiv.h"

void mb_arxiv_paper_dispose(mb_arxiv_paper *p)
{
    if (!p) return;
    free(p->id), free(p->title), free(p->abstract);
    for (size_t i = 0; i < p->n_authors; i++) free(p->authors[i]);
    free(p->authors);
    for (size_t i = 0; i < p->n_cats; i++) free(p->cats[i]);
    free(p->cats);
    free(p->comment), free(p->journal_ref), free(p->doi), free(p->report_no);
    memset(p, 0, sizeof *p);
}

int64_t mb_arxiv_paper_updated(const mb_arxiv_paper *p, int v)
{
    if (v < 1 || v > p->version) v = p->version;
    if (v <= MB_ARXIV_MAX_VERSIONS && p->versions[v - 1] > 0) return p->versions[v - 1];
    for (int k = p->version < MB_ARXIV_MAX_VERSIONS ? p->version : MB_ARXIV_MAX_VERSIONS; k > 0; k--)
        if (p->versions[k - 1] > 0) return p->versions[k - 1];
    return p->published;
}

/* ------------------------------------------------------------ identifiers */

static size_t digits(const char *s)
{
    size_t n = 0;
    while (s[n] >= '0' && s[n] <= '9') n++;
    return n;
}

/* Parses an optional "vN" at s; returns the characters used (0 if none) or
 * (size_t)-1 when malformed. */
static size_t version_suffix(const char *s, int *version)
{
    *version = 0;
    if (*s != 'v') return 0;
    size_t n = digits(s + 1);
    if (n == 0 || n > 4 || s[1] == '0') return (size_t)-1;
    *version = atoi(s + 1);
    return n + 1;
}

int mb_arxiv_id_parse(const char *s, char **id, int *version)
{
    *id = NULL;
    *version = 0;
    if (!s) return MB_EINVAL;
    size_t len = strlen(s), base;
    if (len > 64) return MB_EINVAL;
    if (digits(s) == 4 && s[4] == '.' && (digits(s + 5) == 4 || digits(s + 5) == 5)) {
        base = 5 + digits(s + 5);
    } else {
        /* archive[-archive][.SC]/YYMMNNN */
        size_t i = 0;
        while (s[i] >= 'a' && s[i] <= 'z') i++;
        if (i == 0) return MB_EINVAL;
        if (s[i] == '-') {
            size_t j = i + 1;
            while (s[j] >= 'a' && s[j] <= 'z') j++;
            if (j == i + 1) return MB_EINVAL;
            i = j;
        }
        if (s[i] == '.') {
            if (!isupper((unsigned char)s[i + 1]) || !isupper((unsigned char)s[i + 2]))
                return MB_EINVAL;
            i += 3;
        }
        if (s[i] != '/' || digits(s + i + 1) != 7) return MB_EINVAL;
        base = i + 8;
    }
    size_t vlen = version_suffix(s + base, version);
    if (vlen == (size_t)-1 || base + vlen != len) return MB_EINVAL;
    *id = mb_strndup(s, base);
    return MB_OK;
}

char *mb_arxiv_id_file(const char *id, int version, const char *ext)
{
    mb_buf b = {0};
    for (const char *c = id; *c; c++) mb_buf_putc(&b, *c == '/' ? '_' : *c);
    if (version > 0) mb_buf_printf(&b, "v%d", version);
    if (ext) mb_buf_printf(&b, ".%s", ext);
    return mb_buf_steal(&b);
}

/* ------------------------------------------------------------------ text */

static int is_ws(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

char *mb_arxiv_strip(const char *s)
{
    if (!s) return mb_strdup("");
    while (is_ws((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n > 0 && is_ws((unsigned char)s[n - 1])) n--;
    return mb_strndup(s, n);
}

char *mb_arxiv_collapse_ws(const char *s)
{
    mb_buf b = {0};
    mb_buf_puts(&b, "");
    int pending = 0;
    for (const char *c = s ? s : ""; *c; c++) {
        if (is_ws((unsigned char)*c)) {
            pending = b.len > 0;
            continue;
        }
        if (pending) mb_buf_putc(&b, ' ');
        pending = 0;
        mb_buf_putc(&b, *c);
    }
    return mb_buf_steal(&b);
}

/* Accented letters: for each TeX accent, pairs of base letter and result. */
static const struct { char accent; const char *pairs; } ACCENTS[] = {
    {'\'', "aáeéiíoóuúyýAÁEÉIÍOÓUÚYÝcćCĆnńNŃsśSŚzźZŹlĺLĹrŕRŔgǵ"},
    {'`', "aàeèiìoòuùAÀEÈIÌOÒUÙ"},
    {'"', "aäeëiïoöuüyÿAÄEËIÏOÖUÜ"},
    {'^', "aâeêiîoôuûAÂEÊIÎOÔUÛcĉgĝhĥjĵsŝwŵyŷ"},
    {'~', "aãnñoõAÃNÑOÕiĩuũ"},
    {'=', "aāeēiīoōuūAĀEĒIĪOŌUŪ"},
    {'.', "zżZŻeėEĖcċCĊgġIİ"},
    {'u', "aăAĂgğGĞuŭUŬ"},
    {'v', "cčCČsšSŠzžZŽrřRŘeěEĚnňNŇdďDĎtťTŤ"},
    {'H', "oőOŐuűUŰ"},
    {'c', "cçCÇsşSŞtţTŢ"},
    {'k', "aąAĄeęEĘ"},
    {'r', "uůUŮaåAÅ"},
};

static const struct { const char *name; const char *utf8; } SPECIALS[] = {
    {"ss", "ß"}, {"aa", "å"}, {"AA", "Å"}, {"ae", "æ"}, {"AE", "Æ"}, {"oe", "œ"},
    {"OE", "Œ"}, {"o", "ø"}, {"O", "Ø"}, {"l", "ł"}, {"L", "Ł"}, {"i", "ı"}, {"j", "ȷ"},
};

/* Appends accent applied to letter `base`; 0 if the pair is unknown. */
static int put_accented(mb_buf *b, char accent, char base)
{
    for (size_t i = 0; i < sizeof ACCENTS / sizeof *ACCENTS; i++) {
        if (ACCENTS[i].accent != accent) continue;
        const char *p = ACCENTS[i].pairs;
        while (*p) {
            char letter = *p++;
            size_t n = 1;
            while (((unsigned char)p[n] & 0xC0) == 0x80) n++;
            if (letter == base) {
                mb_buf_append(b, p, n);
                return 1;
            }
            p += n;
        }
    }
    return 0;
}

char *mb_arxiv_tex_to_utf8(const char *s)
{
    mb_buf b = {0};
    mb_buf_puts(&b, "");
    for (const char *c = s ? s : ""; *c;) {
        if (*c == '{' || *c == '}') {
            c++;
            continue;
        }
        if (*c != '\\') {
            mb_buf_putc(&b, *c++);
            continue;
        }
        const char *cmd = c + 1;
        if (*cmd && strchr("'`\"^~=.", *cmd)) {
            const char *arg = cmd + 1;
            while (*arg == '{' || *arg == ' ') arg++;
            if (*arg == '\\' && (arg[1] == 'i' || arg[1] == 'j') && !isalpha((unsigned char)arg[2])) {
                if (put_accented(&b, *cmd, arg[1])) {
                    c = arg + 2;
                    continue;
                }
            }
            if (isalpha((unsigned char)*arg) && put_accented(&b, *cmd, *arg)) {
                c = arg + 1;
                continue;
            }
            c = cmd + 1; /* unknown pair: drop the accent */
            continue;
        }
        if (*cmd && strchr("uvHckr", *cmd) && (cmd[1] == '{' || cmd[1] == ' ')) {
            const char *arg = cmd + 1;
            while (*arg == '{' || *arg == ' ') arg++;
            if (isalpha((unsigned char)*arg) && put_accented(&b, *cmd, *arg)) {
                c = arg + 1;
                continue;
            }
        }
        size_t n = 0;
        while (isalpha((unsigned char)cmd[n])) n++;
        int done = 0;
        for (size_t i = 0; n && i < sizeof SPECIALS / sizeof *SPECIALS; i++) {
            if (strlen(SPECIALS[i].name) == n && !strncmp(cmd, SPECIALS[i].name, n)) {
                mb_buf_puts(&b, SPECIALS[i].utf8);
                c = cmd + n;
                if (*c == ' ') c++;
                done = 1;
                break;
            }
        }
        if (done) continue;
        if (*cmd == '&' || *cmd == '%' || *cmd == '_' || *cmd == '$' || *cmd == '#') {
            mb_buf_putc(&b, *cmd);
            c = cmd + 1;
            continue;
        }
        mb_buf_putc(&b, *c++); /* keep other commands as written */
    }
    return mb_buf_steal(&b);
}

/* ----------------------------------------------------------------- dates */

int64_t mb_arxiv_parse_rfc2822(const char *s)
{
    if (!s) return -1;
    struct tm tm = {0};
    const char *end = strptime(s, "%a, %d %b %Y %H:%M:%S", &tm);
    if (!end) {
        memset(&tm, 0, sizeof tm);
        end = strptime(s, "%d %b %Y %H:%M:%S", &tm);
    }
    if (!end) return -1;
    return (int64_t)timegm(&tm);
}

int64_t mb_arxiv_parse_iso(const char *s)
{
    if (!s) return -1;
    int y, mo, d, h = 0, mi = 0, sec = 0, used = 0;
    if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &used) != 3) return -1;
    const char *p = s + used;
    if (*p == 'T' || *p == ' ') {
        int u2 = 0;
        if (sscanf(p + 1, "%2d:%2d:%2d%n", &h, &mi, &sec, &u2) != 3) return -1;
        p += 1 + u2;
        if (*p == '.')
            for (p++; isdigit((unsigned char)*p); p++) {}
    }
    long off = 0;
    if (*p == '+' || *p == '-') {
        int oh, om;
        if (sscanf(p + 1, "%2d:%2d", &oh, &om) != 2) return -1;
        off = (oh * 3600L + om * 60L) * (*p == '-' ? -1 : 1);
    }
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return -1;
    struct tm tm = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d,
                    .tm_hour = h, .tm_min = mi, .tm_sec = sec};
    return (int64_t)timegm(&tm) - off;
}

void mb_arxiv_iso_utc(int64_t t, char out[32])
{
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%S+00:00", &tm);
}

/* -------------------------------------------------------------- snapshot */

static char *opt_text(const json_t *rec, const char *key)
{
    const char *v = json_string_value(json_object_get(rec, key));
    if (!v) return NULL;
    char *s = mb_arxiv_collapse_ws(v);
    if (!*s) {
        free(s);
        return NULL;
    }
    return s;
}

static void add_str(char ***arr, size_t *n, char *s)
{
    *arr = mb_realloc(*arr, (*n + 1) * sizeof **arr);
    (*arr)[(*n)++] = s;
}

/* "A. One, B. Two and C. Three" -> names. */
static void authors_from_string(mb_arxiv_paper *p, const char *s)
{
    char *flat = mb_arxiv_collapse_ws(s);
    char *cur = flat;
    while (cur && *cur) {
        char *comma = strstr(cur, ", ");
        char *and = strstr(cur, " and ");
        char *cut = comma;
        size_t skip = 2;
        if (and && (!cut || and < cut)) cut = and, skip = 5;
        if (cut) *cut = '\0';
        char *name = mb_arxiv_tex_to_utf8(cur);
        char *clean = mb_arxiv_collapse_ws(name);
        free(name);
        if (*clean) add_str(&p->authors, &p->n_authors, clean);
        else free(clean);
        cur = cut ? cut + skip : NULL;
    }
    free(flat);
}

int mb_arxiv_paper_from_snapshot(const json_t *rec, mb_arxiv_paper *p, mb_err *err)
{
    memset(p, 0, sizeof *p);
    const char *id = json_string_value(json_object_get(rec, "id"));
    char *base = NULL;
    int v = 0;
    if (!id || mb_arxiv_id_parse(id, &base, &v) != MB_OK)
        return mb_err_set(err, MB_EINVAL, "\"id\" is missing or not an arXiv identifier");
    p->id = base;
    const char *title = json_string_value(json_object_get(rec, "title"));
    if (!title) {
        mb_arxiv_paper_dispose(p);
        return mb_err_set(err, MB_EINVAL, "%s: \"title\" is missing", id);
    }
    p->title = mb_arxiv_collapse_ws(title);
    p->abstract = mb_arxiv_strip(json_string_value(json_object_get(rec, "abstract")));
    p->comment = opt_text(rec, "comments");
    p->journal_ref = opt_text(rec, "journal-ref");
    p->doi = opt_text(rec, "doi");
    p->report_no = opt_text(rec, "report-no");

    const json_t *parsed = json_object_get(rec, "authors_parsed");
    if (json_is_array(parsed) && json_array_size(parsed) > 0) {
        size_t i;
        const json_t *a;
        json_array_foreach(parsed, i, a) {
            const char *last = json_string_value(json_array_get(a, 0));
            const char *first = json_string_value(json_array_get(a, 1));
            const char *suffix = json_string_value(json_array_get(a, 2));
            mb_buf b = {0};
            mb_buf_puts(&b, "");
            if (first && *first) mb_buf_printf(&b, "%s ", first);
            if (last) mb_buf_puts(&b, last);
            if (suffix && *suffix) mb_buf_printf(&b, " %s", suffix);
            char *tex = mb_arxiv_tex_to_utf8(b.data);
            char *name = mb_arxiv_collapse_ws(tex);
            free(tex);
            mb_buf_free(&b);
            if (*name) add_str(&p->authors, &p->n_authors, name);
            else free(name);
        }
    } else if (json_string_value(json_object_get(rec, "authors"))) {
        authors_from_string(p, json_string_value(json_object_get(rec, "authors")));
    }

    const char *cats = json_string_value(json_object_get(rec, "categories"));
    if (cats) {
        char *copy = mb_strdup(cats), *save = NULL;
        for (char *t = strtok_r(copy, " \t\n", &save); t; t = strtok_r(NULL, " \t\n", &save))
            add_str(&p->cats, &p->n_cats, mb_strdup(t));
        free(copy);
    }

    const json_t *versions = json_object_get(rec, "versions");
    size_t i;
    const json_t *ver;
    json_array_foreach(versions, i, ver) {
        const char *vname = json_string_value(json_object_get(ver, "version"));
        int64_t t = mb_arxiv_parse_rfc2822(json_string_value(json_object_get(ver, "created")));
        int vn = vname && vname[0] == 'v' ? atoi(vname + 1) : (int)i + 1;
        if (vn < 1) continue;
        if (vn > p->version) p->version = vn;
        if (vn <= MB_ARXIV_MAX_VERSIONS && t > 0) p->versions[vn - 1] = t;
    }
    if (p->version == 0) p->version = v > 0 ? v : 1;
    p->published = p->versions[0];
    if (p->published <= 0) {
        const char *upd = json_string_value(json_object_get(rec, "update_date"));
        p->published = mb_arxiv_parse_iso(upd);
    }
    if (p->published <= 0) {
        mb_arxiv_paper_dispose(p);
        return mb_err_set(err, MB_EINVAL, "%s: no submission date (\"versions\" or \"update_date\")",
                          id);
    }
    return MB_OK;
}
