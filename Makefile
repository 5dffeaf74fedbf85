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
#
# Two builds of the library: the release one in $(BUILD)/lib (what `make`,
# `make install`, the samples and benchmarks use) and a checked one in
# $(BUILD)/checked (NVL_ASSERT on: lib/common/assert.h) that every test links.
# Sanitizer builds (SAN=...) are checked throughout.

CXX      ?= g++
CC       ?= gcc
PREFIX   ?= /usr/local
BUILD    ?= build
CUDA_HOME ?= /usr/local/cuda

VERSION  := 0.1.0
SONAME   := libnvlite.so.0
SIM_SONAME := libnvlite_sim.so.0

WARN      := -Wall -Wextra -Werror
CXXFLAGS  ?= -O2 -g
CFLAGS    ?= -O2 -g
SAN       ?=
CHECK_FLAGS  := -DNVLITE_CHECKED=1
ALL_CXXFLAGS := -std=c++20 $(WARN) -fPIC -fvisibility=hidden -Iinclude -Ilib -I$(BUILD)/gen -MMD -MP $(SAN) $(if $(SAN),$(CHECK_FLAGS)) $(CXXFLAGS)
ALL_CFLAGS   := -std=c11 $(WARN) -Iinclude -MMD -MP $(SAN) $(CFLAGS)
LIB_LDLIBS   := -lelf -lpthread -ldl
# Every symbol of the library resolved at its link (not in clang's ASan
# build: there the program brings the sanitizer runtime).
SHLIB_LDFLAGS ?= -Wl,--no-undefined
TEST_LDLIBS  := -lcmocka -lelf -lpthread -ldl -lm

# The entry points (lib/api/entry_points.txt): every exported symbol, the
# implementations' declarations and what cuGetProcAddress searches, made by
# tools/gen_entry_points.py from the table and the headers' declarations.
ENTRY_TABLE   := lib/api/entry_points.txt
ENTRY_HEADERS := include/nvlite/cuda.h lib/api/interop.h
ENTRY_GEN     := $(BUILD)/gen/api/entry_thunks.cpp $(BUILD)/gen/api/entry_impls.h \
                 $(BUILD)/gen/api/exports.txt $(BUILD)/gen/api/not_supported.txt
ENTRY_STAMP   := $(BUILD)/gen/api/stamp
GEN_ENTRY     := python3 tools/gen_entry_points.py

