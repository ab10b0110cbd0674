/* SPDX-License-Identifier: BSD-3-Clause */
/* IP interface discovery, following NCCL's ncclFindInterfaces (src/misc/socket.cc) so that
 * jaccl picks the same interfaces NCCL's socket transport would, with the same spec. */
#include "util/sock.h"

#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <string.h>

#include "util/ifmatch.h"
#include "util/log.h"
#include "util/subnet.h"

struct if_filter {
    struct jaccl_iflist list;
    int family;   /* AF_INET, AF_INET6 or 0 */
    int allow_ll; /* IPv6 link-local allowed: the interface was asked for by name */
};

/* Lower is better: one address per interface, IPv4 first, then a routable IPv6 address,
 * then a link-local one. */
static int addr_rank(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return 0;
    const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
    return IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr) ? 2 : 1;
}

static int usable(const struct ifaddrs *ifa, const struct if_filter *f)
{
    const struct sockaddr *sa = ifa->ifa_addr;
    if (sa == NULL || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6))
        return 0;
    /* Down or without carrier: connections through it would just time out. */
    if ((ifa->ifa_flags & (IFF_UP | IFF_RUNNING)) != (IFF_UP | IFF_RUNNING))
        return 0;
    if (f->family != 0 && sa->sa_family != f->family)
        return 0;
    if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a6 = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        /* ::1 is never useful: lo also has 127.0.0.1, which other ranks cannot reach either. */
        if (IN6_IS_ADDR_LOOPBACK(a6))
            return 0;
        if (IN6_IS_ADDR_LINKLOCAL(a6) && !f->allow_ll)
            return 0;
    }
    return jaccl_iflist_match(&f->list, ifa->ifa_name, -1);
}

static void store(struct jaccl_ifaddr *e, const struct ifaddrs *ifa)
{
    memset(e, 0, sizeof(*e));
    strncpy(e->name, ifa->ifa_name, sizeof(e->name) - 1);
    if (ifa->ifa_addr->sa_family == AF_INET)
        e->addr.sin = *(const struct sockaddr_in *)ifa->ifa_addr;
    else
        e->addr.sin6 = *(const struct sockaddr_in6 *)ifa->ifa_addr;
    e->addr.sin.sin_port = 0; /* same offset in sin and sin6 */
    e->prefix = jaccl_mask_prefix(ifa->ifa_netmask);
}

static int find_name(const struct jaccl_ifaddr *out, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(out[i].name, name) == 0)
            return i;
    return -1;
}

/* Interfaces in getifaddrs order of first appearance, each with its best address. */
static int scan(const struct if_filter *f, struct jaccl_ifaddr *out, int max)
{
    struct ifaddrs *all;
    if (getifaddrs(&all) != 0) {
        JWARN("getifaddrs failed: %s", strerror(errno));
        return 0;
    }
    int n = 0;
    for (const struct ifaddrs *ifa = all; ifa != NULL; ifa = ifa->ifa_next) {
        if (!usable(ifa, f))
            continue;
        int i = find_name(out, n, ifa->ifa_name);
        if (i < 0 && n < max)
            store(&out[n++], ifa);
        else if (i >= 0 && addr_rank(ifa->ifa_addr) < addr_rank(&out[i].addr.sa))
            store(&out[i], ifa);
    }
    freeifaddrs(all);
    return n;
}

static int scan_spec(const char *spec, int family, int user, struct jaccl_ifaddr *out, int max)
{
    struct if_filter f = {.family = family};
    if (jaccl_iflist_parse(spec, &f.list) != 0) {
        JWARN("malformed interface list \"%s\"; no interface selected", spec);
        return 0;
    }
    /* A link-local address needs its interface to be named; a guess could pick the wrong one. */
    f.allow_ll = user && !f.list.exclude && f.list.n > 0;
    return scan(&f, out, max);
}

int jaccl_find_interfaces(const char *spec, int family, struct jaccl_ifaddr *out, int max)
{
    if (max <= 0)
        return 0;
    if (spec != NULL && spec[0] != '\0')
        return scan_spec(spec, family, 1, out, max);
    /* NCCL's automatic order (minus its NCCL_COMM_ID subnet step, jaccl has no such id):
     * IPoIB first, then any real interface, and loopback only on a machine with nothing else. */
    static const char *const fallbacks[] = {"ib", "^docker,lo,virbr", "docker", "lo", "virbr"};
    for (size_t i = 0; i < sizeof(fallbacks) / sizeof(fallbacks[0]); i++) {
        int n = scan_spec(fallbacks[i], family, 0, out, max);
        if (n > 0)
            return n;
    }
    return 0;
}
