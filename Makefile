# Thin wrapper over CMake. `make` builds Release into build/; `make test` and `make run` install
# missing Debian packages first (tools/install-deps.sh does nothing when all are present).
JOBS ?= $(shell nproc)
BUILD ?= build
SANITIZE_BUILD ?= build-sanitize
CMAKE_FLAGS ?=

.PHONY: all deps configure test test-sanitize fuzz run bench format clean

all: configure
	cmake --build $(BUILD) -j $(JOBS)

deps:
	@tools/install-deps.sh

configure:
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) > /dev/null

test: deps all
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The same suite with AddressSanitizer and UndefinedBehaviorSanitizer (Debug, no benchmarks, no
# CUDA; the runs under mpirun without the leak checker, which reports the MPI library's own).
test-sanitize: deps
	@cmake -S . -B $(SANITIZE_BUILD) -DCMAKE_BUILD_TYPE=Debug -DRECYCLE_SANITIZE=ON -DRECYCLE_BENCH=OFF \
	  -DRECYCLE_CUDA=OFF $(CMAKE_FLAGS) > /dev/null
	cmake --build $(SANITIZE_BUILD) -j $(JOBS)
	cd $(SANITIZE_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS)

# One libFuzzer target per reader (tests/fuzz; clang, ASan + UBSan), each run FUZZ_SECONDS
# (default 60); findings in build-fuzz/findings/.
fuzz: deps
	tools/fuzz.sh

# The main job: GPT-3 175B on 1,024 A100-80GB GPUs (TP 8, PP 8, DP 16) through the first 30 days
# of the shipped llama3-like trace (2,048 nodes, scaled to the job's 128) under every policy, on
# its own 1F1B schedule and again on zb-h2 (the baseline every policy is measured against).
RUN_REPLAY = $(BUILD)/tools/recycle replay --job profiles/jobs/gpt3-175b-a100-1024.json \
	  --trace traces/data/llama3-like.csv --map scale --seed 1 --days 30
run: deps all
	@mkdir -p out
	$(RUN_REPLAY) --match-spares --timeline out/replay-timeline.csv --svg out/replay.svg
	@echo
	$(RUN_REPLAY) --schedule zb-h2 --svg out/replay-zb-h2.svg

bench: deps all
	$(BUILD)/tests/bench/recycle_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true

format:
	git ls-files '*.cpp' '*.hpp' '*.cu' | xargs clang-format -i

clean:
	rm -rf $(BUILD) $(SANITIZE_BUILD) build-fuzz
