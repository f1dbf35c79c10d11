/* reflection.c — server reflection from an embedded FileDescriptorSet.
 *
 * The set is split into the raw bytes of each FileDescriptorProto (field 1, length-delimited), which
 * are sent back unchanged; each file is decoded once with protobuf-c to index its symbols (messages,
 * nested messages, fields, enums, enum values, services, methods). Lookups are linear: the set has a
 * handful of files. */
#include "reflection.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "google/protobuf/descriptor.pb-c.h"
#include "grpc/reflection/v1alpha/reflection.pb-c.h"

typedef struct {
  const uint8_t *raw;
  size_t len;
  char *name;
  size_t *deps; /* indices of dependency files */
  size_t ndeps;
} refl_file;

typedef struct {
  char *name;
  size_t file;
  int kind; /* 0 other, 1 message, 2 service */
} refl_symbol;

struct refl_index {
  refl_file *files;
  size_t nfiles;
  refl_symbol *syms;
  size_t nsyms, capsyms;
};

static int add_symbol(refl_index *ix, const char *scope, const char *name, size_t file, int kind) {
  if (ix->nsyms == ix->capsyms) {
    size_t nc = ix->capsyms ? ix->capsyms * 2 : 64;
    refl_symbol *s = realloc(ix->syms, nc * sizeof *s);
    if (!s)
      return -1;
    ix->syms = s;
    ix->capsyms = nc;
  }
  size_t n = strlen(scope) + strlen(name) + 2;
  char *full = malloc(n);
  if (!full)
    return -1;
  snprintf(full, n, "%s%s%s", scope, scope[0] ? "." : "", name);
  ix->syms[ix->nsyms++] = (refl_symbol){full, file, kind};
  return 0;
}

static int index_enum(refl_index *ix, const char *scope, const Google__Protobuf__EnumDescriptorProto *e, size_t f) {
  if (add_symbol(ix, scope, e->name, f, 0))
    return -1;
  for (size_t i = 0; i < e->n_value; i++) /* enum values are siblings of their enum */
    if (add_symbol(ix, scope, e->value[i]->name, f, 0))
      return -1;
  return 0;
}

static int index_message(refl_index *ix, const char *scope, const Google__Protobuf__DescriptorProto *m, size_t f) {
  if (add_symbol(ix, scope, m->name, f, 1))
    return -1;
  const char *full = ix->syms[ix->nsyms - 1].name;
  for (size_t i = 0; i < m->n_field; i++)
    if (add_symbol(ix, full, m->field[i]->name, f, 0))
      return -1;
  for (size_t i = 0; i < m->n_enum_type; i++)
    if (index_enum(ix, full, m->enum_type[i], f))
      return -1;
  for (size_t i = 0; i < m->n_nested_type; i++)
    if (index_message(ix, full, m->nested_type[i], f))
      return -1;
  return 0;
}

static int index_file(refl_index *ix, size_t f) {
  refl_file *rf = &ix->files[f];
  Google__Protobuf__FileDescriptorProto *fd = google__protobuf__file_descriptor_proto__unpack(NULL, rf->len, rf->raw);
  if (!fd)
    return -1;
  int rc = -1;
  const char *pkg = fd->package ? fd->package : "";
  rf->name = strdup(fd->name ? fd->name : "");
  rf->deps = calloc(fd->n_dependency ? fd->n_dependency : 1, sizeof *rf->deps);
  if (!rf->name || !rf->deps)
    goto out;
  for (size_t i = 0; i < fd->n_dependency; i++)
    for (size_t k = 0; k < ix->nfiles; k++)
      if (k != f && ix->files[k].name && strcmp(ix->files[k].name, fd->dependency[i]) == 0)
        rf->deps[rf->ndeps++] = k;
  for (size_t i = 0; i < fd->n_message_type; i++)
    if (index_message(ix, pkg, fd->message_type[i], f))
      goto out;
  for (size_t i = 0; i < fd->n_enum_type; i++)
    if (index_enum(ix, pkg, fd->enum_type[i], f))
      goto out;
  for (size_t i = 0; i < fd->n_service; i++) {
    const Google__Protobuf__ServiceDescriptorProto *s = fd->service[i];
    if (add_symbol(ix, pkg, s->name, f, 2))
      goto out;
    const char *full = ix->syms[ix->nsyms - 1].name;
    for (size_t k = 0; k < s->n_method; k++)
      if (add_symbol(ix, full, s->method[k]->name, f, 0))
        goto out;
  }
  rc = 0;
out:
  google__protobuf__file_descriptor_proto__free_unpacked(fd, NULL);
  return rc;
}

