/* SPDX-License-Identifier: BSD-3-Clause */
/* The verbs calls the back end makes, as one table of function pointers.
 *
 * libibverbs is dlopen'ed at first use (so the plugin loads where rdma-core is absent) and every
 * non-inline symbol is resolved into this table. The data-path calls that verbs.h implements
 * inline through the context's ops (post_send, post_recv, poll_cq, req_notify_cq) get entries
 * too, filled with small wrappers: the table is then the single seam the unit tests replace with
 * their fake verbs. */
#ifndef JACCL_FABRIC_VERBS_LIB_H
#define JACCL_FABRIC_VERBS_LIB_H

#include <infiniband/verbs.h>

/* One entry per ibv_* call, named without the prefix; held as `ibv` (dom->ibv, ep->ibv). */
struct vb_ibv {
    struct ibv_device **(*get_device_list)(int *n);
    void (*free_device_list)(struct ibv_device **list);
    const char *(*get_device_name)(struct ibv_device *dev);
    struct ibv_context *(*open_device)(struct ibv_device *dev);
    int (*close_device)(struct ibv_context *ctx);
    int (*query_device)(struct ibv_context *ctx, struct ibv_device_attr *attr);
    int (*query_port)(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr);
    int (*query_gid)(struct ibv_context *ctx, uint8_t port, int idx, union ibv_gid *gid);
    /* 1 = RoCE v2, 0 = IB / RoCE v1, -1 = unknown */
    int (*gid_is_v2)(struct ibv_context *ctx, uint8_t port, int idx);
    /* Name of the netdev behind a GID entry ("" when none), for the side-channel address. */
    int (*gid_netdev)(struct ibv_context *ctx, uint8_t port, int idx, char *buf, size_t len);
    struct ibv_pd *(*alloc_pd)(struct ibv_context *ctx);
    int (*dealloc_pd)(struct ibv_pd *pd);
    struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t len, int access);
    int (*dereg_mr)(struct ibv_mr *mr);
    struct ibv_comp_channel *(*create_comp_channel)(struct ibv_context *ctx);
    int (*destroy_comp_channel)(struct ibv_comp_channel *ch);
    struct ibv_cq *(*create_cq)(struct ibv_context *ctx, int cqe, void *cq_ctx,
                                struct ibv_comp_channel *ch, int vector);
    int (*destroy_cq)(struct ibv_cq *cq);
    int (*get_cq_event)(struct ibv_comp_channel *ch, struct ibv_cq **cq, void **cq_ctx);
    void (*ack_cq_events)(struct ibv_cq *cq, unsigned int n);
    struct ibv_qp *(*create_qp)(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
    int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask);
    int (*destroy_qp)(struct ibv_qp *qp);
    const char *(*wc_status_str)(enum ibv_wc_status st);
    /* inline in verbs.h: wrappers */
    int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
    int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
    int (*poll_cq)(struct ibv_cq *cq, int n, struct ibv_wc *wc);
    int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
};

/* The table, loading libibverbs.so.1 on the first call; NULL (and *why set) when it cannot be
 * loaded or misses a symbol. Thread-safe. */
const struct vb_ibv *vb_ibv_get(const char **why);
/* Tests: use `fake` instead of the real library (NULL goes back to the real one). */
void vb_ibv_set(const struct vb_ibv *fake);

#endif
