/* SPDX-License-Identifier: BSD-3-Clause */
/* The one lifetime rule for every object NCCL holds (init contexts, listen / send / recv /
 * CollNet comms, memory handles, requests, tuner contexts): it is registered, by address range
 * and kind, while it is live; every entry point looks the pointer up here before reading through
 * it, without a lock (core/reg_index.h); a close unregisters (under the writers' lock), then
 * frees. A pointer to a closed object, to something that was never ours, or to an object of
 * another kind is refused with a WARN, and nothing is read through it. Nothing is kept once an
 * object is freed. */
#ifndef JACCL_CORE_REGISTRY_H
#define JACCL_CORE_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

/* Kinds are bits, so a lookup may accept several (regMr takes any send, recv or coll comm). */
enum jaccl_obj_kind {
    JO_CTX = 1u << 0,
    JO_LISTEN = 1u << 1,
    JO_SEND = 1u << 2,
    JO_RECV = 1u << 3,
    JO_COLL_LISTEN = 1u << 4,
    JO_COLL = 1u << 5,
    JO_MH = 1u << 6,
    JO_P2P_REQ = 1u << 7,
    JO_COLL_REQ = 1u << 8,
    JO_TUNER = 1u << 9,
};

/* Registers `count` objects of `stride` bytes from `base` (an array of requests), or one object
 * (count 1: only its first address is recognised). `owner` is what the lookup hands back
 * (a request's comm, a memory handle's comm). 0, or -ENOMEM. */
int jaccl_reg_add(void *base, size_t stride, unsigned count, uint32_t kind, void *owner);
/* Unregisters the entry registered at `base` (no-op if none). */
void jaccl_reg_del(const void *base);
/* p itself if it is a live object of one of the `kinds` (and *owner, if asked, its owner);
 * else NULL with a WARN naming `what` and what p is. Takes no lock: the data path's check. */
void *jaccl_reg_find(const void *p, uint32_t kinds, const char *what, void **owner);
/* jaccl_reg_find, and if found also unregistered in the same step: what every close and
 * finalize starts with, so two racing closes cannot both free the object. Only for objects
 * registered with count 1. */
void *jaccl_reg_take(const void *p, uint32_t kinds, const char *what, void **owner);
/* Unregisters every object of `kind` owned by `owner` and calls fn on each (outside the lock):
 * a comm's close releases the memory handles NCCL left registered on it. */
void jaccl_reg_drain(const void *owner, uint32_t kind, void (*fn)(void *obj));
/* Live entries (for tests: flat across open/close cycles). */
size_t jaccl_reg_count(void);

#endif
