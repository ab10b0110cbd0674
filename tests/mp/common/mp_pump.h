/* The raw TCP loopback figure the plugin is compared against: one stream, 4 MiB write()s into
 * a plain blocking socket on 127.0.0.1, read() into a 4 MiB buffer on the other side. */
#ifndef MP_PUMP_H
#define MP_PUMP_H

/* Called by both ranks: `tx` writes for `seconds`, `rx` reads. Returns the receiver's rate in
 * GB/s (1e9 bytes/s) on both ranks, or -1 on failure. Uses the harness's flags and values. */
double mp_pump_tcp(int tx, int rx, double seconds);

#endif