/* Reads a varint; returns bytes consumed or 0 on malformed input. */
static size_t varint(const uint8_t *p, size_t n, uint64_t *v) {
  *v = 0;
  for (size_t i = 0; i < n && i < 10; i++) {
    *v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
    if (!(p[i] & 0x80))
      return i + 1;
  }
  return 0;
}

refl_index *refl_index_new(const uint8_t *fds, size_t len) {
  refl_index *ix = calloc(1, sizeof *ix);
  if (!ix)
    return NULL;
  /* Pass 1: split FileDescriptorSet.file (field 1, wire type 2). */
  size_t cap = 0;
  for (size_t pos = 0; pos < len;) {
    uint64_t tag, flen;
    size_t k = varint(fds + pos, len - pos, &tag);
    if (!k || tag != ((1 << 3) | 2))
      goto fail;
    pos += k;
    k = varint(fds + pos, len - pos, &flen);
    if (!k || flen > len - pos - k)
      goto fail;
    pos += k;
    if (ix->nfiles == cap) {
      cap = cap ? cap * 2 : 8;
      refl_file *nf = realloc(ix->files, cap * sizeof *nf);
      if (!nf)
        goto fail;
      ix->files = nf;
    }
    ix->files[ix->nfiles++] = (refl_file){fds + pos, (size_t)flen, NULL, NULL, 0};
    pos += (size_t)flen;
  }
  /* Pass 2: names first (dependencies refer to them), then symbols. protoc emits dependencies
   * before their dependents, so a file's deps are already named when it is indexed. */
  for (size_t f = 0; f < ix->nfiles; f++)
    if (index_file(ix, f))
      goto fail;
  return ix;
fail:
  refl_index_free(ix);
  return NULL;
}

void refl_index_free(refl_index *ix) {
  if (!ix)
    return;
  for (size_t i = 0; i < ix->nfiles; i++) {
    free(ix->files[i].name);
    free(ix->files[i].deps);
  }
  for (size_t i = 0; i < ix->nsyms; i++)
    free(ix->syms[i].name);
  free(ix->files);
  free(ix->syms);
  free(ix);
}

size_t refl_service_count(const refl_index *ix) {
  size_t n = 0;
  for (size_t i = 0; i < ix->nsyms; i++)
    n += ix->syms[i].kind == 2;
  return n;
}

static const refl_symbol *find_symbol(const refl_index *ix, const char *name) {
  for (size_t i = 0; i < ix->nsyms; i++)
    if (strcmp(ix->syms[i].name, name) == 0)
      return &ix->syms[i];
  return NULL;
}

/* The file and its transitive dependencies, file first (as the C++ reflection service does). */
static void collect(const refl_index *ix, size_t f, bool *seen, ProtobufCBinaryData *out, size_t *n) {
  if (seen[f])
    return;
  seen[f] = true;
  out[(*n)++] = (ProtobufCBinaryData){ix->files[f].len, (uint8_t *)ix->files[f].raw};
  for (size_t i = 0; i < ix->files[f].ndeps; i++)
    collect(ix, ix->files[f].deps[i], seen, out, n);
}

