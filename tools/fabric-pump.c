/* SPDX-License-Identifier: BSD-3-Clause */
/* fabric-pump: one-way throughput of the TCP fabric (one endpoint, one lane, 127.0.0.1)
 * next to a plain blocking socket pump, in the same run, between two processes.
 *
 *   fabric-pump [-s msg_bytes] [-n msgs] [-k recv_depth] [-r rounds]
 *
 * Each round runs the raw pump, then the fabric; every figure is timed on the sender from its
 * first byte to the receiver's acknowledgement of the last. The receiver hands out -k credits
 * (posted RECVs) and returns one per message with a 4-byte SEND, as the fabric's rules ask. */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fabric/fabric.h"
#include "fabric/tcp/tcp.h"
#include "util/clock.h"

static const struct fab_ops *F = &fab_tcp_ops;

struct opts {
    size_t size;
    int n, depth, rounds;
};

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static int listen_lo(struct sockaddr_in *sa)
{
    socklen_t len = sizeof(*sa);
    int l = socket(AF_INET, SOCK_STREAM, 0);

    memset(sa, 0, sizeof(*sa));
    sa->sin_family = AF_INET;
    sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (l < 0 || bind(l, (struct sockaddr *)sa, sizeof(*sa)) || listen(l, 4) ||
        getsockname(l, (struct sockaddr *)sa, &len))
        die("listen");
    return l;
}

static int connect_lo(const struct sockaddr_in *sa)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);

    if (s < 0 || connect(s, (const struct sockaddr *)sa, sizeof(*sa)))
        die("connect");
    return s;
}

static void xfer(int fd, void *buf, size_t len, int wr)
{
    for (size_t done = 0; done < len;) {
        ssize_t n = wr ? write(fd, (char *)buf + done, len - done)
                       : read(fd, (char *)buf + done, len - done);

        if (n <= 0)
            die(wr ? "write" : "read");
        done += (size_t)n;
    }
}

static void *touched(size_t n)
{
    void *p = malloc(n);

    if (!p)
        die("malloc");
    memset(p, 0x42, n);
    return p;
}

/* ---- the raw blocking pump ---- */

static double raw_send(int fd, const struct opts *o, void *buf)
{
    uint64_t t0 = jaccl_now_ns();
    char ack;

    for (int i = 0; i < o->n; i++)
        xfer(fd, buf, o->size, 1);
    xfer(fd, &ack, 1, 0);
    return (double)o->size * o->n / (double)(jaccl_now_ns() - t0);
}

static void raw_recv(int fd, const struct opts *o, void *buf)
{
    char ack = 1;

    for (int i = 0; i < o->n; i++)
        xfer(fd, buf, o->size, 0);
    xfer(fd, &ack, 1, 1);
}

/* ---- the fabric ---- */

struct fab {
    struct fab_domain *dom;
    struct fab_cq *cq;
    struct fab_ep *ep;
};

static void fab_open(struct fab *f, int depth)
{
    struct fab_ep_attr a = {.nlanes = 1,
                            .max_send_wr = depth + 1,
                            .max_recv_wr = depth + 1,
                            .liveness_ns = 0,
                            .peer_desc = "pump peer"};

    if (F->domain_open(0, &f->dom) || F->cq_create(f->dom, 64, &f->cq) ||
        F->ep_create(f->dom, f->cq, &a, &f->ep))
        die("fabric setup");
}

static void fab_start(struct fab *f, int sock)
{
    if (F->ep_connect(f->ep, NULL, 0, &sock, 1))
        die("ep_connect");
}

static void fab_close(struct fab *f)
{
    F->ep_close(f->ep);
    F->cq_destroy(f->cq);
    F->domain_close(f->dom);
}

static struct fab_wc fab_next(struct fab *f)
{
    struct fab_wc wc;

    while (F->cq_poll(f->cq, &wc, 1) == 0)
        F->cq_wait(f->cq, UINT64_MAX);
    if (wc.status != FAB_WC_OK) {
        const char *why = "";

        F->ep_error(f->ep, &why);
        fprintf(stderr, "completion error: %s: %s\n", fab_wc_status_str(wc.status), why);
        exit(1);
    }
    return wc;
}

