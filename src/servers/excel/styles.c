/*
 * styles.c - styles.xml: number formats (openpyxl's built-in table and its
 * date/timedelta detection, which decide how a number reads back), and
 * deriving new cell formats for format_range by appending fonts, fills,
 * borders, numFmts and cellXfs entries (existing entries are never changed,
 * so other cells keep their look).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "servers/excel/excel.h"

static const char *const BUILTIN[50] = {
    [0] = "General", [1] = "0", [2] = "0.00", [3] = "#,##0", [4] = "#,##0.00",
    [5] = "\"$\"#,##0_);(\"$\"#,##0)", [6] = "\"$\"#,##0_);[Red](\"$\"#,##0)",
    [7] = "\"$\"#,##0.00_);(\"$\"#,##0.00)", [8] = "\"$\"#,##0.00_);[Red](\"$\"#,##0.00)",
    [9] = "0%", [10] = "0.00%", [11] = "0.00E+00", [12] = "# ?/?", [13] = "# ?\?/??",
    [14] = "mm-dd-yy", [15] = "d-mmm-yy", [16] = "d-mmm", [17] = "mmm-yy",
    [18] = "h:mm AM/PM", [19] = "h:mm:ss AM/PM", [20] = "h:mm", [21] = "h:mm:ss",
    [22] = "m/d/yy h:mm", [37] = "#,##0_);(#,##0)", [38] = "#,##0_);[Red](#,##0)",
    [39] = "#,##0.00_);(#,##0.00)", [40] = "#,##0.00_);[Red](#,##0.00)",
    [41] = "_(* #,##0_);_(* \\(#,##0\\);_(* \"-\"_);_(@_)",
    [42] = "_(\"$\"* #,##0_);_(\"$\"* \\(#,##0\\);_(\"$\"* \"-\"_);_(@_)",
    [43] = "_(* #,##0.00_);_(* \\(#,##0.00\\);_(* \"-\"??_);_(@_)",
    [44] = "_(\"$\"* #,##0.00_)_(\"$\"* \\(#,##0.00\\)_(\"$\"* \"-\"??_)_(@_)",
    [45] = "mm:ss", [46] = "[h]:mm:ss", [47] = "mmss.0", [48] = "##0.0E+0", [49] = "@",
};

typedef struct find_rel {
    char *target;
} find_rel;

static int styles_rel(const mb_ooxml_rel *rel, void *payload)
{
    find_rel *f = payload;
    if (!mb_str_has_suffix(rel->type, "/styles")) return 0;
    f->target = mb_strdup(rel->target);
    return 1;
}

int xl_styles_load(xl_book *b, char **why)
{
    if (b->styles_loaded) return b->styles ? MB_OK : MB_ENOTFOUND;
    b->styles_loaded = 1;
    b->fmts = json_object();
    find_rel f = {0};
    mb_ooxml_rels_each(b->pkg, b->wb_part, styles_rel, &f, NULL);
    if (!f.target) {
        if (why) *why = mb_strdup("the workbook has no styles part");
        return MB_ENOTFOUND;
    }
    b->styles_part = mb_ooxml_resolve(b->wb_part, f.target);
    free(f.target);
    mb_err err = {0};
    if (mb_ooxml_xml(b->pkg, b->styles_part, &b->styles, &err)) {
        b->styles = NULL;
        if (why) *why = mb_strdup(err.msg);
        return MB_EINVAL;
    }
    xmlNodePtr root = xmlDocGetRootElement(b->styles);
    xmlNodePtr nf = xl_child(root, "numFmts");
    for (xmlNodePtr n = nf ? nf->children : NULL; n; n = n->next) {
        const char *id = xl_attr(n, "numFmtId"), *code = xl_attr(n, "formatCode");
        if (xl_is(n, "numFmt") && id && code) json_object_set_new(b->fmts, id, json_string(code));
    }
    xmlNodePtr xfs = xl_child(root, "cellXfs");
    size_t cnt = 0;
    for (xmlNodePtr n = xfs ? xfs->children : NULL; n; n = n->next) cnt += xl_is(n, "xf");
    b->xf_fmt = mb_calloc(cnt ? cnt : 1, sizeof *b->xf_fmt);
    for (xmlNodePtr n = xfs ? xfs->children : NULL; n; n = n->next) {
        if (!xl_is(n, "xf")) continue;
        const char *id = xl_attr(n, "numFmtId");
        b->xf_fmt[b->nxf++] = id ? atoi(id) : 0;
    }
    return MB_OK;
}

static const char *fmt_by_id(xl_book *b, int id)
{
    char key[16];
    snprintf(key, sizeof key, "%d", id);
    json_t *c = json_object_get(b->fmts, key);
    if (c) return json_string_value(c);
    if (id >= 0 && id < 50 && BUILTIN[id]) return BUILTIN[id];
    return "General";
}

const char *xl_xf_format(xl_book *b, unsigned xf)
{
    if (xl_styles_load(b, NULL) || xf >= b->nxf) return "General";
    return fmt_by_id(b, b->xf_fmt[xf]);
}

/* The first section of a format with "..." literals and [..] groups other
 * than [h] [hh] [m] [mm] [s] [ss] removed (openpyxl's STRIP_RE). */
