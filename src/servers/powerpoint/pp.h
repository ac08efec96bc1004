/*
 * pp.h - what the files of the powerpoint server share: a PresentationML
 * model on the OOXML package layer (python-pptx 1.0's reading and writing
 * rules, which is what office-powerpoint-mcp-server 2.0.6's results come
 * from), the in-memory presentations of one server process (upstream's
 * global dict and current id), result rendering as mcp.server.fastmcp does
 * it, the generated tool surface, and the tool handlers.
 *
 * Presentations are held in memory until save_presentation; slide XML is
 * edited in place with libxml2 and every part no tool touched is copied byte
 * for byte at save.
 */
#ifndef MB_SERVERS_POWERPOINT_PP_H
#define MB_SERVERS_POWERPOINT_PP_H

#include <jansson.h>
#include <libxml/tree.h>

#include "mcp/mcp.h"
#include "ooxml/ooxml.h"
#include "util/util.h"

#define PP_NS_P "http://schemas.openxmlformats.org/presentationml/2006/main"
#define PP_NS_A "http://schemas.openxmlformats.org/drawingml/2006/main"
#define PP_NS_R "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
#define PP_REL "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
#define PP_EMU_PER_INCH 914400

/* ---------------------------------------------------------------- surface */

typedef struct pp_tool_spec {
    const char *name;
    const char *description;
    const char *input_schema;  /* pydantic's <tool>Arguments, keys sorted */
    const char *output_schema; /* <tool>Output {result: Dict} */
} pp_tool_spec;

extern const pp_tool_spec PP_SURFACE[]; /* 2.0.6, 37 tools, registration order */
extern const unsigned char PP_TEMPLATE[]; /* python-pptx's default.pptx */
extern const size_t PP_TEMPLATE_LEN;

/* ------------------------------------------------------------------ model */

typedef struct pp_pres {
    mb_ooxml *pkg;
    char *main;        /* "ppt/presentation.xml" */
    xmlDocPtr xml;     /* borrowed from pkg */
    char **slides;     /* slide part names in p:sldIdLst order */
    size_t nslides;
    char **layouts;    /* the first master's layouts, sldLayoutIdLst order */
    size_t nlayouts;
    char *master;      /* the first slide master part, NULL if none */
} pp_pres;

/* Presentation(path) / Presentation(): 0, or non-zero with *why the text of
 * the exception python-pptx would raise (str(e)); caller frees *why. */
int pp_pres_open(const char *path, pp_pres **out, char **why);
int pp_pres_new(pp_pres **out, char **why);
int pp_pres_save(pp_pres *p, const char *path, char **why);
void pp_pres_free(pp_pres *p);

/* Part XML (borrowed) or NULL. */
xmlDocPtr pp_part_xml(pp_pres *p, const char *part);
void pp_touch(pp_pres *p, const char *part);

/* The part a relationship of `source` (by type, or by id when type is NULL)
 * points to (caller frees), or NULL. */
char *pp_rel_target(mb_ooxml *pkg, const char *source, const char *type, const char *id);
/* The layout part of a slide (caller frees) or NULL. */
char *pp_slide_layout(pp_pres *p, const char *slide);
/* cSld@name of a slide/layout/master part ("" when absent; borrowed). */
const char *pp_part_name(pp_pres *p, const char *part);

/* Element helpers. */
int pp_is(xmlNodePtr n, const char *ns, const char *local);
xmlNodePtr pp_child(xmlNodePtr n, const char *ns, const char *local);
xmlNodePtr pp_path(xmlNodePtr n, const char *ns_local_list); /* "p:nvSpPr/p:nvPr/p:ph" */
xmlNodePtr pp_sptree(xmlDocPtr doc);                         /* p:cSld/p:spTree */

/* Shapes of a spTree as python-pptx iterates them (sp, grpSp, graphicFrame,
 * cxnSp, pic, contentPart direct children). Caller frees the array. */
