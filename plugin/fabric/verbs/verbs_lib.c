/* SPDX-License-Identifier: BSD-3-Clause */
/* Loading libibverbs at run time (see verbs_lib.h). The build needs only the headers. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "fabric/verbs/verbs_lib.h"

static struct vb_ibv g_real;
static const struct vb_ibv *g_fake;
static const char *g_why;
static int g_loaded; /* 1 ok, -1 failed */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;

/* Optional symbols: the compat query_port for providers without the extended op, and the GID
 * type query of rdma-core >= 32 (sysfs is read otherwise). */
static int (*g_query_port_compat)(struct ibv_context *, uint8_t, void *);
static int (*g_query_gid_ex)(struct ibv_context *, uint32_t, uint32_t, struct ibv_gid_entry *,
                             uint32_t, size_t);

static int vl_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr)
{
    struct verbs_context *vctx = verbs_get_ctx_op(ctx, query_port);

    if (vctx)
        return vctx->query_port(ctx, port, attr, sizeof(*attr));
    memset(attr, 0, sizeof(*attr));
    return g_query_port_compat ? g_query_port_compat(ctx, port, attr) : -1;
}

static int vl_read_sysfs(struct ibv_context *ctx, const char *what, uint8_t port, int idx,
                         char *buf, size_t len)
{
    char path[512];
    FILE *f;
    size_t n;

    snprintf(path, sizeof(path), "%s/ports/%u/gid_attrs/%s/%d", ctx->device->ibdev_path,
             (unsigned)port, what, idx);
    f = fopen(path, "r");
    if (!f)
        return -1;
    n = fread(buf, 1, len - 1, f);
    fclose(f);
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
        n--;
    buf[n] = '\0';
    return 0;
}

static int vl_gid_is_v2(struct ibv_context *ctx, uint8_t port, int idx)
{
    struct ibv_gid_entry e;
    char buf[64];

    if (g_query_gid_ex && g_query_gid_ex(ctx, port, (uint32_t)idx, &e, 0, sizeof(e)) == 0)
        return e.gid_type == IBV_GID_TYPE_ROCE_V2;
    if (vl_read_sysfs(ctx, "types", port, idx, buf, sizeof(buf)) != 0)
        return -1;
    return strcmp(buf, "RoCE v2") == 0;
}

static int vl_gid_netdev(struct ibv_context *ctx, uint8_t port, int idx, char *buf, size_t len)
{
    if (vl_read_sysfs(ctx, "ndevs", port, idx, buf, len) != 0)
        buf[0] = '\0';
    return 0;
}

static int vl_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    return ibv_post_send(qp, wr, bad);
}

static int vl_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
    return ibv_post_recv(qp, wr, bad);
}

static int vl_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
    return ibv_poll_cq(cq, n, wc);
}

static int vl_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
    return ibv_req_notify_cq(cq, solicited_only);
}

#define VL_SYM(field, name)                               \
    do {                                                  \
        *(void **)&g_real.field = dlsym(h, name);         \
        if (!g_real.field) {                              \
            g_why = "libibverbs.so.1 lacks symbol " name; \
            return -1;                                    \
        }                                                 \
    } while (0)

static int vl_resolve(void *h)
{
    VL_SYM(get_device_list, "ibv_get_device_list");
    VL_SYM(free_device_list, "ibv_free_device_list");
    VL_SYM(get_device_name, "ibv_get_device_name");
    VL_SYM(open_device, "ibv_open_device");
    VL_SYM(close_device, "ibv_close_device");
    VL_SYM(query_device, "ibv_query_device");
    VL_SYM(query_gid, "ibv_query_gid");
    VL_SYM(alloc_pd, "ibv_alloc_pd");
    VL_SYM(dealloc_pd, "ibv_dealloc_pd");
    VL_SYM(reg_mr, "ibv_reg_mr");
    VL_SYM(dereg_mr, "ibv_dereg_mr");
    VL_SYM(create_comp_channel, "ibv_create_comp_channel");
    VL_SYM(destroy_comp_channel, "ibv_destroy_comp_channel");
    VL_SYM(create_cq, "ibv_create_cq");
    VL_SYM(destroy_cq, "ibv_destroy_cq");
    VL_SYM(get_cq_event, "ibv_get_cq_event");
    VL_SYM(ack_cq_events, "ibv_ack_cq_events");
    VL_SYM(create_qp, "ibv_create_qp");
    VL_SYM(modify_qp, "ibv_modify_qp");
    VL_SYM(destroy_qp, "ibv_destroy_qp");
    VL_SYM(wc_status_str, "ibv_wc_status_str");
    *(void **)&g_query_port_compat = dlsym(h, "ibv_query_port");
    *(void **)&g_query_gid_ex = dlsym(h, "_ibv_query_gid_ex");
    g_real.query_port = vl_query_port;
    g_real.gid_is_v2 = vl_gid_is_v2;
    g_real.gid_netdev = vl_gid_netdev;
    g_real.post_send = vl_post_send;
    g_real.post_recv = vl_post_recv;
    g_real.poll_cq = vl_poll_cq;
    g_real.req_notify_cq = vl_req_notify_cq;
    return 0;
}

/* The handle is never closed: providers keep threads and atexit handlers inside it. */
static void vl_load(void)
{
    void *h = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);

    if (!h) {
        g_why = "libibverbs.so.1 not found (rdma-core is not installed)";
        g_loaded = -1;
        return;
    }
    g_loaded = vl_resolve(h) == 0 ? 1 : -1;
}

const struct vb_ibv *vb_ibv_get(const char **why)
{
    const struct vb_ibv *r;

    pthread_mutex_lock(&g_mu);
    if (!g_fake && g_loaded == 0)
        vl_load();
    r = g_fake ? g_fake : g_loaded > 0 ? &g_real : NULL;
    pthread_mutex_unlock(&g_mu);
    if (!r && why)
        *why = g_why;
    return r;
}

void vb_ibv_set(const struct vb_ibv *fake)
{
    pthread_mutex_lock(&g_mu);
    g_fake = fake;
    pthread_mutex_unlock(&g_mu);
}
