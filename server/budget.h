/* budget.h — the daemon's memory budget: bytes charged by calls, in total and per connection.
 *
 * A call charges what it really holds: the bytes of its request buffered so far, the analysis arena
 * it may grow to, the answer while it is being sent. A charge that would pass the total
 * (memory_budget_bytes) or the connection's share (connection_memory_bytes) is refused, so one
 * connection cannot take the budget from the others. Loop thread only. */
#ifndef SRV_BUDGET_H
#define SRV_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

typedef struct budget budget;

typedef enum { BUDGET_OK, BUDGET_FULL, BUDGET_CONNECTION_FULL } budget_result;

/* NULL when out of memory. */
budget *budget_new(void);
void budget_free(budget *b);
/* total: memory_budget_bytes; per_connection: a connection's most (0 = total / 4). */
void budget_set_limits(budget *b, uint64_t total, uint64_t per_connection);
/* Charges n bytes to `conn` (a connection's name, e.g. gRPC's peer string) unless a limit would be
 * passed. */
budget_result budget_charge(budget *b, const char *conn, uint64_t n);
/* Charges n bytes whatever the limits: memory already taken (an answer rendered, to be sent). */
void budget_force(budget *b, const char *conn, uint64_t n);
/* Gives back n bytes charged to conn. */
void budget_release(budget *b, const char *conn, uint64_t n);
uint64_t budget_used(const budget *b);
uint64_t budget_total(const budget *b);
uint64_t budget_per_connection(const budget *b);
/* Bytes charged to conn now. */
uint64_t budget_connection_used(const budget *b, const char *conn);

#endif
