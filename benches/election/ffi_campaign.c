/* The C side of the C-ABI overhead measurement (benches/election/cabi.rs): THREADS threads
 * call mysqlleader_campaign() on one shared client, back to back, for SECONDS seconds.
 *
 *   ffi_campaign URL SERVICE NODE THREADS SECONDS
 *
 * Prints one line: `calls secs p50_us p99_us errors`. Built by the benchmark with the system C
 * compiler against include/mysqlleader.h and the crate's cdylib. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mysqlleader.h"

static const char *service, *node;
static double seconds;
static mysqlleader_client *client;

struct worker {
    pthread_t thread;
    uint32_t *lat;
    size_t n, cap;
    uint64_t errors;
};

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double start_s;

static void *work(void *arg) {
    struct worker *w = arg;
    mysqlleader_campaign_result res;
    while (now_s() - start_s < seconds) {
        double t = now_s();
        if (mysqlleader_campaign(client, service, node, 10000, &res) != MYSQLLEADER_OK) {
            w->errors++;
            continue;
        }
        if (w->n == w->cap) {
            w->cap = w->cap ? w->cap * 2 : 65536;
            w->lat = realloc(w->lat, w->cap * sizeof *w->lat);
            if (!w->lat) abort();
        }
        w->lat[w->n++] = (uint32_t)((now_s() - t) * 1e6);
    }
    return NULL;
}

static int cmp(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: ffi_campaign URL SERVICE NODE THREADS SECONDS\n");
        return 2;
    }
    service = argv[2];
    node = argv[3];
    int threads = atoi(argv[4]);
    seconds = atof(argv[5]);
    if (mysqlleader_client_new(argv[1], &client) != MYSQLLEADER_OK) {
        fprintf(stderr, "client: %s\n", mysqlleader_last_error());
        return 1;
    }
    /* Warm-up: open connections, prepare statements. */
    mysqlleader_campaign_result res;
    for (int i = 0; i < 50; i++) mysqlleader_campaign(client, service, node, 10000, &res);

    struct worker *ws = calloc((size_t)threads, sizeof *ws);
    start_s = now_s();
    for (int i = 0; i < threads; i++) pthread_create(&ws[i].thread, NULL, work, &ws[i]);
    size_t total = 0;
    uint64_t errors = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(ws[i].thread, NULL);
        total += ws[i].n;
        errors += ws[i].errors;
    }
    double secs = now_s() - start_s;
    uint32_t *all = malloc((total ? total : 1) * sizeof *all);
    size_t k = 0;
    for (int i = 0; i < threads; i++) {
        memcpy(all + k, ws[i].lat, ws[i].n * sizeof *all);
        k += ws[i].n;
        free(ws[i].lat);
    }
    qsort(all, total, sizeof *all, cmp);
    uint32_t p50 = total ? all[(size_t)(0.50 * (double)(total - 1))] : 0;
    uint32_t p99 = total ? all[(size_t)(0.99 * (double)(total - 1))] : 0;
    printf("%zu %.6f %u %u %llu\n", total, secs, p50, p99, (unsigned long long)errors);
    free(all);
    free(ws);
    mysqlleader_client_free(client);
    return 0;
}
