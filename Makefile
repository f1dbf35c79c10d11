# shardcheck build. `make` builds everything; `make test` installs what is missing, builds, tests;
# `make demo` starts the daemon and checks examples/ through it; `make bench` measures.
# Missing Debian packages are installed by scripts/deps.sh before anything is compiled (see NO_DEPS_GOALS).

# SAN=address,undefined builds everything with those sanitizers into its own directory (build-san/)
# and `make test SAN=...` runs the unit, corpus and integration suites on it (no valgrind there).
# CFLAGS / LDFLAGS from the environment or the command line are added to every compile / link.
SAN     ?=
# The release build is -O3 (2-3% faster on a large module, where propagation's loops inline); the
# sanitizer build stays at -O2, where the sanitizers' checks give -O3 false maybe-uninitialized warnings.
ifneq ($(strip $(SAN)),)
BUILD   ?= build-san
SAN_FLAGS := -fsanitize=$(SAN) -fno-sanitize-recover=all -fno-omit-frame-pointer
OPT     ?= -O2 -g
else
BUILD   ?= build
SAN_FLAGS :=
OPT     ?= -O3 -g
endif
CC      ?= cc
PKG_CONFIG ?= pkg-config
LINK_FLAGS = $(SAN_FLAGS) $(LDFLAGS)

