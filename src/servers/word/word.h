/*
 * word.h - what the files of the word server share: a WordprocessingML
 * document model on the OOXML package layer (python-docx's reading and
 * writing rules, which is what office-word-mcp-server's results come from),
 * the generated tool surface of the two pinned upstream versions, and the
 * tool handlers.
 *
 * The model edits word/document.xml (and styles.xml when a tool changes a
 * style) in place with libxml2; every other part is copied byte for byte at
 * save. Text follows python-docx 1.x: a paragraph's text is its w:r and
 * w:hyperlink runs; a run's text maps w:tab/w:ptab to \t, w:br (text
 * wrapping) and w:cr to \n, w:noBreakHyphen to '-'.
 */
#ifndef MB_SERVERS_WORD_H
#define MB_SERVERS_WORD_H

#include <jansson.h>
#include <libxml/tree.h>

#include "mcp/mcp.h"
#include "ooxml/ooxml.h"
#include "util/util.h"

#define WD_NS_W "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
#define WD_NS_R "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
#define WD_REL_BASE "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
#define WD_CT_MAIN "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"

/* ---------------------------------------------------------------- surface */

typedef struct wd_tool_spec {
    const char *name;
    const char *description;
    const char *schema; /* inputSchema JSON text, as FastMCP 2.12 renders it */
} wd_tool_spec;

extern const wd_tool_spec WD_SURFACE_HEAD[]; /* 568d8d8a, 54 tools */
extern const wd_tool_spec WD_SURFACE_119[];  /* 1.1.9, 47 tools */

/* ------------------------------------------------------------------ model */

typedef struct wd_doc {
    mb_ooxml *pkg;
    char *main;          /* "word/document.xml" */
    xmlDocPtr xml;       /* borrowed from pkg */
    xmlNodePtr body;
    xmlNsPtr w;          /* the w: namespace of the main part */
    char *styles_part;   /* NULL when the document has none */
    xmlDocPtr styles;    /* borrowed, parsed on first use (wd_styles) */
    int styles_failed;
} wd_doc;

/* Opens `path` as python-docx's Document(path) would. On failure returns
 * non-zero with *why the text python-docx's exception would show (str(e)). */
int wd_doc_open(const char *path, wd_doc **out, char **why);
/* A new document from the built-in template (python-docx's default.docx). */
int wd_doc_new(wd_doc **out, char **why);
int wd_doc_save(wd_doc *d, const char *path, char **why);
void wd_doc_free(wd_doc *d);
void wd_doc_touch(wd_doc *d);        /* document.xml changed */
void wd_doc_touch_styles(wd_doc *d); /* styles.xml changed */
/* styles.xml, parsed on first use; NULL when the document has none. */
xmlDocPtr wd_styles(wd_doc *d);

/* Element tests and helpers in the w: namespace. */
int wd_is(xmlNodePtr n, const char *local);
xmlNodePtr wd_child(xmlNodePtr n, const char *local);
const char *wd_attr(xmlNodePtr n, const char *local); /* w:local, borrowed (NULL) */
xmlNodePtr wd_new(wd_doc *d, const char *local);       /* unlinked element */
xmlNodePtr wd_add(wd_doc *d, xmlNodePtr parent, const char *local);
void wd_set(wd_doc *d, xmlNodePtr n, const char *local, const char *value);

/* Body-level paragraphs / tables (doc.paragraphs / doc.tables). Caller frees
 * the array. */
size_t wd_paragraphs(wd_doc *d, xmlNodePtr **out);
size_t wd_tables(wd_doc *d, xmlNodePtr **out);
/* Direct w:p children of a container (cell.paragraphs). */
size_t wd_child_paragraphs(xmlNodePtr parent, xmlNodePtr **out);

/* Paragraph.text / Run.text appended to b. */
void wd_para_text(xmlNodePtr p, mb_buf *b);
void wd_run_text(xmlNodePtr r, mb_buf *b);
char *wd_para_text_dup(xmlNodePtr p);

/* Table geometry, python-docx style: rows are w:tr; row.cells repeats a cell
 * for every grid column it spans and a vMerge continuation gives the cell
 * above. */
size_t wd_table_rows(xmlNodePtr tbl, xmlNodePtr **out);
size_t wd_table_cols(xmlNodePtr tbl); /* gridCol count */
size_t wd_row_cells(xmlNodePtr tbl, xmlNodePtr tr, xmlNodePtr **out);
char *wd_cell_text(xmlNodePtr tc); /* "\n".join(p.text) */

/* Styles: the UI name of a paragraph's style (python-docx style.name), or
 * NULL when the document has no style for it (para.style is None). */
const char *wd_para_style_name(wd_doc *d, xmlNodePtr p);
/* The style element of type `type` whose UI name is `name`, or NULL. */
xmlNodePtr wd_style_by_name(wd_doc *d, const char *name, const char *type);
/* paragraph.style = name: 0, or -1 when there is no such paragraph style
 * (python-docx KeyError "no style with name '...'"). */
int wd_para_set_style(wd_doc *d, xmlNodePtr p, const char *name);
/* styleId of a style element. */
const char *wd_style_id(xmlNodePtr style);

/* ---------------------------------------------------------------- editing */

