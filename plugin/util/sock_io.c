/* SPDX-License-Identifier: BSD-3-Clause */
/* Data transfer on non-blocking sockets: the progress functions used by the fabric's event
 * loops, and poll()-based blocking wrappers with a deadline for the few places allowed to block. */
#include "util/sock.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>

#include "util/clock.h"

/* Both an orderly close seen on send (EPIPE) and an abortive one (ECONNRESET: the peer closed
 * with data unread, or died) mean the same to callers: the peer is gone. */
static int peer_gone(int err)
{
    return err == EPIPE || err == ECONNRESET;
}

int jaccl_sock_send_nb(int fd, const void *buf, size_t len, size_t *done)
{
    const char *p = buf;
    while (*done < len) {
        /* MSG_NOSIGNAL: a dead peer must give EPIPE, not kill the process with SIGPIPE. */
        ssize_t n = send(fd, p + *done, len - *done, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            *done += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        return (n < 0 && !peer_gone(errno)) ? -errno : -EPIPE;
    }
    return 1;
}

int jaccl_sock_recv_nb(int fd, void *buf, size_t len, size_t *done)
{
    char *p = buf;
    while (*done < len) {
        ssize_t n = recv(fd, p + *done, len - *done, MSG_DONTWAIT);
        if (n > 0) {
            *done += (size_t)n;
            continue;
        }
        if (n == 0) /* orderly close before the whole message arrived */
            return -EPIPE;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return 0;
        return peer_gone(errno) ? -EPIPE : -errno;
    }
    return 1;
}

typedef int (*sock_progress_fn)(int fd, void *buf, size_t len, size_t *done);

static int wait_all(int fd, void *buf, size_t len, uint64_t deadline_ns, sock_progress_fn fn,
                    short events)
{
    size_t done = 0;
    for (;;) {
        int rc = fn(fd, buf, len, &done);
        if (rc != 0)
            return rc > 0 ? 0 : rc;
        if (jaccl_expired(deadline_ns))
            return -ETIMEDOUT;
        struct pollfd p = {.fd = fd, .events = events};
        /* POLLERR/POLLHUP wake us too; the next progress call turns them into an error. */
        if (poll(&p, 1, jaccl_poll_ms(deadline_ns, jaccl_now_ns(), INT_MAX)) < 0 && errno != EINTR)
            return -errno;
    }
}

/* The send buffer is never written to; the cast only lets send and recv share wait_all. */
static int send_progress(int fd, void *buf, size_t len, size_t *done)
{
    return jaccl_sock_send_nb(fd, buf, len, done);
}

int jaccl_sock_send_all(int fd, const void *buf, size_t len, uint64_t deadline_ns)
{
    return wait_all(fd, (void *)buf, len, deadline_ns, send_progress, POLLOUT);
}

int jaccl_sock_recv_all(int fd, void *buf, size_t len, uint64_t deadline_ns)
{
    return wait_all(fd, buf, len, deadline_ns, jaccl_sock_recv_nb, POLLIN);
}
