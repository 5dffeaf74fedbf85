# nvlite — build, test, install.
#
#   make                 library + samples
#   make test            unit and API tests on the simulated driver (CI)
#   make bench           benchmarks, built against libcuda and against libnvlite
#   make test-hw         API tests + hardware-only tests on a real GPU
#   make test-tsan       the multi-threaded tests under ThreadSanitizer (sim)
#   make install PREFIX=/usr/local
#
# NO_BUILD=1 runs already-built test binaries (for machines without the
# build dependencies, such as the GPU box).

CXX      ?= g++
CC       ?= gcc
PREFIX   ?= /usr/local
BUILD    ?= build
CUDA_HOME ?= /usr/local/cuda

VERSION  := 0.1.0
SONAME   := libnvlite.so.0

WARN      := -Wall -Wextra -Werror
CXXFLAGS  ?= -O2 -g
CFLAGS    ?= -O2 -g
SAN       ?=
ALL_CXXFLAGS := -std=c++20 $(WARN) -fPIC -fvisibility=hidden -Iinclude -Ilib -MMD -MP $(SAN) $(CXXFLAGS)
ALL_CFLAGS   := -std=c11 $(WARN) -Iinclude -MMD -MP $(SAN) $(CFLAGS)
LIB_LDLIBS   := -lelf -lpthread -ldl
# Every symbol of the library resolved at its link (not in clang's ASan
# build: there the program brings the sanitizer runtime).
SHLIB_LDFLAGS ?= -Wl,--no-undefined
TEST_LDLIBS  := -lcmocka -lelf -lpthread -ldl -lm

LIB_SRCS  := $(shell find lib -name '*.cpp' | sort)
LIB_OBJS  := $(LIB_SRCS:%.cpp=$(BUILD)/obj/%.o)
SHLIB     := $(BUILD)/lib/libnvlite.so.$(VERSION)
STATIC    := $(BUILD)/lib/libnvlite_internal.a
# The process nvJitLink runs in (lib/loader/jit_process.h), next to the library.
JIT_HELPER := $(BUILD)/lib/nvlite-jit

# Unit tests (C++, link the internal archive) and API tests (C, link the .so).
UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.cpp) $(wildcard tests/sim/test_*.cpp))
API_SRCS  := $(sort $(wildcard tests/api/test_*.c))
HW_SRCS   := $(sort $(wildcard tests/hw/test_*.c) $(wildcard tests/hw/test_*.cpp))
UNIT_BINS := $(patsubst tests/%.cpp,$(BUILD)/tests/%,$(UNIT_SRCS))
API_BINS  := $(patsubst tests/%.c,$(BUILD)/tests/%,$(API_SRCS))
HW_BINS   := $(patsubst tests/%.cpp,$(BUILD)/tests/%,$(patsubst tests/%.c,$(BUILD)/tests/%,$(HW_SRCS)))
TEST_SUPPORT := $(BUILD)/obj/tests/support/test_support.o $(BUILD)/obj/tests/support/ts_kernels.o

