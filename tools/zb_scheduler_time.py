#!/usr/bin/env python3
"""Times Zero Bubble's own ZB-H2 scheduler in-process, for the comparison with `zb-h2`
(tests/bench/planner_bench.cpp, BM_GenerateZbH2VsZeroBubble; docs/recycle.md).

Usage: tools/zb_scheduler_time.py ZB_CHECKOUT [REPEATS]

ZB_CHECKOUT is a checkout of sail-sg/zero-bubble-pipeline-parallelism (39f2c186 was measured).
Its zerobubble/scheduler/zb.py is imported from there, nothing of it is copied: Graph.build_graph
and initial_solution (the greedy over its 8 flag settings, best by its objective, each stage's
span), the scheduler its runtime calls. That path uses neither torch nor pulp, which the module
imports, so empty stand-ins are registered for them. Memory: an F holds one unit of activations,
its W frees it, K units at most per stage; free communication. Prints one line per input: the
span it finds and the median wall time of REPEATS runs (default 5).
"""
import importlib.util
import pathlib
import statistics
import sys
import time
import types

INPUTS = [  # pp, micro-batches, F, I (B in Zero Bubble's names), W, K: the benchmark's Args
    (4, 16, 1, 1, 1, 8),
    (8, 32, 1, 2, 1, 16),
    (16, 64, 1, 1, 1, 32),
    (16, 64, 2, 3, 2, 32),
    (16, 128, 2, 3, 2, 32),
    (32, 64, 1, 2, 1, 64),
    (32, 128, 2, 3, 2, 64),
]


def main() -> int:
    if len(sys.argv) < 2:
        print("error: no Zero Bubble checkout given; usage: tools/zb_scheduler_time.py "
              "ZB_CHECKOUT [REPEATS]", file=sys.stderr)
        return 2
    try:
        repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    except ValueError:
        repeats = 0
    if repeats < 1:
        print(f"error: REPEATS: a positive whole number, got '{sys.argv[2]}'", file=sys.stderr)
        return 2
    sys.modules.setdefault("torch", types.SimpleNamespace(Tensor=object))
    sys.modules.setdefault("pulp", types.ModuleType("pulp"))
    # The two files alone, under their package names (the packages' __init__ files import the
    # training runtime, which needs torch).
    package = "megatron.core.pipeline_parallel.zerobubble.scheduler"
    folder = pathlib.Path(sys.argv[1]) / package.replace(".", "/")
    modules = {}
    for name in ("graph", "zb"):
        path = folder / f"{name}.py"
        if not path.is_file():
            print(f"error: {sys.argv[1]}: not a Zero Bubble checkout (no {path})", file=sys.stderr)
            return 2
        spec = importlib.util.spec_from_file_location(f"{package}.{name}", path)
        modules[name] = importlib.util.module_from_spec(spec)
        sys.modules[f"{package}.{name}"] = modules[name]
        spec.loader.exec_module(modules[name])
    zb, GraphConfig = modules["zb"], modules["graph"].GraphConfig
    for pp, m, f, i, w, k in INPUTS:
        config = GraphConfig(mem_f=[1.0] * pp, mem_b=[0.0] * pp, mem_w=[-1.0] * pp,
                             max_mem=[float(k)] * pp, cost_f=[float(f)] * pp,
                             cost_b=[float(i)] * pp, cost_w=[float(w)] * pp, cost_comm=0.0,
                             n_stages=pp, n_micro=m)
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            graph = zb.Graph.build_graph(pp, m, config)
            span, _, _ = zb.initial_solution(graph, print_result=False)
            times.append(time.perf_counter() - start)
        print(f"pp {pp} m {m} F,I,W {f},{i},{w} K {k}: span {span:g}, "
              f"median {1e3 * statistics.median(times):.2f} ms of {repeats}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
