/* SPDX-License-Identifier: BSD-3-Clause */
/* The registry's index for readers (core/registry.c): which live entry holds an address,
 * answered without taking any lock, so that the data path's pointer checks (isend, irecv,
 * test, the CollNet calls) never wait for each other nor for a create or close elsewhere.
 *
 * A hash table of buckets, each a chain of nodes and a sequence number (a seqlock per bucket):
 * a reader walks a chain and accepts what it saw only if the bucket's number was even and
 * unchanged from before to after. Nodes are never freed (they are recycled), so a reader that
 * walks into a node being removed or reused reads memory that is still the index's, and the
 * changed number sends it round again. Single objects are indexed by their address, arrays by
 * every 4 KiB granule they cover (a lookup probes both). Writers (add, del) are serialised by
 * the registry's writers' lock, which the caller holds. */
#ifndef JACCL_CORE_REG_INDEX_H
#define JACCL_CORE_REG_INDEX_H

#include <stddef.h>
#include <stdint.h>

/* One registration: [lo, hi) (a single object: hi = lo + 1), its element stride, kind, owner. */
struct reg_span {
    uintptr_t lo, hi;
    size_t stride;
    uint32_t kind;
    void *owner;
};

/* Writers (caller holds the registry's writers' lock): 0, or -ENOMEM. */
int reg_index_add(const struct reg_span *s);
/* Removes the entry registered as [s->lo, s->hi) (only lo and hi are read). */
void reg_index_del(const struct reg_span *s);
/* Readers, from any thread, no lock: 1 and *out if p lies in a live entry, else 0. */
int reg_index_find(uintptr_t p, struct reg_span *out);

#endif
