/*
 * filesystem.c - the `filesystem` server: start-up (allowed directories from
 * the command line, /data by default), the tool table, and the helpers the
 * tool files share. Mirrors @modelcontextprotocol/server-filesystem
 * 2026.7.10: names, titles, descriptions, schemas and annotations below are
 * upstream's tools/list, verbatim.
 *
 * MCP Roots (roots/list) are not supported: the allowed directories are
 * fixed at start-up, which is how every benchmark runs it.
 */
#include "servers/filesystem/fs.h"
#include "servers/servers.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CONTENT_SCHEMA                                                                         \
    "{\"$schema\":\"http://json-schema.org/draft-07/schema#\",\"type\":\"object\","           \
    "\"properties\":{\"content\":{\"type\":\"string\"}},\"required\":[\"content\"],"          \
    "\"additionalProperties\":false}"
/* read_file (deprecated) and read_text_file take the same arguments. */
#define READ_TEXT_SCHEMA                                                                       \
    "{\"$schema\":\"http://json-schema.org/draft-07/schema#\",\"type\":\"object\","           \
    "\"properties\":{\"path\":{\"type\":\"string\"},\"tail\":{\"description\":\"If "            \
    "provided, returns only the last N lines of the file\",\"type\":\"number\"},"           \
    "\"head\":{\"description\":\"If provided, returns only the first N lines of the file\","\
    "\"type\":\"number\"}},\"required\":[\"path\"]}"
#define ANN_READ "{\"readOnlyHint\":true,\"openWorldHint\":false}"

static int fs_list_allowed_directories(mb_mcp_call *call, json_t *args, mb_mcp_result *res);

