/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers shared by every fabric back end. */
#include <errno.h>
#include <linux/sockios.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fabric/ep_base.h"
#include "fabric/fabric.h"
#include "util/clock.h"

/* close() on a socket with unread bytes resets the connection, and a reset throws away what
 * our kernel still holds for the peer: data a send already completed on (TCP), or the last
 * acknowledgements (verbs). Reading what has arrived first (the peer's heartbeats, mostly)
 * lets the close send a FIN behind that data instead. Bounded: a peer still streaming may
 * get its reset (ep_linger beforehand is what makes that harmless). */
void fab_sock_close_drained(int fd)
{
    char sink[4096];
    ssize_t n;
    int budget = 256; /* 1 MiB at most */

    if (fd < 0)
        return;
    do {
        n = recv(fd, sink, sizeof(sink), MSG_DONTWAIT);
    } while ((n > 0 || (n < 0 && errno == EINTR)) && --budget > 0);
    close(fd);
}

/* Bytes the peer has not acknowledged yet (the FIN counts one); 0 where that cannot be known
 * or does not matter: a UNIX socket's bytes are in the peer's queue the moment they are sent. */
static long sock_unacked(int fd)
{
    int dom = 0, out = 0;
    socklen_t len = sizeof(dom);

    if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &len) != 0 || dom == AF_UNIX)
        return 0;
    return ioctl(fd, SIOCOUTQ, &out) == 0 ? out : 0;
}

static long sock_unacked_sum(const int *fds, int n)
{
    long total = 0;

    for (int i = 0; i < n; i++)
        total += fds[i] >= 0 ? sock_unacked(fds[i]) : 0;
    return total;
}

void fab_sock_wait_acked(const int *fds, int n, uint64_t limit_ns, const struct fab_ep_base *b)
{
    uint64_t start = jaccl_mono_ns(), moved = start, now;
    struct timespec nap = {0, 1000000};
    long left, last = -1;

    while (fab_ep_base_status(b) == FAB_WC_OK && (left = sock_unacked_sum(fds, n)) > 0) {
        now = jaccl_mono_ns();
        if (left != last)
            moved = now;
        last = left;
        if (now - start >= (limit_ns ? limit_ns : FAB_LINGER_NS) ||
            now - moved >= FAB_LINGER_STALL_NS)
            return;            /* the peer stopped reading: ep_close drops the rest */
        nanosleep(&nap, NULL); /* acknowledgements raise no event to wait for */
        nap.tv_nsec = nap.tv_nsec < 8000000 ? nap.tv_nsec * 2 : nap.tv_nsec;
    }
}

const char *fab_wc_status_str(enum fab_wc_status s)
{
    switch (s) {
    case FAB_WC_OK:
        return "success";
    case FAB_WC_FLUSHED:
        return "flushed (endpoint in error or closed)";
    case FAB_WC_LEN_ERR:
        return "message longer than the posted receive";
    case FAB_WC_REMOTE_ACCESS:
        return "remote access error (write outside a registration)";
    case FAB_WC_NO_RECV:
        return "message arrived with no receive posted";
    case FAB_WC_PEER_LOST:
        return "peer lost";
    case FAB_WC_LOCAL_ERR:
        return "local error";
    case FAB_WC_PEER_PROTO:
        return "protocol violation by the peer";
    }
    return "unknown status";
}
