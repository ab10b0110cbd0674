/* SPDX-License-Identifier: BSD-3-Clause */
/* What the verbs back end offers beyond struct fab_ops. */
#ifndef JACCL_FABRIC_VERBS_H
#define JACCL_FABRIC_VERBS_H

#include "fabric/fabric.h"
#include "util/sock.h"

extern const struct fab_ops fab_verbs_ops;

/* The IP address (port 0) of the netdev behind device `dev`'s port: the plugin core binds its
 * side-channel listen sockets there. Returns 0, or -EINVAL for an unknown device, -ENODEV when
 * the port has no IP address. */
int fab_verbs_dev_addr(int dev, union jaccl_sockaddr *out);

/* Why the last init() found no usable device (library missing, no device, no active port,
 * nothing left after NCCL_JACCL_HCA), for the fallback INFO line; NULL if it found some. */
const char *fab_verbs_why_none(void);

/* How many RDMA devices libibverbs listed at the last init(), usable or not: when some exist
 * but none is usable, falling back to TCP deserves a WARN, not an INFO. */
int fab_verbs_devices_listed(void);

#endif