# The simulated driver (lib/kdrv/sim) is a library of its own, libnvlite_sim.so,
# which libnvlite.so loads only for NVLITE_DEVICE=sim.
LIB_SRCS  := $(shell find lib -name '*.cpp' -not -path 'lib/kdrv/sim/*' | sort)
SIM_SRCS  := $(sort $(wildcard lib/kdrv/sim/*.cpp))
LIB_OBJS  := $(LIB_SRCS:%.cpp=$(BUILD)/obj/%.o) $(BUILD)/obj/gen/api/entry_thunks.o
SIM_OBJS  := $(SIM_SRCS:%.cpp=$(BUILD)/obj/%.o)
SHLIB     := $(BUILD)/lib/libnvlite.so.$(VERSION)
SIMLIB    := $(BUILD)/lib/libnvlite_sim.so.$(VERSION)
STATIC    := $(BUILD)/lib/libnvlite_internal.a
# The process nvJitLink runs in (lib/loader/jit_process.h), next to the library.
JIT_HELPER := $(BUILD)/lib/nvlite-jit

# The checked build the tests link: same sources, NVL_ASSERT on.
CHK          := $(BUILD)/checked
CHK_LIB_OBJS := $(LIB_SRCS:%.cpp=$(CHK)/obj/%.o) $(CHK)/obj/gen/api/entry_thunks.o
CHK_SIM_OBJS := $(SIM_SRCS:%.cpp=$(CHK)/obj/%.o)
CHK_SHLIB    := $(CHK)/lib/libnvlite.so.$(VERSION)
CHK_SIMLIB   := $(CHK)/lib/libnvlite_sim.so.$(VERSION)
CHK_STATIC   := $(CHK)/lib/libnvlite_internal.a
CHK_JIT_HELPER := $(CHK)/lib/nvlite-jit
CHK_LIBS     := $(CHK_SHLIB) $(CHK)/lib/$(SONAME) $(CHK)/lib/libnvlite.so $(CHK_SIMLIB) $(CHK)/lib/$(SIM_SONAME) $(CHK)/lib/libnvlite_sim.so \
                $(CHK_JIT_HELPER)
TEST_CXXFLAGS := $(ALL_CXXFLAGS) $(CHECK_FLAGS)

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

.PHONY: all lib driver checked lib-check compile-fail-check defs-check samples bench probes tests test test-hw test-tsan install clean header-check entry-check stubs-md demo soak hostile test-asan fuzz

all: lib samples

lib: $(SHLIB) $(BUILD)/lib/$(SONAME) $(BUILD)/lib/libnvlite.so $(SIMLIB) $(BUILD)/lib/$(SIM_SONAME) $(BUILD)/lib/libnvlite_sim.so $(STATIC) $(JIT_HELPER) driver

checked: $(CHK_LIBS) $(CHK_STATIC) $(CHK)/driver/libcuda.so.1

# The checked build's driver names (tests that run themselves through nvlite-run).
$(CHK)/driver/libcuda.so.1: | $(CHK)/lib/$(SONAME)
	@mkdir -p $(dir $@)
	ln -sf ../lib/$(SONAME) $@

# nvlite as the driver: libcuda.so.1 and libcuda.so names in a folder of their
# own, and the launcher that puts that folder first (tools/nvlite-run). The
# simulated driver comes with it: programs run through this folder with
# NVLITE_DEVICE=sim (make test-cudart, dropin-checks) load it from ../lib
# (a parallel make once ran them before it was linked).
DRIVER_DIR := $(BUILD)/driver
driver: $(DRIVER_DIR)/libcuda.so.1 $(DRIVER_DIR)/libcuda.so $(BUILD)/bin/nvlite-run $(BUILD)/lib/$(SIM_SONAME)

$(DRIVER_DIR)/libcuda.so.1: | $(BUILD)/lib/$(SONAME)
	@mkdir -p $(dir $@)
	ln -sf ../lib/$(SONAME) $@

$(DRIVER_DIR)/libcuda.so: | $(DRIVER_DIR)/libcuda.so.1
	ln -sf libcuda.so.1 $@

$(BUILD)/bin/nvlite-run: tools/nvlite-run
	@mkdir -p $(dir $@)
	install -m 755 $< $@

$(BUILD)/obj/%.o: %.cpp | $(ENTRY_GEN)
	@mkdir -p $(dir $@)
	$(CXX) $(ALL_CXXFLAGS) -c $< -o $@

# The generator rewrites only the outputs whose text changed (so only what
# depends on them is rebuilt); the stamp says when it last ran.
$(ENTRY_STAMP): $(ENTRY_TABLE) $(ENTRY_HEADERS) tools/gen_entry_points.py
	$(GEN_ENTRY) generate --cc "$(CC)" --table $(ENTRY_TABLE) --out $(BUILD)/gen/api $(ENTRY_HEADERS)
	@touch $@
$(ENTRY_GEN): $(ENTRY_STAMP) ;

$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(ALL_CXXFLAGS) -c $< -o $@

# The device runtime (devrt/devrt.cu: printf, assert, malloc/free in
# kernels), compiled by nvcc at build time and embedded in the library: one
# relocatable cubin per architecture family nvlite drives (sm_80 SASS also
# runs on sm_86/89). -maxrregcount keeps its functions within what any
# kernel may have at 1024 threads per block.
NVCC        ?= $(CUDA_HOME)/bin/nvcc
DEVRT_ARCHS := 80 90
DEVRT_CUBINS := $(DEVRT_ARCHS:%=$(BUILD)/devrt/devrt_sm%.cubin)

$(BUILD)/devrt/devrt_sm%.cubin: devrt/devrt.cu lib/core/devrt_abi.h lib/common/envregs.h
	@mkdir -p $(dir $@)
	@command -v $(NVCC) >/dev/null || { echo "$(NVCC) not found: building the device runtime needs the CUDA toolkit (set CUDA_HOME)"; exit 1; }
	$(NVCC) -arch=sm_$* -rdc=true -cubin -O3 -maxrregcount=32 -o $@ $<

# Embedded packed (tools/pack_images.c; lib/loader/unpack.h has the format):
# one stream of the cubins in DEVRT_ARCHS order, and a header of their sizes.
PACK_IMAGES := $(BUILD)/tools/pack_images
$(PACK_IMAGES): tools/pack_images.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 $(WARN) -O2 $< -o $@

$(BUILD)/devrt/devrt.packed $(BUILD)/gen/loader/packed_devrt.h &: $(DEVRT_CUBINS) $(PACK_IMAGES)
	@mkdir -p $(BUILD)/gen/loader
	$(PACK_IMAGES) $(BUILD)/devrt/devrt.packed $(BUILD)/gen/loader/packed_devrt.h nvl::loader::devrt::packed $(DEVRT_CUBINS)

# The unpacker's test round-trips through the packer (tools/pack_images.h).
$(BUILD)/obj/tools/pack_images.o: tools/pack_images.c tools/pack_images.h
	@mkdir -p $(dir $@)
	$(CC) -std=c11 $(WARN) -O2 $(SAN) -DPACK_IMAGES_NO_MAIN -c $< -o $@
$(BUILD)/tests/unit/test_unpack: tests/unit/test_unpack.cpp $(BUILD)/obj/tools/pack_images.o $(CHK_STATIC) $(CHK_SIM_OBJS) $(TEST_SUPPORT)
	@mkdir -p $(dir $@)
	$(CXX) $(TEST_CXXFLAGS) -Iinclude/nvlite -Itests $< -o $@ $(BUILD)/obj/tools/pack_images.o $(TEST_SUPPORT) $(CHK_SIM_OBJS) $(CHK_STATIC) $(TEST_LDLIBS)

$(BUILD)/obj/lib/loader/devrt_image.o $(CHK)/obj/lib/loader/devrt_image.o: $(BUILD)/devrt/devrt.packed $(BUILD)/gen/loader/packed_devrt.h
$(BUILD)/obj/lib/loader/devrt_image.o: ALL_CXXFLAGS += -DNVL_DEVRT_DIR='"$(BUILD)/devrt"'
$(CHK)/obj/lib/loader/devrt_image.o: TEST_CXXFLAGS += -DNVL_DEVRT_DIR='"$(BUILD)/devrt"'

$(CHK)/obj/gen/%.o: $(BUILD)/gen/%.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(TEST_CXXFLAGS) -c $< -o $@

$(CHK)/obj/%.o: %.cpp | $(ENTRY_GEN)
	@mkdir -p $(dir $@)
	$(CXX) $(TEST_CXXFLAGS) -c $< -o $@

# Link rules, the same for both builds: $(call link_rules,folder,lib objects,sim objects).
define link_rules
$(1)/lib/libnvlite.so.$(VERSION): $(2) lib/exports.map
	@mkdir -p $$(dir $$@)
	$$(CXX) -shared -Wl,-soname,$(SONAME) -Wl,-Bsymbolic-functions $$(SHLIB_LDFLAGS) -Wl,--version-script=lib/exports.map $$(SAN) -o $$@ $(2) $$(LIB_LDLIBS)

$(1)/lib/libnvlite_sim.so.$(VERSION): $(3) lib/kdrv/sim/exports.map
	@mkdir -p $$(dir $$@)
	$$(CXX) -shared -Wl,-soname,$(SIM_SONAME) -Wl,-Bsymbolic-functions $$(SHLIB_LDFLAGS) -Wl,--version-script=lib/kdrv/sim/exports.map $$(SAN) -o $$@ $(3) -lpthread

$(1)/lib/$(SONAME): $(1)/lib/libnvlite.so.$(VERSION)
	ln -sf libnvlite.so.$(VERSION) $$@

$(1)/lib/libnvlite.so: $(1)/lib/$(SONAME)
	ln -sf $(SONAME) $$@

$(1)/lib/$(SIM_SONAME): $(1)/lib/libnvlite_sim.so.$(VERSION)
	ln -sf libnvlite_sim.so.$(VERSION) $$@

$(1)/lib/libnvlite_sim.so: $(1)/lib/$(SIM_SONAME)
	ln -sf $(SIM_SONAME) $$@

$(1)/lib/libnvlite_internal.a: $(2)
	@mkdir -p $$(dir $$@)
	rm -f $$@ && ar rcs $$@ $$^
endef
$(eval $(call link_rules,$(BUILD),$(LIB_OBJS),$(SIM_OBJS)))
$(eval $(call link_rules,$(CHK),$(CHK_LIB_OBJS),$(CHK_SIM_OBJS)))

$(JIT_HELPER): tools/nvlite-jit.cpp $(STATIC)
	@mkdir -p $(dir $@)
	$(CXX) $(ALL_CXXFLAGS) $< -o $@ $(STATIC) $(LIB_LDLIBS)

$(CHK_JIT_HELPER): tools/nvlite-jit.cpp $(CHK_STATIC)
	@mkdir -p $(dir $@)
	$(CXX) $(TEST_CXXFLAGS) $< -o $@ $(CHK_STATIC) $(LIB_LDLIBS)

# A stand-in libnvJitLink that crashes, stalls or hogs memory on request
# (tests/unit/test_jit_isolation.cpp).
FAKE_NVJITLINK := $(BUILD)/tests/support/libfake_nvjitlink.so
$(FAKE_NVJITLINK): tests/support/fake_nvjitlink.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 $(WARN) -O1 -fPIC -shared -fvisibility=hidden $< -o $@
$(BUILD)/tests/unit/test_jit_isolation: $(FAKE_NVJITLINK) $(CHK_JIT_HELPER) $(JIT_HELPER)
# The occupancy test compares with the toolkit's calculator where there is one.
$(BUILD)/tests/unit/test_occupancy: private TEST_CXXFLAGS += $(if $(wildcard $(CUDA_HOME)/include/cuda_occupancy.h),-DNVL_CUDA_OCCUPANCY_H='"$(CUDA_HOME)/include/cuda_occupancy.h"')

$(BUILD)/obj/tests/%.o: tests/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Iinclude/nvlite -Itests -c $< -o $@

# Tests link the checked build: C++ tests its internal archive and the
# simulator's objects (kdrv.cpp then takes the simulator linked in), C tests
# its libnvlite.so like any program (and libnvlite_sim.so only when they call
# nvlite.h's simulator hook).
$(BUILD)/tests/%: tests/%.cpp $(CHK_STATIC) $(CHK_SIM_OBJS) $(TEST_SUPPORT)
	@mkdir -p $(dir $@)
	$(CXX) $(TEST_CXXFLAGS) -Iinclude/nvlite -Itests $< -o $@ $(TEST_SUPPORT) $(CHK_SIM_OBJS) $(CHK_STATIC) $(TEST_LDLIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(TEST_SUPPORT) $(CHK_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(SAN) $< $(TEST_SUPPORT) -o $@ -L$(CHK)/lib -lnvlite -Wl,--as-needed -lnvlite_sim -Wl,--no-as-needed \
	  -Wl,-rpath,'$$ORIGIN/../../checked/lib' $(TEST_LDLIBS)

# Samples that compile kernels open NVRTC from the CUDA toolkit with dlopen
# (samples/nvrtc_compile.h, shared with the benchmarks and the tests; the
# library does not use NVRTC).
SAMPLE_NVRTC := -ldl -lm

$(BUILD)/samples/%: samples/%.c $(BUILD)/lib/libnvlite.so $(BUILD)/lib/$(SIM_SONAME)
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
PROBE_BINS := $(BUILD)/probes/compat_probe_libcuda $(BUILD)/probes/compat_probe_nvlite $(BUILD)/probes/module_probe \
              $(BUILD)/probes/dropin_probe $(BUILD)/probes/devrt_probe $(BUILD)/probes/launch_probe

$(BUILD)/probes/compat_probe_libcuda: tests/compat/compat_probe.c tests/compat/probe.h
	@mkdir -p $(dir $@)
	$(CC) $(PROBE_CFLAGS) $< -o $@ -L$(CUDA_HOME)/lib64/stubs -lcuda -ldl

$(BUILD)/probes/compat_probe_nvlite: tests/compat/compat_probe.c tests/compat/probe.h $(BUILD)/lib/libnvlite.so
	@mkdir -p $(dir $@)
	$(CC) $(PROBE_CFLAGS) $< -o $@ -L$(BUILD)/lib -lnvlite -Wl,-rpath,'$$ORIGIN/../lib' -ldl

$(BUILD)/probes/module_probe: tests/compat/module_probe.c tests/compat/probe.h $(BUILD)/obj/tests/support/ts_kernels.o $(BUILD)/lib/libnvlite.so
	@mkdir -p $(dir $@)
	$(CC) $(PROBE_CFLAGS) -Itests $< $(BUILD)/obj/tests/support/ts_kernels.o -o $@ -L$(BUILD)/lib -lnvlite -Wl,-rpath,'$$ORIGIN/../lib' -ldl

# launch_probe: library/kernel objects, cuLaunchKernelEx, cooperative, cluster
# and legacy launches, run like module_probe (one section per run: its header).
$(BUILD)/probes/launch_probe: tests/compat/launch_probe.c tests/compat/probe.h $(BUILD)/obj/tests/support/ts_kernels.o $(BUILD)/lib/libnvlite.so
	@mkdir -p $(dir $@)
	$(CC) $(PROBE_CFLAGS) -Itests $< $(BUILD)/obj/tests/support/ts_kernels.o -o $@ -L$(BUILD)/lib -lnvlite -Wl,-rpath,'$$ORIGIN/../lib' -ldl

# dropin_probe links no CUDA library: it dlopen()s libcuda.so.1 (NVIDIA's
# cuda.h for the types), so one binary probes libcuda, or nvlite through
# build/bin/nvlite-run.
$(BUILD)/probes/dropin_probe: tests/compat/dropin_probe.c tests/compat/probe.h tests/compat/probe_dlopen.h
	@mkdir -p $(dir $@)
	$(CC) -std=c11 $(WARN) -O0 -g -I$(CUDA_HOME)/include -Itests/compat $< -o $@ -ldl

$(BUILD)/probes/devrt_probe: tests/compat/devrt_probe.c tests/compat/probe.h $(BUILD)/obj/tests/support/ts_kernels.o $(BUILD)/lib/libnvlite.so
	@mkdir -p $(dir $@)
	$(CC) $(PROBE_CFLAGS) -Itests $< $(BUILD)/obj/tests/support/ts_kernels.o -o $@ -L$(BUILD)/lib -lnvlite -Wl,-rpath,'$$ORIGIN/../lib' -ldl

# numba_probe (issue 10, numba-cuda's needs): dlopen()s libcuda.so.1 like dropin_probe.
PROBE_BINS += $(BUILD)/probes/numba_probe
$(BUILD)/probes/numba_probe: tests/compat/numba_probe.c tests/compat/probe.h tests/compat/probe_dlopen.h
	@mkdir -p $(dir $@)
	$(CC) -std=c11 $(WARN) -O0 -g -I$(CUDA_HOME)/include -Itests/compat $< -o $@ -ldl

probes: $(PROBE_BINS)

tests: $(UNIT_BINS) $(API_BINS) $(HW_BINS)

ifeq ($(NO_BUILD),1)
TEST_DEPS :=
else
TEST_DEPS := tests driver checked samples bench probes
endif

# Every test binary runs; the summary says how many failed.
test: $(TEST_DEPS)
	@NVLITE_DEVICE=sim tests/run_tests.sh $(UNIT_BINS) $(API_BINS)
ifneq ($(NO_BUILD),1)
	@$(MAKE) --no-print-directory header-check
	@$(MAKE) --no-print-directory entry-check
	@$(MAKE) --no-print-directory lib-check
	@$(MAKE) --no-print-directory compile-fail-check
	@$(MAKE) --no-print-directory defs-check
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
              tests/api/test_driver_queries \
              tests/api/test_faults tests/api/test_events tests/unit/test_devrt_threads tests/api/test_library \
              tests/api/test_private_tables tests/unit/test_device_launch_sim
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
# vptr and function checks are left out: the C tests link its C runtime; so is
# its enum check: C programs may pass any int in an enum parameter, and the
# library answers such values with an error):
# the library, its JIT helper and the tests built with clang in their own folder, with the
# coverage instrumentation libFuzzer needs, so that the fuzz targets link the
# same objects; run on the simulated driver (CI). The first report fails the
# run (exit code 67 for ASan, 68 for UBSan). The library splits its GPU
# address reservation around ASan's shadow in this build (lib/hw/va_space.h).
ASAN_BUILD ?= $(BUILD)-asan
ASAN_CC ?= clang
ASAN_CXX ?= clang++
ASAN_SAN := -fsanitize=address,undefined -fno-sanitize=vptr,function,enum -fno-sanitize-recover=undefined \
            -fno-omit-frame-pointer -fsanitize=fuzzer-no-link
ASAN_TESTS ?= unit/test_loader unit/test_loader_fuzz unit/test_unpack unit/test_loader_jit unit/test_jit_isolation unit/test_core_units \
              unit/test_launch_sim unit/test_channel_faults api/test_bad_input api/test_races api/test_init \
              api/test_context api/test_memory api/test_module api/test_events api/test_faults api/test_threads \
              api/test_copy_ptds api/test_streams api/test_device unit/test_device_launch_sim unit/test_devrt_host
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
FUZZ_TARGETS ?= loader api unpack
FUZZ_DIR := $(ASAN_BUILD)/fuzz

# The fuzz targets link the objects test-asan's tests link (the checked ones).
$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.cpp $(CHK_STATIC) $(CHK_SIM_OBJS) $(CHK_JIT_HELPER)
	@mkdir -p $(dir $@)
	$(CXX) $(TEST_CXXFLAGS) -Itests -fsanitize=fuzzer $< -o $@ $(CHK_SIM_OBJS) $(CHK_STATIC) $(LIB_LDLIBS)

$(BUILD)/fuzz/make_seeds: tests/fuzz/make_seeds.c $(BUILD)/obj/tests/support/ts_kernels.o
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Iinclude/nvlite -Itests $< $(BUILD)/obj/tests/support/ts_kernels.o -o $@ -ldl

fuzz:
	+@$(ASAN_MAKE) $(addprefix $(FUZZ_DIR)/fuzz_,$(FUZZ_TARGETS)) $(FUZZ_DIR)/make_seeds
	@rm -rf $(FUZZ_DIR)/seeds && mkdir -p $(foreach t,$(sort loader api $(FUZZ_TARGETS)),$(FUZZ_DIR)/seeds/$(t) $(FUZZ_DIR)/corpus/$(t))
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

# The entry points: the table against NVIDIA's typedef headers (when the
# toolkit is there), the headers' declarations and the library's exports;
# NOT_SUPPORTED.md and the README's count up to date.
ENTRY_CHECK_NVIDIA := $(if $(wildcard $(CUDA_HOME)/include/cudaTypedefs.h),--include $(CUDA_HOME)/include)
entry-check: $(SHLIB)
	@nm -D --defined-only $(SHLIB) > $(BUILD)/gen/api/nm.txt
	@$(if $(ENTRY_CHECK_NVIDIA),,echo "entry-check: no $(CUDA_HOME)/include/cudaTypedefs.h: versions not compared with NVIDIA's")
	@$(GEN_ENTRY) check --cc "$(CC)" --table $(ENTRY_TABLE) $(ENTRY_CHECK_NVIDIA) --exports $(BUILD)/gen/api/nm.txt \
	  --list NOT_SUPPORTED.md --readme README.md --libcuda-exports tests/data/libcuda/libcuda_580.159.04_exports.txt \
	  $(ENTRY_HEADERS)

# Rewrites NOT_SUPPORTED.md from the table.
stubs-md:
	$(GEN_ENTRY) stubs-md --cc "$(CC)" --table $(ENTRY_TABLE) $(ENTRY_HEADERS) > NOT_SUPPORTED.md

# What the release libraries expose: only cu* from libnvlite.so, the simulator
# in libnvlite_sim.so, loaded on demand (tests/libs/check_libs.sh).
$(BUILD)/libcheck/init_probe: tests/libs/init_probe.c $(BUILD)/lib/libnvlite.so
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Iinclude/nvlite $< -o $@ -L$(BUILD)/lib -lnvlite

lib-check: lib $(BUILD)/libcheck/init_probe
	@tests/libs/check_libs.sh $(BUILD)/lib $(BUILD)/libcheck/init_probe

# Typed push-buffer methods: wrong method writes must not compile (tests/compile_fail).
compile-fail-check:
	@tests/compile_fail/run.sh $(CXX) -std=c++20 $(WARN) -Iinclude -Ilib $(CHECK_FLAGS)

# lib/defs holds only what the code or a test references (tests/defs).
defs-check:
	@python3 tests/defs/check_defs_used.py

header-check:
	@$(MAKE) --no-print-directory -C tests/header check BUILD=$(abspath $(BUILD))/tests/header \
	  NVLITE_LIB_DIR=$(abspath $(BUILD))/lib

install: lib
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include/nvlite $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 755 $(SHLIB) $(SIMLIB) $(DESTDIR)$(PREFIX)/lib/
	install -d $(DESTDIR)$(PREFIX)/libexec
	install -m 755 $(JIT_HELPER) $(DESTDIR)$(PREFIX)/libexec/
	ln -sf $(notdir $(SHLIB)) $(DESTDIR)$(PREFIX)/lib/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(PREFIX)/lib/libnvlite.so
	ln -sf $(notdir $(SIMLIB)) $(DESTDIR)$(PREFIX)/lib/$(SIM_SONAME)
	ln -sf $(SIM_SONAME) $(DESTDIR)$(PREFIX)/lib/libnvlite_sim.so
	install -m 644 include/nvlite/*.h $(DESTDIR)$(PREFIX)/include/nvlite/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' pkgconfig/nvlite.pc.in \
	  > $(DESTDIR)$(PREFIX)/lib/pkgconfig/nvlite.pc
	install -d $(DESTDIR)$(PREFIX)/lib/nvlite $(DESTDIR)$(PREFIX)/bin
	ln -sf ../$(SONAME) $(DESTDIR)$(PREFIX)/lib/nvlite/libcuda.so.1
	ln -sf libcuda.so.1 $(DESTDIR)$(PREFIX)/lib/nvlite/libcuda.so
	install -m 755 tools/nvlite-run $(DESTDIR)$(PREFIX)/bin/nvlite-run

clean:
	rm -rf $(BUILD)

# ---- Tools and checks for runs on the GPU machine (tools/etrace, tests/dropin) ----
# make etrace          build/etrace/libetrace.so: LD_AUDIT logger of cuGetExportTable
#                      and of every call into the driver's private tables
# make etrace-test     its checks without a GPU (a stand-in libcuda.so.1); part of make test
# make dropin-checks   build/dropin/nvrtc_driver (NVRTC + driver API, linked against the
#                      toolkit's stub libcuda, runs on either driver) and
#                      build/dropin/libmaps_check.so (preload: which driver a process mapped)
ETRACE_DIR  := $(BUILD)/etrace
ETRACE_SO   := $(ETRACE_DIR)/libetrace.so
ETRACE_SRCS := tools/etrace/etrace.c tools/etrace/audit.c tools/etrace/enter.S
ETRACE_CFLAGS := -std=gnu11 $(WARN) -O2 -fPIC $(CFLAGS)

$(ETRACE_SO): $(ETRACE_SRCS) tools/etrace/etrace.h
	@mkdir -p $(dir $@)
	$(CC) $(ETRACE_CFLAGS) -shared -Wl,-z,now -o $@ $(ETRACE_SRCS) -ldl -lpthread

$(ETRACE_DIR)/test/libcuda.so.1: tools/etrace/test/fake_driver.c tools/etrace/test/fake_tables.h
	@mkdir -p $(dir $@)
	$(CC) $(ETRACE_CFLAGS) -shared -fvisibility=hidden -Wl,-soname,libcuda.so.1 -o $@ $<

$(ETRACE_DIR)/test/etrace_client: tools/etrace/test/etrace_client.c tools/etrace/test/fake_tables.h $(ETRACE_DIR)/test/libcuda.so.1
	$(CC) $(ETRACE_CFLAGS) -Wl,-z,lazy -o $@ $< $(ETRACE_DIR)/test/libcuda.so.1 -ldl

$(ETRACE_DIR)/test_etrace: tools/etrace/test/test_etrace.c tools/etrace/test/fake_tables.h $(ETRACE_SRCS) tools/etrace/etrace.h
	@mkdir -p $(dir $@)
	$(CC) $(ETRACE_CFLAGS) -o $@ $< tools/etrace/etrace.c tools/etrace/enter.S -lcmocka -ldl -lpthread

etrace: $(ETRACE_SO)

etrace-test: $(ETRACE_SO) $(ETRACE_DIR)/test_etrace $(ETRACE_DIR)/test/etrace_client
	@$(ETRACE_DIR)/test_etrace && echo "== etrace: PASS"

DROPIN_BINS := $(BUILD)/dropin/nvrtc_driver $(BUILD)/dropin/libmaps_check.so

$(BUILD)/dropin/nvrtc_driver: tests/dropin/nvrtc_driver.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(WARN) $(CFLAGS) -I$(CUDA_HOME)/include $< -o $@ -L$(CUDA_HOME)/lib64/stubs -lcuda \
	  -L$(CUDA_HOME)/lib64 -lnvrtc -Wl,-rpath,$(CUDA_HOME)/lib64 -ldl -lm

$(BUILD)/dropin/libmaps_check.so: tests/dropin/maps_check.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(WARN) $(CFLAGS) -fPIC -shared -o $@ $< -ldl

dropin-checks: $(DROPIN_BINS)

.PHONY: etrace etrace-test dropin-checks
ifneq ($(NO_BUILD),1)
test: etrace-test dropin-checks
endif

# ---- Issue 10 part C: stream-ordered memory, 2D/3D copies and fills, host functions
# tests/compat/mem_probe.c (sections pitch, pools, hostfunc, hostfault), built
# against libcuda and against libnvlite like compat_probe.
MEM_PROBE_BINS := $(BUILD)/probes/mem_probe_libcuda $(BUILD)/probes/mem_probe_nvlite

$(BUILD)/probes/mem_probe_libcuda: tests/compat/mem_probe.c tests/compat/probe.h
	@mkdir -p $(dir $@)
	$(CC) $(PROBE_CFLAGS) $< -o $@ -L$(CUDA_HOME)/lib64/stubs -lcuda -ldl -lpthread

$(BUILD)/probes/mem_probe_nvlite: tests/compat/mem_probe.c tests/compat/probe.h $(BUILD)/lib/libnvlite.so
	@mkdir -p $(dir $@)
	$(CC) $(PROBE_CFLAGS) $< -o $@ -L$(BUILD)/lib -lnvlite -Wl,-rpath,'$$ORIGIN/../lib' -ldl -lpthread

probes: $(MEM_PROBE_BINS)

# Host functions run on a library thread; pools are shared by every thread.
TSAN_TESTS += tests/api/test_host_func tests/api/test_mem_pool
TSAN_BINS  += $(TSAN_BUILD)/tests/api/test_host_func $(TSAN_BUILD)/tests/api/test_mem_pool
# Several GPUs: peer mappings and copies between devices under ThreadSanitizer.
TSAN_TESTS += tests/api/test_multigpu
TSAN_BINS  += $(TSAN_BUILD)/tests/api/test_multigpu

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# ---- Issue 12: performance
# Built-in kernels (builtin/kernels.cu: device-to-device copies and fills),
# compiled with NVRTC at build time for every architecture nvlite drives and
# embedded in the library (lib/loader/builtin_image.cpp). tools/nvrtc_cubin
# is the build-time compiler driver (NVRTC through samples/nvrtc_compile.h).
BUILTIN_ARCHS  := 80 86 89 90
BUILTIN_CUBINS := $(BUILTIN_ARCHS:%=$(BUILD)/builtin/kernels_sm%.cubin)
NVRTC_CUBIN    := $(BUILD)/tools/nvrtc_cubin

$(NVRTC_CUBIN): tools/nvrtc_cubin.c samples/nvrtc_compile.h
	@mkdir -p $(dir $@)
	$(CC) -std=c11 $(WARN) -O2 $< -o $@ -ldl

$(BUILD)/builtin/kernels_sm%.cubin: builtin/kernels.cu lib/common/builtin_abi.h $(NVRTC_CUBIN)
	@mkdir -p $(dir $@)
	$(NVRTC_CUBIN) $< $* $@ --include-path=$(abspath lib) -std=c++17

# Embedded packed, in BUILTIN_ARCHS order (lib/loader/builtin_image.cpp).
$(BUILD)/builtin/kernels.packed $(BUILD)/gen/loader/packed_builtin.h &: $(BUILTIN_CUBINS) $(PACK_IMAGES)
	@mkdir -p $(BUILD)/gen/loader
	$(PACK_IMAGES) $(BUILD)/builtin/kernels.packed $(BUILD)/gen/loader/packed_builtin.h nvl::loader::builtin::packed $(BUILTIN_CUBINS)

$(BUILD)/obj/lib/loader/builtin_image.o $(CHK)/obj/lib/loader/builtin_image.o: $(BUILD)/builtin/kernels.packed $(BUILD)/gen/loader/packed_builtin.h
$(BUILD)/obj/lib/loader/builtin_image.o: ALL_CXXFLAGS += -DNVL_BUILTIN_DIR='"$(BUILD)/builtin"'
$(CHK)/obj/lib/loader/builtin_image.o: TEST_CXXFLAGS += -DNVL_BUILTIN_DIR='"$(BUILD)/builtin"'

# bench_perf's kernels (bench/perf_kernels.cu), compiled at build time next to
# the benchmark: the benchmark never opens NVRTC (which would load libcuda.so.1
# into an nvlite run).
BENCH_CUBINS := $(BUILTIN_ARCHS:%=$(BUILD)/bench/perf_kernels_sm%.cubin)
$(BUILD)/bench/perf_kernels_sm%.cubin: bench/perf_kernels.cu $(NVRTC_CUBIN)
	@mkdir -p $(dir $@)
	$(NVRTC_CUBIN) $< $* $@
bench: $(BENCH_CUBINS)

# make bench-compare: every benchmark against libcuda and nvlite, interleaved,
# BENCH_ROUNDS rounds, one table (bench/compare.py; also written to
# $(BUILD)/bench/compare.md). Runs on a GPU machine; NO_BUILD=1 runs what is
# built. BENCH_ARGS passes more options, e.g. --variant wfi=NVLITE_LAUNCH_ORDER=wfi.
BENCH_ROUNDS ?= 5
BENCH_ARGS   ?=
.PHONY: bench-compare
bench-compare: $(if $(filter 1,$(NO_BUILD)),,bench driver)
	python3 bench/compare.py --build $(BUILD) --rounds $(BENCH_ROUNDS) --out $(BUILD)/bench/compare.md $(BENCH_ARGS)

# make bench-launch-order: the launch benchmarks with one nvlite column per
# NVLITE_LAUNCH_ORDER (lib/hw/LAUNCH_ORDER.md), written to
# $(BUILD)/bench/launch_order.md. NO_BUILD=1 as above.
LAUNCH_ORDER_VARIANTS ?= --variant spin=NVLITE_LAUNCH_ORDER=acquire-spin --variant wfi=NVLITE_LAUNCH_ORDER=wfi \
                         --variant hwfi=NVLITE_LAUNCH_ORDER=host-wfi
.PHONY: bench-launch-order
bench-launch-order: $(if $(filter 1,$(NO_BUILD)),,bench driver)
	python3 bench/compare.py --build $(BUILD) --rounds $(BENCH_ROUNDS) --only bench_launch,bench_events,bench_perf:launch \
	    --out $(BUILD)/bench/launch_order.md $(LAUNCH_ORDER_VARIANTS) $(BENCH_ARGS)

# ---- Runtime-API programs (issue 13) ----
# tests/cudart/*.cu: cmocka programs that use only the runtime API, built by
# nvcc with static and with shared cudart. Their RPATH puts build/driver
# (nvlite as libcuda.so.1) first, so nvlite is their driver wherever they run.
# make test-cudart      runs them on the simulated driver (part of make test)
# make test-hw-cudart   runs them on the GPU (kernels' results checked)
# Without nvcc ($(NVCC)) they are not built, and both targets say so.
NVCC        ?= $(CUDA_HOME)/bin/nvcc
CUDART_SRCS := $(sort $(wildcard tests/cudart/*.cu))
CUDART_ARCH := -gencode arch=compute_90,code=sm_90 -gencode arch=compute_80,code=compute_80
CUDART_LINK  = -Xlinker --disable-new-dtags -Xlinker -rpath -Xlinker '$$ORIGIN/../../driver' -lcmocka -ldl
ifneq ($(wildcard $(NVCC)),)
CUDART_CUBLAS := $(BUILD)/dropin/cublas_sgemm
CUDART_BINS := $(foreach s,$(CUDART_SRCS),$(patsubst tests/%.cu,$(BUILD)/tests/%,$(s))_static \
                 $(patsubst tests/%.cu,$(BUILD)/tests/%,$(s))_shared)
endif

$(BUILD)/obj/tests/cudart/%.o: tests/cudart/%.cu tests/cudart/cudart_check.h
	@mkdir -p $(dir $@)
	$(NVCC) -std=c++17 -O2 $(CUDART_ARCH) -Xcompiler -Wall,-Wextra,-Werror -c $< -o $@

$(BUILD)/tests/cudart/%_static: $(BUILD)/obj/tests/cudart/%.o | driver
	@mkdir -p $(dir $@)
	$(NVCC) -cudart=static $< -o $@ $(CUDART_LINK)

$(BUILD)/tests/cudart/%_shared: $(BUILD)/obj/tests/cudart/%.o | driver
	@mkdir -p $(dir $@)
	$(NVCC) -cudart=shared $< -o $@ $(CUDART_LINK) -Xlinker -rpath -Xlinker $(CUDA_HOME)/lib64

tests: $(CUDART_BINS)

.PHONY: test-cudart test-hw-cudart
# cuBLAS (tests/dropin/cublas_sgemm.cu) runs there too, nvlite first on its
# LD_LIBRARY_PATH: every call must succeed and its GEMM kernels reach the
# simulated GPU.
test-cudart: $(if $(filter 1,$(NO_BUILD)),,$(CUDART_BINS) $(CUDART_CUBLAS) driver)
	@if [ -z "$(CUDART_BINS)" ]; then echo "test-cudart: no nvcc ($(NVCC)): the runtime-API programs were not built or run"; \
	 else LD_LIBRARY_PATH=$(abspath $(DRIVER_DIR))$${LD_LIBRARY_PATH:+:$$LD_LIBRARY_PATH} NVLITE_DEVICE=sim \
	   tests/run_tests.sh $(CUDART_BINS) $(CUDART_CUBLAS); fi

test-hw-cudart: $(if $(filter 1,$(NO_BUILD)),,$(CUDART_BINS))
	@if [ -z "$(CUDART_BINS)" ]; then echo "test-hw-cudart: no nvcc ($(NVCC)): the runtime-API programs were not built"; exit 1; fi
	@env -u NVLITE_DEVICE tests/run_tests.sh $(CUDART_BINS)

# The smallest program that does what CuPy's matmul does (tests/dropin/cublas_sgemm.cu):
# static cudart and cuBLAS, no driver linked.
ifneq ($(wildcard $(NVCC)),)
$(BUILD)/dropin/cublas_sgemm: tests/dropin/cublas_sgemm.cu
	@mkdir -p $(dir $@)
	$(NVCC) -std=c++17 -O2 -arch=sm_90 -Xcompiler -Wall,-Wextra,-Werror -cudart=static $< -o $@ -lcublas -ldl \
	  -Xlinker -rpath -Xlinker $(CUDA_HOME)/lib64

dropin-checks: $(BUILD)/dropin/cublas_sgemm
endif

ifneq ($(NO_BUILD),1)
test: test-cudart
endif

# tests/cudart/driver_mix.cu also calls the driver API (linked to the
# toolkit's stub libcuda.so as programs are: libcuda.so.1, found by RPATH)
# and loads a fat binary and PTX built beside it (tests/cudart/kernels/);
# linking the PTX needs the JIT helper.
CUDART_MIX_FATBIN := $(BUILD)/tests/cudart/driver_mix_kernel.fatbin
$(CUDART_MIX_FATBIN): tests/cudart/kernels/driver_mix_kernel.cu
	@mkdir -p $(dir $@)
	$(NVCC) -fatbin $(CUDART_ARCH) $< -o $@
$(BUILD)/tests/cudart/driver_mix_static $(BUILD)/tests/cudart/driver_mix_shared: CUDART_LINK += -L$(CUDA_HOME)/lib64/stubs -lcuda
CUDART_MIX_PTX := $(BUILD)/tests/cudart/driver_mix_kernel.ptx
$(CUDART_MIX_PTX): tests/cudart/kernels/driver_mix_kernel.cu
	@mkdir -p $(dir $@)
	$(NVCC) -ptx -arch=compute_80 $< -o $@
$(BUILD)/tests/cudart/driver_mix_static $(BUILD)/tests/cudart/driver_mix_shared: $(CUDART_MIX_FATBIN) $(CUDART_MIX_PTX) $(JIT_HELPER)

# make test-cudart-asan: the runtime-API programs and cuBLAS (as test-cudart)
# on the AddressSanitizer build of the library (test-asan's, $(ASAN_BUILD)):
# the programs are nvcc's, so the ASan runtime is preloaded. Catches what
# glibc only sometimes noticed (issue 13: calls from cudart's atexit
# teardown into freed per-thread state). nvJitLink runs in a fork of the
# program (NVLITE_JIT_HELPER names no file): the ASan build's nvlite-jit has
# ASan linked in statically, which the preloaded shared runtime refuses.
# The programs need the ASan build's simulated driver too. Part of test-asan; without nvcc,
# or without clang's shared ASan runtime, it says so and runs nothing.
CUDART_ASAN_RT = $(shell $(ASAN_CC) -print-file-name=libclang_rt.asan-x86_64.so 2>/dev/null)
.PHONY: cudart-programs test-cudart-asan
cudart-programs: $(CUDART_BINS) $(CUDART_CUBLAS) $(if $(CUDART_BINS),driver $(BUILD)/lib/$(SIM_SONAME))
test-cudart-asan:
	@if [ -z "$(CUDART_BINS)" ]; then echo "test-cudart-asan: skipped: no nvcc ($(NVCC)) to build the runtime-API programs"; \
	 elif [ ! -f "$(CUDART_ASAN_RT)" ]; then echo "test-cudart-asan: skipped: no shared ASan runtime from $(ASAN_CC)"; \
	 else $(ASAN_MAKE) cudart-programs && \
	   LD_PRELOAD=$(CUDART_ASAN_RT) LD_LIBRARY_PATH=$(abspath $(ASAN_BUILD)/driver)$${LD_LIBRARY_PATH:+:$$LD_LIBRARY_PATH} \
	   NVLITE_JIT_HELPER=/nonexistent/nvlite-jit \
	   NVLITE_DEVICE=sim ASAN_OPTIONS="detect_leaks=0:exitcode=67:$$ASAN_OPTIONS" \
	   UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=68:$$UBSAN_OPTIONS" \
	   tests/run_tests.sh $(patsubst $(BUILD)/%,$(ASAN_BUILD)/%,$(CUDART_BINS) $(CUDART_CUBLAS)); fi
test-asan: test-cudart-asan
ASAN_BINS += $(ASAN_BUILD)/tests/api/test_exit_calls
