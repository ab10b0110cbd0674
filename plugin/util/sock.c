/* SPDX-License-Identifier: BSD-3-Clause */
/* Socket set-up: addresses, listen, non-blocking connect and accept, tuning. Data transfer is
 * in sock_io.c, interface discovery in sock_ifaces.c. */
#define _GNU_SOURCE /* accept4 */
#include "util/sock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <unistd.h>

/* Enough for the listen queue to absorb every rank of a large job connecting at once (CollNet
 * set-up, NSOCKS lanes per peer) before the accepting thread gets to run. */
#define LISTEN_BACKLOG 256

#ifndef IP_BIND_ADDRESS_NO_PORT /* Linux 4.2; glibc's netinet/in.h may not name it */
#define IP_BIND_ADDRESS_NO_PORT 24
#endif

socklen_t jaccl_sockaddr_len(const union jaccl_sockaddr *a)
{
    switch (a->sa.sa_family) {
    case AF_INET:
        return sizeof(a->sin);
    case AF_INET6:
        return sizeof(a->sin6);
    default:
        return 0;
    }
}

static const char *sockaddr6_str(const struct sockaddr_in6 *s, char *buf, size_t len)
{
    char host[INET6_ADDRSTRLEN] = "?";
    char scope[IF_NAMESIZE + 1] = "";
    inet_ntop(AF_INET6, &s->sin6_addr, host, sizeof(host));
    /* A link-local address is only usable with its interface, so show it. */
    char ifname[IF_NAMESIZE];
    if (s->sin6_scope_id != 0 && if_indextoname(s->sin6_scope_id, ifname) != NULL)
        snprintf(scope, sizeof(scope), "%%%s", ifname);
    snprintf(buf, len, "[%s%s]:%u", host, scope, (unsigned)ntohs(s->sin6_port));
    return buf;
}

const char *jaccl_sockaddr_str(const union jaccl_sockaddr *a, char *buf, size_t len)
{
    if (len == 0)
        return buf;
    if (a->sa.sa_family == AF_INET6)
        return sockaddr6_str(&a->sin6, buf, len);
    if (a->sa.sa_family != AF_INET) {
        snprintf(buf, len, "<family %d>", (int)a->sa.sa_family);
        return buf;
    }
    char host[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &a->sin.sin_addr, host, sizeof(host));
    snprintf(buf, len, "%s:%u", host, (unsigned)ntohs(a->sin.sin_port));
    return buf;
}

const char *jaccl_host_str(const union jaccl_sockaddr *a, char *buf, size_t len)
{
    char host[INET6_ADDRSTRLEN] = "?";
    if (a->sa.sa_family == AF_INET || a->sa.sa_family == AF_INET6)
        inet_ntop(a->sa.sa_family,
                  a->sa.sa_family == AF_INET ? (const void *)&a->sin.sin_addr
                                             : (const void *)&a->sin6.sin6_addr,
                  host, sizeof(host));
    snprintf(buf, len, "%s", host);
    return buf;
}

static int new_socket(const union jaccl_sockaddr *addr)
{
    if (jaccl_sockaddr_len(addr) == 0)
        return -EAFNOSUPPORT;
    int fd = socket(addr->sa.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    return fd < 0 ? -errno : fd;
}

static int fail_close(int fd)
{
    int err = -errno;
    close(fd);
    return err;
}

int jaccl_sock_listen(union jaccl_sockaddr *addr)
{
    int fd = new_socket(addr);
    if (fd < 0)
        return fd;
    /* A restarted job must not fail to bind because of its predecessor's TIME_WAIT sockets. */
    int one = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0)
        return fail_close(fd);
    if (bind(fd, &addr->sa, jaccl_sockaddr_len(addr)) != 0)
        return fail_close(fd);
    if (listen(fd, LISTEN_BACKLOG) != 0)
        return fail_close(fd);
    socklen_t len = sizeof(*addr);
    if (getsockname(fd, &addr->sa, &len) != 0)
        return fail_close(fd);
    return fd;
}

int jaccl_sock_connect_nb(const union jaccl_sockaddr *addr)
{
    return jaccl_sock_connect_from_nb(NULL, addr);
}

/* Binds fd to the local address `from` with the port left to connect(), which can then reuse
 * one port towards different peers (IP_BIND_ADDRESS_NO_PORT). */
static int bind_source(int fd, const union jaccl_sockaddr *from)
{
    union jaccl_sockaddr a = *from;
    a.sin.sin_port = 0; /* same offset in sin and sin6 */
    int one = 1;
    (void)setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
    return bind(fd, &a.sa, jaccl_sockaddr_len(&a)) == 0 ? 0 : -errno;
}

int jaccl_sock_connect_from_nb(const union jaccl_sockaddr *from, const union jaccl_sockaddr *addr)
{
    int fd = new_socket(addr);
    if (fd < 0)
        return fd;
    if (from && from->sa.sa_family == addr->sa.sa_family && bind_source(fd, from) != 0)
        return fail_close(fd);
    /* EINTR: the connection attempt carries on asynchronously, like EINPROGRESS. */
    if (connect(fd, &addr->sa, jaccl_sockaddr_len(addr)) != 0 && errno != EINPROGRESS &&
        errno != EINTR)
        return fail_close(fd);
    return fd;
}

int jaccl_sock_connected(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    int n = poll(&p, 1, 0);
    if (n < 0)
        return errno == EINTR ? 0 : -errno;
    if (n == 0)
        return 0;
    int err = 0;
    socklen_t len = sizeof(err);
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
        return -errno;
    if (err != 0)
        return -err;
    /* SO_ERROR is cleared once read; getpeername keeps answering correctly on later calls. */
    union jaccl_sockaddr peer;
    len = sizeof(peer);
    if (getpeername(fd, &peer.sa, &len) != 0)
        return errno == ENOTCONN ? -ECONNREFUSED : -errno;
    return 1;
}

/* accept(2): errors already pending on the new connection surface here; they concern that
 * connection only, so the listener just tries again later. */
static int accept_transient(int err)
{
    switch (err) {
    case EAGAIN:
#if EWOULDBLOCK != EAGAIN
    case EWOULDBLOCK:
#endif
    case ECONNABORTED:
    case EPROTO:
    case ENETDOWN:
    case ENOPROTOOPT:
    case EHOSTDOWN:
    case ENONET:
    case EHOSTUNREACH:
    case EOPNOTSUPP:
    case ENETUNREACH:
        return 1;
    default:
        return 0;
    }
}

int jaccl_sock_accept_nb(int lfd)
{
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0)
            return fd;
        if (errno == EINTR)
            continue;
        return accept_transient(errno) ? -EAGAIN : -errno;
    }
}

int jaccl_sock_tune(int fd, int sndbuf, int rcvbuf)
{
    int one = 1;
    /* Small control messages must leave at once, not wait for Nagle's coalescing. */
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0)
        return -errno;
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || (!(fl & O_NONBLOCK) && fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0))
        return -errno;
    if (sndbuf > 0 && setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)) != 0)
        return -errno;
    if (rcvbuf > 0 && setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)) != 0)
        return -errno;
    return 0;
}

int jaccl_sock_adopt(int fd)
{
    int dom = 0, fl;
    socklen_t len = sizeof(dom);

    fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
        return -errno;
    if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &len) == 0 && dom != AF_UNIX)
        return jaccl_sock_tune(fd, 0, 0);
    return 0;
}
