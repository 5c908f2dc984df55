/* Unit tests: policy syntax, validation, Algorithm 2 and level mapping. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <panda/packet.h>
#include <panda/policy.h>

#include "policy-util.h"

#define ISSUE_EXAMPLE "id=1,threshold=1460,weights=1460:1/9000:2," \
                      "thresholds=100000/1000000/10000000," \
                      "dscp=46/26/18/0,queues=0/1/2/3"

static void
test_parse_issue_example(void **state)
{
    struct panda_policy p;

    (void) state;
    parse_ok(ISSUE_EXAMPLE, &p);
    assert_int_equal(p.id, 1);
    assert_int_equal(p.kind, PANDA_KIND_PANDA);
    assert_int_equal(p.threshold, 1460);
    assert_int_equal(p.n_weights, 2);
    assert_int_equal(p.weights[0].above, 1460);
    assert_int_equal(p.weights[0].weight, 100);
    assert_int_equal(p.weights[1].above, 9000);
    assert_int_equal(p.weights[1].weight, 200);
    assert_int_equal(p.n_levels, 4);
    assert_int_equal(p.alpha[0], 100000);
    assert_int_equal(p.alpha[1], 1000000);
    assert_int_equal(p.alpha[2], 10000000);
    assert_memory_equal(p.dscp, ((uint8_t[]) { 46, 26, 18, 0 }), 4);
    assert_memory_equal(p.queue, ((uint8_t[]) { 0, 1, 2, 3 }), 4);
    assert_int_equal(p.floor, 0);
    assert_int_equal(p.ctl_level, 0);
}

static void
test_format_roundtrip(void **state)
{
    static const char *cases[] = {
        ISSUE_EXAMPLE,
        "id=7,kind=pias,thresholds=10/20,dscp=1/2/3,queues=0/1/2",
        "id=4294967295,threshold=0,dscp=63,queues=255",
        "id=2,threshold=1200,weights=1300:1.05/9000:2.25/20000:2.5,"
        "thresholds=5,dscp=10/20,queues=1/0,ctl_level=1,floor=-30000,"
        "idle_reset=500",
    };
    size_t i;

    (void) state;
    for (i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct panda_policy p, q;
        char buf[512];
        int n;

        parse_ok(cases[i], &p);
        n = panda_policy_format(&p, buf, sizeof buf);
        assert_int_equal(n, strlen(buf));
        assert_string_equal(buf, cases[i]);
        parse_ok(buf, &q);
        assert_true(panda_policy_equal(&p, &q));
    }
}

static void
test_format_truncation(void **state)
{
    struct panda_policy p;
    char small[8];
    int n;

    (void) state;
    parse_ok(ISSUE_EXAMPLE, &p);
    n = panda_policy_format(&p, small, sizeof small);
    assert_int_equal(n, strlen(ISSUE_EXAMPLE));
    assert_string_equal(small, "id=1,th");
    assert_int_equal(panda_policy_format(&p, NULL, 0), n);
}

static void
test_defaults(void **state)
{
    struct panda_policy p;
    int i;

    (void) state;
    parse_ok("id=3,threshold=1000,thresholds=1/2/3/4/5/6/7", &p);
    assert_int_equal(p.n_levels, 8);
    for (i = 0; i < 8; i++) {
        assert_int_equal(p.dscp[i], i + 1);     /* Thesis: DSCP = priority. */
        assert_int_equal(p.queue[i], i);
    }
    parse_ok("id=3", &p);
    assert_int_equal(p.n_levels, 1);
    assert_int_equal(p.threshold, 0);
}

