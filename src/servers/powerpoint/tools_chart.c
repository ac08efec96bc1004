/*
 * tools_chart.c - add_chart (tools/structural_tools.py, utils/content_utils.py
 * add_chart + format_chart) and update_chart_data (tools/chart_tools.py):
 * python-pptx 1.0's slide.shapes.add_chart with a CategoryChartData and
 * chart.replace_data.
 *
 * A new chart is a chart part ppt/charts/chartN.xml holding the chartSpace
 * python-pptx's ChartXmlWriter writes for the type (the same elements, axis
 * ids and defaults; whitespace dropped as python-pptx's parser drops it), an
 * embedded workbook ppt/embeddings/Microsoft_Excel_SheetN.xlsx related to it
 * (categories in A2.., series names in row 1 from B, values below them, as
 * python-pptx's CategoryWorkbookWriter lays them out; written by the excel
 * server's workbook code), and a p:graphicFrame "Chart N" on the slide.
 * format_chart then does what upstream's does: a title, the legend added or
 * removed, axis titles (category axis first; a chart without one, a pie,
 * stops there), and nothing for data labels or legend position (upstream sets
 * a plain Python attribute on the series and ignores the position).
 *
 * replace_data rewrites c:tx, c:cat and c:val of each series (cloning the
 * last series for extra ones, dropping surplus series and emptied plots) and
 * replaces the embedded workbook with a new one.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "servers/common/pyfmt.h"
#include "servers/common/pyschema.h"
#include "servers/excel/excel.h"
#include "servers/powerpoint/pp.h"

#define NS_C "http://schemas.openxmlformats.org/drawingml/2006/chart"
#define CT_CHART "application/vnd.openxmlformats-officedocument.drawingml.chart+xml"
#define CT_XLSX "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
#define URI_CHART "http://schemas.openxmlformats.org/drawingml/2006/chart"
#define MAX_POINTS 1000000u /* categories x series one call may write */

/* ------------------------------------------------------------ chart data */

/* CategoryChartData: labels, and per series a name and its data points as
 * Python would print them (NULL for None, which is skipped). */
typedef struct cd_series {
    char *name;
    char **vals; /* str(value) */
    json_t **raw; /* the values themselves, for the workbook */
    size_t n;
} cd_series;

typedef struct chart_data {
    const char **cats;
    size_t ncats;
    cd_series *ser;
    size_t nser;
} chart_data;

static void cd_free(chart_data *d)
{
    for (size_t i = 0; i < d->nser; i++) {
        free(d->ser[i].name);
        for (size_t k = 0; k < d->ser[i].n; k++) free(d->ser[i].vals[k]);
        free(d->ser[i].vals);
        free(d->ser[i].raw);
    }
    free(d->ser);
    free(d->cats);
}

/* str(value) of a data point; NULL for None. */
static char *py_str(json_t *v)
{
    mb_buf b = {0};
    if (json_is_null(v)) return NULL;
    if (json_is_string(v)) return mb_strdup(json_string_value(v));
    if (json_is_true(v)) return mb_strdup("True");
    if (json_is_false(v)) return mb_strdup("False");
    if (json_is_integer(v)) return mb_asprintf("%lld", (long long)json_integer_value(v));
    if (json_is_real(v)) mb_py_float_str(&b, json_real_value(v));
    else mb_py_repr_json(&b, v);
    char *s = mb_strdup(b.data ? b.data : "");
    mb_buf_free(&b);
    return s;
}

static void cd_add(chart_data *d, const char *name, json_t *values)
{
    d->ser = mb_realloc(d->ser, (d->nser + 1) * sizeof *d->ser);
    cd_series *s = &d->ser[d->nser++];
    memset(s, 0, sizeof *s);
    s->name = mb_strdup(name ? name : "");
    s->n = json_array_size(values);
    s->vals = mb_calloc(s->n + 1, sizeof *s->vals);
    s->raw = mb_calloc(s->n + 1, sizeof *s->raw);
    for (size_t k = 0; k < s->n; k++) {
        s->raw[k] = json_array_get(values, k);
        s->vals[k] = py_str(s->raw[k]);
    }
}

/* ------------------------------------------------------------- XML text */

static void esc(mb_buf *b, const char *s) /* xml.sax.saxutils.escape */
{
    for (; *s; s++) {
        if (*s == '&') mb_buf_puts(b, "&amp;");
        else if (*s == '<') mb_buf_puts(b, "&lt;");
        else if (*s == '>') mb_buf_puts(b, "&gt;");
        else mb_buf_putc(b, *s);
    }
}

static void col_of(size_t series_index, char out[4]) { xl_col_letter((unsigned)(2 + series_index), out); }

static void tx_xml(mb_buf *b, const cd_series *s, size_t idx)
{
    char col[4];
    col_of(idx, col);
    mb_buf_printf(b, "<c:tx><c:strRef><c:f>Sheet1!$%s$1</c:f><c:strCache><c:ptCount val=\"1\"/>"
                     "<c:pt idx=\"0\"><c:v>", col);
    esc(b, s->name);
    mb_buf_puts(b, "</c:v></c:pt></c:strCache></c:strRef></c:tx>");
}

static void cat_xml(mb_buf *b, const chart_data *d)
{
    mb_buf_printf(b, "<c:cat><c:strRef><c:f>Sheet1!$A$2:$A$%zu</c:f><c:strCache><c:ptCount val=\"%zu\"/>",
                  d->ncats + 1, d->ncats);
    for (size_t i = 0; i < d->ncats; i++) {
        mb_buf_printf(b, "<c:pt idx=\"%zu\"><c:v>", i);
        esc(b, d->cats[i]);
        mb_buf_puts(b, "</c:v></c:pt>");
    }
    mb_buf_puts(b, "</c:strCache></c:strRef></c:cat>");
}

static void val_xml(mb_buf *b, const cd_series *s, size_t idx)
{
    char col[4];
    col_of(idx, col);
    mb_buf_printf(b, "<c:val><c:numRef><c:f>Sheet1!$%s$2:$%s$%zu</c:f><c:numCache>"
                     "<c:formatCode>General</c:formatCode><c:ptCount val=\"%zu\"/>",
                  col, col, s->n + 1, s->n);
    for (size_t k = 0; k < s->n; k++) {
        if (!s->vals[k]) continue;
        mb_buf_printf(b, "<c:pt idx=\"%zu\"><c:v>", k);
        esc(b, s->vals[k]);
        mb_buf_puts(b, "</c:v></c:pt>");
    }
    mb_buf_puts(b, "</c:numCache></c:numRef></c:val>");
}

/* The chart types add_chart offers and what python-pptx writes for each. */
typedef enum { K_BAR, K_LINE, K_PIE, K_DOUGHNUT, K_AREA, K_SCATTER, K_RADAR } kind;

