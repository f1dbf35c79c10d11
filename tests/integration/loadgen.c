/* loadgen.c — closed-loop load for shardcheckd's Check: C calls always in flight over K channels,
 * until N calls finished; prints one JSON line (rate, latency percentiles, status counts).
 *
 *   loadgen HOST:PORT FILE [-c CONCURRENCY] [-n REQUESTS] [-k CHANNELS] [--unique]
 *
 * --unique gives every request its own file name, so no request is answered from the result cache
 * (the name is part of the report and of the cache key): every call runs the analysis.
 * Channels use the client library's service config (client/rpc.c): calls are retried on UNAVAILABLE,
 * so a fleet replica that dies mid-run costs retries, not failed calls. */
#include <grpc/byte_buffer.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rpc_fleet.h"
#include "shardcheck/v1/shardcheck.pb-c.h"

typedef struct {
  grpc_call *call;
  grpc_metadata_array md0, md1;
  grpc_byte_buffer *req, *resp;
  grpc_status_code status;
  grpc_slice details;
  const char *error_string;
  double t0;
} slot;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static char *module_data;
static size_t module_len;
static const char *module_name;
static int unique;

static grpc_byte_buffer *request(long i) {
  char name[512];
  snprintf(name, sizeof name, unique ? "%s#%ld" : "%s", module_name, i);
  Shardcheck__V1__CheckRequest req = SHARDCHECK__V1__CHECK_REQUEST__INIT;
  req.module.data = (uint8_t *)module_data;
  req.module.len = module_len;
  req.file_name = name;
  size_t n = protobuf_c_message_get_packed_size(&req.base);
  uint8_t *buf = malloc(n);
  protobuf_c_message_pack(&req.base, buf);
  grpc_slice s = grpc_slice_new(buf, n, free);
  grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&s, 1);
  grpc_slice_unref(s);
  return bb;
}

