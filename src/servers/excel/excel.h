/*
 * excel.h - what the files of the excel server share: a SpreadsheetML
 * workbook model on top of the OOXML package layer, cell references, and the
 * operations behind the 25 tools of excel-mcp-server (haris-musa).
 *
 * The model edits the parts' XML in place (libxml2 documents), so everything
 * it does not understand - styles it does not use, drawings, comments,
 * conditional formats, extensions - survives a round trip untouched, and parts
 * no operation changed are copied byte for byte.
 *
 * Values follow openpyxl's reading rules (what upstream returns): numbers are
 * ints unless their text has '.', 'e' or 'E'; numbers under a date format
 * become datetimes (printed as Python's str() does); formulas read back as
 * "=..." text; shared formulas are translated to the dependent cell.
 * Strings are written as inline strings, so sharedStrings.xml is never
 * rewritten.
 *
 * Limits (all refusals are clear errors): XL_MAX_CELLS cells per range an
 * operation walks, XL_MAX_ROW x XL_MAX_COL as Excel's grid.
 */
#ifndef MB_SERVERS_EXCEL_H
#define MB_SERVERS_EXCEL_H

#include <jansson.h>
#include <libxml/tree.h>

#include "mcp/mcp.h"
#include "ooxml/ooxml.h"
#include "util/util.h"

#define XL_MAX_ROW 1048576u
#define XL_MAX_COL 16384u
/* Cells one call may read, write or format (a 10,000 x 25 sheet fits). */
#define XL_MAX_CELLS 300000u

#define XL_NS_MAIN "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
#define XL_NS_R "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
#define XL_REL_BASE "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
#define XL_CT_SHEET "application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"

/* ------------------------------------------------------------ references */

/* "AB" -> 28; 0 when not 1-3 letters within XFD... (openpyxl accepts up to ZZZ). */
unsigned xl_col_index(const char *letters, size_t n);
/* 28 -> "AB" into out (at least 4 bytes). */
void xl_col_letter(unsigned col, char out[4]);
/* openpyxl's parse_cell_range(cell_ref, end_ref): the leading [A-Z]+[0-9]+ of
 * each (case-insensitive, trailing text ignored). Returns 0, or -1 with *why
 * set (static text, "Invalid cell reference: X" style, caller formats). */
int xl_parse_cell(const char *ref, unsigned *row, unsigned *col);
/* upstream validate_cell_reference: letters then digits, nothing else. */
int xl_valid_cell_ref(const char *ref);
/* "A1:B2" (or "A1") -> bounds; 0 or -1. */
int xl_parse_range(const char *ref, unsigned *r1, unsigned *c1, unsigned *r2, unsigned *c2);
/* "A1" from row/col into out (at least 12 bytes). */
void xl_cell_name(unsigned row, unsigned col, char out[16]);

/* ----------------------------------------------------------------- model */

typedef struct xl_cell {
    unsigned col;
    xmlNodePtr node; /* <c> */
} xl_cell;

typedef struct xl_row {
    unsigned row;
    xmlNodePtr node; /* <row> */
    xl_cell *cells;  /* sorted by col */
    size_t n, cap;
} xl_row;

typedef struct xl_sheet {
    char *name;
    char *rid;
    char *part;       /* zip entry of the worksheet */
    xmlNodePtr entry; /* <sheet> in workbook.xml */
    int is_worksheet; /* a worksheet (not a chartsheet/dialog) */
    xmlDocPtr doc;    /* loaded on demand (owned by the package) */
    xmlNodePtr data;  /* <sheetData> */
    xl_row *rows;     /* sorted by row */
    size_t n, cap;
    int dirty;
} xl_sheet;

typedef struct xl_book {
    mb_ooxml *pkg;
    char *path;      /* the file */
    char *wb_part;   /* "xl/workbook.xml" */
    xmlDocPtr wb;
    xl_sheet *sheets;
    size_t nsheets;
    int active;      /* index of the active sheet */
    int wb_dirty;
    /* cell values or positions changed: the cached results of formulas
     * anywhere in the workbook may be wrong now (see xl_book_save) */
    int stale;
    /* shared strings, parsed on first use */
    char **sst;
    size_t nsst;
    int sst_loaded;
    /* styles */
    char *styles_part;
    xmlDocPtr styles;
    int styles_loaded;
    int styles_dirty;
    int *xf_fmt;     /* numFmtId per cellXfs entry */
    size_t nxf;
    json_t *fmts;    /* custom numFmt codes by id (string keys) */
    int date1904;
} xl_book;

