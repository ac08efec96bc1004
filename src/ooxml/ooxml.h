/*
 * ooxml.h - the face of the OOXML package layer: open an Office Open XML
 * package (.xlsx, .docx, .pptx), read its parts as bytes or as libxml2
 * documents, replace, add or remove parts, and save it so that every part
 * not touched is copied verbatim (libzip copies the compressed bytes of
 * unchanged entries as they are).
 *
 * What it does:
 *   - Opens zips with libzip, refusing what is not a sane package before any
 *     part is inflated: truncated or corrupt archives, too many entries, a
 *     declared total uncompressed size over the cap, entries whose
 *     uncompressed/compressed ratio marks a zip bomb. Reads are bounded by the
 *     declared size, so an entry that inflates past it is refused too.
 *   - Parses parts with libxml2, never touching the network and refusing any
 *     document with a DOCTYPE (OOXML has none; a DTD is how entity bombs and
 *     external entities arrive), so entity expansion cannot happen.
 *   - Keeps parsed documents cached per part; a caller that edits a document
 *     marks it with mb_ooxml_touch() and it is serialized at save.
 *   - Helpers for [Content_Types].xml (Default/Override) and for relationship
 *     parts (_rels/x.rels): list, resolve, add, remove.
 *
 * What it does not do: understand any one vocabulary (SpreadsheetML,
 * WordprocessingML, PresentationML are the servers' business), signatures,
 * encryption (an encrypted package is an OLE file and is refused as "not a
 * zip"), or streaming of parts larger than memory.
 *
 * Part names are given without a leading '/', as zip entry names
 * ("xl/workbook.xml"); lookups ignore ASCII case as OPC requires.
 *
 * Ownership: an mb_ooxml owns its documents; pointers it returns are borrowed
 * and stay valid until the part is replaced/removed or the package is freed.
 * Threading: none; one package is used by one thread.
 */
#ifndef MB_OOXML_H
#define MB_OOXML_H

#include <stddef.h>
#include <stdint.h>

#include <libxml/tree.h>

#include "util/util.h"

/* ------------------------------------------------------------------ limits */

/* Caps applied when a package is opened and read. The defaults (see
 * mb_ooxml_limits_default) fit real workbooks of a few hundred thousand
 * cells while refusing zip bombs long before memory is at risk. */
typedef struct mb_ooxml_limits {
    uint64_t max_entries;      /* entries in the zip (default 10000) */
    uint64_t max_total;        /* sum of declared uncompressed sizes (512 MiB) */
    uint64_t max_part;         /* one part's uncompressed size (256 MiB) */
    uint64_t max_ratio;        /* uncompressed/compressed, checked above ratio_floor (1000) */
    uint64_t ratio_floor;      /* entries smaller than this skip the ratio check (1 MiB) */
} mb_ooxml_limits;

#define MB_OOXML_MAX_ENTRIES 10000u
#define MB_OOXML_MAX_TOTAL (512ull << 20)
#define MB_OOXML_MAX_PART (256ull << 20)
#define MB_OOXML_MAX_RATIO 1000u
#define MB_OOXML_RATIO_FLOOR (1ull << 20)

void mb_ooxml_limits_default(mb_ooxml_limits *lim);

/* ----------------------------------------------------------------- package */

typedef struct mb_ooxml mb_ooxml;

/*
 * Opens the package at `path`. `lim` may be NULL for the defaults. Errors:
 * MB_ENOTFOUND (no such file; errno kept in *sys_errno when given),
 * MB_EINVAL (not a zip, truncated, corrupt, no [Content_Types].xml),
 * MB_ETOOBIG (over a limit), MB_EIO. *sys_errno (optional) receives the
 * errno of a failed open(2), 0 otherwise.
 */
int mb_ooxml_open(const char *path, const mb_ooxml_limits *lim, mb_ooxml **out, int *sys_errno,
                  mb_err *err);
/* A new, empty package (no parts at all); save it with mb_ooxml_save_as. */
mb_ooxml *mb_ooxml_new(void);
void mb_ooxml_free(mb_ooxml *pkg);

/* Number of parts and the name of part i (0-based, zip order). Removed
 * parts are not counted. */
size_t mb_ooxml_count(const mb_ooxml *pkg);
const char *mb_ooxml_name(const mb_ooxml *pkg, size_t i);
int mb_ooxml_has(const mb_ooxml *pkg, const char *name);

/* The bytes of a part (NUL-terminated copy, caller frees). MB_ENOTFOUND when
 * absent, MB_ETOOBIG / MB_EINVAL when the entry breaks a limit or is corrupt. */
int mb_ooxml_read(mb_ooxml *pkg, const char *name, char **data, size_t *len, mb_err *err);

/* The part parsed as XML (borrowed, cached). MB_EINVAL for malformed XML or a
 * DOCTYPE. */
int mb_ooxml_xml(mb_ooxml *pkg, const char *name, xmlDocPtr *out, mb_err *err);
/* Marks a cached document as changed: it is serialized at save. */
void mb_ooxml_touch(mb_ooxml *pkg, const char *name);

