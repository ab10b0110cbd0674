/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers shared by every fabric back end. */
#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fabric/fabric.h"

/* close() on a socket with unread bytes resets the connection, and a reset throws away what
 * our kernel still holds for the peer: data a send already completed on (TCP), or the last
 * acknowledgements (verbs). Reading what has arrived first (the peer's heartbeats, mostly)
 * lets the close send a FIN behind that data instead. Bounded: a peer still streaming may
 * get its reset. */
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
