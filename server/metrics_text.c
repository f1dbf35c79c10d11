/* metrics_text.c — the daemon's Prometheus page (srv_metrics_text, see server.h): build info, calls by
 * method and status, Check latency, admission, memory budget, listener, cache and Redis figures.
 * Runs on the loop thread (metrics.c's HTTP endpoint calls it there), so it reads the loop-owned
 * srv_state and srv_counters without locks; the cache and the Redis tier lock their own figures. */
#include <stdio.h>
#include <stdlib.h>

#include "log.h"
#include "server_state.h"
#include "shardcheck.h"
#include "util/strbuf.h"

char *srv_metrics_text(void *arg) {
  srv *s = arg;
  strbuf sb = {0};
  sb_printf(&sb, "# HELP shardcheckd_build_info Version of the daemon and of its rule set.\n"
                 "# TYPE shardcheckd_build_info gauge\n"
                 "shardcheckd_build_info{version=\"%s\",rules_version=\"%s\"} 1\n",
            SC_VERSION, sc_rules_version());
  sb_printf(&sb, "# HELP shardcheckd_uptime_seconds Seconds since the server started.\n"
                 "# TYPE shardcheckd_uptime_seconds gauge\nshardcheckd_uptime_seconds %.3f\n",
            (double)(now_ns() - s->st.started_ns) / 1e9);
  sb_printf(&sb, "# HELP shardcheckd_requests_total Finished calls by method and status code.\n"
                 "# TYPE shardcheckd_requests_total counter\n");
  for (int m = 0; m < M__COUNT; m++)
    for (int k = 0; k < NSTATUS; k++)
      if (s->m.calls_total[m][k])
        sb_printf(&sb, "shardcheckd_requests_total{method=\"%s\",code=\"%s\"} %llu\n", srv_methods[m].name, srv_status_names[k],
                  (unsigned long long)s->m.calls_total[m][k]);
  sb_printf(&sb, "# HELP shardcheckd_request_bytes_total Request bytes received by method.\n"
                 "# TYPE shardcheckd_request_bytes_total counter\n");
  for (int m = 0; m < M__COUNT; m++)
    if (s->m.bytes_total[m])
      sb_printf(&sb, "shardcheckd_request_bytes_total{method=\"%s\"} %llu\n", srv_methods[m].name,
                (unsigned long long)s->m.bytes_total[m]);
  sb_printf(&sb, "# HELP shardcheckd_check_duration_seconds Check and CheckStream latency, accept to status.\n"
                 "# TYPE shardcheckd_check_duration_seconds histogram\n");
  uint64_t cum = 0;
  for (size_t b = 0; b < NBUCKETS; b++) {
    cum += s->m.hist[b];
    sb_printf(&sb, "shardcheckd_check_duration_seconds_bucket{le=\"%g\"} %llu\n", srv_hist_bounds[b], (unsigned long long)cum);
  }
  cum += s->m.hist[NBUCKETS];
  sb_printf(&sb, "shardcheckd_check_duration_seconds_bucket{le=\"+Inf\"} %llu\n", (unsigned long long)cum);
  sb_printf(&sb, "shardcheckd_check_duration_seconds_sum %.6f\nshardcheckd_check_duration_seconds_count %llu\n",
            s->m.hist_sum, (unsigned long long)s->m.hist_count);
  sb_printf(&sb, "# HELP shardcheckd_inflight Checks accepted and not yet answered.\n"
                 "# TYPE shardcheckd_inflight gauge\nshardcheckd_inflight %llu\n"
                 "# HELP shardcheckd_inflight_limit max_inflight.\n"
                 "# TYPE shardcheckd_inflight_limit gauge\nshardcheckd_inflight_limit %llu\n"
                 "# HELP shardcheckd_rejected_busy_total Checks answered RESOURCE_EXHAUSTED by the in-flight bound.\n"
                 "# TYPE shardcheckd_rejected_busy_total counter\nshardcheckd_rejected_busy_total %llu\n"
                 "# HELP shardcheckd_open_calls Calls the server holds (all methods).\n"
                 "# TYPE shardcheckd_open_calls gauge\nshardcheckd_open_calls %llu\n"
                 "# HELP shardcheckd_serving 1 while serving, 0 while draining.\n"
                 "# TYPE shardcheckd_serving gauge\nshardcheckd_serving %d\n"
                 "# HELP shardcheckd_workers Analysis worker threads.\n"
                 "# TYPE shardcheckd_workers gauge\nshardcheckd_workers %llu\n",
            (unsigned long long)s->st.inflight, (unsigned long long)s->set.max_inflight, (unsigned long long)s->m.rejected_busy,
            (unsigned long long)s->st.live_count, srv_serving(s) ? 1 : 0, (unsigned long long)s->set.workers);
  listener_stats ls = s->st.lst_final;
  if (s->io.lst)
    listener_get_stats(s->io.lst, &ls);
  sb_printf(&sb, "# HELP shardcheckd_memory_used_bytes Buffered requests, analysis arenas and answers being sent (memory budget).\n"
                 "# TYPE shardcheckd_memory_used_bytes gauge\nshardcheckd_memory_used_bytes %llu\n"
                 "# HELP shardcheckd_memory_budget_bytes memory_budget_bytes.\n"
                 "# TYPE shardcheckd_memory_budget_bytes gauge\nshardcheckd_memory_budget_bytes %llu\n"
                 "# HELP shardcheckd_rejected_memory_total Calls answered RESOURCE_EXHAUSTED by the memory budget.\n"
                 "# TYPE shardcheckd_rejected_memory_total counter\nshardcheckd_rejected_memory_total %llu\n"
                 "# HELP shardcheckd_memory_connection_limit_bytes connection_memory_bytes: one connection's most.\n"
                 "# TYPE shardcheckd_memory_connection_limit_bytes gauge\nshardcheckd_memory_connection_limit_bytes %llu\n"
                 "# HELP shardcheckd_rejected_connection_memory_total Calls answered RESOURCE_EXHAUSTED by their connection's share.\n"
                 "# TYPE shardcheckd_rejected_connection_memory_total counter\nshardcheckd_rejected_connection_memory_total %llu\n"
                 "# HELP shardcheckd_send_timeouts_total Answers cancelled because the client did not read them (send_timeout_ms).\n"
                 "# TYPE shardcheckd_send_timeouts_total counter\nshardcheckd_send_timeouts_total %llu\n"
                 "# HELP shardcheckd_watch_rejected_total Health.Watch calls refused by watch_per_connection.\n"
                 "# TYPE shardcheckd_watch_rejected_total counter\nshardcheckd_watch_rejected_total %llu\n"
                 "# HELP shardcheckd_watch_expired_total Health.Watch calls ended by watch_max_ms.\n"
                 "# TYPE shardcheckd_watch_expired_total counter\nshardcheckd_watch_expired_total %llu\n"
                 "# HELP shardcheckd_analysis_regrown_total Analyses run again with a larger arena charge.\n"
                 "# TYPE shardcheckd_analysis_regrown_total counter\nshardcheckd_analysis_regrown_total %llu\n"
                 "# HELP shardcheckd_stream_timeouts_total Streams ended by stream_message_timeout_ms or stream_max_ms.\n"
                 "# TYPE shardcheckd_stream_timeouts_total counter\nshardcheckd_stream_timeouts_total %llu\n"
                 "# HELP shardcheckd_unauthenticated_total Calls refused for a missing or wrong bearer token.\n"
                 "# TYPE shardcheckd_unauthenticated_total counter\nshardcheckd_unauthenticated_total %llu\n"
                 "# HELP shardcheckd_connections Connections open (plaintext listener).\n"
                 "# TYPE shardcheckd_connections gauge\nshardcheckd_connections %llu\n"
                 "# HELP shardcheckd_connections_accepted_total Connections accepted (plaintext listener).\n"
                 "# TYPE shardcheckd_connections_accepted_total counter\nshardcheckd_connections_accepted_total %llu\n"
                 "# HELP shardcheckd_connections_refused_total Connections closed at once, by reason.\n"
                 "# TYPE shardcheckd_connections_refused_total counter\n"
                 "shardcheckd_connections_refused_total{reason=\"max_connections\"} %llu\n"
                 "shardcheckd_connections_refused_total{reason=\"max_connections_per_peer\"} %llu\n"
                 "shardcheckd_connections_refused_total{reason=\"no_file_descriptors\"} %llu\n"
                 "shardcheckd_connections_refused_total{reason=\"handshake_timeout\"} %llu\n"
                 "shardcheckd_connections_refused_total{reason=\"not_http2\"} %llu\n"
                 "# HELP shardcheckd_listener_ok 0 once the gRPC listener stopped accepting.\n"
                 "# TYPE shardcheckd_listener_ok gauge\nshardcheckd_listener_ok %d\n",
            (unsigned long long)budget_used(s->st.mem), (unsigned long long)budget_total(s->st.mem),
            (unsigned long long)s->m.rejected_memory, (unsigned long long)budget_per_connection(s->st.mem),
            (unsigned long long)s->m.rejected_memory_conn, (unsigned long long)s->m.send_timeouts,
            (unsigned long long)s->m.rejected_watch, (unsigned long long)s->m.watch_expired,
            (unsigned long long)s->m.analysis_regrown, (unsigned long long)s->m.stream_timeouts,
            (unsigned long long)s->m.unauthenticated, (unsigned long long)ls.open, (unsigned long long)ls.accepted,
            (unsigned long long)ls.refused_cap, (unsigned long long)ls.refused_peer, (unsigned long long)ls.refused_fds,
            (unsigned long long)ls.handshake_timeouts, (unsigned long long)ls.bad_preface, s->st.listener_broken ? 0 : 1);
  cache_stats cs;
  cache_get_stats(s->svc.cache, &cs);
  sb_printf(&sb, "# HELP shardcheckd_cache_hits_total Checks answered from the result cache.\n"
                 "# TYPE shardcheckd_cache_hits_total counter\nshardcheckd_cache_hits_total %llu\n"
                 "# HELP shardcheckd_cache_misses_total Checks that ran the analysis.\n"
                 "# TYPE shardcheckd_cache_misses_total counter\nshardcheckd_cache_misses_total %llu\n"
                 "# HELP shardcheckd_cache_evictions_total Entries evicted by the byte bound.\n"
                 "# TYPE shardcheckd_cache_evictions_total counter\nshardcheckd_cache_evictions_total %llu\n"
                 "# HELP shardcheckd_cache_bytes Bytes held by the result cache.\n"
                 "# TYPE shardcheckd_cache_bytes gauge\nshardcheckd_cache_bytes %llu\n"
                 "# HELP shardcheckd_cache_entries Entries in the result cache.\n"
                 "# TYPE shardcheckd_cache_entries gauge\nshardcheckd_cache_entries %llu\n"
                 "# HELP shardcheckd_cache_limit_bytes The cache byte bound.\n"
                 "# TYPE shardcheckd_cache_limit_bytes gauge\nshardcheckd_cache_limit_bytes %llu\n",
            (unsigned long long)cs.hits, (unsigned long long)cs.misses, (unsigned long long)cs.evictions,
            (unsigned long long)cs.bytes, (unsigned long long)cs.entries, (unsigned long long)cs.limit);
  if (s->svc.redis) {
    redis_tier_stats rs;
    redis_tier_get_stats(s->svc.redis, &rs);
    sb_printf(&sb, "# HELP shardcheckd_redis_requests_total Shared cache tier operations by outcome.\n"
                   "# TYPE shardcheckd_redis_requests_total counter\n"
                   "shardcheckd_redis_requests_total{result=\"hit\"} %llu\n"
                   "shardcheckd_redis_requests_total{result=\"miss\"} %llu\n"
                   "shardcheckd_redis_requests_total{result=\"error\"} %llu\n"
                   "shardcheckd_redis_requests_total{result=\"skipped\"} %llu\n"
                   "shardcheckd_redis_requests_total{result=\"stored\"} %llu\n"
                   "shardcheckd_redis_requests_total{result=\"too_large\"} %llu\n"
                   "# HELP shardcheckd_redis_up 0 while the circuit breaker skips Redis after a failure.\n"
                   "# TYPE shardcheckd_redis_up gauge\nshardcheckd_redis_up %d\n",
              (unsigned long long)rs.hits, (unsigned long long)rs.misses, (unsigned long long)rs.errors,
              (unsigned long long)rs.skipped, (unsigned long long)rs.stores, (unsigned long long)rs.too_large,
              rs.up ? 1 : 0);
  }
  return sb_take(&sb);
}
