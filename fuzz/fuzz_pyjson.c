/*
 * fuzz_pyjson.c - poste_email's emulation of Python's json.loads errors
 * (servers/poste_email/pyjson.c), which judges import_emails' json_string
 * from an agent: any bytes must give an answer without crashing or running
 * deep; an error's position lies within the text; and what jansson accepts
 * (a stricter reader, apart from nesting) the emulation accepts too.
 */
#include "fuzz.h"
#include "servers/poste_email/poste.h"

#include <jansson.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    char *msg = NULL;
    int nonstd = 0;
    int rc = pe_py_json_check(s, size, &msg, &nonstd);
    FUZZ_CHECK(rc == 0 || rc == -1 || rc == -2, "rc %d", rc);
    FUZZ_CHECK(!rc == !msg, "a message without an error, or the reverse");
    if (rc == -1) {
        size_t line, col, ch;
        const char *at = strrchr(msg, ':');
        FUZZ_CHECK(at && sscanf(at, ": line %zu column %zu (char %zu)", &line, &col, &ch) == 3,
                   "message shape: %s", msg);
        FUZZ_CHECK(ch <= size && line >= 1 && col >= 1, "position out of the text: %s", msg);
    }
    /* jansson reads a raw NUL between tokens as whitespace; Python does not */
    if (!memchr(s, 0, size) && mb_utf8_valid(s, size)) {
        json_error_t e;
        json_t *j = json_loadb(s, size, JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL, &e);
        FUZZ_CHECK(!j || rc != -1, "jansson took what the emulation refused: %s", msg);
        json_decref(j);
    }
    if (rc == 0 && nonstd) {
        size_t n2;
        free(pe_py_json_std(s, size, &n2));
    }
    free(msg);
    return 0;
}