WARN    := -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes
ifdef CI
WARN    += -Werror
endif
CFLAGS_COMMON = -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE $(OPT) $(WARN) -MMD -MP $(SAN_FLAGS) $(CFLAGS) $(EXTRA_CFLAGS)

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
SRV_PKGS    := $(RPC_PKGS) libuv jansson libcrypto hiredis libsystemd
GEN         := $(BUILD)/gen
PROTO_SRC   := $(wildcard proto/*/*/*.proto proto/*/*/*/*.proto)
GEN_C       := $(PROTO_SRC:proto/%.proto=$(GEN)/%.pb-c.c) $(GEN)/google/protobuf/descriptor.pb-c.c
GEN_OBJ     := $(GEN_C:$(GEN)/%.c=$(BUILD)/obj/gen/%.o)
GEN_STAMP   := $(GEN)/.stamp
FDS         := $(GEN)/descriptors.pb
FDS_C       := $(GEN)/descriptors.c
# Generated code is not ours to fix: no -Werror on it.
GEN_CFLAGS   = -std=c11 $(OPT) -MMD -MP $(SAN_FLAGS) $(CFLAGS) -I$(GEN) $(shell $(PKG_CONFIG) --cflags libprotobuf-c)
RPC_CFLAGS   = -I$(GEN) $(shell $(PKG_CONFIG) --cflags $(RPC_PKGS))
RPC_LIBS     = $(shell $(PKG_CONFIG) --libs $(RPC_PKGS))
# The CLI links gRPC's own archives (gRPC, absl, re2, upb, c-ares, protobuf-c) statically: a local check
# never touches gRPC, and resolving ~50 shared C++ libraries at startup cost 12 M instructions and
# ~20 ms per run. System libraries (OpenSSL, zlib, libstdc++) stay shared. Sanitizer builds link shared.
RPC_ARCHIVES = $(filter -lgrpc -laddress_sorting -lre2 -lupb -lcares -lgpr -labsl_% -lprotobuf-c,\
                 $(shell $(PKG_CONFIG) --static --libs $(RPC_PKGS)))
CLI_RPC_LIBS = $(if $(SAN),$(RPC_LIBS),-Wl,-Bstatic $(RPC_ARCHIVES) -Wl,-Bdynamic -lssl -lcrypto -lz -lstdc++ -latomic)
SRV_CFLAGS   = $(LIB_CFLAGS) -Iserver $(RPC_CFLAGS) $(shell $(PKG_CONFIG) --cflags $(SRV_PKGS))
SRV_LIBS     = $(shell $(PKG_CONFIG) --libs $(SRV_PKGS)) $(LIB_LIBS) -lpthread
SRV_SRC     := $(wildcard server/*.c)
SRV_OBJ     := $(SRV_SRC:%.c=$(BUILD)/obj/%.o)
SERVER      := $(BUILD)/bin/shardcheckd
ITEST_SRC   := $(wildcard tests/integration/*.c)
ITEST_BIN   := $(ITEST_SRC:tests/integration/%.c=$(BUILD)/tests/integration/%)

LIBSC   := $(BUILD)/lib/libshardcheck.a
# The shared library for the Python package (ctypes): the same sources compiled as PIC into their own
# object set, exporting only the public API (a version script listing what lib/shardcheck.h declares).
LIB_PIC_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj-pic/%.o)
LIBSO   := $(BUILD)/lib/libshardcheck.so
LIBSO_MAP := $(BUILD)/lib/libshardcheck.map
PUBLIC_HEADERS := lib/shardcheck.h
# Python message classes, generated from proto/ by Debian's protoc (never committed).
PY_GEN  := $(BUILD)/python/shardcheck/v1/shardcheck_pb2.py
CLI     := $(BUILD)/bin/shardcheck
# Missing Debian packages are installed before make reads a single rule: scripts/deps.sh checks with
# dpkg-query and runs apt-get only for what is missing. So no object depends on an install step (a
# touched scripts/deps.sh rebuilds nothing), `make` with everything installed never runs apt, and
# `make -jN` on a fresh machine compiles nothing before the packages are there. Skipped for
# NO_DEPS=1 (what `make check` uses), goals that build nothing, dry runs (-n), and sub-makes (done once).
NO_DEPS_GOALS := clean help deps
ifeq ($(NO_DEPS)$(SC_DEPS_DONE)$(findstring n,$(firstword -$(MAKEFLAGS))),)
ifneq ($(filter-out $(NO_DEPS_GOALS),$(or $(MAKECMDGOALS),all)),)
DEPS_RC := $(shell scripts/deps.sh >&2; echo $$?)
ifneq ($(DEPS_RC),0)
$(error scripts/deps.sh failed (exit $(DEPS_RC)); install the packages it names and run make again)
endif
export SC_DEPS_DONE := 1
endif
endif
TEST_DEPS_OK := $(BUILD)/.deps-test-ok

.PHONY: all deps help check rule-pages test san-test unit corpus integration python-test valgrind-daemon bench-daemon soak demo bench bench-instructions clean fuzz fuzz-ci install fleet-test deploy-test compare-reports check-layers redteam
all: $(CLI) $(LIBSC) $(SERVER) $(LIBSO) $(PY_GEN)

# The test suites' extra packages (mlir-opt, valgrind, nginx, ...), again only what is missing.
$(TEST_DEPS_OK): scripts/deps.sh
	@mkdir -p $(@D)
	@scripts/deps.sh --test
	@touch $@
deps:
	@scripts/deps.sh

# The rules version (cache keys, GetCapabilities) changes whenever anything that decides results does.
LIB_ALL_FILES = $(sort $(shell find lib -type f))
RULES_HASH = $(shell cat $(LIB_ALL_FILES) | sha256sum | cut -c1-16)
$(BUILD)/obj/lib/rules/catalog.o $(BUILD)/obj-pic/lib/rules/catalog.o: EXTRA_CFLAGS += -DSC_RULES_HASH='"$(RULES_HASH)"'
$(BUILD)/obj/lib/rules/catalog.o $(BUILD)/obj-pic/lib/rules/catalog.o: $(LIB_ALL_FILES)

$(BUILD)/obj/lib/%.o: lib/%.c
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) -c $< -o $@
$(LIBSC): $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/obj-pic/lib/%.o: lib/%.c
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) -fPIC -c $< -o $@
# Every function a public header declares at the start of a line (comments and macros start otherwise).
$(LIBSO_MAP): $(PUBLIC_HEADERS)
	@mkdir -p $(@D)
	{ echo '{ global:'; sed -n 's/^[A-Za-z_][A-Za-z0-9_ *]*[ *]\(sc_[a-z0-9_]*\)(.*/  \1;/p' $(PUBLIC_HEADERS); \
	  echo 'local: *; };'; } > $@.tmp && mv $@.tmp $@
$(LIBSO): $(LIB_PIC_OBJ) $(LIBSO_MAP)
	@mkdir -p $(@D)
	$(CC) -shared $(LINK_FLAGS) -o $@ -Wl,-soname,libshardcheck.so -Wl,--version-script=$(LIBSO_MAP) -Wl,--no-undefined \
	  $(LIB_PIC_OBJ) $(LIB_LIBS)
