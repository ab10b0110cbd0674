/* SPDX-License-Identifier: BSD-3-Clause */
/* Standing receives: credits a lone operation finds already granted.
 *
 * A receiver grants only what it has posted, and an operation posts its receives only once it
 * starts. So an operation that starts alone (the one before it is over and nothing is queued
 * behind it: a caller that waits for each result before it issues the next, as tensor-parallel
 * inference does) sent its credits and waited for the peers' before its first frame could
 * leave: two trips over the wire instead of one. While no operation the comm knows of has
 * receives left to post (coll_sched_quiet), every stream with staging slots keeps up to
 * COLL_STAND receives posted into them on lane 0 (the mesh's, halving-doubling's and the ring's
 * first wire) and grants them with the usual control message, sent while nothing waits for it.
 * The next operation's first frames then leave at once, whatever that operation is.
 *
 * The operation whose receives they turn out to be takes them in order (x_recv in
 * coll_xport.c): one it wants in a staging slot is there already (slot_take hands out the
 * standing receive's slot); one it wants elsewhere (an all-gather frame, for the output) is
 * copied there once both the bytes and the operation have come, and its slot goes back to the
 * stream. A frame that landed before its operation started is checked against the length the
 * operation expects when it takes it.
 *
 * Where the fabric can carry 16 bits with a SEND (post_send_imm: TCP), every lane-0 message
 * carries the sender's own count of receives posted for what the peer sends back on lane 0
 * (coll_x_ride, coll_x_rode): the pairs that exchange data both ways on lane 0 (the mesh,
 * halving-doubling, a two-rank ring) then grant each other the next operation's standing
 * receives with the data of this one, and a lone operation sends nothing but its data. A
 * control message still carries all counts when one goes; the newest count wins. */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "core/coll.h"
#include "util/counters.h"

static char *slot_buf(const struct coll_comm *c, const struct coll_stream *s, int slot)
{
    return c->stage_mem + ((size_t)s->stage * ALGO_SLOTS + (size_t)slot) * ALGO_FRAME_MAX;
}

static int free_slot(const struct coll_stream *s)
{
    for (int i = 0; i < ALGO_SLOTS; i++)
        if (!(s->busy & (1u << i)))
            return i;
    return -1;
}

/* One more standing receive on lane 0 of link li: 1 if posted, 0 if not now. */
static int stand_one(struct coll_comm *c, int li, struct coll_stream *s)
{
    struct coll_link *l = &c->links[li];
    int slot = free_slot(s);
    if (s->nstand >= COLL_STAND || slot < 0 || s->posted - s->landed >= ALGO_POST_MAX)
        return 0;
    int rc = c->ops->post_recv(l->ep, 0, slot_buf(c, s, slot), ALGO_FRAME_MAX,
                               coll_mr_in(c, l->dom, c->stage_mr),
                               COLL_WR(COLL_WR_DRECV, li, 0, s->posted));
    if (rc != 0) {
        coll_x_aside_failed(c, l, rc, "standing receive", ALGO_FRAME_MAX);
        return 0;
    }
    uint32_t i = s->posted % ALGO_POST_MAX;
    s->busy |= (uint8_t)(1u << slot);
    s->stand_slot[i] = (int8_t)slot;
    s->stand_dest[i] = NULL;
    s->exp_len[i] = 0;
    s->posted++;
    s->nstand++;
    return 1;
}

static int may_stand(struct coll_comm *c)
{
    return jaccl_sticky_status(&c->fail) == 0 && !atomic_load(&c->closing) && coll_sched_quiet(c);
}

/* Standing receives for what rank p sends on lane 0: up to `upto` standing at once. */
static void stand_peer(struct coll_comm *c, int p, int upto)
{
    int li = p == c->rank ? -1 : coll_x_link(c, p, 0, 1);
    struct coll_link *l = li >= 0 ? &c->links[li] : NULL;
    if (!l || !l->ep || l->final || l->broken || l->s[0].stage < 0)
        return;
    while (l->s[0].nstand < upto && stand_one(c, li, &l->s[0]))
        ;
}

/* Where grants ride on data, a round posts them only while no operation runs and only where
 * none stands: their grants then need a control message of their own, where a running
 * operation's next lane-0 message to the peer tops the stream up for free (coll_x_ride). */
