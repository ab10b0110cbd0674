/* SPDX-License-Identifier: BSD-3-Clause */
/* The relay service's insides, shared by relay_svc.c (the thread, queries) and relay_pump.c
 * (the relayed connections). Everything here belongs to the service thread. */
#ifndef JACCL_CORE_RELAY_INT_H
#define JACCL_CORE_RELAY_INT_H

#include <stddef.h>
#include <stdint.h>

#include "core/relay.h"

#define RELAY_LINKS_MAX 64
#define RELAY_TICK_MS   100          /* how often set-up deadlines are checked */
#define RELAY_BUF       (256 * 1024) /* per direction: what a relay holds for a slow side */

struct relay_sess;

struct relay_svc {
    int ufd, lfd, efd, epfd; /* queries, relayed connections, stop, the loop */
    int port;                /* lfd's, in answers */
    int stopping;            /* the fabric closed: no new connection */
    int sessions;            /* relayed connections being served */
    struct relay_sess *head;
    uint64_t timeout_ns; /* NCCL_JACCL_TIMEOUT, for set-up */
    int nlinks;
    struct jaccl_link links[RELAY_LINKS_MAX];
};

/* relay_svc.c */
int relay_link_to(const struct relay_svc *s, const union jaccl_sockaddr *a);
void relay_count(int delta);

/* relay_pump.c */
void relay_accept(struct relay_svc *s);
void relay_sess_event(struct relay_svc *s, void *end, uint32_t events);
/* Ends connections whose set-up outlived the deadline. */
void relay_sess_expire(struct relay_svc *s);
/* Frees the connections closed this round (after its events: one may name both sides). */
void relay_sess_reap(struct relay_svc *s);

#endif