$(PY_GEN): $(PROTO_SRC)
	@mkdir -p $(BUILD)/python
	protoc -Iproto --python_out=$(BUILD)/python proto/shardcheck/v1/shardcheck.proto

$(BUILD)/obj/client/%.o: client/%.c | $(GEN_STAMP)
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) -Iclient $(RPC_CFLAGS) -c $< -o $@
$(CLI): $(CLI_OBJ) $(GEN_OBJ) $(LIBSC)
	@mkdir -p $(@D)
	$(CC) $(LINK_FLAGS) -o $@ $(CLI_OBJ) $(GEN_OBJ) $(LIBSC) $(CLI_RPC_LIBS) $(LIB_LIBS) -lpthread

# protoc-c output and the FileDescriptorSet (served by reflection, read by the Python tests) come
# from one rule so they cannot drift.
$(GEN_STAMP): $(PROTO_SRC)
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
$(BUILD)/obj/server/%.o: server/%.c | $(GEN_STAMP)
	@mkdir -p $(@D)
	$(CC) $(SRV_CFLAGS) -c $< -o $@
$(SERVER): $(SRV_OBJ) $(GEN_OBJ) $(BUILD)/obj/gen/descriptors.o $(LIBSC)
	@mkdir -p $(@D)
	$(CC) $(LINK_FLAGS) -o $@ $(SRV_OBJ) $(GEN_OBJ) $(BUILD)/obj/gen/descriptors.o $(LIBSC) $(SRV_LIBS)
# tests/integration/test_*.c: criterion tests of the daemon's parts (everything but server/main.c).
SRV_PARTS   = $(filter-out $(BUILD)/obj/server/main.o,$(SRV_OBJ)) $(BUILD)/obj/gen/descriptors.o
ITEST_UNITS := $(filter $(BUILD)/tests/integration/test_%,$(ITEST_BIN))
$(BUILD)/tests/integration/test_%: tests/integration/test_%.c $(SRV_PARTS) $(GEN_OBJ) $(LIBSC)
	@mkdir -p $(@D)
	$(CC) $(SRV_CFLAGS) $(shell $(PKG_CONFIG) --cflags criterion) $(LDFLAGS) -o $@ $< $(SRV_PARTS) $(GEN_OBJ) $(LIBSC) \
	  $(SRV_LIBS) $(shell $(PKG_CONFIG) --libs criterion)
