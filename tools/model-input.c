/* panda-model inputs: pcap captures and "size count [flow]" histograms. */
#include <config.h>

#include "model-input.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_PCAP
#include <pcap/pcap.h>
#endif

#include <panda/base.h>

/* ---- A small hash map from byte strings to flow indexes. ---- */

struct flow_map {
    size_t n, cap;          /* cap is a power of 2. */
    size_t key_len;         /* Fixed key length (0: NUL-terminated). */
    struct flow_slot {
        void *key;
        uint64_t hash;
        size_t flow;
    } *slots;
};

static uint64_t
hash_bytes(const void *p_, size_t n)
{
    const uint8_t *p = p_;
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
    size_t i;

    for (i = 0; i + 8 <= n; i += 8) {
        uint64_t w;

        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdULL;
        h ^= h >> 32;
    }
    for (; i < n; i++) {
        h = (h ^ p[i]) * 0x100000001b3ULL;
    }
    h ^= h >> 29;
    h *= 0xc4ceb9fe1a85ec53ULL;
    return h ^ (h >> 32);
}

static void
flow_map_init(struct flow_map *m, size_t key_len)
{
    m->n = 0;
    m->cap = 1024;
    m->key_len = key_len;
    m->slots = panda_xcalloc(m->cap, sizeof *m->slots);
}

static void
flow_map_destroy(struct flow_map *m)
{
    size_t i;

    for (i = 0; i < m->cap; i++) {
        free(m->slots[i].key);
    }
    free(m->slots);
}

static size_t
key_size(const struct flow_map *m, const void *key)
{
    return m->key_len ? m->key_len : strlen(key) + 1;
}

/* Returns the flow of 'key', adding a new flow to 's' if needed. */
static size_t
flow_map_get(struct flow_map *m, const void *key, struct panda_samples *s,
             uint64_t *n_new)
{
    size_t len = key_size(m, key);
    uint64_t h = hash_bytes(key, len);
    size_t i;

    for (i = h & (m->cap - 1); m->slots[i].key; i = (i + 1) & (m->cap - 1)) {
        if (m->slots[i].hash == h
            && key_size(m, m->slots[i].key) == len
            && !memcmp(m->slots[i].key, key, len)) {
            return m->slots[i].flow;
        }
    }
    if (2 * (m->n + 1) > m->cap) {
        struct flow_slot *old = m->slots;
        size_t old_cap = m->cap, j;

        m->cap *= 2;
        m->slots = panda_xcalloc(m->cap, sizeof *m->slots);
        for (j = 0; j < old_cap; j++) {
            if (old[j].key) {
                size_t k;

                for (k = old[j].hash & (m->cap - 1); m->slots[k].key;
                     k = (k + 1) & (m->cap - 1)) {
                    continue;
                }
                m->slots[k] = old[j];
            }
        }
        free(old);
        for (i = h & (m->cap - 1); m->slots[i].key;
             i = (i + 1) & (m->cap - 1)) {
            continue;
        }
    }
    m->slots[i].key = panda_xmalloc(len);
    memcpy(m->slots[i].key, key, len);
    m->slots[i].hash = h;
    m->slots[i].flow = panda_samples_new_flow(s);
    m->n++;
    (*n_new)++;
    return m->slots[i].flow;
}

/* ---- Packet order. ---- */

#ifdef HAVE_PCAP
static void
sequence_push(struct model_sequence *q, size_t flow, uint32_t payload)
{
    if (q->n == q->cap) {
        q->cap = q->cap ? 2 * q->cap : 4096;
        q->pkt = panda_xrealloc(q->pkt, q->cap * sizeof *q->pkt);
    }
    q->pkt[q->n].flow = (uint32_t) flow;
    q->pkt[q->n].payload = payload;
    q->n++;
}
#endif

void
model_sequence_destroy(struct model_sequence *q)
{
    free(q->pkt);
    q->pkt = NULL;
    q->n = q->cap = 0;
}

/* ---- Histogram files. ---- */

/* The most packets a file may count in all (2^53: counted exactly in a
 * double, and packets x bytes stays far from overflow). */
#define MAX_PACKETS 9007199254740992.0

static char *
read_histogram(FILE *f, const char *file, const struct model_input_opts *o,
               uint64_t max_bytes, struct panda_samples *s,
               struct model_input_stats *st)
{
    struct flow_map map;
    char line[4096];
    unsigned long lineno = 0;
    size_t whole = SIZE_MAX;
    uint64_t read_bytes = 0;
    int labelled = -1;
    char *err = NULL;

