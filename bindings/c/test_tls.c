/*
 * test_tls.c: TLS through the C API, against a TLS-only MariaDB (require_secure_transport=ON):
 * every ssl-mode, a wrong CA, a wrong host name, plaintext refused, a server without TLS, a
 * REQUIRE X509 account with and without its client certificate, and bad TLS parameters. Each
 * refusal must have the result code the library decides, not be transient, and say in its
 * message what went wrong (never with the password).
 *
 *   scripts/test-tls.sh        # starts the servers and sets the variables below
 *
 * or by hand, against servers of scripts/testdb.sh (start DIR, start-tls DIR):
 *
 *   cc -std=c11 -Wall -Wextra -Wpedantic -Werror -I include bindings/c/test_tls.c \
 *      -L target/release -lmysqlleader -Wl,-rpath,$PWD/target/release -o test_tls
 *   MYSQLLEADER_TEST_URL=... MYSQLLEADER_TEST_TLS_DIR=... MYSQLLEADER_TEST_PLAIN_URL=... \
 *   MYSQLLEADER_TLS_X509_URL=... ./test_tls
 *
 * - MYSQLLEADER_TEST_URL: the TLS server, mysql://mysqlleader:mysqlleader@HOST:PORT/DB, without
 *   TLS parameters (refused as it is); the other URLs are made from its host, port and database;
 * - MYSQLLEADER_TEST_TLS_DIR: ca.pem, other-ca.pem (a CA that signed nothing here),
 *   client-cert.pem, client-key.pem; the server's certificate is for 127.0.0.1 only;
 * - MYSQLLEADER_TEST_PLAIN_URL: a server without TLS;
 * - MYSQLLEADER_TLS_X509_URL: the REQUIRE X509 account (mlx509) with its client certificate.
 *
 * Without one of them the run fails (nothing is skipped). Prints one line per failed check and
 * ends with exactly "N passed, M failed"; exits 0 only when nothing failed.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mysqlleader.h"

/* ---- the tiny assertion framework: CHECK, CHECK_RC, CHECK_OK, passed, failed ---- */

#include "test_check.h"

#define CHECK_STR(actual, expected)                                                            \
    record(strcmp((actual), (expected)) == 0, __FILE__, __LINE__, "%s is \"%s\", expected \"%s\"", \
           #actual, (actual), (expected))

/* ---- URLs ---- */

static char host_port[256]; /* "127.0.0.1:PORT" of MYSQLLEADER_TEST_URL */
static char port[16];       /* its port */
static char database[128];  /* its database */
static const char *tls_dir;
static const char *plain_url;
static const char *x509_url;

/* Percent-encodes `in` into `out` (of `n` bytes): every byte but the unreserved ones. */
static void pct_encode(char *out, size_t n, const char *in) {
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)in; *p && o + 4 <= n; p++) {
        unsigned char c = *p;
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
            c == '.' || c == '_' || c == '~') {
            out[o++] = (char)c;
        } else {
            out[o++] = '%';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        }
    }
    out[o] = '\0';
}

/* The percent-encoded path of `name` in MYSQLLEADER_TEST_TLS_DIR. */
static const char *tls_file(char *out, size_t n, const char *name) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", tls_dir, name);
    pct_encode(out, n, path);
    return out;
}

/* The TLS server's URL as `user` (password = user name) at `host` (NULL: the URL's own host),
   with the query `params` ("" for none). */
static void tls_url(char *out, size_t n, const char *user, const char *host, const char *params) {
    if (host == NULL) {
        snprintf(out, n, "mysql://%s:%s@%s/%s%s%s", user, user, host_port, database, *params ? "?" : "",
                 params);
    } else {
        snprintf(out, n, "mysql://%s:%s@%s:%s/%s%s%s", user, user, host, port, database,
                 *params ? "?" : "", params);
    }
}

/* Splits MYSQLLEADER_TEST_URL (mysql://user:password@host:port/db[?query]); false when it is not
   of that form. */