$(BUILD)/tests/integration/%: tests/integration/%.c $(BUILD)/obj/client/rpc.o $(GEN_OBJ) $(LIBSC)
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) -Iclient $(RPC_CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/obj/client/rpc.o $(GEN_OBJ) $(LIBSC) \
	  $(RPC_LIBS) $(LIB_LIBS) -lpthread

$(BUILD)/tests/%: tests/unit/%.c $(LIBSC)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -Itests $(LDFLAGS) -o $@ $< $(LIBSC) $(TEST_LIBS)
$(BUILD)/tests/%: tests/corpus/%.c $(LIBSC)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -Itests $(LDFLAGS) -o $@ $< $(LIBSC) $(TEST_LIBS)

# Tests run from the repository root so ../shared/corpus resolves as in CI.
# Every suite runs even when an earlier one fails; the target fails if any did.
unit: $(UNIT_BIN)
	@failed=""; for t in $(UNIT_BIN); do echo "== $$t"; timeout 900 $$t --jobs 2 || failed="$$failed $$t"; done; \
	  if [ -n "$$failed" ]; then echo "FAILED:$$failed"; exit 1; fi
# The official SARIF 2.1.0 schema and ajv (pinned by tests/sarif/package-lock.json), for ci_test.sh.
NPM_SARIF := $(BUILD)/npm-sarif/.stamp
$(NPM_SARIF): tests/sarif/package.json tests/sarif/package-lock.json | $(TEST_DEPS_OK)
	@mkdir -p $(@D)
	cp tests/sarif/package.json tests/sarif/package-lock.json $(@D)/
	cd $(@D) && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

corpus: $(CORPUS_BIN) $(CLI) $(TEST_DEPS_OK) $(NPM_SARIF)
	@failed=""; for t in $(CORPUS_BIN); do echo "== $$t"; timeout 900 $$t --jobs 2 || failed="$$failed $$t"; done; \
	  for t in tests/corpus/*.sh; do echo "== $$t"; SC_BUILD=$(BUILD) sh $$t || failed="$$failed $$t"; done; \
	  if [ -n "$$failed" ]; then echo "FAILED:$$failed"; exit 1; fi
	@echo "== tests/corpus/generic_vs_mlir_opt.py"; SC_BUILD=$(BUILD) /usr/bin/python3 tests/corpus/generic_vs_mlir_opt.py
	@echo "== tests/corpus/vhlo_bytecode_test.py"; SC_BUILD=$(BUILD) /usr/bin/python3 tests/corpus/vhlo_bytecode_test.py
	@echo "== tests/corpus/shardy_filecheck.py"; SC_BUILD=$(BUILD) /usr/bin/python3 tests/corpus/shardy_filecheck.py

# Integration: the real daemon on 127.0.0.1, the CLI over it, an independent Python client
# (Debian's /usr/bin/python3 + python3-grpcio), then the same load under valgrind when present.
integration: all $(ITEST_BIN) $(TEST_DEPS_OK)
	@set -e; for t in $(ITEST_UNITS); do echo "== $$t"; $$t --jobs 2; done
	@sh tests/integration/run.sh $(BUILD)
# deploy/: manifests against the Kubernetes and compose schemas (pinned npm validators), the systemd
# unit's exposure (systemd-analyze security --offline); see tests/deploy/run.sh.
deploy-test: $(SERVER) $(TEST_DEPS_OK)
	@sh tests/deploy/run.sh $(BUILD)
# The attacks of ../shared/redteam against nginx (deploy/nginx) + the daemon on loopback (~10 min; not in `make test`).
redteam: all $(TEST_DEPS_OK)
	@sh tests/redteam/run.sh $(BUILD)
# Three daemons sharing one Redis behind nginx (grpc_pass), one killed under load: see the script.
fleet-test: all $(BUILD)/tests/integration/loadgen $(TEST_DEPS_OK)
	@sh tests/integration/fleet.sh $(BUILD)
bench-daemon: all $(BUILD)/tests/integration/loadgen
	@sh tests/integration/bench.sh $(BUILD)
# Bounded soak on loopback under mixed hostile traffic (SOAK_SECONDS, default 60); not part of `test`.
soak: all $(BUILD)/tests/integration/loadgen
	@sh tests/integration/soak.sh $(BUILD)
valgrind-daemon: all $(ITEST_BIN) $(TEST_DEPS_OK)
	@sh tests/integration/valgrind.sh $(BUILD)

# The Python package (client/python) with Debian's /usr/bin/python3: in-process and through one daemon
# the suite starts, against the CLI on the whole corpus; packaging (pip install into a temp dir).
python-test: all $(TEST_DEPS_OK)
	@echo "== tests/python"; BUILD=$(BUILD) timeout 900 /usr/bin/python3 -m unittest discover -s tests/python -t tests/python

# The quick loop: build and the unit tests, without installing packages (scripts/deps.sh is not run).
check:
	@$(MAKE) --no-print-directory NO_DEPS=1 all unit

# docs/rules/SCxxxx.md from the catalog (tests/corpus/rule_pages_test.sh fails when they are stale).
rule-pages: $(CLI)
	@SC_BUILD=$(BUILD) /usr/bin/python3 scripts/gen_rule_pages.py --build $(BUILD)

help:
	@printf '%s\n' \
	  'make                 build everything into build/ (installs missing Debian packages first)' \
	  'make check           build and the unit tests; no package installation (the quick loop)' \
	  'make demo            start shardcheckd and check examples/ through it' \
	  'make test            every suite (15+ minutes): check-layers unit corpus integration python-test deploy-test fleet-test valgrind-daemon' \
	  'make unit | corpus | integration | python-test | deploy-test | fleet-test | check-layers   one suite' \
	  'make san-test        the unit, corpus and integration suites under ASan/UBSan (build-san/)' \
	  'make fuzz | fuzz-ci  libFuzzer harnesses of tests/fuzz (FUZZ_SECONDS each)' \
	  'make valgrind-daemon | soak | redteam   the daemon under valgrind; a bounded soak; the attacks against the front' \
	  'make bench | bench-instructions | bench-daemon   measurements (BENCHMARKS.md)' \
	  'make compare-reports BASE=/path/to/shardcheck   every corpus report byte-identical to a baseline CLI' \
	  'make rule-pages      regenerate docs/rules/ from the catalog' \
	  'make install [PREFIX=/usr/local] | clean'

# The layer map of lib/ (scripts/check_layers.sh): no object uses a higher layer, no cycles, true file
# heads; then the same check on a planted back-reference must fail.
check-layers: $(LIBSC)
	@sh scripts/check_layers.sh --self-test $(BUILD)
	@sh scripts/check_layers.sh $(BUILD)

# The suites run one after another (each starts daemons and measures RSS and descriptors, so they must
# not share the machine with each other); `make -jN test` parallelises the builds inside each. Every
# suite runs even when an earlier one fails; the target fails if any did.
RUN_SUITES = failed=""; for s in $(1); do $(MAKE) --no-print-directory $$s || failed="$$failed $$s"; done; \
  if [ -n "$$failed" ]; then echo "FAILED suites:$$failed"; exit 1; fi

ifeq ($(strip $(SAN)),)
# scripts/deps.sh --test installed valgrind; if it is still missing, that is a failure, not a skip.
test: $(TEST_DEPS_OK) all
	@$(call RUN_SUITES,check-layers unit corpus integration python-test deploy-test fleet-test)
	@command -v valgrind >/dev/null 2>&1 || { echo "valgrind is not installed (scripts/deps.sh --test failed?)"; exit 1; }
	@$(MAKE) --no-print-directory valgrind-daemon
	@echo "all test suites passed"
else
# Sanitizer pass: the same suites on the instrumented build; valgrind cannot run ASan binaries, and
# the integration suite checks a corpus sample (SC_QUICK) through the daemon, as under valgrind.
test: export ASAN_OPTIONS = $(SAN_ASAN_OPTIONS)
test: export UBSAN_OPTIONS = print_stacktrace=1:halt_on_error=1
test: export LSAN_OPTIONS = suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0
test: export SC_QUICK = 1
test: export SC_SANITIZED = 1
test: $(TEST_DEPS_OK) all
	@$(call RUN_SUITES,unit corpus integration)
	@echo "all test suites passed under -fsanitize=$(SAN)"
endif
# abort_on_error: a report fails the test that triggered it; leaks are checked (LSan) except what
# tests/lsan.supp lists (third-party allocations kept for the life of the process).
SAN_ASAN_OPTIONS = abort_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=0
san-test:
	@$(MAKE) --no-print-directory test SAN=address,undefined

demo: all
	@if [ -f scripts/demo.sh ]; then sh scripts/demo.sh; else \
	  for f in examples/*.mlir; do $(CLI) check $$f; done; true; fi

# Speed and memory against a peer: shardcheck and mlir-opt-22 alternately on the same generated
# generic-form module (1, 10, 100 MB), shardcheck alone on the pretty and HLO forms and in process on
# the real-world dumps; one table, also in build/bench/results.json (tests/bench/run_bench.py).
# Slow (minutes): not part of `make test`. BENCH_SIZES=1,10 for a quick look. BASE=OLD/build (a build
# dir of an older checkout holding bench/bench) adds its speed on the real-world dumps, run alternately.
BENCH_SIZES ?= 1,10,100
BENCH_RUNS ?= 5
$(BUILD)/bench/bench: tests/bench/bench.c $(LIBSC)
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) -Itests -o $@ $< $(LIBSC) $(LIB_LIBS)
$(BUILD)/bench/bench_bytecode: tests/bench/bench_bytecode.c $(LIBSC)
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) -Itests -o $@ $< $(LIBSC) $(LIB_LIBS)
bench: $(CLI) $(BUILD)/bench/bench $(BUILD)/bench/bench_bytecode $(TEST_DEPS_OK)
	/usr/bin/python3 tests/bench/run_bench.py $(BUILD) --runs $(BENCH_RUNS) --sizes $(BENCH_SIZES) $(if $(BASE),--base $(BASE))
	@echo '== bytecode read vs text parse of the same module'
	$(BUILD)/bench/bench_bytecode -n 20 $(shell ls -S ../shared/corpus/jax/jax_backcompat/*.mlirbc 2>/dev/null | head -4)
# callgrind instruction counts of both on a 4 MB generic module (stable on a noisy machine).
bench-instructions: $(CLI) $(TEST_DEPS_OK)
	/usr/bin/python3 tests/bench/run_bench.py $(BUILD) --instructions

# Every report on the corpus, tests/modules and examples/ byte-identical to a baseline CLI's, e.g.
#   git worktree add /tmp/base main && make -C /tmp/base build/bin/shardcheck
#   make compare-reports BASE=/tmp/base/build/bin/shardcheck [IGNORE=cost]   (IGNORE: report keys a change adds)
compare-reports: $(CLI)
	@test -n "$(BASE)" || { echo "usage: make compare-reports BASE=/path/to/baseline/shardcheck"; exit 2; }
	/usr/bin/python3 scripts/compare_reports.py $(BASE) $(CLI) $(foreach k,$(IGNORE),--ignore $(k))

# Coverage-guided fuzzing of everything that parses untrusted bytes (clang + libFuzzer + ASan/UBSan):
# each harness in tests/fuzz/ runs FUZZ_SECONDS, seeded with the corpus and tests/regress/. A crash
# leaves its input in $(BUILD)/fuzz/crash-*: copy it to tests/regress/ (the unit tests replay it).
# strict_string_checks: the input is not NUL-terminated, so a str*() call on it is a read past its end.
FUZZ_SECONDS ?= 60
FUZZ_SRC  := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN  := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz/%)
# The library is compiled once for every harness (instrumented for coverage, not yet linked with
# libFuzzer's main), so `make -jN fuzz` builds it in parallel and each harness is one link.
FUZZ_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -g -O1 -fno-sanitize-recover=all -MMD -MP \
  -Ilib $(shell $(PKG_CONFIG) --cflags $(LIB_PKGS))
FUZZ_LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj-fuzz/%.o)
$(BUILD)/obj-fuzz/%.o: %.c
	@mkdir -p $(@D)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link,address,undefined -c $< -o $@
$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_common.h $(FUZZ_LIB_OBJ)
	@mkdir -p $(@D)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer,address,undefined $< $(FUZZ_LIB_OBJ) -o $@ $(LIB_LIBS)
fuzz: $(FUZZ_BIN)
	@rm -rf $(BUILD)/fuzz/corpus $(BUILD)/fuzz/crash-* $(BUILD)/fuzz/timeout-* $(BUILD)/fuzz/oom-* && mkdir -p $(BUILD)/fuzz/corpus
	@cp ../shared/corpus/jax/jax_backcompat/*.mlir ../shared/corpus/xla/hlo/*.hlo ../shared/corpus/shardy/*/*.mlir \
	  ../shared/corpus/upstream/*/*.hlo ../shared/corpus/jax/*/*.mlirbc tests/regress/* $(BUILD)/fuzz/corpus/
	@for f in $(FUZZ_BIN); do echo "== $$f ($(FUZZ_SECONDS) s)"; \
	  (cd $(BUILD)/fuzz && ASAN_OPTIONS=strict_string_checks=1 ./$$(basename $$f) -max_total_time=$(FUZZ_SECONDS) -max_len=262144 -rss_limit_mb=2048 \
	    -timeout=10 -print_final_stats=1 corpus 2>&1 | grep -E "^(stat::number_of_executed_units|==[0-9]+==ERROR|SUMMARY)|Done ") \
	    || true; \
	  ls $(BUILD)/fuzz/crash-* $(BUILD)/fuzz/timeout-* $(BUILD)/fuzz/oom-* 2>/dev/null | grep -q . && \
	    { echo "fuzz: $$f found a failing input (kept in $(BUILD)/fuzz/); add it to tests/regress/"; exit 1; }; \
	done; echo "fuzz: no crashes"
fuzz-ci:
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=30

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

-include $(shell find $(BUILD)/obj $(BUILD)/obj-pic $(BUILD)/obj-fuzz $(BUILD)/tests -name '*.d' 2>/dev/null)
