/*
 * test_profile.c - unit tests for the profile loader (src/profile) and the
 * shipped presets in profiles/.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile/profile.h"
#include "util/util.h"

static const mb_profile_vars VARS = {.mcpbox_bin = "/.mcpbox/mcpbox", .data_dir = "/data"};

static const char *env_get(char **envp, const char *key)
{
    size_t n = strlen(key);
    for (; envp && *envp; envp++)
        if (strncmp(*envp, key, n) == 0 && (*envp)[n] == '=') return *envp + n + 1;
    return NULL;
}

static char *tmpdir_with(const char *name, const char *text)
{
    char tmpl[] = "/tmp/mb-profile-XXXXXX";
    char *dir = mkdtemp(tmpl);
    assert_non_null(dir);
    dir = mb_strdup(dir);
    if (name) {
        char *path = mb_asprintf("%s/%s.json", dir, name);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
        free(path);
    }
    return dir;
}

static void rm_dir(char *dir)
{
    mb_rm_rf(dir, NULL);
    free(dir);
}

static void test_shipped_presets_load(void **state)
{
    const char *names[] = {"none", "MCP_Atlas", "Toolathlon", "MCP_Mark"};
    for (size_t i = 0; i < 4; i++) {
        mb_profile *p = NULL;
        mb_err err = {0};
        int rc = mb_profile_load("profiles", names[i], &VARS, &p, &err);
        if (rc) fprintf(stderr, "%s: %s\n", names[i], err.msg);
        assert_int_equal(rc, MB_OK);
        assert_string_equal(p->name, names[i]);
        assert_true(p->nservers >= 1);
        const mb_profile_server *fs = mb_profile_server_find(p, "filesystem");
        assert_non_null(fs);
        assert_string_equal(fs->argv[0], "/.mcpbox/mcpbox");
        assert_string_equal(fs->argv[1], "mcp");
        size_t last = 0;
        while (fs->argv[last + 1]) last++;
        assert_string_equal(fs->argv[last], "/data"); /* after any --upstream-version */
        assert_string_equal(fs->cwd, "/data");
        assert_string_equal(env_get(fs->envp, "LANG"), "C.UTF-8");
        /* playwright's list is static (the gateway answers tools/list from its
         * copy), and so is every native server's unless its entry says false */
        const mb_profile_server *pw = mb_profile_server_find(p, "playwright");
        if (pw) assert_true(json_is_true(json_object_get(pw->entry, "tools_static")));
        assert_true(json_is_true(json_object_get(fs->entry, "tools_static")));
        mb_profile_free(p);
    }
}

/* A native server (`${MCPBOX} mcp NAME`) is tools_static unless its entry
 * says false; any other command is not unless its entry says true. */
static void test_tools_static_default(void **state)
{
    (void)state;
    char *dir = tmpdir_with("t", "{\"servers\":{"
                                 "\"a\":{\"argv\":[\"${MCPBOX}\",\"mcp\",\"filesystem\"]},"
                                 "\"b\":{\"argv\":[\"${MCPBOX}\",\"mcp\",\"git\"],"
                                 "\"tools_static\":false},"
                                 "\"c\":{\"argv\":[\"/usr/bin/node\",\"x.js\"]},"
                                 "\"d\":{\"argv\":[\"/usr/bin/node\",\"y.js\"],"
                                 "\"tools_static\":true}}}");
    mb_profile *p = NULL;
    mb_err err = {0};
    assert_int_equal(mb_profile_load(dir, "t", &VARS, &p, &err), MB_OK);
    const char *names[] = {"a", "b", "c", "d"};
    const int want[] = {1, 0, 0, 1};
    for (int i = 0; i < 4; i++) {
        const mb_profile_server *ps = mb_profile_server_find(p, names[i]);
        assert_non_null(ps);
        assert_int_equal(json_is_true(json_object_get(ps->entry, "tools_static")), want[i]);
    }
    mb_profile_free(p);
    rm_dir(dir);
}