static const mb_mcp_tool fs_tools[] = {
    {.name = "read_file",
     .title = "Read File (Deprecated)",
     .description =
     "Read the complete contents of a file as text. DEPRECATED: Use read_text_file instead.",
     .input_schema =
     READ_TEXT_SCHEMA,
     .output_schema = CONTENT_SCHEMA,
     .annotations = ANN_READ,
     .fn = fs_read_text_file},
    {.name = "read_text_file",
     .title = "Read Text File",
     .description =
     "Read the complete contents of a file from the file system as text. Handles various "
     "text encodings and provides detailed error messages if the file cannot be read. Use "
     "this tool when you need to examine the contents of a single file. Use the 'head' "
     "parameter to read only the first N lines of a file, or the 'tail' parameter to read "
     "only the last N lines of a file. Operates on the file as text regardless of "
     "extension. Only works within allowed directories.",
     .input_schema =
     READ_TEXT_SCHEMA,
     .output_schema = CONTENT_SCHEMA,
     .annotations = ANN_READ,
     .fn = fs_read_text_file},
    {.name = "read_media_file",
     .title = "Read Media File",
     .description =
     "Read a file and return it as a base64-encoded content block with its MIME type. Image "
     "and audio files are returned as image/audio content; any other file type is returned "
     "as an embedded resource. Only works within allowed directories.",
     .input_schema =
     "{\"$schema\":\"http://json-schema.org/draft-07/schema#\",\"type\":\"object\","
     "\"properties\":{\"path\":{\"type\":\"string\"}},\"required\":[\"path\"]}",
     .output_schema = 
     "{\"$schema\":\"http://json-schema.org/draft-07/schema#\",\"type\":\"object\","
     "\"properties\":{\"content\":{\"type\":\"array\","
     "\"items\":{\"anyOf\":[{\"type\":\"object\","
     "\"properties\":{\"type\":{\"type\":\"string\",\"enum\":[\"image\",\"audio\"]},"
     "\"data\":{\"type\":\"string\"},\"mimeType\":{\"type\":\"string\"}},"
     "\"required\":[\"type\",\"data\",\"mimeType\"],\"additionalProperties\":false},"
     "{\"type\":\"object\",\"properties\":{\"type\":{\"type\":\"string\","
     "\"const\":\"resource\"},\"resource\":{\"type\":\"object\","
     "\"properties\":{\"uri\":{\"type\":\"string\"},\"mimeType\":{\"type\":\"string\"},"
     "\"blob\":{\"type\":\"string\"}},\"required\":[\"uri\",\"blob\"],"
     "\"additionalProperties\":false}},\"required\":[\"type\",\"resource\"],"
     "\"additionalProperties\":false}]}}},\"required\":[\"content\"],"
     "\"additionalProperties\":false}",
     .annotations = ANN_READ,
     .fn = fs_read_media_file},
    {.name = "read_multiple_files",
     .title = "Read Multiple Files",
     .description =
     "Read the contents of multiple files simultaneously. This is more efficient than "
     "reading files one by one when you need to analyze or compare multiple files. Each "
     "file's content is returned with its path as a reference. Failed reads for individual "
     "files won't stop the entire operation. Only works within allowed directories.",
     .input_schema =
     "{\"$schema\":\"http://json-schema.org/draft-07/schema#\",\"type\":\"object\","
     "\"properties\":{\"paths\":{\"minItems\":1,\"type\":\"array\","
     "\"items\":{\"type\":\"string\"},\"description\":\"Array of file paths to read. Each "
     "path must be a string pointing to a valid file within allowed directories.\"}},"
     "\"required\":[\"paths\"]}",
     .output_schema = CONTENT_SCHEMA,
     .annotations = ANN_READ,
     .fn = fs_read_multiple_files},
    {.name = "write_file",
     .title = "Write File",
     .description =
     "Create a new file or completely overwrite an existing file with new content. Use with "
     "caution as it will overwrite existing files without warning. Handles text content "
     "with proper encoding. Only works within allowed directories.",
     .input_schema =
     "{\"$schema\":\"http://json-schema.org/draft-07/schema#\",\"type\":\"object\","
     "\"properties\":{\"path\":{\"type\":\"string\"},\"content\":{\"type\":\"string\"}},"
     "\"required\":[\"path\",\"content\"]}",
     .output_schema = CONTENT_SCHEMA,
     .annotations = "{\"readOnlyHint\":false,\"idempotentHint\":true,\"destructiveHint\":true,"
     "\"openWorldHint\":false}",
     .fn = fs_write_file},
    {.name = "edit_file",
     .title = "Edit File",
     .description =
     "Make line-based edits to a text file. Each edit replaces exact line sequences with "
     "new content. Returns a git-style diff showing the changes made. Only works within "
     "allowed directories.",
     .input_schema =
     "{\"$schema\":\"http://json-schema.org/draft-07/schema#\",\"type\":\"object\","
     "\"properties\":{\"path\":{\"type\":\"string\"},\"edits\":{\"type\":\"array\","
     "\"items\":{\"type\":\"object\",\"properties\":{\"oldText\":{\"type\":\"string\","
     "\"description\":\"Text to search for - must match exactly\"},"
     "\"newText\":{\"type\":\"string\",\"description\":\"Text to replace with\"}},"
     "\"required\":[\"oldText\",\"newText\"]}},\"dryRun\":{\"default\":false,"
     "\"description\":\"Preview changes using git-style diff format\","
     "\"type\":\"boolean\"}},\"required\":[\"path\",\"edits\"]}",
     .output_schema = CONTENT_SCHEMA,
     .annotations = "{\"readOnlyHint\":false,\"idempotentHint\":false,\"destructiveHint\":true,"
     "\"openWorldHint\":false}",
     .fn = fs_edit_file},
    {.name = "create_directory",
     .title = "Create Directory",
     .description =
     "Create a new directory or ensure a directory exists. Can create multiple nested "
     "directories in one operation. If the directory already exists, this operation will "
     "succeed silently. Perfect for setting up directory structures for projects or "
     "ensuring required paths exist. Only works within allowed directories.",
     .input_schema =
     "{\"$schema\":\"http://json-schema.org/draft-07/schema#\",\"type\":\"object\","
     "\"properties\":{\"path\":{\"type\":\"string\"}},\"required\":[\"path\"]}",
     .output_schema = CONTENT_SCHEMA,
     .annotations = "{\"readOnlyHint\":false,\"idempotentHint\":true,\"destructiveHint\":false,"
     "\"openWorldHint\":false}",
     .fn = fs_create_directory},
    {.name = "list_directory",
     .title = "List Directory",
     .description =
     "Get a detailed listing of all files and directories in a specified path. Results "
     "clearly distinguish between files and directories with [FILE] and [DIR] prefixes. "
     "This tool is essential for understanding directory structure and finding specific "
     "files within a directory. Only works within allowed directories.",
     .input_schema =
     "{\"$schema\":\"http://json-schema.org/draft-07/schema#\",\"type\":\"object\","
     "\"properties\":{\"path\":{\"type\":\"string\"}},\"required\":[\"path\"]}",
     .output_schema = CONTENT_SCHEMA,
     .annotations = ANN_READ,
     .fn = fs_list_directory},
    {.name = "list_directory_with_sizes",
     .title = "List Directory with Sizes",
     .description =
     "Get a detailed listing of all files and directories in a specified path, including "
     "sizes. Results clearly distinguish between files and directories with [FILE] and "
     "[DIR] prefixes. This tool is useful for understanding directory structure and finding "
     "specific files within a directory. Only works within allowed directories.",
     .input_schema =
     "{\"$schema\":\"http://json-schema.org/draft-07/schema#\",\"type\":\"object\","
     "\"properties\":{\"path\":{\"type\":\"string\"},\"sortBy\":{\"default\":\"name\","
     "\"description\":\"Sort entries by name or size\",\"type\":\"string\","
     "\"enum\":[\"name\",\"size\"]}},\"required\":[\"path\"]}",
     .output_schema = CONTENT_SCHEMA,
     .annotations = ANN_READ,
     .fn = fs_list_directory_with_sizes},
    {.name = "directory_tree",
     .title = "Directory Tree",
     .description =
     "Get a recursive tree view of files and directories as a JSON structure. Each entry "
     "includes 'name', 'type' (file/directory), and 'children' for directories. Files have "
     "no children array, while directories always have a children array (which may be "
     "empty). The output is formatted with 2-space indentation for readability. Only works "
     "within allowed directories.",
     .input_schema =
     "{\"$schema\":\"http://json-schema.org/draft-07/schema#\",\"type\":\"object\","
     "\"properties\":{\"path\":{\"type\":\"string\"},\"excludePatterns\":{\"default\":[],"
     "\"type\":\"array\",\"items\":{\"type\":\"string\"}}},\"required\":[\"path\"]}",
     .output_schema = CONTENT_SCHEMA,
     .annotations = ANN_READ,
     .fn = fs_directory_tree},
    {.name = "move_file",
     .title = "Move File",
     .description =
     "Move or rename files and directories. Can move files between directories and rename "
     "them in a single operation. If the destination exists, the operation will fail. Works "
     "across different directories and can be used for simple renaming within the same "
     "directory. Both source and destination must be within allowed directories.",
     .input_schema =
     "{\"$schema\":\"http://json-schema.org/draft-07/schema#\",\"type\":\"object\","
     "\"properties\":{\"source\":{\"type\":\"string\"},"
     "\"destination\":{\"type\":\"string\"}},\"required\":[\"source\",\"destination\"]}",
     .output_schema = CONTENT_SCHEMA,
     .annotations = "{\"readOnlyHint\":false,\"idempotentHint\":false,\"destructiveHint\":true,"
     "\"openWorldHint\":false}",
     .fn = fs_move_file},
    {.name = "search_files",
     .title = "Search Files",
     .description =
     "Recursively search for files and directories matching a pattern. The patterns should "
     "be glob-style patterns that match paths relative to the working directory. Use "
     "pattern like '*.ext' to match files in current directory, and '**/*.ext' to match "
     "files in all subdirectories. Returns full paths to all matching items. Great for "
     "finding files when you don't know their exact location. Only searches within allowed "
     "directories.",
     .input_schema =
     "{\"$schema\":\"http://json-schema.org/draft-07/schema#\",\"type\":\"object\","
     "\"properties\":{\"path\":{\"type\":\"string\"},\"pattern\":{\"type\":\"string\"},"
     "\"excludePatterns\":{\"default\":[],\"type\":\"array\","
     "\"items\":{\"type\":\"string\"}}},\"required\":[\"path\",\"pattern\"]}",
     .output_schema = CONTENT_SCHEMA,
     .annotations = ANN_READ,
     .fn = fs_search_files},
    {.name = "get_file_info",
     .title = "Get File Info",
     .description =
     "Retrieve detailed metadata about a file or directory. Returns comprehensive "
     "information including size, creation time, last modified time, permissions, and type. "
     "This tool is perfect for understanding file characteristics without reading the "
     "actual content. Only works within allowed directories.",
     .input_schema =
     "{\"$schema\":\"http://json-schema.org/draft-07/schema#\",\"type\":\"object\","
     "\"properties\":{\"path\":{\"type\":\"string\"}},\"required\":[\"path\"]}",
     .output_schema = CONTENT_SCHEMA,
     .annotations = ANN_READ,
     .fn = fs_get_file_info},
    {.name = "list_allowed_directories",
     .title = "List Allowed Directories",
     .description =
     "Returns the list of directories that this server is allowed to access. Subdirectories "
     "within these allowed directories are also accessible. Use this to understand which "
     "directories and their nested paths are available before trying to access files.",
     .input_schema =
     "{\"$schema\":\"http://json-schema.org/draft-07/schema#\",\"type\":\"object\","
     "\"properties\":{}}",
     .output_schema = CONTENT_SCHEMA,
     .annotations = ANN_READ,
     .fn = fs_list_allowed_directories},
    {0},
};