static const struct chart_type {
    const char *name;
    kind k;
    const char *grouping;  /* bar/line/area */
    int bar_dir_bar;       /* bar: horizontal */
    int no_marker;         /* line/radar: <c:marker><c:symbol val="none"/> per series */
} TYPES[] = {
    {"column", K_BAR, "clustered", 0, 0},     {"stacked_column", K_BAR, "stacked", 0, 0},
    {"bar", K_BAR, "clustered", 1, 0},        {"stacked_bar", K_BAR, "stacked", 1, 0},
    {"line", K_LINE, "standard", 0, 1},       {"line_markers", K_LINE, "standard", 0, 0},
    {"pie", K_PIE, NULL, 0, 0},               {"doughnut", K_DOUGHNUT, NULL, 0, 0},
    {"area", K_AREA, "standard", 0, 0},       {"stacked_area", K_AREA, "stacked", 0, 0},
    {"scatter", K_SCATTER, NULL, 0, 0},       {"radar", K_RADAR, NULL, 0, 1},
    {"radar_markers", K_RADAR, NULL, 0, 0},
};

#define HEAD "<?xml version='1.0' encoding='UTF-8' standalone='yes'?>\n<c:chartSpace " \
             "xmlns:c=\"http://schemas.openxmlformats.org/drawingml/2006/chart\" "     \
             "xmlns:a=\"http://schemas.openxmlformats.org/drawingml/2006/main\" "      \
             "xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\">"
#define TXPR(endp) "<c:txPr><a:bodyPr/><a:lstStyle/><a:p><a:pPr><a:defRPr sz=\"1800\"/></a:pPr>" endp "</a:p></c:txPr>"
#define DLBLS "<c:dLbls><c:showLegendKey val=\"0\"/><c:showVal val=\"0\"/><c:showCatName val=\"0\"/>" \
              "<c:showSerName val=\"0\"/><c:showPercent val=\"0\"/><c:showBubbleSize val=\"0\"/>"
#define LEGEND "<c:legend><c:legendPos val=\"r\"/><c:layout/><c:overlay val=\"0\"/></c:legend>"
#define NO_MARKER "<c:marker><c:symbol val=\"none\"/></c:marker>"
#define CAT_AX(id, pos, cross, numfmt)                                                          \
    "<c:catAx><c:axId val=\"" id "\"/><c:scaling><c:orientation val=\"minMax\"/></c:scaling>"   \
    "<c:delete val=\"0\"/><c:axPos val=\"" pos "\"/>" numfmt "<c:majorTickMark val=\"out\"/>"   \
    "<c:minorTickMark val=\"none\"/><c:tickLblPos val=\"nextTo\"/><c:crossAx val=\"" cross "\"/>" \
    "<c:crosses val=\"autoZero\"/><c:auto val=\"1\"/><c:lblAlgn val=\"ctr\"/>"                  \
    "<c:lblOffset val=\"100\"/><c:noMultiLvlLbl val=\"0\"/></c:catAx>"

/* What python-pptx's ChartXmlWriter writes, minus whitespace. The x-values
 * of a scatter chart come from XyChartData; upstream hands it a
 * CategoryChartData, so python-pptx fails: *why gets its message. */
