/* SPDX-License-Identifier: BSD-3-Clause */
/* The multi-host rendezvous: a star of TCP connections on rank 0, one message up and one down
 * per barrier, a deadline on every wait. */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mp_check.h"
#include "mp_host.h"
#include "mp_proc.h"
#include "mp_util.h"

#define MAGIC       0x4a41524eu /* "JARN" */
#define JOIN_S_DEF  60          /* JACCL_PERF_ROOT_TIMEOUT: how long ranks wait to meet */
#define GRACE_S     5           /* a rank that failed waits this long for its peers' word */
#define KIND_STEP   1           /* an ordinary mp_barrier */
#define KIND_END    2           /* the barrier that ends a scenario */
#define ST_OK       0
#define ST_ABORT    1 /* a rank ended early or was lost: `who` says which */
#define ST_BAD_RANK 2

struct row {
    char handle[MP_SLOTS][NCCL_NET_HANDLE_MAXSIZE];
    long flag[MP_FLAGS];
    double value[MP_VALUES];
};

struct hello {
    uint32_t magic;
    int32_t rank, nranks;
    struct sockaddr_storage self; /* the address this rank's connection to the root used */
};

struct welcome {
    uint32_t magic;
    int32_t status;
    struct sockaddr_storage addr[MP_MAX_RANKS];
};

struct up {
    uint32_t kind;
    int32_t failed;
    struct row row;
};

struct down {
    int32_t status, who, failed;
    struct row rows[MP_MAX_RANKS];
};

static struct {
    int on, joined, broken, wait_s;
    int fail0; /* mp_failures() when the scenario began */
    struct mp_host h;
    int fd[MP_MAX_RANKS]; /* root: one per rank (fd[0] unused); others: fd[0] to the root */
    struct sockaddr_storage addr[MP_MAX_RANKS];
} g;

/* ---- options ---- */

void mp_host_usage(void)
{
    fprintf(stderr, "multi-host (one rank per host; else the ranks are forked here):\n"
                    "  --rank R --nranks N --root HOST:PORT   rank 0 listens on PORT\n"
                    "  under mpirun: rank and size from OMPI_COMM_WORLD_RANK/SIZE or "
                    "PMI_RANK/SIZE,\n"
                    "  the root from --root or JACCL_PERF_ROOT=HOST:PORT\n"
                    "  JACCL_PERF_ROOT_TIMEOUT=S   seconds the ranks wait to meet (default 60)\n");
}

/* "--name V" or "--name=V" at argv[i]: the value, and how many words it took (0: no match). */
static const char *opt_value(char **argv, int argc, int i, const char *name, int *used)
{
    size_t n = strlen(name);
    *used = 0;
    if (strncmp(argv[i], name, n) != 0)
        return NULL;
    if (argv[i][n] == '=') {
        *used = 1;
        return argv[i] + n + 1;
    }
    if (argv[i][n] == 0 && i + 1 < argc) {
        *used = 2;
        return argv[i + 1];
    }
    return NULL;
}

static const char *env_first(const char *a, const char *b)
{
    const char *v = getenv(a);
    return v && *v ? v : getenv(b) && *getenv(b) ? getenv(b) : NULL;
}

static int parse_int(const char *s, int *out)
{
    char *end;
    long v = s ? strtol(s, &end, 10) : 0;
    if (!s || !*s || *end)
        return -1;
    *out = (int)v;
    return 0;
}

