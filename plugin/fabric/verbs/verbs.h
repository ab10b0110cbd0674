/* SPDX-License-Identifier: BSD-3-Clause */
/* The verbs back end's face: its ops table and the functions behind some of its slots, for the
 * registry (fabric/fabric.c), jaccl-info's RDMA view and the unit tests. The plugin core never
 * includes this header. */
#ifndef JACCL_FABRIC_VERBS_H
#define JACCL_FABRIC_VERBS_H

#include "fabric/fabric.h"
#include "util/sock.h"

extern const struct fab_ops fab_verbs_ops;

/* fab_verbs_ops.dev_link: the IP address (port 0) and prefix of the netdev behind device `dev`'s
 * port. Returns 0, or -EINVAL for an unknown device, -ENODEV when the port has no IP address. */
int fab_verbs_dev_link(int dev, struct jaccl_link *out);

/* fab_verbs_ops.why_unavailable: why the last init() found no usable device (library missing,
 * no device, no active port, nothing left after NCCL_JACCL_HCA); NULL if it found some. */
const char *fab_verbs_why_none(void);

/* fab_verbs_ops.devices_listed: how many RDMA devices libibverbs listed at the last init(),
 * usable or not: when some exist but none is usable, falling back to TCP deserves a WARN. */
int fab_verbs_devices_listed(void);

#endif
