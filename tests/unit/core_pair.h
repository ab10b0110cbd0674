/* SPDX-License-Identifier: BSD-3-Clause */
/* p2p comm pairs through the internal API in one process (TCP on lo), for the core's unit
 * tests: connect and accept, one message through, and a whole pair opened and closed. */
#ifndef TEST_CORE_PAIR_H
#define TEST_CORE_PAIR_H

#include <stddef.h>

#define CORE_PAIR_BUF 4096

double core_now(void);
void core_nap(void);
/* Connect and accept until both are done (30 s at most: the box is shared). */
void core_link_up(void *ctx, int dev, void *handle, void *lc, void **sc, void **rc);
/* One 100-byte message from sc to rc (which must have CORE_PAIR_BUF bytes registered). */
void core_exchange(void *sc, void *rc, char *sbuf, char *rbuf, void *smh, void *rmh);

/* A listen comm, the pair it accepted and connected, and a registered buffer on each. */
struct core_pair {
    void *lc, *sc, *rc, *smh, *rmh;
    char handle[128];
    char sbuf[CORE_PAIR_BUF], rbuf[CORE_PAIR_BUF];
};
void core_pair_open(void *ctx, struct core_pair *p);
void core_pair_close(struct core_pair *p);

#endif
