/* SPDX-License-Identifier: BSD-3-Clause */
/* Process-wide plugin state: the chosen fabric, its devices and their refcounted domains.
 * Every function here takes the state's lock; none is for the data path, which reaches the
 * fabric through the objects it holds (fabric.h: each carries its ops). */
#ifndef JACCL_CORE_STATE_H
#define JACCL_CORE_STATE_H

#include <stdint.h>

#include "fabric/fabric.h"
#include "nccl_abi/nccl_types.h"
#include "util/sock.h"

/* The fabric the registry chose at the first init; NULL before (and after the last release).
 * Why it was chosen: fab_why(). For tools and logs: the plugin asks jaccl_dev_ops. */
const struct fab_ops *jaccl_fabric(void);
/* The back end serving device dev (the registry's choice, taken once when a listener or a
 * domain is first opened on it), or NULL for a device the open fabric does not have. */
const struct fab_ops *jaccl_dev_ops(int dev);
int jaccl_ndevs(void);
/* The device's name ("eth1", "mlx5_0:1"), or "?" for a device the open fabric does not have;
 * valid while the fabric is open. */
const char *jaccl_dev_name(int dev);
/* The device's link speed in Mb/s (0 for a device the open fabric does not have). */
int jaccl_dev_speed(int dev);
/* Device dev as a link: the address its side channel binds to, and its subnet (dev_link). */
int jaccl_dev_link(int dev, struct jaccl_link *out);
/* Every device that has an address, as links: up to max of them into links[] with each one's
 * device number in devs[] (NULL: not wanted). Returns the count. */
int jaccl_links(struct jaccl_link *links, int *devs, int max);

/* Shared per-device domain; every get is paired with a put. */
struct fab_domain *jaccl_domain_get(int dev);
void jaccl_domain_put(int dev);

/* A listen comm's hold on the fabric (comms hold it through their domain): the fabric stays
 * open until the last init context, hold and domain are gone. hold: 0, or -1 if no fabric. */
int jaccl_state_hold(void);
void jaccl_state_put(void);

/* Liveness deadline (NCCL_JACCL_TIMEOUT) in ns. */
uint64_t jaccl_timeout_ns(void);

/* The trafficClass NCCL passed to init for this context (jaccl_comm_config), or -1 when it
 * passed none (older tables, CollNet, NCCL_NET_TRAFFIC_CLASS_UNDEF). ctx may be NULL. */
int jaccl_ctx_traffic_class(const void *ctx);
/* Sets attr->tclass and attr->sl for a connection made through a context whose trafficClass is
 * ctx_tc: NCCL_JACCL_TC / NCCL_JACCL_SL (or NCCL_IB_TC / NCCL_IB_SL) first, else ctx_tc
 * (for the service level only when it fits in 4 bits), else 0 = the system default. */
void jaccl_qos_fill(int ctx_tc, struct fab_ep_attr *attr);

#endif