static int chart_xml(const struct chart_type *t, const chart_data *d, mb_buf *b, char **why)
{
    mb_buf s = {0};
    size_t nser = t->k == K_PIE ? (d->nser ? 1 : 0) : d->nser;
    if (t->k == K_SCATTER && d->nser) {
        *why = mb_strdup("'CategoryWorkbookWriter' object has no attribute 'x_values_ref'");
        return -1;
    }
    if (t->k == K_PIE && !d->nser) {
        *why = mb_strdup("list index out of range");
        return -1;
    }
    for (size_t i = 0; i < nser; i++) {
        mb_buf_printf(&s, "<c:ser><c:idx val=\"%zu\"/><c:order val=\"%zu\"/>", i, i);
        tx_xml(&s, &d->ser[i], i);
        if (t->no_marker) mb_buf_puts(&s, NO_MARKER);
        cat_xml(&s, d);
        val_xml(&s, &d->ser[i], i);
        if (t->k == K_LINE || t->k == K_RADAR) mb_buf_puts(&s, "<c:smooth val=\"0\"/>");
        mb_buf_puts(&s, "</c:ser>");
    }
    const char *ser = s.data ? s.data : "";
    mb_buf_puts(b, HEAD);
    switch (t->k) {
    case K_BAR: {
        int stacked = !strcmp(t->grouping, "stacked");
        mb_buf_printf(b,
                      "<c:date1904 val=\"0\"/><c:chart><c:autoTitleDeleted val=\"0\"/><c:plotArea><c:barChart>"
                      "<c:barDir val=\"%s\"/><c:grouping val=\"%s\"/>%s%s"
                      "<c:axId val=\"-2068027336\"/><c:axId val=\"-2113994440\"/></c:barChart>",
                      t->bar_dir_bar ? "bar" : "col", t->grouping, ser,
                      stacked ? "<c:overlap val=\"100\"/>" : "");
        if (t->bar_dir_bar) mb_buf_puts(b, CAT_AX("-2068027336", "l", "-2113994440", ""));
        else mb_buf_puts(b, CAT_AX("-2068027336", "b", "-2113994440", ""));
        mb_buf_printf(b,
                      "<c:valAx><c:axId val=\"-2113994440\"/><c:scaling/><c:delete val=\"0\"/>"
                      "<c:axPos val=\"%s\"/><c:majorGridlines/><c:majorTickMark val=\"out\"/>"
                      "<c:minorTickMark val=\"none\"/><c:tickLblPos val=\"nextTo\"/>"
                      "<c:crossAx val=\"-2068027336\"/><c:crosses val=\"autoZero\"/></c:valAx></c:plotArea>"
                      "<c:dispBlanksAs val=\"gap\"/></c:chart>" TXPR("<a:endParaRPr lang=\"en-US\"/>"),
                      t->bar_dir_bar ? "b" : "l");
        break;
    }
    case K_LINE:
        mb_buf_printf(b,
                      "<c:date1904 val=\"0\"/><c:chart><c:autoTitleDeleted val=\"0\"/><c:plotArea><c:lineChart>"
                      "<c:grouping val=\"%s\"/><c:varyColors val=\"0\"/>%s<c:marker val=\"1\"/>"
                      "<c:smooth val=\"0\"/><c:axId val=\"2118791784\"/><c:axId val=\"2140495176\"/>"
                      "</c:lineChart>" CAT_AX("2118791784", "b", "2140495176", "")
                      "<c:valAx><c:axId val=\"2140495176\"/><c:scaling/><c:delete val=\"0\"/>"
                      "<c:axPos val=\"l\"/><c:majorGridlines/><c:majorTickMark val=\"out\"/>"
                      "<c:minorTickMark val=\"none\"/><c:tickLblPos val=\"nextTo\"/>"
                      "<c:crossAx val=\"2118791784\"/><c:crosses val=\"autoZero\"/></c:valAx></c:plotArea>"
                      LEGEND "<c:plotVisOnly val=\"1\"/><c:dispBlanksAs val=\"gap\"/>"
                      "<c:showDLblsOverMax val=\"0\"/></c:chart>" TXPR("<a:endParaRPr lang=\"en-US\"/>"),
                      t->grouping, ser);
        break;
    case K_PIE:
        mb_buf_printf(b,
                      "<c:chart><c:autoTitleDeleted val=\"0\"/><c:plotArea><c:pieChart><c:varyColors val=\"1\"/>"
                      "%s</c:pieChart></c:plotArea><c:dispBlanksAs val=\"gap\"/></c:chart>"
                      TXPR("<a:endParaRPr lang=\"en-US\"/>"), ser);
        break;
    case K_DOUGHNUT:
        mb_buf_printf(b,
                      "<c:date1904 val=\"0\"/><c:roundedCorners val=\"0\"/><c:chart><c:autoTitleDeleted val=\"0\"/>"
                      "<c:plotArea><c:layout/><c:doughnutChart><c:varyColors val=\"1\"/>%s" DLBLS
                      "<c:showLeaderLines val=\"1\"/></c:dLbls><c:firstSliceAng val=\"0\"/><c:holeSize val=\"50\"/>"
                      "</c:doughnutChart></c:plotArea>" LEGEND "<c:plotVisOnly val=\"1\"/>"
                      "<c:dispBlanksAs val=\"gap\"/><c:showDLblsOverMax val=\"0\"/></c:chart>"
                      TXPR("<a:endParaRPr/>"), ser);
        break;
    case K_AREA:
        mb_buf_printf(b,
                      "<c:date1904 val=\"0\"/><c:roundedCorners val=\"0\"/><c:chart><c:autoTitleDeleted val=\"0\"/>"
                      "<c:plotArea><c:layout/><c:areaChart><c:grouping val=\"%s\"/><c:varyColors val=\"0\"/>%s"
                      DLBLS "</c:dLbls><c:axId val=\"-2101159928\"/><c:axId val=\"-2100718248\"/></c:areaChart>"
                      CAT_AX("-2101159928", "b", "-2100718248", "<c:numFmt formatCode=\"General\" sourceLinked=\"1\"/>")
                      "<c:valAx><c:axId val=\"-2100718248\"/><c:scaling><c:orientation val=\"minMax\"/></c:scaling>"
                      "<c:delete val=\"0\"/><c:axPos val=\"l\"/><c:majorGridlines/>"
                      "<c:numFmt formatCode=\"General\" sourceLinked=\"1\"/><c:majorTickMark val=\"out\"/>"
                      "<c:minorTickMark val=\"none\"/><c:tickLblPos val=\"nextTo\"/><c:crossAx val=\"-2101159928\"/>"
                      "<c:crosses val=\"autoZero\"/><c:crossBetween val=\"midCat\"/></c:valAx></c:plotArea>"
                      LEGEND "<c:plotVisOnly val=\"1\"/><c:dispBlanksAs val=\"zero\"/>"
                      "<c:showDLblsOverMax val=\"0\"/></c:chart>" TXPR("<a:endParaRPr/>"),
                      t->grouping, ser);
        break;
    case K_RADAR:
        mb_buf_printf(b,
                      "<c:date1904 val=\"0\"/><c:roundedCorners val=\"0\"/><mc:AlternateContent "
                      "xmlns:mc=\"http://schemas.openxmlformats.org/markup-compatibility/2006\"><mc:Choice "
                      "xmlns:c14=\"http://schemas.microsoft.com/office/drawing/2007/8/2/chart\" Requires=\"c14\">"
                      "<c14:style val=\"118\"/></mc:Choice><mc:Fallback><c:style val=\"18\"/></mc:Fallback>"
                      "</mc:AlternateContent><c:chart><c:autoTitleDeleted val=\"0\"/><c:plotArea><c:layout/>"
                      "<c:radarChart><c:radarStyle val=\"marker\"/><c:varyColors val=\"0\"/>%s"
                      "<c:axId val=\"2073612648\"/><c:axId val=\"-2112772216\"/></c:radarChart>"
                      "<c:catAx><c:axId val=\"2073612648\"/><c:scaling><c:orientation val=\"minMax\"/></c:scaling>"
                      "<c:delete val=\"0\"/><c:axPos val=\"b\"/><c:majorGridlines/>"
                      "<c:numFmt formatCode=\"m/d/yy\" sourceLinked=\"1\"/><c:majorTickMark val=\"out\"/>"
                      "<c:minorTickMark val=\"none\"/><c:tickLblPos val=\"nextTo\"/><c:crossAx val=\"-2112772216\"/>"
                      "<c:crosses val=\"autoZero\"/><c:auto val=\"1\"/><c:lblAlgn val=\"ctr\"/>"
                      "<c:lblOffset val=\"100\"/><c:noMultiLvlLbl val=\"0\"/></c:catAx>"
                      "<c:valAx><c:axId val=\"-2112772216\"/><c:scaling><c:orientation val=\"minMax\"/></c:scaling>"
                      "<c:delete val=\"0\"/><c:axPos val=\"l\"/><c:majorGridlines/>"
                      "<c:numFmt formatCode=\"General\" sourceLinked=\"1\"/><c:majorTickMark val=\"cross\"/>"
                      "<c:minorTickMark val=\"none\"/><c:tickLblPos val=\"nextTo\"/><c:crossAx val=\"2073612648\"/>"
                      "<c:crosses val=\"autoZero\"/><c:crossBetween val=\"between\"/></c:valAx></c:plotArea>"
                      "<c:plotVisOnly val=\"1\"/><c:dispBlanksAs val=\"gap\"/><c:showDLblsOverMax val=\"0\"/>"
                      "</c:chart>" TXPR("<a:endParaRPr lang=\"en-US\"/>"), ser);
        break;
    case K_SCATTER: /* no series: python-pptx writes the frame */
        mb_buf_puts(b,
                    "<c:chart><c:plotArea><c:scatterChart><c:scatterStyle val=\"lineMarker\"/>"
                    "<c:varyColors val=\"0\"/><c:axId val=\"-2128940872\"/><c:axId val=\"-2129643912\"/>"
                    "</c:scatterChart><c:valAx><c:axId val=\"-2128940872\"/><c:scaling>"
                    "<c:orientation val=\"minMax\"/></c:scaling><c:delete val=\"0\"/><c:axPos val=\"b\"/>"
                    "<c:numFmt formatCode=\"General\" sourceLinked=\"1\"/><c:majorTickMark val=\"out\"/>"
                    "<c:minorTickMark val=\"none\"/><c:tickLblPos val=\"nextTo\"/><c:crossAx val=\"-2129643912\"/>"
                    "<c:crosses val=\"autoZero\"/><c:crossBetween val=\"midCat\"/></c:valAx><c:valAx>"
                    "<c:axId val=\"-2129643912\"/><c:scaling><c:orientation val=\"minMax\"/></c:scaling>"
                    "<c:delete val=\"0\"/><c:axPos val=\"l\"/><c:majorGridlines/>"
                    "<c:numFmt formatCode=\"General\" sourceLinked=\"1\"/><c:majorTickMark val=\"out\"/>"
                    "<c:minorTickMark val=\"none\"/><c:tickLblPos val=\"nextTo\"/><c:crossAx val=\"-2128940872\"/>"
                    "<c:crosses val=\"autoZero\"/><c:crossBetween val=\"midCat\"/></c:valAx></c:plotArea>"
                    LEGEND "<c:plotVisOnly val=\"1\"/><c:dispBlanksAs val=\"gap\"/><c:showDLblsOverMax val=\"0\"/>"
                    "</c:chart>" TXPR("<a:endParaRPr lang=\"en-US\"/>"));
        break;
    }
    mb_buf_puts(b, "</c:chartSpace>");
    mb_buf_free(&s);
    return 0;
}

