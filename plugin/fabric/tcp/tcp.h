/* SPDX-License-Identifier: BSD-3-Clause */
/* The TCP back end's face: its ops table, for the registry (fabric/fabric.c) and for the tests
 * and tools that drive this back end alone. The plugin core never includes this header. */
#ifndef JACCL_FABRIC_TCP_H
#define JACCL_FABRIC_TCP_H

#include "fabric/fabric.h"
#include "util/sock.h"

extern const struct fab_ops fab_tcp_ops;

/* fab_tcp_ops.dev_link: the IP address (port 0) and prefix of device `dev` as found by init().
 * Returns 0, or -EINVAL for an unknown device. */
int fab_tcp_dev_link(int dev, struct jaccl_link *out);

#endif