/* Opens a workbook. On failure returns an mb_code with *why (caller frees)
 * set to the text upstream would show ("[Errno 2] No such file or directory:
 * '/x.xlsx'", "File is not a zip file", ...). `shown` is the path as the user
 * gave it, used in those texts. */
int xl_book_open(const char *path, const char *shown, xl_book **out, char **why);
/* A new workbook with one empty sheet called `sheet`, not yet saved. */
xl_book *xl_book_new(const char *path, const char *sheet);
/* Serializes changed sheets/workbook and writes the file. When b->stale is
 * set and the workbook holds formulas, it first does what openpyxl's save
 * does to them: every formula's cached result is dropped (readers that do
 * not recalculate, LibreOffice among them, would show the old number), the
 * workbook asks for a full recalculation on load, and the calculation chain
 * (which Excel rebuilds) goes. Worksheets without cached formula results are
 * left byte for byte. */
int xl_book_save(xl_book *b, char **why);
/* The workbook as .xlsx bytes (an embedded chart workbook); the path is
 * not written. *data caller frees. */
int xl_book_bytes(xl_book *b, char **data, size_t *len, char **why);
void xl_book_free(xl_book *b);

/* The sheet called `name` (exact match, as openpyxl's wb[name]) or NULL. */
xl_sheet *xl_sheet_find(xl_book *b, const char *name);
/* Loads and indexes the sheet's XML. */
int xl_sheet_load(xl_book *b, xl_sheet *s, char **why);
/* Appends a new empty worksheet. */
xl_sheet *xl_sheet_add(xl_book *b, const char *name, char **why);
/* Marks a sheet changed. */
void xl_sheet_touch(xl_sheet *s);
/* Removes a sheet as openpyxl's wb.remove does: its entry, relationship, part
 * and rels part, its sheet-scoped names; later sheets move down. */
void xl_sheet_remove(xl_book *b, xl_sheet *s);

/* Cell lookup: the <c> node or NULL; xl_cell_get_or_add creates it (and its
 * row) in order. */
xmlNodePtr xl_cell_get(xl_sheet *s, unsigned row, unsigned col);
xmlNodePtr xl_cell_get_or_add(xl_sheet *s, unsigned row, unsigned col);
/* Removes a cell entirely. */
void xl_cell_remove(xl_sheet *s, unsigned row, unsigned col);

/* openpyxl's min_row/min_column/max_row/max_column (every <c> and every
 * merged range counts; an empty sheet gives 1,1,1,1). */
void xl_sheet_extent(xl_sheet *s, unsigned *min_r, unsigned *min_c, unsigned *max_r,
                     unsigned *max_c);

/* The value of a cell as openpyxl gives it, as JSON (new reference): null,
 * true/false, integer, real, or string (datetimes already printed as
 * Python's str()). */
json_t *xl_cell_value(xl_book *b, xl_sheet *s, xmlNodePtr c, unsigned row, unsigned col);
/* Writes a JSON value into a cell as openpyxl's cell.value = v would
 * (strings starting with '=' become formulas). 0, or -1 with *why set. */
int xl_cell_set(xl_book *b, xl_sheet *s, unsigned row, unsigned col, json_t *v, char **why);
/* The style index (s attribute) of a cell, 0 when none. */
unsigned xl_cell_style(xmlNodePtr c);
void xl_cell_set_style(xmlNodePtr c, unsigned xf);

/* Shared strings: the i-th (borrowed) or NULL. */
const char *xl_sst_get(xl_book *b, size_t i);

/* -------------------------------------------------------------- styles */

int xl_styles_load(xl_book *b, char **why);
/* The number format code of a cellXfs entry ("General" for unknown). */
const char *xl_xf_format(xl_book *b, unsigned xf);
int xl_is_date_format(const char *fmt);
int xl_is_timedelta_format(const char *fmt);

