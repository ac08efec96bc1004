/*
 * err.c - error codes and messages (see util.h for the convention).
 */
#include "util.h"

#include <stdio.h>
#include <errno.h>
#include <string.h>

int mb_err_set(mb_err *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        mb_text_vformat(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

int mb_err_sys(mb_err *err, int errno_value, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        size_t n = mb_text_vformat(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        mb_text_format(err->msg + n, sizeof err->msg - n, ": %s", strerror(errno_value));
        err->code = errno_value == ENOSPC || errno_value == EDQUOT ? MB_ENOSPACE : MB_EIO;
        return err->code;
    }
    return errno_value == ENOSPC || errno_value == EDQUOT ? MB_ENOSPACE : MB_EIO;
}

int mb_err_wrap(mb_err *err, int code, const char *fmt, ...)
{
    if (!err) return code;
    char old[sizeof err->msg];
    memcpy(old, err->msg, sizeof old);
    old[sizeof old - 1] = '\0';
    char head[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    mb_text_vformat(head, sizeof head, fmt, ap);
    va_end(ap);
    if (code) err->code = code;
    if (old[0]) mb_text_format(err->msg, sizeof err->msg, "%s: %s", head, old);
    else mb_text_format(err->msg, sizeof err->msg, "%s", head);
    return err->code;
}

void mb_err_clear(mb_err *err)
{
    if (err) {
        err->code = MB_OK;
        err->msg[0] = '\0';
    }
}

const char *mb_code_name(int code)
{
    switch (code) {
    case MB_OK: return "ok";
    case MB_EINVAL: return "invalid";
    case MB_ENOTFOUND: return "not found";
    case MB_ECONFLICT: return "conflict";
    case MB_ETOOBIG: return "too large";
    case MB_EDENIED: return "denied";
    case MB_EEXPIRED: return "expired";
    case MB_EIO: return "i/o error";
    case MB_ENOMEM: return "out of memory";
    case MB_EBUSY: return "busy";
    case MB_ETIMEOUT: return "timeout";
    case MB_EUNAUTH: return "unauthenticated";
    case MB_ENOSPACE: return "no space";
    case MB_ELIMIT: return "over quota";
    default: return "error";
    }
}
