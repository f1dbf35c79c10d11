/* auth.h — bearer-token authentication for shardcheckd.
 *
 * Tokens come from a file, one per line (blank lines and lines starting with '#' ignored; leading and
 * trailing whitespace trimmed). Only their SHA-256 digests are kept in memory. A call authenticates
 * with the metadata `authorization: Bearer <token>`; the digest of the presented token is compared
 * with every stored digest in constant time (CRYPTO_memcmp, no early exit), so timing reveals
 * neither which token matched nor how much of it. Immutable once loaded: safe from any thread. */
#ifndef SRV_AUTH_H
#define SRV_AUTH_H

#include <grpc/grpc.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct auth_tokens auth_tokens;

/* Loads the token file. NULL with a malloc'd *err if it cannot be read or holds no token. */
auth_tokens *auth_tokens_load(const char *path, char **err);
void auth_tokens_free(auth_tokens *t);
size_t auth_tokens_count(const auth_tokens *t);
/* true if `md` carries `authorization: Bearer <token>` for a stored token. */
bool auth_check(const auth_tokens *t, const grpc_metadata_array *md);
/* The same check on the header value alone ("Bearer <token>"). */
bool auth_check_value(const auth_tokens *t, const char *value, size_t len);

#endif