SAMPLE_SRCS := $(sort $(wildcard samples/*.c))
SAMPLE_BINS := $(patsubst samples/%.c,$(BUILD)/samples/%,$(SAMPLE_SRCS))

# Keep the test objects make builds on the way (it would delete them as intermediates).
.SECONDARY:

.PHONY: all lib samples bench probes tests test test-hw test-tsan install clean header-check demo soak hostile test-asan fuzz

all: lib samples

lib: $(SHLIB) $(BUILD)/lib/$(SONAME) $(BUILD)/lib/libnvlite.so $(STATIC) $(JIT_HELPER)

$(BUILD)/obj/%.o: %.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(ALL_CXXFLAGS) -c $< -o $@

$(SHLIB): $(LIB_OBJS) lib/exports.map
	@mkdir -p $(dir $@)
	$(CXX) -shared -Wl,-soname,$(SONAME) -Wl,-Bsymbolic-functions $(SHLIB_LDFLAGS) -Wl,--version-script=lib/exports.map $(SAN) -o $@ $(LIB_OBJS) $(LIB_LDLIBS)

$(BUILD)/lib/$(SONAME): $(SHLIB)
	ln -sf $(notdir $(SHLIB)) $@

# Whatever links the library gets the JIT's helper program next to it.
$(BUILD)/lib/libnvlite.so: $(BUILD)/lib/$(SONAME) $(JIT_HELPER)
	ln -sf $(SONAME) $@

$(STATIC): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(JIT_HELPER): tools/nvlite-jit.cpp $(STATIC)
	@mkdir -p $(dir $@)
	$(CXX) $(ALL_CXXFLAGS) $< -o $@ $(STATIC) $(LIB_LDLIBS)

# A stand-in libnvJitLink that crashes, stalls or hogs memory on request
# (tests/unit/test_jit_isolation.cpp).
FAKE_NVJITLINK := $(BUILD)/tests/support/libfake_nvjitlink.so
$(FAKE_NVJITLINK): tests/support/fake_nvjitlink.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 $(WARN) -O1 -fPIC -shared -fvisibility=hidden $< -o $@
$(BUILD)/tests/unit/test_jit_isolation: $(FAKE_NVJITLINK) $(JIT_HELPER)

$(BUILD)/obj/tests/%.o: tests/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Iinclude/nvlite -Itests -c $< -o $@

$(BUILD)/tests/%: tests/%.cpp $(STATIC) $(TEST_SUPPORT)
	@mkdir -p $(dir $@)
	$(CXX) $(ALL_CXXFLAGS) -Iinclude/nvlite -Itests $< -o $@ $(TEST_SUPPORT) $(STATIC) $(TEST_LDLIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(TEST_SUPPORT) $(BUILD)/lib/libnvlite.so
	@mkdir -p $(dir $@)
	$(CC) $(SAN) $< $(TEST_SUPPORT) -o $@ -L$(BUILD)/lib -lnvlite -Wl,-rpath,'$$ORIGIN/../../lib' $(TEST_LDLIBS)

# Samples that compile kernels use NVRTC from the CUDA toolkit (the library does not).
SAMPLE_NVRTC := -I$(CUDA_HOME)/include -L$(CUDA_HOME)/lib64 -Wl,--as-needed -lnvrtc -Wl,-rpath,$(CUDA_HOME)/lib64 -lm

$(BUILD)/samples/%: samples/%.c $(BUILD)/lib/libnvlite.so
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Iinclude/nvlite $< -o $@ -L$(BUILD)/lib -lnvlite -Wl,-rpath,'$$ORIGIN/../lib' $(SAMPLE_NVRTC) $(SAN)

samples: $(SAMPLE_BINS)

# Benchmarks, each built twice: against libcuda (the toolkit's stub to link,
# the driver's libcuda.so.1 to run) and against libnvlite. Run both on the
# same GPU machine and compare the lines.
BENCH_NAMES := $(patsubst bench/%.c,%,$(sort $(wildcard bench/*.c)))
BENCH_BINS  := $(foreach b,$(BENCH_NAMES),$(BUILD)/bench/$(b)_libcuda $(BUILD)/bench/$(b)_nvlite)

$(BUILD)/bench/%_libcuda: bench/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -I$(CUDA_HOME)/include $< -o $@ -L$(CUDA_HOME)/lib64/stubs -lcuda $(SAMPLE_NVRTC)

$(BUILD)/bench/%_nvlite: bench/%.c $(BUILD)/lib/libnvlite.so
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Iinclude/nvlite $< -o $@ -L$(BUILD)/lib -lnvlite -Wl,-rpath,'$$ORIGIN/../lib' $(SAMPLE_NVRTC)

bench: $(BENCH_BINS)

# libcuda-compatibility probes (tests/compat): run on a GPU, their output is
# compared with tests/compat/expected/.
# Their cases run under a setjmp crash guard: built without optimisation, so
# that locals keep their values across the longjmp.
PROBE_CFLAGS := $(ALL_CFLAGS) -O0
PROBE_BINS := $(BUILD)/probes/compat_probe_libcuda $(BUILD)/probes/compat_probe_nvlite $(BUILD)/probes/module_probe

$(BUILD)/probes/compat_probe_libcuda: tests/compat/compat_probe.c tests/compat/probe.h
	@mkdir -p $(dir $@)
	$(CC) $(PROBE_CFLAGS) $< -o $@ -L$(CUDA_HOME)/lib64/stubs -lcuda -ldl

$(BUILD)/probes/compat_probe_nvlite: tests/compat/compat_probe.c tests/compat/probe.h $(BUILD)/lib/libnvlite.so
	@mkdir -p $(dir $@)
	$(CC) $(PROBE_CFLAGS) $< -o $@ -L$(BUILD)/lib -lnvlite -Wl,-rpath,'$$ORIGIN/../lib' -ldl

$(BUILD)/probes/module_probe: tests/compat/module_probe.c tests/compat/probe.h $(BUILD)/obj/tests/support/ts_kernels.o $(BUILD)/lib/libnvlite.so
	@mkdir -p $(dir $@)
	$(CC) $(PROBE_CFLAGS) -Itests $< $(BUILD)/obj/tests/support/ts_kernels.o -o $@ -L$(BUILD)/lib -lnvlite -Wl,-rpath,'$$ORIGIN/../lib' -ldl

probes: $(PROBE_BINS)

tests: $(UNIT_BINS) $(API_BINS) $(HW_BINS)

ifeq ($(NO_BUILD),1)
TEST_DEPS :=
else
TEST_DEPS := tests samples bench probes
endif

# Every test binary runs; the summary says how many failed.
test: $(TEST_DEPS)
	@NVLITE_DEVICE=sim tests/run_tests.sh $(UNIT_BINS) $(API_BINS)
ifneq ($(NO_BUILD),1)
	@$(MAKE) --no-print-directory header-check
endif

test-hw: $(TEST_DEPS)
	@if [ ! -e /dev/nvidiactl ]; then \
	  echo "test-hw: no NVIDIA GPU here (/dev/nvidiactl is missing): nothing was tested"; exit 1; fi
	@env -u NVLITE_DEVICE tests/run_tests.sh $(API_BINS) $(HW_BINS)

# ThreadSanitizer: the library and the multi-threaded tests built with
# -fsanitize=thread in their own folder, run on the simulated driver; the
# first report fails the run (exit code 66). Extra TSAN_OPTIONS from the
# environment come last and win. The library caps its CPU reservation of GPU
# addresses at 512 GiB in this build (lib/hw/va_space.cpp). GCC 12's libtsan
# does not know the layouts of kernels with vm.mmap_rnd_bits above 28 (Linux
# 6.5+ defaults on some distributions; the setting is readable by root only):
# the tests always run with address randomisation off (setarch -R, util-linux)
# where that is allowed.
TSAN_BUILD ?= $(BUILD)-tsan
TSAN_TESTS ?= tests/api/test_threads tests/api/test_copy_ptds tests/api/test_context tests/api/test_init tests/api/test_races \
              tests/api/test_faults tests/api/test_events
TSAN_BINS  := $(addprefix $(TSAN_BUILD)/,$(TSAN_TESTS))
TSAN_RUN_OPTIONS := halt_on_error=1 exitcode=66 second_deadlock_stack=1

test-tsan:
ifneq ($(NO_BUILD),1)
	@$(MAKE) --no-print-directory BUILD=$(TSAN_BUILD) SAN=-fsanitize=thread $(TSAN_BINS)
endif
	@run=""; if setarch $$(uname -m) -R true 2>/dev/null; then run="setarch $$(uname -m) -R"; \
	 else echo "test-tsan: setarch -R refused here (seccomp?): with vm.mmap_rnd_bits > 28 GCC 12's libtsan may fail to start"; fi; \
	 NVLITE_DEVICE=sim TSAN_OPTIONS="$(TSAN_RUN_OPTIONS) $$TSAN_OPTIONS" $$run tests/run_tests.sh $(TSAN_BINS)

# Soak (issue 9): create-everything / destroy-everything cycles; the RSS and
# the heap may grow by 16 bytes per cycle at most, files, mappings and
# threads must come back. On the GPU when there is one, else on the
# simulated driver. SOAK_CYCLES=N for another count.
SOAK_CYCLES ?= 10000
SOAK_BIN := $(BUILD)/tests/soak/soak

soak: $(SOAK_BIN)
	@if [ -e /dev/nvidiactl ]; then dev=""; else dev="sim"; fi; \
	 NVLITE_DEVICE=$$dev $(SOAK_BIN) $(SOAK_CYCLES)

# The hostile mix (issue 9): HOSTILE_THREADS threads share contexts, streams,
# events and modules and destroy them under each other for HOSTILE_SECONDS.
HOSTILE_SECONDS ?= 60
HOSTILE_THREADS ?= 16
HOSTILE_BIN := $(BUILD)/tests/soak/hostile

hostile: $(HOSTILE_BIN)
	@if [ -e /dev/nvidiactl ]; then dev=""; else dev="sim"; fi; \
	 NVLITE_DEVICE=$$dev $(HOSTILE_BIN) $(HOSTILE_SECONDS) $(HOSTILE_THREADS)

# AddressSanitizer + UndefinedBehaviorSanitizer (issue 9; UBSan's C++-only
# vptr and function checks are left out: the C tests link its C runtime):
# the library, its JIT helper and the tests built with clang in their own folder, with the
# coverage instrumentation libFuzzer needs, so that the fuzz targets link the
# same objects; run on the simulated driver (CI). The first report fails the
# run (exit code 67 for ASan, 68 for UBSan). The library splits its GPU
# address reservation around ASan's shadow in this build (lib/hw/va_space.h).
ASAN_BUILD ?= $(BUILD)-asan
ASAN_CC ?= clang
ASAN_CXX ?= clang++
ASAN_SAN := -fsanitize=address,undefined -fno-sanitize=vptr,function -fno-sanitize-recover=undefined \
            -fno-omit-frame-pointer -fsanitize=fuzzer-no-link
ASAN_TESTS ?= unit/test_loader unit/test_loader_fuzz unit/test_loader_jit unit/test_jit_isolation unit/test_core_units \
              unit/test_launch_sim unit/test_channel_faults api/test_bad_input api/test_races api/test_init \
              api/test_context api/test_memory api/test_module api/test_events api/test_faults api/test_threads \
              api/test_copy_ptds api/test_streams api/test_device
ASAN_BINS := $(addprefix $(ASAN_BUILD)/tests/,$(ASAN_TESTS))
ASAN_MAKE := $(MAKE) --no-print-directory BUILD=$(ASAN_BUILD) CC=$(ASAN_CC) CXX=$(ASAN_CXX) SAN="$(ASAN_SAN)" \
             CXXFLAGS="-O1 -g" CFLAGS="-O1 -g" SHLIB_LDFLAGS=

test-asan:
ifneq ($(NO_BUILD),1)
	+@$(ASAN_MAKE) $(ASAN_BINS)
endif
	@NVLITE_DEVICE=sim ASAN_OPTIONS="exitcode=67:$$ASAN_OPTIONS" \
	 UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=68:$$UBSAN_OPTIONS" tests/run_tests.sh $(ASAN_BINS)

# Fuzzing (issue 9): libFuzzer targets (tests/fuzz/) for the loader and for
# the API on the simulated driver, in the ASan build; their seed corpus is
# made now (tests/fuzz/make_seeds.c: NVRTC when it is here), what they find
# grows $(ASAN_BUILD)/fuzz/corpus/. Each target runs FUZZ_SECONDS; a crash,
# a leak, a timeout (10 s), 3 GiB of RSS or a 1.1 GiB malloc stops it and
# fails the run, the input is left as $(ASAN_BUILD)/fuzz/crash-<target>-*.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= loader api
FUZZ_DIR := $(ASAN_BUILD)/fuzz

$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.cpp $(STATIC)
	@mkdir -p $(dir $@)
	$(CXX) $(ALL_CXXFLAGS) -Itests -fsanitize=fuzzer $< -o $@ $(STATIC) $(LIB_LDLIBS)

$(BUILD)/fuzz/make_seeds: tests/fuzz/make_seeds.c $(BUILD)/obj/tests/support/ts_kernels.o
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Iinclude/nvlite -Itests $< $(BUILD)/obj/tests/support/ts_kernels.o -o $@ -ldl

fuzz:
	+@$(ASAN_MAKE) $(addprefix $(FUZZ_DIR)/fuzz_,$(FUZZ_TARGETS)) $(FUZZ_DIR)/make_seeds
	@rm -rf $(FUZZ_DIR)/seeds && mkdir -p $(foreach t,loader api,$(FUZZ_DIR)/seeds/$(t) $(FUZZ_DIR)/corpus/$(t))
	@ASAN_OPTIONS=detect_leaks=0 $(FUZZ_DIR)/make_seeds $(FUZZ_DIR)/seeds/loader $(FUZZ_DIR)/seeds/api
	@for t in $(FUZZ_TARGETS); do \
	  echo "fuzz: $$t for $(FUZZ_SECONDS) s"; \
	  $(FUZZ_DIR)/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=3072 -malloc_limit_mb=1100 \
	    -print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/crash-$$t- $(FUZZ_DIR)/corpus/$$t $(FUZZ_DIR)/seeds/$$t \
	    > $(FUZZ_DIR)/$$t.log 2>&1; rc=$$?; \
	  grep -v "NEW\|REDUCE\|pulse" $(FUZZ_DIR)/$$t.log | tail -30; \
	  [ $$rc -eq 0 ] || { echo "fuzz: $$t FAILED (log: $(FUZZ_DIR)/$$t.log)"; exit 1; }; \
	done

# The samples on the real GPU when there is one, else on the simulated driver.
demo: samples
	@if [ -e /dev/nvidiactl ]; then dev=""; echo "demo: on the GPU"; \
	 else dev="sim"; echo "demo: no GPU here, on the simulated driver (NVLITE_DEVICE=sim)"; fi; \
	 NVLITE_DEVICE=$$dev $(BUILD)/samples/device_query && NVLITE_DEVICE=$$dev $(BUILD)/samples/copy_roundtrip 256

header-check:
	@$(MAKE) --no-print-directory -C tests/header check BUILD=$(abspath $(BUILD))/tests/header

install: lib
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include/nvlite $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 755 $(SHLIB) $(DESTDIR)$(PREFIX)/lib/
	install -d $(DESTDIR)$(PREFIX)/libexec
	install -m 755 $(JIT_HELPER) $(DESTDIR)$(PREFIX)/libexec/
	ln -sf $(notdir $(SHLIB)) $(DESTDIR)$(PREFIX)/lib/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(PREFIX)/lib/libnvlite.so
	install -m 644 include/nvlite/*.h $(DESTDIR)$(PREFIX)/include/nvlite/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' pkgconfig/nvlite.pc.in \
	  > $(DESTDIR)$(PREFIX)/lib/pkgconfig/nvlite.pc

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