    flow_map_init(&map, 0);
    while (fgets(line, sizeof line, f)) {
        char *p = line, *end, *label;
        unsigned long long size;
        double count;
        size_t flow;

        lineno++;
        read_bytes += strlen(line);
        if (read_bytes > max_bytes) {
            err = panda_asprintf("%s: more than %" PRIu64 " bytes (it grew"
                                 " while read; --max-input-size)", file,
                                 max_bytes);
            break;
        }
        if (!strchr(line, '\n') && !feof(f)) {
            err = panda_asprintf("%s:%lu: line too long", file, lineno);
            break;
        }
        p += strspn(p, " \t\r\n");
        if (*p == '\0' || *p == '#') {
            continue;
        }
        if (*p == '-') {
            err = panda_asprintf("%s:%lu: negative packet size", file,
                                 lineno);
            break;
        }
        errno = 0;
        size = strtoull(p, &end, 10);
        if (end == p || errno || (*end && !strchr(" \t", *end))) {
            err = panda_asprintf("%s:%lu: expected \"<size> <count>"
                                 " [<flow>]\", got \"%.*s\"", file, lineno,
                                 (int) strcspn(p, "\r\n"), p);
            break;
        }
        if (size == 0 || size > PANDA_SOLVER_MAX_SIZE) {
            err = panda_asprintf("%s:%lu: packet size %llu out of range (1 to"
                                 " %d bytes, headers included)", file,
                                 lineno, size, PANDA_SOLVER_MAX_SIZE);
            break;
        }
        p = end;
        errno = 0;
        count = strtod(p, &end);
        if (end == p || errno || !isfinite(count) || count < 0) {
            err = panda_asprintf("%s:%lu: missing or invalid count after size"
                                 " %llu (need a finite number >= 0)", file,
                                 lineno, size);
            break;
        }
        /* Finite counts whose sum is not (1e308 twice: "inf packets")
         * are refused too: every total the model derives (packets, bytes
         * = packets x size) must be a finite, exact number. */
        if (!(st->packets + st->zero_payload + count <= MAX_PACKETS)) {
            err = panda_asprintf("%s:%lu: count %g after size %llu: the "
                                 "counts add up to more than 2^53 packets",
                                 file, lineno, count, size);
            break;
        }
        p = end + strspn(end, " \t\r\n");
        label = NULL;
        if (*p && *p != '#') {
            char *label_end = p + strcspn(p, " \t\r\n#");
            char *rest = label_end + strspn(label_end, " \t\r\n");

            if (*rest && *rest != '#') {
                err = panda_asprintf("%s:%lu: trailing text \"%.*s\"",
                                     file, lineno,
                                     (int) strcspn(rest, "\r\n"), rest);
                break;
            }
            *label_end = '\0';
            label = p;
        }
        if (labelled < 0) {
            labelled = label != NULL;
        } else if (labelled != (label != NULL)) {
            err = panda_asprintf("%s:%lu: %s flow label (either every line"
                                 " names its flow or none does)", file,
                                 lineno, label ? "unexpected" : "missing");
            break;
        }
        st->records++;
        if (size <= o->header_len) {
            st->zero_payload += count;
            if (!o->keep_acks) {
                continue;
            }
        }
        if (label) {
            flow = flow_map_get(&map, label, s, &st->flows);
        } else {
            if (whole == SIZE_MAX) {
                whole = panda_samples_new_flow(s);
                st->flows++;
            }
            flow = whole;
        }
        panda_samples_add(s, flow, (uint32_t) size, count, o->header_len);
        st->packets += count;
    }
    if (!err && ferror(f)) {
        err = panda_asprintf("%s: read error (%s)", file, strerror(errno));
    }
    st->labelled = labelled > 0;
    flow_map_destroy(&map);
    return err;
}

/* ---- pcap. ---- */

bool
model_have_pcap(void)
{
#ifdef HAVE_PCAP
    return true;
#else
    return false;
#endif
}

#ifdef HAVE_PCAP
struct flow_key {
    uint8_t family;
    uint8_t pad[3];
    uint16_t sport, dport;
    uint8_t src[16], dst[16];
};                              /* 40 bytes, no implicit padding. */

static uint16_t
get16(const uint8_t *p)
{
    return (uint16_t) (p[0] << 8 | p[1]);
}

/* Parses one packet; returns the TCP payload length or -1 to skip it, and
 * the TCP acknowledgment number in '*ack'. */
static long
parse_packet(int dlt, const uint8_t *p, uint32_t caplen, uint32_t wirelen,
             struct flow_key *key, uint32_t *ack,
             struct model_input_stats *st)
{
    uint32_t off = 0, ip_len, hl, tcp_off, link;
    uint16_t ethertype = 0;
    uint8_t proto;