/* ------------------------------------------------------------- workbook */

/* CategoryWorkbookWriter's sheet, written by the excel server's code. */
static int workbook_bytes(const chart_data *d, char **data, size_t *len, char **why)
{
    xl_book *b = xl_book_new("", "Sheet1");
    xl_sheet *s = b->nsheets ? &b->sheets[0] : NULL;
    int rc = s ? xl_sheet_load(b, s, why) : -1;
    if (!s && !*why) *why = mb_strdup("cannot create the chart workbook");
    for (size_t i = 0; !rc && i < d->ncats; i++) {
        json_t *v = json_string(d->cats[i]);
        rc = xl_cell_set(b, s, (unsigned)i + 2, 1, v, why);
        json_decref(v);
    }
    for (size_t k = 0; !rc && k < d->nser; k++) {
        json_t *v = json_string(d->ser[k].name);
        rc = xl_cell_set(b, s, 1, (unsigned)k + 2, v, why);
        json_decref(v);
        for (size_t j = 0; !rc && j < d->ser[k].n; j++)
            if (!json_is_null(d->ser[k].raw[j]))
                rc = xl_cell_set(b, s, (unsigned)j + 2, (unsigned)k + 2, d->ser[k].raw[j], why);
    }
    if (!rc) rc = xl_book_bytes(b, data, len, why);
    xl_book_free(b);
    return rc;
}

/* ------------------------------------------------------- element order */

/* Inserts `el` (a child of `parent` to be) before the first existing child
 * whose local name comes after el's in `seq` (NULL-terminated), else last:
 * python-pptx's ZeroOrOne insertion. */
static void insert_ordered(xmlNodePtr parent, xmlNodePtr el, const char *const *seq)
{
    size_t me = 0;
    while (seq[me] && strcmp(seq[me], (const char *)el->name)) me++;
    for (xmlNodePtr c = parent->children; c; c = c->next) {
        if (c->type != XML_ELEMENT_NODE) continue;
        for (size_t k = me + 1; seq[me] && seq[k]; k++)
            if (!strcmp(seq[k], (const char *)c->name)) {
                xmlAddPrevSibling(c, el);
                return;
            }
    }
    xmlAddChild(parent, el);
}

static xmlNodePtr c_new(xmlNodePtr ctx, const char *local)
{
    xmlNsPtr ns = xmlSearchNsByHref(ctx->doc, xmlDocGetRootElement(ctx->doc), (const xmlChar *)NS_C);
    return xmlNewDocNode(ctx->doc, ns, (const xmlChar *)local, NULL);
}

static const char *const CHART_SEQ[] = {"title", "autoTitleDeleted", "pivotFmts", "view3D", "floor",
                                         "sideWall", "backWall", "plotArea", "legend", "plotVisOnly",
                                         "dispBlanksAs", "showDLblsOverMax", "extLst", NULL};
static const char *const TITLE_SEQ[] = {"tx", "layout", "overlay", "spPr", "txPr", "extLst", NULL};
static const char *const AX_SEQ[] = {"axId", "scaling", "delete", "axPos", "majorGridlines", "minorGridlines",
                                     "title", "numFmt", "majorTickMark", "minorTickMark", "tickLblPos",
                                     "spPr", "txPr", "crossAx", "crosses", "crossesAt", "auto", "lblAlgn",
                                     "lblOffset", "baseTimeUnit", "majorUnit", "majorTimeUnit", "minorUnit",
                                     "minorTimeUnit", "tickLblSkip", "tickMarkSkip", "noMultiLvlLbl",
                                     "crossBetween", "dispUnits", "extLst", NULL};
static const char *const SER_SEQ[] = {"idx", "order", "tx", "spPr", "invertIfNegative", "pictureOptions",
                                      "marker", "explosion", "dPt", "dLbls", "trendline", "errBars", "cat",
                                      "val", "xVal", "yVal", "shape", "smooth", "bubbleSize", "bubble3D",
                                      "extLst", NULL};

/* title.text_frame.text = s on a chart or axis element: c:title (with
 * python-pptx's default layout/overlay), c:tx/c:rich, the text. */
static void set_title(xmlNodePtr owner, const char *const *seq, const char *s)
{
    xmlNodePtr title = pp_child(owner, NS_C, "title");
    if (!title) {
        title = c_new(owner, "title");
        insert_ordered(owner, title, seq);
        xmlAddChild(title, c_new(owner, "layout"));
        xmlNodePtr ov = xmlAddChild(title, c_new(owner, "overlay"));
        xmlSetProp(ov, (const xmlChar *)"val", (const xmlChar *)"0");
    }
    xmlNodePtr tx = pp_child(title, NS_C, "tx");
    if (!tx) {
        tx = c_new(owner, "tx");
        insert_ordered(title, tx, TITLE_SEQ);
    }
    xmlNodePtr ref = pp_child(tx, NS_C, "strRef");
    if (ref) {
        xmlUnlinkNode(ref);
        xmlFreeNode(ref);
    }
    xmlNodePtr rich = pp_child(tx, NS_C, "rich");
    if (!rich) {
        rich = xmlAddChild(tx, c_new(owner, "rich"));
        pp_new(rich, PP_NS_A, "bodyPr");
        pp_new(rich, PP_NS_A, "lstStyle");
        pp_new(pp_new(pp_new(rich, PP_NS_A, "p"), PP_NS_A, "pPr"), PP_NS_A, "defRPr");
    }
    pp_set_text(rich, s);
}

static int truthy(json_t *v) { return json_is_string(v) && json_string_length(v) > 0; }

