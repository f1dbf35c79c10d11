/* config.h — shardcheckd configuration: defaults, then the JSON file (--config), then flags.
 *
 * The same function builds the configuration at start-up and on SIGHUP, so flags always win over
 * the file. Settings fixed at start-up (listen address, workers, TLS, message size) are reported as
 * "restart required" when a reload changes them; the others apply to calls accepted after it. */
#ifndef SRV_CONFIG_H
#define SRV_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "log.h"

typedef struct {
  char *config_path;       /* --config */
  char *listen;            /* "127.0.0.1:50051" */
  char *port_file;         /* write the bound port here */
  char *metrics_listen;    /* "" = no metrics endpoint */
  char *metrics_port_file; /* write the bound metrics port here */
  char *tls_cert, *tls_key, *tls_client_ca; /* PEM paths; "" = plaintext */
  uint64_t workers;         /* libuv thread pool size */
  uint64_t max_inflight;    /* accepted checks not yet answered */
  uint64_t max_message_bytes;
  uint64_t max_module_bytes;
  uint64_t max_arena_bytes;
  uint64_t max_depth, max_ops;
  uint64_t cache_bytes;     /* 0 disables the result cache */
  char *redis_url;          /* shared cache tier; "" = none (cache_redis.h) */
  uint64_t redis_ttl_s, redis_timeout_ms, redis_breaker_s, redis_max_value_bytes;
  uint64_t grace_ms;        /* drain period after SIGTERM before calls are cancelled */
  uint64_t prearm;          /* call requests kept armed per method */
  uint64_t debug_delay_ms;  /* testing only: each check waits this long (cancellable) first */
  log_level log_level;
  char *log_format;        /* "auto", "json" or "text" (log_set_format) */
  /* streams and memory */
  uint64_t stream_message_timeout_ms; /* longest wait for the next CheckStream message */
  uint64_t stream_max_ms;             /* longest CheckStream, first message to half-close */
  uint64_t memory_budget_bytes;       /* buffered requests + analyses + answers being sent, all calls */
  uint64_t connection_memory_bytes;   /* most of the budget one connection may hold; 0 = a quarter of it */
  uint64_t send_timeout_ms;           /* an answer the client does not read within this is cancelled */
  uint64_t watch_per_connection;      /* Health.Watch calls open at once on one connection */
  uint64_t small_request_bytes;       /* checks of modules up to this size have a worker of their own */
  uint64_t watch_max_ms;              /* a Health.Watch ends (OK) after this; the client watches again */
  /* connections */
  uint64_t max_connections;           /* concurrent gRPC connections (plaintext listener) */
  uint64_t max_connections_per_peer;  /* of them from one IP address; 0 = no such cap */
  uint64_t handshake_timeout_ms;      /* a new connection must start HTTP/2 within this */
  uint64_t connection_idle_ms;        /* close connections without calls after this; 0 = never */
  uint64_t connection_max_age_ms;     /* close (gracefully) connections older than this; 0 = never */
  uint64_t keepalive_ms;              /* ping idle connections this often; 0 = never */
  uint64_t max_streams_per_connection;
  uint64_t metrics_max_connections, metrics_idle_ms;
  /* auth */
  char *token_file;                   /* bearer tokens, one per line; "" = no token auth */
  bool insecure_listen;               /* allow a plaintext, token-less listener off loopback */
} srv_config;

/* Builds the configuration from argv (defaults < file < flags). Returns 0, 1 when --help or
 * --version was handled (exit 0), or -1 with a malloc'd message in *err. */
int config_build(int argc, char **argv, srv_config *out, char **err);
void config_free(srv_config *c);
/* Names the settings that differ between a and b into a malloc'd, comma-separated list (or NULL);
 * restart_only selects the settings a reload cannot apply. */
char *config_diff(const srv_config *a, const srv_config *b, bool restart_only);
/* After a reload: `next` takes back the running values of the settings only a restart applies
 * (swapped, so `running` now holds the values to free). */
void config_keep_restart_settings(srv_config *next, srv_config *running);
void config_usage(FILE *f);

#endif
