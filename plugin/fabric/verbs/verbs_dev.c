/* SPDX-License-Identifier: BSD-3-Clause */
/* Verbs devices: one per ACTIVE port (IB or Ethernet link layer) that NCCL_JACCL_HCA selects,
 * with the properties NCCL's IB transport reports (speed = lane rate x width, GPUDirect off), its
 * GID, LID and MTU, and the IP address the plugin core binds the side channel to. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric/verbs/verbs.h"
#include "fabric/verbs/verbs_int.h"
#include "util/ifmatch.h"
#include "util/log.h"
#include "util/param.h"
#include "util/subnet.h"

#define VB_RXE_VENDOR 0xffffff /* what the kernel's soft-RoCE driver reports */

static struct vb_dev g_dev[VB_MAX_DEVS];
static int g_ndev;
static int g_listed; /* devices libibverbs reported at the last init, usable or not */
static struct ibv_device **g_list;
static const struct vb_ibv *g_ibv;
static const char *g_why = "init() was not called";

struct vb_dev *vb_dev_get(int dev)
{
    return dev >= 0 && dev < g_ndev ? &g_dev[dev] : NULL;
}

const char *fab_verbs_why_none(void)
{
    return g_ndev ? NULL : g_why;
}

int fab_verbs_devices_listed(void)
{
    return g_listed;
}

/* The side-channel address: the IPv4 inside the GID, else the GID's netdev, else the first
 * interface NCCL_JACCL_SOCKET_IFNAME picks (NCCL's IB transport uses its OOB interface too). */
static void dev_find_addr(struct vb_dev *d, struct ibv_context *ctx)
{
    struct jaccl_ifaddr ifa;
    char nd[64], spec[80];

    if (d->gid_index >= 0 && vb_gid_ipv4(&d->gid, &d->addr)) {
        d->have_addr = 1;
        d->prefix = jaccl_local_prefix(&d->addr);
        return;
    }
    nd[0] = '\0';
    if (d->gid_index >= 0)
        g_ibv->gid_netdev(ctx, (uint8_t)d->port, d->gid_index, nd, sizeof(nd));
    snprintf(spec, sizeof(spec), "=%s", nd);
    if ((nd[0] && jaccl_find_interfaces(spec, 0, &ifa, 1) == 1) ||
        jaccl_find_interfaces(jaccl_param_str(JP_SOCKET_IFNAME), 0, &ifa, 1) == 1) {
        d->addr = ifa.addr;
        d->prefix = ifa.prefix;
        d->have_addr = 1;
    }
}

static int dev_fill(struct vb_dev *d, struct ibv_device *ibdev, struct ibv_context *ctx,
                    const struct ibv_device_attr *da, int port, const struct ibv_port_attr *pa)
{
    char path[PATH_MAX];
    int forced = (int)jaccl_param_int(JP_GID_INDEX);

    memset(d, 0, sizeof(*d));
    d->ibdev = ibdev;
    snprintf(d->ibname, sizeof(d->ibname), "%s", g_ibv->get_device_name(ibdev));
    d->port = port;
    d->link_layer = pa->link_layer == IBV_LINK_LAYER_ETHERNET ? IBV_LINK_LAYER_ETHERNET
                                                              : IBV_LINK_LAYER_INFINIBAND;
    d->lid = pa->lid;
    d->active_mtu = pa->active_mtu;
    d->soft_roce = da->vendor_id == VB_RXE_VENDOR || strncmp(d->ibname, "rxe", 3) == 0;
    d->gid_index = vb_gid_choose(
            g_ibv, ctx, port, pa->gid_tbl_len,
            d->link_layer == IBV_LINK_LAYER_INFINIBAND && forced < 0 ? 0 : forced, &d->gid);
    if (d->gid_index < 0 && d->link_layer == IBV_LINK_LAYER_ETHERNET) {
        JINFO(NCCL_INIT | NCCL_NET, "verbs fabric: %s:%d has no usable RoCE GID%s, skipped",
              d->ibname, port, forced >= 0 ? " at NCCL_JACCL_GID_INDEX" : "");
        return -1;
    }
    dev_find_addr(d, ctx);
    snprintf(d->info.name, sizeof(d->info.name), "%.48s:%d", g_ibv->get_device_name(ibdev), port);
    snprintf(path, sizeof(path), "%s/device", ibdev->ibdev_path);
    d->info.pci_path = realpath(path, NULL); /* NULL for soft devices such as rxe */
    d->info.guid = da->sys_image_guid;
    d->info.port = port;
    d->info.speed_mbps = vb_port_speed(pa->active_width, pa->active_speed);
    d->info.max_comms = da->max_qp > 0 ? da->max_qp : 1;
    d->info.max_msg_bytes = VB_MAX_MSG;
    return 0;
}

