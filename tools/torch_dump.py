#!/usr/bin/env python3
"""Write torch's own pipeline schedules as CSV fixtures.

    python tools/torch_dump.py OUTDIR [--pp 4] [--microbatches 8]

For the torch this runs under, builds each built-in multi-stage schedule
(2 stages per rank) and writes
  OUTDIR/<Class>.compute_only.csv   its pipeline_order, via torch's _dump_csv
  OUTDIR/<Class>.compute_comms.csv  the lowered pipeline_order_with_comms that
                                    _PipelineScheduleRuntime runs
and, where the class has _get_pipeline_order(), the compute-only order of the
single-stage Schedule1F1B and ScheduleGPipe as OUTDIR/<Class>.compute_only.csv.

Building a schedule only needs the rank and size of its process group, so we
run one process as rank 0 of a pp-rank "fake" group (torch's test backend that
does no communication); every schedule computes the orders of all ranks.
"""

import argparse
import csv
import os

import torch
import torch.distributed as dist
import torch.distributed.pipelining.schedules as schedules
from torch.distributed.pipelining import PipelineStage
from torch.testing._internal.distributed.fake_pg import FakeStore  # registers "fake"

# Multi-stage classes and where they place rank 0's two stages.
MULTI_STAGE = {
    "ScheduleInterleaved1F1B": "loop",
    "ScheduleLoopedBFS": "loop",
    "ScheduleInterleavedZeroBubble": "loop",
    "ScheduleZBVZeroBubble": "v",
    "ScheduleDualPipeV": "v",  # torch >= 2.15
}
SINGLE_STAGE = ["Schedule1F1B", "ScheduleGPipe"]


def mse(output, target):
    return torch.nn.functional.mse_loss(output, target)


def stage(index, num_stages):
    return PipelineStage(torch.nn.Linear(4, 4), index, num_stages, torch.device("cpu"))


def write_rows(order, path):
    """Like torch's _dump_csv: one row per rank, None written as an empty cell."""
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        for rank in sorted(order):
            writer.writerow(order[rank])


def dump_multi(name, placement, pp, n_mb, outdir):
    num_stages = 2 * pp
    rank0_stages = [0, pp] if placement == "loop" else [0, num_stages - 1]
    stages = [stage(i, num_stages) for i in rank0_stages]
    schedule = getattr(schedules, name)(stages, n_microbatches=n_mb, loss_fn=mse)
    base = os.path.join(outdir, name)

    if isinstance(schedule, schedules._PipelineScheduleRuntime):  # e.g. torch 2.15: already lowered
        schedule._dump_csv(base + ".compute_only.csv", format="compute_only")
        schedule._dump_csv(base + ".compute_comms.csv", format="compute_comms")
    else:  # torch 2.8: lower the compute-only order the way _PipelineScheduleRuntime._load_csv does
        schedule._dump_csv(base + ".compute_only.csv")
        runtime = schedules._PipelineScheduleRuntime(stages, n_microbatches=n_mb, loss_fn=mse)
        runtime._load_actions(schedule.pipeline_order, format="compute_only")
        runtime._dump_csv(base + ".compute_comms.csv")
    return [base + ".compute_only.csv", base + ".compute_comms.csv"]


def dump_single(name, pp, n_mb, outdir):
    schedule = getattr(schedules, name)(stage(0, pp), n_microbatches=n_mb, loss_fn=mse)
    order = schedule._get_pipeline_order() if hasattr(schedule, "_get_pipeline_order") else None
    if order is None:
        return []
    path = os.path.join(outdir, name + ".compute_only.csv")
    write_rows(order, path)
    return [path]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir")
    parser.add_argument("--pp", type=int, default=4)
    parser.add_argument("--microbatches", type=int, default=8)
    args = parser.parse_args()
    os.makedirs(args.outdir, exist_ok=True)

    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=args.pp)
    written = []
    for name, placement in MULTI_STAGE.items():
        if hasattr(schedules, name):
            written += dump_multi(name, placement, args.pp, args.microbatches, args.outdir)
    for name in SINGLE_STAGE:
        written += dump_single(name, args.pp, args.microbatches, args.outdir)
    dist.destroy_process_group()

    for path in written:
        print(f"torch {torch.__version__}: wrote {path}")


if __name__ == "__main__":
    main()