void coll_x_stand(struct coll_comm *c)
{
    int rides = c->ops->post_send_imm != NULL, upto = rides ? 1 : COLL_STAND;
    if (!may_stand(c) || (rides && c->cur))
        return;
    for (int p = 0; p < c->nranks; p++)
        stand_peer(c, p, upto);
}

uint32_t coll_x_ride(struct coll_comm *c, int peer)
{
    int li = coll_x_link(c, peer, 0, 1);
    if (li < 0)
        return 0; /* peer sends nothing to us on lane 0, nor do we grant it anything there */
    struct coll_stream *s = &c->links[li].s[0];
    if (may_stand(c))
        stand_peer(c, peer, COLL_STAND);
    s->advertised = s->posted; /* the peer learns it with this message: no control message */
    return s->posted & FAB_IMM_MAX;
}

void coll_x_rode(struct coll_comm *c, const struct coll_link *l, uint32_t imm)
{
    int li = l->peer >= 0 ? coll_x_link(c, l->peer, 0, 0) : -1;
    if (li < 0)
        return;
    struct coll_stream *s = &c->links[li].s[0];
    /* 16 bits of a cumulative count: newer by less than half the range, or older (a control
     * message on its own lane overtook it). */
    int16_t d = (int16_t)(uint16_t)(imm - s->granted);
    if (d <= 0)
        return;
    uint32_t g = s->granted + (uint32_t)d;
    if ((int32_t)(g - s->sent) > ALGO_POST_MAX) {
        coll_fail(c, -EPROTO,
                  "rank %d (%s) granted %u receives on lane 0 beyond our %u sends: more than it "
                  "can have posted",
                  l->peer, l->desc, (unsigned)(g - s->sent), (unsigned)s->sent);
        return;
    }
    s->granted = g;
}

int coll_x_stand_slot(struct coll_stream *s)
{
    if (s->claimed >= s->nstand)
        return -1;
    uint32_t idx = s->posted - s->nstand + s->claimed++;
    return s->stand_slot[idx % ALGO_POST_MAX];
}

/* Standing receive idx was taken and has landed: its length is checked, and its bytes go where
 * the operation wants them (and its slot back to the stream) unless they are there already. */
static int finish(struct coll_comm *c, struct coll_link *l, struct coll_stream *s, uint32_t idx)
{
    uint32_t i = idx % ALGO_POST_MAX;
    int slot = s->stand_slot[i];
    s->stand_slot[i] = -1;
    if (s->got_len[i] != s->exp_len[i])
        return coll_x_bad_len(c, l, 0, s->got_len[i], s->exp_len[i], idx);
    if (s->stand_dest[i]) {
        memcpy(s->stand_dest[i], slot_buf(c, s, slot), s->got_len[i]);
        jaccl_count(JACCL_CNT_STAGE_BYTES, s->got_len[i]);
        s->busy &= (uint8_t) ~(1u << slot);
    }
    return 0;
}

int coll_x_stand_take(struct coll_comm *c, struct coll_link *l, struct coll_stream *s, char *buf,
                      size_t len)
{
    uint32_t idx = s->posted - s->nstand, i = idx % ALGO_POST_MAX;
    char *in_slot = slot_buf(c, s, s->stand_slot[i]);
    int claimed = s->claimed > 0;
    /* The slot is the operation's if slot_take gave it out (it gives it back once it is done
     * with the frame), else the stream's until the bytes are copied out. */
    if (claimed != (buf == in_slot))
        return coll_fail(c, -EFAULT,
                         "a standing receive on lane 0 from rank %d (%s) was taken "
                         "for a buffer that is not its slot (internal error)",
                         l->peer, l->desc);
    s->claimed -= (uint8_t)claimed;
    s->nstand--;
    s->exp_len[i] = (uint32_t)len;
    s->stand_dest[i] = claimed ? NULL : buf;
    if ((int32_t)(idx - s->landed) < 0)
        return finish(c, l, s, idx);
    return 0;
}

int coll_x_stand_landed(struct coll_comm *c, struct coll_link *l, struct coll_stream *s,
                        uint32_t idx, uint32_t len)
{
    s->got_len[idx % ALGO_POST_MAX] = len;
    if ((int32_t)(idx - coll_x_aposted(s)) < 0)
        return finish(c, l, s, idx); /* taken already: the operation waits for it */
    return 0;
}
