/* SPDX-License-Identifier: BSD-3-Clause */
/* This network host's identity: the kernel's boot id and the network namespace, so that ranks
 * in different namespaces of one machine (the test topologies) are different hosts, and ranks
 * of one namespace are one. Their loopback addresses reach each other only then. */
#ifndef JACCL_UTIL_HOSTID_H
#define JACCL_UTIL_HOSTID_H

#include <stdint.h>

/* Never 0; the same for every process of this kernel boot and network namespace. */
uint64_t jaccl_host_id(void);

#endif