int mp_host_setup(int *argc, char **argv)
{
    const char *rank = NULL, *nranks = NULL, *root = NULL;
    int out = 1;
    for (int i = 1; i < *argc;) {
        int used = 0;
        const char *v;
        if ((v = opt_value(argv, *argc, i, "--rank", &used)))
            rank = v;
        else if ((v = opt_value(argv, *argc, i, "--nranks", &used)))
            nranks = v;
        else if ((v = opt_value(argv, *argc, i, "--root", &used)))
            root = v;
        if (!used)
            argv[out++] = argv[i++];
        i += used;
    }
    *argc = out;
    argv[out] = NULL;
    rank = rank ? rank : env_first("OMPI_COMM_WORLD_RANK", "PMI_RANK");
    nranks = nranks ? nranks : env_first("OMPI_COMM_WORLD_SIZE", "PMI_SIZE");
    root = root ? root : getenv("JACCL_PERF_ROOT");
    if (!rank && !nranks && !root)
        return 0;
    if (!rank || !nranks || !root || !*root) {
        fprintf(stderr,
                "multi-host run needs a rank, a rank count and a root: got rank %s, "
                "nranks %s, root %s\n",
                rank ? rank : "(none)", nranks ? nranks : "(none)", root ? root : "(none)");
        mp_host_usage();
        return -1;
    }
    if (parse_int(rank, &g.h.rank) || parse_int(nranks, &g.h.nranks) || g.h.nranks < 1 ||
        g.h.nranks > MP_MAX_RANKS || g.h.rank < 0 || g.h.rank >= g.h.nranks ||
        snprintf(g.h.root, sizeof(g.h.root), "%s", root) >= (int)sizeof(g.h.root)) {
        fprintf(stderr, "bad multi-host settings: rank %s of %s (1 .. %d ranks), root %s\n", rank,
                nranks, MP_MAX_RANKS, root);
        return -1;
    }
    g.on = 1;
    return 1;
}

int mp_hosted(void)
{
    return g.on;
}

const struct mp_host *mp_host_get(void)
{
    return &g.h;
}

/* ---- sockets with deadlines ---- */

/* Waits for fd to become readable (POLLIN) or writable; 0, or -1 at the deadline. */
static int wait_fd(int fd, short ev, double deadline)
{
    for (;;) {
        double left = deadline - mp_now();
        if (left <= 0)
            return -1;
        struct pollfd p = {.fd = fd, .events = ev};
        int ms = left > 1000 ? 1000 : (int)(left * 1000) + 1;
        int n = poll(&p, 1, ms);
        if (n > 0)
            return 0;
        if (n < 0 && errno != EINTR)
            return -1;
    }
}

/* 0 when all of buf moved; -1 on error, EOF or the deadline (errno = ETIMEDOUT then). */
static int xfer(int fd, void *buf, size_t len, int is_send, double deadline)
{
    char *p = buf;
    while (len > 0) {
        if (wait_fd(fd, is_send ? POLLOUT : POLLIN, deadline) != 0) {
            errno = ETIMEDOUT;
            return -1;
        }
        ssize_t n = is_send ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
        if (n == 0)
            errno = ECONNRESET;
        if (n <= 0 && !(n < 0 && (errno == EINTR || errno == EAGAIN)))
            return -1;
        if (n > 0) {
            p += n;
            len -= (size_t)n;
        }
    }
    return 0;
}

/* "HOST:PORT" or "[V6]:PORT" into getaddrinfo's answer; NULL after a note. */
static struct addrinfo *resolve(const char *spec)
{
    char host[256];
    snprintf(host, sizeof(host), "%s", spec);
    char *colon = strrchr(host, ':');
    if (!colon || !colon[1]) {
        mp_note("root %s: expected HOST:PORT", spec);
        return NULL;
    }
    *colon = 0;
    char *h = host;
    if (*h == '[' && colon > h && colon[-1] == ']') {
        h++;
        colon[-1] = 0;
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai = NULL;
    int rc = getaddrinfo(h, colon + 1, &hints, &ai);
    if (rc != 0) {
        mp_note("root %s: cannot resolve: %s", spec, gai_strerror(rc));
        return NULL;
    }
    return ai;
}

static void nodelay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* ---- joining ---- */

static int join_s(void)
{
    long s = mp_env_long("JACCL_PERF_ROOT_TIMEOUT", JOIN_S_DEF);
    return s > 0 ? (int)s : JOIN_S_DEF;
}

/* The root's listener: the wildcard address of the root's family, on the root's port. */
static int root_listen(const struct addrinfo *ai)
{
    struct sockaddr_storage a = {0};
    memcpy(&a, ai->ai_addr, ai->ai_addrlen);
    if (a.ss_family == AF_INET6)
        ((struct sockaddr_in6 *)&a)->sin6_addr = in6addr_any;
    else
        ((struct sockaddr_in *)&a)->sin_addr.s_addr = htonl(INADDR_ANY);
    int fd = socket(a.ss_family, SOCK_STREAM, 0), one = 1;
    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&a, ai->ai_addrlen) != 0 || listen(fd, MP_MAX_RANKS) != 0) {
        mp_note("rank 0: cannot listen on the root's port %s: %s", g.h.root, strerror(errno));
        close(fd);
        return -1;
    }
    return fd;
}