/* utils/content_utils.py format_chart (its errors swallowed, as upstream's). */
static void format_chart(xmlDocPtr doc, json_t *args)
{
    xmlNodePtr chart = pp_child(xmlDocGetRootElement(doc), NS_C, "chart");
    if (!chart) return;
    json_t *title = json_object_get(args, "title");
    if (truthy(title)) set_title(chart, CHART_SEQ, json_string_value(title));
    xmlNodePtr legend = pp_child(chart, NS_C, "legend");
    if (json_is_true(json_object_get(args, "has_legend"))) {
        if (!legend) insert_ordered(chart, c_new(chart, "legend"), CHART_SEQ);
    } else if (legend) {
        xmlUnlinkNode(legend);
        xmlFreeNode(legend);
    }
    /* has_data_labels: upstream sets series.has_data_labels, an attribute
     * python-pptx's series objects do not have: nothing is written. */
    json_t *xt = json_object_get(args, "x_axis_title"), *yt = json_object_get(args, "y_axis_title");
    xmlNodePtr plot = pp_child(chart, NS_C, "plotArea");
    xmlNodePtr cat = NULL, val[2] = {NULL, NULL};
    size_t nval = 0;
    xmlNodePtr date = NULL;
    for (xmlNodePtr c = plot ? plot->children : NULL; c; c = c->next) {
        if (pp_is(c, NS_C, "catAx") && !cat) cat = c;
        else if (pp_is(c, NS_C, "dateAx") && !date) date = c;
        else if (pp_is(c, NS_C, "valAx")) {
            if (nval < 2) val[nval] = c;
            nval++;
        }
    }
    xmlNodePtr x_axis = cat ? cat : date ? date : val[0];
    if (truthy(xt)) {
        if (!x_axis) return; /* "chart has no category axis" */
        set_title(x_axis, AX_SEQ, json_string_value(xt));
    }
    if (truthy(yt)) {
        xmlNodePtr y_axis = nval > 1 ? val[1] : val[0];
        if (!y_axis) return; /* "chart has no value axis" */
        set_title(y_axis, AX_SEQ, json_string_value(yt));
    }
}

/* --------------------------------------------------------------- add_chart */

/* ChartPart.new + EmbeddedXlsxPart: the chart part's name, or NULL with *why. */
static char *add_chart_part(pp_pres *p, const struct chart_type *t, const chart_data *d, json_t *args,
                            char **why)
{
    mb_buf x = {0};
    if (chart_xml(t, d, &x, why)) {
        mb_buf_free(&x);
        return NULL;
    }
    char *xlsx = NULL;
    size_t xlen = 0;
    if (workbook_bytes(d, &xlsx, &xlen, why)) {
        mb_buf_free(&x);
        return NULL;
    }
    mb_err err = {0};
    xmlDocPtr doc = NULL;
    if (mb_ooxml_parse(x.data, x.len, "chart", &doc, &err)) {
        *why = mb_strdup(err.msg);
        mb_buf_free(&x);
        free(xlsx);
        return NULL;
    }
    mb_buf_free(&x);
    char *part = mb_ooxml_unique_name(p->pkg, "ppt/charts/chart%u.xml");
    char *emb = mb_ooxml_unique_name(p->pkg, "ppt/embeddings/Microsoft_Excel_Sheet%u.xlsx");
    mb_ooxml_put(p->pkg, emb, xlsx, xlen);
    free(xlsx);
    mb_ooxml_put_xml(p->pkg, part, doc);
    char *target = mb_ooxml_relative(part, emb), *rid = NULL;
    if (mb_ooxml_ct_override(p->pkg, part, CT_CHART, &err) || mb_ooxml_ct_default(p->pkg, "xlsx", CT_XLSX, &err) ||
        mb_ooxml_rel_add(p->pkg, part, PP_REL "package", target, &rid, &err)) {
        *why = mb_strdup(err.msg);
        free(target), free(emb), free(part);
        return NULL;
    }
    /* c:externalData r:id, c:autoUpdate val=0 (get_or_add_externalData) */
    xmlNodePtr root = xmlDocGetRootElement(doc);
    xmlNodePtr ed = xmlAddChild(root, c_new(root, "externalData"));
    xmlSetNsProp(ed, xmlSearchNsByHref(doc, root, (const xmlChar *)PP_NS_R), (const xmlChar *)"id",
                 (const xmlChar *)rid);
    xmlSetProp(xmlAddChild(ed, c_new(root, "autoUpdate")), (const xmlChar *)"val", (const xmlChar *)"0");
    if (args) format_chart(doc, args);
    mb_ooxml_touch(p->pkg, part);
    free(rid), free(target), free(emb);
    return part;
}

static void chart_frame(pp_pres *p, const char *slide, const char *rid, json_t *args)
{
    xmlNodePtr tree = pp_sptree(pp_part_xml(p, slide));
    long id = pp_next_shape_id(tree);
    xmlNodePtr gf = pp_new(tree, PP_NS_P, "graphicFrame");
    xmlNodePtr nv = pp_new(gf, PP_NS_P, "nvGraphicFramePr");
    pp_set_id_name(pp_new(nv, PP_NS_P, "cNvPr"), id, "Chart");
    xmlSetProp(pp_new(pp_new(nv, PP_NS_P, "cNvGraphicFramePr"), PP_NS_A, "graphicFrameLocks"),
               (const xmlChar *)"noGrp", (const xmlChar *)"1");
    pp_new(nv, PP_NS_P, "nvPr");
    xmlNodePtr xf = pp_new(gf, PP_NS_P, "xfrm");
    xmlNodePtr off = pp_new(xf, PP_NS_A, "off"), ext = pp_new(xf, PP_NS_A, "ext");
    pp_set_ll(off, "x", pp_inches(json_number_value(json_object_get(args, "left"))));
    pp_set_ll(off, "y", pp_inches(json_number_value(json_object_get(args, "top"))));
    pp_set_ll(ext, "cx", pp_inches(json_number_value(json_object_get(args, "width"))));
    pp_set_ll(ext, "cy", pp_inches(json_number_value(json_object_get(args, "height"))));
    xmlNodePtr gd = pp_new(pp_new(gf, PP_NS_A, "graphic"), PP_NS_A, "graphicData");
    xmlSetProp(gd, (const xmlChar *)"uri", (const xmlChar *)URI_CHART);
    xmlNodePtr c = xmlNewChild(gd, NULL, (const xmlChar *)"chart", NULL);
    xmlNsPtr cns = xmlNewNs(c, (const xmlChar *)NS_C, (const xmlChar *)"c");
    xmlSetNs(c, cns);
    xmlNsPtr r = xmlSearchNsByHref(c->doc, c, (const xmlChar *)PP_NS_R);
    if (!r) r = xmlNewNs(c, (const xmlChar *)PP_NS_R, (const xmlChar *)"r");
    xmlSetNsProp(c, r, (const xmlChar *)"id", (const xmlChar *)rid);
    pp_touch(p, slide);
}

