/* SPDX-License-Identifier: BSD-3-Clause */
/* Plain socket pump between two ranks, the yardstick for the plugin's bandwidth. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/tcp.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mp_check.h"
#include "mp_data.h"
#include "mp_host.h"
#include "mp_proc.h"
#include "mp_pump.h"
#include "mp_util.h"

#define F_PORT MP_FLAG_HARNESS
#define F_DONE (MP_FLAG_HARNESS + 1)
#define V_RATE (MP_VALUES - 1)

/* Loopback for forked ranks; the wildcard address for one rank per host. */
static int listen_any(int *port)
{
    struct sockaddr_storage a;
    socklen_t len;
    mp_host_listen_addr(&a, &len);
    int fd = socket(a.ss_family, SOCK_STREAM, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, len) != 0 || listen(fd, 1) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *port = ntohs(a.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&a)->sin6_port
                                          : ((struct sockaddr_in *)&a)->sin_port);
    return fd;
}

/* Next chunk of a buffer of `span` bytes, wrapping around. */
static char *chunk_at(char *buf, size_t span, size_t *off)
{
    if (*off + MP_PUMP_CHUNK > span)
        *off = 0;
    char *p = buf + *off;
    *off += MP_PUMP_CHUNK;
    return p;
}

/* Reads until EOF; the clock starts at the first byte, so connection set-up is not counted. */
static double pump_rx(int lfd, char *buf, size_t span)
{
    struct pollfd pl = {.fd = lfd, .events = POLLIN};
    if (lfd < 0 || poll(&pl, 1, mp_scaled(10) * 1000) != 1) { /* the sender may not come */
        if (lfd >= 0)
            close(lfd);
        return -1;
    }
    int fd = accept(lfd, NULL, NULL);
    close(lfd);
    if (fd < 0)
        return -1;
    double t0 = 0;
    unsigned long long bytes = 0;
    size_t off = 0;
    ssize_t r;
    while ((r = read(fd, chunk_at(buf, span, &off), MP_PUMP_CHUNK)) > 0) {
        if (!t0)
            t0 = mp_now();
        else
            bytes += (unsigned long long)r;
    }
    double t = mp_now() - t0;
    close(fd);
    return t0 && t > 0 ? (double)bytes / t / 1e9 : -1;
}

/* Connects to the port rank `rx` published before the barrier that precedes this. */
static int connect_to(int rx)
{
    struct sockaddr_storage a;
    socklen_t len;
    long port = mp_flag_get(rx, F_PORT);
    if (port <= 0)
        return -1;
    mp_host_addr(rx, &a, &len);
    if (a.ss_family == AF_INET6)
        ((struct sockaddr_in6 *)&a)->sin6_port = htons((uint16_t)port);
    else
        ((struct sockaddr_in *)&a)->sin_port = htons((uint16_t)port);
    int fd = socket(a.ss_family, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, len) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

static double pump_tx(int rx, char *buf, size_t span, double seconds)
{
    int fd = connect_to(rx);
    if (fd < 0)
        return -1;
    double end = mp_now() + seconds;
    size_t off = 0;
    while (mp_now() < end)
        if (write(fd, chunk_at(buf, span, &off), MP_PUMP_CHUNK) < 0)
            break;
    close(fd);
    return 0;
}

double mp_pump_tcp(int tx, int rx, double seconds, size_t span)
{
    span = span < MP_PUMP_CHUNK ? MP_PUMP_CHUNK : span;
    char *buf = mp_alloc(span);
    double rate = 0;
    if (!buf)
        return -1;
    mp_fill(buf, span, 1); /* touch it: no page faults inside the timed loop */
    /* The receiver listens before the barrier, so its port travels with it, also between
     * hosts, where flags move only at barriers. */
    int port = 0, lfd = mp_rank == rx ? listen_any(&port) : -1;
    if (mp_rank == rx)
        mp_flag_set(rx, F_PORT, lfd < 0 ? -1 : port);
    mp_barrier();
    if (mp_rank == rx)
        mp_value_set(V_RATE, pump_rx(lfd, buf, span));
    else if (mp_rank == tx)
        rate = pump_tx(rx, buf, span, seconds);
    mp_barrier();
    mp_free(buf, span);
    return rate < 0 ? -1 : mp_value_get(rx, V_RATE);
}

/* Moves exactly len bytes; `busy` polls with MSG_DONTWAIT instead of sleeping in the kernel. */
static int pp_io(int fd, char *buf, size_t len, int is_send, int busy)
{
    int flags = busy ? MSG_DONTWAIT : 0;
    for (size_t done = 0; done < len;) {
        ssize_t r = is_send ? send(fd, buf + done, len - done, flags | MSG_NOSIGNAL)
                            : recv(fd, buf + done, len - done, flags);
        if (r > 0)
            done += (size_t)r;
        else if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
            return -1;
    }
    return 0;
}

/* Rank a sends, rank b echoes; a times it. */
static double pp_loop(int fd, char *buf, size_t size, int iters, int busy, int first)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    double t0 = mp_now();
    for (int i = 0; i < iters; i++) {
        if (first && pp_io(fd, buf, size, 1, busy) != 0)
            return -1;
        if (pp_io(fd, buf, size, 0, busy) != 0)
            return -1;
        if (!first && pp_io(fd, buf, size, 1, busy) != 0)
            return -1;
    }
    return (mp_now() - t0) / iters / 2;
}

double mp_pingpong_tcp(int a, int b, size_t size, int iters, int busy)
{
    char *buf = mp_alloc(size ? size : 1);
    double lat = -1;
    if (!buf)
        return -1;
    memset(buf, 1, size ? size : 1);
    int port = 0, lfd = mp_rank == b ? listen_any(&port) : -1;
    if (mp_rank == b)
        mp_flag_set(b, F_PORT, lfd < 0 ? -1 : port);
    mp_barrier();
    if (mp_rank == a) {
        int fd = connect_to(b);
        lat = fd < 0 ? -1 : pp_loop(fd, buf, size, iters, busy, 1);
        if (fd >= 0)
            close(fd);
        mp_value_set(V_RATE, lat);
    } else if (mp_rank == b && lfd >= 0) {
        struct pollfd pl = {.fd = lfd, .events = POLLIN};
        int fd = poll(&pl, 1, mp_scaled(10) * 1000) == 1 ? accept(lfd, NULL, NULL) : -1;
        if (fd >= 0) {
            pp_loop(fd, buf, size, iters, busy, 0);
            close(fd);
        }
    }
    if (lfd >= 0)
        close(lfd);
    mp_barrier();
    mp_free(buf, size ? size : 1);
    return mp_value_get(a, V_RATE);
}
