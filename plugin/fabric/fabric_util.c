/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers shared by every fabric back end. */
#include <errno.h>

#include "fabric/fabric.h"

enum fab_wc_status fab_wc_status_of(int err)
{
    switch (-err) {
    case 0:
        return FAB_WC_OK;
    case ECANCELED:
        return FAB_WC_FLUSHED;
    case EMSGSIZE:
        return FAB_WC_LEN_ERR;
    case EACCES:
        return FAB_WC_REMOTE_ACCESS;
    case ENOMSG:
        return FAB_WC_NO_RECV;
    case EPROTO:
        return FAB_WC_PEER_PROTO;
    case ECONNRESET:
    case ETIMEDOUT:
    case ECONNABORTED:
    case EPIPE:
    case ECONNREFUSED:
    case EHOSTUNREACH:
    case EHOSTDOWN:
    case ENETUNREACH:
    case ENETDOWN:
    case ENOTCONN:
        return FAB_WC_PEER_LOST;
    default:
        return FAB_WC_LOCAL_ERR;
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