static void
test_bad_input(void **state)
{
    (void) state;
    parse_err("threshold=100", "id");
    parse_err("id=1,thresholds=100/100", "thresholds");
    parse_err("id=1,thresholds=300/200/100", "thresholds");
    parse_err("id=1,thresholds=1/2/3/4/5/6/7/8", "thresholds");  /* K=9 */
    parse_err("id=1,thresholds=1//3", "thresholds");
    parse_err("id=1,thresholds=-5", "thresholds");
    parse_err("id=1,thresholds=abc", "thresholds");
    parse_err("id=1,threshold=1460,weights=1460:0.5", "weights");
    parse_err("id=1,threshold=1460,weights=9000:2/5000:3", "weights");
    parse_err("id=1,threshold=1460,weights=5000:3/9000:2", "weights");
    parse_err("id=1,threshold=1460,weights=1000:2", "weights");
    parse_err("id=1,threshold=1460,weights=2000", "weights");
    parse_err("id=1,threshold=1460,weights=2000:1.234", "weights");
    parse_err("id=1,thresholds=10,dscp=64/0", "dscp");
    parse_err("id=1,thresholds=10,dscp=1/2/3", "dscp");
    parse_err("id=1,thresholds=10,queues=1", "queues");
    parse_err("id=1,threshold=70000", "threshold");
    parse_err("id=1,kind=pias,threshold=100", "threshold");
    parse_err("id=1,kind=pias,weights=100:2", "weights");
    parse_err("id=1,kind=fifo", "kind");
    parse_err("id=1,floor=10", "floor");
    parse_err("id=1,floor=x", "floor");
    parse_err("id=1,ctl_level=1", "ctl_level");
    parse_err("id=1,colour=red", "colour");
    parse_err("id=1,threshold", "threshold");
    parse_err("id=99999999999", "id");
    parse_err("id=1,idle_reset=4294967296", "idle_reset");
}

/* The tunnels a policy declares: none by default, a set of names in the
 * text, printed in one order (geneve before vxlan), and anything else
 * refused with a message naming the key. */
static void
test_tunnels(void **state)
{
    struct panda_policy p, q;
    char buf[PANDA_POLICY_TEXT_MAX];
    char *err;

    (void) state;
    parse_ok("id=1,thresholds=10", &p);
    assert_int_equal(p.tunnels, 0);
    panda_policy_format(&p, buf, sizeof buf);
    assert_null(strstr(buf, "tunnels"));

    parse_ok("id=1,thresholds=10,tunnels=vxlan/geneve", &p);
    assert_int_equal(p.tunnels, PANDA_TUNNEL_GENEVE | PANDA_TUNNEL_VXLAN);
    panda_policy_format(&p, buf, sizeof buf);
    assert_string_equal(buf, "id=1,threshold=0,thresholds=10,dscp=1/2,"
                        "queues=0/1,tunnels=geneve/vxlan");
    parse_ok(buf, &q);
    assert_true(panda_policy_equal(&p, &q));
    q.tunnels = PANDA_TUNNEL_VXLAN;
    assert_false(panda_policy_equal(&p, &q));

    /* Every kind classifies what the tunnel carries. */
    parse_ok("id=2,kind=app,app=46:0,tunnels=geneve", &p);
    assert_int_equal(p.tunnels, PANDA_TUNNEL_GENEVE);
    panda_policy_format(&p, buf, sizeof buf);
    assert_string_equal(buf, "id=2,kind=app,levels=1,app=46:0,dscp=1,"
                        "queues=0,tunnels=geneve");

    assert_int_equal(panda_policy_tunnel(PANDA_TUNNEL_VXLAN, 4789),
                     PANDA_TUNNEL_VXLAN);
    assert_int_equal(panda_policy_tunnel(PANDA_TUNNEL_VXLAN, 6081), 0);
    assert_int_equal(panda_policy_tunnel(PANDA_TUNNELS_ALL, 53), 0);
    assert_int_equal(panda_policy_tunnel(0, 4789), 0);

    parse_err_exact("id=1,tunnels=gre",
                    "tunnels: \"gre\" is not geneve or vxlan");
    parse_err_exact("id=1,tunnels=vxlan/vxlan", "tunnels: vxlan given twice");
    parse_err_exact("id=1,tunnels=",
                    "tunnels: empty (geneve, vxlan or geneve/vxlan; omit "
                    "the key for none)");
    parse_err_exact("id=1,tunnels=geneve/", "tunnels: empty item in "
                    "\"geneve/\"");
    parse_err_exact("id=1,tunnels=vxlan:8472",
                    "tunnels: \"vxlan:8472\": a tunnel is recognised by its "
                    "IANA port only (geneve 6081, vxlan 4789); write the "
                    "type alone");

    /* A policy built in code: unknown bits refused. */
    panda_policy_init(&p, PANDA_KIND_PANDA);
    p.tunnels = 0x84;
    err = panda_policy_validate(&p);
    assert_string_equal(err, "tunnels: unknown tunnel bits 0x84 (geneve is "
                        "0x01, vxlan 0x02)");
    free(err);
}

