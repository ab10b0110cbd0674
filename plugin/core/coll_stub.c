/* CollNet entry points until the collective algorithms land: the tables exist with the same
 * devices as the net tables, devices() reports 0 so NCCL never routes a collective here, and
 * every operation fails loudly instead of pretending. */
#include "abi/api.h"
#include "util/log.h"

#define MISSING(op)                                                                            \
    do {                                                                                       \
        JWARN("CollNet %s is not implemented in this build", op);                              \
        return ncclInternalError;                                                              \
    } while (0)

ncclResult_t jaccl_coll_init(void **ctx, uint64_t commId, ncclDebugLogger_t logFunction)
{
    return jaccl_init(ctx, commId, NULL, logFunction, NULL);
}

ncclResult_t jaccl_coll_finalize(void *ctx)
{
    return jaccl_finalize(ctx);
}

ncclResult_t jaccl_coll_devices(int *ndev)
{
    if (!ndev)
        return ncclInvalidArgument;
    *ndev = 0;
    return ncclSuccess;
}

ncclResult_t jaccl_coll_listen(void *ctx, int dev, void *handle, void **listenComm)
{
    MISSING("listen");
}

ncclResult_t jaccl_coll_connect(void *handles[], int nranks, int rank, void *listenComm,
                                void **collComm)
{
    MISSING("connect");
}

ncclResult_t jaccl_coll_reduce_support(ncclDataType_t dataType, ncclRedOp_t redOp,
                                       int *supported)
{
    if (supported)
        *supported = 0;
    return ncclSuccess;
}

ncclResult_t jaccl_coll_reg_mr(void *collComm, void *data, size_t size, int type,
                               void **mhandle)
{
    MISSING("regMr");
}

ncclResult_t jaccl_coll_dereg_mr(void *collComm, void *mhandle)
{
    MISSING("deregMr");
}

ncclResult_t jaccl_coll_iallreduce(void *collComm, void *sendData, void *recvData, size_t count,
                                   ncclDataType_t dataType, ncclRedOp_t redOp, void *sendMhandle,
                                   void *recvMhandle, void **request)
{
    MISSING("iallreduce");
}

ncclResult_t jaccl_coll_iallgather(void *collComm, void *sendData, int nRecvParts,
                                   ncclNetSGE_v11_t *recvParts, size_t bytesPerRank,
                                   size_t windowOffset, size_t windowBytes, void *sendMhandle,
                                   void **request)
{
    MISSING("iallgather");
}

ncclResult_t jaccl_coll_ireducescatter(void *collComm, int nSendParts,
                                       ncclNetSGE_v11_t *sendParts, void *recvData,
                                       size_t bytesPerRank, size_t windowOffset,
                                       size_t windowBytes, ncclDataType_t dataType,
                                       ncclRedOp_t redOp, void *recvMhandle, void **request)
{
    MISSING("ireducescatter");
}

ncclResult_t jaccl_coll_iflush(void *collComm, void *data, int size, void *mhandle,
                               void **request)
{
    MISSING("iflush");
}

ncclResult_t jaccl_coll_test(void *request, int *done, int *size)
{
    MISSING("test");
}

ncclResult_t jaccl_coll_close(void *collComm)
{
    MISSING("closeColl");
}

ncclResult_t jaccl_coll_close_listen(void *listenComm)
{
    MISSING("closeListen");
}
