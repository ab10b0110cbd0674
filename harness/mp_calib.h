/* SPDX-License-Identifier: BSD-3-Clause */
/* The link between ring neighbours as jaccl's own point-to-point path sees it: what the tuner's
 * model needs to know about a link it cannot read from a device (TCP over loopback, a NIC whose
 * nominal speed is not what a rank gets). jaccl-coll-perf -P -c measures it in every round. */
#ifndef MP_CALIB_H
#define MP_CALIB_H

struct mp_calib {
    double hop_s;    /* one small message's one-way time, passed around the ring */
    double link_Bps; /* bytes per second each rank sends, and receives, while every rank
                      * exchanges large messages with its two neighbours at once */
    double mem_Bps;  /* the same, the messages taken in turn from buffers far larger than the
                      * cache, as a large operation's are */
};

/* A rank's body (mp_rank_fn): every rank of the run connects to its ring neighbours through the
 * net table of `version` (arg: a struct mp_calib_run), measures, and rank 0 writes the slowest
 * rank's figures into run->out. */
struct mp_calib_run {
    int version;
    int lanes;            /* NCCL_JACCL_NSOCKS for the run (0: the knob's own value) */
    struct mp_calib *out; /* shared memory: written by rank 0 */
};
int mp_calib_rank(int rank, int nranks, void *arg);

#endif