    switch (dlt) {
    case DLT_EN10MB:
        if (caplen < 14) {
            goto truncated;
        }
        ethertype = get16(p + 12);
        off = 14;
        while (ethertype == 0x8100 || ethertype == 0x88a8) {
            if (caplen < off + 4) {
                goto truncated;
            }
            ethertype = get16(p + off + 2);
            off += 4;
        }
        break;
    case DLT_LINUX_SLL:
        if (caplen < 16) {
            goto truncated;
        }
        ethertype = get16(p + 14);
        off = 16;
        break;
#ifdef DLT_LINUX_SLL2
    case DLT_LINUX_SLL2:
        if (caplen < 20) {
            goto truncated;
        }
        ethertype = get16(p);
        off = 20;
        break;
#endif
    case DLT_NULL:
    case DLT_LOOP: {
        uint32_t fam;

        if (caplen < 4) {
            goto truncated;
        }
        memcpy(&fam, p, 4);
        if (dlt == DLT_LOOP) {
            fam = (uint32_t) p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
        } else if (fam > 0xffff) {
            fam = __builtin_bswap32(fam);
        }
        ethertype = fam == 2 ? 0x0800 : 0x86dd;
        off = 4;
        break;
    }
    case DLT_RAW:
#ifdef DLT_IPV4
    case DLT_IPV4:
    case DLT_IPV6:
#endif
        if (caplen < 1) {
            goto truncated;
        }
        ethertype = (p[0] >> 4) == 4 ? 0x0800 : 0x86dd;
        break;
    default:
        return -1;
    }
    link = off;

    memset(key, 0, sizeof *key);
    if (ethertype == 0x0800) {
        if (caplen < off + 20) {
            goto truncated;
        }
        if ((p[off] >> 4) != 4) {
            st->non_tcp++;
            return -1;
        }
        hl = (p[off] & 0x0f) * 4u;
        ip_len = get16(p + off + 2);
        proto = p[off + 9];
        if (get16(p + off + 6) & 0x3fff) {
            st->fragments++;
            return -1;
        }
        if (proto != 6) {
            st->non_tcp++;
            return -1;
        }
        if (!ip_len) {
            /* TSO super-packets may show total length 0. */
            ip_len = wirelen > link ? wirelen - link : 0;
        }
        key->family = 4;
        memcpy(key->src, p + off + 12, 4);
        memcpy(key->dst, p + off + 16, 4);
    } else if (ethertype == 0x86dd) {
        if (caplen < off + 40) {
            goto truncated;
        }
        hl = 40;
        ip_len = 40 + get16(p + off + 4);
        proto = p[off + 6];
        if (proto != 6) {
            if (proto == 44) {
                st->fragments++;
            } else {
                st->non_tcp++;
            }
            return -1;
        }
        if (ip_len == 40 && wirelen > link + 40) {
            ip_len = wirelen - link;
        }
        key->family = 6;
        memcpy(key->src, p + off + 8, 16);
        memcpy(key->dst, p + off + 24, 16);
    } else {
        st->non_tcp++;
        return -1;
    }
    if (hl < 20) {
        st->non_tcp++;
        return -1;
    }
    tcp_off = off + hl;
    if (caplen < tcp_off + 20) {
        goto truncated;
    }
    key->sport = get16(p + tcp_off);
    key->dport = get16(p + tcp_off + 2);
    *ack = (uint32_t) get16(p + tcp_off + 8) << 16 | get16(p + tcp_off + 10);
    hl += (p[tcp_off + 12] >> 4) * 4u;
    return ip_len > hl ? (long) (ip_len - hl) : 0;

truncated:
    st->truncated++;
    return -1;
}

/* The payload each flow has sent since the peer last sent data (its
 * acknowledgment number moved): for a request/response connection, the
 * response to one request, however many writes the server made of it,
 * which TSO may send as one packet.  (Not PSH: memcached writes a 12 KB
 * response as two PSH runs that a busy socket sends together.)  A
 * one-way stream is one run: its packets can be as large as TSO makes
 * them.  12 bytes per flow. */
struct message_run {
    uint64_t bytes;
    uint32_t ack;
};

struct message_runs {
    struct message_run *run;    /* Indexed by flow. */
    size_t n;
};

static void
message_close(struct message_run *r, struct model_input_stats *st)
{
    if (r->bytes > st->max_message) {
        st->max_message = r->bytes;
    }
    r->bytes = 0;
}