static void test_atlas_settings(void **state)
{
    mb_profile *p = NULL;
    assert_int_equal(mb_profile_load("profiles", "MCP_Atlas", &VARS, &p, NULL), MB_OK);
    const mb_profile_server *t = mb_profile_server_find(p, "terminal");
    assert_non_null(t);
    assert_string_equal(env_get(t->envp, "ALLOWED_COMMANDS"), "ls,cat,find");
    assert_string_equal(env_get(t->envp, "ALLOWED_FLAGS"), "");
    assert_string_equal(env_get(t->envp, "ALLOWED_DIR"), "/data");
    assert_string_equal(env_get(t->envp, "ALLOW_SHELL_OPERATORS"), "false");
    const mb_profile_server *m = mb_profile_server_find(p, "localmemory");
    assert_string_equal(env_get(m->envp, "MEMORY_FILE_PATH"),
                        "/data/repos/memory_mcp_server/memories-for-mcp.json");
    const mb_profile_server *c = mb_profile_server_find(p, "code-executor");
    assert_string_equal(env_get(c->envp, "CODE_STORAGE_DIR"),
                        "/data/repos/mcp_code_executor_workspace");
    const mb_profile_server *g = mb_profile_server_find(p, "git");
    assert_string_equal(g->argv[4], "2025.7.1");
    assert_string_equal(g->upstream, "mcp-server-git 2025.7.1");
    assert_string_equal(json_string_value(json_object_get(g->entry, "upstream")),
                        "mcp-server-git 2025.7.1");
    const mb_profile_server *dc = mb_profile_server_find(p, "desktop-commander");
    assert_non_null(dc);
    assert_string_equal(dc->argv[3], "--allowed-dir");
    assert_string_equal(dc->argv[4], "/data");
    const mb_profile_server *ax = mb_profile_server_find(p, "arxiv");
    assert_non_null(ax);
    assert_string_equal(ax->argv[2], "arxiv");
    assert_string_equal(env_get(ax->envp, "HOME"), "/tmp");
    /* servers not implemented natively are absent, not half-configured */
    assert_null(mb_profile_server_find(p, "word"));
    assert_int_equal(p->limits.memory_bytes, 2ULL << 30);
    assert_int_equal(p->limits.pids_max, 1024);
    assert_false(p->limits.allow_network);
    mb_profile_free(p);
    /* the arXiv catalog: "${STATE}/arxiv-catalog", in the daemon's data dir */
    mb_profile_vars sv = VARS;
    sv.state_dir = "/var/lib/mcpbox";
    assert_int_equal(mb_profile_load("profiles", "MCP_Atlas", &sv, &p, NULL), MB_OK);
    assert_int_equal(p->n_binds, 1);
    assert_string_equal(p->binds[0].inside, "/srv/arxiv-catalog");
    assert_string_equal(p->binds[0].host, "/var/lib/mcpbox/arxiv-catalog");
    mb_profile_free(p);
    /* without a data dir (a profile check outside the daemon) it names nothing */
    assert_int_equal(mb_profile_load("profiles", "MCP_Atlas", &VARS, &p, NULL), MB_OK);
    assert_string_equal(p->binds[0].host, "${STATE}/arxiv-catalog");
    mb_profile_free(p);

    assert_int_equal(mb_profile_load("profiles", "Toolathlon", &sv, &p, NULL), MB_OK);
    assert_int_equal(p->n_binds, 2);
    assert_string_equal(p->binds[1].host, "/var/lib/mcpbox/arxiv-catalog");
    mb_profile_free(p);
    assert_int_equal(mb_profile_load("profiles", "Toolathlon", &VARS, &p, NULL), MB_OK);
    g = mb_profile_server_find(p, "git");
    assert_string_equal(g->argv[4], "2025.1.14");
    /* Toolathlon's pins of server-filesystem and server-memory */
    g = mb_profile_server_find(p, "filesystem");
    assert_string_equal(g->argv[3], "--upstream-version");
    assert_string_equal(g->argv[4], "2025.7.1");
    g = mb_profile_server_find(p, "localmemory");
    assert_string_equal(g->argv[3], "--upstream-version");
    assert_string_equal(g->argv[4], "2025.4.25");
    assert_string_equal(env_get(g->envp, "MEMORY_FILE_PATH"), "/data/memory/memory.json");
    t = mb_profile_server_find(p, "terminal");
    assert_string_equal(env_get(t->envp, "MAX_STDOUT_LENGTH"), "8192");
    assert_string_equal(env_get(t->envp, "ALLOWED_FLAGS"), "all");
    /* the hosted variant's account headers reach poste_email_toolathlon */
    t = mb_profile_server_find(p, "poste_email_toolathlon");
    assert_string_equal(t->headers[0], "x-email-config");
    assert_string_equal(t->headers[1], "x-auth-data");
    assert_null(t->headers[2]);
    /* pdf-tools as Toolathlon starts pdf-tools-mcp */
    t = mb_profile_server_find(p, "pdf-tools");
    assert_non_null(t);
    assert_string_equal(t->argv[3], "--workspace_path");
    assert_string_equal(t->argv[6], "/data/.pdf_tools_tempfiles");
    /* excel as Toolathlon starts excel-mcp-server: stdio, confined to /data */
    t = mb_profile_server_find(p, "excel");
    assert_non_null(t);
    assert_string_equal(t->argv[3], "stdio");
    assert_string_equal(t->argv[4], "--upstream-version");
    assert_string_equal(t->argv[5], "0.1.4");
    assert_string_equal(t->argv[7], "/data");
    assert_string_equal(t->cwd, "/data");
    /* word as Toolathlon's image pins it */
    t = mb_profile_server_find(p, "word");
    assert_non_null(t);
    assert_string_equal(t->argv[4], "1.1.9");
    /* servers not implemented natively are absent, not half-configured */
    assert_null(mb_profile_server_find(p, "notion"));
    mb_profile_free(p);
}

