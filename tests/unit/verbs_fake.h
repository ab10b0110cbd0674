/* SPDX-License-Identifier: BSD-3-Clause */
/* Fake verbs for the verbs back end's unit tests: a struct vb_ibv whose entries act on in-memory
 * devices, ports and GID tables, record every QP transition and posted work request, and hand
 * back the CQEs a test queued. Included by the test_verbs_*.c files (each test is one file). */
#ifndef TEST_VERBS_FAKE_H
#define TEST_VERBS_FAKE_H

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "fabric/verbs/verbs_int.h"

#define FK_MAX_DEVS  4
#define FK_MAX_PORTS 2
#define FK_MAX_GIDS  8
#define FK_MAX_LOG   512
/* Each test uses some of these helpers. */
#define FK_FN static __attribute__((unused))

struct fk_dev {
    struct ibv_device dev; /* first: the library hands out &fk_dev.dev */
    const char *name;
    int nports;
    struct ibv_port_attr port[FK_MAX_PORTS];
    union ibv_gid gid[FK_MAX_PORTS][FK_MAX_GIDS];
    int v2[FK_MAX_PORTS][FK_MAX_GIDS];
    uint64_t guid;
};

struct fk_modify {
    uint32_t qpn;
    enum ibv_qp_state state;
    int mask;
    struct ibv_qp_attr attr;
};

struct fk_sent {
    uint32_t qpn;
    uint32_t imm; /* host order */
    uint64_t raddr, laddr;
    uint32_t len, rkey;
    int signaled; /* asked for a CQE */
};

static struct fk_dev fk_dev[FK_MAX_DEVS];
static int fk_ndev;
static struct ibv_device *fk_list[FK_MAX_DEVS + 1];
static struct fk_modify fk_mod[FK_MAX_LOG];
static int fk_nmod;
static enum ibv_qp_state fk_fail_state = (enum ibv_qp_state) - 1; /* modify_qp to it fails */
static struct fk_sent fk_sent[FK_MAX_LOG];
static int fk_nsent;
static int fk_nrecv;
static int fk_nreg, fk_ndereg;
static struct ibv_wc fk_wc[FK_MAX_LOG];
static int fk_nwc, fk_wc_head;
static uint32_t fk_next_qpn = 0x100;

FK_FN void fk_reset(void)
{
    memset(fk_dev, 0, sizeof(fk_dev));
    memset(fk_list, 0, sizeof(fk_list));
    fk_ndev = fk_nmod = fk_nsent = fk_nrecv = fk_nwc = fk_wc_head = fk_nreg = fk_ndereg = 0;
    fk_fail_state = (enum ibv_qp_state) - 1;
}

/* A device with `nports` ports, all ACTIVE, 1X FDR10, MTU 1024, RoCE, GID 0 link-local and
 * GID 1 ::ffff:10.0.0.<n>, both RoCE v2. */
FK_FN struct fk_dev *fk_add_dev(const char *name, int nports)
{
    struct fk_dev *d = &fk_dev[fk_ndev];

    d->name = name;
    d->nports = nports;
    d->guid = 0x1000 + (uint64_t)fk_ndev;
    snprintf(d->dev.name, sizeof(d->dev.name), "%s", name);
    snprintf(d->dev.ibdev_path, sizeof(d->dev.ibdev_path), "/nonexistent/%s", name);
    for (int p = 0; p < nports; p++) {
        struct ibv_port_attr *a = &d->port[p];

        a->state = IBV_PORT_ACTIVE;
        a->link_layer = IBV_LINK_LAYER_ETHERNET;
        a->active_mtu = IBV_MTU_1024;
        a->active_width = 1;
        a->active_speed = 8;
        a->gid_tbl_len = FK_MAX_GIDS;
        d->gid[p][0].raw[0] = 0xfe;
        d->gid[p][0].raw[1] = 0x80;
        d->gid[p][0].raw[15] = 1;
        d->gid[p][1].raw[10] = d->gid[p][1].raw[11] = 0xff;
        d->gid[p][1].raw[12] = 10;
        d->gid[p][1].raw[15] = (uint8_t)(fk_ndev + 1);
        d->v2[p][0] = d->v2[p][1] = 1;
    }
    fk_list[fk_ndev++] = &d->dev;
    return d;
}