/* Replaces or adds a part with raw bytes (copied). */
void mb_ooxml_put(mb_ooxml *pkg, const char *name, const void *data, size_t len);
/* Replaces or adds a part with a document (the package takes ownership). */
void mb_ooxml_put_xml(mb_ooxml *pkg, const char *name, xmlDocPtr doc);
/* Removes a part (no-op when absent). */
void mb_ooxml_remove(mb_ooxml *pkg, const char *name);

/* True when the package was opened from a file (mb_ooxml_save works). */
int mb_ooxml_from_file(const mb_ooxml *pkg);
/* Writes the package back to the file it was opened from (temp file in the
 * same directory, then rename; the file's mode is kept). */
int mb_ooxml_save(mb_ooxml *pkg, mb_err *err);
/* Writes the package to `path` (temp file + rename), mode 0644 & ~umask. */
int mb_ooxml_save_as(mb_ooxml *pkg, const char *path, mb_err *err);
/* The package as the bytes of a new zip (an embedded workbook, ...);
 * *data is NUL-terminated, caller frees. */
int mb_ooxml_save_mem(mb_ooxml *pkg, char **data, size_t *len, mb_err *err);

/* Parses XML text the way parts are parsed (no network, DOCTYPE refused).
 * `what` names the text in error messages. Caller frees the document. */
int mb_ooxml_parse(const char *data, size_t len, const char *what, xmlDocPtr *out, mb_err *err);

/* ------------------------------------------------------------ content types */

/* The content type of a part: its Override, else the Default for its
 * extension, else NULL. Borrowed. */
const char *mb_ooxml_ct_get(mb_ooxml *pkg, const char *name);
/* Sets (adds or replaces) the Override for a part. */
int mb_ooxml_ct_override(mb_ooxml *pkg, const char *name, const char *type, mb_err *err);
/* Adds a Default for an extension unless one exists. */
int mb_ooxml_ct_default(mb_ooxml *pkg, const char *ext, const char *type, mb_err *err);
/* Removes the Override of a part (no-op when absent). */
int mb_ooxml_ct_remove(mb_ooxml *pkg, const char *name, mb_err *err);

/* ----------------------------------------------------------- relationships */

/* "xl/worksheets/sheet1.xml" -> "xl/worksheets/_rels/sheet1.xml.rels";
 * "" (the package) -> "_rels/.rels". Caller frees. */
char *mb_ooxml_rels_name(const char *source);
/* Resolves a relationship target relative to its source part
 * ("../drawings/drawing1.xml" from "xl/worksheets/sheet1.xml" gives
 * "xl/drawings/drawing1.xml"; "/xl/x.xml" is absolute). Caller frees. */
char *mb_ooxml_resolve(const char *source, const char *target);
/* The path of `part` relative to the directory of `source`, for Target
 * attributes. Caller frees. */
char *mb_ooxml_relative(const char *source, const char *part);

typedef struct mb_ooxml_rel {
    const char *id;     /* "rId3" */
    const char *type;   /* full relationship type URI */
    const char *target; /* as written */
    int external;       /* TargetMode="External" */
} mb_ooxml_rel;

/* Calls fn for each relationship of `source` (none when it has no rels part).
 * Stops early and returns fn's value when it is non-zero. */
int mb_ooxml_rels_each(mb_ooxml *pkg, const char *source,
                       int (*fn)(const mb_ooxml_rel *rel, void *payload), void *payload,
                       mb_err *err);
/* The part a relationship id of `source` points to (caller frees), or NULL. */
char *mb_ooxml_rel_part(mb_ooxml *pkg, const char *source, const char *id);
/* Adds a relationship (creating the rels part if needed); *out_id (optional,
 * caller frees) receives the new id ("rIdN", N one past the highest). */
int mb_ooxml_rel_add(mb_ooxml *pkg, const char *source, const char *type, const char *target,
                     char **out_id, mb_err *err);
/* Removes the relationship `id` of `source` (no-op when absent). */
int mb_ooxml_rel_remove(mb_ooxml *pkg, const char *source, const char *id, mb_err *err);

/* A part name not yet used, from a printf pattern with one %u
 * ("xl/worksheets/sheet%u.xml"), trying 1, 2, ... Caller frees. */
char *mb_ooxml_unique_name(const mb_ooxml *pkg, const char *pattern);

/* ----------------------------------------------------------------- images */

/* What an image's header says (PNG, JPEG, GIF, BMP): extension ("png"),
 * content type, pixel size and DPI (72 when absent; BMP 96). */
typedef struct mb_ooxml_image {
    const char *ext, *ct;
    long px_w, px_h, dpi_x, dpi_y;
} mb_ooxml_image;

/* 0, or -1 when the data is none of those formats or has no size. */
int mb_ooxml_image_info(const void *data, size_t n, mb_ooxml_image *out);

#endif /* MB_OOXML_H */
