/*
 * example.c: one node of a service, elected through mysqlleader. It prints when it starts and
 * stops leading and who leads, and on Ctrl-C (SIGINT) or SIGTERM it resigns, so another node
 * takes over at once.
 *
 *   cc -std=c11 example.c -I include -L target/release -lmysqlleader -o example
 *   MYSQLLEADER_URL=mysql://app:secret@127.0.0.1:3306/app ./example billing [NODE [LEASE_MS]]
 *
 * Run it in two terminals with different NODEs and press Ctrl-C in the leader's.
 */
#define _POSIX_C_SOURCE 200809L

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "mysqlleader.h"

static volatile sig_atomic_t stop_requested = 0;

static void on_signal(int signo) {
    (void)signo;
    stop_requested = 1;
}

/* Runs on the elector's callback thread, one event at a time, in order. */
static void on_event(void *userdata, const mysqlleader_event *event) {
    const char *node = userdata;
    switch (event->kind) {
    case MYSQLLEADER_EVENT_STARTED_LEADING:
        printf("node %s: leading at term %llu (valid for %llu ms)\n", node,
               (unsigned long long)event->term, (unsigned long long)event->valid_for_ms);
        break;
    case MYSQLLEADER_EVENT_STOPPED_LEADING:
        printf("node %s: stopped leading term %llu (%s)\n", node, (unsigned long long)event->term,
               mysqlleader_stop_reason_name(event->reason));
        break;
    case MYSQLLEADER_EVENT_LEADER_CHANGED:
        printf("node %s: leader is now %s (term %llu)\n", node,
               event->leader_id ? event->leader_id : "nobody", (unsigned long long)event->term);
        break;
    default:
        printf("node %s: %llu events missed\n", node, (unsigned long long)event->missed);
        break;
    }
}

static int fail(const char *what, mysqlleader_result rc) {
    fprintf(stderr, "example: %s: %s: %s\n", what, mysqlleader_result_name(rc), mysqlleader_last_error());
    return 2;
}

int main(int argc, char **argv) {
    const char *url = getenv("MYSQLLEADER_URL");
    if (argc < 2 || url == NULL) {
        fprintf(stderr, "usage: MYSQLLEADER_URL=mysql://user:pass@host:port/db %s SERVICE [NODE [LEASE_MS]]\n",
                argv[0]);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);

    struct sigaction sa;
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    mysqlleader_client *client = NULL;
    mysqlleader_result rc = mysqlleader_client_new(url, &client);
    if (rc != MYSQLLEADER_OK) return fail("connecting", rc);
    rc = mysqlleader_migrate(client, NULL); /* installs the schema when missing; cheap otherwise */
    if (rc != MYSQLLEADER_OK) {
        mysqlleader_client_free(client);
        return fail("migrating", rc);
    }

    /* Zero means "default" for every field: only the service is required. */
    mysqlleader_elector_config config = {0};
    config.service_id = argv[1];
    config.node_id = argc > 2 ? argv[2] : NULL; /* NULL: hostname:pid */
    config.lease_ms = argc > 3 ? strtoull(argv[3], NULL, 10) : 0;

    char node[MYSQLLEADER_ID_BUFFER_SIZE];
    if (config.node_id == NULL) {
        mysqlleader_default_node_id(node, sizeof node, NULL);
    } else {
        snprintf(node, sizeof node, "%s", config.node_id);
    }

    mysqlleader_elector *elector = NULL;
    rc = mysqlleader_elector_new(client, &config, on_event, node, &elector);
    mysqlleader_client_free(client); /* the elector keeps the connections it needs */
    if (rc != MYSQLLEADER_OK) return fail("starting the elector", rc);
    printf("node %s: campaigning for %s (Ctrl-C to resign and quit)\n", node, argv[1]);

    while (!stop_requested) {
        /* The leader's work goes here; guard every step with mysqlleader_elector_is_leader(),
         * and fence database writes with mysqlleader_elector_txn_begin(). */
        struct timespec pause = {0, 100 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }

    printf("node %s: resigning\n", node);
    mysqlleader_elector_free(elector); /* resigns, delivers the last events, joins the callback thread */
    printf("node %s: resigned, bye\n", node);
    return 0;
}
