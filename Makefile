# shardcheck build. `make` builds everything; `make test` installs what is missing, builds, tests;
# `make demo` starts the daemon and checks examples/ through it; `make bench` measures.
# Missing Debian packages are installed by scripts/deps.sh before anything is compiled.

BUILD   ?= build
CC      ?= cc
PKG_CONFIG ?= pkg-config

WARN    := -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes
ifdef CI
WARN    += -Werror
endif
OPT     ?= -O2 -g
CFLAGS_COMMON = -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE $(OPT) $(WARN) -MMD -MP $(EXTRA_CFLAGS)

# Recursive (=) so pkg-config runs only after scripts/deps.sh installed the packages.
LIB_PKGS    := jansson libcrypto
LIB_CFLAGS   = $(CFLAGS_COMMON) -Ilib $(shell $(PKG_CONFIG) --cflags $(LIB_PKGS))
LIB_LIBS     = $(shell $(PKG_CONFIG) --libs $(LIB_PKGS)) -lm
TEST_CFLAGS  = $(LIB_CFLAGS) $(shell $(PKG_CONFIG) --cflags criterion)
TEST_LIBS    = $(shell $(PKG_CONFIG) --libs criterion) $(LIB_LIBS)

LIB_SRC   := $(wildcard lib/*.c lib/*/*.c)
LIB_OBJ   := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
CLI_SRC   := $(wildcard client/*.c)
CLI_OBJ   := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
UNIT_SRC  := $(wildcard tests/unit/test_*.c)
UNIT_BIN  := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
CORPUS_SRC := $(wildcard tests/corpus/test_*.c)
CORPUS_BIN := $(CORPUS_SRC:tests/corpus/%.c=$(BUILD)/tests/%)

# --- gRPC: proto codegen (protobuf-c), daemon, client library -------------------------------------
RPC_PKGS    := grpc libprotobuf-c
SRV_PKGS    := $(RPC_PKGS) libuv jansson libcrypto
GEN         := $(BUILD)/gen
PROTO_SRC   := $(wildcard proto/*/*/*.proto proto/*/*/*/*.proto)
GEN_C       := $(PROTO_SRC:proto/%.proto=$(GEN)/%.pb-c.c) $(GEN)/google/protobuf/descriptor.pb-c.c
GEN_OBJ     := $(GEN_C:$(GEN)/%.c=$(BUILD)/obj/gen/%.o)
GEN_STAMP   := $(GEN)/.stamp
FDS         := $(GEN)/descriptors.pb
FDS_C       := $(GEN)/descriptors.c
# Generated code is not ours to fix: no -Werror on it.
GEN_CFLAGS   = -std=c11 $(OPT) -MMD -MP -I$(GEN) $(shell $(PKG_CONFIG) --cflags libprotobuf-c)
RPC_CFLAGS   = -I$(GEN) $(shell $(PKG_CONFIG) --cflags $(RPC_PKGS))
RPC_LIBS     = $(shell $(PKG_CONFIG) --libs $(RPC_PKGS))
SRV_CFLAGS   = $(LIB_CFLAGS) -Iserver $(RPC_CFLAGS) $(shell $(PKG_CONFIG) --cflags $(SRV_PKGS))
SRV_LIBS     = $(shell $(PKG_CONFIG) --libs $(SRV_PKGS)) $(LIB_LIBS) -lpthread
SRV_SRC     := $(wildcard server/*.c)
SRV_OBJ     := $(SRV_SRC:%.c=$(BUILD)/obj/%.o)
SERVER      := $(BUILD)/bin/shardcheckd
ITEST_SRC   := $(wildcard tests/integration/*.c)
ITEST_BIN   := $(ITEST_SRC:tests/integration/%.c=$(BUILD)/tests/integration/%)

LIBSC   := $(BUILD)/lib/libshardcheck.a
CLI     := $(BUILD)/bin/shardcheck
DEPS_OK := $(BUILD)/.deps-ok
TEST_DEPS_OK := $(BUILD)/.deps-test-ok

.PHONY: all deps test unit corpus integration valgrind-daemon bench-daemon demo bench bench-instructions clean fuzz install compare-reports
all: $(CLI) $(LIBSC) $(SERVER)

$(DEPS_OK): scripts/deps.sh
	@mkdir -p $(@D)
	@scripts/deps.sh
	@touch $@
$(TEST_DEPS_OK): scripts/deps.sh
	@mkdir -p $(@D)
	@scripts/deps.sh --test
	@touch $@
deps: $(DEPS_OK)

# The rules version (cache keys, GetCapabilities) changes whenever anything that decides results does.
LIB_ALL_FILES = $(sort $(shell find lib -type f))
RULES_HASH = $(shell cat $(LIB_ALL_FILES) | sha256sum | cut -c1-16)
$(BUILD)/obj/lib/rules/catalog.o: EXTRA_CFLAGS += -DSC_RULES_HASH='"$(RULES_HASH)"'
$(BUILD)/obj/lib/rules/catalog.o: $(LIB_ALL_FILES)

$(BUILD)/obj/lib/%.o: lib/%.c | $(DEPS_OK)
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) -c $< -o $@
$(LIBSC): $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/obj/client/%.o: client/%.c | $(DEPS_OK) $(GEN_STAMP)
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) -Iclient $(RPC_CFLAGS) -c $< -o $@
$(CLI): $(CLI_OBJ) $(GEN_OBJ) $(LIBSC)
	@mkdir -p $(@D)
	$(CC) -o $@ $(CLI_OBJ) $(GEN_OBJ) $(LIBSC) $(RPC_LIBS) $(LIB_LIBS) -lpthread

# protoc-c output and the FileDescriptorSet (served by reflection, read by the Python tests) come
# from one rule so they cannot drift.
$(GEN_STAMP): $(PROTO_SRC) | $(DEPS_OK)
	@mkdir -p $(GEN)
	cd proto && protoc --c_out=../$(GEN) $(PROTO_SRC:proto/%=%)
	protoc -I/usr/include --c_out=$(GEN) google/protobuf/descriptor.proto
	cd proto && protoc --include_imports --include_source_info --descriptor_set_out=../$(FDS) $(PROTO_SRC:proto/%=%)
	@touch $@
$(GEN_C) $(FDS): $(GEN_STAMP) ;
$(FDS_C): $(FDS)
	{ echo '#include <stddef.h>'; echo 'const unsigned char sc_descriptor_set[] = {'; \
	  od -An -v -tx1 $< | sed -e 's/ \([0-9a-f][0-9a-f]\)/0x\1,/g'; echo '};'; \
	  echo 'const size_t sc_descriptor_set_len = sizeof sc_descriptor_set;'; } > $@.tmp && mv $@.tmp $@
$(BUILD)/obj/gen/%.o: $(GEN)/%.c | $(GEN_STAMP)
	@mkdir -p $(@D)
	$(CC) $(GEN_CFLAGS) -c $< -o $@
$(BUILD)/obj/server/%.o: server/%.c | $(DEPS_OK) $(GEN_STAMP)
	@mkdir -p $(@D)
	$(CC) $(SRV_CFLAGS) -c $< -o $@
$(SERVER): $(SRV_OBJ) $(GEN_OBJ) $(BUILD)/obj/gen/descriptors.o $(LIBSC)
	@mkdir -p $(@D)
	$(CC) -o $@ $(SRV_OBJ) $(GEN_OBJ) $(BUILD)/obj/gen/descriptors.o $(LIBSC) $(SRV_LIBS)
# tests/integration/test_*.c: criterion tests of the daemon's parts (everything but server/main.c).
SRV_PARTS   = $(filter-out $(BUILD)/obj/server/main.o,$(SRV_OBJ)) $(BUILD)/obj/gen/descriptors.o
ITEST_UNITS := $(filter $(BUILD)/tests/integration/test_%,$(ITEST_BIN))
$(BUILD)/tests/integration/test_%: tests/integration/test_%.c $(SRV_PARTS) $(GEN_OBJ) $(LIBSC) | $(DEPS_OK)
	@mkdir -p $(@D)
	$(CC) $(SRV_CFLAGS) $(shell $(PKG_CONFIG) --cflags criterion) -o $@ $< $(SRV_PARTS) $(GEN_OBJ) $(LIBSC) \
	  $(SRV_LIBS) $(shell $(PKG_CONFIG) --libs criterion)
$(BUILD)/tests/integration/%: tests/integration/%.c $(BUILD)/obj/client/rpc.o $(GEN_OBJ) $(LIBSC) | $(DEPS_OK)
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) -Iclient $(RPC_CFLAGS) -o $@ $< $(BUILD)/obj/client/rpc.o $(GEN_OBJ) $(LIBSC) \
	  $(RPC_LIBS) $(LIB_LIBS) -lpthread

$(BUILD)/tests/%: tests/unit/%.c $(LIBSC) | $(DEPS_OK)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -Itests -o $@ $< $(LIBSC) $(TEST_LIBS)
$(BUILD)/tests/%: tests/corpus/%.c $(LIBSC) | $(DEPS_OK)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -Itests -o $@ $< $(LIBSC) $(TEST_LIBS)

# Tests run from the repository root so ../shared/corpus resolves as in CI.
# Every suite runs even when an earlier one fails; the target fails if any did.
unit: $(UNIT_BIN)
	@failed=""; for t in $(UNIT_BIN); do echo "== $$t"; timeout 900 $$t --jobs 2 || failed="$$failed $$t"; done; \
	  if [ -n "$$failed" ]; then echo "FAILED:$$failed"; exit 1; fi
corpus: $(CORPUS_BIN) $(CLI) $(TEST_DEPS_OK)
	@failed=""; for t in $(CORPUS_BIN); do echo "== $$t"; timeout 900 $$t --jobs 2 || failed="$$failed $$t"; done; \
	  for t in tests/corpus/*.sh; do echo "== $$t"; sh $$t || failed="$$failed $$t"; done; \
	  if [ -n "$$failed" ]; then echo "FAILED:$$failed"; exit 1; fi
	@echo "== tests/corpus/generic_vs_mlir_opt.py"; /usr/bin/python3 tests/corpus/generic_vs_mlir_opt.py

# Integration: the real daemon on 127.0.0.1, the CLI over it, an independent Python client
# (Debian's /usr/bin/python3 + python3-grpcio), then the same load under valgrind when present.
integration: all $(ITEST_BIN) $(TEST_DEPS_OK)
	@set -e; for t in $(ITEST_UNITS); do echo "== $$t"; $$t --jobs 2; done
	@sh tests/integration/run.sh $(BUILD)
bench-daemon: all $(BUILD)/tests/integration/loadgen
	@sh tests/integration/bench.sh $(BUILD)
valgrind-daemon: all $(ITEST_BIN) $(TEST_DEPS_OK)
	@sh tests/integration/valgrind.sh $(BUILD)

test: $(TEST_DEPS_OK) all unit corpus integration
	@if command -v valgrind >/dev/null 2>&1; then $(MAKE) --no-print-directory valgrind-daemon; \
	 else echo "valgrind not installed: skipping valgrind-daemon"; fi
	@echo "all test suites passed"

demo: all
	@if [ -f scripts/demo.sh ]; then sh scripts/demo.sh; else \
	  for f in examples/*.mlir; do $(CLI) check $$f; done; true; fi

# Speed and memory against a peer: shardcheck and mlir-opt-22 alternately on the same generated
# generic-form module (1, 10, 100 MB), shardcheck alone on the pretty and HLO forms and in process on
# the real-world dumps; one table, also in build/bench/results.json (tests/bench/run_bench.py).
# Slow (minutes): not part of `make test`. BENCH_SIZES=1,10 for a quick look.
BENCH_SIZES ?= 1,10,100
BENCH_RUNS ?= 5
$(BUILD)/bench/bench: tests/bench/bench.c $(LIBSC) | $(DEPS_OK)
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) -o $@ $< $(LIBSC) $(LIB_LIBS)
bench: $(CLI) $(BUILD)/bench/bench $(TEST_DEPS_OK)
	/usr/bin/python3 tests/bench/run_bench.py $(BUILD) --runs $(BENCH_RUNS) --sizes $(BENCH_SIZES)
# callgrind instruction counts of both on a 4 MB generic module (stable on a noisy machine).
bench-instructions: $(CLI) $(TEST_DEPS_OK)
	/usr/bin/python3 tests/bench/run_bench.py $(BUILD) --instructions

# Every report on the corpus, tests/modules and examples/ byte-identical to a baseline CLI's, e.g.
#   git worktree add /tmp/base main && make -C /tmp/base build/bin/shardcheck
#   make compare-reports BASE=/tmp/base/build/bin/shardcheck
compare-reports: $(CLI)
	@test -n "$(BASE)" || { echo "usage: make compare-reports BASE=/path/to/baseline/shardcheck"; exit 2; }
	/usr/bin/python3 scripts/compare_reports.py $(BASE) $(CLI)

# Coverage-guided fuzzing of everything that parses untrusted bytes (clang + libFuzzer + ASan/UBSan).
FUZZ_SECONDS ?= 60
fuzz: | $(DEPS_OK)
	@mkdir -p $(BUILD)/fuzz $(BUILD)/fuzz/corpus
	clang -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	  -Ilib $(shell $(PKG_CONFIG) --cflags $(LIB_PKGS)) $(LIB_SRC) tests/fuzz/fuzz_check.c \
	  -o $(BUILD)/fuzz/fuzz_check $(LIB_LIBS)
	cp ../shared/corpus/jax/jax_backcompat/*.mlir ../shared/corpus/xla/hlo/*.hlo $(BUILD)/fuzz/corpus/ 2>/dev/null || true
	$(BUILD)/fuzz/fuzz_check -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -rss_limit_mb=2048 -timeout=10 $(BUILD)/fuzz/corpus

# Binaries, the default config (kept if present) and the README, for deploy/shardcheckd.service.
PREFIX ?= /usr/local
install: all
	install -D -m 755 $(SERVER) $(DESTDIR)$(PREFIX)/bin/shardcheckd
	install -D -m 755 $(CLI) $(DESTDIR)$(PREFIX)/bin/shardcheck
	[ -f $(DESTDIR)$(PREFIX)/etc/shardcheckd/shardcheckd.json ] || \
	  install -D -m 644 config/shardcheckd.json $(DESTDIR)$(PREFIX)/etc/shardcheckd/shardcheckd.json
	install -D -m 644 README.md $(DESTDIR)$(PREFIX)/share/doc/shardcheck/README.md

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD)/obj $(BUILD)/tests -name '*.d' 2>/dev/null)
