/* Domains and memory registrations. TCP needs no pinning, but the table is what makes a bad
 * WRITE_IMM (wrong key, outside the buffer, after dereg) fail here as it would on verbs,
 * instead of silently scribbling over memory. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "fabric/tcp/tcp_int.h"
#include "util/log.h"

#define TCP_MR_BUCKETS0 64

/* Keys: a process-wide counter, offset by a random seed and passed through a bijective mixer,
 * so they are unique for the life of the process and a stale or forged key is unlikely to
 * name a live registration. */
static atomic_uint_fast64_t g_key_ctr;
static uint64_t g_key_seed;
static pthread_once_t g_key_once = PTHREAD_ONCE_INIT;

static void tcp_key_seed(void)
{
    if (getrandom(&g_key_seed, sizeof(g_key_seed), GRND_NONBLOCK) != sizeof(g_key_seed))
        g_key_seed = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
}

/* splitmix64's finaliser: xor-shifts and odd multiplies, each invertible. */
static uint64_t tcp_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t tcp_key_next(void)
{
    uint64_t k;

    pthread_once(&g_key_once, tcp_key_seed);
    do {
        k = tcp_mix64(g_key_seed + atomic_fetch_add(&g_key_ctr, 1));
    } while (k == 0); /* 0 stays free to mean "no key" */
    return k;
}

static size_t tcp_bucket(const struct fab_domain *d, uint64_t key)
{
    return (size_t)(key & (d->nbucket - 1)); /* keys are already well mixed */
}

int fab_tcp_domain_open(int dev, struct fab_domain **out)
{
    struct fab_domain *d = calloc(1, sizeof(*d));

    if (!d)
        return -ENOMEM;
    d->bucket = calloc(TCP_MR_BUCKETS0, sizeof(*d->bucket));
    if (!d->bucket) {
        free(d);
        return -ENOMEM;
    }
    d->nbucket = TCP_MR_BUCKETS0;
    d->dev = dev;
    pthread_mutex_init(&d->mu, NULL);
    pthread_cond_init(&d->idle, NULL);
    *out = d;
    return 0;
}

void fab_tcp_domain_close(struct fab_domain *dom)
{
    if (!dom)
        return;
    if (dom->nmr)
        JWARN("TCP fabric: domain of device %d closed with %zu registration(s) left", dom->dev,
              dom->nmr);
    pthread_cond_destroy(&dom->idle);
    pthread_mutex_destroy(&dom->mu);
    free(dom->bucket);
    free(dom);
}

/* Keeps chains short as registrations pile up; a failed grow just leaves them longer. */
static void tcp_mr_grow(struct fab_domain *d)
{
    size_t n = d->nbucket * 2;
    struct fab_mr **b = calloc(n, sizeof(*b));

    if (!b)
        return;
    for (size_t i = 0; i < d->nbucket; i++) {
        for (struct fab_mr *m = d->bucket[i], *next; m; m = next) {
            next = m->next;
            m->next = b[m->key & (n - 1)];
            b[m->key & (n - 1)] = m;
        }
    }
    free(d->bucket);
    d->bucket = b;
    d->nbucket = n;
}

int fab_tcp_mr_reg(struct fab_domain *dom, void *addr, size_t len, struct fab_mr **out)
{
    struct fab_mr *mr = calloc(1, sizeof(*mr));
    size_t b;

    if (!mr)
        return -ENOMEM;
    if ((uintptr_t)addr + len < (uintptr_t)addr) {
        free(mr);
        return -EINVAL;
    }
    mr->dom = dom;
    mr->addr = addr;
    mr->len = len;
    mr->key = tcp_key_next();
    pthread_mutex_lock(&dom->mu);
    if (dom->nmr >= dom->nbucket * 2)
        tcp_mr_grow(dom);
    b = tcp_bucket(dom, mr->key);
    mr->next = dom->bucket[b];
    dom->bucket[b] = mr;
    dom->nmr++;
    pthread_mutex_unlock(&dom->mu);
    *out = mr;
    return 0;
}

/* Unlinks first, so no new write can pin it, then waits for writes landing right now. */
void fab_tcp_mr_dereg(struct fab_mr *mr)
{
    struct fab_domain *d;
    struct fab_mr **pp;

    if (!mr)
        return;
    d = mr->dom;
    pthread_mutex_lock(&d->mu);
    for (pp = &d->bucket[tcp_bucket(d, mr->key)]; *pp; pp = &(*pp)->next) {
        if (*pp == mr) {
            *pp = mr->next;
            d->nmr--;
            break;
        }
    }
    while (mr->busy)
        pthread_cond_wait(&d->idle, &d->mu);
    pthread_mutex_unlock(&d->mu);
    free(mr);
}

struct fab_remote_buf fab_tcp_mr_remote(struct fab_mr *mr, void *addr)
{
    struct fab_remote_buf r = {.addr = (uint64_t)(uintptr_t)addr, .rkey = mr->key};

    return r;
}

static int tcp_range_in(const struct fab_mr *mr, uint64_t addr, size_t len)
{
    uint64_t base = (uint64_t)(uintptr_t)mr->addr;

    return addr >= base && len <= mr->len && addr - base <= mr->len - len;
}

int fab_tcp_mr_pin(struct fab_domain *dom, uint64_t key, uint64_t addr, size_t len,
                   struct fab_mr **out)
{
    struct fab_mr *m;

    pthread_mutex_lock(&dom->mu);
    for (m = dom->bucket[tcp_bucket(dom, key)]; m; m = m->next)
        if (m->key == key)
            break;
    if (!m || !tcp_range_in(m, addr, len)) {
        pthread_mutex_unlock(&dom->mu);
        return -EACCES;
    }
    m->busy++;
    pthread_mutex_unlock(&dom->mu);
    *out = m;
    return 0;
}

void fab_tcp_mr_unpin(struct fab_mr *mr)
{
    struct fab_domain *d = mr->dom;

    pthread_mutex_lock(&d->mu);
    if (--mr->busy == 0)
        pthread_cond_broadcast(&d->idle);
    pthread_mutex_unlock(&d->mu);
}

int fab_tcp_mr_check_local(struct fab_domain *dom, struct fab_mr *mr, const void *buf, size_t len)
{
    if (!mr)
        return 0; /* unregistered local buffers are fine over TCP */
    if (mr->dom != dom || !tcp_range_in(mr, (uint64_t)(uintptr_t)buf, len))
        return -EINVAL;
    return 0;
}
