/*
 * tools_misc.c - format_table_cell (tools/structural_tools.py), add_connector
 * (tools/connector_tools.py), manage_slide_masters (tools/master_tools.py) and
 * manage_slide_transitions (tools/transition_tools.py, which only echoes).
 * The last three look presentations up as `presentation_id or current` and
 * answer "Presentation not found", as upstream's newer modules do.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "servers/powerpoint/pp.h"

/* presentations.get(presentation_id or current) */
static pp_pres *target_or(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    pp_server *s = pp_server_of(call);
    const char *given = json_string_value(json_object_get(args, "presentation_id"));
    pp_pres *p = pp_lookup(s, given && *given ? given : s->current);
    if (!p) pp_errorf(res, "Presentation not found");
    return p;
}

static const char *slide_in_range(pp_pres *p, json_t *args, mb_mcp_result *res)
{
    json_int_t i = json_integer_value(json_object_get(args, "slide_index"));
    if (i < 0 || (size_t)i >= p->nslides) {
        pp_errorf(res, "Slide index %lld out of range", (long long)i);
        return NULL;
    }
    return p->slides[i];
}

static int message(mb_mcp_result *res, json_t *d, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int message(mb_mcp_result *res, json_t *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    mb_buf b = {0};
    mb_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    json_t *out = json_object();
    size_t n;
    char *ok = mb_utf8_repair(b.data ? b.data : "", b.len, &n);
    json_object_set_new(out, "message", json_stringn(ok, n));
    free(ok);
    mb_buf_free(&b);
    json_object_update(out, d);
    json_decref(d);
    pp_answer(res, out);
    return 0;
}

/* ------------------------------------------------------- format_table_cell */

static int truthy(json_t *v)
{
    if (!v || json_is_null(v) || json_is_false(v)) return 0;
    if (json_is_integer(v)) return json_integer_value(v) != 0;
    if (json_is_string(v)) return json_string_length(v) > 0;
    if (json_is_array(v)) return json_array_size(v) > 0;
    return 1;
}

int pp_t_format_table_cell(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    pp_pres *p = pp_target(call, args, res, NULL);
    const char *slide = p ? pp_target_slide(p, args, res) : NULL;
    if (!slide) return 0;
    xmlNodePtr *sh = NULL;
    size_t n = pp_shapes(pp_sptree(pp_part_xml(p, slide)), &sh);
    json_int_t si = json_integer_value(json_object_get(args, "shape_index"));
    if (si < 0 || (size_t)si >= n) {
        free(sh);
        pp_errorf(res, "Invalid shape index: %lld. Available shapes: 0-%lld", (long long)si, (long long)n - 1);
        return 0;
    }
    xmlNodePtr shape = sh[si];
    free(sh);
    if (!pp_is(shape, PP_NS_P, "graphicFrame")) {
        pp_errorf(res, "Shape at index %lld is not a table", (long long)si);
        return 0;
    }
    xmlNodePtr tbl = pp_table(shape);
    if (!tbl) { /* hasattr(shape, 'table') raises ValueError on a graphic frame */
        pp_errorf(res, "Failed to format table cell: shape does not contain a table");
        return 0;
    }
    xmlNodePtr rows[1024];
    size_t nr = 0, nc = 0;
    for (xmlNodePtr c = tbl->children; c; c = c->next)
        if (pp_is(c, PP_NS_A, "tr") && nr < 1024) rows[nr++] = c;
    for (xmlNodePtr c = pp_child(pp_child(tbl, PP_NS_A, "tblGrid"), PP_NS_A, "gridCol"); c; c = c->next)
        nc += pp_is(c, PP_NS_A, "gridCol");
    json_int_t r = json_integer_value(json_object_get(args, "row"));
    json_int_t col = json_integer_value(json_object_get(args, "col"));
    if (r < 0 || (size_t)r >= nr) {
        pp_errorf(res, "Invalid row index: %lld. Available rows: 0-%lld", (long long)r, (long long)nr - 1);
        return 0;
    }
    if (col < 0 || (size_t)col >= nc) {
        pp_errorf(res, "Invalid column index: %lld. Available columns: 0-%lld", (long long)col,
                  (long long)nc - 1);
        return 0;
    }
    xmlNodePtr tc = NULL;
    json_int_t k = 0;
    for (xmlNodePtr c = rows[r]->children; c && !tc; c = c->next)
        if (pp_is(c, PP_NS_A, "tc") && k++ == col) tc = c;
    if (!tc) {
        pp_errorf(res, "Failed to format table cell: list index out of range");
        return 0;
    }
    static const char *const ANY[] = {"font_size", "font_name", "bold", "italic", "color", "alignment", NULL};
    int any = 0;
    for (int i = 0; ANY[i]; i++) any |= truthy(json_object_get(args, ANY[i]));
    if (any) {
        xmlNodePtr tx = pp_txbody(tc);
        if (!tx) { /* cell.text_frame: get_or_add_txBody */
            tx = pp_new(tc, PP_NS_A, "txBody");
            xmlUnlinkNode(tx);
            if (tc->children) xmlAddPrevSibling(tc->children, tx);
            else xmlAddChild(tc, tx);
            pp_new(tx, PP_NS_A, "bodyPr");
            pp_new(tx, PP_NS_A, "lstStyle");
            pp_new(tx, PP_NS_A, "p");
        }
        json_t *fa = json_deep_copy(args);
        json_object_del(fa, "underline");
        pp_format_txbody(tx, fa, "font_size", 0);
        json_decref(fa);
    }
    json_t *bg = json_object_get(args, "bg_color");
    if (json_array_size(bg)) {
        if (!pp_valid_rgb(bg)) {
            pp_errorf(res, "Failed to format table cell: RGBColor() takes exactly 3 integer arguments in 0-255");
            return 0;
        }
        pp_cell_fill(tc, bg);
    }
    pp_touch(p, slide);
    return message(res, json_object(), "Formatted cell at row %lld, column %lld in table at shape index %lld on slide %lld",
                   (long long)r, (long long)col, (long long)si,
                   (long long)json_integer_value(json_object_get(args, "slide_index")));
}

/* ----------------------------------------------------------- add_connector */

int pp_t_add_connector(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    pp_pres *p = target_or(call, args, res);
    const char *slide = p ? slide_in_range(p, args, res) : NULL;
    if (!slide) return 0;
    const char *type = json_string_value(json_object_get(args, "connector_type"));
    static const struct {
        const char *name, *prst;
    } MAP[] = {{"straight", "line"}, {"elbow", "bentConnector3"}, {"curved", "curvedConnector3"}};
    const char *prst = NULL;
    for (size_t i = 0; i < 3; i++)
        if (!strcasecmp(type, MAP[i].name)) prst = MAP[i].prst;
    if (!prst) {
        pp_errorf(res, "Invalid connector type. Use: ['straight', 'elbow', 'curved']");
        return 0;
    }
    double sx = json_number_value(json_object_get(args, "start_x"));
    double sy = json_number_value(json_object_get(args, "start_y"));
    double ex = json_number_value(json_object_get(args, "end_x"));
    double ey = json_number_value(json_object_get(args, "end_y"));
    long long bx = pp_inches(sx), by = pp_inches(sy), fx = pp_inches(ex), fy = pp_inches(ey);
    xmlNodePtr tree = pp_sptree(pp_part_xml(p, slide));
    long id = pp_next_shape_id(tree);
    xmlNodePtr cx = pp_new(tree, PP_NS_P, "cxnSp");
    xmlNodePtr nv = pp_new(cx, PP_NS_P, "nvCxnSpPr");
    pp_set_id_name(pp_new(nv, PP_NS_P, "cNvPr"), id, "Connector");
    pp_new(nv, PP_NS_P, "cNvCxnSpPr");
    pp_new(nv, PP_NS_P, "nvPr");
    xmlNodePtr sppr = pp_new(cx, PP_NS_P, "spPr");
    xmlNodePtr xf = pp_new(sppr, PP_NS_A, "xfrm");
    if (bx > fx) xmlSetProp(xf, (const xmlChar *)"flipH", (const xmlChar *)"1");
    if (by > fy) xmlSetProp(xf, (const xmlChar *)"flipV", (const xmlChar *)"1");
    xmlNodePtr off = pp_new(xf, PP_NS_A, "off");
    pp_set_ll(off, "x", bx < fx ? bx : fx);
    pp_set_ll(off, "y", by < fy ? by : fy);
    xmlNodePtr ext = pp_new(xf, PP_NS_A, "ext");
    pp_set_ll(ext, "cx", llabs(fx - bx));
    pp_set_ll(ext, "cy", llabs(fy - by));
    xmlNodePtr geom = pp_new(sppr, PP_NS_A, "prstGeom");
    xmlSetProp(geom, (const xmlChar *)"prst", (const xmlChar *)prst);
    pp_new(geom, PP_NS_A, "avLst");
    xmlNodePtr style = pp_new(cx, PP_NS_P, "style");
    static const struct {
        const char *ref, *idx, *clr;
    } REFS[] = {{"lnRef", "2", "accent1"}, {"fillRef", "0", "accent1"}, {"effectRef", "1", "accent1"},
                {"fontRef", "minor", "tx1"}};
    for (size_t i = 0; i < 4; i++) {
        xmlNodePtr r = pp_new(style, PP_NS_A, REFS[i].ref);
        xmlSetProp(r, (const xmlChar *)"idx", (const xmlChar *)REFS[i].idx);
        xmlSetProp(pp_new(r, PP_NS_A, "schemeClr"), (const xmlChar *)"val", (const xmlChar *)REFS[i].clr);
    }
    double lw = json_number_value(json_object_get(args, "line_width"));
    json_t *color = json_object_get(args, "color");
    xmlNodePtr ln = NULL;
    if (lw != 0) {
        ln = pp_new(sppr, PP_NS_A, "ln");
        pp_set_ll(ln, "w", (long long)(lw * 12700)); /* Pt(x) = int(x * 12700) */
    }
    if (json_array_size(color) && pp_valid_rgb(color)) {
        if (!ln) ln = pp_new(sppr, PP_NS_A, "ln");
        xmlNodePtr fill = pp_new(ln, PP_NS_A, "solidFill");
        char hex[8];
        snprintf(hex, sizeof hex, "%02X%02X%02X", (int)json_integer_value(json_array_get(color, 0)),
                 (int)json_integer_value(json_array_get(color, 1)), (int)json_integer_value(json_array_get(color, 2)));
        xmlSetProp(pp_new(fill, PP_NS_A, "srgbClr"), (const xmlChar *)"val", (const xmlChar *)hex);
    }
    pp_touch(p, slide);
    xmlNodePtr *sh = NULL;
    size_t n = pp_shapes(tree, &sh);
    free(sh);
    json_t *d = json_object();
    json_object_set(d, "connector_type", json_object_get(args, "connector_type"));
    json_object_set_new(d, "start_point", json_pack("[ff]", sx, sy));
    json_object_set_new(d, "end_point", json_pack("[ff]", ex, ey));
    json_object_set_new(d, "shape_index", json_integer((json_int_t)n - 1));
    return message(res, d, "Added %s connector to slide %lld", type,
                   (long long)json_integer_value(json_object_get(args, "slide_index")));
}

/* ---------------------------------------------------- manage_slide_masters */

static size_t masters(pp_pres *p, char ***out)
{
    size_t n = 0;
    *out = NULL;
    xmlNodePtr ml = pp_child(xmlDocGetRootElement(p->xml), PP_NS_P, "sldMasterIdLst");
    for (xmlNodePtr c = ml ? ml->children : NULL; c; c = c->next) {
        if (!pp_is(c, PP_NS_P, "sldMasterId")) continue;
        xmlChar *rid = xmlGetNsProp(c, (const xmlChar *)"id", (const xmlChar *)PP_NS_R);
        char *part = rid ? pp_rel_target(p->pkg, p->main, NULL, (const char *)rid) : NULL;
        xmlFree(rid);
        if (!part) continue;
        *out = mb_realloc(*out, (n + 1) * sizeof **out);
        (*out)[n++] = part;
    }
    return n;
}

static size_t master_layouts(pp_pres *p, const char *master, char ***out)
{
    size_t n = 0;
    *out = NULL;
    xmlDocPtr mx = pp_part_xml(p, master);
    xmlNodePtr ll = mx ? pp_child(xmlDocGetRootElement(mx), PP_NS_P, "sldLayoutIdLst") : NULL;
    for (xmlNodePtr c = ll ? ll->children : NULL; c; c = c->next) {
        if (!pp_is(c, PP_NS_P, "sldLayoutId")) continue;
        xmlChar *rid = xmlGetNsProp(c, (const xmlChar *)"id", (const xmlChar *)PP_NS_R);
        char *part = rid ? pp_rel_target(p->pkg, master, NULL, (const char *)rid) : NULL;
        xmlFree(rid);
        if (!part) continue;
        *out = mb_realloc(*out, (n + 1) * sizeof **out);
        (*out)[n++] = part;
    }
    return n;
}

static void free_list(char **l, size_t n)
{
    for (size_t i = 0; i < n; i++) free(l[i]);
    free(l);
}

static size_t ph_count(pp_pres *p, const char *part)
{
    xmlNodePtr *sh = NULL;
    size_t n = pp_shapes(pp_sptree(pp_part_xml(p, part)), &sh), c = 0;
    for (size_t i = 0; i < n; i++) c += pp_ph(sh[i]) != NULL;
    free(sh);
    return c;
}

int pp_t_manage_slide_masters(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    pp_pres *p = target_or(call, args, res);
    if (!p) return 0;
    const char *op = json_string_value(json_object_get(args, "operation"));
    char **ms;
    size_t nm = masters(p, &ms);
    int rc = 0;
    if (!strcmp(op, "list")) {
        json_t *a = json_array();
        for (size_t i = 0; i < nm; i++) {
            char **ls;
            size_t nl = master_layouts(p, ms[i], &ls);
            free_list(ls, nl);
            json_array_append_new(a, json_pack("{s:I,s:I,s:s}", "index", (json_int_t)i, "layout_count",
                                               (json_int_t)nl, "name", pp_part_name(p, ms[i])));
        }
        json_t *d = json_object();
        json_object_set_new(d, "masters", a);
        json_object_set_new(d, "total_masters", json_integer((json_int_t)nm));
        rc = message(res, d, "Found %zu slide masters", nm);
        goto done;
    }
    json_int_t mi = json_integer_value(json_object_get(args, "master_index"));
    if (mi < 0 || (size_t)mi >= nm) {
        pp_errorf(res, "Master index %lld out of range", (long long)mi);
        goto done;
    }
    char **ls;
    size_t nl = master_layouts(p, ms[mi], &ls);
    if (!strcmp(op, "get_layouts")) {
        json_t *a = json_array();
        for (size_t i = 0; i < nl; i++)
            json_array_append_new(a, json_pack("{s:I,s:s,s:I}", "index", (json_int_t)i, "name",
                                               pp_part_name(p, ls[i]), "placeholder_count",
                                               (json_int_t)ph_count(p, ls[i])));
        json_t *d = json_object();
        json_object_set_new(d, "master_index", json_integer(mi));
        json_object_set_new(d, "layouts", a);
        rc = message(res, d, "Master %lld has %zu layouts", (long long)mi, nl);
    } else if (!strcmp(op, "get_info")) {
        json_t *li = json_object_get(args, "layout_index");
        if (json_is_integer(li)) {
            json_int_t l = json_integer_value(li);
            if (l < 0 || (size_t)l >= nl) {
                pp_errorf(res, "Layout index %lld out of range", (long long)l);
            } else {
                json_t *phs = json_array();
                xmlNodePtr *sh = NULL;
                size_t n = pp_shapes(pp_sptree(pp_part_xml(p, ls[l])), &sh);
                for (size_t i = 0; i < n; i++) {
                    xmlNodePtr ph = pp_ph(sh[i]);
                    if (!ph) continue;
                    json_array_append_new(phs, json_pack("{s:I,s:s,s:s}", "idx", (json_int_t)pp_ph_idx(ph), "type",
                                                         pp_ph_type_str(pp_ph_type(ph)), "name",
                                                         pp_shape_name(sh[i])));
                }
                free(sh);
                json_t *d = json_object();
                json_object_set_new(d, "master_index", json_integer(mi));
                json_object_set_new(d, "layout_index", json_integer(l));
                json_object_set_new(d, "layout_name", json_string(pp_part_name(p, ls[l])));
                json_object_set_new(d, "placeholders", phs);
                rc = message(res, d, "Layout info for master %lld, layout %lld", (long long)mi, (long long)l);
            }
        } else {
            json_t *d = json_object();
            json_object_set_new(d, "master_index", json_integer(mi));
            json_object_set_new(d, "layout_count", json_integer((json_int_t)nl));
            json_object_set_new(d, "name", json_string(pp_part_name(p, ms[mi])));
            rc = message(res, d, "Master %lld information", (long long)mi);
        }
    } else {
        pp_errorf(res, "Unsupported operation: %s. Use 'list', 'get_layouts', or 'get_info'", op);
    }
    free_list(ls, nl);
done:
    free_list(ms, nm);
    return rc;
}

/* ------------------------------------------------ manage_slide_transitions */

int pp_t_manage_slide_transitions(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    pp_pres *p = target_or(call, args, res);
    const char *slide = p ? slide_in_range(p, args, res) : NULL;
    if (!slide) return 0;
    const char *op = json_string_value(json_object_get(args, "operation"));
    json_t *si = json_object_get(args, "slide_index");
    long long i = (long long)json_integer_value(si);
    json_t *d = json_object();
    json_object_set(d, "slide_index", si);
    if (!strcmp(op, "get")) {
        json_object_set_new(d, "note", json_string("Transition reading has limited support in python-pptx"));
        return message(res, d, "Transition info for slide %lld", i);
    }
    if (!strcmp(op, "set")) {
        json_object_set(d, "transition_type", json_object_get(args, "transition_type"));
        json_object_set(d, "duration", json_object_get(args, "duration"));
        json_object_set_new(d, "note", json_string("Transition setting has limited support in python-pptx - "
                                                   "this is a placeholder for future enhancement"));
        return message(res, d, "Transition setting requested for slide %lld", i);
    }
    if (!strcmp(op, "remove")) {
        json_object_set_new(d, "note", json_string("Transition removal has limited support in python-pptx - "
                                                   "this is a placeholder for future enhancement"));
        return message(res, d, "Transition removal requested for slide %lld", i);
    }
    json_decref(d);
    pp_errorf(res, "Unsupported operation: %s. Use 'set', 'remove', or 'get'", op);
    return 0;
}

/* --------------------------------------------------------------- add_shape */

/* upstream's add_shape_direct map: names to MsoAutoShapeType integers, which
 * python-pptx turns into preset geometries; several integers are not the
 * shape the name says (2.0.6's bug, fixed in 2.0.7), reproduced here. */
static const struct {
    const char *name, *prst, *basename;
} SHAPES[] = {
    {"arrow", "can", "Can"},                       /* 13 */
    {"cloud", "upArrow", "Up Arrow"},              /* 35 */
    {"diamond", "diamond", "Diamond"},             /* 4 */
    {"flowchart_data", "accentCallout3", "Line Callout 3 (Accent Bar)"},     /* 115 */
    {"flowchart_decision", "accentCallout2", "Line Callout 2 (Accent Bar)"}, /* 114 */
    {"flowchart_document", "callout3", "Line Callout 3 (No Border)"},        /* 119 */
    {"flowchart_process", "borderCallout3", "Line Callout 3"},               /* 112 */
    {"heart", "heart", "Heart"},                   /* 21 */
    {"heptagon", "plus", "Cross"},                 /* 11 */
    {"hexagon", "hexagon", "Hexagon"},             /* 10 */
    {"lightning_bolt", "lightningBolt", "Lightning Bolt"}, /* 22 */
    {"moon", "moon", "Moon"},                      /* 24 */
    {"no_symbol", "noSmoking", "\"No\" Symbol"},   /* 19 */
    {"octagon", "pentagon", "Regular Pentagon"},   /* 12 */
    {"oval", "ellipse", "Oval"},                   /* 9 */
    {"pentagon", "downArrowCallout", "Down Arrow Callout"}, /* 56 */
    {"rectangle", "rect", "Rectangle"},            /* 1 */
    {"right_triangle", "octagon", "Octagon"},      /* 6 */
    {"rounded_rectangle", "parallelogram", "Parallelogram"}, /* 2 */
    {"smiley_face", "smileyFace", "Smiley Face"},  /* 17 */
    {"star", "pentagon", "Regular Pentagon"},      /* 12 */
    {"sun", "sun", "Sun"},                         /* 23 */
    {"triangle", "roundRect", "Rounded Rectangle"}, /* 5 */
};

void pp_srgb(xmlNodePtr parent, json_t *rgb)
{
    char hex[8];
    snprintf(hex, sizeof hex, "%02X%02X%02X", (int)json_integer_value(json_array_get(rgb, 0)),
             (int)json_integer_value(json_array_get(rgb, 1)), (int)json_integer_value(json_array_get(rgb, 2)));
    xmlSetProp(pp_new(parent, PP_NS_A, "srgbClr"), (const xmlChar *)"val", (const xmlChar *)hex);
}

xmlNodePtr pp_autoshape_new(pp_pres *p, const char *slide, const char *type, json_t *pos, char **why)
{
    size_t k = sizeof SHAPES / sizeof SHAPES[0], hit = k;
    for (size_t i = 0; i < k; i++)
        if (!strcasecmp(type, SHAPES[i].name)) hit = i;
    if (hit == k) {
        mb_buf names = {0};
        for (size_t i = 0; i < k; i++) mb_buf_printf(&names, "%s%s", i ? ", " : "", SHAPES[i].name);
        *why = mb_asprintf("Unsupported shape type: '%s'. Available shape types: %s", type, names.data);
        mb_buf_free(&names);
        return NULL;
    }
    xmlNodePtr tree = pp_sptree(pp_part_xml(p, slide));
    long id = pp_next_shape_id(tree);
    xmlNodePtr sp = pp_new(tree, PP_NS_P, "sp");
    xmlNodePtr nv = pp_new(sp, PP_NS_P, "nvSpPr");
    pp_set_ll(pp_new(nv, PP_NS_P, "cNvPr"), "id", id);
    char *name = mb_asprintf("%s %ld", SHAPES[hit].basename, id - 1);
    xmlSetProp(pp_child(nv, PP_NS_P, "cNvPr"), (const xmlChar *)"name", (const xmlChar *)name);
    free(name);
    pp_new(nv, PP_NS_P, "cNvSpPr");
    pp_new(nv, PP_NS_P, "nvPr");
    xmlNodePtr sppr = pp_new(sp, PP_NS_P, "spPr");
    xmlNodePtr xf = pp_new(sppr, PP_NS_A, "xfrm");
    xmlNodePtr off = pp_new(xf, PP_NS_A, "off");
    pp_set_ll(off, "x", pp_inches(json_number_value(json_object_get(pos, "left"))));
    pp_set_ll(off, "y", pp_inches(json_number_value(json_object_get(pos, "top"))));
    xmlNodePtr ext = pp_new(xf, PP_NS_A, "ext");
    pp_set_ll(ext, "cx", pp_inches(json_number_value(json_object_get(pos, "width"))));
    pp_set_ll(ext, "cy", pp_inches(json_number_value(json_object_get(pos, "height"))));
    xmlNodePtr geom = pp_new(sppr, PP_NS_A, "prstGeom");
    xmlSetProp(geom, (const xmlChar *)"prst", (const xmlChar *)SHAPES[hit].prst);
    pp_new(geom, PP_NS_A, "avLst");
    xmlNodePtr style = pp_new(sp, PP_NS_P, "style");
    static const struct {
        const char *ref, *idx, *clr;
    } REFS[] = {{"lnRef", "1", "accent1"}, {"fillRef", "3", "accent1"}, {"effectRef", "2", "accent1"},
                {"fontRef", "minor", "lt1"}};
    for (size_t i = 0; i < 4; i++) {
        xmlNodePtr r = pp_new(style, PP_NS_A, REFS[i].ref);
        xmlSetProp(r, (const xmlChar *)"idx", (const xmlChar *)REFS[i].idx);
        xmlSetProp(pp_new(r, PP_NS_A, "schemeClr"), (const xmlChar *)"val", (const xmlChar *)REFS[i].clr);
    }
    xmlNodePtr tx = pp_new(sp, PP_NS_P, "txBody");
    xmlNodePtr bp = pp_new(tx, PP_NS_A, "bodyPr");
    xmlSetProp(bp, (const xmlChar *)"rtlCol", (const xmlChar *)"0");
    xmlSetProp(bp, (const xmlChar *)"anchor", (const xmlChar *)"ctr");
    pp_new(tx, PP_NS_A, "lstStyle");
    xmlSetProp(pp_new(pp_new(tx, PP_NS_A, "p"), PP_NS_A, "pPr"), (const xmlChar *)"algn", (const xmlChar *)"ctr");
    pp_touch(p, slide);
    return sp;
}

int pp_t_add_shape(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    pp_pres *p = pp_target(call, args, res, NULL);
    const char *slide = p ? pp_target_slide(p, args, res) : NULL;
    if (!slide) return 0;
    const char *type = json_string_value(json_object_get(args, "shape_type"));
    static const char *const RGBS[] = {"fill_color", "line_color", "font_color", NULL};
    char *why = NULL;
    xmlNodePtr sp = NULL;
    size_t k = sizeof SHAPES / sizeof SHAPES[0], hit = k;
    for (size_t i = 0; i < k; i++)
        if (!strcasecmp(type, SHAPES[i].name)) hit = i;
    if (hit != k)
        for (int i = 0; RGBS[i]; i++) {
            json_t *c = json_object_get(args, RGBS[i]);
            if (json_array_size(c) && !pp_valid_rgb(c)) /* RGBColor(*c) raises */
                return mb_mcp_fail(res, "add_shape: %s must be [R, G, B] with values 0-255", RGBS[i]);
        }
    if (!(sp = pp_autoshape_new(p, slide, type, args, &why))) {
        pp_errorf(res, "%s", why);
        free(why);
        return 0;
    }
    xmlNodePtr tree = sp->parent;
    xmlNodePtr sppr = pp_child(sp, PP_NS_P, "spPr");
    xmlNodePtr tx = pp_child(sp, PP_NS_P, "txBody");
    xmlNodePtr bp = pp_child(tx, PP_NS_A, "bodyPr");
    /* format_shape: fill, line colour, line width */
    json_t *fill = json_object_get(args, "fill_color"), *lc = json_object_get(args, "line_color");
    json_t *lw = json_object_get(args, "line_width");
    if (json_array_size(fill)) pp_srgb(pp_new(sppr, PP_NS_A, "solidFill"), fill);
    xmlNodePtr ln = NULL;
    if (json_array_size(lc)) pp_srgb(pp_new(ln = pp_new(sppr, PP_NS_A, "ln"), PP_NS_A, "solidFill"), lc);
    if (json_is_number(lw)) {
        if (!ln) ln = pp_new(sppr, PP_NS_A, "ln");
        pp_set_ll(ln, "w", (long long)(json_number_value(lw) * 12700));
    }
    const char *text = json_string_value(json_object_get(args, "text"));
    if (text && *text) {
        pp_set_text(tx, text);
        json_t *fs = json_object_get(args, "font_size"), *fc = json_object_get(args, "font_color");
        if ((json_is_integer(fs) && json_integer_value(fs)) || json_array_size(fc)) {
            json_t *fa = json_object();
            if (json_is_integer(fs)) json_object_set(fa, "font_size", fs);
            if (json_array_size(fc)) json_object_set(fa, "color", fc);
            pp_format_txbody(tx, fa, "font_size", 0);
            json_decref(fa);
            xmlUnsetProp(bp, (const xmlChar *)"wrap"); /* format_text leaves word wrap alone */
        }
    }
    pp_touch(p, slide);
    xmlNodePtr *sh = NULL;
    size_t n = pp_shapes(tree, &sh);
    free(sh);
    json_t *d = json_object();
    json_object_set_new(d, "shape_index", json_integer((json_int_t)n - 1));
    return message(res, d, "Added %s shape to slide %lld", type,
                   (long long)json_integer_value(json_object_get(args, "slide_index")));
}