int pp_chart_add(pp_pres *p, const char *slide, const char *type, json_t *pos, json_t *cats, json_t *names,
                 json_t *values, json_t *fmt, char **why)
{
    const struct chart_type *t = &TYPES[0]; /* chart_type_map.get(..., COLUMN_CLUSTERED) */
    for (size_t i = 0; i < sizeof TYPES / sizeof TYPES[0]; i++)
        if (!strcasecmp(TYPES[i].name, type)) t = &TYPES[i];
    chart_data d = {0};
    d.ncats = json_array_size(cats);
    d.cats = mb_calloc(d.ncats + 1, sizeof *d.cats);
    for (size_t i = 0; i < d.ncats; i++) d.cats[i] = json_string_value(json_array_get(cats, i));
    for (size_t i = 0; i < json_array_size(names) && i < json_array_size(values); i++)
        cd_add(&d, json_string_value(json_array_get(names, i)), json_array_get(values, i));
    char *part = add_chart_part(p, t, &d, fmt, why);
    cd_free(&d);
    if (!part) return -1;
    char *target = mb_ooxml_relative(slide, part), *rid = NULL;
    mb_err err = {0};
    int rc = mb_ooxml_rel_add(p->pkg, slide, PP_REL "chart", target, &rid, &err);
    if (rc) *why = mb_strdup(err.msg);
    else chart_frame(p, slide, rid, pos);
    free(rid), free(target), free(part);
    return rc ? -1 : 0;
}

static size_t total_points(json_t *values)
{
    size_t n = 0;
    for (size_t i = 0; i < json_array_size(values); i++) n += json_array_size(json_array_get(values, i));
    return n;
}

int pp_t_add_chart(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    pp_pres *p = pp_target(call, args, res, NULL);
    const char *slide = p ? pp_target_slide(p, args, res) : NULL;
    if (!slide) return 0;
    const char *type = json_string_value(json_object_get(args, "chart_type"));
    json_t *cats = json_object_get(args, "categories");
    json_t *names = json_object_get(args, "series_names");
    json_t *values = json_object_get(args, "series_values");
    const struct chart_type *t = NULL;
    for (size_t i = 0; i < sizeof TYPES / sizeof TYPES[0]; i++)
        if (!strcasecmp(TYPES[i].name, type) && strlen(type) == strlen(TYPES[i].name)) t = &TYPES[i];
    /* str.lower() is Unicode-aware; ASCII folding is what matters for these names */
    if (!t) {
        mb_buf all = {0};
        for (size_t i = 0; i < sizeof TYPES / sizeof TYPES[0]; i++)
            mb_buf_printf(&all, "%s%s", i ? ", " : "", TYPES[i].name);
        pp_errorf(res, "Invalid chart type: '%s'. Valid types are: %s", type, all.data);
        mb_buf_free(&all);
        return 0;
    }
    if (json_array_size(names) != json_array_size(values)) {
        pp_errorf(res, "Number of series names (%zu) must match number of series values (%zu)",
                  json_array_size(names), json_array_size(values));
        return 0;
    }
    if (!json_array_size(cats)) {
        pp_errorf(res, "Categories list cannot be empty");
        return 0;
    }
    for (size_t i = 0; i < json_array_size(values); i++) {
        size_t n = json_array_size(json_array_get(values, i));
        if (n != json_array_size(cats)) {
            pp_errorf(res, "Series '%s' has %zu values but there are %zu categories",
                      json_string_value(json_array_get(names, i)), n, json_array_size(cats));
            return 0;
        }
    }
    if (total_points(values) > MAX_POINTS)
        return mb_mcp_fail(res, "add_chart: more than %u data points (mcpbox's limit)", MAX_POINTS);
    char *why = NULL;
    if (pp_chart_add(p, slide, t->name, args, cats, names, values, args, &why)) {
        pp_errorf(res, "Failed to add chart: %s", why);
        free(why);
        return 0;
    }
    xmlNodePtr *sh = NULL;
    size_t n = pp_shapes(pp_sptree(pp_part_xml(p, slide)), &sh);
    free(sh);
    char *msg = mb_asprintf("Added %s chart to slide %lld", type,
                            (long long)json_integer_value(json_object_get(args, "slide_index")));
    pp_answer(res, json_pack("{s:s,s:I,s:s,s:I,s:I}", "message", msg, "shape_index", (json_int_t)n - 1,
                             "chart_type", type, "series_count", (json_int_t)json_array_size(names),
                             "categories_count", (json_int_t)json_array_size(cats)));
    free(msg);
    return 0;
}

/* ------------------------------------------------------- update_chart_data */

static const char *const XCHARTS[] = {"area3DChart", "areaChart", "bar3DChart", "barChart", "bubbleChart",
                                      "doughnutChart", "line3DChart", "lineChart", "ofPieChart",
                                      "pie3DChart", "pieChart", "radarChart", "scatterChart", "stockChart",
                                      "surface3DChart", "surfaceChart", NULL};

static int is_xchart(xmlNodePtr n)
{
    if (n->type != XML_ELEMENT_NODE || !n->ns || strcmp((const char *)n->ns->href, NS_C)) return 0;
    for (size_t i = 0; XCHARTS[i]; i++)
        if (!strcmp(XCHARTS[i], (const char *)n->name)) return 1;
    return 0;
}

static long ser_int(xmlNodePtr ser, const char *child)
{
    xmlNodePtr c = pp_child(ser, NS_C, child);
    xmlChar *v = c ? xmlGetProp(c, (const xmlChar *)"val") : NULL;
    long x = v ? strtol((const char *)v, NULL, 10) : 0;
    xmlFree(v);
    return x;
}

static int by_order(const void *a, const void *b)
{
    long x = ser_int(*(xmlNodePtr const *)a, "order"), y = ser_int(*(xmlNodePtr const *)b, "order");
    return (x > y) - (x < y);
}

/* plotArea.sers: xCharts in document order, each one's c:ser by c:order. */
static size_t plot_sers(xmlNodePtr plot, xmlNodePtr **out)
{
    xmlNodePtr *v = NULL;
    size_t n = 0;
    for (xmlNodePtr x = plot->children; x; x = x->next) {
        if (!is_xchart(x)) continue;
        size_t start = n;
        for (xmlNodePtr s = x->children; s; s = s->next)
            if (pp_is(s, NS_C, "ser")) {
                v = mb_realloc(v, (n + 1) * sizeof *v);
                v[n++] = s;
            }
        qsort(v + start, n - start, sizeof *v, by_order); /* sorted() is stable; ties rare */
    }
    *out = v;
    return n;
}

static void drop(xmlNodePtr n)
{
    if (!n) return;
    xmlUnlinkNode(n);
    xmlFreeNode(n);
}

static void set_val(xmlNodePtr ser, const char *child, long v)
{
    xmlNodePtr c = pp_child(ser, NS_C, child);
    char buf[24];
    snprintf(buf, sizeof buf, "%ld", v);
    if (c) xmlSetProp(c, (const xmlChar *)"val", (const xmlChar *)buf);
}

static void repoint(xmlNodePtr n, xmlNsPtr from, xmlNsPtr to)
{
    for (; n; n = n->next) {
        if (n->type != XML_ELEMENT_NODE) continue;
        if (n->ns == from) n->ns = to;
        for (xmlAttrPtr a = n->properties; a; a = a->next)
            if (a->ns == from) a->ns = to;
        repoint(n->children, from, to);
    }
}

/* Drops the namespace declarations of an inserted element that its new
 * parent already makes (lxml strips them when it moves a subtree). */