void refl_handle(const refl_index *ix, const uint8_t *req, size_t len, rpc_reply *r) {
  Grpc__Reflection__V1alpha__ServerReflectionRequest *in =
      grpc__reflection__v1alpha__server_reflection_request__unpack(NULL, len, req);
  if (!in) {
    rpc_reply_error(r, GRPC_STATUS_INVALID_ARGUMENT, "cannot decode grpc.reflection.v1.ServerReflectionRequest");
    return;
  }
  Grpc__Reflection__V1alpha__ServerReflectionResponse out = GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_RESPONSE__INIT;
  Grpc__Reflection__V1alpha__ListServiceResponse ls = GRPC__REFLECTION__V1ALPHA__LIST_SERVICE_RESPONSE__INIT;
  Grpc__Reflection__V1alpha__FileDescriptorResponse fr = GRPC__REFLECTION__V1ALPHA__FILE_DESCRIPTOR_RESPONSE__INIT;
  Grpc__Reflection__V1alpha__ExtensionNumberResponse er = GRPC__REFLECTION__V1ALPHA__EXTENSION_NUMBER_RESPONSE__INIT;
  Grpc__Reflection__V1alpha__ErrorResponse err = GRPC__REFLECTION__V1ALPHA__ERROR_RESPONSE__INIT;
  char errmsg[320];
  Grpc__Reflection__V1alpha__ServiceResponse *svc = calloc(ix->nsyms + 1, sizeof *svc);
  Grpc__Reflection__V1alpha__ServiceResponse **svcp = calloc(ix->nsyms + 1, sizeof *svcp);
  ProtobufCBinaryData *files = calloc(ix->nfiles + 1, sizeof *files);
  bool *seen = calloc(ix->nfiles + 1, sizeof *seen);
  if (!svc || !svcp || !files || !seen) {
    rpc_reply_error(r, GRPC_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    goto out;
  }
  out.valid_host = in->host;
  out.original_request = in;
  int file = -1;
  switch (in->message_request_case) {
  case GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_LIST_SERVICES:
    for (size_t i = 0; i < ix->nsyms; i++)
      if (ix->syms[i].kind == 2) {
        grpc__reflection__v1alpha__service_response__init(&svc[ls.n_service]);
        svc[ls.n_service].name = ix->syms[i].name;
        svcp[ls.n_service] = &svc[ls.n_service];
        ls.n_service++;
      }
    ls.service = svcp;
    out.message_response_case = GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE_LIST_SERVICES_RESPONSE;
    out.list_services_response = &ls;
    break;
  case GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_FILE_BY_FILENAME:
    for (size_t i = 0; i < ix->nfiles; i++)
      if (strcmp(ix->files[i].name, in->file_by_filename) == 0)
        file = (int)i;
    if (file < 0)
      snprintf(errmsg, sizeof errmsg, "file not found: %.256s", in->file_by_filename);
    break;
  case GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_FILE_CONTAINING_SYMBOL: {
    const refl_symbol *s = find_symbol(ix, in->file_containing_symbol);
    if (s)
      file = (int)s->file;
    else
      snprintf(errmsg, sizeof errmsg, "symbol not found: %.256s", in->file_containing_symbol);
    break;
  }
  case GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_ALL_EXTENSION_NUMBERS_OF_TYPE: {
    const refl_symbol *s = find_symbol(ix, in->all_extension_numbers_of_type);
    if (s && s->kind == 1) { /* no extensions are declared: an empty list */
      er.base_type_name = s->name;
      out.message_response_case =
          GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE_ALL_EXTENSION_NUMBERS_RESPONSE;
      out.all_extension_numbers_response = &er;
    } else
      snprintf(errmsg, sizeof errmsg, "type not found: %.256s", in->all_extension_numbers_of_type);
    break;
  }
  case GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_FILE_CONTAINING_EXTENSION:
    snprintf(errmsg, sizeof errmsg, "extension not found: %.200s(%d)", in->file_containing_extension->containing_type,
             (int)in->file_containing_extension->extension_number);
    break;
  default:
    snprintf(errmsg, sizeof errmsg, "empty request: set one of list_services, file_by_filename, "
                                    "file_containing_symbol, all_extension_numbers_of_type");
    err.error_code = GRPC_STATUS_INVALID_ARGUMENT;
    break;
  }
  if (file >= 0) {
    collect(ix, (size_t)file, seen, files, &fr.n_file_descriptor_proto);
    fr.file_descriptor_proto = files;
    out.message_response_case = GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE_FILE_DESCRIPTOR_RESPONSE;
    out.file_descriptor_response = &fr;
  } else if (out.message_response_case == GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE__NOT_SET) {
    if (!err.error_code)
      err.error_code = GRPC_STATUS_NOT_FOUND;
    err.error_message = errmsg;
    out.message_response_case = GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE_ERROR_RESPONSE;
    out.error_response = &err;
  }
  rpc_reply_pack(r, &out.base);
out:
  free(svc);
  free(svcp);
  free(files);
  free(seen);
  grpc__reflection__v1alpha__server_reflection_request__free_unpacked(in, NULL);
}