/* Reads one hello on a fresh connection and files it; 0, or -1 if the peer is not a rank of
 * this job (it is told why and dropped). */
static int admit(int fd, double deadline)
{
    struct hello hi;
    struct welcome no = {.magic = MAGIC, .status = ST_BAD_RANK};
    if (xfer(fd, &hi, sizeof(hi), 0, deadline) != 0 || hi.magic != MAGIC) {
        mp_note("rank 0: dropped a connection that is not a jaccl rank");
        return -1;
    }
    if (hi.nranks != g.h.nranks || hi.rank <= 0 || hi.rank >= g.h.nranks || g.fd[hi.rank] >= 0) {
        int taken = hi.rank > 0 && hi.rank < g.h.nranks && g.fd[hi.rank] >= 0;
        mp_note("rank 0: refused rank %d of %d (this job: %d ranks%s)", hi.rank, hi.nranks,
                g.h.nranks, taken ? ", and that rank has joined already" : "");
        xfer(fd, &no, sizeof(no), 1, deadline);
        return -1;
    }
    g.fd[hi.rank] = fd;
    g.addr[hi.rank] = hi.self;
    if (hi.rank == 1 || g.addr[0].ss_family == 0) {
        socklen_t len = sizeof(g.addr[0]);
        getsockname(fd, (struct sockaddr *)&g.addr[0], &len);
    }
    return 0;
}

static int root_join(const struct addrinfo *ai)
{
    int lfd = root_listen(ai), joined = 1;
    double deadline = mp_now() + join_s();
    if (lfd < 0)
        return -1;
    while (joined < g.h.nranks) {
        if (wait_fd(lfd, POLLIN, deadline) != 0) {
            mp_note("rank 0: only %d of %d ranks reached the root %s within %d s", joined,
                    g.h.nranks, g.h.root, join_s());
            close(lfd);
            return -1;
        }
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0)
            continue;
        nodelay(fd);
        if (admit(fd, deadline) == 0)
            joined++;
        else
            close(fd);
    }
    close(lfd);
    struct welcome w = {.magic = MAGIC, .status = ST_OK};
    memcpy(w.addr, g.addr, sizeof(w.addr));
    for (int r = 1; r < g.h.nranks; r++)
        if (xfer(g.fd[r], &w, sizeof(w), 1, deadline) != 0) {
            mp_note("rank 0: lost rank %d while welcoming it: %s", r, strerror(errno));
            return -1;
        }
    return 0;
}

/* Connects to the root, retrying while it is not up yet; the fd, or -1 after a note. */
static int dial(const struct addrinfo *ai, double deadline)
{
    int err = 0;
    while (mp_now() < deadline) {
        for (const struct addrinfo *a = ai; a; a = a->ai_next) {
            int fd = socket(a->ai_family, SOCK_STREAM, 0);
            if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
                nodelay(fd);
                return fd;
            }
            err = errno;
            if (fd >= 0)
                close(fd);
        }
        mp_sleep_ms(200);
    }
    mp_note("rank %d: cannot reach the rendezvous root %s within %d s (last error: %s); is "
            "rank 0 running there, and is the port open?",
            g.h.rank, g.h.root, join_s(), strerror(err));
    return -1;
}