static const mb_mcp_info fs_info = {
    .name = "secure-filesystem-server",
    .version = "0.2.0",
    .flavor = MB_MCP_TS_MCPSERVER,
    /* upstream declares no logging capability */
    .capabilities = "{\"tools\":{\"listChanged\":true}}",
};

/* ------------------------------------------------------------- helpers */

void fs_text_result(mb_mcp_result *res, const char *text, size_t len)
{
    mb_mcp_text_n(res, text, len);
    size_t n;
    char *fixed = mb_utf8_repair(text, len, &n);
    json_t *s = json_stringn(fixed, n);
    free(fixed);
    mb_mcp_structured(res, json_pack("{s:o}", "content", s));
}

int fs_resolve(mb_mcp_call *call, mb_mcp_result *res, const char *path, char **out)
{
    fs_server *fs = mb_mcp_call_data(call);
    char *why = NULL;
    if (mb_mcp_resolve(fs->roots, path, out, &why)) {
        mb_mcp_fail_str(res, why);
        free(why);
        return MB_MCP_FAILED;
    }
    return 0;
}

int fs_read_all(const char *path, char **data, size_t *len, char **why)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        int e = errno;
        struct stat st;
        /* A dangling symlink: Node would follow it and find nothing. */
        if (e == ELOOP && lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) e = ENOENT;
        *why = mb_node_fs_error(e, "open", path, NULL);
        return MB_EIO;
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 2147483647) {
        /* Node's fs.readFile refuses these (ERR_FS_FILE_TOO_LARGE) */
        *why = mb_asprintf("File size (%lld) is greater than 2 GiB", (long long)st.st_size);
        close(fd);
        return MB_ETOOBIG;
    }
    mb_buf b = {0};
    char chunk[65536];
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0) {
            if (errno == EINTR) continue;
            *why = mb_node_fs_error(errno, "read", NULL, NULL);
            close(fd);
            mb_buf_free(&b);
            return MB_EIO;
        }
        if (n == 0) break;
        mb_buf_append(&b, chunk, (size_t)n);
    }
    close(fd);
    *len = b.len;
    *data = mb_buf_steal(&b);
    return 0;
}

