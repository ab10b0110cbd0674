/* SPDX-License-Identifier: BSD-3-Clause */
/* NCCL's device-list syntax (NCCL_IB_HCA, NCCL_SOCKET_IFNAME): comma-separated entries,
 * a leading '^' makes the whole list an exclude list, then a leading '=' asks for exact
 * names (otherwise each entry is a prefix), and "name:port" restricts an entry to one port
 * (no ":port" = any port). An empty or NULL spec matches everything. */
#ifndef JACCL_UTIL_IFMATCH_H
#define JACCL_UTIL_IFMATCH_H

#define JACCL_IFLIST_MAX 32

struct jaccl_iflist {
    int exclude; /* leading '^' */
    int exact;   /* leading '=' (after '^' if both) */
    int n;
    struct {
        char name[64];
        int port; /* -1 = any */
    } ent[JACCL_IFLIST_MAX];
};

/* Parses spec (NULL/"" => empty list). Returns 0, or -1 for a malformed spec (bad port). */
int jaccl_iflist_parse(const char *spec, struct jaccl_iflist *out);
/* 1 if (name, port) is selected by the list; port -1 when the device has no ports. An empty
 * list selects everything. */
int jaccl_iflist_match(const struct jaccl_iflist *l, const char *name, int port);

#endif
