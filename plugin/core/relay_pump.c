/* SPDX-License-Identifier: BSD-3-Clause */
/* Relayed connections: the preamble names the listener, the relay connects on to it from its
 * link on the listener's subnet, then forwards both ways.
 *
 * Each direction has a bounded buffer: a side is read only while its buffer has room, and
 * written while it holds bytes, so a slow side holds the other back through TCP's own flow
 * control and the relay's memory stays RELAY_BUF per direction. An end of stream is passed on
 * (shutdown) once the bytes before it are out; a reset or an error ends both sides with a
 * reset (SO_LINGER 0), so each end sees a failure, never a clean end that lost data. Except the
 * end of an endpoint that closed: it shuts its sending side first, then closes for good once
 * its bytes are acknowledged (fab_sock_retire), so a side that resets after its own stream
 * ended is retired: what the other side still sends it is read and dropped, as its reaper
 * would, and its last bytes and end of stream still go through. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/relay_int.h"
#include "core/relay_wire.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/sock.h"

enum sess_state { SS_PREAMBLE, SS_CONNECTING, SS_PUMP };

struct relay_dir { /* bytes read from side d, to be written to side 1 - d */
    char *buf;
    size_t head, len;
    int eof, shut; /* side d ended its stream; we passed that on */
    int drop;      /* side 1 - d closed after its own stream ended: what comes is dropped */
};

struct relay_end {
    struct relay_sess *s;
    int side;
};

struct relay_sess {
    int fd[2]; /* 0: the connector (or the relay before it), 1: towards the listener */
    enum sess_state state;
    uint8_t pre[JACCL_RELAY_PREAMBLE];
    size_t pre_got;
    union jaccl_sockaddr target;
    struct relay_dir dir[2];
    struct relay_end end[2];
    uint32_t mask[2]; /* epoll interest now registered (a side with none is not registered:
                       * a hung-up socket would report itself forever) */
    uint64_t deadline;
    int dead; /* closed: freed once the events of this round are handled */
    char from[64];
    struct relay_sess *next;
};

/* Closes both sides; the session stays allocated until relay_sess_reap, because the same
 * round of events may still name it (its other side). */
static void sess_close(struct relay_svc *s, struct relay_sess *x, int reset)
{
    for (int i = 0; i < 2; i++) {
        if (x->fd[i] < 0)
            continue;
        if (reset) /* a reset, not an end of stream: the far end must not take it as clean */
            (void)setsockopt(x->fd[i], SOL_SOCKET, SO_LINGER,
                             &(struct linger){.l_onoff = 1, .l_linger = 0}, sizeof(struct linger));
        close(x->fd[i]);
        x->fd[i] = -1;
    }
    x->dead = 1;
    s->sessions--;
    relay_count(-1);
}

void relay_sess_reap(struct relay_svc *s)
{
    struct relay_sess **pp = &s->head;
    while (*pp) {
        struct relay_sess *x = *pp;
        if (!x->dead) {
            pp = &x->next;
            continue;
        }
        *pp = x->next;
        free(x->dir[0].buf);
        free(x->dir[1].buf);
        free(x);
    }
}

/* The interest each side needs now; registered only when it changed. */
static void sess_watch(struct relay_svc *s, struct relay_sess *x)
{
    for (int i = 0; i < 2; i++) {
        if (x->fd[i] < 0)
            continue;
        const struct relay_dir *in = &x->dir[i], *out = &x->dir[1 - i];
        uint32_t m = 0;
        if (x->state == SS_PREAMBLE && i == 0)
            m = EPOLLIN;
        else if (x->state == SS_CONNECTING && i == 1)
            m = EPOLLOUT;
        else {
            m |= !in->eof && in->len < RELAY_BUF ? EPOLLIN : 0;
            m |= x->state == SS_PUMP && out->len ? EPOLLOUT : 0;
        }
        if (m == x->mask[i])
            continue;
        struct epoll_event ev = {.events = m, .data.ptr = &x->end[i]};
        int op = !m ? EPOLL_CTL_DEL : x->mask[i] ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
        epoll_ctl(s->epfd, op, x->fd[i], &ev);
        x->mask[i] = m;
    }
}

void relay_accept(struct relay_svc *s)
{
    int fd;
    while ((fd = jaccl_sock_accept_nb(s->lfd)) >= 0) {
        struct relay_sess *x = calloc(1, sizeof(*x));
        if (x)
            x->dir[0].buf = malloc(RELAY_BUF), x->dir[1].buf = malloc(RELAY_BUF);
        if (!x || !x->dir[0].buf || !x->dir[1].buf) {
            if (x)
                free(x->dir[0].buf), free(x->dir[1].buf);
            free(x);
            close(fd);
            continue;
        }
        jaccl_sock_tune(fd, 0, 0);
        x->fd[0] = fd;
        x->fd[1] = -1;
        x->end[0] = (struct relay_end){x, 0};
        x->end[1] = (struct relay_end){x, 1};
        x->deadline = jaccl_deadline_ns(s->timeout_ns);
        union jaccl_sockaddr pa;
        socklen_t len = sizeof(pa);
        if (getpeername(fd, &pa.sa, &len) == 0)
            jaccl_sockaddr_str(&pa, x->from, sizeof(x->from));
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &x->end[0]};
        epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev);
        x->mask[0] = EPOLLIN;
        x->next = s->head;
        s->head = x;
        s->sessions++;
        relay_count(+1);
    }
}