static int write_fd(int fd, const char *data, size_t len, char **why)
{
    while (len) {
        ssize_t n = write(fd, data, len);
        if (n < 0) {
            if (errno == EINTR) continue;
            *why = mb_node_fs_error(errno, "write", NULL, NULL);
            close(fd);
            return MB_EIO;
        }
        data += n;
        len -= (size_t)n;
    }
    close(fd);
    return 0;
}

int fs_write_replace(const char *path, const char *data, size_t len, int exclusive_first, char **why)
{
    if (exclusive_first) {
        /* 'wx': exclusive creation fails on an existing file or symlink. */
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_TRUNC | O_CLOEXEC, 0666);
        if (fd >= 0) return write_fd(fd, data, len, why);
        if (errno != EEXIST) {
            *why = mb_node_fs_error(errno, "open", path, NULL);
            return MB_EIO;
        }
    }
    /* A sibling temp file renamed over the target: rename replaces a
     * symlink instead of writing through it. */
    unsigned char rnd[16];
    char hex[33];
    mb_random_bytes(rnd, sizeof rnd, NULL);
    mb_hex(rnd, sizeof rnd, hex);
    char *tmp = mb_asprintf("%s.%s.tmp", path, hex);
    int rc;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (fd < 0) {
        *why = mb_node_fs_error(errno, "open", tmp, NULL);
        rc = MB_EIO;
    } else {
        rc = write_fd(fd, data, len, why);
    }
    if (!rc && rename(tmp, path) != 0) {
        *why = mb_node_fs_error(errno, "rename", tmp, path);
        rc = MB_EIO;
    }
    if (rc) unlink(tmp);
    free(tmp);
    return rc;
}

