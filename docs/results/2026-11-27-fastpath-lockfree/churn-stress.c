#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <panda/conn-table.h>
#include <panda/policy.h>

static struct panda_table *t;
static struct panda_policy p;
static volatile int stop;
static long nonstateful;


static struct panda_pkt tcp4(const char *s, int sp, const char *d, int dp, int fl, int pl)
{
    struct panda_pkt k; memset(&k, 0, sizeof k);
    k.family = 4; k.proto = 6; inet_pton(AF_INET, s, &k.src.v4); inet_pton(AF_INET, d, &k.dst.v4);
    k.sport = htons(sp); k.dport = htons(dp); k.tcp_flags = fl; k.payload = pl; return k;
}
static void *steady(void *a)
{
    int n = *(int *) a;
    for (int i = 0; i < n; i++) for (int c = 0; c < 4; c++) {
        struct panda_pkt k = tcp4("10.0.0.1", 1 + c, "10.0.0.2", 2, 0, 1000);
        struct panda_table_verdict v;
        panda_table_classify(t, &p, &k, 0, &v);
        if (!v.stateful) nonstateful++;
    }
    stop = 1; return NULL;
}
static void *churn(void *a)
{
    int port = 1000; (void) a;
    while (!stop) {
        for (int i = 0; i < 50; i++) { struct panda_pkt k = tcp4("10.9.0.1", port + i, "10.0.0.2", 2, 0, 100); struct panda_table_verdict v; panda_table_classify(t, &p, &k, 0, &v); }
        for (int i = 0; i < 50; i++) { struct panda_pkt k = tcp4("10.9.0.1", port + i, "10.0.0.2", 2, PANDA_TCP_FIN, 0); struct panda_table_verdict v; panda_table_classify(t, &p, &k, 0, &v); }
        port = port < 60000 ? port + 50 : 1000;
    }
    return NULL;
}
int main(int argc, char **argv)
{
    int rounds = atoi(argv[1]), n = 200000, bad = 0, events = 0;
    int distinct = argc > 2 && !strcmp(argv[2], "distinct");
    char *err = panda_policy_parse("id=1,kind=pias", &p);
    if (err) { puts(err); return 1; }
    for (int r = 0; r < rounds; r++) {
        struct panda_table_config cfg = { 64, 0, 0, 0x5eed };
        t = panda_table_create(&cfg, &err); stop = 0; nonstateful = 0;
        for (int c = 0; c < 4; c++) for (int i = 0; i < 4; i++) { struct panda_pkt k = tcp4("10.0.0.1", 1 + c, "10.0.0.2", 2, 0, i || !distinct ? 1000 : 1000 + c); struct panda_table_verdict v; panda_table_classify(t, &p, &k, 0, &v); }
        pthread_t a, b; pthread_create(&a, NULL, churn, NULL); pthread_create(&b, NULL, steady, &n);
        pthread_join(b, NULL); pthread_join(a, NULL);
        for (int c = 0; c < 4; c++) { struct panda_pkt k = tcp4("10.0.0.1", 1 + c, "10.0.0.2", 2, 0, 0); int64_t cnt = -1;
            panda_table_lookup(t, &k, &cnt);
            if (cnt != (int64_t) (n + 4) * 1000 + (distinct ? c : 0)) { bad++; printf("round %d conn %d: %lld (diff %lld) nonstateful %ld\n", r, c, (long long) cnt, (long long) (cnt - (int64_t) (n + 4) * 1000 - (distinct ? c : 0)), nonstateful); } }
        panda_table_destroy(t);
    }
    printf("%s states: %d rounds of %d updates on 4 connections beside the churn; connections with a wrong counter: %d\n", distinct ? "distinct" : "same", rounds, 4 * n, bad);
    return 0;
}