/* Sender: posts while it holds credits; a credit comes back (a RECV completion) per message. */
static double fab_send(int sock, const struct opts *o, void *buf)
{
    uint32_t credit[64];
    int posted = 0, acked = 0, credits = o->depth;
    struct fab f;
    uint64_t t0;

    fab_open(&f, o->depth);
    for (int i = 0; i < o->depth; i++)
        F->post_recv(f.ep, 0, &credit[i], sizeof(credit[i]), NULL, (uint64_t)i);
    fab_start(&f, sock);
    t0 = jaccl_now_ns();
    while (acked < o->n) {
        struct fab_wc wc;

        while (credits && posted < o->n) {
            if (F->post_send(f.ep, 0, buf, o->size, NULL, 1000 + (uint64_t)posted))
                die("post_send");
            posted++;
            credits--;
        }
        wc = fab_next(&f);
        if (wc.op == FAB_WC_RECV) {
            acked++;
            credits++;
            F->post_recv(f.ep, 0, &credit[wc.wr_id], sizeof(credit[0]), NULL, wc.wr_id);
        }
    }
    fab_close(&f);
    return (double)o->size * o->n / (double)(jaccl_now_ns() - t0);
}

static void fab_recv(int sock, const struct opts *o, char *buf)
{
    uint32_t credit = 1;
    struct fab f;

    fab_open(&f, o->depth);
    for (int i = 0; i < o->depth; i++)
        F->post_recv(f.ep, 0, buf + (size_t)i * o->size, o->size, NULL, (uint64_t)i);
    fab_start(&f, sock);
    /* Credits must reach the kernel before the sockets close: count them out too. */
    for (int got = 0, sent = 0; got < o->n || sent < o->n;) {
        struct fab_wc wc = fab_next(&f);

        if (wc.op == FAB_WC_SEND) {
            sent++;
            continue;
        }
        if (wc.len != o->size)
            die("short message");
        got++;
        F->post_recv(f.ep, 0, buf + wc.wr_id * o->size, o->size, NULL, wc.wr_id);
        if (F->post_send(f.ep, 0, &credit, sizeof(credit), NULL, 0))
            die("post credit");
    }
    fab_close(&f);
}

static void child(const struct sockaddr_in *sa, const struct opts *o)
{
    char *buf = touched(o->size * (size_t)o->depth);

    for (int r = 0; r < o->rounds; r++) {
        int s = connect_lo(sa);

        raw_recv(s, o, buf);
        close(s);
        fab_recv(connect_lo(sa), o, buf);
    }
    free(buf);
    exit(0);
}

static void parse(int argc, char **argv, struct opts *o)
{
    int c;

    *o = (struct opts){.size = 4u << 20, .n = 256, .depth = 2, .rounds = 3};
    while ((c = getopt(argc, argv, "s:n:k:r:")) != -1) {
        if (c == 's')
            o->size = strtoull(optarg, NULL, 0);
        else if (c == 'n')
            o->n = atoi(optarg);
        else if (c == 'k')
            o->depth = atoi(optarg);
        else if (c == 'r')
            o->rounds = atoi(optarg);
        else
            exit(2);
    }
    if (o->depth < 1 || o->depth > 64 || o->n < 1 || o->size < 1 || o->size > (1u << 30))
        exit(2);
}

int main(int argc, char **argv)
{
    struct sockaddr_in sa;
    struct opts o;
    double raw, fab, best_raw = 0, best_fab = 0;
    int l, st;
    void *buf;
    pid_t pid;

    parse(argc, argv, &o);
    l = listen_lo(&sa);
    pid = fork();
    if (pid == 0)
        child(&sa, &o);
    buf = touched(o.size);
    printf("# %d x %zu bytes, recv depth %d, one lane, 127.0.0.1 (GB/s = 1e9 B/s)\n", o.n, o.size,
           o.depth);
    for (int r = 0; r < o.rounds; r++) {
        int s = accept(l, NULL, NULL);

        raw = raw_send(s, &o, buf);
        close(s);
        fab = fab_send(accept(l, NULL, NULL), &o, buf);
        printf("round %d: raw socket pump %.3f GB/s, fabric %.3f GB/s, ratio %.1f%%\n", r, raw, fab,
               100.0 * fab / raw);
        best_raw = raw > best_raw ? raw : best_raw;
        best_fab = fab > best_fab ? fab : best_fab;
    }
    printf("best: raw %.3f GB/s, fabric %.3f GB/s, ratio %.1f%%\n", best_raw, best_fab,
           100.0 * best_fab / best_raw);
    free(buf);
    close(l);
    waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