FK_FN struct fk_dev *fk_of(struct ibv_context *ctx)
{
    return (struct fk_dev *)ctx->device;
}

FK_FN struct ibv_device **fk_get_device_list(int *n)
{
    *n = fk_ndev;
    return fk_list;
}
FK_FN void fk_free_device_list(struct ibv_device **l) {}
FK_FN const char *fk_get_device_name(struct ibv_device *d)
{
    return ((struct fk_dev *)d)->name;
}
FK_FN struct ibv_context *fk_open_device(struct ibv_device *d)
{
    struct ibv_context *c = calloc(1, sizeof(*c));

    c->device = d;
    return c;
}
static int fk_close_device(struct ibv_context *c)
{
    free(c);
    return 0;
}
static int fk_query_device(struct ibv_context *c, struct ibv_device_attr *a)
{
    memset(a, 0, sizeof(*a));
    a->phys_port_cnt = (uint8_t)fk_of(c)->nports;
    a->sys_image_guid = fk_of(c)->guid;
    a->max_qp = 1000;
    return 0;
}
static int fk_query_port(struct ibv_context *c, uint8_t port, struct ibv_port_attr *a)
{
    if (port < 1 || port > fk_of(c)->nports)
        return EINVAL;
    *a = fk_of(c)->port[port - 1];
    return 0;
}
static int fk_query_gid(struct ibv_context *c, uint8_t port, int idx, union ibv_gid *g)
{
    if (idx < 0 || idx >= FK_MAX_GIDS)
        return -1;
    *g = fk_of(c)->gid[port - 1][idx];
    return 0;
}
static int fk_gid_is_v2(struct ibv_context *c, uint8_t port, int idx)
{
    return fk_of(c)->v2[port - 1][idx];
}
static int fk_gid_netdev(struct ibv_context *c, uint8_t port, int idx, char *buf, size_t len)
{
    buf[0] = '\0';
    return 0;
}
FK_FN struct ibv_pd *fk_alloc_pd(struct ibv_context *c)
{
    struct ibv_pd *pd = calloc(1, sizeof(*pd));

    pd->context = c;
    return pd;
}
static int fk_dealloc_pd(struct ibv_pd *pd)
{
    free(pd);
    return 0;
}
FK_FN struct ibv_mr *fk_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access)
{
    static uint32_t key = 0x500;
    struct ibv_mr *mr = calloc(1, sizeof(*mr));

    fk_nreg++;
    mr->addr = addr;
    mr->length = len;
    mr->lkey = mr->rkey = key++;
    return mr;
}
static int fk_dereg_mr(struct ibv_mr *mr)
{
    fk_ndereg++;
    free(mr);
    return 0;
}
FK_FN struct ibv_comp_channel *fk_create_comp_channel(struct ibv_context *c)
{
    struct ibv_comp_channel *ch = calloc(1, sizeof(*ch));

    ch->context = c;
    ch->fd = eventfd(0, EFD_NONBLOCK);
    return ch;
}
static int fk_destroy_comp_channel(struct ibv_comp_channel *ch)
{
    close(ch->fd);
    free(ch);
    return 0;
}
FK_FN struct ibv_cq *fk_create_cq(struct ibv_context *c, int cqe, void *cq_ctx,
                                  struct ibv_comp_channel *ch, int vector)
{
    struct ibv_cq *cq = calloc(1, sizeof(*cq));