static bool parse_test_url(const char *url) {
    const char *scheme = strstr(url, "://");
    if (scheme == NULL) return false;
    const char *at = strchr(scheme + 3, '@');
    if (at == NULL) return false;
    const char *slash = strchr(at + 1, '/');
    if (slash == NULL) return false;
    size_t hp = (size_t)(slash - (at + 1));
    const char *query = strchr(slash + 1, '?');
    size_t db = query ? (size_t)(query - (slash + 1)) : strlen(slash + 1);
    if (hp == 0 || hp >= sizeof host_port || db == 0 || db >= sizeof database) return false;
    memcpy(host_port, at + 1, hp);
    host_port[hp] = '\0';
    memcpy(database, slash + 1, db);
    database[db] = '\0';
    const char *colon = strrchr(host_port, ':');
    if (colon == NULL || strlen(colon + 1) == 0 || strlen(colon + 1) >= sizeof port) return false;
    snprintf(port, sizeof port, "%s", colon + 1);
    return true;
}

/* ---- one client, one call, and what became of it ---- */

enum stage { FAILED_IN_NEW, FAILED_IN_CALL, SUCCEEDED };
static const char *const STAGE_NAMES[] = {"mysqlleader_client_new", "the first call (current_leader)",
                                          "nowhere (it succeeded)"};

typedef struct {
    enum stage stage;
    mysqlleader_result rc;   /* of the call that failed; MYSQLLEADER_OK when none did */
    mysqlleader_result code; /* mysqlleader_last_error_code() */
    uint32_t server_code;
    bool transient;
    bool has_parameter;
    char parameter[64];
    char message[4096];
    char leader_id[MYSQLLEADER_ID_BUFFER_SIZE]; /* of current_leader, when it succeeded */
} outcome;

/* Takes the thread's last error into `o` (before anything else may replace it). */
static void capture(outcome *o, enum stage stage, mysqlleader_result rc) {
    o->stage = stage;
    o->rc = rc;
    o->code = mysqlleader_last_error_code();
    o->server_code = mysqlleader_last_error_server_code();
    o->transient = mysqlleader_last_error_is_transient();
    const char *parameter = mysqlleader_last_error_parameter();
    o->has_parameter = parameter != NULL;
    snprintf(o->parameter, sizeof o->parameter, "%s", parameter ? parameter : "");
    size_t needed = 0;
    CHECK_OK(mysqlleader_last_error_copy(o->message, sizeof o->message, &needed));
    CHECK(needed == strlen(o->message) + 1);
    CHECK_STR(o->message, mysqlleader_last_error());
}

/* Makes a client on `url`, asks it who leads "tls-probe" (the connection is made on the first
   call: client_new does not connect), and frees it. */
static void probe(outcome *o, const char *url) {
    static char sentinel;
    memset(o, 0, sizeof *o);
    mysqlleader_client *client = (mysqlleader_client *)(void *)&sentinel;
    mysqlleader_result rc = mysqlleader_client_new(url, &client);
    if (rc != MYSQLLEADER_OK) {
        capture(o, FAILED_IN_NEW, rc);
        /* Out-pointers are written only on success. */
        CHECK(client == (mysqlleader_client *)(void *)&sentinel);
        return;
    }
    CHECK(client != NULL && client != (mysqlleader_client *)(void *)&sentinel);
    mysqlleader_current_leader_result current;
    memset(&current, 0, sizeof current);
    rc = mysqlleader_current_leader(client, "tls-probe", &current);
    capture(o, rc == MYSQLLEADER_OK ? SUCCEEDED : FAILED_IN_CALL, rc);
    if (rc == MYSQLLEADER_OK) snprintf(o->leader_id, sizeof o->leader_id, "%s", current.leader_id);
    mysqlleader_client_free(client);
}

