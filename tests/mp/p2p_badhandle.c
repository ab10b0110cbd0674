/* SPDX-License-Identifier: BSD-3-Clause */
/* p2p_badhandle: what a listen comm and connect do with input NCCL would never send.
 *   - connect with random bytes, with zeros, and with a real handle with one byte flipped:
 *     ncclInvalidUsage (it does not decode: a mismatch, not a bad pointer) or ncclSystemError,
 *     no comm, a WARN, no crash; again on retry;
 *     afterwards the unmodified handle still connects (the listen comm was not disturbed);
 *   - connect with the handle of a listen comm that was closed: an error, not a hang;
 *   - strangers connect to the listen port: one sends junk; one opens a complete jaccl
 *     connection (every lane, well-formed hellos, the handle's kind and fabric) whose only
 *     fault is the secret; one connects and closes; one connects and says nothing. accept
 *     keeps returning ncclSuccess and never a comm, the junk and wrong-secret sockets are
 *     closed while the listen comm lives, the silent one at the latest by closeListen, and
 *     the real connection is accepted and carries data afterwards. */
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mp.h"
/* Only to forge a connection that is right in every respect but the secret. */
#include "core/conn_wire.h"
#include "core/handle.h"

#define MSG 100000

enum { F_ADDR = 0, F_STRANGERS_IN, F_STRANGERS_CHECKED, F_GO, F_LISTEN_CLOSED };

/* ---- garbage handles ---- */

static void expect_refused(const struct mp_net *n, void *h, const char *what)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        unsigned mark = mp_log_mark();
        void *s = (void *)0x1;
        ncclResult_t rc = mp_net_connect(n, n->dev, h, &s);
        MP_CHECK(rc == ncclInvalidUsage || rc == ncclSystemError,
                 "connect with %s (call %d): %s, expected ncclInvalidUsage or ncclSystemError",
                 what, attempt + 1, mp_result_str(rc));
        MP_CHECK(s == NULL, "connect with %s returned comm %p", what, s);
        MP_CHECK(mp_warns_since(mark) > 0, "connect with %s logged no WARN", what);
    }
}

/* Bytes after the last non-zero one are padding the plugin zero-filled. */
static int meaningful_len(const unsigned char *h)
{
    int len = NCCL_NET_HANDLE_MAXSIZE;
    while (len > 1 && h[len - 1] == 0)
        len--;
    return len;
}

static void garbage_connects(const struct mp_net *n, const unsigned char *real)
{
    unsigned char h[NCCL_NET_HANDLE_MAXSIZE];
    mp_fill(h, sizeof(h), 42);
    expect_refused(n, h, "random bytes");
    memset(h, 0, sizeof(h));
    expect_refused(n, h, "zeros");
    int len = meaningful_len(real);
    int pos[] = {0, len / 4, len / 2, 3 * len / 4, len - 1};
    for (int i = 0; i < 5; i++) {
        char what[64];
        memcpy(h, real, sizeof(h));
        h[pos[i]] ^= 0x5a;
        snprintf(what, sizeof(what), "a valid handle with byte %d flipped", pos[i]);
        expect_refused(n, h, what);
    }
    mp_note("v%d: random, zero and %d corrupted handles refused (handle uses %d bytes)", n->version,
            5, len);
}

/* A well-formed handle whose listen comm is gone: an error within the timeout, not a hang. */
static void connect_to_closed(const struct mp_net *n, const void *handle)
{
    unsigned char h[NCCL_NET_HANDLE_MAXSIZE];
    unsigned mark = mp_log_mark();
    void *s = NULL;
    ncclResult_t rc = ncclSuccess;
    double t0 = mp_now(), limit = (double)mp_env_long("NCCL_JACCL_TIMEOUT", 30) + 2;
    memcpy(h, handle, sizeof(h));
    while (rc == ncclSuccess && !s && mp_now() - t0 < limit) {
        rc = mp_net_connect(n, n->dev, h, &s);
        sched_yield();
    }
    MP_CHECK(rc != ncclSuccess && !s, "connect to a closed listen comm: %s, comm %p after %.1f s",
             mp_result_str(rc), s, mp_now() - t0);
    MP_CHECK(mp_warns_since(mark) > 0, "connect to a closed listen comm logged no WARN");
    mp_note("v%d: connect to a closed listen comm: %s after %.2f s", n->version, mp_result_str(rc),
            mp_now() - t0);
}