static void strip_ns(xmlNodePtr el)
{
    xmlNsPtr *link = &el->nsDef;
    while (*link) {
        xmlNsPtr d = *link;
        xmlNsPtr up = el->parent ? xmlSearchNs(el->doc, el->parent, d->prefix) : NULL;
        if (!up || !xmlStrEqual(up->href, d->href)) {
            link = &d->next;
            continue;
        }
        if (el->ns == d) el->ns = up;
        for (xmlAttrPtr a = el->properties; a; a = a->next)
            if (a->ns == d) a->ns = up;
        repoint(el->children, d, up);
        *link = d->next;
        d->next = NULL;
        xmlFreeNs(d);
    }
}

/* Parses a fragment of c: XML into an element of `doc`. */
static xmlNodePtr fragment(xmlDocPtr doc, mb_buf *b)
{
    mb_buf w = {0};
    mb_buf_puts(&w, "<w xmlns:c=\"" NS_C "\">");
    mb_buf_append(&w, b->data, b->len);
    mb_buf_puts(&w, "</w>");
    xmlDocPtr f = NULL;
    xmlNodePtr out = NULL;
    if (!mb_ooxml_parse(w.data, w.len, "chart", &f, NULL)) {
        xmlNodePtr el = xmlDocGetRootElement(f)->children;
        if (el) out = xmlDocCopyNode(el, doc, 1);
        xmlFreeDoc(f);
    }
    mb_buf_free(&w);
    return out;
}

/* _BaseSeriesXmlRewriter.replace_series_data; 0, or -1 with *why. */
static int replace_series(xmlDocPtr doc, const chart_data *d, char **why)
{
    xmlNodePtr chart = pp_child(xmlDocGetRootElement(doc), NS_C, "chart");
    xmlNodePtr plot = chart ? pp_child(chart, NS_C, "plotArea") : NULL;
    if (!plot) {
        *why = mb_strdup("list index out of range");
        return -1;
    }
    xmlNodePtr first = NULL, last_x = NULL;
    for (xmlNodePtr x = plot->children; x; x = x->next)
        if (is_xchart(x)) {
            if (!first) first = x;
            last_x = x;
        }
    if (!first) { /* chart.chart_type: self.plots[0] */
        *why = mb_strdup("list index out of range");
        return -1;
    }
    int xy = pp_is(first, NS_C, "scatterChart") || pp_is(first, NS_C, "bubbleChart");
    xmlNodePtr *sers = NULL;
    size_t n = plot_sers(plot, &sers);
    if (d->nser > n) {
        xmlNodePtr *lx = NULL;
        size_t ln = 0;
        for (xmlNodePtr s = last_x->children; s; s = s->next)
            if (pp_is(s, NS_C, "ser")) lx = mb_realloc(lx, (ln + 1) * sizeof *lx), lx[ln++] = s;
        if (!ln) {
            free(lx), free(sers);
            *why = mb_strdup("'NoneType' object has no attribute 'idx'");
            return -1;
        }
        qsort(lx, ln, sizeof *lx, by_order);
        xmlNodePtr last = lx[ln - 1];
        free(lx);
        for (size_t k = n; k < d->nser; k++) {
            long mi = -1, mo = -1;
            for (size_t i = 0; i < n; i++) {
                if (ser_int(sers[i], "idx") > mi) mi = ser_int(sers[i], "idx");
                if (ser_int(sers[i], "order") > mo) mo = ser_int(sers[i], "order");
            }
            xmlNodePtr copy = xmlDocCopyNode(last, doc, 1);
            set_val(copy, "idx", mi + 1);
            set_val(copy, "order", mo + 1);
            xmlAddNextSibling(last, copy);
            strip_ns(copy);
            last = copy;
            free(sers);
            n = plot_sers(plot, &sers);
        }
    } else if (d->nser < n) {
        for (size_t i = d->nser; i < n; i++) drop(sers[i]);
        for (xmlNodePtr x = plot->children, nx; x; x = nx) {
            nx = x->next;
            if (is_xchart(x) && !pp_child(x, NS_C, "ser")) drop(x);
        }
        free(sers);
        n = plot_sers(plot, &sers);
    }
    int rc = 0;
    for (size_t i = 0; i < n && i < d->nser && !rc; i++) {
        xmlNodePtr ser = sers[i];
        mb_buf b = {0};
        drop(pp_child(ser, NS_C, "tx"));
        if (xy) {
            drop(pp_child(ser, NS_C, "xVal"));
            drop(pp_child(ser, NS_C, "yVal"));
            if (pp_is(first, NS_C, "bubbleChart")) drop(pp_child(ser, NS_C, "bubbleSize"));
        } else {
            drop(pp_child(ser, NS_C, "cat"));
            drop(pp_child(ser, NS_C, "val"));
        }
        tx_xml(&b, &d->ser[i], i);
        xmlNodePtr el = fragment(doc, &b);
        if (el) insert_ordered(ser, el, SER_SEQ), strip_ns(el);
        if (xy) {
            *why = mb_strdup("'CategoryWorkbookWriter' object has no attribute 'x_values_ref'");
            rc = -1;
        } else if (!d->ncats) { /* CategoryWorkbookWriter.categories_ref */
            *why = mb_strdup("chart data contains no categories");
            rc = -1;
        } else {
            mb_buf_reset(&b);
            cat_xml(&b, d);
            if ((el = fragment(doc, &b))) insert_ordered(ser, el, SER_SEQ), strip_ns(el);
            mb_buf_reset(&b);
            val_xml(&b, &d->ser[i], i);
            if ((el = fragment(doc, &b))) insert_ordered(ser, el, SER_SEQ), strip_ns(el);
        }
        mb_buf_free(&b);
    }
    free(sers);
    return rc;
}

/* The chart part of a graphicFrame shape, or NULL when it holds none. */
static char *shape_chart_part(pp_pres *p, const char *slide, xmlNodePtr shape)
{
    if (!pp_is(shape, PP_NS_P, "graphicFrame")) return NULL;
    xmlNodePtr gd = pp_path(shape, "a:graphic/a:graphicData");
    xmlChar *uri = gd ? xmlGetProp(gd, (const xmlChar *)"uri") : NULL;
    int is_chart = uri && !strcmp((const char *)uri, URI_CHART);
    xmlFree(uri);
    if (!is_chart) return NULL;
    xmlNodePtr c = pp_child(gd, NS_C, "chart");
    xmlChar *rid = c ? xmlGetNsProp(c, (const xmlChar *)"id", (const xmlChar *)PP_NS_R) : NULL;
    char *part = rid ? pp_rel_target(p->pkg, slide, NULL, (const char *)rid) : NULL;
    xmlFree(rid);
    return part;
}

typedef struct xlsx_rel {
    const char *id;
    char *target;
} xlsx_rel;

static int xlsx_rel_fn(const mb_ooxml_rel *rel, void *payload)
{
    xlsx_rel *x = payload;
    if (rel->external || strcmp(rel->id, x->id)) return 0;
    x->target = mb_strdup(rel->target);
    return 1;
}