/* `o` succeeded: the call answered, nothing is left in the last error, nobody leads "tls-probe". */
static void expect_success(const char *file, int line, const char *what, const outcome *o) {
    record(o->stage == SUCCEEDED && o->rc == MYSQLLEADER_OK, file, line,
           "%s: failed in %s with %s: %s", what, STAGE_NAMES[o->stage], mysqlleader_result_name(o->rc),
           o->message);
    record(o->code == MYSQLLEADER_OK && o->message[0] == '\0' && !o->has_parameter && o->server_code == 0,
           file, line, "%s: after a success the last error is %s \"%s\" (parameter %s, server code %u)",
           what, mysqlleader_result_name(o->code), o->message, o->has_parameter ? o->parameter : "(null)",
           (unsigned)o->server_code);
    record(o->stage != SUCCEEDED || o->leader_id[0] == '\0', file, line,
           "%s: \"%s\" leads tls-probe, which nobody campaigns for", what, o->leader_id);
}

/* `o` failed in `stage` with `rc` (and `server_code`), not transient, its message containing
   `says` and no password, and naming no parameter. */
static void expect_refusal(const char *file, int line, const char *what, const outcome *o, enum stage stage,
                           mysqlleader_result rc, uint32_t server_code, const char *says) {
    record(o->stage == stage && o->rc == rc, file, line, "%s: %s in %s, expected %s in %s (last error: %s)",
           what, mysqlleader_result_name(o->rc), STAGE_NAMES[o->stage], mysqlleader_result_name(rc),
           STAGE_NAMES[stage], o->message);
    record(o->code == o->rc, file, line, "%s: mysqlleader_last_error_code() is %s, the call returned %s",
           what, mysqlleader_result_name(o->code), mysqlleader_result_name(o->rc));
    record(o->server_code == server_code, file, line, "%s: server code %u, expected %u (%s)", what,
           (unsigned)o->server_code, (unsigned)server_code, o->message);
    record(!o->transient, file, line, "%s: reported transient, a retry cannot mend it (%s)", what, o->message);
    record(strstr(o->message, says) != NULL, file, line, "%s: last error \"%s\" does not contain \"%s\"", what,
           o->message, says);
    record(strstr(o->message, "mysqlleader:mysqlleader") == NULL && strstr(o->message, "mlx509:mlx509") == NULL,
           file, line, "%s: the message shows the password: %s", what, o->message);
    if (rc != MYSQLLEADER_INVALID_ARGUMENT) {
        record(!o->has_parameter, file, line, "%s: names the parameter \"%s\", expected none (%s)", what,
               o->parameter, o->message);
    }
}

#define EXPECT_SUCCESS(what, o) expect_success(__FILE__, __LINE__, (what), (o))
#define EXPECT_REFUSAL(what, o, stage, rc, server_code, says) \
    expect_refusal(__FILE__, __LINE__, (what), (o), (stage), (rc), (server_code), (says))

/* ---- the cases ---- */

/* The schema, once, over a checked connection (VERIFY_CA with the test CA). */
static void test_migrate(void) {
    char ca[2048], params[2200], url[4096];
    snprintf(params, sizeof params, "ssl-mode=VERIFY_CA&ssl-ca=%s", tls_file(ca, sizeof ca, "ca.pem"));
    tls_url(url, sizeof url, "mysqlleader", NULL, params);
    mysqlleader_client *client = NULL;
    CHECK_OK(mysqlleader_client_new(url, &client));
    size_t applied = 0;
    CHECK_OK(mysqlleader_migrate(client, &applied));
    mysqlleader_client_free(client);
}

/* 1. Each ssl-mode that can work connects. */
static void test_each_ssl_mode_connects(void) {
    char ca[2048], params[2200], url[4096], what[64];
    tls_file(ca, sizeof ca, "ca.pem");
    /* Each mode, followed by the CA when it takes one. */
    const char *const modes[] = {"ssl-mode=REQUIRED", "ssl-mode=VERIFY_CA&ssl-ca=",
                                 "ssl-mode=VERIFY_IDENTITY&ssl-ca=", "ssl-ca="};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        bool takes_ca = modes[i][strlen(modes[i]) - 1] == '=';
        snprintf(params, sizeof params, "%s%s", modes[i], takes_ca ? ca : "");
        snprintf(what, sizeof what, "%s%s", modes[i], takes_ca ? "ca.pem" : "");
        tls_url(url, sizeof url, "mysqlleader", NULL, params);
        outcome o;
        probe(&o, url);
        EXPECT_SUCCESS(what, &o);
    }
}

