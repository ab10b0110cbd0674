/* The pointers NCCL holds for CollNet comms. They outlive the comm they name: closing frees the
 * comm but only marks its handle dead, so a later call with that pointer gets a WARN and an error
 * instead of reading freed memory. Handles stay on a list (a few dozen bytes per comm ever made),
 * which also keeps leak checkers quiet. */
#include <pthread.h>
#include <stdlib.h>

#include "core/coll.h"
#include "util/log.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct coll_handle *g_handles;

struct coll_handle *coll_handle_new(uint32_t kind, void *obj)
{
    struct coll_handle *h = calloc(1, sizeof(*h));
    if (!h)
        return NULL;
    h->hdr.kind = kind;
    h->obj = obj;
    pthread_mutex_lock(&g_lock);
    h->next = g_handles;
    g_handles = h;
    pthread_mutex_unlock(&g_lock);
    return h;
}

void *coll_handle_obj(void *p, uint32_t kind, const char *what)
{
    struct coll_handle *h = p;
    if (!jaccl_comm_check(p, kind, what))
        return NULL;
    if (!h->obj) {
        JWARN("%s: comm %p was already closed", what, p);
        return NULL;
    }
    return h->obj;
}

void coll_handle_kill(struct coll_handle *h)
{
    h->hdr.kind = JC_DEAD;
    h->obj = NULL;
}
