/* rpc_fleet.h — channel arguments every gRPC-core client of a shardcheckd fleet uses: the client
 * library (rpc.c) and the loadgen. Kept out of rpc.h, which has no gRPC types. */
#ifndef SC_RPC_FLEET_H
#define SC_RPC_FLEET_H

#include <grpc/grpc.h>
#include <stdbool.h>
#include <stddef.h>

/* Fills out[0] and out[1]: the service config sc_rpc_service_config (retry on UNAVAILABLE,
 * round_robin) and retries enabled. The values are static; returns 2. */
size_t sc_rpc_fleet_args(grpc_arg out[2]);

/* Whether a call that ended with `status` (`details` its message) was cut by the way to the server
 * rather than answered by it, so that sending it again is right for the service's methods (all are
 * pure functions of their request): UNAVAILABLE, or INTERNAL from a stream reset mid-answer (a proxy
 * whose backend died after the response began; gRPC's retry policy cannot retry a call whose response
 * began). Any thread. */
bool sc_rpc_call_cut(int status, const char *details);

#endif
