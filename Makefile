# Thin wrapper over CMake. `make` builds Release into build/; `make test` and `make run` install
# missing Debian packages first (tools/install-deps.sh does nothing when all are present).
JOBS ?= $(shell nproc)
BUILD ?= build
SANITIZE_BUILD ?= build-sanitize
CMAKE_FLAGS ?=

.PHONY: all deps configure test test-sanitize run bench format clean

all: configure
	cmake --build $(BUILD) -j $(JOBS)

deps:
	@tools/install-deps.sh

configure:
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) > /dev/null

test: deps all
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The same suite with AddressSanitizer and UndefinedBehaviorSanitizer (Debug, no benchmarks).
test-sanitize: deps
	@cmake -S . -B $(SANITIZE_BUILD) -DCMAKE_BUILD_TYPE=Debug -DRECYCLE_SANITIZE=ON -DRECYCLE_BENCH=OFF \
	  -DRECYCLE_CUDA=OFF $(CMAKE_FLAGS) > /dev/null
	cmake --build $(SANITIZE_BUILD) -j $(JOBS)
	cd $(SANITIZE_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS)

# The main job: for now, plan a 1F1B and a ZB-H1 schedule for PP 4 x 8 micro-batches and print both.
run: deps all
	$(BUILD)/tools/recycle plan --schedule 1f1b --pp 4 --microbatches 8 --costs 1,1,1
	@echo
	$(BUILD)/tools/recycle plan --schedule zb-h1 --pp 4 --microbatches 8 --costs 1,1,1

bench: deps all
	$(BUILD)/tests/bench/recycle_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true

format:
	git ls-files '*.cpp' '*.hpp' '*.cu' | xargs clang-format -i

clean:
	rm -rf $(BUILD) $(SANITIZE_BUILD)
