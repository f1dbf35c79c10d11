/* reflection.h — gRPC server reflection (grpc.reflection.v1 and v1alpha, identical on the wire)
 * answered from the FileDescriptorSet protoc generated at build time and linked into the binary. */
#ifndef SRV_REFLECTION_H
#define SRV_REFLECTION_H

#include <stddef.h>
#include <stdint.h>

#include "handlers.h"

typedef struct refl_index refl_index;

/* Indexes a serialized FileDescriptorSet (borrowed: it must outlive the index). NULL on error. */
refl_index *refl_index_new(const uint8_t *fds, size_t len);
void refl_index_free(refl_index *ix);
/* Answers one ServerReflectionRequest with one ServerReflectionResponse (reply code OK), or
 * INVALID_ARGUMENT when the request does not decode. */
void refl_handle(const refl_index *ix, const uint8_t *req, size_t len, rpc_reply *r);
size_t refl_service_count(const refl_index *ix);

/* The descriptor set compiled into the binary ($(BUILD)/gen/descriptors.c). */
extern const unsigned char sc_descriptor_set[];
extern const size_t sc_descriptor_set_len;

#endif
