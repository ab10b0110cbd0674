# SPDX-License-Identifier: BSD-3-Clause
# libnccl-net-jaccl: NCCL net + CollNet plugin.
#
#   make            build/libnccl-net-jaccl.so and the tools (a C compiler and the rdma-core
#                   headers are all it needs)
#   make test       builds the tests (cmocka), runs unit + multi-process tests, the same suite
#                   built with ASan + UBSan, the package check, then the verbs suites on
#                   soft-RoCE (test-rdma); `make check` is the same
#   make install    PREFIX=/usr/local DESTDIR= (INSTALL_DEFAULT_ALIAS=1: + libnccl-net.so);
#                   make uninstall removes exactly that
#   make deb        $(BUILD)/deb/libnccl-net-jaccl_<version>_<arch>.deb (dpkg-deb, no network)
#   make test-net   one rank in each of two network namespaces (netem, link down, flap)
#   make test-topo  switchless direct-cable clusters in network namespaces (2 nodes x 2 cables,
#                   triangle, ring of 4, one switch): p2p, CollNet, cable down, relay faults
#   make demo       a few local ranks exchanging data through the plugin's ABI
#   make perf       benchmarks (jaccl beside the raw socket / MPI anchors)
#   make test-rdma  the verbs suites on soft-RoCE in a qemu VM (RDMA_BENCH=1: + benchmark)
#   make rdma-lat   verbs latency, message rate, side frames and 4 KiB all-reduce beside perftest
#                   in that VM (tests/rdma/lat.sh; ROUNDS interleaved rounds, default 3)
#   make fuzz       every libFuzzer target in tests/fuzz for FUZZ_S seconds (default 30)
#   make test-tsan  the unit and multi-process suites built with ThreadSanitizer
#   make test-noisy test-fast while two load processes keep both cores busy (not in make test)
#   make format     clang-format every source file
#   make docs       regenerate docs/configuration.md from the parameter table
#
# BUILD selects the output folder; SAN=1 builds with AddressSanitizer + UBSan, SAN=thread with
# ThreadSanitizer, SAN=fuzz with libFuzzer's coverage hooks + ASan + UBSan (clang only).

BUILD ?= build
SAN ?= 0
CC ?= cc

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
        -Wno-unused-parameter