static int rank_join(const struct addrinfo *ai)
{
    double deadline = mp_now() + join_s();
    int fd = dial(ai, deadline);
    if (fd < 0)
        return -1;
    struct hello hi = {.magic = MAGIC, .rank = g.h.rank, .nranks = g.h.nranks};
    socklen_t len = sizeof(hi.self);
    getsockname(fd, (struct sockaddr *)&hi.self, &len);
    struct welcome w = {0};
    /* The root waits up to join_s for the last rank, so the welcome may take that long. */
    if (xfer(fd, &hi, sizeof(hi), 1, deadline) != 0 ||
        xfer(fd, &w, sizeof(w), 0, mp_now() + 2 * join_s()) != 0 || w.magic != MAGIC ||
        w.status != ST_OK) {
        mp_note("rank %d: the root %s %s", g.h.rank, g.h.root,
                w.magic == MAGIC && w.status == ST_BAD_RANK
                        ? "refused us (rank taken, or another rank count)"
                        : "did not welcome us (not all ranks arrived in time?)");
        close(fd);
        return -1;
    }
    g.fd[0] = fd;
    memcpy(g.addr, w.addr, sizeof(g.addr));
    return 0;
}

static int join(void)
{
    for (int r = 0; r < MP_MAX_RANKS; r++)
        g.fd[r] = -1;
    struct addrinfo *ai = resolve(g.h.root);
    if (!ai)
        return -1;
    int rc = g.h.rank == 0 ? root_join(ai) : rank_join(ai);
    freeaddrinfo(ai);
    if (rc == 0) {
        g.joined = 1;
        mp_note("rank %d of %d joined the rendezvous at %s", g.h.rank, g.h.nranks, g.h.root);
    }
    return rc;
}

/* ---- barriers ---- */

static void pack(struct row *r, int rank)
{
    memcpy(r->handle, mp_sh->handle[rank], sizeof(r->handle));
    memcpy(r->flag, mp_sh->flag[rank], sizeof(r->flag));
    memcpy(r->value, mp_sh->value[rank], sizeof(r->value));
}

static void unpack(const struct row *rows)
{
    for (int r = 0; r < g.h.nranks; r++) {
        memcpy(mp_sh->handle[r], rows[r].handle, sizeof(rows[r].handle));
        memcpy(mp_sh->flag[r], rows[r].flag, sizeof(rows[r].flag));
        memcpy(mp_sh->value[r], rows[r].value, sizeof(rows[r].value));
    }
}

/* Root: tells every rank still connected how the barrier ended (the gather's deadline may
 * be spent, so the answer gets a few seconds of its own). */
static void broadcast(struct down *d)
{
    double deadline = mp_now() + GRACE_S;
    for (int r = 1; r < g.h.nranks; r++)
        if (g.fd[r] >= 0 && xfer(g.fd[r], d, sizeof(*d), 1, deadline) != 0) {
            close(g.fd[r]);
            g.fd[r] = -1;
        }
}

/* Root: the rows of every rank. Stops at the first rank whose kind differs from ours, or that
 * is gone or late, and then aborts the barrier for all. */
static void root_gather(const struct up *mine, struct down *d, double deadline)
{
    d->status = ST_OK;
    d->who = -1;
    d->failed = mine->failed;
    d->rows[0] = mine->row;
    struct up u;
    for (int r = 1; r < g.h.nranks && d->status == ST_OK; r++) {
        if (xfer(g.fd[r], &u, sizeof(u), 0, deadline) != 0) {
            mp_note("rank 0: rank %d %s", r,
                    errno == ETIMEDOUT ? "did not reach the barrier in time"
                                       : "left the rendezvous (it ended or its host is gone)");
            close(g.fd[r]);
            g.fd[r] = -1;
            d->status = ST_ABORT;
            d->who = r;
        } else if (u.kind != mine->kind) {
            d->status = ST_ABORT;
            d->who = u.kind == KIND_END ? r : 0;
        } else {
            d->rows[r] = u.row;
            d->failed |= u.failed;
        }
    }
    broadcast(d);
}