/* doc.add_paragraph(text): a new w:p before the body's sectPr. */
xmlNodePtr wd_add_paragraph(wd_doc *d, const char *text);
/* paragraph.add_run(text) */
xmlNodePtr wd_add_run(wd_doc *d, xmlNodePtr p, const char *text);
/* run.text = text (keeps rPr) */
void wd_run_set_text(wd_doc *d, xmlNodePtr r, const char *text);
/* Direct w:r children of a paragraph (paragraph.runs). */
size_t wd_para_runs(xmlNodePtr p, xmlNodePtr **out);
/* Run properties, each inserted at its schema place in w:rPr:
 * tri-state flags: 1 true, 0 false (python-docx writes w:val="0"). */
void wd_run_flag(wd_doc *d, xmlNodePtr r, const char *local, int on);
void wd_run_underline(wd_doc *d, xmlNodePtr r, int on);
void wd_run_color(wd_doc *d, xmlNodePtr r, const char *hex6);
void wd_run_size(wd_doc *d, xmlNodePtr r, double points);
void wd_run_font(wd_doc *d, xmlNodePtr r, const char *name);
void wd_run_superscript(wd_doc *d, xmlNodePtr r);
/* The pPr / tcPr of a node, created when absent. */
xmlNodePtr wd_get_ppr(wd_doc *d, xmlNodePtr p);
xmlNodePtr wd_get_tcpr(wd_doc *d, xmlNodePtr tc);
/* doc.add_table(rows, cols) with style "Table Grid" when present. */
xmlNodePtr wd_add_table(wd_doc *d, long rows, long cols);
/* cell.text = text */
void wd_cell_set_text(wd_doc *d, xmlNodePtr tc, const char *text);
/* RGBColor.from_string: 0 with out = upper-case hex, or -1 and *why. */
int wd_rgb_from_string(const char *s, char out[7], char **why);

/* ------------------------------------------------------------- utilities */

/* An argument (validated and defaulted by the dispatcher). */
static inline const char *wd_str(json_t *a, const char *k) { return json_string_value(json_object_get(a, k)); }
static inline json_int_t wd_int(json_t *a, const char *k) { return json_integer_value(json_object_get(a, k)); }
/* os.path.exists */
int wd_exists(const char *path);
/* doc.tables[i], or NULL with "Invalid table index. ..." answered. */
xmlNodePtr wd_table_at(wd_doc *d, json_int_t i, mb_mcp_result *res);
/* ensure_docx_extension */
char *wd_docx_name(const char *filename);
/* check_file_writeable: 1 ok, else 0 and *msg. */
int wd_writeable(const char *path, char **msg);
/* Python str.split() word count / code point helpers. */
size_t wd_word_count(const char *s);
/* s[:n] + ("..." if len(s) > n) in code points; caller frees. */
char *wd_preview(const char *s, size_t n);
/* Python's str.strip() / str.lower(); caller frees. */
char *wd_py_strip(const char *s);
char *wd_py_lower(const char *s);
/* json.dumps(v, indent=2) as the result text (steals v). */
void wd_json_result(mb_mcp_result *res, json_t *v);

/* ------------------------------------------------------------------ tools */

/* The prologue of upstream's mutating tools: "Document X does not exist",
 * "Cannot modify document: ...", then open ("Failed to <verb>: ..."). NULL
 * when `res` already holds the answer. */
wd_doc *wd_open_rw(mb_mcp_result *res, const char *f, int suggest_new, const char *verb);
/* doc.save(f), then `ok` or "Failed to <verb>: ..." as the answer. */
int wd_save_answer(wd_doc *d, const char *f, mb_mcp_result *res, const char *verb, const char *ok);

typedef struct wd_server {
    int v119; /* serving 1.1.9 */
} wd_server;

typedef int (*wd_fn)(mb_mcp_call *call, json_t *args, mb_mcp_result *res);

/* The handler of a tool name, or NULL when mcpbox does not implement it. */
wd_fn wd_handler(const char *name);

int wd_t_create_document(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_copy_document(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_get_document_info(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_get_document_text(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_get_document_outline(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_list_available_documents(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_get_document_xml(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_get_paragraph_text(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_find_text(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_convert_to_pdf(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_add_heading(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_add_paragraph(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_add_table(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_add_page_break(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_add_picture(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_delete_paragraph(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_search_and_replace(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_create_custom_style(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_format_text(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_format_table(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_set_table_cell_shading(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_insert_header_near_text(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_insert_line_or_paragraph_near_text(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_insert_numbered_list_near_text(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_apply_table_alternating_rows(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_highlight_table_header(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_merge_table_cells(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_merge_table_cells_horizontal(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_merge_table_cells_vertical(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_get_all_comments(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_get_comments_by_author(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_get_comments_for_paragraph(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_add_footnote_to_document(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_add_endnote_to_document(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_set_table_column_width(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_set_table_column_widths(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_set_table_width(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_auto_fit_table_columns(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_format_table_cell_text(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_set_table_cell_padding(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_replace_paragraph_block_below_header(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_replace_block_between_manual_anchors(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_protect_document(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_unprotect_document(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_add_footnote_after_text(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_add_footnote_before_text(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_add_footnote_enhanced(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_add_footnote_robust(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_delete_footnote_from_document(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_delete_footnote_robust(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_validate_document_footnotes(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_customize_footnote_style(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_set_table_cell_alignment(mb_mcp_call *, json_t *, mb_mcp_result *);
int wd_t_set_table_alignment_all(mb_mcp_call *, json_t *, mb_mcp_result *);

#endif /* MB_SERVERS_WORD_H */
