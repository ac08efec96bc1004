/*
 * pyfmt.h - reproducing how Python upstreams print things.
 *
 * Several servers mirror Python programs whose output texts embed Python's own
 * formatting: repr() of strings (mcp-server-git prints commit messages with !r),
 * float/int str(), the messages of UnicodeDecodeError, the universal-newline
 * translation of subprocess.run(text=True). Agents and judges read those texts,
 * so they are reproduced here once, from the language definition.
 *
 * All functions append to an mb_buf; none allocates anything the caller must free
 * beyond that buffer.
 */
#ifndef MB_SERVERS_PYFMT_H
#define MB_SERVERS_PYFMT_H

#include <stddef.h>

#include "util/util.h"

/* repr() of a Python str holding the UTF-8 text s[0..n): quote choice ('...'
 * unless the text has ' and no "), escapes \\ \n \r \t, \xNN for other C0/C1
 * controls and DEL, \uNNNN / \UNNNNNNNN for non-printable code points, printable
 * Unicode kept as is. Invalid UTF-8 bytes are rendered as U+FFFD, as GitPython's
 * errors="replace" decoding shows them. */
void mb_py_repr_str(mb_buf *out, const char *s, size_t n);

/* str() of a Python float (repr rules: shortest round-trip digits, ".0" added to
 * integral values, exponent form below 1e-4 and from 1e16, "inf", "nan"). */
void mb_py_float_str(mb_buf *out, double v);

/* If s[0..n) is valid UTF-8 returns -1; otherwise appends the message of the
 * UnicodeDecodeError Python's strict decoder raises, e.g. "'utf-8' codec can't
 * decode byte 0xff in position 3: invalid start byte", and returns its position. */
long mb_py_utf8_error(mb_buf *out, const char *s, size_t n);

/* subprocess text mode: "\r\n" and lone "\r" become "\n" (in place); returns
 * the new length. */
size_t mb_py_universal_newlines(char *s, size_t n);

/* Python's str.rstrip() with no argument: drops trailing whitespace
 * (space, \t, \n, \v, \f, \r, \x1c-\x1f, \x85 and Unicode spaces are not all
 * handled: ASCII whitespace and \x1c-\x1f only). Returns the new length. */
size_t mb_py_rstrip(const char *s, size_t n);


#endif /* MB_SERVERS_PYFMT_H */