static void
test_validate_struct(void **state)
{
    struct panda_policy p;
    char *err;

    (void) state;
    panda_policy_init(&p, PANDA_KIND_PANDA);
    assert_null(panda_policy_validate(&p));
    p.n_levels = 9;
    err = panda_policy_validate(&p);
    assert_non_null(err);
    assert_non_null(strstr(err, "levels"));
    free(err);
    p.n_levels = 2;
    p.dscp[1] = 64;
    err = panda_policy_validate(&p);
    assert_non_null(err);
    assert_non_null(strstr(err, "dscp"));
    free(err);

    /* Durations: the one range of panda/time.h, checked here too, for
     * policies built in code rather than parsed. */
    p.dscp[1] = 2;
    p.idle_reset_ms = PANDA_MAX_DURATION_MS;
    assert_null(panda_policy_validate(&p));
    p.idle_reset_ms = PANDA_MAX_DURATION_MS + UINT64_C(1);
    err = panda_policy_validate(&p);
    assert_string_equal(err, "idle_reset: 4294967296 ms out of range"
                        " (max 4294967295)");
    free(err);
}

static void
test_counter_update(void **state)
{
    struct panda_policy p;
    int64_t c;

    (void) state;
    parse_ok("id=1,threshold=1000,weights=1000:1/9000:2.5", &p);
    /* Small packets compensate T - size, floored at 0 by default. */
    c = panda_policy_update(&p, 5000, 100);
    assert_int_equal(c, 5000 - 900);
    assert_int_equal(panda_policy_update(&p, 500, 100), 0);
    /* size == T is large (Algorithm 2: s < T is small). */
    assert_int_equal(panda_policy_update(&p, 0, 1000), 1000);
    assert_int_equal(panda_policy_update(&p, 0, 9000), 9000);
    assert_int_equal(panda_policy_update(&p, 0, 9001), 22502);
    assert_int_equal(panda_policy_update(&p, 0, 65535), 163837);
    /* Saturation, not wrap-around. */
    assert_int_equal(panda_policy_update(&p, INT64_MAX - 10, 60000),
                     INT64_MAX);
    /* A negative floor lets some credit accumulate, down to the floor. */
    parse_ok("id=1,threshold=1000,floor=-1500", &p);
    assert_int_equal(panda_policy_update(&p, 0, 100), -900);
    assert_int_equal(panda_policy_update(&p, -900, 100), -1500);
    /* PIAS: every byte counts, small packets included. */
    parse_ok("id=1,kind=pias", &p);
    assert_int_equal(panda_policy_update(&p, 10, 100), 110);
}

static void
test_level(void **state)
{
    struct panda_policy p;

    (void) state;
    parse_ok("id=1,threshold=1000,thresholds=100/200/300", &p);
    assert_int_equal(panda_policy_level(&p, -50), 0);
    assert_int_equal(panda_policy_level(&p, 0), 0);
    assert_int_equal(panda_policy_level(&p, 100), 0);  /* Not passed yet. */
    assert_int_equal(panda_policy_level(&p, 101), 1);
    assert_int_equal(panda_policy_level(&p, 200), 1);
    assert_int_equal(panda_policy_level(&p, 250), 2);
    assert_int_equal(panda_policy_level(&p, 301), 3);
    assert_int_equal(panda_policy_level(&p, INT64_MAX), 3);
}

static void
test_weight_lookup(void **state)
{
    struct panda_policy p;

    (void) state;
    parse_ok("id=1,threshold=1000,weights=1500:1.5/9000:3", &p);
    assert_int_equal(panda_policy_weight(&p, 1000), 100);
    assert_int_equal(panda_policy_weight(&p, 1500), 100);
    assert_int_equal(panda_policy_weight(&p, 1501), 150);
    assert_int_equal(panda_policy_weight(&p, 9000), 150);
    assert_int_equal(panda_policy_weight(&p, 9001), 300);
}

static void
test_tos(void **state)
{
    (void) state;
    assert_int_equal(panda_pkt_tos_set_dscp(0x03, 46), (46 << 2) | 3);
    assert_int_equal(panda_pkt_tos_set_dscp(0xff, 0), 0x03);
    assert_int_equal(panda_pkt_tos_set_dscp(0x01, 63), 0xfd);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_issue_example),
        cmocka_unit_test(test_format_roundtrip),
        cmocka_unit_test(test_format_truncation),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_tunnels),
        cmocka_unit_test(test_validate_struct),
        cmocka_unit_test(test_counter_update),
        cmocka_unit_test(test_level),
        cmocka_unit_test(test_weight_lookup),
        cmocka_unit_test(test_tos),
    };

    return cmocka_run_group_tests_name("policy", tests, NULL, NULL);
}
