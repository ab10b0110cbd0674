/* SPDX-License-Identifier: BSD-3-Clause */
/* What travels on side-channel sockets before the fabric takes them over. Private to conn_*.c. */
#ifndef JACCL_CORE_CONN_WIRE_H
#define JACCL_CORE_CONN_WIRE_H

#include <stdint.h>

#define JACCL_HELLO_MAGIC 0x4a48454cu /* "JHEL" */
#define JACCL_ACK_MAGIC   0x4a41434bu /* "JACK" */

struct jaccl_hello {
    uint32_t magic;
    uint32_t kind;     /* enum jaccl_handle_kind */
    uint64_t secret;   /* from the listen handle */
    uint64_t conn_id;  /* random per connection: groups the sockets of one connection */
    uint16_t idx;      /* this socket's index */
    uint16_t count;    /* sockets in this connection */
    uint32_t blob_len; /* idx 0 only: fabric blob follows the hello */
    uint32_t tag;      /* caller's tag (CollNet: who is connecting, and for what) */
    uint32_t fabric;   /* fabric id: both ends must run the same back end */
    /* Relayed (the socket reached the listener through a relay): the connector's own address
     * as text, for the listener's log lines; empty when direct. Untrusted: printed only up to
     * its first NUL, unprintable bytes replaced. */
    char origin[48];
};

struct jaccl_ack {
    uint32_t magic;
    uint32_t status; /* 0 = accepted */
    uint32_t blob_len;
    uint32_t pad;
};

#endif