static char *strip_format(const char *fmt)
{
    size_t n = strcspn(fmt, ";");
    mb_buf out = {0};
    for (size_t i = 0; i < n;) {
        if (fmt[i] == '"') {
            const char *q = memchr(fmt + i + 1, '"', n - i - 1);
            if (q) {
                i = (size_t)(q - fmt) + 1;
                continue;
            }
        }
        if (fmt[i] == '[') {
            const char *q = memchr(fmt + i + 1, ']', n - i - 1);
            if (q) {
                size_t len = (size_t)(q - fmt) - i - 1;
                const char *in = fmt + i + 1;
                int keep = (len == 1 || len == 2) && strchr("hms", tolower((unsigned char)in[0])) &&
                           (len == 1 || tolower((unsigned char)in[1]) == tolower((unsigned char)in[0]));
                /* openpyxl's lookahead is case-sensitive lower h/m/s */
                keep = keep && strchr("hms", in[0]) && (len == 1 || in[1] == in[0]);
                if (!keep) {
                    i = (size_t)(q - fmt) + 1;
                    continue;
                }
            }
        }
        mb_buf_putc(&out, fmt[i]);
        i++;
    }
    if (!out.data) mb_buf_puts(&out, "");
    return mb_buf_steal(&out);
}

int xl_is_date_format(const char *fmt)
{
    if (!fmt) return 0;
    char *s = strip_format(fmt);
    int found = 0;
    for (size_t i = 1; s[i] && !found; i++)
        if (s[i - 1] != '\\' && strchr("dmhysDMHYS", s[i])) found = 1;
    free(s);
    return found;
}

int xl_is_timedelta_format(const char *fmt)
{
    if (!fmt) return 0;
    size_t n = strcspn(fmt, ";");
    for (size_t i = 0; i + 2 < n + 1 && i < n; i++) {
        if (fmt[i] != '[') continue;
        char c = (char)tolower((unsigned char)fmt[i + 1]);
        if (!strchr("hms", c) || !c) continue;
        size_t j = i + 2;
        if (j < n && tolower((unsigned char)fmt[j]) == c) j++;
        if (j < n && fmt[j] == ']') return 1;
    }
    return 0;
}

/* ---------------------------------------------------------- deriving */

static xmlNodePtr section(xl_book *b, const char *name)
{
    xmlNodePtr root = xmlDocGetRootElement(b->styles);
    xmlNodePtr s = xl_child(root, name);
    if (s) return s;
    s = xl_new_el(root, name);
    /* CT_Stylesheet order */
    static const char *const order[] = {"numFmts", "fonts", "fills", "borders", "cellStyleXfs",
                                        "cellXfs", "cellStyles", "dxfs", "tableStyles",
                                        "colors", "extLst", NULL};
    int mine = 0;
    while (order[mine] && strcmp(order[mine], name)) mine++;
    for (xmlNodePtr n = root->children; n; n = n->next) {
        if (n->type != XML_ELEMENT_NODE) continue;
        int r = 0;
        while (order[r] && strcmp(order[r], (const char *)n->name)) r++;
        if (r > mine) {
            xmlAddPrevSibling(n, s);
            return s;
        }
    }
    xmlAddChild(root, s);
    return s;
}

static unsigned count_children(xmlNodePtr sec, const char *el)
{
    unsigned n = 0;
    for (xmlNodePtr c = sec->children; c; c = c->next) n += xl_is(c, el);
    return n;
}

static xmlNodePtr nth_child(xmlNodePtr sec, const char *el, unsigned i)
{
    for (xmlNodePtr c = sec->children; c; c = c->next)
        if (xl_is(c, el) && i-- == 0) return c;
    return NULL;
}