static bool
message_add(struct message_runs *m, size_t flow, uint64_t payload,
            uint32_t ack, struct model_input_stats *st)
{
    struct message_run *r;

    if (flow >= m->n) {
        size_t n = flow + 1 > 2 * m->n ? flow + 1 : 2 * m->n;
        struct message_run *runs = realloc(m->run, n * sizeof *runs);

        if (!runs) {
            return false;
        }
        memset(runs + m->n, 0, (n - m->n) * sizeof *runs);
        m->run = runs;
        m->n = n;
    }
    r = &m->run[flow];
    if (r->bytes && r->ack != ack) {
        message_close(r, st);
    }
    r->ack = ack;
    r->bytes += payload;
    return true;
}

/* Counts the runs still open (the capture ended in them) and frees 'm'. */
static void
message_finish(struct message_runs *m, struct model_input_stats *st)
{
    size_t i;

    for (i = 0; i < m->n; i++) {
        message_close(&m->run[i], st);
    }
    free(m->run);
}

/* Reads the capture open in 'f' (at its start); takes 'f' over. */
static char *
read_pcap(FILE *f, const char *file, const struct model_input_opts *o,
          uint64_t max_bytes, struct panda_samples *s,
          struct model_input_stats *st)
{
    struct message_runs msg = { NULL, 0 };
    char errbuf[PCAP_ERRBUF_SIZE];
    struct pcap_pkthdr *hdr;
    const u_char *data;
    struct flow_map map;
    pcap_t *pc;
    char *err = NULL;
    int dlt, rc;

    errbuf[0] = '\0';
    pc = pcap_fopen_offline(f, errbuf);
    if (!pc) {
        fclose(f);
        return panda_asprintf("%s: cannot read capture (%s)", file, errbuf);
    }
    dlt = pcap_datalink(pc);
    switch (dlt) {
    case DLT_EN10MB: case DLT_LINUX_SLL: case DLT_NULL: case DLT_LOOP:
    case DLT_RAW:
#ifdef DLT_LINUX_SLL2
    case DLT_LINUX_SLL2:
#endif
#ifdef DLT_IPV4
    case DLT_IPV4: case DLT_IPV6:
#endif
        break;
    default:
        pcap_close(pc);
        return panda_asprintf("%s: unsupported link type %s (need Ethernet,"
                              " Linux cooked, loopback or raw IP)", file,
                              pcap_datalink_val_to_name(dlt)
                              ? pcap_datalink_val_to_name(dlt) : "?");
    }
    if (o->filter && *o->filter) {
        struct bpf_program prog;

        if (pcap_compile(pc, &prog, o->filter, 1, PCAP_NETMASK_UNKNOWN)
            || pcap_setfilter(pc, &prog)) {
            err = panda_asprintf("%s: bad filter \"%s\" (%s)", file,
                                 o->filter, pcap_geterr(pc));
            pcap_close(pc);
            return err;
        }
        pcap_freecode(&prog);
    }

    st->pcap = true;
    st->labelled = true;
    flow_map_init(&map, sizeof(struct flow_key));
    while ((rc = pcap_next_ex(pc, &hdr, &data)) == 1) {
        struct flow_key key;
        uint32_t ack;
        long payload;
        size_t flow;

        st->records++;
        if (!(st->records & 4095) && (uint64_t) ftello(f) > max_bytes) {
            err = panda_asprintf("%s: more than %" PRIu64 " bytes (it grew"
                                 " while read; --max-input-size)", file,
                                 max_bytes);
            break;
        }
        payload = parse_packet(dlt, data, hdr->caplen, hdr->len, &key,
                               &ack, st);
        if (payload < 0) {
            continue;
        }
        if (payload == 0) {
            st->zero_payload++;
            if (!o->keep_acks) {
                continue;
            }
        }
        if ((uint64_t) payload + o->header_len > PANDA_SOLVER_MAX_SIZE) {
            payload = PANDA_SOLVER_MAX_SIZE - o->header_len;
        }
        flow = flow_map_get(&map, &key, s, &st->flows);
        if (payload && !message_add(&msg, flow, (uint64_t) payload, ack,
                                    st)) {
            err = panda_asprintf("%s: out of memory", file);
            break;
        }
        panda_samples_push(s, flow, (uint32_t) payload + o->header_len,
                           o->header_len);
        if (o->seq) {
            sequence_push(o->seq, flow, (uint32_t) payload);
        }
        st->packets++;
    }
    if (rc == -1) {
        err = panda_asprintf("%s: capture damaged after %" PRIu64
                             " packets (%s)", file, st->records,
                             pcap_geterr(pc));
    }
    message_finish(&msg, st);
    panda_samples_flush(s);
    flow_map_destroy(&map);
    pcap_close(pc);
    return err;
}
#endif /* HAVE_PCAP */