CFLAGS_BASE := -std=gnu11 -O2 -g -fPIC -fvisibility=hidden -pthread $(WARN) \
               -Iinclude -Iplugin -I$(BUILD)/gen -MMD -MP
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
# The multi-process harness (harness/: the p2p ranks, checks and pumps, and the CollNet helpers),
# compiled once and linked into every mp test, tool and rdma_p2p; nothing else from tests/.
MP_COMMON := $(wildcard harness/*.c)
MP_COMMON_OBJ := $(MP_COMMON:%.c=$(BUILD)/obj/%.o)
# What unit tests share, linked from an archive so each takes only what it calls: every
# tests/unit/*.c that is not a test_*.c (the narrow formats' reference kern_ref.c, the fabric
# contract suite fab_contract.c), jaccl-info with its main renamed (test_info_verbs), and the
# harness its rendezvous mode uses.
UNIT_LIB := $(BUILD)/tests/libunit.a
UNIT_LIB_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(filter-out $(UNIT_SRC),$(wildcard tests/unit/*.c))) \
                $(BUILD)/obj/tools/jaccl-info-main.o $(MP_COMMON_OBJ)
MP_SRC := $(wildcard tests/mp/*.c)
MP_BIN := $(MP_SRC:tests/mp/%.c=$(BUILD)/tests/mp_%)
TOOL_SRC := $(wildcard tools/*.c)
TOOL_BIN := $(TOOL_SRC:tools/%.c=$(BUILD)/%)
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz/%)

.PHONY: all lib tools tests deps test check test-fast test-asan test-tsan tests-tsan fuzz fuzz-bins \
        fuzz-seeds demo perf format format-check clean docs test-net test-topo test-noisy
all: lib tools
lib: $(LIB) $(BUILD)/libnccl-net.so
tools: $(TOOL_BIN)

# ---- build prerequisites and version (packaging/) ----
# A missing compiler or header stops the build with one line naming the package; checked once
# per build folder (delete the stamp to check again).
$(BUILD)/.deps-lib $(BUILD)/.deps-tests: $(BUILD)/.deps-%: packaging/check-deps.sh
	@mkdir -p $(dir $@)
	@packaging/check-deps.sh "$(CC)" $*
	@touch $@

# The version (packaging/version.sh: git describe, or VERSION outside git), regenerated on
# every make but rewritten only when it changed, so nothing recompiles for nothing.
VERSION_H := $(BUILD)/gen/jaccl_version.h
.PHONY: FORCE
$(VERSION_H): FORCE
	@mkdir -p $(dir $@)
	@printf '#define JACCL_VERSION_STR "%s"\n' "$$(packaging/version.sh)" > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
# ---- end of build prerequisites and version ----

$(BUILD)/obj/%.o: %.c | $(BUILD)/.deps-lib $(VERSION_H)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(if $(findstring /algo/kern,$<),$(CFLAGS_FAST)) -c $< -o $@

# The linker's export list, from the one list of ABI versions (plugin/abi/versions.h).
EXPORTS_MAP := $(BUILD)/gen/exports.map
$(EXPORTS_MAP): plugin/exports.map.in plugin/abi/versions.h
	@mkdir -p $(dir $@)
	$(CC) -E -P -x c -Iplugin $< -o $@

$(LIB): $(PLUGIN_OBJ) $(EXPORTS_MAP)
	$(CC) -shared -o $@ $(PLUGIN_OBJ) -Wl,--version-script=$(EXPORTS_MAP) \
	      -Wl,-z,defs -Wl,-z,nodelete -Wl,-soname,libnccl-net-jaccl.so $(LDSAN) $(LDLIBS)

# NCCL 2.28's unload bug re-resolves the default name; a symlink keeps jaccl loaded.
$(BUILD)/libnccl-net.so: $(LIB)
	ln -sf libnccl-net-jaccl.so $@

$(INTERNAL): $(PLUGIN_OBJ)
	@rm -f $@
	ar rcs $@ $(PLUGIN_OBJ)

# jaccl-info too: tests/check_info.sh runs it in every build folder (ASan included).
tests: $(UNIT_BIN) $(MP_BIN) $(LIB) $(BUILD)/jaccl-info

$(UNIT_BIN): | $(BUILD)/.deps-tests $(VERSION_H)
$(BUILD)/tests/test_%: tests/unit/test_%.c $(UNIT_LIB) $(INTERNAL)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Itests/unit -Iharness $< -o $@ $(UNIT_LIB) $(INTERNAL) -lcmocka $(LDSAN) $(LDLIBS)

$(BUILD)/obj/tools/jaccl-info-main.o: tools/jaccl-info.c | $(BUILD)/.deps-lib $(VERSION_H)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Iharness -Dmain=jaccl_info_main -c $< -o $@

$(UNIT_LIB): $(UNIT_LIB_OBJ)
	@mkdir -p $(dir $@)
	@rm -f $@
	ar rcs $@ $(UNIT_LIB_OBJ)

$(MP_COMMON_OBJ): CFLAGS += -Iharness

# One program from its own .c and the harness objects (-MMD writes $@.d beside it).
define LINK_MP
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Iharness $< $(MP_COMMON_OBJ) -o $@ $(INTERNAL) $(LDSAN) $(LDLIBS)
endef

$(BUILD)/tests/mp_%: tests/mp/%.c $(MP_COMMON_OBJ) $(INTERNAL)
	$(LINK_MP)

$(BUILD)/%: tools/%.c $(MP_COMMON_OBJ) $(INTERNAL) | $(VERSION_H)
	$(LINK_MP)

# Debian packages for building, testing and benchmarking (no-op when present).
deps:
	tools/install-deps.sh

# The whole suite once normally, once under ASan + UBSan in its own build folder, then on
# real verbs (soft-RoCE in a VM).
test: deps
	$(MAKE) test-fast
	$(MAKE) test-net
	$(MAKE) test-topo
	$(MAKE) test-asan
	$(MAKE) test-deb
	$(MAKE) fuzz
	$(MAKE) test-tsan
	$(MAKE) test-rdma

check: test

# run_all.sh prints TAP (a line per scenario and unit test, two suites at a time); prove reads
# it, so a line out of order or a plan that does not match fails the run too.
RUN_ALL := prove --exec '' --verbose tests/run_all.sh

test-fast: all tests
	BUILD=$(BUILD) $(RUN_ALL)

# test-fast again while a plain busy loop and a sched_yield() loop (the way NCCL's proxy polls)
# keep both cores busy: a test whose verdict bets on a thread running within some milliseconds
# fails here. The script starts the two loads and stops them when it exits, pass or fail. Not
# part of `make test`: it is there to show the suite does not flake. The whole log of each
# failed suite lands in $(BUILD)/noisy-logs.
test-noisy: $(BUILD)/tests/noise_load
	BUILD=$(BUILD) MAKE="$(MAKE)" tests/run_noisy.sh

$(BUILD)/tests/noise_load: tests/noise_load.c | $(BUILD)/.deps-lib
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $< -o $@

# One rank in each of two network namespaces on a veth pair: the multi-host benchmarks, netem
# delay/loss/reordering/duplication, the link taken down, a link flap (root; JACCL_NET_SKIP=1
# skips it where namespaces or netem are missing).
test-net: all tests
	BUILD=$(BUILD) tests/net/netns.sh

# Switchless clusters (docs/topologies.md): one namespace per node, one veth pair per cable,
# each cable its own subnet, a rate-limited management bridge for the rendezvous only; p2p
# between every pair, the three collectives with every algorithm the topology allows, a cable
# taken down, a relay killed (root; JACCL_NET_SKIP=1 skips it where namespaces or tbf are
# missing). TOPO="2x2 triangle" (topologies and/or tests) runs a part; tests/net/topo.sh bench
# is the benchmark (not run here).
TOPO ?=
test-topo: all tests
	BUILD=$(BUILD) tests/net/topo.sh $(TOPO)

# Only what run_all.sh runs: the library and the tests (jaccl-info the only tool).
test-asan:
	$(MAKE) SAN=1 BUILD=build-asan lib tests
	BUILD=build-asan JACCL_TEST_SAN=1 $(RUN_ALL)

# ThreadSanitizer, with gcc (its runtime is a shared library, which the plugin needs): every
# report fails its test; tests/tsan.supp says why each suppressed one is benign.
test-tsan:
	rm -f build-tsan/tests/test_kern_*
	$(MAKE) SAN=thread BUILD=build-tsan lib tests-tsan
	BUILD=build-tsan JACCL_TEST_SAN=1 JACCL_TEST_SLOW=$(TSAN_SLOW) JACCL_TEST_JOBS=$(TSAN_JOBS) \
	    NCCL_JACCL_TIMEOUT=$(TSAN_TIMEOUT) JACCL_TEST_COLL="$(TSAN_COLL)" \
	    TSAN_OPTIONS="$(TSAN_OPTS)" $(RUN_ALL)

# The reduction-kernel tests start no thread (nothing for TSan to see) and take minutes under it.
tests-tsan: $(filter-out $(BUILD)/tests/test_kern_%,$(UNIT_BIN)) $(MP_BIN) $(LIB) $(BUILD)/jaccl-info
# TSan slows the plugin 5-15x (ASan 2-3x): deadlines and the liveness timeout stretch twice more,
# or a 64 MiB receive outlasts twice NCCL_JACCL_TIMEOUT and warns "still pending".
# The CollNet scenarios TSan runs (tests/run_coll.sh arguments, by name: build/tests/mp_coll_X
# --list shows them; empty = all, about 13x the time of a normal run): every thread and failure
# path (all of coll_fail), ring, mesh, auto and rhd with 2 to 4 ranks and 1 to 4 wires, every
# teardown scenario (where a close racing a slower peer showed first); not the 5..8-rank and
# every-type runs, which add compute, not thread interactions.
TSAN_COLL ?= basic:ring-2,mesh-2,ring-3,mesh-3,ring-4,auto-2,rhd-4 fail stress:auto-2,ring-4 \
             window:ring-2-v11,mesh-2-v11,ring-4-v8,rhd-4-v11 teardown
TSAN_SLOW ?= 2
# One suite at a time, as the deadlines above were set: with two TSan suites on two cores (and
# other work on the box, load 22) a rank of coll_stress auto-2 went silent past the 10 s liveness
# deadline once (2026-12-06); the same scenario beside coll_basic passed 3 of 3 at load 4 - 11.
TSAN_JOBS ?= 1
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
RDMA_VM_TIMEOUT ?= 2400
RDMA_BIN := $(BUILD)/tests/rdma_p2p
.PHONY: test-rdma
test-rdma:
	tests/rdma/deps.sh
	$(MAKE) all tests $(RDMA_BIN)
	tests/rdma/image.sh
	BUILD=$(abspath $(BUILD)) tests/rdma/vm.sh -t $(RDMA_VM_TIMEOUT) -x $(BUILD) \
	    -e BUILD -e RDMA_BENCH -e RDMA_FULL -- tests/rdma/suite.sh

# tests/rdma/lat.sh in the same VM: small-message latency and rate, UC and RC, beside perftest.
.PHONY: rdma-lat
rdma-lat:
	tests/rdma/deps.sh
	$(MAKE) all
	tests/rdma/image.sh
	BUILD=$(abspath $(BUILD)) tests/rdma/vm.sh -t $(RDMA_VM_TIMEOUT) -x $(BUILD) \
	    -e BUILD -e ROUNDS -- tests/rdma/lat.sh

$(BUILD)/tests/rdma_%: tests/rdma/rdma_%.c $(MP_COMMON_OBJ) $(INTERNAL)
	$(LINK_MP)

# The knob tables of docs/configuration.md come from plugin/util/param.c (tests/check_config_doc.sh
# fails when the committed file is stale).
docs: $(BUILD)/config-doc
	$(BUILD)/config-doc docs/configuration.in.md >docs/configuration.md

# ---- install, uninstall, Debian package (packaging/) ----
# make install PREFIX=/usr/local DESTDIR=: the library, the user-facing tools and the docs.
# The libnccl-net.so alias makes jaccl the plugin NCCL loads when NCCL_NET_PLUGIN is unset, so
# it is installed only when asked for (INSTALL_DEFAULT_ALIAS=1). ldconfig runs for a real
# (DESTDIR-less) install as root: NCCL dlopens the plugin by name, through the loader's cache.
PREFIX ?= /usr/local
DESTDIR ?=
LIBDIR ?= $(PREFIX)/lib
BINDIR ?= $(PREFIX)/bin
DOCDIR ?= $(PREFIX)/share/doc/jaccl
INSTALL_DEFAULT_ALIAS ?= 0
INSTALL_TOOLS := jaccl-info jaccl-perf jaccl-coll-perf
INSTALL_DOCS := README.md LICENSE $(sort $(wildcard docs/*.md))
LDCONFIG = if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ]; then ldconfig; fi

.PHONY: install uninstall deb test-deb
install: $(LIB) $(addprefix $(BUILD)/,$(INSTALL_TOOLS))
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(DOCDIR)
	install -m 644 $(LIB) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(addprefix $(BUILD)/,$(INSTALL_TOOLS)) $(DESTDIR)$(BINDIR)/
	install -m 644 $(INSTALL_DOCS) $(DESTDIR)$(DOCDIR)/
	@if [ "$(INSTALL_DEFAULT_ALIAS)" = 1 ]; then set -x; \
	    ln -sf libnccl-net-jaccl.so $(DESTDIR)$(LIBDIR)/libnccl-net.so; fi
	@$(LDCONFIG)

# Removes what install put there and nothing else: the alias only when it points at jaccl.
uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libnccl-net-jaccl.so
	@if [ "$$(readlink $(DESTDIR)$(LIBDIR)/libnccl-net.so)" = libnccl-net-jaccl.so ]; then set -x; \
	    rm -f $(DESTDIR)$(LIBDIR)/libnccl-net.so; fi
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(INSTALL_TOOLS))
	rm -f $(addprefix $(DESTDIR)$(DOCDIR)/,$(notdir $(INSTALL_DOCS)))
	-rmdir $(DESTDIR)$(DOCDIR) 2>/dev/null
	@$(LDCONFIG)

# The package installs under /usr (the loader's default path, no LD_LIBRARY_PATH needed) with
# the docs where Debian keeps them; packaging/deb.sh writes DEBIAN/ and runs dpkg-deb.
DEB_ROOT := $(BUILD)/deb/root
deb: $(LIB) $(addprefix $(BUILD)/,$(INSTALL_TOOLS))
	rm -rf $(BUILD)/deb
	$(MAKE) --no-print-directory install DESTDIR=$(abspath $(DEB_ROOT)) PREFIX=/usr \
	    LIBDIR=/usr/lib/$$($(CC) -print-multiarch) DOCDIR=/usr/share/doc/libnccl-net-jaccl \
	    INSTALL_DEFAULT_ALIAS=0
	packaging/deb.sh $(DEB_ROOT) $(BUILD)/deb

# CI (part of make test, as root): make install/uninstall into a DESTDIR, then the package:
# install it, run jaccl-info and the demo against the installed library, remove it, check
# nothing is left.
test-deb: deb $(BUILD)/demo
	BUILD=$(BUILD) tests/check_install.sh
	BUILD=$(BUILD) tests/check_deb.sh
# ---- end of install, uninstall, Debian package ----

format:
	clang-format -i $$(find plugin include harness tests tools -name '*.[ch]')

format-check:
	clang-format --dry-run --Werror $$(find plugin include harness tests tools -name '*.[ch]')

clean:
	rm -rf build build-asan build-tsan build-fuzz

# Header dependencies recorded by -MMD: objects, and the programs compiled from one .c each.
-include $(PLUGIN_OBJ:.o=.d) $(MP_COMMON_OBJ:.o=.d) $(UNIT_LIB_OBJ:.o=.d) \
         $(addsuffix .d,$(UNIT_BIN) $(MP_BIN) $(TOOL_BIN) $(RDMA_BIN) $(FUZZ_BIN) $(BUILD)/fuzz/gen_seeds)
