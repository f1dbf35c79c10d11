/* loadgen.c — closed-loop load for shardcheckd's Check: C calls always in flight over K channels,
 * until N calls finished; prints one JSON line (rate, latency percentiles, status counts).
 *
 *   loadgen HOST:PORT FILE [-c CONCURRENCY] [-n REQUESTS] [-k CHANNELS] [--unique]
 *           [--soak SECONDS --oversize BYTES]
 *
 * --unique gives every request its own file name, so no request is answered from the result cache
 * (the name is part of the report and of the cache key): every call runs the analysis.
 * Channels use the client library's service config (client/rpc.c): calls are retried on UNAVAILABLE
 * before a response began. A call cut once its response began (a replica killed mid-answer: the proxy
 * resets the stream) is sent again, as the client library does (sc_rpc_call_cut): a Check is a pure
 * function of its request. So a fleet replica that dies mid-run costs retries, not failed calls; the
 * re-sends are counted ("resent").
 * --soak runs for SECONDS instead of N calls, with mixed traffic: valid checks (cached and not),
 * undecodable requests, requests over the message limit (--oversize), calls cancelled at once and
 * CheckStreams that send their header and then nothing (the server must time them out). Every call
 * must complete exactly once with a status its kind allows; exit 1 otherwise. */
#include <grpc/byte_buffer.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/alloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../helpers.h" /* test_read_file */
#include "rpc_fleet.h"
#include "shardcheck/v1/shardcheck.pb-c.h"

typedef enum { K_VALID, K_CACHED, K_INVALID, K_OVERSIZE, K_CANCEL, K_IDLE_STREAM, K__COUNT } kind;
static const char *const kind_names[K__COUNT] = {"valid", "cached", "invalid", "oversize", "cancelled", "idle_stream"};

