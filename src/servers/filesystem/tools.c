/*
 * tools.c - what the filesystem server lists, per upstream version: the tool
 * tables (names, titles, descriptions, schemas and annotations exactly as
 * each version's tools/list prints them, in its order) and the version
 * descriptors that tell the handlers how that version behaves (fs.h).
 *
 *   2026.7.10  14 tools, McpServer.registerTool: titles, annotations, output
 *              schemas and structuredContent; glob search; the default.
 *   2025.11.25 the same 14 tools as 2026.7.10 with 2025.11's read_media_file
 *              (type "blob" for other files) and annotations, relative paths
 *              from the working directory, roots checked at start, jsdiff 5
 *              and String#replace patterns in edit_file. MCP-Atlas' pin.
 *   2025.7.1   12 tools (no read_text_file / read_media_file), a low-level
 *              Server: plain zod-to-json-schema input schemas, arguments
 *              checked with zod 3, every failure "Error: <message>";
 *              search_files matches names by substring. Toolathlon's pin.
 */
#include "servers/filesystem/fs.h"

#include <string.h>

/* ------------------------------------------------------------ 2026.7.10 */
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

static const mb_mcp_tool TOOLS_2026_7_10[] = {
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

static const mb_mcp_info INFO_2026_7_10 = {
    .name = "secure-filesystem-server",
    .version = "0.2.0",
    .flavor = MB_MCP_TS_MCPSERVER,
    /* upstream declares no logging capability */
    .capabilities = "{\"tools\":{\"listChanged\":true}}",
};

/* ----------------------------------------------------------- 2025.11.25 */

/* The same tools, titles and schemas as 2026.7.10 but for read_media_file's
 * description and output schema (other files come back as type "blob") and
 * the annotations (no openWorldHint; move_file not destructive). The table
 * is made from 2026.7.10's once, when that version is chosen. */
static mb_mcp_tool TOOLS_2025_11_25[sizeof TOOLS_2026_7_10 / sizeof TOOLS_2026_7_10[0]];

static const struct {
    const char *tool, *annotations;
} ANN_2025_11_25[] = {
    {"write_file", "{\"readOnlyHint\":false,\"idempotentHint\":true,\"destructiveHint\":true}"},
    {"edit_file", "{\"readOnlyHint\":false,\"idempotentHint\":false,\"destructiveHint\":true}"},
    {"create_directory",
     "{\"readOnlyHint\":false,\"idempotentHint\":true,\"destructiveHint\":false}"},
    {"move_file", "{\"readOnlyHint\":false,\"idempotentHint\":false,\"destructiveHint\":false}"},
};

static const mb_mcp_tool *tools_2025_11_25(void)
{
    for (size_t i = 0; TOOLS_2026_7_10[i].name; i++) {
        mb_mcp_tool t = TOOLS_2026_7_10[i];
        t.annotations = "{\"readOnlyHint\":true}";
        for (size_t k = 0; k < sizeof ANN_2025_11_25 / sizeof *ANN_2025_11_25; k++)
            if (!strcmp(t.name, ANN_2025_11_25[k].tool)) t.annotations = ANN_2025_11_25[k].annotations;
        if (!strcmp(t.name, "read_media_file")) {
            t.description = "Read an image or audio file. Returns the base64 encoded data and "
                            "MIME type. Only works within allowed directories.";
            t.output_schema =
                "{\"$schema\":\"http://json-schema.org/draft-07/schema#\",\"type\":\"object\","
                "\"properties\":{\"content\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
                "\"properties\":{\"type\":{\"type\":\"string\",\"enum\":[\"image\",\"audio\","
                "\"blob\"]},\"data\":{\"type\":\"string\"},\"mimeType\":{\"type\":\"string\"}},"
                "\"required\":[\"type\",\"data\",\"mimeType\"],\"additionalProperties\":false}}},"
                "\"required\":[\"content\"],\"additionalProperties\":false}";
        }
        TOOLS_2025_11_25[i] = t;
    }
    return TOOLS_2025_11_25;
}

/* ------------------------------------------------------------- 2025.7.1 */

/* zodToJsonSchema(z.object({...})) as zod-to-json-schema 3 prints it */
#define Z_OBJ(props, required)                                                                 \
    "{\"type\":\"object\",\"properties\":{" props "},\"required\":[" required "],"             \
    "\"additionalProperties\":false,\"$schema\":\"http://json-schema.org/draft-07/schema#\"}"
#define Z_STR(name) "\"" name "\":{\"type\":\"string\"}"
#define Z_PATH_ONLY Z_OBJ(Z_STR("path"), "\"path\"")

static const mb_mcp_tool TOOLS_2025_7_1[] = {
    {.name = "read_file",
     .description =
     "Read the complete contents of a file from the file system. Handles various text "
     "encodings and provides detailed error messages if the file cannot be read. Use this "
     "tool when you need to examine the contents of a single file. Use the 'head' parameter "
     "to read only the first N lines of a file, or the 'tail' parameter to read only the "
     "last N lines of a file. Only works within allowed directories.",
     .input_schema =
     Z_OBJ(Z_STR("path") ",\"tail\":{\"type\":\"number\",\"description\":\"If provided, "
           "returns only the last N lines of the file\"},\"head\":{\"type\":\"number\","
           "\"description\":\"If provided, returns only the first N lines of the file\"}",
           "\"path\""),
     .fn = fs_read_text_file},
    {.name = "read_multiple_files",
     .description =
     "Read the contents of multiple files simultaneously. This is more efficient than "
     "reading files one by one when you need to analyze or compare multiple files. Each "
     "file's content is returned with its path as a reference. Failed reads for individual "
     "files won't stop the entire operation. Only works within allowed directories.",
     .input_schema =
     Z_OBJ("\"paths\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}", "\"paths\""),
     .fn = fs_read_multiple_files},
    {.name = "write_file",
     .description =
     "Create a new file or completely overwrite an existing file with new content. Use with "
     "caution as it will overwrite existing files without warning. Handles text content with "
     "proper encoding. Only works within allowed directories.",
     .input_schema = Z_OBJ(Z_STR("path") "," Z_STR("content"), "\"path\",\"content\""),
     .fn = fs_write_file},
    {.name = "edit_file",
     .description =
     "Make line-based edits to a text file. Each edit replaces exact line sequences with new "
     "content. Returns a git-style diff showing the changes made. Only works within allowed "
     "directories.",
     .input_schema =
     Z_OBJ(Z_STR("path") ",\"edits\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
           "\"properties\":{\"oldText\":{\"type\":\"string\",\"description\":\"Text to search "
           "for - must match exactly\"},\"newText\":{\"type\":\"string\",\"description\":"
           "\"Text to replace with\"}},\"required\":[\"oldText\",\"newText\"],"
           "\"additionalProperties\":false}},\"dryRun\":{\"type\":\"boolean\",\"default\":false,"
           "\"description\":\"Preview changes using git-style diff format\"}",
           "\"path\",\"edits\""),
     .fn = fs_edit_file},
    {.name = "create_directory",
     .description =
     "Create a new directory or ensure a directory exists. Can create multiple nested "
     "directories in one operation. If the directory already exists, this operation will "
     "succeed silently. Perfect for setting up directory structures for projects or ensuring "
     "required paths exist. Only works within allowed directories.",
     .input_schema = Z_PATH_ONLY,
     .fn = fs_create_directory},
    {.name = "list_directory",
     .description =
     "Get a detailed listing of all files and directories in a specified path. Results "
     "clearly distinguish between files and directories with [FILE] and [DIR] prefixes. This "
     "tool is essential for understanding directory structure and finding specific files "
     "within a directory. Only works within allowed directories.",
     .input_schema = Z_PATH_ONLY,
     .fn = fs_list_directory},
    {.name = "list_directory_with_sizes",
     .description =
     "Get a detailed listing of all files and directories in a specified path, including "
     "sizes. Results clearly distinguish between files and directories with [FILE] and [DIR] "
     "prefixes. This tool is useful for understanding directory structure and finding "
     "specific files within a directory. Only works within allowed directories.",
     .input_schema =
     Z_OBJ(Z_STR("path") ",\"sortBy\":{\"type\":\"string\",\"enum\":[\"name\",\"size\"],"
           "\"default\":\"name\",\"description\":\"Sort entries by name or size\"}",
           "\"path\""),
     .fn = fs_list_directory_with_sizes},
    {.name = "directory_tree",
     .description =
     "Get a recursive tree view of files and directories as a JSON structure. Each entry "
     "includes 'name', 'type' (file/directory), and 'children' for directories. Files have "
     "no children array, while directories always have a children array (which may be "
     "empty). The output is formatted with 2-space indentation for readability. Only works "
     "within allowed directories.",
     .input_schema = Z_PATH_ONLY,
     .fn = fs_directory_tree},
    {.name = "move_file",
     .description =
     "Move or rename files and directories. Can move files between directories and rename "
     "them in a single operation. If the destination exists, the operation will fail. Works "
     "across different directories and can be used for simple renaming within the same "
     "directory. Both source and destination must be within allowed directories.",
     .input_schema = Z_OBJ(Z_STR("source") "," Z_STR("destination"), "\"source\",\"destination\""),
     .fn = fs_move_file},
    {.name = "search_files",
     .description =
     "Recursively search for files and directories matching a pattern. Searches through all "
     "subdirectories from the starting path. The search is case-insensitive and matches "
     "partial names. Returns full paths to all matching items. Great for finding files when "
     "you don't know their exact location. Only searches within allowed directories.",
     .input_schema =
     Z_OBJ(Z_STR("path") "," Z_STR("pattern") ",\"excludePatterns\":{\"type\":\"array\","
           "\"items\":{\"type\":\"string\"},\"default\":[]}",
           "\"path\",\"pattern\""),
     .fn = fs_search_files},
    {.name = "get_file_info",
     .description =
     "Retrieve detailed metadata about a file or directory. Returns comprehensive "
     "information including size, creation time, last modified time, permissions, and type. "
     "This tool is perfect for understanding file characteristics without reading the actual "
     "content. Only works within allowed directories.",
     .input_schema = Z_PATH_ONLY,
     .fn = fs_get_file_info},
    {.name = "list_allowed_directories",
     .description =
     "Returns the list of directories that this server is allowed to access. Use this to "
     "understand which directories are available before trying to access files.",
     .input_schema = "{\"type\":\"object\",\"properties\":{},\"required\":[]}",
     .fn = fs_list_allowed_directories},
    {0},
};

static const mb_mcp_info INFO_2025_7_1 = {
    .name = "secure-filesystem-server",
    .version = "0.2.0",
    .flavor = MB_MCP_TS_SERVER,
    .capabilities = "{\"tools\":{}}",
    .unknown_tool = fs_unknown_tool,
    .max_protocol = "2025-06-18", /* the SDK of its time (1.12 - 1.22) */
};

/* its switch parses every tool's arguments but this one's */
static const char *const UNCHECKED_2025_7_1[] = {"list_allowed_directories", NULL};

/* -------------------------------------------------------------- versions */

static const fs_version VERSIONS[] = {
    {.name = "2026.7.10",
     .info = &INFO_2026_7_10,
     .tools = TOOLS_2026_7_10,
     .structured = 1,
     .roots_relative = 1,
     .glob_search = 1,
     .tree_excludes = 1,
     .replace_literal = 1,
     .jsdiff = 8,
     .size_units_clamped = 1},
    /* MCP-Atlas (Klavis fork)'s pin. Its directory_tree, list_directory_with_sizes
     * and move_file put an array in structuredContent, which their own output
     * schema refuses (the SDK then answers an error); that is not reproduced:
     * they answer {content: text} as 2026.7.10 does. */
    {.name = "2025.11.25",
     .info = &INFO_2026_7_10,
     .tools = NULL, /* tools_2025_11_25() */
     .structured = 1,
     .roots_realpath_only = 1,
     .glob_search = 1,
     .tree_excludes = 1,
     .jsdiff = 5,
     .size_units_clamped = 1,
     .media_blob = 1},
    {.name = "2025.7.1",
     .info = &INFO_2025_7_1,
     .tools = TOOLS_2025_7_1,
     .catch_all = 1,
     .unchecked = UNCHECKED_2025_7_1,
     .roots_realpath_only = 1,
     .jsdiff = 5},
};

const fs_version *fs_version_find(const char *name)
{
    if (!name) return &VERSIONS[0];
    for (size_t i = 0; i < sizeof VERSIONS / sizeof VERSIONS[0]; i++)
        if (!strcmp(VERSIONS[i].name, name)) return &VERSIONS[i];
    return NULL;
}

const mb_mcp_tool *fs_version_tools(const fs_version *v)
{
    return v->tools ? v->tools : tools_2025_11_25();
}

char *fs_version_list(void)
{
    mb_buf b = {0};
    for (size_t i = 0; i < sizeof VERSIONS / sizeof VERSIONS[0]; i++)
        mb_buf_printf(&b, "%s%s", i ? ", " : "", VERSIONS[i].name);
    return mb_buf_steal(&b);
}