static int garbage_rank(int rank, int nranks, void *arg)
{
    struct mp_net n;
    if (mp_net_open(&n, *(int *)arg) != 0)
        return 1;
    void *l = NULL, *c = NULL, *gone = NULL;
    unsigned char h[NCCL_NET_HANDLE_MAXSIZE];
    if (rank == 1 && (mp_listen_publish(&n, 0, &l) != 0 || mp_listen_publish(&n, 1, &gone) != 0))
        return 1;
    if (rank == 1)
        MP_OK(mp_net_close_listen(&n, gone));
    mp_barrier();
    memcpy(h, mp_peer_handle(1, 0), sizeof(h));
    if (rank == 0) {
        garbage_connects(&n, h);
        connect_to_closed(&n, mp_peer_handle(1, 1));
    }
    /* The listen comm saw none of that: the real handle still works. */
    if (mp_connect_accept(&n, h, rank == 0 ? &c : NULL, l, rank == 1 ? &c : NULL, mp_scaled(20)) !=
        0)
        return 1;
    if (l)
        MP_OK(mp_net_close_listen(&n, l));
    MP_OK(rank == 0 ? mp_net_close_send(&n, c) : mp_net_close_recv(&n, c));
    MP_OK(mp_net_fini(&n));
    return 0;
}

/* ---- strangers on the listen port ---- */

static int stranger_socket(const struct sockaddr_storage *a)
{
    int fd = socket(a->ss_family, SOCK_STREAM, 0);
    socklen_t len =
            a->ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
    if (fd >= 0 && connect(fd, (const struct sockaddr *)a, len) == 0)
        return fd;
    MP_CHECK(0, "stranger could not connect to the listen port");
    if (fd >= 0)
        close(fd);
    return -1;
}

/* 1 once the other end closed (EOF or reset) within timeout_ms, else 0. */
static int closed_by_peer(int fd, int timeout_ms)
{
    double deadline = mp_now() + timeout_ms / 1000.0;
    char b[256];
    while (mp_now() < deadline) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 50) <= 0)
            continue;
        ssize_t r = recv(fd, b, sizeof(b), MSG_DONTWAIT);
        if (r <= 0)
            return 1;
    }
    return 0;
}

static void send_all(int fd, const void *b, size_t len)
{
    MP_CHECK(send(fd, b, len, MSG_NOSIGNAL) == (ssize_t)len, "stranger's send failed");
}

/* Every lane of a connection, as the plugin's connector would open it, with a wrong secret.
 * Returns the number of sockets opened into fds. */
static int forge_connection(const struct sockaddr_storage *a, int *fds, int max)
{
    struct jaccl_handle h;
    const char *why = "";
    if (!MP_CHECK(jaccl_handle_decode(mp_peer_handle(1, 0), JH_P2P, &h, &why) == 0,
                  "the listener's own handle does not decode: %s", why))
        return 0;
    int n = h.nlanes < max ? h.nlanes : max;
    uint64_t conn_id = 0x5eed;
    for (int i = 0; i < n; i++) {
        struct jaccl_hello hl = {.magic = JACCL_HELLO_MAGIC,
                                 .kind = h.kind,
                                 .secret = h.secret ^ 0x1,
                                 .conn_id = conn_id,
                                 .idx = (uint16_t)i,
                                 .count = (uint16_t)n,
                                 .blob_len = 0,
                                 .fabric = h.fabric};
        if ((fds[i] = stranger_socket(a)) < 0)
            return i;
        send_all(fds[i], &hl, sizeof(hl));
    }
    return n;
}

static int stranger(void)
{
    struct sockaddr_storage a;
    int forged[16];
    if (mp_flag_wait(1, F_ADDR, 1, mp_scaled(20) * 1000) != 0)
        return 1;
    memcpy(&a, mp_sh->scratch, sizeof(a));
    int junk = stranger_socket(&a), quitter = stranger_socket(&a), silent = stranger_socket(&a);
    int nforged = forge_connection(&a, forged, 16);
    if (junk < 0 || quitter < 0 || silent < 0 || nforged < 1)
        return 1;
    char bytes[64];
    mp_fill(bytes, sizeof(bytes), 7);
    send_all(junk, bytes, sizeof(bytes));
    close(quitter);
    mp_flag_set(2, F_STRANGERS_IN, 1);
    MP_CHECK(closed_by_peer(junk, mp_scaled(5) * 1000), "the junk sender was not disconnected");
    for (int i = 0; i < nforged; i++)
        MP_CHECK(closed_by_peer(forged[i], mp_scaled(5) * 1000),
                 "lane %d of %d of the wrong-secret connection was not disconnected", i, nforged);
    mp_flag_set(2, F_STRANGERS_CHECKED, 1);
    mp_flag_wait(1, F_LISTEN_CLOSED, 1, mp_scaled(30) * 1000);
    MP_CHECK(closed_by_peer(silent, 2000), "the silent stranger is still connected after "
                                           "closeListen");
    close(junk);
    close(silent);
    for (int i = 0; i < nforged; i++)
        close(forged[i]);
    return 0;
}