/* 2. A server certificate from another CA is refused. */
static void test_wrong_ca(void) {
    char other[2048], params[2200], url[4096];
    snprintf(params, sizeof params, "ssl-mode=VERIFY_CA&ssl-ca=%s", tls_file(other, sizeof other, "other-ca.pem"));
    tls_url(url, sizeof url, "mysqlleader", NULL, params);
    outcome o;
    probe(&o, url);
    EXPECT_REFUSAL("wrong CA", &o, FAILED_IN_CALL, MYSQLLEADER_USAGE, 0, "TLS");
}

/* 3. A host name the certificate is not for (it is for 127.0.0.1 alone) is refused. */
static void test_wrong_host(void) {
    char ca[2048], params[2200], url[4096];
    snprintf(params, sizeof params, "ssl-mode=VERIFY_IDENTITY&ssl-ca=%s", tls_file(ca, sizeof ca, "ca.pem"));
    tls_url(url, sizeof url, "mysqlleader", "localhost", params);
    outcome o;
    probe(&o, url);
    EXPECT_REFUSAL("wrong host (localhost)", &o, FAILED_IN_CALL, MYSQLLEADER_USAGE, 0, "not valid for name");
}

/* 4. Plaintext to the TLS-only server: MariaDB answers 1045, as for a wrong password, MySQL 3159
   ("insecure transport"; MYSQLLEADER_TEST_KIND=mysql); a refused login either way, whose message
   says TLS is (or may be) what is missing. */
static void test_plaintext_refused(void) {
    const char *kind = getenv("MYSQLLEADER_TEST_KIND");
    const unsigned code = kind && strcmp(kind, "mysql") == 0 ? 3159 : 1045;
    const char *const params[] = {"ssl-mode=DISABLED", ""};
    for (size_t i = 0; i < sizeof params / sizeof params[0]; i++) {
        char url[4096], what[128];
        tls_url(url, sizeof url, "mysqlleader", NULL, params[i]);
        snprintf(what, sizeof what, "plaintext (%s)", params[i][0] ? params[i] : "no ssl parameter");
        outcome o;
        probe(&o, url);
        EXPECT_REFUSAL(what, &o, FAILED_IN_CALL, MYSQLLEADER_AUTHENTICATION, code, "requires TLS");
    }
}

/* 5. TLS required of a server that does not offer it. */
static void test_server_without_tls(void) {
    char url[4096];
    snprintf(url, sizeof url, "%s%sssl-mode=REQUIRED", plain_url, strchr(plain_url, '?') ? "&" : "?");
    outcome o;
    probe(&o, url);
    EXPECT_REFUSAL("server without TLS, ssl-mode=REQUIRED", &o, FAILED_IN_CALL, MYSQLLEADER_USAGE, 0,
                   "does not offer TLS");
}

/* 6. The REQUIRE X509 account elects with its client certificate, and is refused without it. */
static void test_x509_account(void) {
    mysqlleader_client *client = NULL;
    CHECK_OK(mysqlleader_client_new(x509_url, &client));
    if (client != NULL) {
        mysqlleader_campaign_result won;
        memset(&won, 0, sizeof won);
        CHECK_OK(mysqlleader_campaign(client, "tls-c-x509", "c1", 5000, &won));
        CHECK(won.is_leader == 1);
        CHECK_STR(won.leader_id, "c1");
        CHECK(won.term > 0);
        mysqlleader_resign_result resigned;
        memset(&resigned, 0, sizeof resigned);
        CHECK_OK(mysqlleader_resign(client, "tls-c-x509", "c1", &resigned));
        CHECK(resigned.resigned);
        mysqlleader_client_free(client);
    }

    char ca[2048], params[2200], url[4096];
    snprintf(params, sizeof params, "ssl-mode=VERIFY_IDENTITY&ssl-ca=%s", tls_file(ca, sizeof ca, "ca.pem"));
    tls_url(url, sizeof url, "mlx509", NULL, params);
    outcome o;
    probe(&o, url);
    EXPECT_REFUSAL("X509 account without ssl-cert/ssl-key", &o, FAILED_IN_CALL, MYSQLLEADER_AUTHENTICATION, 1045,
                   "client certificate");
}

