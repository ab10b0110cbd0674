/* SPDX-License-Identifier: BSD-3-Clause */
/* The raw TCP loopback figure the plugin is compared against: one stream, 4 MiB write()s into
 * a plain blocking socket on 127.0.0.1, 4 MiB read()s on the other side. The chunks cycle
 * through a buffer of `span` bytes on each side: 4 MiB stays in cache, a span as large as the
 * plugin's biggest message costs the same memory traffic that message does. */
#ifndef MP_PUMP_H
#define MP_PUMP_H

#include <stddef.h>

#define MP_PUMP_CHUNK (4u << 20)

/* Called by all ranks: `tx` writes for `seconds`, `rx` reads. Returns the receiver's rate in
 * GB/s (1e9 bytes/s) on every rank, or -1 on failure. Uses the harness's flags and values. */
double mp_pump_tcp(int tx, int rx, double seconds, size_t span);

/* Called by all ranks: a ping-pong of `size` bytes between ranks a (sends first) and b over a
 * plain TCP_NODELAY socket, `iters` round trips; `busy` spins on MSG_DONTWAIT instead of
 * sleeping in recv(). The yardstick for the plugin's latency. Returns one-way seconds on every
 * rank, or -1 on failure. */
double mp_pingpong_tcp(int a, int b, size_t size, int iters, int busy);

#endif
