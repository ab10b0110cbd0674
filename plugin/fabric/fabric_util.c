/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers shared by every fabric back end. */

#include "fabric/fabric.h"

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
