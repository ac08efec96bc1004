/*
 * xml.c - parsing package parts with libxml2, safely.
 *
 * Options: XML_PARSE_NONET (no network), no XML_PARSE_NOENT (entities are
 * never substituted), no DTD loading, no XML_PARSE_HUGE (libxml2's default
 * caps on text nodes and depth stay on). On top of that the parser stops at
 * the first DOCTYPE it meets: OOXML parts never have one, and the internal
 * subset is where entity bombs ("billion laughs") and external entities live,
 * so they are refused before a single entity is declared.
 */
#include <string.h>

#include <libxml/parser.h>
#include <libxml/xmlerror.h>

#include "ooxml/ooxml.h"

static void on_doctype(void *ctx, const xmlChar *name, const xmlChar *ext_id, const xmlChar *sys_id)
{
    (void)name, (void)ext_id, (void)sys_id;
    xmlParserCtxtPtr ctxt = ctx;
    ctxt->_private = (void *)1;
    xmlStopParser(ctxt);
}

/* libxml2 reports errors through a global handler unless told otherwise;
 * the error is read back from the context instead. */
static void quiet(void *ctx, const char *msg, ...)
{
    (void)ctx, (void)msg;
}

int mb_ooxml_parse(const char *data, size_t len, const char *what, xmlDocPtr *out, mb_err *err)
{
    *out = NULL;
    if (len > (size_t)INT32_MAX)
        return mb_err_set(err, MB_ETOOBIG, "XML part %s is too large to parse", what);
    xmlParserCtxtPtr ctxt = xmlNewParserCtxt();
    if (!ctxt) return mb_err_set(err, MB_ENOMEM, "cannot allocate an XML parser");
    ctxt->sax->internalSubset = on_doctype;
    ctxt->sax->error = quiet;
    ctxt->sax->warning = quiet;
    ctxt->_private = NULL;
    xmlDocPtr doc = xmlCtxtReadMemory(ctxt, data, (int)len, NULL, NULL,
                                      XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
    int rc = MB_OK;
    if (ctxt->_private) {
        rc = mb_err_set(err, MB_EINVAL,
                        "XML part %s declares a DOCTYPE, which Office documents never have "
                        "(refused: entity expansion and external entities are not allowed)",
                        what);
    } else if (!doc || !ctxt->wellFormed) {
        const xmlError *e = xmlCtxtGetLastError(ctxt);
        char msg[200] = "not well-formed";
        if (e && e->message) {
            snprintf(msg, sizeof msg, "%s", e->message);
            size_t n = strlen(msg);
            while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' ')) msg[--n] = 0;
        }
        rc = mb_err_set(err, MB_EINVAL, "XML part %s is malformed (line %d): %s", what,
                        e ? e->line : 0, msg);
    } else if (!xmlDocGetRootElement(doc)) {
        rc = mb_err_set(err, MB_EINVAL, "XML part %s has no root element", what);
    }
    xmlFreeParserCtxt(ctxt);
    if (rc) {
        if (doc) xmlFreeDoc(doc);
        return rc;
    }
    *out = doc;
    return MB_OK;
}