/* Appends `node` to section `sec`, updates its count; returns the index. */
static unsigned append(xmlNodePtr sec, const char *el, xmlNodePtr node)
{
    xmlAddChild(sec, node);
    unsigned n = count_children(sec, el);
    char buf[16];
    snprintf(buf, sizeof buf, "%u", n);
    xmlSetProp(sec, BAD_CAST "count", BAD_CAST buf);
    return n - 1;
}

static xmlNodePtr val_el(xmlNodePtr parent, const char *name, const char *attr, const char *v)
{
    xmlNodePtr e = xmlNewChild(parent, parent->ns, BAD_CAST name, NULL);
    if (attr) xmlSetProp(e, BAD_CAST attr, BAD_CAST v);
    return e;
}

static int numfmt_id(xl_book *b, const char *code)
{
    for (int i = 0; i < 50; i++)
        if (BUILTIN[i] && !strcmp(BUILTIN[i], code)) return i;
    const char *key;
    json_t *v;
    int max = 163;
    json_object_foreach(b->fmts, key, v) {
        if (!strcmp(json_string_value(v), code)) return atoi(key);
        if (atoi(key) > max) max = atoi(key);
    }
    xmlNodePtr sec = section(b, "numFmts");
    xmlNodePtr nf = xl_new_el(sec, "numFmt");
    char id[16];
    snprintf(id, sizeof id, "%d", max + 1);
    xmlSetProp(nf, BAD_CAST "numFmtId", BAD_CAST id);
    xmlSetProp(nf, BAD_CAST "formatCode", BAD_CAST code);
    append(sec, "numFmt", nf);
    json_object_set_new(b->fmts, id, json_string(code));
    return max + 1;
}

static unsigned attr_u(xmlNodePtr n, const char *name)
{
    const char *v = n ? xl_attr(n, name) : NULL;
    return v ? (unsigned)strtoul(v, NULL, 10) : 0;
}