static bool
is_pcap_magic(const uint8_t m[4])
{
    static const uint8_t magics[][4] = {
        { 0xa1, 0xb2, 0xc3, 0xd4 }, { 0xd4, 0xc3, 0xb2, 0xa1 },
        { 0xa1, 0xb2, 0x3c, 0x4d }, { 0x4d, 0x3c, 0xb2, 0xa1 },
        { 0x0a, 0x0d, 0x0d, 0x0a },
    };
    size_t i;

    for (i = 0; i < sizeof magics / sizeof magics[0]; i++) {
        if (!memcmp(m, magics[i], 4)) {
            return true;
        }
    }
    return false;
}

char *
model_read_samples(const char *file, const struct model_input_opts *o,
                   struct panda_samples *s, struct model_input_stats *st)
{
    uint64_t max_bytes = o->max_bytes ? o->max_bytes : MODEL_MAX_INPUT;
    uint8_t magic[4];
    size_t n;
    FILE *f;
    char *err;

    memset(st, 0, sizeof *st);
    f = panda_open_input(file, max_bytes, NULL, &err);
    if (!f) {
        if (strstr(err, "above the limit")) {
            char *e = panda_asprintf("%s (--max-input-size)", err);

            free(err);
            err = e;
        }
        return err;
    }
    n = fread(magic, 1, 4, f);
    if (n == 4 && is_pcap_magic(magic)) {
#ifdef HAVE_PCAP
        rewind(f);
        return read_pcap(f, file, o, max_bytes, s, st);
#else
        fclose(f);
        return panda_asprintf("%s: is a capture, but panda-model was built"
                              " without libpcap (install libpcap-dev and"
                              " re-run configure)", file);
#endif
    }
    if (o->filter && *o->filter) {
        fclose(f);
        return panda_asprintf("%s: a filter was given but the file is not a"
                              " capture", file);
    }
    if (n && memchr(magic, '\0', n)) {
        fclose(f);
        return panda_asprintf("%s: neither a pcap capture nor a \"size count"
                              "\" text histogram", file);
    }
    rewind(f);
    if (o->seq) {
        o->seq->unordered = true;
    }
    err = read_histogram(f, file, o, max_bytes, s, st);
    fclose(f);
    return err;
}

/* ---- pcap writer (benchmark). ---- */

static void
put16(uint8_t *p, uint16_t v)
{
    p[0] = v >> 8;
    p[1] = v & 0xff;
}

char *
model_write_pcap(const char *file, const uint32_t *flow,
                 const uint32_t *payload, size_t n)
{
    /* Little-endian pcap global header, snaplen 54, Ethernet. */
    static const uint8_t ghdr[24] = {
        0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        54, 0, 0, 0, 1, 0, 0, 0,
    };
    FILE *f = fopen(file, "wb");
    uint8_t rec[16 + 54];
    size_t i;

    if (!f) {
        return panda_asprintf("%s: cannot create (%s)", file,
                              strerror(errno));
    }
    fwrite(ghdr, 1, sizeof ghdr, f);
    memset(rec, 0, sizeof rec);
    for (i = 0; i < n; i++) {
        uint32_t ts = (uint32_t) (i / 1000000), us = (uint32_t) (i % 1000000);
        uint32_t len = 54 + payload[i], cap = 54;
        uint8_t *e = rec + 16, *ip = e + 14, *tcp = ip + 20;
        int k;

        for (k = 0; k < 4; k++) {
            rec[k] = (ts >> (8 * k)) & 0xff;
            rec[4 + k] = (us >> (8 * k)) & 0xff;
            rec[8 + k] = (cap >> (8 * k)) & 0xff;
            rec[12 + k] = (len >> (8 * k)) & 0xff;
        }
        put16(e + 12, 0x0800);
        ip[0] = 0x45;
        put16(ip + 2, (uint16_t) (40 + payload[i]));
        ip[8] = 64;
        ip[9] = 6;
        ip[12] = 10;
        ip[15] = 1;
        ip[16] = 10;
        ip[19] = 2;
        put16(tcp, (uint16_t) (10000 + flow[i] % 50000));
        put16(tcp + 2, (uint16_t) (80 + flow[i] / 50000));
        tcp[12] = 5 << 4;
        tcp[13] = 0x18;
        fwrite(rec, 1, sizeof rec, f);
    }
    if (fclose(f)) {
        return panda_asprintf("%s: write error (%s)", file, strerror(errno));
    }
    return NULL;
}