char *fs_path_join(const char *a, const char *b)
{
    char *joined = *a ? mb_asprintf("%s/%s", a, b) : mb_strdup(b);
    int abs = joined[0] == '/';
    /* normalize segments, keeping leading ".." of relative paths */
    mb_buf out = {0};
    const char **segs = mb_malloc((strlen(joined) + 2) * sizeof *segs);
    size_t n = 0;
    char *save = NULL;
    for (char *s = strtok_r(joined, "/", &save); s; s = strtok_r(NULL, "/", &save)) {
        if (!strcmp(s, ".")) continue;
        if (!strcmp(s, "..")) {
            if (n && strcmp(segs[n - 1], "..")) {
                n--;
                continue;
            }
            if (abs) continue;
        }
        segs[n++] = s;
    }
    if (abs) mb_buf_putc(&out, '/');
    for (size_t i = 0; i < n; i++) {
        if (i) mb_buf_putc(&out, '/');
        mb_buf_puts(&out, segs[i]);
    }
    if (!out.len) mb_buf_putc(&out, '.');
    free(segs);
    free(joined);
    return mb_buf_steal(&out);
}

/* --------------------------------------------------------------- tools */

static int fs_list_allowed_directories(mb_mcp_call *call, json_t *args, mb_mcp_result *res)
{
    fs_server *fs = mb_mcp_call_data(call);
    char *list = mb_mcp_roots_join(fs->roots, "\n");
    char *text = mb_asprintf("Allowed directories:\n%s", list);
    fs_text_result(res, text, strlen(text));
    free(text);
    free(list);
    return 0;
}

/* -------------------------------------------------------------- start */

static void fs_free(void *p)
{
    fs_server *fs = p;
    if (!fs) return;
    mb_mcp_roots_free(fs->roots);
    free(fs);
}

int mb_srv_filesystem_create(int argc, char **argv, mb_mcp_server **out, mb_err *err)
{
    char *def[] = {"/data"};
    char **dirs = argv + 1;
    size_t n = (size_t)(argc - 1);
    for (int i = 1; i < argc; i++)
        if (argv[i][0] == '-' && argv[i][1])
            return mb_err_set(err, MB_EINVAL, "unknown option '%s'", argv[i]);
    if (n == 0) {
        struct stat st;
        if (stat("/data", &st) != 0 || !S_ISDIR(st.st_mode))
            return mb_err_set(err, MB_EINVAL,
                              "no allowed directory given and /data does not exist "
                              "(MCP Roots are not supported: name the directories)");
        dirs = def;
        n = 1;
    }
    fs_server *fs = mb_calloc(1, sizeof *fs);
    int rc = mb_mcp_roots_new(dirs, n, &fs->roots, err);
    if (rc) {
        free(fs);
        return MB_ENOTFOUND;
    }
    mb_mcp_server *srv;
    if ((rc = mb_mcp_server_new(&fs_info, &srv, err))) {
        fs_free(fs);
        return rc;
    }
    mb_mcp_server_set_data(srv, fs, fs_free);
    if ((rc = mb_mcp_add_tools(srv, fs_tools, err))) {
        mb_mcp_server_free(srv);
        return rc;
    }
    *out = srv;
    return 0;
}
