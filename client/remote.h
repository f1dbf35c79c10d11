/* remote.h — the CLI's commands over a shardcheckd daemon (`--server HOST:PORT`).
 *
 * Each prints exactly what the local command prints and returns the same exit status
 * (0 clean, 1 findings / NOT_SERVING, 2 usage, I/O or server error). */
#ifndef SC_REMOTE_H
#define SC_REMOTE_H

#include <stdbool.h>

#include "rpc.h"
#include "shardcheck.h"

/* The client settings every remote command takes from the environment:
 * SHARDCHECK_TLS_CA=ca.pem (TLS, trusting that CA; else plaintext), SHARDCHECK_TLS_CERT/_KEY (a client
 * certificate, mTLS), SHARDCHECK_TOKEN (a bearer token), SHARDCHECK_TIMEOUT_MS (a deadline per call).
 * The strings point into the environment. */
void remote_config_from_env(sc_rpc_config *cfg);
/* How long to wait for the first connection: SHARDCHECK_CONNECT_TIMEOUT_MS, default 5000. */
int remote_connect_timeout_ms(void);
/* Connects to `server` and waits until it answers (remote_connect_timeout_ms()); NULL after printing one
 * "shardcheck: cannot reach ..." line. */
sc_rpc_client *remote_connect_or_complain(const char *server);

/* (`check --server` is client/cli_check.c: the daemon's report JSON, filtered and rendered locally.) */
int remote_rules(const char *server, bool json);
int remote_explain(const char *server, char **codes, int ncodes);
/* `shardcheck health`: prints SERVING / NOT_SERVING; 0 when serving. */
int remote_health(const char *server, const char *service);
/* `shardcheck capabilities`: the daemon's version, formats and limits as JSON. */
int remote_capabilities(const char *server);

/* Removes "--server X" / "--server=X" from argv (updating *argc); returns X or NULL. */
const char *remote_take_server(int *argc, char **argv);

#endif
