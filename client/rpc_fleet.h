/* rpc_fleet.h — channel arguments every gRPC-core client of a shardcheckd fleet uses: the client
 * library (rpc.c) and the loadgen. Kept out of rpc.h, which has no gRPC types. */
#ifndef SC_RPC_FLEET_H
#define SC_RPC_FLEET_H

#include <grpc/grpc.h>
#include <stddef.h>

/* Fills out[0] and out[1]: the service config sc_rpc_service_config (retry on UNAVAILABLE,
 * round_robin) and retries enabled. The values are static; returns 2. */
size_t sc_rpc_fleet_args(grpc_arg out[2]);

#endif
