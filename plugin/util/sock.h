/* SPDX-License-Identifier: BSD-3-Clause */
/* Small socket helpers shared by the side channel and the TCP fabric. All sockets are
 * close-on-exec; "nb" functions never block. */
#ifndef JACCL_UTIL_SOCK_H
#define JACCL_UTIL_SOCK_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

union jaccl_sockaddr {
    struct sockaddr sa;
    struct sockaddr_in sin;
    struct sockaddr_in6 sin6;
};

/* An IP interface, as NCCL's socket transport enumerates them. */
struct jaccl_ifaddr {
    char name[64];
    union jaccl_sockaddr addr; /* port 0 */
    int prefix;                /* the subnet's prefix length (from the netmask) */
};

/* A link: an address of this host, or a peer's, with the prefix length of its subnet. Two
 * links whose addresses share that subnet are joined by a cable or a switch (util/subnet.h).
 * prefix 0 = unknown: the link is taken to reach every address of its family, as a switched
 * network would. */
struct jaccl_link {
    union jaccl_sockaddr addr;
    int prefix;
};

/* Interfaces chosen like NCCL's ncclFindInterfaces: `spec` in NCCL_SOCKET_IFNAME syntax;
 * family = AF_INET, AF_INET6 or 0 (both). Without a spec: ib* first (as NCCL), then
 * everything but lo/docker/virbr; if that finds nothing, docker*, then lo, then virbr*.
 * An interface named explicitly in spec is allowed even if it is lo. One entry per
 * interface name (first address of the family preference: IPv4 before IPv6).
 * Returns the count written (<= max). */
int jaccl_find_interfaces(const char *spec, int family, struct jaccl_ifaddr *out, int max);

/* "a.b.c.d:port" / "[v6]:port", into buf; returns buf. */
const char *jaccl_sockaddr_str(const union jaccl_sockaddr *a, char *buf, size_t len);
socklen_t jaccl_sockaddr_len(const union jaccl_sockaddr *a);
/* The address alone ("10.0.0.1", "fe80::1"), into buf; returns buf. */
const char *jaccl_host_str(const union jaccl_sockaddr *a, char *buf, size_t len);

/* Listening socket bound to addr with port 0 (ephemeral); the bound address (with its port) is
 * written back to *addr. Non-blocking. Returns fd or -errno. */
int jaccl_sock_listen(union jaccl_sockaddr *addr);
/* Non-blocking connect started; returns fd or -errno. Completion: jaccl_sock_connected(). */
int jaccl_sock_connect_nb(const union jaccl_sockaddr *addr);
/* The same from a given local address (port 0: any), so that the connection leaves by that
 * address's interface; from = NULL: the kernel chooses. */
int jaccl_sock_connect_from_nb(const union jaccl_sockaddr *from, const union jaccl_sockaddr *addr);
/* 1 connected, 0 still in progress, -errno failed. */
int jaccl_sock_connected(int fd);
/* accept4 non-blocking; returns fd, -EAGAIN when nothing pending, or -errno. */
int jaccl_sock_accept_nb(int lfd);
/* TCP_NODELAY, keep non-blocking, optional buffer sizes (0 = leave the kernel's autotuning). */
int jaccl_sock_tune(int fd, int sndbuf, int rcvbuf);
/* Takes over a connected socket handed in by the caller: non-blocking always, plus
 * jaccl_sock_tune(fd, 0, 0) (TCP_NODELAY) unless it is an AF_UNIX socket (tests hand in
 * socketpairs). Returns 0 or -errno. */
int jaccl_sock_adopt(int fd);

/* Progress a non-blocking transfer of exactly len bytes; *done counts bytes moved so far.
 * Returns 1 when complete, 0 would block, -errno on error, -EPIPE on orderly close. */
int jaccl_sock_send_nb(int fd, const void *buf, size_t len, size_t *done);
int jaccl_sock_recv_nb(int fd, void *buf, size_t len, size_t *done);

/* Blocking with an absolute deadline (jaccl_now_ns scale), using poll(): 0, -ETIMEDOUT,
 * -EPIPE (peer closed) or -errno. Nothing in the plugin blocks on a socket; only the unit tests
 * use these. */
int jaccl_sock_send_all(int fd, const void *buf, size_t len, uint64_t deadline_ns);
int jaccl_sock_recv_all(int fd, void *buf, size_t len, uint64_t deadline_ns);

#endif
