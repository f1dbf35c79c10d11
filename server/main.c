/* main.c — shardcheckd: configuration, signals, the libuv loop, the gRPC server, metrics. */
#include <grpc/grpc.h>
#include <malloc.h>
#include <openssl/crypto.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <systemd/sd-daemon.h>
#include <uv.h>

#include "config.h"
#include "log.h"
#include "metrics.h"
#include "server.h"
#include "shardcheck.h"

typedef struct {
  int argc;
  char **argv;
  srv_config cfg;
  uv_loop_t loop;
  srv *server;
  metrics_http *metrics;
  uv_signal_t sigterm, sigint, sighup;
  int stopping;
} daemon_state;

static int write_port_file(const char *path, int port) {
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (!f)
    return -1;
  fprintf(f, "%d\n", port);
  if (fclose(f) != 0)
    return -1;
  return rename(tmp, path);
}

static void on_metrics_closed(void *arg) { (void)arg; }

/* After the server released everything: close what keeps the loop alive. */
static void on_drained(void *arg) {
  daemon_state *d = arg;
  if (d->metrics) {
    metrics_http_close(d->metrics, on_metrics_closed, d);
    d->metrics = NULL;
  }
  uv_close((uv_handle_t *)&d->sigterm, NULL);
  uv_close((uv_handle_t *)&d->sigint, NULL);
  uv_close((uv_handle_t *)&d->sighup, NULL);
}

static void on_stop_signal(uv_signal_t *h, int signum) {
  daemon_state *d = h->data;
  json_t *f = json_object();
  json_object_set_new(f, "signal", json_string(signum == SIGTERM ? "SIGTERM" : "SIGINT"));
  log_json(LOG_INFO, d->stopping ? "stop signal again" : "stop signal", f);
  d->stopping = 1;
  sd_notify(0, "STOPPING=1"); /* systemd Type=notify; a no-op without NOTIFY_SOCKET */
  srv_drain(d->server, on_drained, d);
}

static void on_hup(uv_signal_t *h, int signum) {
  (void)signum;
  daemon_state *d = h->data;
  srv_config nc;
  char *err = NULL;
  if (config_build(d->argc, d->argv, &nc, &err) != 0) {
    json_t *f = json_object();
    json_object_set_new(f, "error", json_string(err ? err : "?"));
    log_json(LOG_ERROR, "config reload failed; keeping the running configuration", f);
    free(err);
    return;
  }
  char *changed = config_diff(&d->cfg, &nc, false);
  char *restart = config_diff(&d->cfg, &nc, true);
  log_set_level(nc.log_level);
  if (log_set_format(nc.log_format)) log_msg(LOG_WARN, "unknown log_format '%s' (auto, json or text)", nc.log_format);
  sd_notify(0, "RELOADING=1");
  srv_reload(d->server, &nc);
  json_t *f = json_object();
  json_object_set_new(f, "config", json_string(nc.config_path));
  json_object_set_new(f, "applied", json_string(changed ? changed : ""));
  if (restart)
    json_object_set_new(f, "restart_required", json_string(restart));
  json_object_set_new(f, "max_inflight", json_integer((json_int_t)nc.max_inflight));
  json_object_set_new(f, "log_level", json_string(log_level_name(nc.log_level)));
  log_json(restart ? LOG_WARN : LOG_INFO, "config reloaded", f);
  free(changed);
  free(restart);
  /* Settings that need a restart keep their running values, so later diffs stay meaningful. */
  srv_config keep = d->cfg;
  d->cfg = nc;
  config_keep_restart_settings(&d->cfg, &keep);
  config_free(&keep);
  sd_notify(0, "READY=1");
}

/* Connections cost a descriptor each: use what the hard limit allows (the listener caps below it). */
static void raise_nofile(void) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rlim_t soft = rl.rlim_cur;
    rl.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
      rl.rlim_cur = soft;
  }
}

