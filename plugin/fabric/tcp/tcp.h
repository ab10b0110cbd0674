/* SPDX-License-Identifier: BSD-3-Clause */
/* What the TCP back end offers beyond struct fab_ops. */
#ifndef JACCL_FABRIC_TCP_H
#define JACCL_FABRIC_TCP_H

#include "util/sock.h"

/* The IP address (port 0) of device `dev` as found by init(): the plugin core binds its listen
 * sockets there, for both back ends. Returns 0, or -EINVAL for an unknown device. */
int fab_tcp_dev_addr(int dev, union jaccl_sockaddr *out);

#endif