static void start(slot *s, grpc_channel *ch, grpc_completion_queue *cq, long i) {
  memset(s, 0, sizeof *s);
  grpc_metadata_array_init(&s->md0);
  grpc_metadata_array_init(&s->md1);
  s->details = grpc_empty_slice();
  s->req = request(i);
  grpc_slice m = grpc_slice_from_static_string("/shardcheck.v1.ShardCheck/Check");
  s->call = grpc_channel_create_call(ch, NULL, 0, cq, m, NULL, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
  grpc_slice_unref(m);
  grpc_op ops[6];
  memset(ops, 0, sizeof ops);
  ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
  ops[1].op = GRPC_OP_SEND_MESSAGE;
  ops[1].data.send_message.send_message = s->req;
  ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
  ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
  ops[3].data.recv_initial_metadata.recv_initial_metadata = &s->md0;
  ops[4].op = GRPC_OP_RECV_MESSAGE;
  ops[4].data.recv_message.recv_message = &s->resp;
  ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
  ops[5].data.recv_status_on_client.trailing_metadata = &s->md1;
  ops[5].data.recv_status_on_client.status = &s->status;
  ops[5].data.recv_status_on_client.status_details = &s->details;
  ops[5].data.recv_status_on_client.error_string = &s->error_string;
  s->t0 = now_s();
  if (grpc_call_start_batch(s->call, ops, 6, s, NULL) != GRPC_CALL_OK) {
    fprintf(stderr, "loadgen: start_batch failed\n");
    exit(2);
  }
}

static void release(slot *s) {
  grpc_metadata_array_destroy(&s->md0);
  grpc_metadata_array_destroy(&s->md1);
  grpc_byte_buffer_destroy(s->req);
  if (s->resp)
    grpc_byte_buffer_destroy(s->resp);
  grpc_slice_unref(s->details);
  gpr_free((void *)s->error_string);
  grpc_call_unref(s->call);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: loadgen HOST:PORT FILE [-c C] [-n N] [-k CHANNELS] [--unique]\n");
    return 2;
  }
  long conc = 16, total = 2000, nch = 1;
  for (int i = 3; i < argc; i++) {
    if (!strcmp(argv[i], "-c") && i + 1 < argc)
      conc = atol(argv[++i]);
    else if (!strcmp(argv[i], "-n") && i + 1 < argc)
      total = atol(argv[++i]);
    else if (!strcmp(argv[i], "-k") && i + 1 < argc)
      nch = atol(argv[++i]);
    else if (!strcmp(argv[i], "--unique"))
      unique = 1;
  }
  if (conc < 1 || total < 1 || nch < 1)
    return 2;
  module_name = argv[2];
  FILE *f = fopen(argv[2], "rb");
  if (!f) {
    perror(argv[2]);
    return 2;
  }
  fseek(f, 0, SEEK_END);
  module_len = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  module_data = malloc(module_len + 1);
  if (fread(module_data, 1, module_len, f) != module_len)
    return 2;
  fclose(f);

  grpc_init();
  grpc_channel **ch = calloc((size_t)nch, sizeof *ch);
  for (long k = 0; k < nch; k++) {
    grpc_arg args[4];
    memset(args, 0, sizeof args);
    args[0].type = GRPC_ARG_INTEGER; /* a TCP connection per channel */
    args[0].key = (char *)GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL;
    args[0].value.integer = 1;
    args[1].type = GRPC_ARG_INTEGER;
    args[1].key = (char *)GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
    args[1].value.integer = -1;
    grpc_channel_args ca = {2 + sc_rpc_fleet_args(args + 2), args};
    grpc_channel_credentials *creds = grpc_insecure_credentials_create();
    ch[k] = grpc_channel_create(argv[1], creds, &ca);
    grpc_channel_credentials_release(creds);
  }
  grpc_completion_queue *cq = grpc_completion_queue_create_for_next(NULL);
  slot *slots = calloc((size_t)conc, sizeof *slots);
  double *lat = calloc((size_t)total, sizeof *lat);
  long started = 0, finished = 0, codes[17] = {0};
  double t0 = now_s();
  for (long i = 0; i < conc && started < total; i++, started++)
    start(&slots[i], ch[i % nch], cq, started);
  while (finished < total) {
    grpc_event e = grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    if (e.type != GRPC_OP_COMPLETE)
      continue;
    slot *s = e.tag;
    lat[finished++] = now_s() - s->t0;
    codes[s->status >= 0 && s->status < 17 ? s->status : 2]++;
    long idx = s - slots;
    release(s);
    if (started < total)
      start(s, ch[idx % nch], cq, started++);
  }
  double secs = now_s() - t0;
  qsort(lat, (size_t)total, sizeof *lat, cmp_double);
  printf("{\"file\":\"%s\",\"bytes\":%zu,\"unique\":%s,\"concurrency\":%ld,\"channels\":%ld,\"requests\":%ld,"
         "\"seconds\":%.3f,\"rps\":%.0f,\"p50_ms\":%.3f,\"p90_ms\":%.3f,\"p99_ms\":%.3f,\"ok\":%ld,\"not_ok\":%ld}\n",
         module_name, module_len, unique ? "true" : "false", conc, nch, total, secs, (double)total / secs,
         lat[total / 2] * 1e3, lat[total * 9 / 10] * 1e3, lat[total * 99 / 100] * 1e3, codes[0], total - codes[0]);
  for (long k = 0; k < nch; k++)
    grpc_channel_destroy(ch[k]);
  grpc_completion_queue_shutdown(cq);
  while (grpc_completion_queue_next(cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type != GRPC_QUEUE_SHUTDOWN)
    ;
  grpc_completion_queue_destroy(cq);
  free(ch);
  free(slots);
  free(lat);
  free(module_data);
  grpc_shutdown_blocking();
  return codes[0] == total ? 0 : 1;
}
