/* SPDX-License-Identifier: BSD-3-Clause */
/* TCP devices: the IP interfaces NCCL's socket transport would pick, with the same properties
 * (speed from sysfs, guid = index, maxRecvs 1, host memory), plus each one's address so the core
 * can bind listen sockets to it. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "fabric/tcp/tcp.h"
#include "fabric/tcp/tcp_int.h"
#include "util/log.h"
#include "util/param.h"

#define TCP_MAX_DEVS      32
#define TCP_DEFAULT_SPEED 10000 /* Mb/s, NCCL's fallback when sysfs says nothing useful */
#define TCP_MAX_COMMS     65536

struct tcp_dev {
    struct fab_dev_info info;
    struct jaccl_link link;
};

static struct tcp_dev g_dev[TCP_MAX_DEVS];
static int g_ndev;
static char g_why[160] = "init() was not called"; /* why the last init found no device */

static int tcp_family(void)
{
    const char *f = jaccl_param_str(JP_SOCKET_FAMILY);

    if (strcmp(f, "AF_INET") == 0)
        return AF_INET;
    if (strcmp(f, "AF_INET6") == 0)
        return AF_INET6;
    return 0;
}

/* Virtual interfaces (lo, bridges) have no speed file or report -1: assume 10 Gb/s. */
static int tcp_if_speed(const char *ifname)
{
    char path[PATH_MAX];
    int speed = 0;
    FILE *f;

    snprintf(path, sizeof(path), "/sys/class/net/%s/speed", ifname);
    f = fopen(path, "r");
    if (f) {
        if (fscanf(f, "%d", &speed) != 1)
            speed = 0;
        fclose(f);
    }
    return speed > 0 ? speed : TCP_DEFAULT_SPEED;
}

static void tcp_dev_fill(struct tcp_dev *d, int idx, const struct jaccl_ifaddr *ifa)
{
    char path[PATH_MAX];

    memset(d, 0, sizeof(*d));
    snprintf(d->info.name, sizeof(d->info.name), "%.*s", FAB_NAME_MAX - 1, ifa->name);
    snprintf(path, sizeof(path), "/sys/class/net/%s/device", ifa->name);
    d->info.pci_path = realpath(path, NULL); /* NULL for virtual interfaces */
    d->info.guid = (uint64_t)idx;
    d->info.port = 0;
    d->info.speed_mbps = tcp_if_speed(ifa->name);
    d->info.latency_us = 0;
    d->info.max_comms = TCP_MAX_COMMS;
    d->info.max_msg_bytes = TCP_MAX_MSG;
    d->link = (struct jaccl_link){.addr = ifa->addr, .prefix = ifa->prefix};
}

static void tcp_dev_log(void)
{
    char line[1024], addr[80];
    size_t off = 0;

    line[0] = '\0';
    for (int i = 0; i < g_ndev && off < sizeof(line); i++) {
        jaccl_sockaddr_str(&g_dev[i].link.addr, addr, sizeof(addr));
        off += (size_t)snprintf(line + off, sizeof(line) - off, " [%d]%s<%s/%d>", i,
                                g_dev[i].info.name, addr, g_dev[i].link.prefix);
    }
    JINFO(NCCL_INIT | NCCL_NET, "TCP fabric: %d device(s):%s", g_ndev, line);
}

/* NCCL_JACCL_SOCKET_IFNAME, or NCCL's NCCL_SOCKET_IFNAME when that is unset (the param table
 * does the fallback), so a job tuned for NCCL's socket transport picks the same interfaces. */
static const char *tcp_ifname_spec(void)
{
    return jaccl_param_str(JP_SOCKET_IFNAME);
}

int fab_tcp_init(void)
{
    struct jaccl_ifaddr ifs[TCP_MAX_DEVS];
    int n;

    fab_tcp_fini();
    n = jaccl_find_interfaces(tcp_ifname_spec(), tcp_family(), ifs, TCP_MAX_DEVS);
    for (int i = 0; i < n; i++)
        tcp_dev_fill(&g_dev[i], i, &ifs[i]);
    g_ndev = n;
    if (g_ndev == 0) {
        snprintf(g_why, sizeof(g_why), "no usable IP interface (interface list '%s')",
                 tcp_ifname_spec());
        JWARN("TCP fabric: %s", g_why);
    } else {
        snprintf(g_why, sizeof(g_why), "the fabric was closed");
        tcp_dev_log();
    }
    return g_ndev;
}

/* Read by the registry after init, and after the fini that follows an init finding nothing. */
const char *fab_tcp_why_none(void)
{
    return g_ndev > 0 ? NULL : g_why;
}

int fab_tcp_ndevs(void)
{
    return g_ndev;
}

const struct fab_dev_info *fab_tcp_dev_info(int dev)
{
    return dev >= 0 && dev < g_ndev ? &g_dev[dev].info : NULL;
}

int fab_tcp_dev_link(int dev, struct jaccl_link *out)
{
    if (dev < 0 || dev >= g_ndev)
        return -EINVAL;
    *out = g_dev[dev].link;
    return 0;
}

void fab_tcp_fini(void)
{
    for (int i = 0; i < g_ndev; i++) {
        free(g_dev[i].info.pci_path);
        g_dev[i].info.pci_path = NULL;
    }
    g_ndev = 0;
}