/* ChartWorkbook.update_from_xlsx_blob */
static int update_workbook(pp_pres *p, const char *part, xmlDocPtr doc, const char *xlsx, size_t len,
                           char **why)
{
    xmlNodePtr root = xmlDocGetRootElement(doc);
    xmlNodePtr ed = pp_child(root, NS_C, "externalData");
    xmlChar *rid = ed ? xmlGetNsProp(ed, (const xmlChar *)"id", (const xmlChar *)PP_NS_R) : NULL;
    mb_err err = {0};
    if (rid) {
        xlsx_rel x = {(const char *)rid, NULL};
        mb_ooxml_rels_each(p->pkg, part, xlsx_rel_fn, &x, &err);
        xmlFree(rid);
        if (!x.target) {
            *why = mb_strdup("no relationship with that rId");
            return -1;
        }
        char *emb = mb_ooxml_resolve(part, x.target);
        free(x.target);
        mb_ooxml_put(p->pkg, emb, xlsx, len);
        free(emb);
        return 0;
    }
    char *emb = mb_ooxml_unique_name(p->pkg, "ppt/embeddings/Microsoft_Excel_Sheet%u.xlsx");
    mb_ooxml_put(p->pkg, emb, xlsx, len);
    char *target = mb_ooxml_relative(part, emb), *id = NULL;
    int rc = mb_ooxml_ct_default(p->pkg, "xlsx", CT_XLSX, &err) ||
             mb_ooxml_rel_add(p->pkg, part, PP_REL "package", target, &id, &err);
    if (rc) {
        *why = mb_strdup(err.msg);
    } else {
        static const char *const CS_SEQ[] = {"date1904", "lang", "roundedCorners", "style", "clrMapOvr",
                                             "pivotSource", "protection", "chart", "spPr", "txPr",
                                             "externalData", "printSettings", "userShapes", "extLst", NULL};
        ed = c_new(root, "externalData");
        insert_ordered(root, ed, CS_SEQ);
        xmlSetNsProp(ed, xmlSearchNsByHref(doc, root, (const xmlChar *)PP_NS_R), (const xmlChar *)"id",
                     (const xmlChar *)id);
        xmlSetProp(xmlAddChild(ed, c_new(root, "autoUpdate")), (const xmlChar *)"val", (const xmlChar *)"0");
    }
    free(id), free(target), free(emb);
    return rc ? -1 : 0;
}

int pp_t_update_chart_data(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    pp_server *s = pp_server_of(call);
    const char *given = json_string_value(json_object_get(args, "presentation_id"));
    pp_pres *p = pp_lookup(s, given && *given ? given : s->current);
    if (!p) {
        pp_errorf(res, "Presentation not found");
        return 0;
    }
    long long si = (long long)json_integer_value(json_object_get(args, "slide_index"));
    long long hi = (long long)json_integer_value(json_object_get(args, "shape_index"));
    if (si < 0 || (size_t)si >= p->nslides) {
        pp_errorf(res, "Slide index %lld out of range", si);
        return 0;
    }
    const char *slide = p->slides[si];
    xmlNodePtr *sh = NULL;
    size_t nsh = pp_shapes(pp_sptree(pp_part_xml(p, slide)), &sh);
    if (hi < 0 || (size_t)hi >= nsh) {
        free(sh);
        pp_errorf(res, "Shape index %lld out of range", hi);
        return 0;
    }
    char *part = shape_chart_part(p, slide, sh[hi]);
    free(sh);
    xmlDocPtr doc = part ? pp_part_xml(p, part) : NULL;
    if (!doc) {
        free(part);
        pp_errorf(res, "Shape is not a chart");
        return 0;
    }
    json_t *cats = json_object_get(args, "categories");
    json_t *series = json_object_get(args, "series_data");
    chart_data d = {0};
    d.ncats = json_array_size(cats);
    d.cats = mb_calloc(d.ncats + 1, sizeof *d.cats);
    for (size_t i = 0; i < d.ncats; i++) d.cats[i] = json_string_value(json_array_get(cats, i));
    size_t points = 0;
    for (size_t i = 0; i < json_array_size(series); i++) {
        json_t *sd = json_array_get(series, i);
        json_t *name = json_object_get(sd, "name"), *vals = json_object_get(sd, "values");
        if (!name || !vals) {
            cd_free(&d), free(part);
            pp_errorf(res, "Each series must have 'name' and 'values' keys");
            return 0;
        }
        json_t *iter = NULL; /* for value in values: a str gives its characters, a dict its keys */
        if (json_is_string(vals)) {
            iter = json_array();
            const char *c = json_string_value(vals), *e = c + json_string_length(vals);
            while (c < e) {
                size_t n = 1;
                while (c + n < e && ((unsigned char)c[n] & 0xC0) == 0x80) n++;
                json_array_append_new(iter, json_stringn(c, n));
                c += n;
            }
        } else if (json_is_object(vals)) {
            iter = json_array();
            const char *k;
            json_t *x;
            json_object_foreach(vals, k, x) json_array_append_new(iter, json_string(k));
        } else if (!json_is_array(vals)) {
            cd_free(&d), free(part);
            pp_errorf(res, "Failed to update chart data: '%s' object is not iterable", mb_py_type_name(vals));
            return 0;
        }
        if (iter) {
            json_object_set_new(sd, "values", iter); /* owned by args from here on */
            vals = iter;
        }
        if (!json_is_string(name) && !json_is_null(name)) { /* saxutils.escape(name) */
            cd_free(&d), free(part);
            pp_errorf(res, "Failed to update chart data: '%s' object has no attribute 'replace'",
                      mb_py_type_name(name));
            return 0;
        }
        points += json_array_size(vals);
        cd_add(&d, json_string_value(name), vals);
    }
    if (points > MAX_POINTS) {
        cd_free(&d), free(part);
        return mb_mcp_fail(res, "update_chart_data: more than %u data points (mcpbox's limit)", MAX_POINTS);
    }
    char *why = NULL;
    char *xlsx = NULL;
    size_t xlen = 0;
    int rc = replace_series(doc, &d, &why);
    if (!rc) rc = workbook_bytes(&d, &xlsx, &xlen, &why);
    if (!rc) rc = update_workbook(p, part, doc, xlsx, xlen, &why);
    mb_ooxml_touch(p->pkg, part);
    free(xlsx);
    cd_free(&d);
    free(part);
    if (rc) {
        pp_errorf(res, "Failed to update chart data: %s", why ? why : "error");
        free(why);
        return 0;
    }
    json_t *names = json_array();
    for (size_t i = 0; i < json_array_size(series); i++)
        json_array_append(names, json_object_get(json_array_get(series, i), "name"));
    char *msg = mb_asprintf("Updated chart data on slide %lld, shape %lld", si, hi);
    pp_answer(res, json_pack("{s:s,s:O,s:I,s:o}", "message", msg, "categories", cats, "series_count",
                             (json_int_t)json_array_size(series), "series_names", names));
    free(msg);
    return 0;
}
