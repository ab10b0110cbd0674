/* SPDX-License-Identifier: BSD-3-Clause */
/* Subnet arithmetic over IPv4 and IPv6 addresses (util/subnet.h). */
#include "util/subnet.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The address bytes of a (network order) and how many there are; 0 for another family. */
static size_t addr_bytes(const union jaccl_sockaddr *a, const uint8_t **p)
{
    if (a->sa.sa_family == AF_INET) {
        *p = (const uint8_t *)&a->sin.sin_addr;
        return 4;
    }
    if (a->sa.sa_family == AF_INET6) {
        *p = a->sin6.sin6_addr.s6_addr;
        return 16;
    }
    return 0;
}

int jaccl_mask_prefix(const struct sockaddr *mask)
{
    if (!mask || (mask->sa_family != AF_INET && mask->sa_family != AF_INET6))
        return 0;
    union jaccl_sockaddr m;
    memset(&m, 0, sizeof(m));
    memcpy(&m, mask, mask->sa_family == AF_INET ? sizeof(m.sin) : sizeof(m.sin6));
    const uint8_t *p;
    size_t n = addr_bytes(&m, &p);
    int bits = 0;
    for (size_t i = 0; i < n; i++)
        for (int b = 7; b >= 0; b--) {
            if (!(p[i] >> b & 1))
                return bits;
            bits++;
        }
    return bits;
}

int jaccl_same_subnet(const union jaccl_sockaddr *a, const union jaccl_sockaddr *b, int prefix)
{
    const uint8_t *pa, *pb;
    size_t n = addr_bytes(a, &pa);
    if (n == 0 || a->sa.sa_family != b->sa.sa_family || addr_bytes(b, &pb) != n)
        return 0;
    if (prefix < 0 || (size_t)prefix > 8 * n)
        prefix = (int)(8 * n);
    size_t whole = (size_t)prefix / 8;
    if (memcmp(pa, pb, whole) != 0)
        return 0;
    int rest = prefix % 8;
    uint8_t m = (uint8_t)(0xff << (8 - rest));
    return rest == 0 || ((pa[whole] ^ pb[whole]) & m) == 0;
}

int jaccl_same_host(const union jaccl_sockaddr *a, const union jaccl_sockaddr *b)
{
    return jaccl_same_subnet(a, b, 128);
}

int jaccl_links_meet(const struct jaccl_link *a, const struct jaccl_link *b)
{
    return a->prefix == b->prefix && jaccl_same_subnet(&a->addr, &b->addr, a->prefix);
}

int jaccl_local_prefix(const union jaccl_sockaddr *a)
{
    struct ifaddrs *all;
    if (getifaddrs(&all) != 0)
        return 0;
    int prefix = 0;
    for (const struct ifaddrs *i = all; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != a->sa.sa_family)
            continue;
        union jaccl_sockaddr x;
        memset(&x, 0, sizeof(x));
        memcpy(&x, i->ifa_addr, a->sa.sa_family == AF_INET ? sizeof(x.sin) : sizeof(x.sin6));
        if (jaccl_same_host(&x, a)) {
            prefix = jaccl_mask_prefix(i->ifa_netmask);
            break;
        }
    }
    freeifaddrs(all);
    return prefix;
}

const char *jaccl_link_str(const struct jaccl_link *l, char *buf, size_t len)
{
    char host[INET6_ADDRSTRLEN];
    snprintf(buf, len, "%s/%d", jaccl_host_str(&l->addr, host, sizeof(host)), l->prefix);
    return buf;
}

const char *jaccl_link_net_str(const struct jaccl_link *l, char *buf, size_t len)
{
    union jaccl_sockaddr net = l->addr;
    uint8_t *p =
            net.sa.sa_family == AF_INET ? (uint8_t *)&net.sin.sin_addr : net.sin6.sin6_addr.s6_addr;
    size_t n = net.sa.sa_family == AF_INET ? 4 : 16;
    for (size_t i = 0; i < n; i++) {
        int keep = l->prefix - (int)(8 * i);
        p[i] &= keep >= 8 ? 0xff : keep <= 0 ? 0 : (uint8_t)(0xff << (8 - keep));
    }
    char host[INET6_ADDRSTRLEN] = "?";
    inet_ntop(net.sa.sa_family, p, host, sizeof(host));
    snprintf(buf, len, "%s/%d", host, l->prefix);
    return buf;
}

int jaccl_is_loopback(const union jaccl_sockaddr *a)
{
    if (a->sa.sa_family == AF_INET)
        return (ntohl(a->sin.sin_addr.s_addr) >> 24) == 127;
    return a->sa.sa_family == AF_INET6 && IN6_IS_ADDR_LOOPBACK(&a->sin6.sin6_addr);
}