/* 7. A bad TLS parameter is rejected by client_new (which reads the files, but connects to
   nothing), naming the parameter. */
static void test_bad_parameters_name_themselves(void) {
    char ca[2048], cert[2048], key[2048], nowhere[256];
    tls_file(ca, sizeof ca, "ca.pem");
    tls_file(cert, sizeof cert, "client-cert.pem");
    tls_file(key, sizeof key, "client-key.pem");
    pct_encode(nowhere, sizeof nowhere, "/nonexistent/ca.pem");
    struct {
        const char *what;
        char params[4200];
        const char *parameter;
    } cases[5];
    memset(cases, 0, sizeof cases);
    cases[0].what = "ssl-mode=SOMETIMES";
    snprintf(cases[0].params, sizeof cases[0].params, "ssl-mode=SOMETIMES");
    cases[0].parameter = "ssl-mode";
    cases[1].what = "ssl-cert without ssl-key";
    snprintf(cases[1].params, sizeof cases[1].params, "ssl-cert=%s", cert);
    cases[1].parameter = "ssl-key";
    cases[2].what = "ssl-ca that does not exist";
    snprintf(cases[2].params, sizeof cases[2].params, "ssl-mode=VERIFY_CA&ssl-ca=%s", nowhere);
    cases[2].parameter = "ssl-ca";
    cases[3].what = "a key given as ssl-ca";
    snprintf(cases[3].params, sizeof cases[3].params, "ssl-mode=VERIFY_CA&ssl-ca=%s", key);
    cases[3].parameter = "ssl-ca";
    cases[4].what = "a certificate given as ssl-key";
    snprintf(cases[4].params, sizeof cases[4].params, "ssl-cert=%s&ssl-key=%s", cert, cert);
    cases[4].parameter = "ssl-key";

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char url[8192];
        tls_url(url, sizeof url, "mysqlleader", NULL, cases[i].params);
        outcome o;
        probe(&o, url);
        EXPECT_REFUSAL(cases[i].what, &o, FAILED_IN_NEW, MYSQLLEADER_INVALID_ARGUMENT, 0, "");
        record(o.has_parameter && strcmp(o.parameter, cases[i].parameter) == 0, __FILE__, __LINE__,
               "%s: mysqlleader_last_error_parameter() is \"%s\", expected \"%s\" (%s)", cases[i].what,
               o.has_parameter ? o.parameter : "(null)", cases[i].parameter, o.message);
    }
}

/* A variable of scripts/test-tls.sh; a missing one is a failure. */
static const char *require_env(const char *name) {
    const char *value = getenv(name);
    if (value == NULL || value[0] == '\0') {
        failed++;
        fprintf(stderr, "FAIL: %s is not set; run through scripts/test-tls.sh (make test-tls)\n", name);
        return NULL;
    }
    return value;
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *url = require_env("MYSQLLEADER_TEST_URL");
    tls_dir = require_env("MYSQLLEADER_TEST_TLS_DIR");
    plain_url = require_env("MYSQLLEADER_TEST_PLAIN_URL");
    x509_url = require_env("MYSQLLEADER_TLS_X509_URL");
    if (url != NULL && !parse_test_url(url)) {
        failed++;
        fprintf(stderr, "FAIL: MYSQLLEADER_TEST_URL is not mysql://user:password@host:port/database\n");
    }
    if (failed > 0) {
        printf("%d passed, %d failed\n", passed, failed);
        return 1;
    }

    test_migrate();
    test_each_ssl_mode_connects();
    test_wrong_ca();
    test_wrong_host();
    test_plaintext_refused();
    test_server_without_tls();
    test_x509_account();
    test_bad_parameters_name_themselves();

    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
