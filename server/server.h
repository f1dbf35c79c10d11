/* server.h — the gRPC core <-> libuv glue of shardcheckd.
 *
 *  gRPC I/O ──► [CQ thread] grpc_completion_queue_next ──► mutex FIFO + uv_async_send
 *                   (re-arms call requests at once)              │
 *                                                  [loop thread] owns every call's state;
 *                                                  cheap handlers inline, Check via uv_queue_work
 *                                                                │
 *                                                  [pool thread] check_run(): decode, sc_check,
 *                                                  render, encode ──► after_work on the loop sends
 *
 * Every completion-queue tag points at an `ev` header whose kind says what completed. A call has at
 * most one "main" batch in flight plus its RECV_CLOSE_ON_SERVER batch (started on arrival, so a
 * client cancel or an expired deadline is seen at once and stops the analysis through
 * sc_options.cancel). All batches start on the loop thread, and none after the completion queue
 * began shutting down. */
#ifndef SRV_SERVER_H
#define SRV_SERVER_H

#include <uv.h>

#include "config.h"

typedef struct srv srv;

/* Creates the gRPC server, registers the methods and binds cfg->listen (*port = bound port).
 * NULL with a malloc'd message in *err. */
srv *srv_new(uv_loop_t *loop, const srv_config *cfg, int *port, char **err);
/* Starts serving: the CQ thread and the armed call requests. */
void srv_start(srv *s);
/* SIGTERM/SIGINT: stop accepting, report NOT_SERVING, let accepted calls finish within grace_ms,
 * then cancel the rest. A second call cancels at once. `done` runs on the loop when everything is
 * released (the server and its completion queue are destroyed by then). */
void srv_drain(srv *s, void (*done)(void *), void *arg);
/* SIGHUP: applies the settings a running server can change (limits, queue bound, cache, log level). */
void srv_reload(srv *s, const srv_config *cfg);
/* Prometheus text; malloc'd (metrics_text.c). Loop thread. */
char *srv_metrics_text(void *s);
/* Releases the server once srv_drain's `done` ran (loop thread). */
void srv_free(srv *s);

#endif
