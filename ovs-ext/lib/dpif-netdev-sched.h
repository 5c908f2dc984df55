/*
 * Copyright (c) 2026 Panda-OVS developers.
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at:
 *
 *     http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */

#ifndef DPIF_NETDEV_SCHED_H
#define DPIF_NETDEV_SCHED_H 1

#include <stdbool.h>
#include <stdint.h>

/* The egress scheduler of the userspace datapath: QoS type "panda-sched".
 *
 * A port whose QoS record has type "panda-sched" gets a scheduler (lib/panda
 * scheduler.h: strict priority levels, per-flow queues, starvation guard,
 * port ECN, WRED, shaping, limits) that holds its outgoing packets.  It
 * works the same on every port type, since it sits in the datapath in front
 * of netdev_send(): nothing here knows what kind of netdev it feeds.
 *
 * Configuration.  netdev_set_qos() and netdev_set_queue() store the QoS and
 * Queue records' other_config in the netdev (netdev.h, "QoS run by the
 * datapath"); dp_sched_update() parses them, once per change, with
 * lib/panda's parser, and reports the result in the QoS status.  A refused
 * configuration leaves the port without a scheduler.
 *
 * Packets.  A packet's level is its queue, i.e. md.skb_priority as set by
 * set_queue or the panda action (queue N = level N; queues beyond the last
 * level go to the lowest); its flow is its 5-tuple hash (the RSS hash); its
 * DSCP and ECN come from its IP header, where CE is written when the
 * scheduler marks it.
 *
 * Threads.  Any thread may send to any port, so a scheduler has a mutex;
 * its critical sections are one enqueue of a batch and one dequeue of up to
 * a batch.  One thread at a time has the "turn" to send what it dequeued,
 * so that packets of one flow never overtake each other on two threads'
 * tx queues; a thread that finds the turn taken leaves its packets queued
 * and comes back. */

struct dp_packet_batch;
struct dp_sched;
struct dp_scheds;
struct netdev;
struct smap;

void dp_sched_init(void);

/* The schedulers of one datapath: they share the bound on held packets,
 * other_config:panda-sched-max-packets. */
struct dp_scheds *dp_scheds_create(const char *dp_name);
void dp_scheds_destroy(struct dp_scheds *);
void dp_scheds_set_config(struct dp_scheds *, const struct smap *other_config);
void dp_scheds_wait_until(struct dp_scheds *, long long int next_us,
                          long long int now_us);

/* Brings the scheduler of 'netdev' (currently 'sched', possibly NULL) in
 * line with the QoS configured on 'netdev' and returns the one to use from
 * now on: 'sched' itself, reconfigured in place with its packets, a new one,
 * or NULL if 'netdev' has no panda-sched QoS or its configuration was
 * refused.  If it returns NULL for a nonnull 'sched', the caller makes sure
 * no thread still uses 'sched' and then calls dp_sched_drain() and
 * dp_sched_destroy().  Main thread only. */
struct dp_sched *dp_sched_update(struct dp_scheds *, struct dp_sched *sched,
                                 struct netdev *);

/* Calls 'send' with every packet 'sched' holds, in batches, in the order
 * the scheduler would have sent them (shaping aside); frees them if 'send'
 * is NULL. */
void dp_sched_drain(struct dp_sched *,
                    void (*send)(struct dp_packet_batch *, void *aux),
                    void *aux);
void dp_sched_destroy(struct dp_sched *);

/* Offers the packets of 'batch' (possibly none) to 'sched', which holds or
 * drops each of them.  Then, if no other thread has the turn to send,
 * takes it, refills 'batch' with up to a batch of packets that may leave at
 * 'now_us' and returns true: the caller sends 'batch' (possibly empty) and
 * calls dp_sched_send_done().  Returns false, with 'batch' empty, if
 * another thread has the turn.  '*more' tells whether packets remain
 * queued: if so, the caller comes back later (dp_sched_next_us()). */
bool dp_sched_exchange(struct dp_sched *, struct dp_packet_batch *batch,
                       long long int now_us, bool *more);
void dp_sched_send_done(struct dp_sched *);

/* When 'sched' may next send a packet: 'now_us' or earlier if it may now,
 * LLONG_MAX if it holds none. */
long long int dp_sched_next_us(struct dp_sched *, long long int now_us);

#endif /* dpif-netdev-sched.h */