static void test_default_name_is_none(void **state)
{
    mb_profile *p = NULL;
    assert_int_equal(mb_profile_load("profiles", NULL, &VARS, &p, NULL), MB_OK);
    assert_string_equal(p->name, "none");
    mb_profile_free(p);
    assert_int_equal(mb_profile_load("profiles", "", &VARS, &p, NULL), MB_OK);
    assert_string_equal(p->name, "none");
    mb_profile_free(p);
}

static void test_missing_profile_lists_available(void **state)
{
    mb_profile *p = NULL;
    mb_err err = {0};
    assert_int_equal(mb_profile_load("profiles", "Nope", &VARS, &p, &err), MB_ENOTFOUND);
    assert_null(p);
    assert_non_null(strstr(err.msg, "MCP_Atlas"));
    assert_non_null(strstr(err.msg, "Nope"));
}

static void test_bad_names_refused(void **state)
{
    mb_profile *p = NULL;
    mb_err err = {0};
    assert_int_equal(mb_profile_load("profiles", "../etc/passwd", &VARS, &p, &err), MB_EINVAL);
    assert_int_equal(mb_profile_load("profiles", "a/b", &VARS, &p, &err), MB_EINVAL);
    assert_int_equal(mb_profile_load("profiles", "..", &VARS, &p, &err), MB_EINVAL);
    assert_null(p);
}

static void test_env_merge_and_placeholders(void **state)
{
    char *dir = tmpdir_with(
        "x", "{\"base_env\":{\"A\":\"1\",\"B\":\"2\"},"
             "\"servers\":{\"s\":{\"argv\":[\"${MCPBOX}\",\"mcp\",\"s\",\"${DATA}/x\"],"
             "\"env\":{\"B\":\"3\",\"C\":\"${DATA}\"},\"cwd\":\"${DATA}/w\"}}}");
    mb_profile *p = NULL;
    mb_profile_vars vars = {.mcpbox_bin = "/bin/mb", .data_dir = "/work"};
    assert_int_equal(mb_profile_load(dir, "x", &vars, &p, NULL), MB_OK);
    const mb_profile_server *s = mb_profile_server_find(p, "s");
    assert_string_equal(s->argv[0], "/bin/mb");
    assert_string_equal(s->argv[3], "/work/x");
    assert_null(s->argv[4]);
    assert_string_equal(s->cwd, "/work/w");
    assert_string_equal(env_get(s->envp, "A"), "1");
    assert_string_equal(env_get(s->envp, "B"), "3");
    assert_string_equal(env_get(s->envp, "C"), "/work");
    assert_null(mb_profile_server_find(p, "t"));
    assert_null(s->headers);
    mb_profile_free(p);
    rm_dir(dir);
}