/* Listens and tells the strangers where: the new listening socket of this process. */
static void *listen_for_strangers(const struct mp_net *n)
{
    int before[64], after[64], nb = mp_listen_fds(before, 64);
    void *l = NULL;
    if (mp_listen_publish(n, 0, &l) != 0)
        return NULL;
    int na = mp_listen_fds(after, 64);
    MP_CHECK(na == nb + 1, "listen opened %d listening sockets, expected 1", na - nb);
    struct sockaddr_storage a;
    socklen_t len = sizeof(a);
    MP_CHECK(getsockname(after[na - 1], (struct sockaddr *)&a, &len) == 0, "getsockname");
    memcpy(mp_sh->scratch, &a, sizeof(a));
    mp_flag_set(1, F_ADDR, 1);
    return l;
}

static int listener(const struct mp_net *n, char *buf)
{
    void *l = listen_for_strangers(n), *c = NULL;
    if (!l)
        return 1;
    unsigned mark = mp_log_mark();
    double deadline = mp_now() + mp_scaled(30);
    /* Strangers come and go while the listen comm is accepted on, as NCCL's proxy would. */
    while (mp_flag_get(2, F_STRANGERS_CHECKED) == 0 && mp_now() < deadline) {
        if (!MP_OK(mp_net_accept(n, l, &c)) || !MP_CHECK(c == NULL, "a stranger was accepted"))
            return 1;
        mp_sleep_ms(1);
    }
    MP_CHECK(mp_warns_since(mark) >= 2, "only %u WARN(s) about the strangers",
             mp_warns_since(mark));
    MP_CHECK(mp_warn_seen(mark, "secret"), "no WARN says the secret was wrong");
    mp_flag_set(1, F_GO, 1);
    if (mp_connect_accept(n, NULL, NULL, l, &c, mp_scaled(20)) != 0)
        return 1;
    void *mh = NULL;
    int got = -1;
    MP_OK(mp_net_regmr(n, c, buf, MSG, NCCL_PTR_HOST, &mh));
    MP_OK(mp_recv_wait(n, c, buf, MSG, 0, mh, &got, mp_scaled(10)));
    MP_CHECK(got == MSG && mp_verify(buf, MSG, 99) == (size_t)-1, "real message wrong (%d)", got);
    MP_OK(mp_net_close_listen(n, l));
    mp_flag_set(1, F_LISTEN_CLOSED, 1);
    MP_OK(mp_net_deregmr(n, c, mh));
    MP_OK(mp_net_close_recv(n, c));
    return 0;
}

static int connector(const struct mp_net *n, char *buf)
{
    char h[NCCL_NET_HANDLE_MAXSIZE];
    void *c = NULL, *mh = NULL;
    if (mp_flag_wait(1, F_GO, 1, mp_scaled(30) * 1000) != 0)
        return 1;
    memcpy(h, mp_peer_handle(1, 0), sizeof(h));
    if (mp_connect_accept(n, h, &c, NULL, NULL, mp_scaled(20)) != 0)
        return 1;
    MP_OK(mp_net_regmr(n, c, buf, MSG, NCCL_PTR_HOST, &mh));
    mp_fill(buf, MSG, 99);
    MP_OK(mp_send_wait(n, c, buf, MSG, 0, mh, mp_scaled(10)));
    mp_note("real connection accepted after 4 strangers, %d bytes delivered", MSG);
    MP_OK(mp_net_deregmr(n, c, mh));
    MP_OK(mp_net_close_send(n, c));
    return 0;
}

static int strangers_rank(int rank, int nranks, void *arg)
{
    if (rank == 2)
        return stranger();
    struct mp_net n;
    if (mp_net_open(&n, 11) != 0)
        return 1;
    char *buf = mp_alloc(MSG);
    int rc = rank == 1 ? listener(&n, buf) : connector(&n, buf);
    MP_OK(mp_net_fini(&n));
    mp_free(buf, MSG);
    return rc;
}

int main(int argc, char **argv)
{
    mp_begin("p2p_badhandle", "garbage handles and strangers on the listen port", argc, argv);
    int failed = mp_run_versions(MP_SAMPLE_VERSIONS, "garbage", "garbage handles", 2, mp_scaled(60),
                                 garbage_rank);
    failed += mp_run("strangers", "strangers on the listen port", 3, mp_scaled(60), strangers_rank,
                     NULL);
    return mp_end(failed);
}