int xl_style_derive(xl_book *b, unsigned base, const xl_style_req *req, unsigned *out, char **why)
{
    if (xl_styles_load(b, why)) return MB_EINVAL;
    xmlNodePtr xfs = section(b, "cellXfs");
    if (!count_children(xfs, "xf")) {
        xmlNodePtr x0 = xl_new_el(xfs, "xf");
        xmlSetProp(x0, BAD_CAST "numFmtId", BAD_CAST "0");
        append(xfs, "xf", x0);
    }
    xmlNodePtr bx = nth_child(xfs, "xf", base);
    if (!bx) bx = nth_child(xfs, "xf", 0);
    xmlNodePtr xf = xmlCopyNode(bx, 1);
    char buf[32];

    /* font: the base font's face and size kept, emphasis and colour as asked */
    xmlNodePtr fonts = section(b, "fonts");
    xmlNodePtr bf = nth_child(fonts, "font", attr_u(bx, "fontId"));
    xmlNodePtr font = xl_new_el(fonts, "font");
    if (req->bold) val_el(font, "b", NULL, NULL);
    if (req->italic) val_el(font, "i", NULL, NULL);
    if (req->underline) val_el(font, "u", NULL, NULL);
    if (req->font_size > 0) {
        mb_buf sz = {0};
        xl_py_float(&sz, req->font_size);
        if (sz.len > 2 && !strcmp(sz.data + sz.len - 2, ".0")) sz.data[sz.len - 2] = 0;
        val_el(font, "sz", "val", sz.data);
        mb_buf_free(&sz);
    } else if (bf && xl_child(bf, "sz")) {
        xmlAddChild(font, xmlCopyNode(xl_child(bf, "sz"), 1));
    }
    if (req->font_color) val_el(font, "color", "rgb", req->font_color);
    else if (bf && xl_child(bf, "color")) xmlAddChild(font, xmlCopyNode(xl_child(bf, "color"), 1));
    static const char *const keep[] = {"name", "family", "charset", "scheme", NULL};
    for (int i = 0; keep[i]; i++)
        if (bf && xl_child(bf, keep[i])) xmlAddChild(font, xmlCopyNode(xl_child(bf, keep[i]), 1));
    snprintf(buf, sizeof buf, "%u", append(fonts, "font", font));
    xmlSetProp(xf, BAD_CAST "fontId", BAD_CAST buf);
    xmlSetProp(xf, BAD_CAST "applyFont", BAD_CAST "1");

    if (req->fill_color) {
        xmlNodePtr fills = section(b, "fills");
        xmlNodePtr fill = xl_new_el(fills, "fill");
        xmlNodePtr pf = val_el(fill, "patternFill", "patternType", "solid");
        val_el(pf, "fgColor", "rgb", req->fill_color);
        val_el(pf, "bgColor", "rgb", req->fill_color);
        snprintf(buf, sizeof buf, "%u", append(fills, "fill", fill));
        xmlSetProp(xf, BAD_CAST "fillId", BAD_CAST buf);
        xmlSetProp(xf, BAD_CAST "applyFill", BAD_CAST "1");
    }
    if (req->border_style) {
        xmlNodePtr borders = section(b, "borders");
        xmlNodePtr bd = xl_new_el(borders, "border");
        static const char *const sides[] = {"left", "right", "top", "bottom", NULL};
        for (int i = 0; sides[i]; i++) {
            xmlNodePtr sd = val_el(bd, sides[i], "style", req->border_style);
            val_el(sd, "color", "rgb", req->border_color);
        }
        val_el(bd, "diagonal", NULL, NULL);
        snprintf(buf, sizeof buf, "%u", append(borders, "border", bd));
        xmlSetProp(xf, BAD_CAST "borderId", BAD_CAST buf);
        xmlSetProp(xf, BAD_CAST "applyBorder", BAD_CAST "1");
    }
    if (req->number_format) {
        snprintf(buf, sizeof buf, "%d", numfmt_id(b, req->number_format));
        xmlSetProp(xf, BAD_CAST "numFmtId", BAD_CAST buf);
        xmlSetProp(xf, BAD_CAST "applyNumberFormat", BAD_CAST "1");
    }
    if (req->align_set) {
        xmlNodePtr old = xl_child(xf, "alignment");
        if (old) {
            xmlUnlinkNode(old);
            xmlFreeNode(old);
        }
        xmlNodePtr al = xl_new_el(xf, "alignment");
        if (req->horizontal) xmlSetProp(al, BAD_CAST "horizontal", BAD_CAST req->horizontal);
        xmlSetProp(al, BAD_CAST "vertical", BAD_CAST "center");
        if (req->wrap) xmlSetProp(al, BAD_CAST "wrapText", BAD_CAST "1");
        xmlNodePtr prot = xl_child(xf, "protection");
        if (prot) xmlAddPrevSibling(prot, al);
        else xmlAddChild(xf, al);
        xmlSetProp(xf, BAD_CAST "applyAlignment", BAD_CAST "1");
    }
    if (req->protection_set) {
        xmlNodePtr old = xl_child(xf, "protection");
        if (old) {
            xmlUnlinkNode(old);
            xmlFreeNode(old);
        }
        xmlNodePtr pr = xmlNewChild(xf, xf->ns, BAD_CAST "protection", NULL);
        if (req->locked >= 0) xmlSetProp(pr, BAD_CAST "locked", BAD_CAST(req->locked ? "1" : "0"));
        if (req->hidden >= 0) xmlSetProp(pr, BAD_CAST "hidden", BAD_CAST(req->hidden ? "1" : "0"));
        xmlSetProp(xf, BAD_CAST "applyProtection", BAD_CAST "1");
    }
    unsigned idx = append(xfs, "xf", xf);
    b->xf_fmt = mb_realloc(b->xf_fmt, (idx + 1) * sizeof *b->xf_fmt);
    for (size_t i = b->nxf; i <= idx; i++) b->xf_fmt[i] = 0;
    b->xf_fmt[idx] = (int)attr_u(xf, "numFmtId");
    b->nxf = idx + 1;
    b->styles_dirty = 1;
    *out = idx;
    return MB_OK;
}

int xl_style_bold(xl_book *b, unsigned *out, char **why)
{
    xl_style_req req = {.bold = 1};
    return xl_style_derive(b, 0, &req, out, why);
}

int xl_style_dxf_fill(xl_book *b, const char *argb, unsigned *out, char **why)
{
    if (xl_styles_load(b, why)) return MB_EINVAL;
    xmlNodePtr dxfs = section(b, "dxfs");
    xmlNodePtr dxf = xl_new_el(dxfs, "dxf");
    xmlNodePtr fill = xmlNewChild(dxf, dxf->ns, BAD_CAST "fill", NULL);
    xmlNodePtr pf = val_el(fill, "patternFill", "patternType", "solid");
    val_el(pf, "fgColor", "rgb", argb);
    val_el(pf, "bgColor", "rgb", argb);
    *out = append(dxfs, "dxf", dxf);
    b->styles_dirty = 1;
    return MB_OK;
}