size_t pp_shapes(xmlNodePtr sptree, xmlNodePtr **out);
/* p:ph of a shape, or NULL when it is not a placeholder. */
xmlNodePtr pp_ph(xmlNodePtr shape);
long pp_ph_idx(xmlNodePtr ph);          /* default 0 */
const char *pp_ph_type(xmlNodePtr ph);  /* XML value, default "obj" */
/* "TITLE (1)" etc.: str(PP_PLACEHOLDER) for an XML type value. */
const char *pp_ph_type_str(const char *xml_type);
/* cNvPr@name ("" when absent; borrowed). */
const char *pp_shape_name(xmlNodePtr shape);
/* str(shape.shape_type); NULL when python-pptx raises NotImplementedError. */
const char *pp_shape_type_str(xmlNodePtr shape);
/* left/top/width/height as python-pptx reports them, placeholders
 * inheriting from the layout and master: 1 with *v, 0 for None. */
int pp_shape_geom(pp_pres *p, const char *slide, xmlNodePtr shape, int which, long long *v);
/* The a:tbl of a graphicFrame, or NULL. */
xmlNodePtr pp_table(xmlNodePtr shape);
/* txBody of an sp (p:txBody) or table cell (a:txBody), or NULL. */
xmlNodePtr pp_txbody(xmlNodePtr n);
/* TextFrame.text appended (paragraphs joined by \n, a:br as \v). */
void pp_txbody_text(xmlNodePtr txbody, mb_buf *b);
/* Python's str.strip() on UTF-8: start and length of the kept text. */
void pp_py_strip(const char *s, size_t n, size_t *start, size_t *len);

/* ---------------------------------------------------------------- editing */

xmlNodePtr pp_new(xmlNodePtr parent, const char *ns, const char *local); /* appended child */
/* text_frame.text = s: one a:p per \n-line, \v as a:br, keeping bodyPr and
 * lstStyle. Creates txBody on an sp when missing. */
void pp_set_text(xmlNodePtr txbody, const char *s);
/* text_frame.clear(): the first a:p emptied of runs, breaks and fields, the
 * other a:p removed. Returns 0 when txbody held no a:p at all. */
int pp_text_clear(xmlNodePtr txbody);
/* sp.get_or_add_txBody() */
xmlNodePtr pp_sp_txbody(xmlNodePtr sp);
/* slides.add_slide(layout): the new slide's part name (borrowed from p). */
int pp_add_slide(pp_pres *p, size_t layout, const char **slide, char **why);
/* Next shape id on a slide (max cNvPr@id + 1). */
long pp_next_shape_id(xmlNodePtr sptree);

/* ------------------------------------------------------------ server state */

typedef struct pp_entry {
    char *id;
    pp_pres *pres;
} pp_entry;

typedef struct pp_server {
    pp_entry *pres; /* insertion order, as a Python dict */
    size_t n, cap;
    char *current;  /* current_presentation_id, NULL = None */
} pp_server;

pp_server *pp_server_of(mb_mcp_call *call);
pp_pres *pp_lookup(pp_server *s, const char *id);
/* presentations[id] = pres (replacing keeps the position). */
void pp_store(pp_server *s, const char *id, pp_pres *pres);
/* The presentation a tool works on: args.presentation_id or the current
 * one; NULL after answering upstream's error dict. */
pp_pres *pp_target(mb_mcp_call *call, json_t *args, mb_mcp_result *res, const char **id);
/* Checks args.slide_index; NULL after answering the "Invalid slide index"
 * dict. */
const char *pp_target_slide(pp_pres *p, json_t *args, mb_mcp_result *res);

/* Result rendering: the dict as pydantic_core.to_json(indent=2) text and
 * structuredContent {"result": dict}. Steals `dict`. */
