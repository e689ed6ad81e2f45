/*
 * test_check.h: the tiny assertion framework of the C tests (test_mysqlleader.c, test_tls.c).
 * Each check that fails prints one line "FAIL file:line: ..." with the thread's last error; a
 * test program ends by printing "N passed, M failed" from `passed` and `failed`. For one
 * translation unit each (the state is static).
 */
#ifndef MYSQLLEADER_TEST_CHECK_H
#define MYSQLLEADER_TEST_CHECK_H

#include <stdarg.h>
#include <stdio.h>

#include "mysqlleader.h"

static int passed = 0;
static int failed = 0;

static void record(int ok, const char *file, int line, const char *fmt, ...) {
    if (ok) {
        passed++;
        return;
    }
    failed++;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "FAIL %s:%d: ", file, line);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}

/* A condition; on failure prints it and the thread's last error. */
#define CHECK(cond) \
    record((cond) ? 1 : 0, __FILE__, __LINE__, "%s (last error: %s)", #cond, mysqlleader_last_error())

/* A call that must return `expected`. */
#define CHECK_RC(call, expected)                                                               \
    do {                                                                                       \
        mysqlleader_result rc_ = (call);                                                       \
        record(rc_ == (expected), __FILE__, __LINE__, "%s returned %s, expected %s (last error: %s)", \
               #call, mysqlleader_result_name(rc_), mysqlleader_result_name(expected),         \
               mysqlleader_last_error());                                                      \
    } while (0)

#define CHECK_OK(call) CHECK_RC(call, MYSQLLEADER_OK)

#endif /* MYSQLLEADER_TEST_CHECK_H */
