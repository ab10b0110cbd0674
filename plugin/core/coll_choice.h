/* SPDX-License-Identifier: BSD-3-Clause */
/* The algorithm settings of a CollNet group, from the knobs: what a comm connects with and
 * chooses by (core/coll_connect.c), and what the tuner's model chooses by (core/tuner_model.c),
 * so that both ask algo_choose the same question. */
#ifndef JACCL_CORE_COLL_CHOICE_H
#define JACCL_CORE_COLL_CHOICE_H

#include "algo/algo.h"

/* NCCL_JACCL_ALGO and the auto thresholds, for a group of nranks with `wires` ring wires. */
void coll_choice_init(struct algo_choice *ch, int nranks, int wires);

#endif