    cq->context = c;
    cq->cq_context = cq_ctx;
    cq->cqe = cqe;
    return cq;
}
static int fk_destroy_cq(struct ibv_cq *cq)
{
    free(cq);
    return 0;
}
static int fk_get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq, void **ctx)
{
    errno = EAGAIN;
    return -1;
}
FK_FN void fk_ack_cq_events(struct ibv_cq *cq, unsigned int n) {}
FK_FN struct ibv_qp *fk_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *a)
{
    struct ibv_qp *qp = calloc(1, sizeof(*qp));

    qp->qp_num = fk_next_qpn++;
    qp->qp_type = a->qp_type;
    qp->state = IBV_QPS_RESET;
    return qp;
}
static int fk_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
    if (fk_nmod < FK_MAX_LOG)
        fk_mod[fk_nmod++] = (struct fk_modify){qp->qp_num, a->qp_state, mask, *a};
    if (a->qp_state == fk_fail_state) {
        errno = EINVAL;
        return EINVAL;
    }
    qp->state = a->qp_state;
    return 0;
}
static int fk_destroy_qp(struct ibv_qp *qp)
{
    free(qp);
    return 0;
}
FK_FN const char *fk_wc_status_str(enum ibv_wc_status st)
{
    return st == IBV_WC_RETRY_EXC_ERR ? "transport retry counter exceeded" : "fake status";
}
static int fk_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    for (; wr; wr = wr->next) {
        struct fk_sent *s = &fk_sent[fk_nsent++ % FK_MAX_LOG];

        s->qpn = qp->qp_num;
        s->imm = ntohl(wr->imm_data);
        s->raddr = wr->wr.rdma.remote_addr;
        s->rkey = wr->wr.rdma.rkey;
        s->len = wr->num_sge ? wr->sg_list[0].length : 0;
        s->laddr = wr->num_sge ? wr->sg_list[0].addr : 0;
        s->signaled = !!(wr->send_flags & IBV_SEND_SIGNALED);
    }
    return 0;
}
static int fk_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
    for (; wr; wr = wr->next)
        fk_nrecv++;
    return 0;
}
static int fk_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
    int k = 0;

    while (k < n && fk_wc_head < fk_nwc)
        wc[k++] = fk_wc[fk_wc_head++];
    return k;
}
static int fk_req_notify_cq(struct ibv_cq *cq, int solicited)
{
    return 0;
}

static const struct vb_ibv fk_lib __attribute__((unused)) = {
        .get_device_list = fk_get_device_list,
        .free_device_list = fk_free_device_list,
        .get_device_name = fk_get_device_name,
        .open_device = fk_open_device,
        .close_device = fk_close_device,
        .query_device = fk_query_device,
        .query_port = fk_query_port,
        .query_gid = fk_query_gid,
        .gid_is_v2 = fk_gid_is_v2,
        .gid_netdev = fk_gid_netdev,
        .alloc_pd = fk_alloc_pd,
        .dealloc_pd = fk_dealloc_pd,
        .reg_mr = fk_reg_mr,
        .dereg_mr = fk_dereg_mr,
        .create_comp_channel = fk_create_comp_channel,
        .destroy_comp_channel = fk_destroy_comp_channel,
        .create_cq = fk_create_cq,
        .destroy_cq = fk_destroy_cq,
        .get_cq_event = fk_get_cq_event,
        .ack_cq_events = fk_ack_cq_events,
        .create_qp = fk_create_qp,
        .modify_qp = fk_modify_qp,
        .destroy_qp = fk_destroy_qp,
        .wc_status_str = fk_wc_status_str,
        .post_send = fk_post_send,
        .post_recv = fk_post_recv,
        .poll_cq = fk_poll_cq,
        .req_notify_cq = fk_req_notify_cq,
};

/* Queues a CQE for the next poll. */
FK_FN void fk_push_wc(uint32_t qpn, enum ibv_wc_opcode op, enum ibv_wc_status st, uint32_t imm,
                      uint32_t len)
{
    struct ibv_wc *w = &fk_wc[fk_nwc++];

    memset(w, 0, sizeof(*w));
    w->qp_num = qpn;
    w->opcode = op;
    w->status = st;
    w->byte_len = len;
    if (op == IBV_WC_RECV_RDMA_WITH_IMM) {
        w->wc_flags = IBV_WC_WITH_IMM;
        w->imm_data = htonl(imm);
    }
}

#endif
