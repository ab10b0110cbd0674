/* SPDX-License-Identifier: BSD-3-Clause */
/* tcp-zerocopy: does MSG_ZEROCOPY pay for the TCP back end's large frames on this host?
 *
 *   tcp-zerocopy [-b 64K] [-e 4M] [-t SEC] [HOST]    (default 127.0.0.1, loopback)
 *
 * A forked receiver reads a TCP_NODELAY stream dry; the sender writes frames of each size for
 * SEC seconds (default 1), first with plain sendmsg(), then with sendmsg(MSG_ZEROCOPY), reaping
 * the completions from the error queue and reusing a buffer only once the kernel let go of it,
 * as the back end would have to. It prints GB/s and the CPU seconds both processes used per GB
 * (the cost that counts when the cores are the limit), and the share of zerocopy sends the
 * kernel reported as copied anyway (SO_EE_CODE_ZEROCOPY_COPIED: always the case on loopback,
 * where the receiving socket gets the pages only through a copy). */
#define _GNU_SOURCE
#include <errno.h>
#include <time.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY 60
#endif
#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY 0x4000000
#endif

#define NBUF 8 /* frames that may be in flight (zerocopy: not yet released by the kernel) */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_s(int who)
{
    struct rusage ru;
    getrusage(who, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static size_t size_arg(const char *s)
{
    char *end;
    size_t v = strtoull(s, &end, 0);
    return v << (*end == 'K' ? 10 : *end == 'M' ? 20 : 0);
}

/* The receiver: reads until EOF, then exits with its CPU time reported through the pipe. */
static void sink(int lfd, int report)
{
    int fd = accept(lfd, NULL, NULL);
    static char buf[1 << 20];
    while (fd >= 0 && read(fd, buf, sizeof(buf)) > 0) {
    }
    double c = cpu_s(RUSAGE_SELF);
    if (write(report, &c, sizeof(c)) != sizeof(c))
        _exit(1);
    _exit(0);
}

struct zc {
    uint32_t sent, done; /* zerocopy sends issued / released by the kernel */
    uint64_t copied;     /* released with SO_EE_CODE_ZEROCOPY_COPIED */
};

/* Reaps zerocopy completions; blocks (poll) when `wait` and some are pending. */
static int reap(int fd, struct zc *z, int wait)
{
    char ctrl[128];
    while (z->done < z->sent) {
        struct msghdr mh = {.msg_control = ctrl, .msg_controllen = sizeof(ctrl)};
        if (recvmsg(fd, &mh, MSG_ERRQUEUE) < 0) {
            if (errno != EAGAIN || !wait)
                return errno == EAGAIN ? 0 : -1;
            struct pollfd p = {.fd = fd, .events = 0};
            poll(&p, 1, 100);
            continue;
        }
        for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
            struct sock_extended_err *e = (struct sock_extended_err *)(void *)CMSG_DATA(cm);
            if (e->ee_origin != SO_EE_ORIGIN_ZEROCOPY)
                continue;
            uint32_t n = e->ee_data - e->ee_info + 1; /* a range of send numbers */
            z->done += n;
            if (e->ee_code & SO_EE_CODE_ZEROCOPY_COPIED)
                z->copied += n;
        }
    }
    return 0;
}

static int send_all(int fd, const char *p, size_t len, int flags)
{
    while (len) {
        ssize_t n = send(fd, p, len, flags);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            if (errno == ENOBUFS || errno == EAGAIN) {
                struct pollfd pf = {.fd = fd, .events = POLLOUT};
                poll(&pf, 1, 100);
                continue;
            }
            return -1;
        }
        p += n;
        len -= (size_t)n;
        flags &= ~MSG_DONTWAIT;
    }
    return 0;
}

/* One measurement: GB/s and CPU s per GB of both processes, and the copied share. */
static int measure(const char *host, size_t size, double secs, int zerocopy, char **bufs)
{
    int lfd = socket(AF_INET, SOCK_STREAM, 0), one = 1, pfd[2];
    struct sockaddr_in a = {.sin_family = AF_INET};
    socklen_t al = sizeof(a);
    inet_pton(AF_INET, host, &a.sin_addr);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) || listen(lfd, 1) ||
        getsockname(lfd, (struct sockaddr *)&a, &al) || pipe(pfd))
        return -1;
    pid_t pid = fork();
    if (pid == 0)
        sink(lfd, pfd[1]);
    close(lfd);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (zerocopy && setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one)) != 0) {
        fprintf(stderr, "SO_ZEROCOPY: %s\n", strerror(errno));
        return -1;
    }
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0)
        return -1;
    struct zc z = {0};
    double c0 = cpu_s(RUSAGE_SELF), t0 = now(), t;
    uint64_t bytes = 0;
    for (uint32_t i = 0; (t = now()) - t0 < secs; i++) {
        if (zerocopy) {
            /* frame i reuses buffer i % NBUF: wait until the kernel released it */
            while (z.sent - z.done >= NBUF)
                if (reap(fd, &z, 1) != 0)
                    return -1;
            if (send_all(fd, bufs[i % NBUF], size, MSG_ZEROCOPY) != 0)
                return -1;
            z.sent++;
            reap(fd, &z, 0);
        } else if (send_all(fd, bufs[i % NBUF], size, 0) != 0) {
            return -1;
        }
        bytes += size;
    }
    if (zerocopy && reap(fd, &z, 1) != 0)
        return -1;
    double wall = now() - t0, cpu = cpu_s(RUSAGE_SELF) - c0, peer = 0;
    shutdown(fd, SHUT_WR);
    if (read(pfd[0], &peer, sizeof(peer)) != sizeof(peer))
        return -1;
    waitpid(pid, NULL, 0);
    close(fd);
    close(pfd[0]);
    close(pfd[1]);
    double gb = (double)bytes / 1e9;
    printf(" %8.2f %8.3f", gb / wall, (cpu + peer) / gb);
    if (zerocopy)
        printf(" %7.0f%%", z.sent ? 100.0 * (double)z.copied / z.sent : 0.0);
    return 0;
}

int main(int argc, char **argv)
{
    size_t lo = 64 << 10, hi = 4 << 20;
    double secs = 1;
    int c;
    while ((c = getopt(argc, argv, "b:e:t:")) != -1) {
        if (c == 'b')
            lo = size_arg(optarg);
        else if (c == 'e')
            hi = size_arg(optarg);
        else if (c == 't')
            secs = atof(optarg);
        else
            return fprintf(stderr, "usage: %s [-b min] [-e max] [-t sec] [host]\n", argv[0]), 2;
    }
    const char *host = optind < argc ? argv[optind] : "127.0.0.1";
    char *bufs[NBUF];
    for (int i = 0; i < NBUF; i++) {
        if (!(bufs[i] = malloc(hi)))
            return 1;
        memset(bufs[i], i, hi);
    }
    signal(SIGPIPE, SIG_IGN);
    printf("# TCP stream to %s, %.1f s per cell; cpu = CPU seconds of sender + receiver per GB\n",
           host, secs);
    printf("#     size copy_GB/s copy_cpu  zc_GB/s   zc_cpu  copied\n");
    for (size_t s = lo; s <= hi; s *= 2) {
        printf("%10zu", s);
        fflush(stdout);
        if (measure(host, s, secs, 0, bufs) || measure(host, s, secs, 1, bufs))
            return printf("\nfailed: %s\n", strerror(errno)), 1;
        printf("\n");
    }
    for (int i = 0; i < NBUF; i++)
        free(bufs[i]);
    return 0;
}
