/* SPDX-License-Identifier: BSD-3-Clause */
/* The pointers NCCL holds for CollNet comms and listeners: a small header (what the generic
 * regMr / deregMr read) in front of the comm or listener. Registered while the object is live;
 * closing unregisters the handle, releases the memory handles NCCL left on it and frees it, so
 * a later call with that pointer is refused by the registry (core/registry.h). */
#include <stdlib.h>

#include "core/coll.h"
#include "core/registry.h"
#include "util/log.h"

struct coll_handle *coll_handle_new(uint32_t kind, void *obj)
{
    struct coll_handle *h = calloc(1, sizeof(*h));
    if (!h)
        return NULL;
    h->hdr.kind = kind;
    h->obj = obj;
    if (jaccl_reg_add(h, sizeof(*h), 1, kind == COMM_COLL ? JO_COLL : JO_COLL_LISTEN, obj) != 0) {
        free(h);
        return NULL;
    }
    return h;
}

void *coll_handle_obj(void *p, uint32_t kind, const char *what)
{
    struct coll_handle *h = (struct coll_handle *)jaccl_comm_check(p, kind, what);
    return h ? h->obj : NULL;
}

void *coll_handle_take(void *p, uint32_t kind, const char *what)
{
    struct coll_handle *h = (struct coll_handle *)jaccl_comm_take(p, kind, what);
    return h ? h->obj : NULL;
}

void coll_handle_kill(struct coll_handle *h)
{
    jaccl_reg_del(h);
    jaccl_mr_drop_all(&h->hdr);
    free(h);
}