static void dev_scan_one(struct ibv_device *ibdev, const struct jaccl_iflist *hca, int *active)
{
    struct ibv_context *ctx = g_ibv->open_device(ibdev);
    struct ibv_device_attr da;
    const char *name = g_ibv->get_device_name(ibdev);

    if (!ctx) {
        JINFO(NCCL_INIT | NCCL_NET, "verbs fabric: cannot open %s, skipped", name);
        return;
    }
    if (g_ibv->query_device(ctx, &da) == 0) {
        for (int p = 1; p <= da.phys_port_cnt && g_ndev < VB_MAX_DEVS; p++) {
            struct ibv_port_attr pa;

            if (g_ibv->query_port(ctx, (uint8_t)p, &pa) != 0 || pa.state != IBV_PORT_ACTIVE)
                continue;
            if (pa.link_layer != IBV_LINK_LAYER_ETHERNET &&
                pa.link_layer != IBV_LINK_LAYER_INFINIBAND &&
                pa.link_layer != IBV_LINK_LAYER_UNSPECIFIED)
                continue;
            (*active)++;
            if (!jaccl_iflist_match(hca, name, p))
                continue;
            if (dev_fill(&g_dev[g_ndev], ibdev, ctx, &da, p, &pa) == 0)
                g_ndev++;
        }
    }
    g_ibv->close_device(ctx);
}

static void dev_log(void)
{
    char line[1024], a[80];
    size_t off = 0;

    line[0] = '\0';
    for (int i = 0; i < g_ndev && off < sizeof(line); i++) {
        struct vb_dev *d = &g_dev[i];

        if (d->have_addr)
            jaccl_sockaddr_str(&d->addr, a, sizeof(a));
        else
            snprintf(a, sizeof(a), "no IP");
        off += (size_t)snprintf(line + off, sizeof(line) - off,
                                " [%d]%s<%s gid %d %s mtu %d %d Mb/s>", i, d->info.name, a,
                                d->gid_index,
                                d->link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "IB",
                                128 << d->active_mtu, d->info.speed_mbps);
    }
    JINFO(NCCL_INIT | NCCL_NET, "verbs fabric: %d device(s):%s", g_ndev, line);
}

static void dev_scan(void)
{
    struct jaccl_iflist hca;
    int n = 0, active = 0;

    if (jaccl_iflist_parse(jaccl_param_str(JP_HCA), &hca) != 0) {
        JWARN("verbs fabric: malformed NCCL_JACCL_HCA='%s'", jaccl_param_str(JP_HCA));
        g_why = "NCCL_JACCL_HCA is malformed";
        return;
    }
    g_list = g_ibv->get_device_list(&n);
    if (!g_list || n <= 0) {
        g_why = "no RDMA device";
        return;
    }
    g_listed = n;
    for (int i = 0; i < n && g_ndev < VB_MAX_DEVS; i++)
        dev_scan_one(g_list[i], &hca, &active);
    if (g_ndev == 0)
        g_why = active ? "no active RDMA port matches NCCL_JACCL_HCA or has a usable GID"
                       : "no RDMA port is active";
}

int fab_verbs_init(void)
{
    const char *why = NULL;

    fab_verbs_fini();
    g_listed = 0;
    g_ibv = vb_ibv_get(&why);
    if (!g_ibv) {
        g_why = why ? why : "libibverbs could not be loaded";
        return 0;
    }
    dev_scan();
    if (g_ndev)
        dev_log();
    return g_ndev;
}

int fab_verbs_ndevs(void)
{
    return g_ndev;
}

const struct fab_dev_info *fab_verbs_dev_info(int dev)
{
    return dev >= 0 && dev < g_ndev ? &g_dev[dev].info : NULL;
}

int fab_verbs_dev_link(int dev, struct jaccl_link *out)
{
    if (dev < 0 || dev >= g_ndev)
        return -EINVAL;
    if (!g_dev[dev].have_addr)
        return -ENODEV;
    *out = (struct jaccl_link){.addr = g_dev[dev].addr, .prefix = g_dev[dev].prefix};
    return 0;
}

void fab_verbs_fini(void)
{
    for (int i = 0; i < g_ndev; i++) {
        free(g_dev[i].info.pci_path);
        g_dev[i].info.pci_path = NULL;
    }
    g_ndev = 0;
    if (g_list && g_ibv)
        g_ibv->free_device_list(g_list);
    g_list = NULL; /* g_why stays: the fallback INFO line reads it after fini */
}