/* One barrier of `kind`: 0 when every rank came with the same kind; d has the rows. A rank
 * that has already failed waits only GRACE_S: its peers are likely stuck on it, or the
 * network that carries the rendezvous is the thing that broke. */
static int exchange(uint32_t kind, int failed, struct down *d)
{
    struct up u = {.kind = kind, .failed = failed};
    int failing = failed || mp_failures() != g.fail0;
    double deadline = mp_now() + (failing && g.wait_s > GRACE_S ? GRACE_S : g.wait_s);
    pack(&u.row, g.h.rank);
    if (g.h.rank == 0) {
        root_gather(&u, d, deadline);
    } else if (xfer(g.fd[0], &u, sizeof(u), 1, deadline) != 0 ||
               xfer(g.fd[0], d, sizeof(*d), 0, deadline) != 0) {
        mp_note("rank %d: %s", g.h.rank,
                errno == ETIMEDOUT ? "no word from the rendezvous root within the deadline"
                                   : "lost the rendezvous root (rank 0 ended or is unreachable)");
        d->status = ST_ABORT;
        d->who = 0;
        return -1;
    }
    if (d->status != ST_OK && d->who >= 0)
        mp_note("rank %d: rank %d ended its part early or is gone; stopping", g.h.rank, d->who);
    return d->status == ST_OK ? 0 : -1;
}

void mp_host_barrier(void)
{
    static struct down d;
    if (exchange(KIND_STEP, 0, &d) != 0) {
        fflush(NULL);
        exit(1); /* the peers are stopping too; nothing this rank waits for will come */
    }
    unpack(d.rows);
}

int mp_host_run(int nranks, int timeout_s, int (*fn)(int, int, void *), void *arg)
{
    static struct down d;
    if (nranks != g.h.nranks) {
        mp_note("this run needs %d ranks; the job has %d", nranks, g.h.nranks);
        return 1;
    }
    g.wait_s = timeout_s;
    if (g.broken || (!g.joined && join() != 0))
        return 1;
    g.fail0 = mp_failures();
    int failed = fn(g.h.rank, nranks, arg) != 0 || mp_failures() != g.fail0;
    if (exchange(KIND_END, failed, &d) != 0) {
        g.broken = 1; /* the ranks no longer agree on where they are */
        return 1;
    }
    if (d.failed && !failed)
        mp_note("rank %d: another rank failed", g.h.rank);
    return d.failed ? 1 : 0;
}

/* ---- addresses for the tools' anchors ---- */

static socklen_t family_len(int family)
{
    return family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

void mp_host_addr(int r, struct sockaddr_storage *a, socklen_t *len)
{
    memset(a, 0, sizeof(*a));
    if (g.on && g.joined && r >= 0 && r < g.h.nranks) {
        *a = g.addr[r];
    } else {
        struct sockaddr_in *in = (struct sockaddr_in *)a;
        in->sin_family = AF_INET;
        in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    }
    if (a->ss_family == AF_INET6)
        ((struct sockaddr_in6 *)a)->sin6_port = 0;
    else
        ((struct sockaddr_in *)a)->sin_port = 0;
    *len = family_len(a->ss_family);
}

void mp_host_listen_addr(struct sockaddr_storage *a, socklen_t *len)
{
    mp_host_addr(g.on ? g.h.rank : 0, a, len);
    if (!g.on)
        return;
    if (a->ss_family == AF_INET6)
        ((struct sockaddr_in6 *)a)->sin6_addr = in6addr_any;
    else
        ((struct sockaddr_in *)a)->sin_addr.s_addr = htonl(INADDR_ANY);
}
