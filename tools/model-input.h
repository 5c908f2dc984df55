/* panda-model inputs: packet-size samples from pcap files (libpcap) or from
 * "size count [flow]" histogram files. */
#ifndef MODEL_INPUT_H
#define MODEL_INPUT_H 1

#include <stdbool.h>
#include <stdint.h>

#include <panda/model.h>
#include <panda/solver.h>

/* Packets in input order, for replaying Algorithm 2 over them
 * (panda_model_excursion): 8 bytes per packet, grown as needed. */
struct model_sequence {
    struct panda_model_pkt *pkt;
    size_t n, cap;
    bool unordered;         /* Some input had no packet order (a
                             * histogram): the sequence is incomplete. */
};

void model_sequence_destroy(struct model_sequence *);

struct model_input_opts {
    uint32_t header_len;    /* Sizes are normalised to payload + this. */
    bool keep_acks;         /* Keep zero-payload packets (size header_len). */
    const char *filter;     /* BPF filter for pcap input (NULL: none). */
    struct model_sequence *seq; /* If nonnull, pcap packets are appended
                                 * here in capture order too. */
    uint64_t max_bytes;     /* Largest input file read (a regular file:
                             * panda_open_input()); 0: MODEL_MAX_INPUT. */
};

/* Default of max_bytes (panda-model --max-input-size): 4 GiB, a capture of
 * about 30 s at 1 Gbit/s with full packets, far more as headers only. */
#define MODEL_MAX_INPUT (UINT64_C(4) << 30)

struct model_input_stats {
    bool pcap;              /* The file was a capture. */
    bool labelled;          /* Samples carry flow identities. */
    uint64_t records;       /* Packets (pcap) or lines with data (text). */
    double packets;         /* Samples kept (sum of counts). */
    uint64_t non_tcp;       /* pcap: not TCP over IPv4/IPv6. */
    uint64_t fragments;     /* pcap: IP fragments (skipped). */
    uint64_t truncated;     /* pcap: headers cut by the snap length. */
    double zero_payload;    /* Zero-payload samples dropped (or kept). */
    uint64_t flows;         /* Flows added to the sample set. */
    uint64_t max_message;   /* pcap: the most payload bytes a connection
                             * sent with no data from its peer in between
                             * (its largest response: under TSO, the
                             * largest packet it can send). */
};

/* Reads 'file' (format detected from its first bytes; a regular file of
 * at most opts->max_bytes) into 'samples', adding one flow per connection
 * direction (pcap), per label (labelled histogram) or one flow for the
 * whole file (plain histogram).  Counts must be finite, and so must their
 * sums.  Returns NULL on success, else a malloc()ed message naming the
 * file. */
char *model_read_samples(const char *file, const struct model_input_opts *,
                         struct panda_samples *samples,
                         struct model_input_stats *);

/* True if this build can read pcap files. */
bool model_have_pcap(void);

/* Writes a pcap file (microsecond, Ethernet) of TCP/IPv4 packets, for the
 * benchmark: packet i belongs to flow flow[i] and carries payload[i] bytes
 * (only the headers are written: the snap length is 54).  Returns NULL or a
 * malloc()ed message. */
char *model_write_pcap(const char *file, const uint32_t *flow,
                       const uint32_t *payload, size_t n);

#endif /* model-input.h */
