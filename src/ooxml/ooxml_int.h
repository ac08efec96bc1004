/*
 * ooxml_int.h - what the files of the OOXML layer share: the package
 * structure. Nothing outside src/ooxml includes this.
 */
#ifndef MB_OOXML_INT_H
#define MB_OOXML_INT_H

#include <zip.h>

#include "ooxml/ooxml.h"

typedef struct mb_ooxml_part {
    char *name;           /* zip entry name */
    zip_int64_t index;    /* entry in the source zip, -1 for a new part */
    uint64_t size;        /* declared uncompressed size (source entries) */
    int removed;          /* dropped at save */
    char *data;           /* replacement bytes (owned) when has_data */
    size_t len;
    int has_data;
    xmlDocPtr doc;        /* cached parse (owned) */
    int dirty;            /* doc changed: serialize at save */
} mb_ooxml_part;

struct mb_ooxml {
    zip_t *za;            /* source archive, NULL for a new package */
    char *path;           /* where it was opened from */
    mb_ooxml_limits lim;
    mb_ooxml_part *parts;
    size_t n, cap;
};

/* The live part called `name` (ASCII case ignored), or NULL. */
mb_ooxml_part *mb_ooxml__find(const mb_ooxml *pkg, const char *name);

/* A libzip source reading `fd` (owned from now on, also on failure) and
 * writing `path` the way zip_open(path) does (zipsrc.c). */
zip_source_t *mb_ooxml__fd_source(int fd, const char *path, zip_error_t *error);

#define MB_OOXML_CT_PART "[Content_Types].xml"
#define MB_OOXML_NS_CT "http://schemas.openxmlformats.org/package/2006/content-types"
#define MB_OOXML_NS_RELS "http://schemas.openxmlformats.org/package/2006/relationships"

#endif /* MB_OOXML_INT_H */