void pp_answer(mb_mcp_result *res, json_t *dict);
/* {"error": formatted} */
void pp_errorf(mb_mcp_result *res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* serde_json's pretty printer with a 2-space indent (pydantic_core). */
void pp_json_pretty(mb_buf *b, json_t *v, int depth);

typedef int (*pp_fn)(mb_mcp_call *call, json_t *args, mb_mcp_result *res);

/* a:tcPr fill of a table cell (cell.fill.solid(); fore_color.rgb = rgb) */
void pp_cell_fill(xmlNodePtr tc, json_t *rgb);
/* format_text_advanced on a txBody with the options in args (size from
 * size_key; force_bold sets bold). */
void pp_format_txbody(xmlNodePtr tx, json_t *args, const char *size_key, int force_bold);
long long pp_inches(double x);
int pp_valid_rgb(json_t *c);
void pp_set_ll(xmlNodePtr n, const char *attr, long long v);
void pp_set_id_name(xmlNodePtr cnvpr, long id, const char *base);

/* Shapes the tools and the templates add (positions in inches from the
 * numbers left/top/width/height of `pos`), appended to the slide's tree:
 * python-pptx's add_textbox (empty), add_shape through upstream's
 * add_shape_direct name map (NULL with *why for an unknown name),
 * add_table (empty cells; returns the a:tbl), add_picture (width/height
 * optional: native size or scaled; 0, or -1 with *why), add_chart with a
 * CategoryChartData and format_chart's options in `fmt` (0, or -1 with *why:
 * python-pptx's message). */
xmlNodePtr pp_textbox_new(pp_pres *p, const char *slide, json_t *pos);
xmlNodePtr pp_autoshape_new(pp_pres *p, const char *slide, const char *type, json_t *pos, char **why);
xmlNodePtr pp_table_new(pp_pres *p, const char *slide, long long rows, long long cols, long long x, long long y,
                        long long cx, long long cy);
int pp_picture_add(pp_pres *p, const char *slide, const unsigned char *bytes, size_t len,
                   const char *filename, json_t *pos, char **why);
int pp_chart_add(pp_pres *p, const char *slide, const char *type, json_t *pos, json_t *categories,
                 json_t *names, json_t *values, json_t *fmt, char **why);
/* a:srgbClr val=RRGGBB under parent from [r, g, b]. */
void pp_srgb(xmlNodePtr parent, json_t *rgb);

/* png.c: an 8-bit RGB PNG of w*h pixels (caller frees *out); upstream's
 * 1920x1080 gradient ("horizontal", "vertical", anything else diagonal). */
int pp_png_rgb(const unsigned char *rgb, unsigned w, unsigned h, char **out, size_t *len);
/* the same for 1-4 channels of 8 bits (L, LA, RGB, RGBA) */
int pp_png_write(const unsigned char *px, unsigned w, unsigned h, unsigned ch, char **out, size_t *len);
/* enhance.c: manage_image "enhance" after upstream's path checks */
int pp_image_enhance(json_t *args, mb_mcp_result *res);
int pp_gradient_png(const int start[3], const int end[3], const char *direction, char **out, size_t *len);

/* layout.c: upstream's template engine (template_utils.py). */
json_t *pp_templates(void); /* slide_layout_templates.json, new reference */
size_t pp_py_len(const char *s); /* len() of a UTF-8 str */
/* TextSizeCalculator.calculate_optimal_font_size / wrap_text_intelligently */
int pp_optimal_font_size(const char *text, double cw, double ch, int min_size, int max_size);
char *pp_wrap_text(const char *text, double max_width, double font_size);
/* paragraph.line_spacing = x on every paragraph of a txBody */
void pp_line_spacing(xmlNodePtr txbody, double spacing);
/* set_slide_gradient_background / create_professional_gradient_background:
 * a 10in x 7.5in gradient picture at 0,0 (errors swallowed, as upstream's). */
void pp_gradient_background(pp_pres *p, const char *slide, const int start[3], const int end[3],
                            const char *direction);
void pp_professional_gradient(pp_pres *p, const char *slide, const char *scheme, const char *style,
                              const char *direction);
/* apply_slide_template on a slide: upstream's result dict (success, ...). */
json_t *pp_apply_template(pp_pres *p, const char *slide, json_t *template_id, const char *scheme,
                          json_t *content, json_t *images);

/* tools_pres.c */
/* pres.core_properties.title = title */
void pp_core_set_title(pp_pres *p, const char *title);
int pp_t_create_presentation(mb_mcp_call *, json_t *, mb_mcp_result *);
int pp_t_create_presentation_from_template(mb_mcp_call *, json_t *, mb_mcp_result *);
int pp_t_open_presentation(mb_mcp_call *, json_t *, mb_mcp_result *);
int pp_t_save_presentation(mb_mcp_call *, json_t *, mb_mcp_result *);
int pp_t_get_presentation_info(mb_mcp_call *, json_t *, mb_mcp_result *);
int pp_t_get_template_file_info(mb_mcp_call *, json_t *, mb_mcp_result *);
int pp_t_set_core_properties(mb_mcp_call *, json_t *, mb_mcp_result *);
int pp_t_list_presentations(mb_mcp_call *, json_t *, mb_mcp_result *);
int pp_t_switch_presentation(mb_mcp_call *, json_t *, mb_mcp_result *);
int pp_t_get_server_info(mb_mcp_call *, json_t *, mb_mcp_result *);
/* tools_slide.c */
int pp_t_add_slide(mb_mcp_call *, json_t *, mb_mcp_result *);
int pp_t_get_slide_info(mb_mcp_call *, json_t *, mb_mcp_result *);
int pp_t_extract_slide_text(mb_mcp_call *, json_t *, mb_mcp_result *);
int pp_t_extract_presentation_text(mb_mcp_call *, json_t *, mb_mcp_result *);
int pp_t_populate_placeholder(mb_mcp_call *, json_t *, mb_mcp_result *);
int pp_t_add_bullet_points(mb_mcp_call *, json_t *, mb_mcp_result *);
/* tools_shapes.c */
int pp_t_manage_text(mb_mcp_call *, json_t *, mb_mcp_result *);
int pp_t_add_table(mb_mcp_call *, json_t *, mb_mcp_result *);
/* tools_misc.c */
int pp_t_format_table_cell(mb_mcp_call *, json_t *, mb_mcp_result *);
int pp_t_add_connector(mb_mcp_call *, json_t *, mb_mcp_result *);
int pp_t_manage_slide_masters(mb_mcp_call *, json_t *, mb_mcp_result *);
int pp_t_manage_slide_transitions(mb_mcp_call *, json_t *, mb_mcp_result *);
int pp_t_add_shape(mb_mcp_call *, json_t *, mb_mcp_result *);
/* tools_templates.c */
int pp_t_list_slide_templates(mb_mcp_call *, json_t *, mb_mcp_result *);
int pp_t_get_template_info(mb_mcp_call *, json_t *, mb_mcp_result *);
int pp_t_apply_professional_design(mb_mcp_call *, json_t *, mb_mcp_result *);
/* tools_chart.c */
int pp_t_add_chart(mb_mcp_call *, json_t *, mb_mcp_result *);
int pp_t_update_chart_data(mb_mcp_call *, json_t *, mb_mcp_result *);
/* tools_validate.c: manage_text "validate" on a shape of a slide */
int pp_text_validate(pp_pres *p, const char *slide, xmlNodePtr shape, json_t *args, mb_mcp_result *res);
/* tools_design.c */
int pp_t_apply_picture_effects(mb_mcp_call *, json_t *, mb_mcp_result *);
/* apply_professional_design's professional_slide / theme / enhance */
int pp_professional_op(mb_mcp_call *call, json_t *args, mb_mcp_result *res, const char *op);
/* tools_fonts.c */
int pp_t_manage_fonts(mb_mcp_call *, json_t *, mb_mcp_result *);
/* tools_layout.c */
int pp_t_apply_slide_template(mb_mcp_call *, json_t *, mb_mcp_result *);
int pp_t_create_slide_from_template(mb_mcp_call *, json_t *, mb_mcp_result *);
int pp_t_create_presentation_from_templates(mb_mcp_call *, json_t *, mb_mcp_result *);
int pp_t_auto_generate_presentation(mb_mcp_call *, json_t *, mb_mcp_result *);
int pp_t_optimize_slide_text(mb_mcp_call *, json_t *, mb_mcp_result *);
/* tools_image.c */
int pp_t_manage_image(mb_mcp_call *, json_t *, mb_mcp_result *);
/* tools_links.c */
/* run.hyperlink.address = url (NULL or "" removes it). */
void pp_run_set_address(pp_pres *p, const char *slide, xmlNodePtr r, const char *url);
int pp_t_manage_hyperlinks(mb_mcp_call *, json_t *, mb_mcp_result *);

#endif /* MB_SERVERS_POWERPOINT_PP_H */
