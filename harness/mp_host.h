/* SPDX-License-Identifier: BSD-3-Clause */
/* One rank per host: instead of forking every rank locally, this process is one rank of a job
 * spread over several machines (or network namespaces), and the shared region of mp_proc.h is
 * kept in step by a small TCP rendezvous. Rank 0 listens on the root's port; every other rank
 * connects to it. mp_barrier() then becomes an all-gather of each rank's row of the region
 * (its listen handles, flags and values) through rank 0, so code written for forked ranks
 * (publish, barrier, read the peer's handle) runs unchanged. A rank's flags reach the others
 * only at a barrier, never in between.
 *
 * The rank, the rank count and the root come from --rank/--nranks/--root, else from the
 * environment of a launcher (Open MPI: OMPI_COMM_WORLD_RANK/SIZE; MPICH/Hydra: PMI_RANK/SIZE)
 * and JACCL_PERF_ROOT. No MPI library is used. All ranks must run the same binary on the same
 * architecture: rows travel as raw bytes. */
#ifndef MP_HOST_H
#define MP_HOST_H

#include <sys/socket.h>

struct mp_host {
    int rank, nranks;
    char root[256]; /* "HOST:PORT", "[v6addr]:PORT" */
};

/* Takes --rank R, --nranks N and --root HOST:PORT (also --opt=value) out of argv, shifting the
 * rest down and updating *argc, then fills what is missing from the launcher's environment.
 * Returns 1 when this process is one rank of a multi-host job (mp_run then runs only this
 * rank), 0 when none of it was given (ranks are forked as usual), -1 after printing why the
 * settings are incomplete or malformed. */
int mp_host_setup(int *argc, char **argv);

/* Multi-host mode is on (mp_host_setup returned 1). */
int mp_hosted(void);
const struct mp_host *mp_host_get(void);

/* Runs fn as this process's rank under alarm(timeout_s) (mp_run's hosted path): joins the
 * rendezvous on first use, then ends with a barrier that tells every rank whether all passed.
 * 0 if every rank passed, 1 if not. */
int mp_host_run(int nranks, int timeout_s, int (*fn)(int, int, void *), void *arg);

/* The hosted mp_barrier. A rank that finished its body early (failed) or lost the rendezvous
 * makes every other rank report it and exit 1 instead of waiting. */
void mp_host_barrier(void);

/* Where rank r can be reached from the other ranks (the address its rendezvous connection
 * used; loopback when not hosted), for the tools' raw socket anchors. */
void mp_host_addr(int r, struct sockaddr_storage *a, socklen_t *len);
/* The wildcard address of the same family, for a listener the peers reach through
 * mp_host_addr (loopback when not hosted). */
void mp_host_listen_addr(struct sockaddr_storage *a, socklen_t *len);

/* Usage text for the options above (for the tools' own usage). */
void mp_host_usage(void);

#endif
