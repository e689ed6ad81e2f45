/*
 * test_mysqlleader.c: the C API against a real server, every function and every error path.
 *
 *   MYSQLLEADER_TEST_URL=mysql://user:pass@host:port/db ./test_mysqlleader [PATH_TO_EXAMPLE]
 *
 * The account must be allowed to create databases: each run creates its own (mlc_<pid>) through
 * the API itself, migrates it, and drops it at the end. PATH_TO_EXAMPLE (the built example.c)
 * is the second process of the failover tests; without it they are reported as failed.
 * MYSQLLEADER_C_ONLY_TXN=1 stops after the transaction tests (a quick run while working on them).
 *
 * Prints one line per failed check and ends with exactly "N passed, M failed"; exits 0 only
 * when nothing failed. Liveness bounds (a new leader within a lease and a retry) carry a
 * generous slack for a shared, busy machine; no check is about speed.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mysqlleader.h"

/* ---- the tiny assertion framework: CHECK, CHECK_RC, CHECK_OK, passed, failed ---- */

#include "test_check.h"

/* The message of the last error contains `needle`. */
#define CHECK_MSG(needle)                                                                      \
    record(strstr(mysqlleader_last_error(), (needle)) != NULL, __FILE__, __LINE__,             \
           "last error \"%s\" does not contain \"%s\"", mysqlleader_last_error(), (needle))

/* The last error names the rejected parameter `name` in its field (the C spelling). */
#define CHECK_PARAM(name)                                                                      \
    record(mysqlleader_last_error_parameter() != NULL &&                                       \
               strcmp(mysqlleader_last_error_parameter(), (name)) == 0,                        \
           __FILE__, __LINE__, "last error's parameter is \"%s\", expected \"%s\" (%s)",       \
           mysqlleader_last_error_parameter() ? mysqlleader_last_error_parameter() : "(null)", \
           (name), mysqlleader_last_error())

#define CHECK_STR(actual, expected)                                                            \
    record(strcmp((actual), (expected)) == 0, __FILE__, __LINE__, "%s is \"%s\", expected \"%s\"", \
           #actual, (actual), (expected))

/* ---- helpers ---- */

static const char INVALID_UTF8[] = "bad\xff\xfeid";
static char ID_129[130];   /* 129 characters: one too many */
static char ID_128[257];   /* 128 characters of 2 bytes each: the longest id */
static char base_url[1024];
static char db_url[1024];
static char db_name[64];
static const char *example_path = NULL;

static void sleep_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) == -1 && errno == EINTR) {
    }
}

static long long now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* `url` with its database replaced by `db` (a ?query is kept). */
static void url_with_db(char *out, size_t n, const char *url, const char *db) {
    const char *query = strchr(url, '?');
    size_t head = (size_t)(strrchr(url, '/') - url);
    snprintf(out, n, "%.*s/%s%s", (int)head, url, db, query ? query : "");
}

/* Runs one statement in a transaction of its own (DDL on the admin account). */
static mysqlleader_result run_sql(mysqlleader_client *client, const char *sql) {
    mysqlleader_txn *txn = NULL;
    mysqlleader_result rc = mysqlleader_txn_begin(client, &txn);
    if (rc != MYSQLLEADER_OK) return rc;
    rc = mysqlleader_txn_execute(txn, sql, NULL, 0, NULL);
    if (rc == MYSQLLEADER_OK) rc = mysqlleader_txn_commit(txn);
    mysqlleader_txn_free(txn);
    return rc;
}

/* Rows of `ledger` with this id, counted by deleting them in a transaction rolled back. */
static long long ledger_rows(mysqlleader_client *client, const char *id) {
    mysqlleader_txn *txn = NULL;
    uint64_t affected = 0;
    const char *params[1] = {id};
    if (mysqlleader_txn_begin(client, &txn) != MYSQLLEADER_OK) return -1;
    mysqlleader_result rc = mysqlleader_txn_execute(txn, "DELETE FROM ledger WHERE id = ?", params, 1, &affected);
    mysqlleader_txn_free(txn); /* rolls back */
    return rc == MYSQLLEADER_OK ? (long long)affected : -1;
}

/* ---- version, names, last error, strings ---- */

static void test_version_and_names(void) {
    CHECK_STR(mysqlleader_version(), MYSQLLEADER_VERSION);
    char composed[64];
    snprintf(composed, sizeof composed, "%d.%d.%d", MYSQLLEADER_VERSION_MAJOR, MYSQLLEADER_VERSION_MINOR,
             MYSQLLEADER_VERSION_PATCH);
    CHECK_STR(composed, MYSQLLEADER_VERSION);

    CHECK_STR(mysqlleader_result_name(MYSQLLEADER_OK), "MYSQLLEADER_OK");
    CHECK_STR(mysqlleader_result_name(MYSQLLEADER_NULL_ARGUMENT), "MYSQLLEADER_NULL_ARGUMENT");
    CHECK_STR(mysqlleader_result_name(MYSQLLEADER_INVALID_STATE), "MYSQLLEADER_INVALID_STATE");
    CHECK_STR(mysqlleader_result_name(9999), "MYSQLLEADER_UNKNOWN_RESULT");
    /* The numbers are part of the ABI. */
    CHECK(MYSQLLEADER_OK == 0 && MYSQLLEADER_NULL_ARGUMENT == 1 && MYSQLLEADER_INVALID_ARGUMENT == 2 &&
          MYSQLLEADER_INVALID_UTF8 == 3 && MYSQLLEADER_NOT_LEADER == 4 && MYSQLLEADER_CONNECTION == 5 &&
          MYSQLLEADER_NOT_MIGRATED == 6 && MYSQLLEADER_SERVER == 7 && MYSQLLEADER_MIGRATION == 8 &&
          MYSQLLEADER_BUFFER_TOO_SMALL == 9 && MYSQLLEADER_PANIC == 10 && MYSQLLEADER_INVALID_STATE == 11);

    CHECK_STR(mysqlleader_stop_reason_name(MYSQLLEADER_STOP_NONE), "none");
    CHECK_STR(mysqlleader_stop_reason_name(MYSQLLEADER_STOP_LOST_SEAT), "lost_seat");
    CHECK_STR(mysqlleader_stop_reason_name(MYSQLLEADER_STOP_DEADLINE_PASSED), "deadline_passed");
    CHECK_STR(mysqlleader_stop_reason_name(MYSQLLEADER_STOP_RESIGNED), "resigned");
    CHECK_STR(mysqlleader_stop_reason_name(MYSQLLEADER_STOP_SHUTDOWN), "shutdown");
    CHECK_STR(mysqlleader_stop_reason_name(MYSQLLEADER_STOP_FAILED), "failed");
    CHECK_STR(mysqlleader_stop_reason_name(MYSQLLEADER_STOP_HANDED_OVER), "handed_over");
    CHECK(MYSQLLEADER_STOP_HANDED_OVER == 6);
    CHECK_STR(mysqlleader_stop_reason_name(77), "unknown");
}

static void test_last_error(void) {
    mysqlleader_client *client = (mysqlleader_client *)0x1;
    /* A failure records its code and message, and leaves the out-pointer alone. */
    CHECK_RC(mysqlleader_client_new(NULL, &client), MYSQLLEADER_NULL_ARGUMENT);
    CHECK(client == (mysqlleader_client *)0x1);
    CHECK_MSG("url");
    CHECK(mysqlleader_last_error_code() == MYSQLLEADER_NULL_ARGUMENT);
    CHECK(mysqlleader_last_error_server_code() == 0);
    CHECK(!mysqlleader_last_error_is_transient());

    size_t len = strlen(mysqlleader_last_error());
    size_t needed = 0;
    char tiny[4] = "abc";
    CHECK_RC(mysqlleader_last_error_copy(tiny, sizeof tiny, &needed), MYSQLLEADER_BUFFER_TOO_SMALL);
    CHECK(needed == len + 1);
    CHECK_STR(tiny, "abc"); /* nothing written when too small */
    needed = 0;
    CHECK_RC(mysqlleader_last_error_copy(NULL, 0, &needed), MYSQLLEADER_BUFFER_TOO_SMALL);
    CHECK(needed == len + 1);
    CHECK_RC(mysqlleader_last_error_copy(NULL, 10, &needed), MYSQLLEADER_NULL_ARGUMENT);
    char buf[256];
    CHECK_OK(mysqlleader_last_error_copy(buf, sizeof buf, NULL));
    CHECK_STR(buf, mysqlleader_last_error());
    /* Copying never changed the last error. */
    CHECK(mysqlleader_last_error_code() == MYSQLLEADER_NULL_ARGUMENT);

    /* A success clears it. */
    CHECK_OK(mysqlleader_default_node_id(buf, sizeof buf, NULL));
    CHECK_STR(mysqlleader_last_error(), "");
    CHECK(mysqlleader_last_error_code() == MYSQLLEADER_OK);
    CHECK_OK(mysqlleader_last_error_copy(buf, sizeof buf, &needed));
    CHECK(needed == 1 && buf[0] == '\0');
}

static void test_strings(void) {
    char buf[MYSQLLEADER_ID_BUFFER_SIZE];
    size_t needed = 0;
    CHECK_OK(mysqlleader_default_node_id(buf, sizeof buf, &needed));
    char pid[32];
    snprintf(pid, sizeof pid, ":%ld", (long)getpid());
    CHECK(strstr(buf, pid) != NULL);
    CHECK(needed == strlen(buf) + 1);
    char small[2] = "x";
    CHECK_RC(mysqlleader_default_node_id(small, sizeof small, &needed), MYSQLLEADER_BUFFER_TOO_SMALL);
    CHECK(needed == strlen(buf) + 1 && small[0] == 'x');
    CHECK_RC(mysqlleader_default_node_id(NULL, 5, &needed), MYSQLLEADER_NULL_ARGUMENT);

    char *sql = NULL;
    CHECK_OK(mysqlleader_install_sql(&sql));
    CHECK(sql != NULL && strstr(sql, "CREATE OR REPLACE PROCEDURE campaign(") != NULL);
    CHECK(sql != NULL && strstr(sql, "DELIMITER $$") != NULL);
    mysqlleader_string_free(sql);
    mysqlleader_string_free(NULL);
    CHECK_RC(mysqlleader_install_sql(NULL), MYSQLLEADER_NULL_ARGUMENT);
}

/* ---- clients ---- */

static void test_client_arguments(void) {
    mysqlleader_client *client = NULL;
    CHECK_RC(mysqlleader_client_new(NULL, &client), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_client_new(db_url, NULL), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_MSG("client_out");
    CHECK_RC(mysqlleader_client_new(INVALID_UTF8, &client), MYSQLLEADER_INVALID_UTF8);
    CHECK_MSG("url");
    CHECK_RC(mysqlleader_client_new("not a url", &client), MYSQLLEADER_INVALID_ARGUMENT);
    CHECK_RC(mysqlleader_client_new("mysql://app:Sup3rS3cretPw@db.example:notaport/x", &client),
             MYSQLLEADER_INVALID_ARGUMENT);
    CHECK(strstr(mysqlleader_last_error(), "Sup3rS3cretPw") == NULL);
    CHECK(client == NULL);

    CHECK_OK(mysqlleader_client_new(db_url, &client));
    CHECK(client != NULL);
    CHECK_RC(mysqlleader_client_set_request_timeout(NULL, 1000), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_client_set_request_timeout(client, 0), MYSQLLEADER_INVALID_ARGUMENT);
    CHECK_MSG("timeout_ms");
    CHECK_RC(mysqlleader_client_set_request_timeout(client, MYSQLLEADER_LEASE_MS_MAX + 1), MYSQLLEADER_INVALID_ARGUMENT);
    CHECK_OK(mysqlleader_client_set_request_timeout(client, 4000));
    mysqlleader_client_free(client); /* never used: no connection was opened */
    mysqlleader_client_free(NULL);
}

/* A server that refuses the connection: every call fails promptly with CONNECTION, the
 * message names the problem and the server (host:port), never the user or the password. */
static void test_refused_connection(void) {
    const char *url = "mysql://someone:Sup3rS3cretPw@127.0.0.1:1/db";
    mysqlleader_client *client = NULL;
    CHECK_OK(mysqlleader_client_new(url, &client));
    CHECK_OK(mysqlleader_client_set_request_timeout(client, 3000));
    long long started = now_ms();

    mysqlleader_campaign_result c;
    mysqlleader_leader_check check;
    mysqlleader_current_leader_result cur;
    mysqlleader_reelect_result re;
    mysqlleader_resign_result rs;
    bool enabled = false;
    size_t applied = 99;
    mysqlleader_txn *txn = NULL;
    CHECK_RC(mysqlleader_campaign(client, "s", "n", 1000, &c), MYSQLLEADER_CONNECTION);
    CHECK(mysqlleader_last_error_is_transient());
    CHECK(strlen(mysqlleader_last_error()) > 0);
    CHECK(strstr(mysqlleader_last_error(), "Sup3rS3cretPw") == NULL);
    CHECK(strstr(mysqlleader_last_error(), "127.0.0.1:1") != NULL);
    CHECK(strstr(mysqlleader_last_error(), "someone") == NULL);
    CHECK_RC(mysqlleader_am_i_leader(client, "s", "n", &check), MYSQLLEADER_CONNECTION);
    CHECK_RC(mysqlleader_current_leader(client, "s", &cur), MYSQLLEADER_CONNECTION);
    CHECK_RC(mysqlleader_force_leader(client, "s", "n", 1000, &c), MYSQLLEADER_CONNECTION);
    CHECK_RC(mysqlleader_reelect(client, "s", &re), MYSQLLEADER_CONNECTION);
    CHECK_RC(mysqlleader_resign(client, "s", "n", &rs), MYSQLLEADER_CONNECTION);
    CHECK_RC(mysqlleader_assert_leader(client, "s", "n", 1, &check), MYSQLLEADER_CONNECTION);
    CHECK_RC(mysqlleader_set_expiry_event(client, true, &enabled), MYSQLLEADER_CONNECTION);
    CHECK_RC(mysqlleader_migrate(client, &applied), MYSQLLEADER_CONNECTION);
    CHECK(applied == 99);
    CHECK(strstr(mysqlleader_last_error(), "127.0.0.1:1") != NULL);
    CHECK_RC(mysqlleader_txn_begin(client, &txn), MYSQLLEADER_CONNECTION);
    CHECK(txn == NULL);
    CHECK(strstr(mysqlleader_last_error(), "Sup3rS3cretPw") == NULL);
    CHECK(strstr(mysqlleader_last_error(), "127.0.0.1:1") != NULL);

    /* An elector on it: never leads, says why, and frees promptly. */
    mysqlleader_elector_config config = {0};
    config.service_id = "refused";
    config.node_id = "n";
    config.lease_ms = 2000;
    mysqlleader_elector *elector = NULL;
    CHECK_OK(mysqlleader_elector_new(client, &config, NULL, NULL, &elector));
    bool leading = true;
    CHECK_OK(mysqlleader_elector_wait_for_leadership(elector, 1000, &leading));
    CHECK(!leading);
    mysqlleader_elector_state status;
    CHECK_OK(mysqlleader_elector_snapshot(elector, &status));
    CHECK(!status.is_leader && status.campaigning && status.last_call_result == MYSQLLEADER_CONNECTION);
    char message[512];
    CHECK_OK(mysqlleader_elector_last_call_error(elector, message, sizeof message, NULL));
    CHECK(strlen(message) > 0 && strstr(message, "Sup3rS3cretPw") == NULL);
    CHECK(strstr(message, "127.0.0.1:1") != NULL);
    mysqlleader_elector_free(elector);
    mysqlleader_client_free(client);
    /* Refused connections fail at once; the bound is only against hanging. */
    CHECK(now_ms() - started < 30000);
}

/* ---- the one-shot procedure calls ---- */

static void test_not_migrated_then_migrate(mysqlleader_client *client) {
    mysqlleader_campaign_result c;
    CHECK_RC(mysqlleader_campaign(client, "s", "n", 1000, &c), MYSQLLEADER_NOT_MIGRATED);
    CHECK_MSG("migrate");
    size_t applied = 0;
    CHECK_RC(mysqlleader_migrate(NULL, &applied), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_OK(mysqlleader_migrate(client, &applied));
    CHECK(applied >= 3);
    CHECK_OK(mysqlleader_migrate(client, &applied));
    CHECK(applied == 0);
    CHECK_OK(mysqlleader_migrate(client, NULL));
}

/* Fills a struct with a marker, to see that failed calls write nothing. */
#define MARK(x) memset(&(x), 0xAB, sizeof(x))
static int still_marked(const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i] != 0xAB) return 0;
    return 1;
}
#define UNTOUCHED(x) still_marked(&(x), sizeof(x))

