/* SPDX-License-Identifier: BSD-3-Clause */
/* container_of: from a pointer to a member back to the struct that embeds it. The fabric's
 * objects are heads that each back end embeds first in its own struct (fabric/fabric.h), the
 * CollNet transport embeds algo_xport, and both find their own struct again this way.
 *
 * The unevaluated branch of the conditional makes the compiler check that ptr points to the
 * member's type (a mismatch is a "pointer type mismatch" warning, an error under -Werror), so a
 * wrong conversion does not compile. A NULL ptr is not preserved unless the member is first;
 * callers that may pass NULL test for it. */
#ifndef JACCL_UTIL_CONTAINER_H
#define JACCL_UTIL_CONTAINER_H

#include <stddef.h>

#define jaccl_container_of(ptr, type, member) \
    ((type *)(void *)((char *)(1 ? (ptr) : &((type *)0)->member) - offsetof(type, member)))

/* The same for a member embedded first (the fabric's heads): a plain conversion, so NULL stays
 * NULL (a NULL registration is legal in posts) and no arithmetic is done on it, which UBSan
 * reports. The caller's _Static_assert keeps the member first. */
#define jaccl_head_of(ptr, type, member) ((type *)(void *)(1 ? (ptr) : &((type *)0)->member))

#endif
