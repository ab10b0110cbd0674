/* SPDX-License-Identifier: BSD-3-Clause */
/* mpi-coll: the Open MPI anchor for jaccl-coll-perf, in the same columns.
 *
 *   mpirun -np N mpi-coll allreduce|reducescatter|allgather [-b 4K] [-e 256M] [-f 4] [-n iters]
 *
 * float32 sum, out of place: MPI_Allreduce, MPI_Reduce_scatter_block, MPI_Allgather. size is
 * the whole vector (all-reduce), the nranks * per-rank input (reduce-scatter) or output
 * (all-gather); time is the slowest rank's mean; busbw as nccl-tests (2(n-1)/n or (n-1)/n);
 * cpu(us) the CPU time of all ranks per operation (getrusage of each rank over the timed
 * operations, summed), as jaccl-coll-perf's last columns.
 * Built by tools/coll-perf.sh with mpicc, outside the Makefile. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

struct opts {
    int kind, iters;
    size_t min_bytes, max_bytes, factor;
};

static float value(int r, size_t j)
{
    return (float)((int)((j * 7 + (size_t)r * 3) % 13) - 6);
}

static size_t size_arg(const char *s)
{
    char *end;
    size_t v = strtoull(s, &end, 0);
    return v << (*end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 0);
}

static int iters_for(const struct opts *o, size_t size)
{
    if (o->iters > 0)
        return o->iters;
    size_t n = (256u << 20) / (size ? size : 1);
    return n < 5 ? 5 : n > 200 ? 200 : (int)n;
}

static void run_op(int kind, float *s, float *r, size_t pr)
{
    if (kind == 0)
        MPI_Allreduce(s, r, (int)pr, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    else if (kind == 1)
        MPI_Reduce_scatter_block(s, r, (int)pr, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    else
        MPI_Allgather(s, (int)pr, MPI_FLOAT, r, (int)pr, MPI_FLOAT, MPI_COMM_WORLD);
}

static long check(int kind, const float *r, size_t pr, int rank, int P)
{
    size_t n = kind == 2 ? pr * (size_t)P : pr;
    long wrong = 0;
    for (size_t i = 0; i < n; i++) {
        float want = 0;
        if (kind == 2)
            want = value((int)(i / pr), i);
        else
            for (int q = 0; q < P; q++)
                want += value(q, kind == 1 ? (size_t)rank * pr + i : i);
        wrong += r[i] != want;
    }
    return wrong;
}

/* This process's CPU seconds so far, all its threads. */
static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
           ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6;
}

static void one_size(const struct opts *o, float *s, float *r, size_t size, int rank, int P)
{
    size_t pr = o->kind == 0 ? size / 4 : size / 4 / (size_t)P;
    size_t real = o->kind == 0 ? pr * 4 : pr * 4 * (size_t)P;
    size_t n = o->kind == 1 ? pr * (size_t)P : pr, base = o->kind == 2 ? (size_t)rank * pr : 0;
    for (size_t i = 0; i < n; i++)
        s[i] = value(rank, base + i);
    int iters = iters_for(o, real);
    for (int i = 0; i < 3; i++)
        run_op(o->kind, s, r, pr);
    MPI_Barrier(MPI_COMM_WORLD);
    double c0 = cpu_seconds(), t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        run_op(o->kind, s, r, pr);
    double t = (MPI_Wtime() - t0) / iters, tmax;
    double cpu = (cpu_seconds() - c0) / iters, cpu_all;
    long wrong = check(o->kind, r, pr, rank, P), total;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&cpu, &cpu_all, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&wrong, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        double algbw = (double)real / tmax / 1e9;
        double busbw = algbw * (o->kind == 0 ? 2.0 * (P - 1) / P : (double)(P - 1) / P);
        printf("%12zu %12zu %8s %6s %10.1f %7.2f %7.2f %6ld %10.1f\n", real, real / 4, "float",
               o->kind == 2 ? "none" : "sum", tmax * 1e6, algbw, busbw, total, cpu_all * 1e6);
        fflush(stdout);
    }
}

int main(int argc, char **argv)
{
    static const char *const modes[] = {"allreduce", "reducescatter", "allgather"};
    struct opts o = {.kind = -1, .min_bytes = 4096, .max_bytes = 256u << 20, .factor = 4};
    int rank, P, c;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    for (int i = 0; argc > 1 && i < 3; i++)
        if (strcmp(argv[1], modes[i]) == 0)
            o.kind = i;
    optind = 2;
    while ((c = getopt(argc, argv, "b:e:f:n:")) != -1) {
        if (c == 'b')
            o.min_bytes = size_arg(optarg);
        else if (c == 'e')
            o.max_bytes = size_arg(optarg);
        else if (c == 'f')
            o.factor = size_arg(optarg);
        else if (c == 'n')
            o.iters = atoi(optarg);
    }
    if (o.kind < 0 || o.factor < 2) {
        if (rank == 0)
            fprintf(stderr,
                    "usage: mpi-coll allreduce|reducescatter|allgather [-b] [-e] [-f] [-n]\n");
        MPI_Finalize();
        return 2;
    }
    float *s = malloc(o.max_bytes), *r = malloc(o.max_bytes);
    if (rank == 0) {
        printf("# Open MPI %s, %d ranks\n", modes[o.kind], P);
        printf("#%11s %12s %8s %6s %10s %7s %7s %6s %10s\n", "size", "count", "type", "redop",
               "time(us)", "algbw", "busbw", "#wrong", "cpu(us)");
    }
    for (size_t size = o.min_bytes; size <= o.max_bytes; size *= o.factor)
        one_size(&o, s, r, size, rank, P);
    free(s);
    free(r);
    MPI_Finalize();
    return 0;
}
