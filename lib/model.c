/* model.c — placeholder until the sharding model lands: no meshes, no manual context. */
#include "model.h"

sc_model *sc_model_build(sc_arena *a, sc_module *m, const sc_options *options) {
  sc_model *model = sc_arena_alloc(a, sizeof *model);
  model->num_partitions = -1;
  model->num_replicas = -1;
  model->platform = options->platform;
  model->manual = sc_arena_calloc(a, m->nops ? m->nops : 1, sizeof *model->manual);
  return model;
}