/* What format_range asks for; NULL / -1 fields are left as they are. */
typedef struct xl_style_req {
    int bold, italic, underline; /* always set: the font is replaced */
    double font_size;            /* <= 0: none */
    const char *font_color;      /* ARGB */
    const char *fill_color;      /* ARGB, solid fill */
    const char *border_style;
    const char *border_color;    /* ARGB */
    const char *number_format;
    int align_set;               /* alignment element replaced */
    const char *horizontal;      /* may be NULL with align_set */
    int wrap;
    int protection_set;
    int locked, hidden;          /* -1: attribute absent */
} xl_style_req;
/* The cellXfs index of `base` with the request applied (appending fonts,
 * fills, borders, numFmts, xfs as needed). */
int xl_style_derive(xl_book *b, unsigned base, const xl_style_req *req, unsigned *out, char **why);
/* A dxf (differential format) with a solid fill; returns its index. */
int xl_style_dxf_fill(xl_book *b, const char *argb, unsigned *out, char **why);
/* The xf with only a bold font (for headers); appended when needed. */
int xl_style_bold(xl_book *b, unsigned *out, char **why);

/* ------------------------------------------------------- element order */

/* Inserts `child` under a <worksheet> at its schema position. */
void xl_ws_insert(xmlNodePtr ws, xmlNodePtr child);
/* The first child element with local name `name`, or NULL. */
xmlNodePtr xl_child(xmlNodePtr parent, const char *name);
/* Element with local name `name` in the parent's namespace. */
xmlNodePtr xl_new_el(xmlNodePtr parent_for_ns, const char *name);
int xl_is(xmlNodePtr n, const char *name);
/* An attribute's value (borrowed pointer into the tree) or NULL. */
const char *xl_attr(xmlNodePtr n, const char *name);

/* --------------------------------------------------------------- tables */

/* 1 when a defined name is exactly `name` (openpyxl's `name in defined_names`). */
int xl_defined_name_exists(xl_book *b, const char *name);
/* openpyxl's Workbook._duplicate_name: a table of any sheet with that name
 * (ASCII case-insensitive), or a defined name equal to its lower-case form. */
int xl_table_name_taken(xl_book *b, const char *name);
/* prefix + 8 random hex digits (upstream's uuid4().hex[:8]). */
void xl_random_name(const char *prefix, char *out, size_t n);
/* Adds a table over r1:c1..r2:c2 of a loaded sheet, as openpyxl writes one
 * (columns named after the header row, autoFilter, row stripes). */
int xl_table_add(xl_book *b, xl_sheet *s, unsigned r1, unsigned c1, unsigned r2, unsigned c2,
                 const char *name, const char *style, int col_stripes, char **why);

/* ------------------------------------------------------ merged cells */

/* The merged ranges of a sheet ("A1:B2"), as a JSON array of strings. */
json_t *xl_merged_list(xl_sheet *s);
int xl_merge_add(xl_sheet *s, const char *ref);
/* Removes the merge equal to ref (case-insensitive); 1 when found. */
int xl_merge_remove(xl_sheet *s, const char *ref);

/* ------------------------------------------------------- Python texts */

/* Python's str() of a float into a buffer. */
void xl_py_float(mb_buf *out, double v);
/* repr() of a str. */
void xl_py_repr(mb_buf *out, const char *s);

/* ---------------------------------------------------------------- tools */

typedef struct xl_server {
    mb_mcp_roots *roots;
    int v014; /* --upstream-version 0.1.4 (Toolathlon's pin): see server.c */
} xl_server;

/* Resolves a tool's filepath like upstream's get_excel_path (absolute paths
 * only in stdio mode) plus confinement to the allowed roots. For `create`,
 * missing parent directories are allowed (created later). 0, or MB_FAILED
 * after mb_mcp_fail. */
int xl_path(mb_mcp_call *call, mb_mcp_result *res, const char *given, int create, char **out);

extern const mb_mcp_tool xl_tools[];

#endif /* MB_SERVERS_EXCEL_H */