int main(int argc, char **argv) {
  daemon_state d;
  memset(&d, 0, sizeof d);
  d.argc = argc;
  d.argv = argv;
  char *err = NULL;
  int rc = config_build(argc, argv, &d.cfg, &err);
  if (rc == 1)
    return 0;
  if (rc != 0) {
    fprintf(stderr, "shardcheckd: %s\n", err);
    free(err);
    return 2;
  }
  log_set_level(d.cfg.log_level);
  if (log_set_format(d.cfg.log_format)) {
    fprintf(stderr, "shardcheckd: unknown --log-format '%s' (auto, json or text)\n", d.cfg.log_format);
    return 2;
  }
  /* The pool is created on first use: size it before anything is queued. */
  char workers[32];
  snprintf(workers, sizeof workers, "%llu", (unsigned long long)d.cfg.workers);
  setenv("UV_THREADPOOL_SIZE", workers, 1);
  signal(SIGPIPE, SIG_IGN);
  raise_nofile();
  /* A fixed threshold (glibc otherwise raises it after each large free, up to 32 MiB): buffers from
   * 4 MiB up are mmap'ed and returned when freed; the rest is trimmed after large requests. */
  mallopt(M_MMAP_THRESHOLD, 4 << 20);

  /* OpenSSL initialises itself on first use, on whatever thread that is; a pool thread's share is
   * never released (pool threads outlive main). Initialise it here, on the main thread. */
  OPENSSL_init_crypto(OPENSSL_INIT_LOAD_CONFIG, NULL);
  grpc_init();
  log_capture_grpc();
  uv_loop_init(&d.loop);
  int port = 0;
  d.server = srv_new(&d.loop, &d.cfg, &port, &err);
  if (!d.server) {
    json_t *f = json_object();
    json_object_set_new(f, "error", json_string(err ? err : "?"));
    log_json(LOG_ERROR, "cannot start", f);
    free(err);
    uv_loop_close(&d.loop);
    config_free(&d.cfg);
    grpc_shutdown_blocking();
    return 1;
  }
  int mport = 0;
  if (d.cfg.metrics_listen[0]) {
    char merr[300];
    d.metrics = metrics_http_start(&d.loop, d.cfg.metrics_listen, d.cfg.metrics_max_connections, d.cfg.metrics_idle_ms,
                                   srv_metrics_text, d.server, &mport, merr, sizeof merr);
    if (!d.metrics) {
      json_t *f = json_object();
      json_object_set_new(f, "error", json_string(merr));
      log_json(LOG_ERROR, "cannot start the metrics endpoint", f);
      rc = 1;
    }
  }
  uv_signal_init(&d.loop, &d.sigterm);
  uv_signal_init(&d.loop, &d.sigint);
  uv_signal_init(&d.loop, &d.sighup);
  d.sigterm.data = d.sigint.data = d.sighup.data = &d;
  uv_signal_start(&d.sigterm, on_stop_signal, SIGTERM);
  uv_signal_start(&d.sigint, on_stop_signal, SIGINT);
  uv_signal_start(&d.sighup, on_hup, SIGHUP);
  srv_start(d.server);
  if (rc == 0 && d.cfg.port_file[0] && write_port_file(d.cfg.port_file, port) != 0) {
    log_msg(LOG_ERROR, "cannot write the port file %s", d.cfg.port_file);
    rc = 1;
  }
  if (rc == 0 && d.metrics && d.cfg.metrics_port_file[0] && write_port_file(d.cfg.metrics_port_file, mport) != 0) {
    log_msg(LOG_ERROR, "cannot write the metrics port file %s", d.cfg.metrics_port_file);
    rc = 1;
  }
  json_t *f = json_object();
  json_object_set_new(f, "listen", json_string(d.cfg.listen));
  json_object_set_new(f, "port", json_integer(port));
  if (d.metrics)
    json_object_set_new(f, "metrics_port", json_integer(mport));
  json_object_set_new(f, "version", json_string(SC_VERSION));
  json_object_set_new(f, "rules_version", json_string(sc_rules_version()));
  json_object_set_new(f, "workers", json_integer((json_int_t)d.cfg.workers));
  json_object_set_new(f, "max_inflight", json_integer((json_int_t)d.cfg.max_inflight));
  json_object_set_new(f, "tls", json_boolean(d.cfg.tls_cert[0] != '\0'));
  json_object_set_new(f, "redis", json_boolean(d.cfg.redis_url[0] != '\0'));
  json_object_set_new(f, "token_auth", json_boolean(d.cfg.token_file[0] != '\0'));
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
    json_object_set_new(f, "open_files_limit", json_integer((json_int_t)rl.rlim_cur));
  json_object_set_new(f, "pid", json_integer((json_int_t)uv_os_getpid()));
  log_json(LOG_INFO, rc == 0 ? "listening" : "startup failed; stopping", f);
  if (rc == 0)
    sd_notify(0, "READY=1");
  if (rc != 0) {
    d.stopping = 1;
    srv_drain(d.server, on_drained, &d);
  }
  uv_run(&d.loop, UV_RUN_DEFAULT);
  int lrc = uv_loop_close(&d.loop);
  if (lrc)
    log_msg(LOG_WARN, "uv_loop_close: %s", uv_strerror(lrc));
  srv_free(d.server);
  log_msg(LOG_INFO, "stopped");
  config_free(&d.cfg);
  grpc_shutdown_blocking();
  return rc;
}
