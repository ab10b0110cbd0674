# libnccl-net-jaccl: NCCL net + CollNet plugin.
#
#   make            build/libnccl-net-jaccl.so and the tools
#   make test       unit + multi-process tests, the same suite built with ASan + UBSan, then
#                   the verbs suites on soft-RoCE (test-rdma)
#   make demo       a few local ranks exchanging data through the plugin's ABI
#   make perf       benchmarks (jaccl beside the raw socket / MPI anchors)
#   make test-rdma  the verbs suites on soft-RoCE in a qemu VM (RDMA_BENCH=1: + benchmark)
#   make fuzz       every libFuzzer target in tests/fuzz for FUZZ_S seconds (default 30)
#   make test-tsan  the unit and multi-process suites built with ThreadSanitizer
#   make format     clang-format every source file
#
# BUILD selects the output folder; SAN=1 builds with AddressSanitizer + UBSan, SAN=thread with
# ThreadSanitizer, SAN=fuzz with libFuzzer's coverage hooks + ASan + UBSan (clang only).

BUILD ?= build
SAN ?= 0
CC ?= cc

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
        -Wno-unused-parameter
CFLAGS_BASE := -std=gnu11 -O2 -g -fPIC -fvisibility=hidden -pthread $(WARN) \
               -Iinclude -Iplugin -MMD -MP
ifeq ($(SAN),1)
CFLAGS_BASE += -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LDSAN := -fsanitize=address,undefined
endif
ifeq ($(SAN),thread)
CFLAGS_BASE += -O1 -fsanitize=thread -fno-omit-frame-pointer
LDSAN := -fsanitize=thread
endif
ifeq ($(SAN),fuzz)
CFLAGS_BASE += -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer \
               -fno-sanitize-recover=all
LDSAN := -fsanitize=address,undefined
endif
# Reduction kernels want the vector units; everything else is plain -O2.
CFLAGS_FAST := -O3 -funroll-loops
CFLAGS += $(CFLAGS_BASE)
LDLIBS := -ldl -lpthread -lm

PLUGIN_SRC := $(shell find plugin -name '*.c' | sort)
PLUGIN_OBJ := $(PLUGIN_SRC:%.c=$(BUILD)/obj/%.o)
LIB := $(BUILD)/libnccl-net-jaccl.so
INTERNAL := $(BUILD)/libjaccl-internal.a

UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
# The multi-process harness, compiled once and linked into every mp test, tool and rdma_p2p.
MP_COMMON := $(wildcard tests/mp/common/*.c)
MP_COMMON_OBJ := $(MP_COMMON:%.c=$(BUILD)/obj/%.o)
MP_SRC := $(wildcard tests/mp/*.c)
MP_BIN := $(MP_SRC:tests/mp/%.c=$(BUILD)/tests/mp_%)
TOOL_SRC := $(wildcard tools/*.c)
TOOL_BIN := $(TOOL_SRC:tools/%.c=$(BUILD)/%)
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz/%)

.PHONY: all lib tests deps test test-fast test-asan test-tsan tests-tsan fuzz fuzz-bins fuzz-seeds \
        demo perf format format-check clean
all: lib tests $(TOOL_BIN)
lib: $(LIB) $(BUILD)/libnccl-net.so

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(if $(findstring /algo/kern,$<),$(CFLAGS_FAST)) -c $< -o $@

$(LIB): $(PLUGIN_OBJ) plugin/exports.map
	$(CC) -shared -o $@ $(PLUGIN_OBJ) -Wl,--version-script=plugin/exports.map \
	      -Wl,-z,defs -Wl,-z,nodelete -Wl,-soname,libnccl-net-jaccl.so $(LDSAN) $(LDLIBS)

# NCCL 2.28's unload bug re-resolves the default name; a symlink keeps jaccl loaded.
$(BUILD)/libnccl-net.so: $(LIB)
	ln -sf libnccl-net-jaccl.so $@

$(INTERNAL): $(PLUGIN_OBJ)
	@rm -f $@
	ar rcs $@ $(PLUGIN_OBJ)

tests: $(UNIT_BIN) $(MP_BIN) $(LIB)

$(BUILD)/tests/test_%: tests/unit/test_%.c $(INTERNAL)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/unit $< -o $@ $(INTERNAL) -lcmocka $(LDSAN) $(LDLIBS)

$(MP_COMMON_OBJ): CFLAGS += -Itests/mp

# One program from its own .c and the harness objects (-MMD writes $@.d beside it).
define LINK_MP
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/mp $< $(MP_COMMON_OBJ) -o $@ $(INTERNAL) $(LDSAN) $(LDLIBS)
endef

$(BUILD)/tests/mp_%: tests/mp/%.c $(MP_COMMON_OBJ) $(INTERNAL)
	$(LINK_MP)

$(BUILD)/%: tools/%.c $(MP_COMMON_OBJ) $(INTERNAL)
	$(LINK_MP)

# Debian packages for building, testing and benchmarking (no-op when present).
deps:
	tools/install-deps.sh

# The whole suite once normally, once under ASan + UBSan in its own build folder, then on
# real verbs (soft-RoCE in a VM).
test: deps
	$(MAKE) test-fast
	$(MAKE) test-asan
	$(MAKE) fuzz
	$(MAKE) test-tsan
	$(MAKE) test-rdma

test-fast: all
	BUILD=$(BUILD) tests/run_all.sh

# Only what run_all.sh runs: the library and the tests (no tools).
test-asan:
	$(MAKE) SAN=1 BUILD=build-asan lib tests
	BUILD=build-asan JACCL_TEST_SAN=1 tests/run_all.sh

# ThreadSanitizer, with gcc (its runtime is a shared library, which the plugin needs): every
# report fails its test; tests/tsan.supp says why each suppressed one is benign.
test-tsan:
	rm -f build-tsan/tests/test_kern_*
	$(MAKE) SAN=thread BUILD=build-tsan lib tests-tsan
	BUILD=build-tsan JACCL_TEST_SAN=1 JACCL_TEST_SLOW=$(TSAN_SLOW) \
	    NCCL_JACCL_TIMEOUT=$(TSAN_TIMEOUT) JACCL_TEST_COLL="$(TSAN_COLL)" \
	    TSAN_OPTIONS="$(TSAN_OPTS)" tests/run_all.sh

# The reduction-kernel tests start no thread (nothing for TSan to see) and take minutes under it.
tests-tsan: $(filter-out $(BUILD)/tests/test_kern_%,$(UNIT_BIN)) $(MP_BIN) $(LIB)
# TSan slows the plugin 5-15x (ASan 2-3x): deadlines and the liveness timeout stretch twice more,
# or a 64 MiB receive outlasts twice NCCL_JACCL_TIMEOUT and warns "still pending".
# The CollNet scenarios TSan runs (tests/run_coll.sh arguments; empty = all, about 13x the time
# of a normal run): every thread and failure path (all of coll_fail), ring, mesh and auto with 2
# to 4 ranks and 1 to 4 wires; not the 5..8-rank and every-type runs, which add compute, not
# thread interactions.
TSAN_COLL ?= basic:0,1,2,3,4,12 fail stress:0,2 window:0,4,7
TSAN_SLOW ?= 2
TSAN_TIMEOUT ?= 10
TSAN_OPTS = halt_on_error=1 exitcode=66 second_deadlock_stack=1 \
            suppressions=$(abspath tests/tsan.supp)

# libFuzzer: each target runs FUZZ_S seconds from its seed corpus (tests/fuzz/corpus/<target>);
# a crash fails the run and leaves its input in build-fuzz/fuzz/artifacts.
FUZZ_S ?= 30
fuzz:
	$(MAKE) SAN=fuzz CC=clang BUILD=build-fuzz fuzz-bins
	BUILD=build-fuzz FUZZ_S=$(FUZZ_S) tests/fuzz/run.sh

fuzz-bins: $(FUZZ_BIN)

# Rewrites the seed corpora from the plugin's encoders (after a wire format changes).
fuzz-seeds:
	$(MAKE) SAN=fuzz CC=clang BUILD=build-fuzz build-fuzz/fuzz/gen_seeds
	build-fuzz/fuzz/gen_seeds tests/fuzz/corpus

$(BUILD)/fuzz/gen_seeds: tests/fuzz/gen_seeds.c $(INTERNAL)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< -o $@ $(INTERNAL) $(LDSAN) $(LDLIBS)

$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(INTERNAL)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fsanitize=fuzzer $< -o $@ $(INTERNAL) $(LDSAN) $(LDLIBS)

demo: deps
	$(MAKE) all
	BUILD=$(BUILD) tools/demo.sh

perf: deps
	$(MAKE) all
	BUILD=$(BUILD) tools/perf.sh

# Verbs on soft-RoCE: installs qemu & co, builds the VM's boot files, then runs
# tests/rdma/suite.sh inside a VM with rxe0 and rxe1 on a veth pair (UC, RC, 1% loss).
RDMA_VM_TIMEOUT ?= 1500
RDMA_BIN := $(BUILD)/tests/rdma_p2p
.PHONY: test-rdma
test-rdma:
	tests/rdma/deps.sh
	$(MAKE) all $(RDMA_BIN)
	tests/rdma/image.sh
	BUILD=$(abspath $(BUILD)) tests/rdma/vm.sh -t $(RDMA_VM_TIMEOUT) -x $(BUILD) \
	    -e BUILD -e RDMA_BENCH -e RDMA_FULL -- tests/rdma/suite.sh

$(BUILD)/tests/rdma_%: tests/rdma/rdma_%.c $(MP_COMMON_OBJ) $(INTERNAL)
	$(LINK_MP)

format:
	clang-format -i $$(find plugin include tests tools -name '*.[ch]')

format-check:
	clang-format --dry-run --Werror $$(find plugin include tests tools -name '*.[ch]')

clean:
	rm -rf build build-asan build-tsan build-fuzz

# Header dependencies recorded by -MMD: objects, and the programs compiled from one .c each.
-include $(PLUGIN_OBJ:.o=.d) $(MP_COMMON_OBJ:.o=.d) \
         $(addsuffix .d,$(UNIT_BIN) $(MP_BIN) $(TOOL_BIN) $(RDMA_BIN) $(FUZZ_BIN) $(BUILD)/fuzz/gen_seeds)