static void test_call_arguments(mysqlleader_client *client) {
    mysqlleader_campaign_result c;
    mysqlleader_leader_check check;
    mysqlleader_current_leader_result cur;
    mysqlleader_reelect_result re;
    mysqlleader_resign_result rs;
    bool enabled;
    MARK(c);
    MARK(check);
    MARK(cur);
    MARK(re);
    MARK(rs);
    MARK(enabled);

    /* campaign: every pointer, UTF-8, length, lease. */
    CHECK_RC(mysqlleader_campaign(NULL, "s", "n", 1000, &c), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_MSG("client");
    CHECK_RC(mysqlleader_campaign(client, NULL, "n", 1000, &c), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_MSG("service_id");
    CHECK_RC(mysqlleader_campaign(client, "s", NULL, 1000, &c), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_MSG("node_id");
    CHECK_RC(mysqlleader_campaign(client, "s", "n", 1000, NULL), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_MSG("result_out");
    CHECK_RC(mysqlleader_campaign(client, INVALID_UTF8, "n", 1000, &c), MYSQLLEADER_INVALID_UTF8);
    CHECK_MSG("service_id");
    CHECK_RC(mysqlleader_campaign(client, "s", INVALID_UTF8, 1000, &c), MYSQLLEADER_INVALID_UTF8);
    CHECK_MSG("node_id");
    CHECK_RC(mysqlleader_campaign(client, ID_129, "n", 1000, &c), MYSQLLEADER_INVALID_ARGUMENT);
    CHECK_MSG("service_id");
    CHECK_RC(mysqlleader_campaign(client, "s", ID_129, 1000, &c), MYSQLLEADER_INVALID_ARGUMENT);
    CHECK_MSG("node_id");
    CHECK_RC(mysqlleader_campaign(client, "", "n", 1000, &c), MYSQLLEADER_INVALID_ARGUMENT);
    CHECK_RC(mysqlleader_campaign(client, "s", "n", 0, &c), MYSQLLEADER_INVALID_ARGUMENT);
    CHECK_MSG("lease_ms");
    CHECK_RC(mysqlleader_campaign(client, "s", "n", MYSQLLEADER_LEASE_MS_MAX + 1, &c), MYSQLLEADER_INVALID_ARGUMENT);
    CHECK_RC(mysqlleader_campaign(client, "s", "n", UINT64_MAX, &c), MYSQLLEADER_INVALID_ARGUMENT);

    /* am_i_leader */
    CHECK_RC(mysqlleader_am_i_leader(NULL, "s", "n", &check), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_am_i_leader(client, NULL, "n", &check), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_am_i_leader(client, "s", NULL, &check), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_am_i_leader(client, "s", "n", NULL), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_am_i_leader(client, INVALID_UTF8, "n", &check), MYSQLLEADER_INVALID_UTF8);
    CHECK_RC(mysqlleader_am_i_leader(client, "s", INVALID_UTF8, &check), MYSQLLEADER_INVALID_UTF8);
    CHECK_RC(mysqlleader_am_i_leader(client, ID_129, "n", &check), MYSQLLEADER_INVALID_ARGUMENT);
    CHECK_RC(mysqlleader_am_i_leader(client, "s", ID_129, &check), MYSQLLEADER_INVALID_ARGUMENT);

    /* current_leader */
    CHECK_RC(mysqlleader_current_leader(NULL, "s", &cur), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_current_leader(client, NULL, &cur), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_current_leader(client, "s", NULL), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_current_leader(client, INVALID_UTF8, &cur), MYSQLLEADER_INVALID_UTF8);
    CHECK_RC(mysqlleader_current_leader(client, ID_129, &cur), MYSQLLEADER_INVALID_ARGUMENT);

    /* force_leader */
    CHECK_RC(mysqlleader_force_leader(NULL, "s", "n", 1000, &c), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_force_leader(client, NULL, "n", 1000, &c), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_force_leader(client, "s", NULL, 1000, &c), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_force_leader(client, "s", "n", 1000, NULL), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_force_leader(client, INVALID_UTF8, "n", 1000, &c), MYSQLLEADER_INVALID_UTF8);
    CHECK_RC(mysqlleader_force_leader(client, "s", INVALID_UTF8, 1000, &c), MYSQLLEADER_INVALID_UTF8);
    CHECK_RC(mysqlleader_force_leader(client, ID_129, "n", 1000, &c), MYSQLLEADER_INVALID_ARGUMENT);
    CHECK_RC(mysqlleader_force_leader(client, "s", ID_129, 1000, &c), MYSQLLEADER_INVALID_ARGUMENT);
    CHECK_RC(mysqlleader_force_leader(client, "s", "n", 0, &c), MYSQLLEADER_INVALID_ARGUMENT);

    /* reelect */
    CHECK_RC(mysqlleader_reelect(NULL, "s", &re), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_reelect(client, NULL, &re), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_reelect(client, "s", NULL), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_reelect(client, INVALID_UTF8, &re), MYSQLLEADER_INVALID_UTF8);
    CHECK_RC(mysqlleader_reelect(client, ID_129, &re), MYSQLLEADER_INVALID_ARGUMENT);

    /* resign */
    CHECK_RC(mysqlleader_resign(NULL, "s", "n", &rs), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_resign(client, NULL, "n", &rs), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_resign(client, "s", NULL, &rs), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_resign(client, "s", "n", NULL), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_resign(client, INVALID_UTF8, "n", &rs), MYSQLLEADER_INVALID_UTF8);
    CHECK_RC(mysqlleader_resign(client, "s", INVALID_UTF8, &rs), MYSQLLEADER_INVALID_UTF8);
    CHECK_RC(mysqlleader_resign(client, ID_129, "n", &rs), MYSQLLEADER_INVALID_ARGUMENT);
    CHECK_RC(mysqlleader_resign(client, "s", ID_129, &rs), MYSQLLEADER_INVALID_ARGUMENT);

    /* assert_leader */
    CHECK_RC(mysqlleader_assert_leader(NULL, "s", "n", 1, &check), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_assert_leader(client, NULL, "n", 1, &check), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_assert_leader(client, "s", NULL, 1, &check), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_assert_leader(client, "s", "n", 1, NULL), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_assert_leader(client, INVALID_UTF8, "n", 1, &check), MYSQLLEADER_INVALID_UTF8);
    CHECK_RC(mysqlleader_assert_leader(client, "s", INVALID_UTF8, 1, &check), MYSQLLEADER_INVALID_UTF8);
    CHECK_RC(mysqlleader_assert_leader(client, ID_129, "n", 1, &check), MYSQLLEADER_INVALID_ARGUMENT);
    CHECK_RC(mysqlleader_assert_leader(client, "s", ID_129, 1, &check), MYSQLLEADER_INVALID_ARGUMENT);

    /* set_expiry_event */
    CHECK_RC(mysqlleader_set_expiry_event(NULL, true, &enabled), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_set_expiry_event(client, true, NULL), MYSQLLEADER_NULL_ARGUMENT);

    CHECK(UNTOUCHED(c) && UNTOUCHED(check) && UNTOUCHED(cur) && UNTOUCHED(re) && UNTOUCHED(rs) && UNTOUCHED(enabled));
}

static void test_calls(mysqlleader_client *client) {
    mysqlleader_campaign_result c;
    mysqlleader_leader_check check;
    mysqlleader_current_leader_result cur;
    mysqlleader_reelect_result re;
    mysqlleader_resign_result rs;

    /* a takes the vacant seat at term 1; b only learns who leads. */
    CHECK_OK(mysqlleader_campaign(client, "calls", "a", 10000, &c));
    CHECK(c.is_leader && c.term == 1 && c.lease_remaining_ms > 0 && c.lease_remaining_ms <= 10000);
    CHECK_STR(c.leader_id, "a");
    CHECK_OK(mysqlleader_campaign(client, "calls", "b", 10000, &c));
    CHECK(!c.is_leader && c.term == 1);
    CHECK_STR(c.leader_id, "a");
    CHECK_OK(mysqlleader_campaign(client, "calls", "a", 10000, &c)); /* a renew keeps the term */
    CHECK(c.is_leader && c.term == 1);

    CHECK_OK(mysqlleader_am_i_leader(client, "calls", "a", &check));
    CHECK(check.is_leader && check.term == 1 && check.lease_remaining_ms > 0);
    CHECK_OK(mysqlleader_am_i_leader(client, "calls", "b", &check));
    CHECK(!check.is_leader && check.term == 1);

    CHECK_OK(mysqlleader_current_leader(client, "calls", &cur));
    CHECK_STR(cur.leader_id, "a");
    CHECK(cur.term == 1 && cur.lease_remaining_ms > 0);

    CHECK_OK(mysqlleader_assert_leader(client, "calls", "a", 1, &check));
    CHECK(check.is_leader && check.term == 1 && check.lease_remaining_ms > 0);
    MARK(check);
    CHECK_RC(mysqlleader_assert_leader(client, "calls", "a", 2, &check), MYSQLLEADER_NOT_LEADER);
    CHECK_MSG("not the leader");
    CHECK_RC(mysqlleader_assert_leader(client, "calls", "b", 1, &check), MYSQLLEADER_NOT_LEADER);
    CHECK(UNTOUCHED(check));

    /* An operator forces b in: term 2; a is out. */
    CHECK_OK(mysqlleader_force_leader(client, "calls", "b", 10000, &c));
    CHECK(c.is_leader && c.term == 2);
    CHECK_STR(c.leader_id, "b");
    CHECK_OK(mysqlleader_resign(client, "calls", "a", &rs));
    CHECK(!rs.resigned && rs.term == 2);
    CHECK_OK(mysqlleader_resign(client, "calls", "b", &rs));
    CHECK(rs.resigned && rs.term == 2);
    CHECK_OK(mysqlleader_current_leader(client, "calls", &cur));
    CHECK_STR(cur.leader_id, "");
    CHECK(cur.term == 2 && cur.lease_remaining_ms == 0);

    /* The longest id (128 two-byte characters) goes through unchanged. */
    CHECK_OK(mysqlleader_campaign(client, "calls", ID_128, 10000, &c));
    CHECK(c.is_leader && c.term == 3);
    CHECK_STR(c.leader_id, ID_128);

    CHECK_OK(mysqlleader_reelect(client, "calls", &re));
    CHECK_STR(re.previous_leader_id, ID_128);
    CHECK(re.term == 3);
    CHECK_OK(mysqlleader_reelect(client, "calls", &re));
    CHECK_STR(re.previous_leader_id, "");
    CHECK_OK(mysqlleader_campaign(client, "calls", "b", 10000, &c));
    CHECK(c.is_leader && c.term == 4);

    /* A lease the procedures reject would have been caught here already; an unknown service is
     * simply vacant at term 0. */
    CHECK_OK(mysqlleader_current_leader(client, "nobody-ever", &cur));
    CHECK(cur.term == 0 && cur.leader_id[0] == '\0');

    bool enabled = false;
    CHECK_OK(mysqlleader_set_expiry_event(client, true, &enabled));
    CHECK(enabled);
    CHECK_OK(mysqlleader_set_expiry_event(client, false, &enabled));
    CHECK(!enabled);
}

/* ---- fenced transactions ---- */

static void test_txn(mysqlleader_client *client) {
    mysqlleader_txn *txn = (mysqlleader_txn *)0x1;
    mysqlleader_leader_check check;
    mysqlleader_campaign_result c;
    uint64_t affected = 0;

    CHECK_RC(mysqlleader_txn_begin(NULL, &txn), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_txn_begin(client, NULL), MYSQLLEADER_NULL_ARGUMENT);
    CHECK(txn == (mysqlleader_txn *)0x1);
    CHECK_RC(mysqlleader_txn_assert_leader(NULL, "s", "n", 1, &check), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_txn_execute(NULL, "SELECT 1", NULL, 0, NULL), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_txn_commit(NULL), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_txn_rollback(NULL), MYSQLLEADER_NULL_ARGUMENT);
    mysqlleader_txn_free(NULL);

    CHECK_OK(run_sql(client, "CREATE TABLE ledger (id INT PRIMARY KEY, written_by VARCHAR(64), note VARCHAR(64) NULL)"));

    /* a leads at term t. */
    CHECK_OK(mysqlleader_campaign(client, "ledger", "a", 10000, &c));
    uint64_t t = c.term;
    const char *row1[3] = {"1", "a", NULL};

    /* Argument errors are caught before the database, and spend the transaction all the same:
     * a program that misses one cannot go on writing unfenced. */
#define SPENT_BY(call, expected)                                                               \
    do {                                                                                       \
        txn = NULL;                                                                            \
        CHECK_OK(mysqlleader_txn_begin(client, &txn));                                         \
        CHECK_RC(call, expected);                                                              \
        CHECK_RC(mysqlleader_txn_execute(txn, "DELETE FROM ledger WHERE id = 0", NULL, 0, NULL), \
                 MYSQLLEADER_INVALID_STATE);                                                   \
        CHECK_RC(mysqlleader_txn_commit(txn), MYSQLLEADER_INVALID_STATE);                      \
        mysqlleader_txn_free(txn);                                                             \
    } while (0)
    SPENT_BY(mysqlleader_txn_assert_leader(txn, NULL, "a", t, &check), MYSQLLEADER_NULL_ARGUMENT);
    SPENT_BY(mysqlleader_txn_assert_leader(txn, "ledger", NULL, t, &check), MYSQLLEADER_NULL_ARGUMENT);
    SPENT_BY(mysqlleader_txn_assert_leader(txn, INVALID_UTF8, "a", t, &check), MYSQLLEADER_INVALID_UTF8);
    SPENT_BY(mysqlleader_txn_assert_leader(txn, "ledger", INVALID_UTF8, t, &check), MYSQLLEADER_INVALID_UTF8);
    SPENT_BY(mysqlleader_txn_assert_leader(txn, ID_129, "a", t, &check), MYSQLLEADER_INVALID_ARGUMENT);
    SPENT_BY(mysqlleader_txn_assert_leader(txn, "ledger", ID_129, t, &check), MYSQLLEADER_INVALID_ARGUMENT);
    SPENT_BY(mysqlleader_txn_execute(txn, NULL, row1, 3, &affected), MYSQLLEADER_NULL_ARGUMENT);
    SPENT_BY(mysqlleader_txn_execute(txn, "INSERT INTO ledger VALUES (?, ?, ?)", NULL, 3, &affected),
             MYSQLLEADER_NULL_ARGUMENT);
    SPENT_BY(mysqlleader_txn_execute(txn, INVALID_UTF8, NULL, 0, &affected), MYSQLLEADER_INVALID_UTF8);
#undef SPENT_BY

    /* The fenced write of the leader commits. */
    txn = NULL;
    CHECK_OK(mysqlleader_txn_begin(client, &txn));
    CHECK_OK(mysqlleader_txn_assert_leader(txn, "ledger", "a", t, &check));
    CHECK(check.is_leader && check.term == t && check.lease_remaining_ms > 0);
    CHECK_OK(mysqlleader_txn_assert_leader(txn, "ledger", "a", t, NULL));
    CHECK_OK(mysqlleader_txn_execute(txn, "INSERT INTO ledger VALUES (?, ?, ?)", row1, 3, &affected));
    CHECK(affected == 1);
    CHECK_OK(mysqlleader_txn_execute(txn, "UPDATE ledger SET note = 'seen' WHERE id = 1", NULL, 0, NULL));
    CHECK_OK(mysqlleader_txn_commit(txn));
    CHECK_RC(mysqlleader_txn_execute(txn, "SELECT 1", NULL, 0, NULL), MYSQLLEADER_INVALID_STATE);
    CHECK_RC(mysqlleader_txn_commit(txn), MYSQLLEADER_INVALID_STATE);
    CHECK_OK(mysqlleader_txn_rollback(txn)); /* nothing left to roll back */
    mysqlleader_txn_free(txn);
    CHECK(ledger_rows(client, "1") == 1);

    /* b is forced in; a's write with its stale term is refused and leaves nothing behind, and
     * the transaction cannot be used for unfenced writes afterwards. */
    CHECK_OK(mysqlleader_force_leader(client, "ledger", "b", 10000, &c));
    CHECK(c.term == t + 1);
    txn = NULL;
    CHECK_OK(mysqlleader_txn_begin(client, &txn));
    const char *row2[3] = {"2", "a", "stale"};
    CHECK_OK(mysqlleader_txn_execute(txn, "INSERT INTO ledger VALUES (?, ?, ?)", row2, 3, &affected));
    MARK(check);
    CHECK_RC(mysqlleader_txn_assert_leader(txn, "ledger", "a", t, &check), MYSQLLEADER_NOT_LEADER);
    CHECK(UNTOUCHED(check));
    CHECK_MSG("not the leader");
    const char *row3[3] = {"3", "a", "unfenced"};
    CHECK_RC(mysqlleader_txn_execute(txn, "INSERT INTO ledger VALUES (?, ?, ?)", row3, 3, NULL),
             MYSQLLEADER_INVALID_STATE);
    CHECK_MSG("roll it back");
    CHECK_RC(mysqlleader_txn_commit(txn), MYSQLLEADER_INVALID_STATE);
    CHECK_OK(mysqlleader_txn_rollback(txn));
    mysqlleader_txn_free(txn);
    CHECK(ledger_rows(client, "2") == 0);
    CHECK(ledger_rows(client, "3") == 0);

    /* A failed statement spends the transaction too; the server's code is reported. */
    txn = NULL;
    CHECK_OK(mysqlleader_txn_begin(client, &txn));
    CHECK_RC(mysqlleader_txn_execute(txn, "INSERT INTO no_such_table VALUES (1)", NULL, 0, NULL), MYSQLLEADER_SERVER);
    CHECK(mysqlleader_last_error_server_code() == 1146);
    CHECK_RC(mysqlleader_txn_execute(txn, "SELECT 1", NULL, 0, NULL), MYSQLLEADER_INVALID_STATE);
    mysqlleader_txn_free(txn); /* rolls back */

    /* Freeing an open transaction rolls it back. */
    txn = NULL;
    CHECK_OK(mysqlleader_txn_begin(client, &txn));
    const char *row4[3] = {"4", "b", NULL};
    CHECK_OK(mysqlleader_txn_execute(txn, "INSERT INTO ledger VALUES (?, ?, ?)", row4, 3, &affected));
    mysqlleader_txn_free(txn);
    CHECK(ledger_rows(client, "4") == 0);
}

/* ---- rows: read-then-write jobs, last insert id, binary data, NULL vs empty (issue 26) ---- */

/* The value at (row, col) of `rows` as a NUL-terminated string, or "(null)" for SQL NULL. */
static const char *cell(const mysqlleader_rows *rows, size_t row, size_t col) {
    const char *data = NULL;
    size_t len = 0;
    bool is_null = false;
    if (mysqlleader_rows_value(rows, row, col, &data, &len, &is_null) != MYSQLLEADER_OK) return "(error)";
    return is_null ? "(null)" : data;
}

/* The rows of one statement in a transaction of its own (rolled back); NULL on failure. */
static mysqlleader_rows *select_rows(mysqlleader_client *client, const char *sql) {
    mysqlleader_txn *txn = NULL;
    mysqlleader_rows *rows = NULL;
    if (mysqlleader_txn_begin(client, &txn) != MYSQLLEADER_OK) return NULL;
    if (mysqlleader_txn_query(txn, sql, NULL, NULL, 0, &rows) != MYSQLLEADER_OK) rows = NULL;
    mysqlleader_txn_free(txn);
    return rows;
}

static void test_txn_rows(mysqlleader_client *client) {
    mysqlleader_txn *txn = NULL;
    mysqlleader_rows *rows = NULL;
    mysqlleader_campaign_result c;
    mysqlleader_leader_check check;
    size_t n = 0;
    uint64_t id = 0, affected = 0;
    const char *name = NULL;
    mysqlleader_column_kind kind;
    const char *data = NULL;
    size_t len = 0;
    bool is_null = false;

    CHECK_OK(run_sql(client, "CREATE TABLE jobs (id INT PRIMARY KEY, state VARCHAR(16) NOT NULL, note VARCHAR(16) NULL, "
                             "payload VARBINARY(16) NULL, at DATETIME(6) NULL, amount DECIMAL(10,2) NULL)"));
    CHECK_OK(run_sql(client, "INSERT INTO jobs VALUES (1, 'new', '', NULL, '2024-05-01 12:00:00.5', 12.5), "
                             "(2, 'new', NULL, NULL, NULL, NULL), (3, 'done', 'old', NULL, NULL, NULL)"));
    CHECK_OK(run_sql(client, "CREATE TABLE counters (id BIGINT AUTO_INCREMENT PRIMARY KEY, label VARCHAR(16))"));
    CHECK_OK(mysqlleader_campaign(client, "jobs", "a", 10000, &c));
    uint64_t t = c.term;

    /* Arguments: NULL handles and out-pointers, indices out of range; rows_out is untouched and
     * a bad argument spends the transaction like any failure. */
    CHECK_RC(mysqlleader_txn_query(NULL, "SELECT 1", NULL, NULL, 0, &rows), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_txn_last_insert_id(NULL, &id), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_rows_column_count(NULL, &n), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_PARAM("rows");
    mysqlleader_rows_free(NULL);
    CHECK_OK(mysqlleader_txn_begin(client, &txn));
    CHECK_RC(mysqlleader_txn_last_insert_id(txn, NULL), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_txn_query(txn, "SELECT 1", NULL, NULL, 0, NULL), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_PARAM("rows_out");
    CHECK_RC(mysqlleader_txn_query(txn, "SELECT 1", NULL, NULL, 0, &rows), MYSQLLEADER_INVALID_STATE);
    CHECK(rows == NULL);
    mysqlleader_txn_free(txn);
    CHECK_OK(mysqlleader_txn_begin(client, &txn));
    CHECK_RC(mysqlleader_txn_query(txn, "SELECT ?", NULL, NULL, 1, &rows), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_PARAM("params");
    mysqlleader_txn_free(txn);

    /* The fenced read-then-write job: SELECT ... FOR UPDATE the new jobs, UPDATE each, commit. */
    txn = NULL;
    CHECK_OK(mysqlleader_txn_begin(client, &txn));
    CHECK_OK(mysqlleader_txn_assert_leader(txn, "jobs", "a", t, &check));
    const char *state_new[1] = {"new"};
    CHECK_OK(mysqlleader_txn_query(txn, "SELECT id, state AS job_state, at, amount FROM jobs WHERE state = ? ORDER BY id FOR UPDATE",
                                   state_new, NULL, 1, &rows));
    CHECK(rows != NULL);
    CHECK_OK(mysqlleader_rows_column_count(rows, &n));
    CHECK(n == 4);
    CHECK_OK(mysqlleader_rows_row_count(rows, &n));
    CHECK(n == 2);
    CHECK_OK(mysqlleader_rows_column_name(rows, 1, &name));
    CHECK_STR(name, "job_state");
    CHECK_OK(mysqlleader_rows_column_kind(rows, 0, &kind));
    CHECK(kind == MYSQLLEADER_COLUMN_INTEGER);
    CHECK_OK(mysqlleader_rows_column_kind(rows, 1, &kind));
    CHECK(kind == MYSQLLEADER_COLUMN_TEXT);
    CHECK_OK(mysqlleader_rows_column_kind(rows, 2, &kind));
    CHECK(kind == MYSQLLEADER_COLUMN_DATETIME);
    CHECK_OK(mysqlleader_rows_column_kind(rows, 3, &kind));
    CHECK(kind == MYSQLLEADER_COLUMN_DECIMAL);
    /* The binary protocol's typed values (a statement with parameters) come back as text. */
    CHECK_STR(cell(rows, 0, 0), "1");
    CHECK_STR(cell(rows, 0, 1), "new");
    CHECK_STR(cell(rows, 0, 2), "2024-05-01 12:00:00.500000");
    CHECK_STR(cell(rows, 0, 3), "12.50");
    CHECK_STR(cell(rows, 1, 0), "2");
    CHECK_STR(cell(rows, 1, 2), "(null)");
    CHECK_RC(mysqlleader_rows_value(rows, 2, 0, &data, &len, &is_null), MYSQLLEADER_INVALID_ARGUMENT);
    CHECK_PARAM("row");
    CHECK_RC(mysqlleader_rows_value(rows, 0, 4, &data, &len, &is_null), MYSQLLEADER_INVALID_ARGUMENT);
    CHECK_PARAM("column");
    CHECK_RC(mysqlleader_rows_column_name(rows, 4, &name), MYSQLLEADER_INVALID_ARGUMENT);
    CHECK_RC(mysqlleader_rows_value(rows, 0, 0, NULL, &len, &is_null), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_PARAM("data_out");
    for (size_t r = 0; r < 2; r++) {
        const char *job[1] = {cell(rows, r, 0)};
        CHECK_OK(mysqlleader_txn_execute(txn, "UPDATE jobs SET state = 'done' WHERE id = ?", job, 1, &affected));
        CHECK(affected == 1);
    }
    mysqlleader_rows_free(rows);
    rows = NULL;
    CHECK_OK(mysqlleader_txn_commit(txn));
    mysqlleader_txn_free(txn);
    rows = select_rows(client, "SELECT id, state, at FROM jobs ORDER BY id");
    CHECK(rows != NULL);
    if (rows) {
        CHECK_OK(mysqlleader_rows_row_count(rows, &n));
        CHECK(n == 3);
        CHECK_STR(cell(rows, 0, 1), "done");
        CHECK_STR(cell(rows, 1, 1), "done");
        CHECK_STR(cell(rows, 2, 1), "done");
        /* The text protocol (no parameters) gives the same text. */
        CHECK_STR(cell(rows, 0, 2), "2024-05-01 12:00:00.500000");
        mysqlleader_rows_free(rows);
    }

    /* The last insert id, after execute and after query; a SELECT then generates none. */
    txn = NULL;
    CHECK_OK(mysqlleader_txn_begin(client, &txn));
    CHECK_OK(mysqlleader_txn_last_insert_id(txn, &id));
    CHECK(id == 0);
    CHECK_OK(mysqlleader_txn_assert_leader(txn, "jobs", "a", t, &check));
    CHECK_OK(mysqlleader_txn_execute(txn, "INSERT INTO counters (label) VALUES ('first')", NULL, 0, &affected));
    CHECK_OK(mysqlleader_txn_last_insert_id(txn, &id));
    CHECK(id == 1);
    const char *label[1] = {"second"};
    CHECK_OK(mysqlleader_txn_query(txn, "INSERT INTO counters (label) VALUES (?)", label, NULL, 1, &rows));
    CHECK_OK(mysqlleader_rows_last_insert_id(rows, &id));
    CHECK(id == 2);
    CHECK_OK(mysqlleader_rows_affected_rows(rows, &affected));
    CHECK(affected == 1);
    CHECK_OK(mysqlleader_rows_column_count(rows, &n));
    CHECK(n == 0);
    mysqlleader_rows_free(rows);
    CHECK_OK(mysqlleader_txn_last_insert_id(txn, &id));
    CHECK(id == 2);
    CHECK_OK(mysqlleader_txn_query(txn, "SELECT COUNT(*) FROM counters", NULL, NULL, 0, &rows));
    CHECK_STR(cell(rows, 0, 0), "2");
    mysqlleader_rows_free(rows);
    CHECK_OK(mysqlleader_txn_last_insert_id(txn, &id));
    CHECK(id == 0);

    /* Binary data with a NUL byte, through a length-aware parameter and back; NULL vs empty. */
    static const char payload[5] = {'\0', 'a', 'b', (char)0xff, '\0'};
    const char *bin[2] = {payload, "3"};
    size_t lengths[2] = {5, 1};
    CHECK_OK(mysqlleader_txn_query(txn, "UPDATE jobs SET payload = ? WHERE id = ?", bin, lengths, 2, &rows));
    CHECK_OK(mysqlleader_rows_affected_rows(rows, &affected));
    CHECK(affected == 1);
    mysqlleader_rows_free(rows);
    const char *empty_and_null[2] = {"x", NULL};
    size_t empty_len[2] = {0, 99}; /* a length of 0 is the empty string; a NULL pointer is NULL */
    CHECK_OK(mysqlleader_txn_query(txn, "UPDATE jobs SET note = ?, amount = ? WHERE id = 2", empty_and_null,
                                   empty_len, 2, &rows));
    mysqlleader_rows_free(rows);
    const char *ids[2] = {"3", "2"};
    CHECK_OK(mysqlleader_txn_query(txn, "SELECT payload, LENGTH(payload), note, amount FROM jobs WHERE id IN (?, ?) ORDER BY id DESC",
                                   ids, NULL, 2, &rows));
    CHECK_OK(mysqlleader_rows_column_kind(rows, 0, &kind));
    CHECK(kind == MYSQLLEADER_COLUMN_BINARY);
    is_null = true;
    CHECK_OK(mysqlleader_rows_value(rows, 0, 0, &data, &len, &is_null));
    CHECK(!is_null && len == 5 && data != NULL && memcmp(data, payload, 5) == 0);
    CHECK_STR(cell(rows, 0, 1), "5");
    /* id 2: note '' (empty, not NULL), amount NULL; id 1 had note '' from the start. */
    is_null = true;
    CHECK_OK(mysqlleader_rows_value(rows, 1, 2, &data, &len, &is_null));
    CHECK(!is_null && len == 0 && data != NULL && data[0] == '\0');
    is_null = false;
    data = "marked";
    CHECK_OK(mysqlleader_rows_value(rows, 1, 3, &data, &len, &is_null));
    CHECK(is_null && len == 0 && data == NULL);
    mysqlleader_rows_free(rows);
    CHECK_OK(mysqlleader_txn_commit(txn));
    mysqlleader_txn_free(txn);

    /* A multi-statement text is refused by query too, before anything is sent; the
     * transaction is spent and nothing of it commits. */
    txn = NULL;
    rows = NULL;
    CHECK_OK(mysqlleader_txn_begin(client, &txn));
    CHECK_OK(mysqlleader_txn_assert_leader(txn, "jobs", "a", t, &check));
    CHECK_OK(mysqlleader_txn_execute(txn, "UPDATE jobs SET state = 'again' WHERE id = 1", NULL, 0, NULL));
    CHECK_RC(mysqlleader_txn_query(txn, "SELECT id FROM jobs; UPDATE jobs SET state = 'evil'", NULL, NULL, 0, &rows),
             MYSQLLEADER_USAGE);
    CHECK_PARAM("sql");
    CHECK(rows == NULL);
    CHECK_RC(mysqlleader_txn_query(txn, "SELECT 1", NULL, NULL, 0, &rows), MYSQLLEADER_INVALID_STATE);
    CHECK_RC(mysqlleader_txn_commit(txn), MYSQLLEADER_INVALID_STATE);
    CHECK_OK(mysqlleader_txn_rollback(txn));
    mysqlleader_txn_free(txn);
    txn = NULL;
    CHECK_OK(mysqlleader_txn_begin(client, &txn));
    CHECK_RC(mysqlleader_txn_query(txn, "COMMIT", NULL, NULL, 0, &rows), MYSQLLEADER_USAGE);
    mysqlleader_txn_free(txn);

    /* A stale leader: b is forced in; a's fenced job is refused (NOT_LEADER) and nothing of it
     * commits, neither the write before the fence nor a query after it. */
    CHECK_OK(mysqlleader_force_leader(client, "jobs", "b", 10000, &c));
    txn = NULL;
    CHECK_OK(mysqlleader_txn_begin(client, &txn));
    CHECK_OK(mysqlleader_txn_query(txn, "UPDATE jobs SET state = 'stale' WHERE id = 1", NULL, NULL, 0, &rows));
    mysqlleader_rows_free(rows);
    rows = NULL;
    CHECK_RC(mysqlleader_txn_assert_leader(txn, "jobs", "a", t, &check), MYSQLLEADER_NOT_LEADER);
    CHECK_RC(mysqlleader_txn_query(txn, "SELECT id FROM jobs FOR UPDATE", NULL, NULL, 0, &rows), MYSQLLEADER_INVALID_STATE);
    CHECK(rows == NULL);
    CHECK_RC(mysqlleader_txn_commit(txn), MYSQLLEADER_INVALID_STATE);
    mysqlleader_txn_free(txn);
    rows = select_rows(client, "SELECT state FROM jobs WHERE id = 1");
    CHECK(rows != NULL);
    if (rows) {
        CHECK_STR(cell(rows, 0, 0), "done");
        mysqlleader_rows_free(rows);
    }
}

/* ---- electors ---- */

#define MAX_EVENTS 64

/* What a callback saw, shared with the test thread. */
typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int count;
    mysqlleader_event_kind kinds[MAX_EVENTS];
    uint64_t terms[MAX_EVENTS];
    mysqlleader_stop_reason reasons[MAX_EVENTS];
    char leaders[MAX_EVENTS][MYSQLLEADER_ID_BUFFER_SIZE];
    /* For the callbacks that act on their own elector. */
    mysqlleader_elector *elector;
    int free_inside;          /* free the elector from the STARTED_LEADING callback */
    int freed_inside;         /* set after that free returned */
    int is_leader_inside;     /* is_leader as seen from inside STARTED_LEADING */
    uint64_t term_inside;
    /* For metrics_on_stop: mysqlleader_elector_metrics_text on r->elector inside the first
     * STOPPED_LEADING callback (e.g. the one a free delivers before it returns). */
    int metrics_on_stop;
    int metrics_seen;         /* set once that call was made */
    mysqlleader_result metrics_rc;
    char metrics_text[4096];
    pthread_t callback_thread;
    int callback_threads;     /* how many different threads delivered events (must stay 1) */
} recorder;

static void recorder_init(recorder *r) {
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->changed, NULL);
}

static void recorder_destroy(recorder *r) {
    pthread_mutex_destroy(&r->lock);
    pthread_cond_destroy(&r->changed);
}

static void on_event(void *userdata, const mysqlleader_event *event) {
    recorder *r = userdata;
    pthread_mutex_lock(&r->lock);
    if (r->callback_threads == 0 || !pthread_equal(r->callback_thread, pthread_self())) {
        r->callback_thread = pthread_self();
        r->callback_threads++;
    }
    if (r->count < MAX_EVENTS) {
        r->kinds[r->count] = event->kind;
        r->terms[r->count] = event->term;
        r->reasons[r->count] = event->reason;
        snprintf(r->leaders[r->count], MYSQLLEADER_ID_BUFFER_SIZE, "%s", event->leader_id ? event->leader_id : "");
        r->count++;
    }
    int free_now = r->free_inside && event->kind == MYSQLLEADER_EVENT_STARTED_LEADING && r->elector != NULL;
    int metrics_now = r->metrics_on_stop && !r->metrics_seen && event->kind == MYSQLLEADER_EVENT_STOPPED_LEADING &&
                      r->elector != NULL;
    mysqlleader_elector *elector = r->elector;
    pthread_mutex_unlock(&r->lock);

    if (metrics_now) {
        /* r->metrics_text is only this callback's until metrics_seen is set below. */
        mysqlleader_result rc = mysqlleader_elector_metrics_text(elector, r->metrics_text, sizeof r->metrics_text, NULL);
        pthread_mutex_lock(&r->lock);
        r->metrics_rc = rc;
        r->metrics_seen = 1;
        pthread_mutex_unlock(&r->lock);
    }

    bool leading = false;
    uint64_t term = 0;
    if (free_now) {
        /* Queries on one's own elector answer at once inside a callback ... */
        mysqlleader_elector_is_leader(elector, &leading);
        mysqlleader_elector_term(elector, &term);
        /* ... and so does freeing it: no deadlock, no further callback. */
        mysqlleader_elector_free(elector);
    }
    /* The last touch of *r by this callback: the test thread may go on once it sees it. */
    pthread_mutex_lock(&r->lock);
    if (free_now) {
        r->is_leader_inside = leading;
        r->term_inside = term;
        r->elector = NULL;
        r->freed_inside = 1;
    }
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
}

/* Index of the first recorded event of `kind` from `from` on, or -1. */
static int find_event(recorder *r, int from, mysqlleader_event_kind kind) {
    pthread_mutex_lock(&r->lock);
    int found = -1;
    for (int i = from; i < r->count; i++) {
        if (r->kinds[i] == kind) {
            found = i;
            break;
        }
    }
    pthread_mutex_unlock(&r->lock);
    return found;
}

/* find_event, waiting up to within_ms for the event: a callback runs on the elector's callback
 * thread, after the state it reports has changed (a wait for leadership can return first). */
static int wait_event(recorder *r, int from, mysqlleader_event_kind kind, long within_ms) {
    long long until = now_ms() + within_ms;
    int found;
    while ((found = find_event(r, from, kind)) < 0 && now_ms() < until) sleep_ms(10);
    return found;
}

static int event_count(recorder *r) {
    pthread_mutex_lock(&r->lock);
    int n = r->count;
    pthread_mutex_unlock(&r->lock);
    return n;
}

/* A small, quick configuration: 2 s leases (liveness checks allow far more). */
static mysqlleader_elector_config quick_config(const char *service, const char *node) {
    mysqlleader_elector_config config = {0};
    config.service_id = service;
    config.node_id = node;
    config.lease_ms = 2000;
    config.renew_ms = 400;
    config.retry_ms = 200;
    return config;
}

static const long long SLACK_MS = 8000; /* for liveness bounds on a shared, busy machine */

/* Issue 15, item 4, and issue 26: DDL inside a fenced transaction would commit implicitly and
 * drop the fence. The library refuses it before sending it (MYSQLLEADER_USAGE, parameter "sql"):
 * the table is not created, the transaction is spent (the stale write and the commit are
 * refused), and nothing of it commits, not even the fenced write before the DDL. */
static void test_txn_ended_early_by_the_server(mysqlleader_client *client) {
    mysqlleader_txn *txn = NULL;
    mysqlleader_leader_check check;
    mysqlleader_campaign_result c;
    CHECK_OK(run_sql(client, "CREATE TABLE early (id INT PRIMARY KEY, note VARCHAR(64))"));
    CHECK_OK(mysqlleader_campaign(client, "early", "a", 10000, &c));
    CHECK_OK(mysqlleader_txn_begin(client, &txn));
    CHECK_OK(mysqlleader_txn_assert_leader(txn, "early", "a", c.term, &check));
    CHECK_OK(mysqlleader_txn_execute(txn, "INSERT INTO early VALUES (1, 'fenced write')", NULL, 0, NULL));
    CHECK_RC(mysqlleader_txn_execute(txn, "CREATE TABLE early_ddl (id INT)", NULL, 0, NULL), MYSQLLEADER_USAGE);
    CHECK(strstr(mysqlleader_last_error(), "is a CREATE statement, which ends the transaction") != NULL);
    CHECK(mysqlleader_last_error_parameter() != NULL && strcmp(mysqlleader_last_error_parameter(), "sql") == 0);
    CHECK_RC(mysqlleader_txn_execute(txn, "INSERT INTO early VALUES (2, 'stale write')", NULL, 0, NULL),
             MYSQLLEADER_INVALID_STATE);
    CHECK_RC(mysqlleader_txn_commit(txn), MYSQLLEADER_INVALID_STATE);
    CHECK_OK(mysqlleader_txn_rollback(txn));
    mysqlleader_txn_free(txn);
    /* Nothing was sent: the table does not exist. */
    CHECK(run_sql(client, "DROP TABLE early_ddl") != MYSQLLEADER_OK);
    CHECK(strstr(mysqlleader_last_error(), "early_ddl") != NULL);
    CHECK_OK(mysqlleader_force_leader(client, "early", "b", 10000, &c));
    /* A COMMIT sent as SQL ends it too. */
    CHECK_OK(mysqlleader_txn_begin(client, &txn));
    CHECK_OK(mysqlleader_txn_assert_leader(txn, "early", "b", c.term, &check));
    CHECK_RC(mysqlleader_txn_execute(txn, "COMMIT", NULL, 0, NULL), MYSQLLEADER_USAGE);
    CHECK_RC(mysqlleader_txn_execute(txn, "INSERT INTO early VALUES (3, 'unfenced')", NULL, 0, NULL),
             MYSQLLEADER_INVALID_STATE);
    mysqlleader_txn_free(txn);
    uint64_t affected = 1;
    CHECK_OK(mysqlleader_txn_begin(client, &txn));
    CHECK_OK(mysqlleader_txn_execute(txn, "DELETE FROM early", NULL, 0, &affected));
    CHECK(affected == 0); /* neither 'fenced write' (its transaction was refused DDL), 'stale write' nor 'unfenced' committed */
    CHECK_OK(mysqlleader_txn_commit(txn));
    mysqlleader_txn_free(txn);
}

/* The core's waits, carried by the ABI: three outcomes, the end of a term and why, health. */
static void test_elector_waits(mysqlleader_client *client) {
    mysqlleader_elector_config config = quick_config("waits", "w1");
    mysqlleader_elector *e = NULL;
    mysqlleader_wait_outcome outcome = 0;
    mysqlleader_stop_reason reason = MYSQLLEADER_STOP_NONE;
    bool ended = true, healthy = false;
    uint64_t term = 0;
    CHECK_OK(mysqlleader_elector_new(client, &config, NULL, NULL, &e));
    CHECK_OK(mysqlleader_elector_wait(e, 2000 + SLACK_MS, &outcome));
    CHECK(outcome == MYSQLLEADER_WAIT_LEADING);
    CHECK_OK(mysqlleader_elector_is_healthy(e, &healthy));
    CHECK(healthy);
    CHECK_OK(mysqlleader_elector_term(e, &term));
    CHECK_OK(mysqlleader_elector_wait_term_end(e, term, 0, &ended, &reason));
    CHECK(!ended && reason == MYSQLLEADER_STOP_NONE);
    bool resigned = false;
    CHECK_OK(mysqlleader_elector_resign(e, &resigned));
    CHECK(resigned);
    CHECK_OK(mysqlleader_elector_wait_term_end(e, term, 1000, &ended, &reason));
    CHECK(ended && reason == MYSQLLEADER_STOP_RESIGNED);
    CHECK_OK(mysqlleader_elector_wait(e, 50, &outcome));
    CHECK(outcome == MYSQLLEADER_WAIT_NOT_CAMPAIGNING);
    CHECK_RC(mysqlleader_elector_wait(e, 0, NULL), MYSQLLEADER_NULL_ARGUMENT);
    mysqlleader_elector_free(e);
}

static void test_elector_arguments(mysqlleader_client *client) {
    mysqlleader_elector *elector = (mysqlleader_elector *)0x1;
    mysqlleader_elector_config config = quick_config("args", "n");
    CHECK_RC(mysqlleader_elector_new(NULL, &config, NULL, NULL, &elector), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_elector_new(client, NULL, NULL, NULL, &elector), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_elector_new(client, &config, NULL, NULL, NULL), MYSQLLEADER_NULL_ARGUMENT);
    config.service_id = NULL;
    CHECK_RC(mysqlleader_elector_new(client, &config, NULL, NULL, &elector), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_PARAM("config->service_id");
    config.service_id = INVALID_UTF8;
    CHECK_RC(mysqlleader_elector_new(client, &config, NULL, NULL, &elector), MYSQLLEADER_INVALID_UTF8);
    config.service_id = ID_129;
    CHECK_RC(mysqlleader_elector_new(client, &config, NULL, NULL, &elector), MYSQLLEADER_INVALID_ARGUMENT);
    CHECK_MSG("service_id");
    config.service_id = "";
    CHECK_RC(mysqlleader_elector_new(client, &config, NULL, NULL, &elector), MYSQLLEADER_INVALID_ARGUMENT);
    config = quick_config("args", INVALID_UTF8);
    CHECK_RC(mysqlleader_elector_new(client, &config, NULL, NULL, &elector), MYSQLLEADER_INVALID_UTF8);
    CHECK_PARAM("config->node_id");
    config = quick_config("args", ID_129);
    CHECK_RC(mysqlleader_elector_new(client, &config, NULL, NULL, &elector), MYSQLLEADER_INVALID_ARGUMENT);
    CHECK_MSG("node_id");
    config = quick_config("args", "n");
    config.lease_ms = MYSQLLEADER_LEASE_MS_MAX + 1;
    CHECK_RC(mysqlleader_elector_new(client, &config, NULL, NULL, &elector), MYSQLLEADER_INVALID_ARGUMENT);
    CHECK_PARAM("config->lease_ms");
    config = quick_config("args", "n");
    config.renew_ms = 1500; /* more than (lease - drift) / 3 */
    CHECK_RC(mysqlleader_elector_new(client, &config, NULL, NULL, &elector), MYSQLLEADER_INVALID_ARGUMENT);
    CHECK_PARAM("config->renew_ms");
    config = quick_config("args", "n");
    config.retry_ms = 5000;
    CHECK_RC(mysqlleader_elector_new(client, &config, NULL, NULL, &elector), MYSQLLEADER_INVALID_ARGUMENT);
    CHECK_PARAM("config->retry_ms");
    config = quick_config("args", "n");
    config.request_timeout_ms = 2000;
    CHECK_RC(mysqlleader_elector_new(client, &config, NULL, NULL, &elector), MYSQLLEADER_INVALID_ARGUMENT);
    CHECK_PARAM("config->request_timeout_ms");
    config = quick_config("args", "n");
    config.drift_margin_ms = 2000;
    CHECK_RC(mysqlleader_elector_new(client, &config, NULL, NULL, &elector), MYSQLLEADER_INVALID_ARGUMENT);
    CHECK_PARAM("config->drift_margin_ms");
    config = quick_config("args", "n");
    config.retry_jitter = 1.5;
    CHECK_RC(mysqlleader_elector_new(client, &config, NULL, NULL, &elector), MYSQLLEADER_INVALID_ARGUMENT);
    CHECK_MSG("retry_jitter");
    config.retry_jitter = -0.1;
    CHECK_RC(mysqlleader_elector_new(client, &config, NULL, NULL, &elector), MYSQLLEADER_INVALID_ARGUMENT);
    config.retry_jitter = nan("");
    CHECK_RC(mysqlleader_elector_new(client, &config, NULL, NULL, &elector), MYSQLLEADER_INVALID_ARGUMENT);
    config.retry_jitter = 0.3;
    config.flags = MYSQLLEADER_ELECTOR_NO_JITTER;
    CHECK_RC(mysqlleader_elector_new(client, &config, NULL, NULL, &elector), MYSQLLEADER_INVALID_ARGUMENT);
    config = quick_config("args", "n");
    config.flags = 0x100;
    CHECK_RC(mysqlleader_elector_new(client, &config, NULL, NULL, &elector), MYSQLLEADER_INVALID_ARGUMENT);
    CHECK_PARAM("config->flags");
    config = quick_config("args", "n");
    config.fallback_client_count = 1;
    CHECK_RC(mysqlleader_elector_new(client, &config, NULL, NULL, &elector), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_PARAM("config->fallback_clients");
    const mysqlleader_client *fallbacks[2] = {client, NULL};
    config.fallback_clients = fallbacks;
    config.fallback_client_count = 2;
    CHECK_RC(mysqlleader_elector_new(client, &config, NULL, NULL, &elector), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_PARAM("config->fallback_clients[1]");
    CHECK(elector == (mysqlleader_elector *)0x1);

    /* The query functions on NULL. */
    bool flag;
    uint64_t number;
    char buf[8];
    mysqlleader_elector_state status;
    mysqlleader_txn *txn = NULL;
    CHECK_RC(mysqlleader_elector_is_leader(NULL, &flag), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_elector_term(NULL, &number), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_elector_valid_for_ms(NULL, &number), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_elector_leader_id(NULL, buf, sizeof buf, NULL), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_elector_node_id(NULL, buf, sizeof buf, NULL), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_elector_snapshot(NULL, &status), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_elector_last_call_error(NULL, buf, sizeof buf, NULL), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_PARAM("elector");
    CHECK_RC(mysqlleader_elector_metrics_text(NULL, buf, sizeof buf, NULL), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_PARAM("elector");
    CHECK_RC(mysqlleader_elector_metrics_text(NULL, NULL, 0, NULL), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_elector_resign(NULL, &flag), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_elector_wait_for_leadership(NULL, 0, &flag), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_elector_txn_begin(NULL, &txn, NULL), MYSQLLEADER_NULL_ARGUMENT);
    mysqlleader_elector_free(NULL);

    /* Zero is "default" for every number: lease 0 means the 10 s default, node NULL hostname:pid. */
    mysqlleader_elector_config defaults = {0};
    defaults.service_id = "defaults";
    elector = NULL;
    CHECK_OK(mysqlleader_elector_new(client, &defaults, NULL, NULL, &elector));
    char node[MYSQLLEADER_ID_BUFFER_SIZE], expected[MYSQLLEADER_ID_BUFFER_SIZE];
    CHECK_OK(mysqlleader_elector_node_id(elector, node, sizeof node, NULL));
    CHECK_OK(mysqlleader_default_node_id(expected, sizeof expected, NULL));
    CHECK_STR(node, expected);
    /* Out-pointers of the queries. */
    CHECK_RC(mysqlleader_elector_is_leader(elector, NULL), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_elector_term(elector, NULL), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_elector_valid_for_ms(elector, NULL), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_elector_snapshot(elector, NULL), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_elector_wait_for_leadership(elector, 0, NULL), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_elector_txn_begin(elector, NULL, NULL), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_elector_node_id(elector, NULL, 4, NULL), MYSQLLEADER_NULL_ARGUMENT);
    size_t needed = 0;
    CHECK_RC(mysqlleader_elector_node_id(elector, buf, 2, &needed), MYSQLLEADER_BUFFER_TOO_SMALL);
    CHECK(needed == strlen(expected) + 1);
    CHECK_OK(mysqlleader_elector_wait_for_leadership(elector, 10000, &flag));
    CHECK(flag);
    mysqlleader_elector_free(elector); /* resigns */
    mysqlleader_current_leader_result cur;
    CHECK_OK(mysqlleader_current_leader(client, "defaults", &cur));
    CHECK_STR(cur.leader_id, "");
}

/* The elector's metrics in a buffer of their size (malloc'd; *out NULL on failure), asking
 * again while the text grew in between. */
static mysqlleader_result metrics_of(const mysqlleader_elector *e, char **out) {
    *out = NULL;
    size_t needed = 0;
    mysqlleader_result rc = mysqlleader_elector_metrics_text(e, NULL, 0, &needed);
    for (int attempt = 0; attempt < 4 && rc == MYSQLLEADER_BUFFER_TOO_SMALL; attempt++) {
        char *buf = malloc(needed);
        if (buf == NULL) return MYSQLLEADER_PANIC;
        rc = mysqlleader_elector_metrics_text(e, buf, needed, &needed);
        if (rc == MYSQLLEADER_OK) {
            *out = buf;
            return rc;
        }
        free(buf);
    }
    return rc;
}

/* Whether `text` has `line` as a whole line. */
static int has_line(const char *text, const char *line) {
    size_t n = strlen(line);
    for (const char *p = text; p != NULL; p = strchr(p, '\n')) {
        if (*p == '\n') p++;
        if (strncmp(p, line, n) == 0 && (p[n] == '\n' || p[n] == '\0')) return 1;
    }
    return 0;
}

/* The number after the line that begins with `prefix`, or -1 when no line does. */
static long long count_metric(const char *text, const char *prefix) {
    size_t n = strlen(prefix);
    for (const char *p = text; p != NULL; p = strchr(p, '\n')) {
        if (*p == '\n') p++;
        if (strncmp(p, prefix, n) == 0) return strtoll(p + n, NULL, 10);
    }
    return -1;
}

static void test_elector(mysqlleader_client *client) {
    recorder r1, r2;
    recorder_init(&r1);
    recorder_init(&r2);
    mysqlleader_elector *e1 = NULL, *e2 = NULL;
    mysqlleader_elector_config c1 = quick_config("elect", "n1");
    mysqlleader_elector_config c2 = quick_config("elect", "n2");
    c2.flags = MYSQLLEADER_ELECTOR_NO_RESIGN_ON_FREE | MYSQLLEADER_ELECTOR_NO_JITTER;

    CHECK_OK(mysqlleader_elector_new(client, &c1, on_event, &r1, &e1));
    bool leading = false;
    CHECK_OK(mysqlleader_elector_wait_for_leadership(e1, 2000 + SLACK_MS, &leading));
    CHECK(leading);
    pthread_mutex_lock(&r2.lock); /* r2.elector is set before any callback reads it */
    CHECK_OK(mysqlleader_elector_new(client, &c2, on_event, &r2, &e2));
    r2.elector = e2;
    r2.metrics_on_stop = 1;
    pthread_mutex_unlock(&r2.lock);

    bool flag = false;
    uint64_t term = 0, valid = 0;
    CHECK_OK(mysqlleader_elector_is_leader(e1, &flag));
    CHECK(flag);
    CHECK_OK(mysqlleader_elector_term(e1, &term));
    CHECK(term == 1);
    CHECK_OK(mysqlleader_elector_valid_for_ms(e1, &valid));
    CHECK(valid > 0 && valid <= 2000);
    char id[MYSQLLEADER_ID_BUFFER_SIZE];
    size_t needed = 0;
    CHECK_OK(mysqlleader_elector_leader_id(e1, id, sizeof id, &needed));
    CHECK_STR(id, "n1");
    CHECK(needed == 3);
    char two[2] = "z";
    CHECK_RC(mysqlleader_elector_leader_id(e1, two, sizeof two, &needed), MYSQLLEADER_BUFFER_TOO_SMALL);
    CHECK(needed == 3 && two[0] == 'z');
    CHECK_RC(mysqlleader_elector_leader_id(e1, NULL, 0, &needed), MYSQLLEADER_BUFFER_TOO_SMALL);
    CHECK_RC(mysqlleader_elector_leader_id(e1, NULL, 3, &needed), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_OK(mysqlleader_elector_node_id(e1, id, sizeof id, NULL));
    CHECK_STR(id, "n1");
    mysqlleader_elector_state status;
    CHECK_OK(mysqlleader_elector_snapshot(e1, &status));
    CHECK(status.is_leader && status.term == 1 && status.valid_for_ms > 0 && status.campaigning &&
          status.last_call_result == MYSQLLEADER_OK);
    CHECK_STR(status.leader_id, "n1");
    CHECK_OK(mysqlleader_elector_last_call_error(e1, id, sizeof id, &needed));
    CHECK_STR(id, "");

    /* Metrics, as Rust's Elector::metrics_text renders them, labelled with the service. */
    char *metrics = NULL;
    CHECK(metrics_of(e1, &metrics) == MYSQLLEADER_OK);
    CHECK(has_line(metrics, "leader_election_master_status{name=\"elect\"} 1"));
    CHECK(has_line(metrics, "mysqlleader_term{name=\"elect\"} 1"));
    CHECK(has_line(metrics, "mysqlleader_leadership_transitions_total{name=\"elect\"} 1"));
    CHECK(has_line(metrics, "mysqlleader_campaign_errors_total{name=\"elect\"} 0"));
    CHECK(has_line(metrics, "# TYPE mysqlleader_campaign_duration_seconds histogram"));
    CHECK(count_metric(metrics, "mysqlleader_campaign_duration_seconds_count{name=\"elect\"} ") >= 1);
    CHECK(count_metric(metrics, "mysqlleader_campaign_duration_seconds_bucket{name=\"elect\",le=\"+Inf\"} ") >= 1);
    free(metrics);
    /* The size convention of mysqlleader_last_error_copy: too small (or NULL with 0 bytes)
     * writes nothing and reports the bytes needed, NUL included. */
    size_t metrics_needed = 0;
    CHECK_RC(mysqlleader_elector_metrics_text(e1, NULL, 0, &metrics_needed), MYSQLLEADER_BUFFER_TOO_SMALL);
    CHECK(metrics_needed > 1000 && metrics_needed < 8192);
    char small[16] = "unchanged";
    needed = 0;
    CHECK_RC(mysqlleader_elector_metrics_text(e1, small, sizeof small, &needed), MYSQLLEADER_BUFFER_TOO_SMALL);
    CHECK(needed > 1000 && needed < 8192 && strcmp(small, "unchanged") == 0);
    CHECK_RC(mysqlleader_elector_metrics_text(e1, small, sizeof small, NULL), MYSQLLEADER_BUFFER_TOO_SMALL);
    CHECK_RC(mysqlleader_elector_metrics_text(e1, NULL, 3, &needed), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_PARAM("buf");
    {
        /* With the size it asked for (and room for counters that grow meanwhile), it fits:
         * *needed_out is then the text's length plus the NUL. */
        size_t size = needed + 64;
        char *text = malloc(size);
        CHECK(text != NULL);
        if (text != NULL) {
            CHECK_OK(mysqlleader_elector_metrics_text(e1, text, size, &needed));
            CHECK(needed == strlen(text) + 1);
            CHECK(strncmp(text, "# HELP leader_election_master_status ", 37) == 0);
            CHECK(text[needed - 2] == '\n');
            free(text);
        }
    }

    /* n2 follows n1: it learns who leads, never leads itself. */
    long long until = now_ms() + 2000 + SLACK_MS;
    id[0] = '\0';
    while (now_ms() < until) {
        mysqlleader_elector_leader_id(e2, id, sizeof id, NULL);
        if (strcmp(id, "n1") == 0) break;
        sleep_ms(20);
    }
    CHECK_STR(id, "n1");
    CHECK_OK(mysqlleader_elector_wait_for_leadership(e2, 300, &leading));
    CHECK(!leading);
    CHECK_OK(mysqlleader_elector_valid_for_ms(e2, &valid));
    CHECK(valid == 0);
    CHECK(metrics_of(e2, &metrics) == MYSQLLEADER_OK);
    CHECK(has_line(metrics, "leader_election_master_status{name=\"elect\"} 0"));
    CHECK(has_line(metrics, "mysqlleader_term{name=\"elect\"} 1"));
    CHECK(has_line(metrics, "mysqlleader_leadership_transitions_total{name=\"elect\"} 0"));
    CHECK(count_metric(metrics, "mysqlleader_campaign_duration_seconds_count{name=\"elect\"} ") >= 1);
    free(metrics);

    /* Fenced transactions for an elector. */
    CHECK_OK(run_sql(client, "CREATE TABLE elector_log (term BIGINT UNSIGNED PRIMARY KEY, node VARCHAR(64))"));
    mysqlleader_txn *txn = NULL;
    uint64_t fenced_term = 0;
    CHECK_OK(mysqlleader_elector_txn_begin(e1, &txn, &fenced_term));
    CHECK(fenced_term == 1);
    const char *row[2] = {"1", "n1"};
    CHECK_OK(mysqlleader_txn_execute(txn, "INSERT INTO elector_log VALUES (?, ?)", row, 2, NULL));
    CHECK_OK(mysqlleader_txn_commit(txn));
    mysqlleader_txn_free(txn);
    txn = (mysqlleader_txn *)0x1;
    CHECK_RC(mysqlleader_elector_txn_begin(e2, &txn, NULL), MYSQLLEADER_NOT_LEADER);
    CHECK(txn == (mysqlleader_txn *)0x1);
    txn = NULL;
    CHECK_OK(mysqlleader_elector_txn_begin(e1, &txn, NULL)); /* term_out may be NULL */
    mysqlleader_txn_free(txn);

    /* n1 resigns: it stops at once, stops campaigning, and n2 takes over with term 2. */
    bool resigned = false;
    CHECK_OK(mysqlleader_elector_resign(e1, &resigned));
    CHECK(resigned);
    CHECK_OK(mysqlleader_elector_is_leader(e1, &flag));
    CHECK(!flag);
    CHECK_OK(mysqlleader_elector_snapshot(e1, &status));
    CHECK(!status.is_leader && !status.campaigning);
    CHECK_OK(mysqlleader_elector_wait_for_leadership(e1, 60000, &leading)); /* returns at once: not campaigning */
    CHECK(!leading);
    CHECK_OK(mysqlleader_elector_resign(e1, NULL)); /* again: no longer holds the seat */
    CHECK(metrics_of(e1, &metrics) == MYSQLLEADER_OK);
    CHECK(has_line(metrics, "leader_election_master_status{name=\"elect\"} 0"));
    CHECK(has_line(metrics, "mysqlleader_leadership_transitions_total{name=\"elect\"} 2"));
    free(metrics);
    CHECK_OK(mysqlleader_elector_wait_for_leadership(e2, 2000 + SLACK_MS, &leading));
    CHECK(leading);
    CHECK_OK(mysqlleader_elector_term(e2, &term));
    CHECK(term == 2);
    CHECK_RC(mysqlleader_elector_txn_begin(e1, &txn, NULL), MYSQLLEADER_NOT_LEADER);

    /* n1's callback saw: started leading (1), then stopped leading (1, resigned), in order, on
     * one thread. The callback thread delivers after the state changed (CI38 looked before it
     * had delivered the stop): waited for. */
    int started = find_event(&r1, 0, MYSQLLEADER_EVENT_STARTED_LEADING);
    CHECK(started >= 0);
    int stopped = wait_event(&r1, started < 0 ? 0 : started, MYSQLLEADER_EVENT_STOPPED_LEADING, SLACK_MS);
    CHECK(stopped > started);
    if (started >= 0 && stopped >= 0) {
        CHECK(r1.terms[started] == 1);
        CHECK_STR(r1.leaders[started], "n1");
        CHECK(r1.terms[stopped] == 1 && r1.reasons[stopped] == MYSQLLEADER_STOP_RESIGNED);
    }

    /* Freeing n1 (not leading) and n2 (leading, NO_RESIGN_ON_FREE): n2's last event, stopped
     * leading for shutdown, is delivered before free returns; nothing after it. */
    mysqlleader_elector_free(e1);
    mysqlleader_elector_free(e2);
    int n2_started = find_event(&r2, 0, MYSQLLEADER_EVENT_STARTED_LEADING);
    CHECK(n2_started >= 0);
    int n2_stopped = find_event(&r2, n2_started < 0 ? 0 : n2_started, MYSQLLEADER_EVENT_STOPPED_LEADING);
    CHECK(n2_stopped > n2_started);
    if (n2_stopped >= 0) CHECK(r2.reasons[n2_stopped] == MYSQLLEADER_STOP_SHUTDOWN && r2.terms[n2_stopped] == 2);
    /* An elector being freed answers the metrics like the other queries (from its callback,
     * which the free waits for): no longer leading, its term and counters as they ended. */
    pthread_mutex_lock(&r2.lock);
    CHECK(r2.metrics_seen && r2.metrics_rc == MYSQLLEADER_OK);
    CHECK(has_line(r2.metrics_text, "leader_election_master_status{name=\"elect\"} 0"));
    CHECK(has_line(r2.metrics_text, "mysqlleader_term{name=\"elect\"} 2"));
    CHECK(has_line(r2.metrics_text, "mysqlleader_leadership_transitions_total{name=\"elect\"} 2"));
    r2.elector = NULL;
    pthread_mutex_unlock(&r2.lock);
    int changed = find_event(&r2, 0, MYSQLLEADER_EVENT_LEADER_CHANGED);
    CHECK(changed >= 0);
    if (changed >= 0) CHECK_STR(r2.leaders[changed], "n1");
    int n1_after = event_count(&r1), n2_after = event_count(&r2);
    sleep_ms(500);
    CHECK(event_count(&r1) == n1_after && event_count(&r2) == n2_after);
    CHECK(r1.callback_threads == 1 && r2.callback_threads == 1);
    /* n2 did not resign: it still holds the seat in the database until its lease lapses. */
    mysqlleader_current_leader_result cur;
    CHECK_OK(mysqlleader_current_leader(client, "elect", &cur));
    CHECK(cur.term == 2);
    recorder_destroy(&r1);
    recorder_destroy(&r2);
}

/* Freeing an elector from inside its own callback neither deadlocks nor delivers anything
 * afterwards; the elector resigns as configured. */
static void test_free_inside_callback(mysqlleader_client *client) {
    recorder r;
    recorder_init(&r);
    r.free_inside = 1;
    mysqlleader_elector_config config = quick_config("self-free", "sf");
    mysqlleader_elector *elector = NULL;
    pthread_mutex_lock(&r.lock); /* the callback waits for r.elector */
    CHECK_OK(mysqlleader_elector_new(client, &config, on_event, &r, &elector));
    r.elector = elector;
    pthread_mutex_unlock(&r.lock);

    long long until = now_ms() + 2000 + SLACK_MS;
    pthread_mutex_lock(&r.lock);
    while (!r.freed_inside && now_ms() < until) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_nsec += 50 * 1000000L;
        if (t.tv_nsec >= 1000000000L) {
            t.tv_sec++;
            t.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&r.changed, &r.lock, &t);
    }
    int freed = r.freed_inside, leading = r.is_leader_inside;
    uint64_t term = r.term_inside;
    int count = r.count;
    pthread_mutex_unlock(&r.lock);
    CHECK(freed);
    CHECK(leading && term == 1);
    sleep_ms(500);
    CHECK(event_count(&r) == count); /* nothing delivered after the free */
    mysqlleader_current_leader_result cur;
    CHECK_OK(mysqlleader_current_leader(client, "self-free", &cur));
    CHECK_STR(cur.leader_id, ""); /* it resigned */
    /* The callback thread ends by itself; give it a moment before the recorder goes. */
    sleep_ms(300);
    recorder_destroy(&r);
}

/* An elector keeps its client's pool: the client may be freed first. */
static void test_elector_outlives_client(void) {
    mysqlleader_client *own = NULL;
    CHECK_OK(mysqlleader_client_new(db_url, &own));
    mysqlleader_elector_config config = quick_config("outlive", "o");
    mysqlleader_elector *elector = NULL;
    CHECK_OK(mysqlleader_elector_new(own, &config, NULL, NULL, &elector));
    mysqlleader_client_free(own);
    bool leading = false;
    CHECK_OK(mysqlleader_elector_wait_for_leadership(elector, 2000 + SLACK_MS, &leading));
    CHECK(leading);
    mysqlleader_txn *txn = NULL;
    CHECK_OK(mysqlleader_elector_txn_begin(elector, &txn, NULL));
    /* End the fenced transaction first: its share lock on the election row would hold up the
     * resign in _free (by design: no takeover while a fenced write is open). */
    CHECK_OK(mysqlleader_txn_rollback(txn));
    mysqlleader_elector_free(elector);
    mysqlleader_txn_free(txn); /* the transaction handle kept the pool, too */
}

/* ---- many plain electors on one client ---- */

/* The server connections of this test's account, from a client of its own. */
static long long account_connections(mysqlleader_client *checker) {
    mysqlleader_rows *rows = select_rows(checker, "SELECT COUNT(*) FROM information_schema.PROCESSLIST "
                                                  "WHERE USER = SUBSTRING_INDEX(CURRENT_USER(), '@', 1)");
    long long n = rows != NULL ? atoll(cell(rows, 0, 0)) : -1;
    mysqlleader_rows_free(rows);
    return n;
}

typedef struct {
    mysqlleader_elector **electors;
    int from, to;
} free_range;

static void *free_electors(void *arg) {
    free_range *r = arg;
    for (int i = r->from; i < r->to; i++) mysqlleader_elector_free(r->electors[i]);
    return NULL;
}

/* Issue 42: 10,000 plain electors (mysqlleader_elector_new, no session) on one client all lead
 * and keep their seats, over the client's shared session: a few of the server's connections,
 * however many electors. Before, each renewed with a call of its own on a connection of the
 * client's pool (100 at most), and such a client lost every seat. The default lease (10 s):
 * each seat keeps a lease of its own, so a renew writes every seat's row (on MySQL under the
 * whole suite's load, a 4 s lease lost 1,409 of them: CI88; a Session renews one row). Run by
 * scripts/test-c.sh in the shared library's run only (MYSQLLEADER_C_MANY): it is about the
 * electors, not the linking. */
static void test_many_plain_electors_on_one_client(void) {
    enum { N = 10000, FREERS = 32 };
    const long long LEASE_MS = 10000;
    mysqlleader_client *many = NULL, *checker = NULL;
    CHECK_OK(mysqlleader_client_new(db_url, &many));
    CHECK_OK(mysqlleader_client_new(db_url, &checker));
    mysqlleader_elector **e = calloc(N, sizeof *e);
    uint64_t *terms = calloc(N, sizeof *terms);
    if (many == NULL || checker == NULL || e == NULL || terms == NULL) {
        CHECK(!"set-up");
        return;
    }
    long long before = account_connections(checker);
    mysqlleader_elector_config config = {0};
    config.node_id = "many-a"; /* the default lease */
    long long t0 = now_ms();
    for (int i = 0; i < N; i++) {
        char name[32];
        snprintf(name, sizeof name, "many-%05d", i);
        config.service_id = name;
        CHECK_OK(mysqlleader_elector_new(many, &config, NULL, NULL, &e[i]));
    }
    int leading = 0;
    long long until = now_ms() + 60000;
    while (now_ms() < until) {
        leading = 0;
        for (int i = 0; i < N; i++) {
            bool flag = false;
            if (e[i] != NULL && mysqlleader_elector_is_leader(e[i], &flag) == MYSQLLEADER_OK && flag) leading++;
        }
        if (leading == N) break;
        sleep_ms(200);
    }
    long long led_after = now_ms() - t0;
    long long during = account_connections(checker);
    printf("many: %d of %d plain electors on one client led %lld ms after the first was made; "
           "the account's connections %lld before, %lld while they lead\n", leading, N, led_after, before, during);
    CHECK(leading == N);
    /* The client's shared session: its call connection and its wake-up lock's, plus, rarely, a
       short-lived one that ends a call left running. */
    CHECK(during - before <= 3);
    for (int i = 0; i < N; i++) CHECK_OK(mysqlleader_elector_term(e[i], &terms[i]));

    /* A lease later every seat is still held, at the same term: the renews reach them all. */
    sleep_ms(LEASE_MS + 1000);
    int kept = 0;
    for (int i = 0; i < N; i++) {
        bool flag = false;
        uint64_t term = 0;
        if (mysqlleader_elector_is_leader(e[i], &flag) == MYSQLLEADER_OK && mysqlleader_elector_term(e[i], &term) == MYSQLLEADER_OK &&
            flag && term == terms[i])
            kept++;
    }
    printf("many: %d of %d still lead at the same term a lease later\n", kept, N);
    CHECK(kept == N);

    /* Freed from several threads at once (each resigns): the seats end up vacant. */
    t0 = now_ms();
    pthread_t threads[FREERS];
    free_range ranges[FREERS];
    for (int t = 0; t < FREERS; t++) {
        ranges[t] = (free_range){e, t * N / FREERS, (t + 1) * N / FREERS};
        CHECK(pthread_create(&threads[t], NULL, free_electors, &ranges[t]) == 0);
    }
    for (int t = 0; t < FREERS; t++) pthread_join(threads[t], NULL);
    printf("many: %d electors freed in %lld ms by %d threads\n", N, now_ms() - t0, FREERS);
    mysqlleader_rows *rows = select_rows(checker, "SELECT COUNT(*) FROM leader_election WHERE service_id LIKE 'many-%' "
                                                  "AND leader_id IS NOT NULL");
    CHECK(rows != NULL && strcmp(cell(rows, 0, 0), "0") == 0);
    mysqlleader_rows_free(rows);
    free(e);
    free(terms);
    mysqlleader_client_free(many);
    mysqlleader_client_free(checker);
}

/* ---- two processes ---- */

typedef struct {
    pid_t pid;
    int out; /* read end of the child's stdout */
    char seen[8192];
    size_t seen_len;
} child;

static int spawn_example(child *c, const char *service, const char *node, const char *lease_ms) {
    int fds[2];
    memset(c, 0, sizeof *c);
    if (example_path == NULL || pipe(fds) != 0) return 0;
    c->pid = fork();
    if (c->pid < 0) return 0;
    if (c->pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        setenv("MYSQLLEADER_URL", db_url, 1);
        execl(example_path, example_path, service, node, lease_ms, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    c->out = fds[0];
    return 1;
}

/* Reads the child's output until it contains `needle` or `timeout_ms` pass. */
static int wait_for_output(child *c, const char *needle, long long timeout_ms) {
    long long until = now_ms() + timeout_ms;
    while (strstr(c->seen, needle) == NULL) {
        long long left = until - now_ms();
        if (left <= 0) return 0;
        struct pollfd p = {c->out, POLLIN, 0};
        if (poll(&p, 1, (int)left) <= 0) continue;
        ssize_t n = read(c->out, c->seen + c->seen_len, sizeof c->seen - 1 - c->seen_len);
        if (n <= 0) return strstr(c->seen, needle) != NULL;
        c->seen_len += (size_t)n;
        c->seen[c->seen_len] = '\0';
    }
    return 1;
}

static int reap(child *c) {
    int status = 0;
    waitpid(c->pid, &status, 0);
    close(c->out);
    return status;
}

/* One process leads; SIGKILL it and the other takes over once its lease has run out. */
static void test_failover_between_processes(mysqlleader_client *client) {
    child a;
    CHECK(spawn_example(&a, "failover", "proc-a", "2000"));
    if (a.pid <= 0) return;
    CHECK(wait_for_output(&a, "node proc-a: leading at term 1", 20000));

    recorder r;
    recorder_init(&r);
    mysqlleader_elector_config config = quick_config("failover", "proc-b");
    mysqlleader_elector *b = NULL;
    CHECK_OK(mysqlleader_elector_new(client, &config, on_event, &r, &b));
    bool leading = true;
    CHECK_OK(mysqlleader_elector_wait_for_leadership(b, 1000, &leading));
    CHECK(!leading); /* proc-a holds a valid lease */
    char id[MYSQLLEADER_ID_BUFFER_SIZE];
    CHECK_OK(mysqlleader_elector_leader_id(b, id, sizeof id, NULL));
    CHECK_STR(id, "proc-a");

    kill(a.pid, SIGKILL);
    int status = reap(&a);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    /* No resign: proc-b waits out proc-a's lease, then leads at the next term. */
    CHECK_OK(mysqlleader_elector_wait_for_leadership(b, 2000 + SLACK_MS, &leading));
    CHECK(leading);
    uint64_t term = 0;
    CHECK_OK(mysqlleader_elector_term(b, &term));
    CHECK(term == 2);
    mysqlleader_elector_free(b);
    int started = find_event(&r, 0, MYSQLLEADER_EVENT_STARTED_LEADING);
    CHECK(started >= 0 && r.terms[started] == 2);
    recorder_destroy(&r);
}

/* Ctrl-C on the example resigns: the seat is vacant at once, not after the lease. */
static void test_example_resigns_on_sigint(mysqlleader_client *client) {
    child a;
    CHECK(spawn_example(&a, "sigint", "proc-c", "60000"));
    if (a.pid <= 0) return;
    CHECK(wait_for_output(&a, "node proc-c: leading at term 1", 20000));
    kill(a.pid, SIGINT);
    CHECK(wait_for_output(&a, "resigned, bye", 20000));
    CHECK(strstr(a.seen, "stopped leading term 1 (shutdown)") != NULL);
    int status = reap(&a);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    mysqlleader_current_leader_result cur;
    CHECK_OK(mysqlleader_current_leader(client, "sigint", &cur));
    CHECK_STR(cur.leader_id, ""); /* a 60 s lease, yet vacant now */
    CHECK(cur.term == 1);
}

/* ---- main ---- */

/* mysqlleader_elector_note_refusal: the application's own fence was refused (here the one-shot
 * assert_leader stands for it); the elector reports not leading before the call returns, at once,
 * not at its next renew (4 s away with a 20 s lease). A refusal of another term changes nothing. */
static void test_elector_note_refusal(mysqlleader_client *client) {
    mysqlleader_elector_config config = quick_config("refusal", "r1");
    config.lease_ms = 20000;
    config.renew_ms = 4000;
    config.retry_ms = 1000;
    mysqlleader_elector *e = NULL;
    bool leading = false;
    uint64_t term = 0;
    CHECK_OK(mysqlleader_elector_new(client, &config, NULL, NULL, &e));
    CHECK_OK(mysqlleader_elector_wait_for_leadership(e, 2000 + SLACK_MS, &leading));
    CHECK(leading);
    CHECK_OK(mysqlleader_elector_term(e, &term));
    CHECK_OK(mysqlleader_elector_note_refusal(e, term + 7));
    CHECK_OK(mysqlleader_elector_is_leader(e, &leading));
    CHECK(leading);
    mysqlleader_campaign_result forced;
    mysqlleader_leader_check check;
    CHECK_OK(mysqlleader_force_leader(client, "refusal", "r2", 20000, &forced));
    CHECK_RC(mysqlleader_assert_leader(client, "refusal", "r1", term, &check), MYSQLLEADER_NOT_LEADER);
    CHECK(mysqlleader_last_error_current_term() == term + 1);
    CHECK_OK(mysqlleader_elector_note_refusal(e, term));
    CHECK_OK(mysqlleader_elector_is_leader(e, &leading));
    CHECK(!leading);
    CHECK_RC(mysqlleader_elector_note_refusal(NULL, term), MYSQLLEADER_NULL_ARGUMENT);
    mysqlleader_elector_free(e);
}

/* An operator's handover seen first by the application's own fence: the refusal carries error
 * 31004 (mysqlleader_last_error_server_code), and mysqlleader_elector_note_refusal_code with it
 * stops the elector for MYSQLLEADER_STOP_HANDED_OVER, not LOST_SEAT. */
static void test_elector_note_refusal_code_tells_a_handover(mysqlleader_client *client) {
    mysqlleader_elector_config config = quick_config("refusal-ho", "h1");
    config.lease_ms = 60000;
    config.renew_ms = 15000;
    config.retry_ms = 1000;
    mysqlleader_elector *e = NULL;
    bool leading = false, ended = false;
    uint64_t term = 0;
    mysqlleader_stop_reason reason = MYSQLLEADER_STOP_NONE;
    CHECK_OK(mysqlleader_elector_new(client, &config, NULL, NULL, &e));
    CHECK_OK(mysqlleader_elector_wait_for_leadership(e, 2000 + SLACK_MS, &leading));
    CHECK(leading);
    CHECK_OK(mysqlleader_elector_term(e, &term));
    mysqlleader_campaign_result seat;
    mysqlleader_leader_check check;
    CHECK_OK(mysqlleader_handover(client, "refusal-ho", "h2", &seat));
    CHECK_RC(mysqlleader_assert_leader(client, "refusal-ho", "h1", term, &check), MYSQLLEADER_NOT_LEADER);
    CHECK(mysqlleader_last_error_server_code() == 31004);
    CHECK_OK(mysqlleader_elector_note_refusal_code(e, term, mysqlleader_last_error_server_code()));
    CHECK_OK(mysqlleader_elector_is_leader(e, &leading));
    CHECK(!leading);
    CHECK_OK(mysqlleader_elector_wait_term_end(e, term, 1000, &ended, &reason));
    CHECK(ended);
    CHECK(reason == MYSQLLEADER_STOP_HANDED_OVER);
    CHECK_RC(mysqlleader_elector_note_refusal_code(NULL, term, 31004), MYSQLLEADER_NULL_ARGUMENT);
    mysqlleader_elector_free(e);
}

/* A fenced transaction the database refuses (another node took the seat while this elector's
 * next renew is seconds away): mysqlleader_elector_txn_begin answers NOT_LEADER with the current
 * term, writes no transaction, and the elector has stepped down when it returns (the core's
 * FencedTransaction tells its elector; src/fenced.rs rule 5). */
static void test_elector_txn_refused_steps_down(mysqlleader_client *client) {
    mysqlleader_elector_config config = quick_config("txnrefusal", "r1");
    config.lease_ms = 20000;
    config.renew_ms = 4000;
    config.retry_ms = 1000;
    mysqlleader_elector *e = NULL;
    bool leading = false;
    uint64_t term = 0, fenced = 0;
    CHECK_OK(mysqlleader_elector_new(client, &config, NULL, NULL, &e));
    CHECK_OK(mysqlleader_elector_wait_for_leadership(e, 2000 + SLACK_MS, &leading));
    CHECK(leading);
    CHECK_OK(mysqlleader_elector_term(e, &term));
    mysqlleader_campaign_result forced;
    CHECK_OK(mysqlleader_force_leader(client, "txnrefusal", "r2", 20000, &forced));
    CHECK_OK(mysqlleader_elector_is_leader(e, &leading));
    CHECK(leading); /* its renew is seconds away: it still believes it leads */
    mysqlleader_txn *txn = NULL;
    CHECK_RC(mysqlleader_elector_txn_begin(e, &txn, &fenced), MYSQLLEADER_NOT_LEADER);
    CHECK(mysqlleader_last_error_current_term() == term + 1);
    CHECK(txn == NULL);
    CHECK_OK(mysqlleader_elector_is_leader(e, &leading));
    CHECK(!leading);
    mysqlleader_elector_free(e);
}

/* Terms of `service` that ended `ended_how`, counted by deleting them in a transaction rolled back. */
static long long history_rows(mysqlleader_client *client, const char *service, const char *term, const char *ended_how) {
    mysqlleader_txn *txn = NULL;
    uint64_t affected = 0;
    const char *params[3] = {service, term, ended_how};
    if (mysqlleader_txn_begin(client, &txn) != MYSQLLEADER_OK) return -1;
    mysqlleader_result rc = mysqlleader_txn_execute(
        txn, "DELETE FROM leader_election_history WHERE service_id = ? AND term = ? AND ended_how = ?", params, 3, &affected);
    mysqlleader_txn_free(txn); /* rolls back */
    return rc == MYSQLLEADER_OK ? (long long)affected : -1;
}

/* Waits until `e` sees `leader` lead (or the slack passes). */
static void await_leader_seen(mysqlleader_elector *e, const char *leader) {
    char id[MYSQLLEADER_ID_BUFFER_SIZE] = "";
    long long until = now_ms() + SLACK_MS;
    while (now_ms() < until) {
        mysqlleader_elector_leader_id(e, id, sizeof id, NULL);
        if (strcmp(id, leader) == 0) break;
        sleep_ms(20);
    }
    CHECK_STR(id, leader);
}

/* Handover (the contract's "Handover"). Followers here poll only every 5 s, so a new leader
 * within 3 s was woken by the leader's wake-up lock, not polled. Timings are printed. */
static void test_handover(mysqlleader_client *client) {
    const long long WOKEN_MS = 3000;
    recorder ra;
    recorder_init(&ra);
    mysqlleader_elector *a = NULL, *b = NULL;
    mysqlleader_elector_config ca = quick_config("handover", "ha");
    ca.lease_ms = 20000;
    ca.renew_ms = 4000;
    ca.retry_ms = 5000;
    ca.request_timeout_ms = 1000;
    ca.flags = MYSQLLEADER_ELECTOR_NO_JITTER;
    mysqlleader_elector_config cb = ca;
    cb.node_id = "hb";
    cb.renew_ms = 500; /* hb learns of the operator's handover below within 500 ms */
    bool leading = false, handed = false, flag = false;
    uint64_t term = 0, b_term = 0;

    CHECK_OK(mysqlleader_elector_new(client, &ca, on_event, &ra, &a));
    CHECK_OK(mysqlleader_elector_wait_for_leadership(a, SLACK_MS, &leading));
    CHECK(leading);
    CHECK_OK(mysqlleader_elector_term(a, &term));
    CHECK_OK(mysqlleader_elector_new(client, &cb, NULL, NULL, &b));
    await_leader_seen(b, "ha");
    sleep_ms(500); /* hb waits on ha's wake-up lock */

    /* Arguments: NULLs, and a handover to itself, refused by name; nothing changes. */
    CHECK_RC(mysqlleader_elector_handover(NULL, "hb", &handed), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_elector_handover(a, NULL, &handed), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_MSG("to_node");
    CHECK_RC(mysqlleader_elector_handover(a, "ha", &handed), MYSQLLEADER_INVALID_ARGUMENT);
    CHECK_PARAM("to_node");
    CHECK_OK(mysqlleader_elector_is_leader(a, &flag));
    CHECK(flag);

    /* ha hands over to hb: it steps down before the call returns; hb is woken and leads. */
    long long t0 = now_ms();
    CHECK_OK(mysqlleader_elector_handover(a, "hb", &handed));
    CHECK(handed);
    CHECK_OK(mysqlleader_elector_is_leader(a, &flag));
    CHECK(!flag);
    CHECK_OK(mysqlleader_elector_wait_for_leadership(b, SLACK_MS + 5000, &leading));
    long long took = now_ms() - t0;
    printf("c: leader-initiated handover ha -> hb: hb leads after %lld ms (followers poll every 5 s)\n", took);
    CHECK(leading);
    CHECK(took < WOKEN_MS);
    CHECK_OK(mysqlleader_elector_term(b, &b_term));
    CHECK(b_term == term + 1);
    mysqlleader_elector_state status;
    CHECK_OK(mysqlleader_elector_snapshot(a, &status));
    CHECK(!status.is_leader && status.campaigning); /* goes on as a follower */
    long long until = now_ms() + SLACK_MS;
    int stopped = -1;
    while ((stopped = find_event(&ra, 0, MYSQLLEADER_EVENT_STOPPED_LEADING)) < 0 && now_ms() < until) sleep_ms(10);
    CHECK(stopped >= 0);
    if (stopped >= 0) CHECK(ra.terms[stopped] == term && ra.reasons[stopped] == MYSQLLEADER_STOP_HANDED_OVER);
    char term_s[24];
    snprintf(term_s, sizeof term_s, "%llu", (unsigned long long)term);
    CHECK(history_rows(client, "handover", term_s, "handed_over") == 1);

    /* A follower's handover changes nothing (the out-pointer may be NULL). */
    await_leader_seen(a, "hb");
    handed = true;
    CHECK_OK(mysqlleader_elector_handover(a, "hb", &handed));
    CHECK(!handed);
    CHECK_OK(mysqlleader_elector_handover(a, "hb", NULL));
    CHECK_OK(mysqlleader_elector_is_leader(b, &flag));
    CHECK(flag);

    /* An operator's handover back to ha: hb learns at its next renew; ha is woken. */
    mysqlleader_campaign_result seat;
    CHECK_RC(mysqlleader_handover(client, "handover", NULL, &seat), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_handover(client, "handover", "ha", NULL), MYSQLLEADER_NULL_ARGUMENT);
    t0 = now_ms();
    CHECK_OK(mysqlleader_handover(client, "handover", "ha", &seat));
    CHECK(!seat.is_leader && seat.leader_id[0] == '\0');
    mysqlleader_leader_check check;
    CHECK_OK(mysqlleader_am_i_leader(client, "handover", "hb", &check));
    CHECK(!check.is_leader);
    CHECK_OK(mysqlleader_elector_wait_for_leadership(a, SLACK_MS + 5000, &leading));
    took = now_ms() - t0;
    printf("c: operator-initiated handover hb -> ha: ha leads after %lld ms (hb renews every 500 ms)\n", took);
    CHECK(leading);
    CHECK(took < WOKEN_MS); /* hb's next renew, then the wake-up */
    CHECK_OK(mysqlleader_elector_term(a, &term));
    CHECK(term == b_term + 1);
    CHECK_OK(mysqlleader_elector_is_leader(b, &flag));
    CHECK(!flag);

    /* The bare calls: the seat reserved for "hz" is not taken by another node; hz takes it. */
    CHECK_OK(mysqlleader_campaign(client, "handover-calls", "x", 20000, &seat));
    CHECK(seat.is_leader);
    CHECK_OK(mysqlleader_handover(client, "handover-calls", "hz", &seat));
    CHECK(!seat.is_leader);
    CHECK_OK(mysqlleader_am_i_leader(client, "handover-calls", "x", &check));
    CHECK(!check.is_leader);
    /* hz may take the seat once the displaced leader has acknowledged the handover with a
       resign, sent once it stopped acting as leader (or once its lease has run out): before, hz
       waits. x's campaign (its renew, whose answer could still be on its way) is no
       acknowledgement. */
    CHECK_OK(mysqlleader_campaign(client, "handover-calls", "hz", 20000, &seat));
    CHECK(!seat.is_leader);
    CHECK_OK(mysqlleader_campaign(client, "handover-calls", "x", 20000, &seat));
    CHECK(!seat.is_leader);
    CHECK_OK(mysqlleader_campaign(client, "handover-calls", "hz", 20000, &seat));
    CHECK(!seat.is_leader);
    {
        mysqlleader_resign_result acknowledged;
        CHECK_OK(mysqlleader_resign(client, "handover-calls", "x", &acknowledged));
        CHECK(!acknowledged.resigned && acknowledged.term == 1);
    }
    CHECK_OK(mysqlleader_campaign(client, "handover-calls", "y", 20000, &seat));
    CHECK(!seat.is_leader);
    CHECK_OK(mysqlleader_campaign(client, "handover-calls", "hz", 20000, &seat));
    CHECK(seat.is_leader && seat.term == 2);
    CHECK_STR(seat.leader_id, "hz");
    CHECK_OK(mysqlleader_handover(client, "handover-calls", "hz", &seat)); /* leads already: nothing changes */
    CHECK(seat.is_leader && seat.term == 2);

    mysqlleader_elector_free(a);
    mysqlleader_elector_free(b);
    recorder_destroy(&ra);
}

/* Sessions (the contract's "Sessions"): two sessions of 12 services each; the first leads all;
 * its electors are ordinary handles (a fenced transaction works on one); a second elector for a
 * service, a session config naming a service, and NULLs are refused by name; freeing the
 * first session resigns every seat, so the second leads all without a lease lapsing; the
 * handles of a freed session stay valid and report that they no longer campaign. */
static void test_sessions(mysqlleader_client *client) {
    enum { N = 12 };
    char names[N][16];
    mysqlleader_elector *ea[N] = {0}, *eb[N] = {0};
    mysqlleader_session *sa = NULL, *sb = NULL, *bad = NULL;
    mysqlleader_elector *dup = NULL;
    recorder r;
    recorder_init(&r);
    mysqlleader_elector_config config = quick_config(NULL, "sess-a");
    bool flag = false;

    /* Arguments. */
    CHECK_RC(mysqlleader_session_new(NULL, &config, &sa), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_session_new(client, NULL, &sa), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_session_new(client, &config, NULL), MYSQLLEADER_NULL_ARGUMENT);
    mysqlleader_elector_config named = quick_config("svc", "sess-a");
    CHECK_RC(mysqlleader_session_new(client, &named, &bad), MYSQLLEADER_INVALID_ARGUMENT);
    CHECK_PARAM("config->service_id");
    mysqlleader_elector_config slow = quick_config(NULL, "sess-a");
    slow.renew_ms = 1900;
    CHECK_RC(mysqlleader_session_new(client, &slow, &bad), MYSQLLEADER_INVALID_ARGUMENT);
    CHECK_PARAM("config->renew_ms");
    CHECK(bad == NULL);

    CHECK_OK(mysqlleader_session_new(client, &config, &sa));
    for (int i = 0; i < N; i++) {
        snprintf(names[i], sizeof names[i], "sess-%02d", i);
        CHECK_OK(mysqlleader_session_elector(sa, names[i], i == 0 ? on_event : NULL, i == 0 ? &r : NULL, &ea[i]));
    }
    CHECK_RC(mysqlleader_session_elector(sa, names[3], NULL, NULL, &dup), MYSQLLEADER_INVALID_ARGUMENT);
    CHECK_PARAM("service_id");
    CHECK_RC(mysqlleader_session_elector(sa, "", NULL, NULL, &dup), MYSQLLEADER_INVALID_ARGUMENT);
    CHECK_RC(mysqlleader_session_elector(NULL, "x", NULL, NULL, &dup), MYSQLLEADER_NULL_ARGUMENT);
    CHECK_RC(mysqlleader_session_elector(sa, NULL, NULL, NULL, &dup), MYSQLLEADER_NULL_ARGUMENT);
    CHECK(dup == NULL);
    for (int i = 0; i < N; i++) {
        bool leading = false;
        CHECK_OK(mysqlleader_elector_wait_for_leadership(ea[i], SLACK_MS, &leading));
        CHECK(leading);
    }
    CHECK(wait_event(&r, 0, MYSQLLEADER_EVENT_STARTED_LEADING, SLACK_MS) >= 0);

    /* The session's metrics: one exposition, HELP and TYPE once, a sample per service. */
    {
        char small[8];
        size_t needed = 0;
        CHECK_RC(mysqlleader_session_metrics_text(sa, small, sizeof small, &needed), MYSQLLEADER_BUFFER_TOO_SMALL);
        CHECK(needed > 1000);
        char *text = malloc(needed + 4096);
        CHECK(text != NULL);
        CHECK_OK(mysqlleader_session_metrics_text(sa, text, needed + 4096, NULL));
        int helps = 0;
        for (const char *p = text; (p = strstr(p, "# HELP leader_election_master_status ")) != NULL; p++) helps++;
        CHECK(helps == 1);
        for (int i = 0; i < N; i++) {
            char sample[256];
            snprintf(sample, sizeof sample, "leader_election_master_status{name=\"%s\"} 1\n", names[i]);
            CHECK(strstr(text, sample) != NULL);
        }
        /* Compact: the session's series, no per-service histogram. */
        CHECK(strstr(text, "# TYPE mysqlleader_session_renew_batch_duration_seconds histogram\n") != NULL);
        CHECK(strstr(text, "mysqlleader_session_seats{node=\"") != NULL);
        CHECK(strstr(text, "mysqlleader_campaign_duration_seconds") == NULL);
        free(text);
        /* Detailed: every elector's full series too. */
        CHECK_RC(mysqlleader_session_metrics_text_detailed(sa, small, sizeof small, &needed), MYSQLLEADER_BUFFER_TOO_SMALL);
        text = malloc(needed + 4096);
        CHECK(text != NULL);
        CHECK_OK(mysqlleader_session_metrics_text_detailed(sa, text, needed + 4096, NULL));
        helps = 0;
        for (const char *p = text; (p = strstr(p, "# HELP mysqlleader_campaign_duration_seconds ")) != NULL; p++) helps++;
        CHECK(helps == 1);
        CHECK(strstr(text, "# TYPE mysqlleader_session_renew_batch_duration_seconds histogram\n") != NULL);
        for (int i = 0; i < N; i++) {
            char sample[256];
            snprintf(sample, sizeof sample, "mysqlleader_campaign_duration_seconds_count{name=\"%s\"} ", names[i]);
            CHECK(strstr(text, sample) != NULL);
        }
        free(text);
        CHECK_RC(mysqlleader_session_metrics_text(NULL, small, sizeof small, NULL), MYSQLLEADER_NULL_ARGUMENT);
        CHECK_RC(mysqlleader_session_metrics_text_detailed(NULL, small, sizeof small, NULL), MYSQLLEADER_NULL_ARGUMENT);
    }

    /* A session's elector fences a transaction like any elector. */
    mysqlleader_txn *txn = NULL;
    uint64_t fenced = 0;
    CHECK_OK(mysqlleader_elector_txn_begin(ea[2], &txn, &fenced));
    CHECK(fenced >= 1);
    CHECK_OK(mysqlleader_txn_commit(txn));
    mysqlleader_txn_free(txn);

    mysqlleader_elector_config cb = quick_config(NULL, "sess-b");
    CHECK_OK(mysqlleader_session_new(client, &cb, &sb));
    for (int i = 0; i < N; i++) CHECK_OK(mysqlleader_session_elector(sb, names[i], NULL, NULL, &eb[i]));
    await_leader_seen(eb[N - 1], "sess-a");
    for (int i = 0; i < N; i++) {
        CHECK_OK(mysqlleader_elector_is_leader(eb[i], &flag));
        CHECK(!flag);
    }

    /* Freeing session a resigns every seat: b leads all, well within a lease of the free. */
    long long t0 = now_ms();
    mysqlleader_session_free(sa);
    for (int i = 0; i < N; i++) {
        bool leading = false;
        CHECK_OK(mysqlleader_elector_wait_for_leadership(eb[i], SLACK_MS, &leading));
        CHECK(leading);
    }
    printf("sessions: b led all %d services %lld ms after a's session was freed (lease 2000 ms)\n", N, now_ms() - t0);
    for (int i = 0; i < N; i++) {
        mysqlleader_elector_state st;
        CHECK_OK(mysqlleader_elector_snapshot(ea[i], &st));
        CHECK(!st.is_leader && !st.campaigning);
        mysqlleader_elector_free(ea[i]);
    }
    CHECK(find_event(&r, 0, MYSQLLEADER_EVENT_STOPPED_LEADING) >= 0);
    /* An elector freed before its session: that seat alone resigns. */
    mysqlleader_elector_free(eb[0]);
    mysqlleader_session_free(sb);
    for (int i = 1; i < N; i++) mysqlleader_elector_free(eb[i]);
    mysqlleader_session_free(NULL);
    recorder_destroy(&r);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *url = getenv("MYSQLLEADER_TEST_URL");
    if (url == NULL || strrchr(url, '/') == NULL) {
        fprintf(stderr, "MYSQLLEADER_TEST_URL is not set (mysql://user:pass@host:port/db of an account "
                        "that may create databases); run through scripts/test-c.sh or `make test`.\n");
        printf("0 passed, 1 failed\n");
        return 1;
    }
    example_path = argc > 1 ? argv[1] : NULL;
    snprintf(base_url, sizeof base_url, "%s", url);
    memset(ID_129, 'x', 129);
    for (int i = 0; i < 128; i++) memcpy(ID_128 + 2 * i, "\xc3\xa9", 2); /* 128 x U+00E9 */
    snprintf(db_name, sizeof db_name, "mlc_%ld_%ld", (long)getpid(), (long)time(NULL) % 100000);
    url_with_db(db_url, sizeof db_url, base_url, db_name);

    /* No database needed. */
    test_version_and_names();
    test_last_error();
    test_strings();
    test_client_arguments();
    test_refused_connection();

    /* A database of this run's own, made and dropped through the API itself. */
    mysqlleader_client *admin = NULL, *client = NULL;
    CHECK_OK(mysqlleader_client_new(base_url, &admin));
    char sql[256];
    snprintf(sql, sizeof sql, "CREATE DATABASE `%s`", db_name);
    mysqlleader_result created = run_sql(admin, sql);
    CHECK_RC(created, MYSQLLEADER_OK);
    CHECK_OK(mysqlleader_client_new(db_url, &client));
    if (created == MYSQLLEADER_OK && client != NULL) {
        test_not_migrated_then_migrate(client);
        test_call_arguments(client);
        test_calls(client);
        test_txn(client);
        test_txn_ended_early_by_the_server(client);
        test_txn_rows(client);
        if (getenv("MYSQLLEADER_C_ONLY_TXN") != NULL) goto done; /* a quick run while developing */
        test_elector_waits(client);
        test_elector_note_refusal(client);
        test_elector_note_refusal_code_tells_a_handover(client);
        test_elector_txn_refused_steps_down(client);
        test_elector_arguments(client);
        test_elector(client);
        test_handover(client);
        test_sessions(client);
        test_free_inside_callback(client);
        test_elector_outlives_client();
        if (getenv("MYSQLLEADER_C_MANY") != NULL) test_many_plain_electors_on_one_client();
        test_failover_between_processes(client);
        test_example_resigns_on_sigint(client);
    }
done:
    mysqlleader_client_free(client);
    if (created == MYSQLLEADER_OK) {
        snprintf(sql, sizeof sql, "DROP DATABASE `%s`", db_name);
        CHECK_OK(run_sql(admin, sql));
    }
    mysqlleader_client_free(admin);

    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
