/* SPDX-License-Identifier: BSD-3-Clause */
/* Cables between this process's links and a listener's (core/route.h). */
#include "core/route.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/state.h"
#include "util/hostid.h"
#include "util/subnet.h"

#define LINKS_MAX 64

/* Our links in the order they are tried: device pref's first, then the others as listed. */
static int try_order(const int *devs, int nmine, int pref, int *order)
{
    int n = 0;
    if (!devs) {
        for (int i = 0; i < nmine; i++)
            order[i] = i;
        return nmine;
    }
    for (int i = 0; i < nmine; i++)
        if (devs[i] == pref)
            order[n++] = i;
    for (int i = 0; i < nmine; i++)
        if (devs[i] != pref)
            order[n++] = i;
    return n;
}

int jaccl_links_join(const struct jaccl_link *a, const struct jaccl_link *b, int same_host)
{
    if (!same_host && (jaccl_is_loopback(&a->addr) || jaccl_is_loopback(&b->addr)))
        return 0;
    return jaccl_links_meet(a, b);
}

int jaccl_cables_match(const struct jaccl_link *mine, const int *devs, int nmine,
                       const struct jaccl_link *theirs, int ntheirs, int same_host, int pref,
                       struct jaccl_cable *out, int max)
{
    int order[LINKS_MAX], taken[LINKS_MAX] = {0}, n = 0;
    if (nmine > LINKS_MAX)
        nmine = LINKS_MAX;
    if (ntheirs > LINKS_MAX)
        ntheirs = LINKS_MAX;
    try_order(devs, nmine, pref, order);
    int none[LINKS_MAX] = {0};
    if (!devs) /* counting cables between two other ranks: no device of ours */
        devs = none;
    for (int k = 0; k < nmine && n < max; k++) {
        const struct jaccl_link *m = &mine[order[k]];
        for (int j = 0; j < ntheirs; j++) {
            if (taken[j] || !jaccl_links_join(m, &theirs[j], same_host))
                continue;
            taken[j] = 1;
            out[n++] = (struct jaccl_cable){
                    .dev = devs[order[k]], .local = *m, .remote = theirs[j].addr};
            break;
        }
    }
    return n;
}

const union jaccl_sockaddr *jaccl_handle_addr(const struct jaccl_handle *h)
{
    for (int i = 0; i < h->nlinks; i++)
        if (!jaccl_is_loopback(&h->links[i].addr))
            return &h->links[i].addr;
    return &h->links[0].addr;
}

/* The fastest cables only: a 10 GbE management port that also reaches the peer must not take a
 * share of the lanes of a 200 Gb/s cable. */
static void keep_fastest(struct jaccl_route *r)
{
    int fastest = 0, keep = 0;
    for (int i = 0; i < r->ncables; i++)
        if (jaccl_dev_speed(r->cable[i].dev) > fastest)
            fastest = jaccl_dev_speed(r->cable[i].dev);
    for (int i = 0; i < r->ncables; i++)
        if (jaccl_dev_speed(r->cable[i].dev) == fastest)
            r->cable[keep++] = r->cable[i];
    r->ncables = keep;
}

int jaccl_route_direct(const struct jaccl_handle *h, int pref, enum jaccl_route_devs which,
                       struct jaccl_route *r)
{
    struct jaccl_link mine[LINKS_MAX];
    int devs[LINKS_MAX];
    int n = jaccl_links(mine, devs, LINKS_MAX);
    memset(r, 0, sizeof(*r));
    r->ncables = jaccl_cables_match(mine, devs, n, h->links, h->nlinks, h->host == jaccl_host_id(),
                                    pref, r->cable, JACCL_CABLES_MAX);
    int dev = which == JACCL_ROUTE_PREF ? pref : r->ncables ? r->cable[0].dev : -1;
    int keep = 0;
    for (int i = 0; i < r->ncables; i++)
        if (which == JACCL_ROUTE_ANY || r->cable[i].dev == dev)
            r->cable[keep++] = r->cable[i];
    r->ncables = keep;
    keep_fastest(r);
    return keep ? 0 : -ENETUNREACH;
}

const char *jaccl_route_str(const struct jaccl_route *r, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (int i = 0; i < r->ncables && off < len; i++) {
        const struct jaccl_cable *c = &r->cable[i];
        char me[64], to[80];
        jaccl_host_str(&c->local.addr, me, sizeof(me));
        if (r->relayed)
            off += (size_t)snprintf(buf + off, len - off, "%srelayed via %s (%s %s) to %s",
                                    i ? ", " : "", jaccl_host_str(&c->remote, to, sizeof(to)),
                                    jaccl_dev_name(c->dev), me,
                                    jaccl_sockaddr_str(&c->target, (char[80]){0}, 80));
        else
            off += (size_t)snprintf(buf + off, len - off, "%s%s %s > %s", i ? ", " : "",
                                    jaccl_dev_name(c->dev), me,
                                    jaccl_sockaddr_str(&c->remote, to, sizeof(to)));
    }
    return buf;
}