static void expect_invalid(const char *text, const char *needle)
{
    char *dir = tmpdir_with("bad", text);
    mb_profile *p = NULL;
    mb_err err = {0};
    int rc = mb_profile_load(dir, "bad", &VARS, &p, &err);
    if (rc != MB_EINVAL || !strstr(err.msg, needle))
        fprintf(stderr, "text %s\n  rc=%d msg=%s (wanted %s)\n", text, rc, err.msg, needle);
    assert_int_equal(rc, MB_EINVAL);
    assert_null(p);
    assert_non_null(strstr(err.msg, needle));
    rm_dir(dir);
}

static void test_malformed_files(void **state)
{
    expect_invalid("{", "bad.json");
    expect_invalid("[]", "top level");
    expect_invalid("{}", "\"servers\"");
    expect_invalid("{\"servers\":{\"s\":{}}}", "servers.s.argv");
    expect_invalid("{\"servers\":{\"s\":{\"argv\":[1]}}}", "argv[0]");
    expect_invalid("{\"servers\":{\"s\":{\"argv\":[\"${NOPE}\"]}}}", "${NOPE}");
    expect_invalid("{\"servers\":{\"s\":{\"argv\":[\"x\"],\"env\":{\"A\":1}}}}", "env \"A\"");
    expect_invalid("{\"servers\":{\"s\":{\"argv\":[\"x\"],\"env\":{\"A=B\":\"1\"}}}}", "A=B");
    expect_invalid("{\"sandbox\":{\"memory\":\"lots\"},\"servers\":{}}", "sandbox.memory");
    expect_invalid("{\"sandbox\":{\"pids\":-1},\"servers\":{}}", "sandbox.pids");
    expect_invalid("{\"servers\":{\"s\":{\"argv\":[\"x\"]},\"s\":{\"argv\":[\"y\"]}}}",
                   "duplicate");
    expect_invalid("{\"servers\":{\"../s\":{\"argv\":[\"x\"]}}}", "server name");
    expect_invalid("{\"servers\":{\"s\":{\"argv\":[\"x\"],\"tools_static\":\"yes\"}}}",
                   "servers.s.tools_static must be true or false");
    /* forwarded headers: lowercase names, at most 8 */
    expect_invalid("{\"servers\":{\"s\":{\"argv\":[\"x\"],\"headers\":\"x-a\"}}}",
                   "servers.s.headers");
    expect_invalid("{\"servers\":{\"s\":{\"argv\":[\"x\"],\"headers\":[\"X-A\"]}}}",
                   "headers[0]");
    expect_invalid("{\"servers\":{\"s\":{\"argv\":[\"x\"],\"headers\":[\"x-a\",\"a: b\"]}}}",
                   "headers[1]");
    expect_invalid("{\"servers\":{\"s\":{\"argv\":[\"x\"],\"headers\":[\"x\\r\\ny\"]}}}",
                   "headers[0]");
    expect_invalid("{\"servers\":{\"s\":{\"argv\":[\"x\"],\"headers\":[\"\"]}}}",
                   "headers[0]");
    expect_invalid("{\"servers\":{\"s\":{\"argv\":[\"x\"],\"headers\":[\"a\",\"b\",\"c\","
                   "\"d\",\"e\",\"f\",\"g\",\"h\",\"i\"]}}}",
                   "at most 8");
}

static void test_names_listing(void **state)
{
    char **names = NULL;
    assert_int_equal(mb_profile_names("profiles", &names, NULL), MB_OK);
    int seen = 0;
    for (char **n = names; *n; n++) {
        if (!strcmp(*n, "none") || !strcmp(*n, "MCP_Atlas") || !strcmp(*n, "Toolathlon") ||
            !strcmp(*n, "MCP_Mark"))
            seen++;
        if (n[1]) assert_true(strcmp(n[0], n[1]) < 0);
    }
    assert_int_equal(seen, 4);
    mb_profile_names_free(names);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shipped_presets_load),
        cmocka_unit_test(test_tools_static_default),
        cmocka_unit_test(test_atlas_settings),
        cmocka_unit_test(test_default_name_is_none),
        cmocka_unit_test(test_missing_profile_lists_available),
        cmocka_unit_test(test_bad_names_refused),
        cmocka_unit_test(test_env_merge_and_placeholders),
        cmocka_unit_test(test_malformed_files),
        cmocka_unit_test(test_names_listing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
