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

LIB_SRC   := $(wildcard lib/*.c)
LIB_OBJ   := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
CLI_SRC   := client/main.c
CLI_OBJ   := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
UNIT_SRC  := $(wildcard tests/unit/test_*.c)
UNIT_BIN  := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
CORPUS_SRC := $(wildcard tests/corpus/test_*.c)
CORPUS_BIN := $(CORPUS_SRC:tests/corpus/%.c=$(BUILD)/tests/%)

LIBSC   := $(BUILD)/lib/libshardcheck.a
CLI     := $(BUILD)/bin/shardcheck
DEPS_OK := $(BUILD)/.deps-ok
TEST_DEPS_OK := $(BUILD)/.deps-test-ok

.PHONY: all deps test unit corpus integration demo bench clean fuzz
all: $(CLI) $(LIBSC)

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
RULES_HASH = $(shell cat lib/*.c lib/*.h lib/*.def lib/*.inc | sha256sum | cut -c1-16)
$(BUILD)/obj/lib/catalog.o: EXTRA_CFLAGS += -DSC_RULES_HASH='"$(RULES_HASH)"'
$(BUILD)/obj/lib/catalog.o: $(wildcard lib/*.c lib/*.h lib/*.def lib/*.inc)

$(BUILD)/obj/lib/%.o: lib/%.c | $(DEPS_OK)
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) -c $< -o $@
$(LIBSC): $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/obj/client/%.o: client/%.c | $(DEPS_OK)
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) -Iclient -c $< -o $@
$(CLI): $(CLI_OBJ) $(LIBSC)
	@mkdir -p $(@D)
	$(CC) -o $@ $(CLI_OBJ) $(LIBSC) $(LIB_LIBS) -lpthread

$(BUILD)/tests/%: tests/unit/%.c $(LIBSC) | $(DEPS_OK)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -Itests -o $@ $< $(LIBSC) $(TEST_LIBS)
$(BUILD)/tests/%: tests/corpus/%.c $(LIBSC) | $(DEPS_OK)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -Itests -o $@ $< $(LIBSC) $(TEST_LIBS)

# Tests run from the repository root so ../shared/corpus resolves as in CI.
unit: $(UNIT_BIN)
	@set -e; for t in $(UNIT_BIN); do echo "== $$t"; $$t --jobs 2; done
corpus: $(CORPUS_BIN) $(CLI) $(TEST_DEPS_OK)
	@set -e; for t in $(CORPUS_BIN); do echo "== $$t"; $$t --jobs 2; done
	@set -e; for t in tests/corpus/*.sh; do echo "== $$t"; sh $$t; done
	@echo "== tests/corpus/generic_vs_mlir_opt.py"; /usr/bin/python3 tests/corpus/generic_vs_mlir_opt.py

test: $(TEST_DEPS_OK) all unit corpus
	@echo "all test suites passed"

demo: all
	@if [ -f scripts/demo.sh ]; then sh scripts/demo.sh; else \
	  for f in examples/*.mlir; do $(CLI) check $$f; done; true; fi

# Speed and memory as ratios against an in-process reference (see tests/bench/bench.c).
BENCH_INPUTS = $(wildcard ../shared/corpus/xla/real_world/*.hlo) \
  $(shell ls -S ../shared/corpus/jax/jax_backcompat/*.mlir 2>/dev/null | head -5) \
  $(wildcard ../shared/corpus/shardy/valid/*.mlir)
$(BUILD)/bench/bench: tests/bench/bench.c $(LIBSC) | $(DEPS_OK)
	@mkdir -p $(@D)
	$(CC) $(LIB_CFLAGS) -o $@ $< $(LIBSC) $(LIB_LIBS)
$(BUILD)/bench/large.mlir: tests/bench/gen_large.py
	@mkdir -p $(@D)
	/usr/bin/python3 $< $@ 400
bench: $(BUILD)/bench/bench $(BUILD)/bench/large.mlir
	$(BUILD)/bench/bench -n 5 $(BUILD)/bench/large.mlir
	$(BUILD)/bench/bench -n 20 $(BENCH_INPUTS)

# Coverage-guided fuzzing of everything that parses untrusted bytes (clang + libFuzzer + ASan/UBSan).
FUZZ_SECONDS ?= 60
fuzz: | $(DEPS_OK)
	@mkdir -p $(BUILD)/fuzz $(BUILD)/fuzz/corpus
	clang -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	  -Ilib $(shell $(PKG_CONFIG) --cflags $(LIB_PKGS)) $(LIB_SRC) tests/fuzz/fuzz_check.c \
	  -o $(BUILD)/fuzz/fuzz_check $(LIB_LIBS)
	cp ../shared/corpus/jax/jax_backcompat/*.mlir ../shared/corpus/xla/hlo/*.hlo $(BUILD)/fuzz/corpus/ 2>/dev/null || true
	$(BUILD)/fuzz/fuzz_check -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -rss_limit_mb=2048 $(BUILD)/fuzz/corpus

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD)/obj $(BUILD)/tests -name '*.d' 2>/dev/null)
