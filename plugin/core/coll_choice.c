/* SPDX-License-Identifier: BSD-3-Clause */
#include "core/coll_choice.h"

#include "util/param.h"

void coll_choice_init(struct algo_choice *ch, int nranks, int wires)
{
    const char *algo = jaccl_param_str(JP_ALGO); /* one of the algorithms' names, or "auto" */
    ch->wires = wires;
    ch->mesh_max_bytes = (size_t)jaccl_param_int(JP_MESH_MAX_BYTES);
    ch->mesh_max_ranks = (int)jaccl_param_int(JP_MESH_MAX_RANKS);
    ch->rhd_min_bytes = (size_t)jaccl_param_int(JP_RHD_MIN_BYTES);
    ch->rhd_max_bytes = (size_t)jaccl_param_int(JP_RHD_MAX_BYTES);
    ch->force = algo_by_name(algo);
    ch->ring = NULL;                      /* rank order: a switched network */
    ch->usable = algo_wanted(nranks, ch); /* what the cables carry narrows it (coll_connect.c) */
}