typedef struct {
  grpc_call *call;
  kind kind;
  int in_flight;
  grpc_metadata_array md0, md1;
  grpc_byte_buffer *req, *resp;
  grpc_status_code status;
  grpc_slice details;
  const char *error_string;
  double t0;
  long index;  /* the request number (a re-sent call keeps it) */
  int resends; /* times this call was sent again */
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

static long soak_seconds, oversize_bytes, resent;
static long kind_calls[K__COUNT], kind_codes[K__COUNT][17], unexpected, duplicates;

/* Statuses each kind may end with (bit per code). Busy (RESOURCE_EXHAUSTED) is fine for any check. */
static unsigned allowed(kind k) {
  unsigned busy = 1u << GRPC_STATUS_RESOURCE_EXHAUSTED;
  switch (k) {
  case K_VALID:
  case K_CACHED: return 1u << GRPC_STATUS_OK | busy;
  case K_INVALID: return 1u << GRPC_STATUS_INVALID_ARGUMENT | busy; /* decoded after admission */
  case K_OVERSIZE: return busy;
  case K_CANCEL: return 1u << GRPC_STATUS_CANCELLED | 1u << GRPC_STATUS_OK | busy;
  case K_IDLE_STREAM: return 1u << GRPC_STATUS_DEADLINE_EXCEEDED;
  default: return 0;
  }
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

static grpc_byte_buffer *bytes_bb(const void *p, size_t n) {
  grpc_slice s = grpc_slice_from_copied_buffer(p, n);
  grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&s, 1);
  grpc_slice_unref(s);
  return bb;
}

/* The request of a soak call of kind k (the i-th call). */
static grpc_byte_buffer *soak_request(kind k, long i) {
  static const uint8_t undecodable[] = {0x12, 0xff, 0x01, 0x78};
  switch (k) {
  case K_INVALID: return bytes_bb(undecodable, sizeof undecodable);
  case K_OVERSIZE: {
    uint8_t *big = calloc(1, (size_t)oversize_bytes);
    grpc_byte_buffer *bb = bytes_bb(big, (size_t)oversize_bytes);
    free(big);
    return bb;
  }
  case K_IDLE_STREAM: { /* a CheckChunk with only the header */
    Shardcheck__V1__CheckRequest hdr = SHARDCHECK__V1__CHECK_REQUEST__INIT;
    hdr.file_name = "idle.mlir";
    Shardcheck__V1__CheckChunk ch = SHARDCHECK__V1__CHECK_CHUNK__INIT;
    ch.header = &hdr;
    uint8_t buf[64];
    size_t n = protobuf_c_message_pack(&ch.base, buf);
    return bytes_bb(buf, n);
  }
  case K_CACHED: return request(0);
  default: return request(i);
  }
}

static void start(slot *s, grpc_channel *ch, grpc_completion_queue *cq, long i) {
  memset(s, 0, sizeof *s);
  s->index = i;
  s->kind = soak_seconds ? (kind)(i % K__COUNT) : unique ? K_VALID : K_CACHED;
  grpc_metadata_array_init(&s->md0);
  grpc_metadata_array_init(&s->md1);
  s->details = grpc_empty_slice();
  s->req = soak_seconds ? soak_request(s->kind, i) : request(i);
  bool stream = s->kind == K_IDLE_STREAM;
  grpc_slice m = grpc_slice_from_static_string(stream ? "/shardcheck.v1.ShardCheck/CheckStream"
                                                      : "/shardcheck.v1.ShardCheck/Check");
  s->call = grpc_channel_create_call(ch, NULL, 0, cq, m, NULL, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
  grpc_slice_unref(m);
  grpc_op ops[6];
  memset(ops, 0, sizeof ops);
  size_t n = 0;
  ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
  ops[n].op = GRPC_OP_SEND_MESSAGE;
  ops[n++].data.send_message.send_message = s->req;
  if (!stream) /* an idle stream never half-closes */
    ops[n++].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
  ops[n].op = GRPC_OP_RECV_INITIAL_METADATA;
  ops[n++].data.recv_initial_metadata.recv_initial_metadata = &s->md0;
  ops[n].op = GRPC_OP_RECV_MESSAGE;
  ops[n++].data.recv_message.recv_message = &s->resp;
  ops[n].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
  ops[n].data.recv_status_on_client.trailing_metadata = &s->md1;
  ops[n].data.recv_status_on_client.status = &s->status;
  ops[n].data.recv_status_on_client.status_details = &s->details;
  ops[n++].data.recv_status_on_client.error_string = &s->error_string;
  s->t0 = now_s();
  s->in_flight = 1;
  kind_calls[s->kind]++;
  if (grpc_call_start_batch(s->call, ops, n, s, NULL) != GRPC_CALL_OK) {
    fprintf(stderr, "loadgen: start_batch failed\n");
    exit(2);
  }
  if (s->kind == K_CANCEL)
    grpc_call_cancel(s->call, NULL);
}

/* Accounts one completion: exactly once per call, with a status its kind allows. */
static void account(slot *s) {
  if (!s->in_flight) {
    duplicates++;
    return;
  }
  s->in_flight = 0;
  int code = s->status >= 0 && s->status < 17 ? s->status : 2;
  kind_codes[s->kind][code]++;
  if (soak_seconds && !(allowed(s->kind) & (1u << code))) {
    if (unexpected++ < 5) {
      char *d = grpc_slice_to_c_string(s->details);
      fprintf(stderr, "loadgen: %s call ended with status %d: %s\n", kind_names[s->kind], code, d);
      gpr_free(d);
    }
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
    else if (!strcmp(argv[i], "--soak") && i + 1 < argc)
      soak_seconds = atol(argv[++i]);
    else if (!strcmp(argv[i], "--oversize") && i + 1 < argc)
      oversize_bytes = atol(argv[++i]);
  }
  if (soak_seconds) {
    if (oversize_bytes < 1)
      return 2;
    total = 1L << 40; /* bounded by time */
    unique = 1;
  }
  if (conc < 1 || total < 1 || nch < 1)
    return 2;
  module_name = argv[2];
  module_data = test_read_file(argv[2], &module_len);
  if (!module_data) {
    perror(argv[2]);
    return 2;
  }

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
  size_t nlat = soak_seconds ? 1u << 22 : (size_t)total;
  double *lat = calloc(nlat, sizeof *lat);
  long started = 0, finished = 0, codes[17] = {0};
  double t0 = now_s();
  for (long i = 0; i < conc && started < total; i++, started++)
    start(&slots[i], ch[i % nch], cq, started);
  while (finished < started) {
    /* A bounded wait: a call the server never answers shows up as a hang, not as a wrong count. */
    gpr_timespec limit = gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_seconds(120, GPR_TIMESPAN));
    grpc_event e = grpc_completion_queue_next(cq, limit, NULL);
    if (e.type == GRPC_QUEUE_TIMEOUT) {
      fprintf(stderr, "loadgen: %ld calls unanswered for 120 s\n", started - finished);
      break;
    }
    if (e.type != GRPC_OP_COMPLETE)
      continue;
    slot *s = e.tag;
    if (!soak_seconds && s->status != GRPC_STATUS_OK) {
      char *d = grpc_slice_to_c_string(s->details);
      bool again = sc_rpc_call_cut(s->status, d) && s->resends < 3;
      fprintf(stderr, "loadgen: call %ld ended with status %d: %s%s\n", s->index, (int)s->status, d,
              again ? " (sent again)" : "");
      gpr_free(d);
      if (again) {
        int resends = s->resends + 1;
        long index = s->index, idx = s - slots;
        kind k = s->kind;
        release(s);
        start(s, ch[idx % nch], cq, index);
        kind_calls[k]--; /* the same call, not a new one */
        s->resends = resends;
        resent++;
        continue;
      }
    }
    if ((size_t)finished < nlat)
      lat[finished] = now_s() - s->t0;
    finished++;
    codes[s->status >= 0 && s->status < 17 ? s->status : 2]++;
    account(s);
    long idx = s - slots;
    release(s);
    bool more = soak_seconds ? now_s() - t0 < (double)soak_seconds : started < total;
    if (more)
      start(s, ch[idx % nch], cq, started++);
  }
  double secs = now_s() - t0;
  total = finished;
  if (!total)
    return 1;
  qsort(lat, (size_t)total < nlat ? (size_t)total : nlat, sizeof *lat, cmp_double);
  if ((size_t)total > nlat)
    total = (long)nlat;
  if (soak_seconds) {
    printf("{\"soak_seconds\":%.1f,\"calls\":%ld,\"answered\":%ld,\"duplicates\":%ld,\"unexpected\":%ld,\"rps\":%.0f,"
           "\"concurrency\":%ld,\"channels\":%ld,\"kinds\":{",
           secs, started, finished, duplicates, unexpected, (double)finished / secs, conc, nch);
    for (int k = 0; k < K__COUNT; k++) {
      printf("%s\"%s\":{\"calls\":%ld", k ? "," : "", kind_names[k], kind_calls[k]);
      for (int c = 0; c < 17; c++)
        if (kind_codes[k][c])
          printf(",\"%d\":%ld", c, kind_codes[k][c]);
      printf("}");
    }
    printf("},\"p50_ms\":%.3f,\"p99_ms\":%.3f}\n", lat[total / 2] * 1e3, lat[total * 99 / 100] * 1e3);
  } else {
    printf("{\"file\":\"%s\",\"bytes\":%zu,\"unique\":%s,\"concurrency\":%ld,\"channels\":%ld,\"requests\":%ld,"
           "\"seconds\":%.3f,\"rps\":%.0f,\"p50_ms\":%.3f,\"p90_ms\":%.3f,\"p99_ms\":%.3f,\"ok\":%ld,\"not_ok\":%ld,"
           "\"resent\":%ld}\n",
           module_name, module_len, unique ? "true" : "false", conc, nch, total, secs, (double)total / secs,
           lat[total / 2] * 1e3, lat[total * 9 / 10] * 1e3, lat[total * 99 / 100] * 1e3, codes[0], total - codes[0],
           resent);
  }
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
  if (soak_seconds)
    return finished == started && !duplicates && !unexpected ? 0 : 1;
  return codes[0] == total ? 0 : 1;
}
