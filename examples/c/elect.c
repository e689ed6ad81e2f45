/*
 * elect.c: the shortest complete use of mysqlleader from C. It becomes leader of the service
 * "example-c", makes one fenced write (it commits only while this node still leads at its
 * term), resigns and exits 0. (bindings/c/example.c is a long-running node instead.)
 *
 * The election schema is installed once per database by an operator, before any copy of the
 * program runs: `mysqlleader migrate` (the CLI). The application's account (`mysqlleader grant
 * ACCOUNT --role app`) may not install it, so the program does not migrate, except with
 * --migrate, for a development database whose account may (scripts/test-c.sh uses that).
 *
 *   cargo build --release --lib
 *   cc -std=c11 examples/c/elect.c -I include -L target/release -lmysqlleader -Wl,-rpath,$PWD/target/release -o elect
 *   mysqlleader --url mysql://admin:secret@127.0.0.1:3306/app migrate     # once, as the operator
 *   MYSQLLEADER_URL=mysql://app:secret@127.0.0.1:3306/app ./elect
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mysqlleader.h"

int main(int argc, char **argv) {
    bool migrate = argc == 2 && strcmp(argv[1], "--migrate") == 0;
    const char *url = getenv("MYSQLLEADER_URL"); /* mysql://user:pass@host:port/database */
    if (url == NULL) url = getenv("MYSQLLEADER_TEST_URL");
    if (url == NULL || argc > (migrate ? 2 : 1)) {
        fprintf(stderr, "usage: MYSQLLEADER_URL=mysql://user:pass@host:port/db elect [--migrate]\n");
        return 2;
    }
    /* Every call returns a mysqlleader_result, 0 (MYSQLLEADER_OK) on success. The handles start
     * NULL and every _free(NULL) does nothing, so one clean-up at `out` serves every path. */
    mysqlleader_client *client = NULL;
    mysqlleader_elector *elector = NULL;
    mysqlleader_txn *txn = NULL;
    const char *step = "setting up";
    mysqlleader_result rc;

    /* 1. A client (a connection pool); the election schema, installed by the operator
     *    (`mysqlleader migrate`), here only with --migrate (cheap when current); and a table for
     *    the example (DDL: in a plain transaction, never in a fenced one). */
    const char *create = "CREATE TABLE IF NOT EXISTS example_c_log (term BIGINT UNSIGNED, node VARCHAR(128))";
    if ((rc = mysqlleader_client_new(url, &client)) || (migrate && (rc = mysqlleader_migrate(client, NULL))) ||
        (rc = mysqlleader_txn_begin(client, &txn)) || (rc = mysqlleader_txn_execute(txn, create, NULL, 0, NULL)) ||
        (rc = mysqlleader_txn_commit(txn)))
        goto out;
    mysqlleader_txn_free(txn);
    txn = NULL;

    /* 2. An elector with a short lease (a crashed leader is replaced within 2 s); zero means
     *    "the default" for every other field. 3. Wait, at most 30 s, until this node leads. */
    step = "electing";
    mysqlleader_elector_config config = {0};
    config.service_id = "example-c";
    config.lease_ms = 2000;
    bool leading = false;
    if ((rc = mysqlleader_elector_new(client, &config, NULL, NULL, &elector)) ||
        (rc = mysqlleader_elector_wait_for_leadership(elector, 30000, &leading)) ||
        (rc = leading ? MYSQLLEADER_OK : MYSQLLEADER_NOT_LEADER))
        goto out;

    /* 4. One fenced write: elector_txn_begin opens a transaction in which assert_leader has
     *    succeeded for this node's term; no takeover can commit before it ends. Parameters are
     *    text (the server converts them), bound to the `?`s in order. */
    step = "the fenced write";
    uint64_t term = 0;
    char node[MYSQLLEADER_ID_BUFFER_SIZE], term_text[24];
    if ((rc = mysqlleader_elector_node_id(elector, node, sizeof node, NULL)) ||
        (rc = mysqlleader_elector_txn_begin(elector, &txn, &term)))
        goto out;
    snprintf(term_text, sizeof term_text, "%llu", (unsigned long long)term);
    const char *params[2] = {term_text, node};
    if ((rc = mysqlleader_txn_execute(txn, "INSERT INTO example_c_log (term, node) VALUES (?, ?)", params, 2, NULL)) ||
        (rc = mysqlleader_txn_commit(txn)))
        goto out;
    printf("elect: %s wrote as leader of example-c at term %llu\n", node, (unsigned long long)term);

    /* 5. Resign: another node takes over at once. */
    step = "resigning";
    rc = mysqlleader_elector_resign(elector, NULL);
out:
    if (rc) fprintf(stderr, "elect: %s: %s: %s\n", step, mysqlleader_result_name(rc), mysqlleader_last_error());
    mysqlleader_txn_free(txn); /* rolls back a transaction still open */
    mysqlleader_elector_free(elector);
    mysqlleader_client_free(client);
    return rc ? 1 : 0;
}
