// The benchmarks' entry point: the allocator set up as the command line sets it
// (core/allocator.hpp), so the figures are those of `recycle`.
#include <benchmark/benchmark.h>

#include "core/allocator.hpp"

int main(int argc, char** argv) {
  recycle::keep_freed_memory();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
