/*
 * nodeerr.c - error texts as the mirrored runtimes print them.
 *
 * Node.js reports a failed fs call as "CODE: description, syscall 'path'"
 * (plus " -> 'dest'" for two-path calls), with libuv's names and lower-case
 * descriptions, which differ from strerror(). The table below is libuv's
 * (util.getSystemErrorMap() of Node 22). Python's OSError text uses
 * strerror(), which is glibc's.
 */
#include "mcp/mcp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    int errnum;
    const char *name;
    const char *desc;
} uv_errors[] = {
    {EPERM, "EPERM", "operation not permitted"},
    {ENOENT, "ENOENT", "no such file or directory"},
    {ESRCH, "ESRCH", "no such process"},
    {EINTR, "EINTR", "interrupted system call"},
    {EIO, "EIO", "i/o error"},
    {ENXIO, "ENXIO", "no such device or address"},
    {E2BIG, "E2BIG", "argument list too long"},
    {ENOEXEC, "ENOEXEC", "exec format error"},
    {EBADF, "EBADF", "bad file descriptor"},
    {EAGAIN, "EAGAIN", "resource temporarily unavailable"},
    {ENOMEM, "ENOMEM", "not enough memory"},
    {EACCES, "EACCES", "permission denied"},
    {EFAULT, "EFAULT", "bad address in system call argument"},
    {EBUSY, "EBUSY", "resource busy or locked"},
    {EEXIST, "EEXIST", "file already exists"},
    {EXDEV, "EXDEV", "cross-device link not permitted"},
    {ENODEV, "ENODEV", "no such device"},
    {ENOTDIR, "ENOTDIR", "not a directory"},
    {EISDIR, "EISDIR", "illegal operation on a directory"},
    {EINVAL, "EINVAL", "invalid argument"},
    {ENFILE, "ENFILE", "file table overflow"},
    {EMFILE, "EMFILE", "too many open files"},
    {ENOTTY, "ENOTTY", "inappropriate ioctl for device"},
    {ETXTBSY, "ETXTBSY", "text file is busy"},
    {EFBIG, "EFBIG", "file too large"},
    {ENOSPC, "ENOSPC", "no space left on device"},
    {ESPIPE, "ESPIPE", "invalid seek"},
    {EROFS, "EROFS", "read-only file system"},
    {EMLINK, "EMLINK", "too many links"},
    {EPIPE, "EPIPE", "broken pipe"},
    {ERANGE, "ERANGE", "result too large"},
    {ENAMETOOLONG, "ENAMETOOLONG", "name too long"},
    {ENOSYS, "ENOSYS", "function not implemented"},
    {ENOTEMPTY, "ENOTEMPTY", "directory not empty"},
    {ELOOP, "ELOOP", "too many symbolic links encountered"},
    {EUNATCH, "EUNATCH", "protocol driver not attached"},
    {ENODATA, "ENODATA", "no data available"},
    {ENONET, "ENONET", "machine is not on the network"},
    {EPROTO, "EPROTO", "protocol error"},
    {EOVERFLOW, "EOVERFLOW", "value too large for defined data type"},
    {EILSEQ, "EILSEQ", "illegal byte sequence"},
    {ENOTSOCK, "ENOTSOCK", "socket operation on non-socket"},
    {EDESTADDRREQ, "EDESTADDRREQ", "destination address required"},
    {EMSGSIZE, "EMSGSIZE", "message too long"},
    {EPROTOTYPE, "EPROTOTYPE", "protocol wrong type for socket"},
    {ENOPROTOOPT, "ENOPROTOOPT", "protocol not available"},
    {EPROTONOSUPPORT, "EPROTONOSUPPORT", "protocol not supported"},
    {ESOCKTNOSUPPORT, "ESOCKTNOSUPPORT", "socket type not supported"},
    {ENOTSUP, "ENOTSUP", "operation not supported on socket"},
    {EAFNOSUPPORT, "EAFNOSUPPORT", "address family not supported"},
    {EADDRINUSE, "EADDRINUSE", "address already in use"},
    {EADDRNOTAVAIL, "EADDRNOTAVAIL", "address not available"},
    {ENETDOWN, "ENETDOWN", "network is down"},
    {ENETUNREACH, "ENETUNREACH", "network is unreachable"},
    {ECONNABORTED, "ECONNABORTED", "software caused connection abort"},
    {ECONNRESET, "ECONNRESET", "connection reset by peer"},
    {ENOBUFS, "ENOBUFS", "no buffer space available"},
    {EISCONN, "EISCONN", "socket is already connected"},
    {ENOTCONN, "ENOTCONN", "socket is not connected"},
    {ESHUTDOWN, "ESHUTDOWN", "cannot send after transport endpoint shutdown"},
    {ETIMEDOUT, "ETIMEDOUT", "connection timed out"},
    {ECONNREFUSED, "ECONNREFUSED", "connection refused"},
    {EHOSTDOWN, "EHOSTDOWN", "host is down"},
    {EHOSTUNREACH, "EHOSTUNREACH", "host is unreachable"},
    {EALREADY, "EALREADY", "connection already in progress"},
    {EREMOTEIO, "EREMOTEIO", "remote I/O error"},
    {ECANCELED, "ECANCELED", "operation canceled"},
};

static int find(int errnum)
{
    for (size_t i = 0; i < sizeof uv_errors / sizeof uv_errors[0]; i++)
        if (uv_errors[i].errnum == errnum) return (int)i;
    return -1;
}

const char *mb_node_errname(int errnum)
{
    int i = find(errnum);
    return i < 0 ? "UNKNOWN" : uv_errors[i].name;
}

const char *mb_node_errdesc(int errnum)
{
    int i = find(errnum);
    return i < 0 ? "unknown error" : uv_errors[i].desc;
}

char *mb_node_fs_error(int errnum, const char *syscall, const char *path, const char *dest)
{
    mb_buf b = {0};
    mb_buf_printf(&b, "%s: %s, %s", mb_node_errname(errnum), mb_node_errdesc(errnum), syscall);
    if (path) mb_buf_printf(&b, " '%s'", path);
    if (path && dest) mb_buf_printf(&b, " -> '%s'", dest);
    return mb_buf_steal(&b);
}

char *mb_py_os_error(int errnum, const char *path)
{
    if (path) return mb_asprintf("[Errno %d] %s: '%s'", errnum, strerror(errnum), path);
    return mb_asprintf("[Errno %d] %s", errnum, strerror(errnum));
}
