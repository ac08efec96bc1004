/*
 * tools.h - the excel server's tool handlers (one per upstream tool) and the
 * helpers they share for answering the way upstream does.
 */
#ifndef MB_SERVERS_EXCEL_TOOLS_H
#define MB_SERVERS_EXCEL_TOOLS_H

#include "servers/excel/excel.h"

/* A normal result: the text plus structuredContent {"result": text}. */
int xl_ok(mb_mcp_result *res, const char *text);
int xl_okf(mb_mcp_result *res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Upstream's caught exceptions: a normal result "Error: <msg>". */
int xl_error(mb_mcp_result *res, const char *msg);
/* Ends a call on an opened book: xl_error(why) (why is freed), or the book
 * saved and xl_ok(text) (a failed save answers xl_error); the book is freed. */
int xl_fail_book(xl_book *b, mb_mcp_result *res, char *why);
int xl_save_ok(xl_book *b, mb_mcp_result *res, const char *text);
/* Argument accessors (arguments are validated and defaulted before). */
const char *xl_str(json_t *args, const char *key); /* NULL for null */
int xl_bool(json_t *args, const char *key);
long long xl_int(json_t *args, const char *key);

int xl_t_apply_formula(mb_mcp_call *, json_t *, mb_mcp_result *);
int xl_t_validate_formula(mb_mcp_call *, json_t *, mb_mcp_result *);
int xl_t_format_range(mb_mcp_call *, json_t *, mb_mcp_result *);
int xl_t_read_data(mb_mcp_call *, json_t *, mb_mcp_result *);
int xl_t_write_data(mb_mcp_call *, json_t *, mb_mcp_result *);
int xl_t_create_workbook(mb_mcp_call *, json_t *, mb_mcp_result *);
int xl_t_create_worksheet(mb_mcp_call *, json_t *, mb_mcp_result *);
int xl_t_create_chart(mb_mcp_call *, json_t *, mb_mcp_result *);
int xl_t_create_pivot(mb_mcp_call *, json_t *, mb_mcp_result *);
int xl_t_create_table(mb_mcp_call *, json_t *, mb_mcp_result *);
int xl_t_copy_worksheet(mb_mcp_call *, json_t *, mb_mcp_result *);
int xl_t_delete_worksheet(mb_mcp_call *, json_t *, mb_mcp_result *);
int xl_t_rename_worksheet(mb_mcp_call *, json_t *, mb_mcp_result *);
int xl_t_metadata(mb_mcp_call *, json_t *, mb_mcp_result *);
int xl_t_merge(mb_mcp_call *, json_t *, mb_mcp_result *);
int xl_t_unmerge(mb_mcp_call *, json_t *, mb_mcp_result *);
int xl_t_get_merged(mb_mcp_call *, json_t *, mb_mcp_result *);
int xl_t_copy_range(mb_mcp_call *, json_t *, mb_mcp_result *);
int xl_t_delete_range(mb_mcp_call *, json_t *, mb_mcp_result *);
int xl_t_validate_range(mb_mcp_call *, json_t *, mb_mcp_result *);
int xl_t_validation_info(mb_mcp_call *, json_t *, mb_mcp_result *);
int xl_t_insert_rows(mb_mcp_call *, json_t *, mb_mcp_result *);
int xl_t_insert_cols(mb_mcp_call *, json_t *, mb_mcp_result *);
int xl_t_delete_rows(mb_mcp_call *, json_t *, mb_mcp_result *);
int xl_t_delete_cols(mb_mcp_call *, json_t *, mb_mcp_result *);

#endif /* MB_SERVERS_EXCEL_TOOLS_H */