/* The preamble read: connect on to the listener it names, from our link on its subnet. */
static int start_onward(struct relay_svc *s, struct relay_sess *x)
{
    int r = jaccl_sock_recv_nb(x->fd[0], x->pre, sizeof(x->pre), &x->pre_got);
    if (r <= 0)
        return r < 0 ? r : 0;
    int via = relay_preamble_decode(x->pre, &x->target) == 0 ? relay_link_to(s, &x->target) : -1;
    if (via < 0) {
        JWARN("relay: %s asked for a relay to an address none of this node's cables reaches",
              x->from);
        return -EPROTO;
    }
    x->fd[1] = jaccl_sock_connect_from_nb(&s->links[via].addr, &x->target);
    if (x->fd[1] < 0)
        return x->fd[1];
    x->state = SS_CONNECTING;
    return 0;
}

static int finish_onward(struct relay_sess *x)
{
    int r = jaccl_sock_connected(x->fd[1]);
    if (r < 0) {
        JINFO(NCCL_NET, "relay: %s asked for %s, which cannot be reached: %s", x->from,
              jaccl_sockaddr_str(&x->target, (char[64]){0}, 64), strerror(-r));
        return r;
    }
    if (r == 1) {
        jaccl_sock_tune(x->fd[1], 0, 0);
        x->state = SS_PUMP;
        x->deadline = 0;
    }
    return 0;
}

/* Reads what side d has into its direction's buffer (a ring), while there is room. */
static int pump_in(struct relay_sess *x, int d)
{
    struct relay_dir *b = &x->dir[d];
    while (!b->eof && b->len < RELAY_BUF) {
        size_t tail = (b->head + b->len) % RELAY_BUF;
        size_t room = tail >= b->head ? RELAY_BUF - tail : b->head - tail;
        if (room > RELAY_BUF - b->len)
            room = RELAY_BUF - b->len;
        ssize_t n = recv(x->fd[d], b->buf + tail, room, MSG_DONTWAIT);
        if (n > 0)
            b->len += (size_t)n;
        else if (n == 0)
            b->eof = 1;
        else if (errno == EINTR)
            continue;
        else
            return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
    }
    return 0;
}

/* Side s is gone after ending its own stream: nothing more is written to it. */
static int retire(struct relay_sess *x, int s)
{
    if (!x->dir[s].eof)
        return -ECONNRESET; /* gone in mid-stream: a failure both ends must see */
    x->dir[1 - s].drop = 1;
    x->dir[1 - s].len = 0;
    return 0;
}

/* Writes side d's buffered bytes to the other side, then passes its end of stream on. */
static int pump_out(struct relay_sess *x, int d)
{
    struct relay_dir *b = &x->dir[d];
    int to = x->fd[1 - d];
    if (b->drop)
        b->len = 0;
    while (b->len) {
        size_t n0 = b->head + b->len > RELAY_BUF ? RELAY_BUF - b->head : b->len;
        ssize_t n = send(to, b->buf + b->head, n0, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n > 0) {
            b->head = (b->head + (size_t)n) % RELAY_BUF;
            b->len -= (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return 0;
        } else {
            return retire(x, 1 - d);
        }
    }
    if (b->eof && !b->shut && !b->drop) {
        shutdown(to, SHUT_WR);
        b->shut = 1;
    }
    return 0;
}

/* Until the onward connection is up only the connector's side is read (its hello waits). */
static int pump(struct relay_sess *x)
{
    for (int d = 0; d < 2; d++) {
        int r = d == 0 || x->state == SS_PUMP ? pump_in(x, d) : 0;
        if (r == 0 && x->state == SS_PUMP)
            r = pump_out(x, d);
        if (r < 0)
            return r;
    }
    int done = 1; /* both streams ended in order (a dropped one: when its side ended it) */
    for (int d = 0; d < 2; d++)
        done &= x->dir[d].shut || (x->dir[d].drop && x->dir[d].eof);
    return done;
}

void relay_sess_event(struct relay_svc *s, void *end, uint32_t events)
{
    struct relay_sess *x = ((struct relay_end *)end)->s;
    if (x->dead)
        return;
    /* (a connect that failed reports an error too: finish_onward says why) */
    int side = ((struct relay_end *)end)->side;
    int r = events & EPOLLERR && x->state != SS_CONNECTING ? retire(x, side) : 0;
    if (r == 0 && x->state == SS_PREAMBLE)
        r = start_onward(s, x);
    else if (r == 0 && x->state == SS_CONNECTING && side == 1)
        r = finish_onward(x);
    if (r == 0 && x->state != SS_PREAMBLE)
        r = pump(x);
    if (r != 0) {
        sess_close(s, x, r < 0);
        return;
    }
    sess_watch(s, x);
}

void relay_sess_expire(struct relay_svc *s)
{
    struct relay_sess *x = s->head;
    while (x) {
        struct relay_sess *next = x->next;
        if (!x->dead && x->deadline && jaccl_expired(x->deadline)) {
            JINFO(NCCL_NET, "relay: connection from %s not set up within the timeout", x->from);
            sess_close(s, x, 1);
        }
        x = next;
    }
}
