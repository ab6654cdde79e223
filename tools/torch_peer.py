#!/usr/bin/env python3
"""Time PyTorch's pipelining runtime on the cpu executor's dense workload, for a ratio.

    python tools/torch_peer.py --schedule 1f1b|gpipe --pp P --microbatches M
                               [--width 1024] [--layers-per-stage 2]
                               [--microbatch-size 64] [--iterations 8]

The same work as `recycle validate --backend cpu --schedule S --pp P --microbatches M --width W
--layers-per-stage L --microbatch-size B`: each of P stages is L layers tanh(x W + b) of width W
in fp32, micro-batches of B rows, the last stage's loss the mean squared error, plain SGD once per
iteration. Here P gloo processes on 127.0.0.1 run torch.distributed.pipelining's Schedule1F1B or
ScheduleGPipe, one torch thread each (recycle's workers use one BLAS thread each). Prints the mean
iteration time over --iterations iterations after two warm-up iterations, as rank 0 sees it
between two barriers: the time the same schedule takes on the field's reference runtime.
Exits 77 when torch is missing.
"""

import argparse
import multiprocessing
import os
import socket
import sys
import time

try:
    import torch
    import torch.distributed as dist
    from torch.distributed.pipelining import PipelineStage, Schedule1F1B, ScheduleGPipe
except ImportError:
    print(f"torch-peer: torch is not installed for {sys.executable}; skipped")
    sys.exit(77)

WARMUP = 2


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stage_module(width, layers):
    blocks = []
    for _ in range(layers):
        blocks += [torch.nn.Linear(width, width), torch.nn.Tanh()]
    return torch.nn.Sequential(*blocks)


def rank_main(rank, args, port, out):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=args.pp)
    torch.manual_seed(rank)
    module = stage_module(args.width, args.layers_per_stage)
    stage = PipelineStage(module, rank, args.pp, torch.device("cpu"))
    schedule_type = Schedule1F1B if args.schedule == "1f1b" else ScheduleGPipe
    loss = torch.nn.MSELoss()
    schedule = schedule_type(stage, args.microbatches, loss_fn=loss)
    optimizer = torch.optim.SGD(module.parameters(), lr=1e-3)
    batch = args.microbatches * args.microbatch_size
    x = torch.rand(batch, args.width) * 2 - 1
    y = torch.rand(batch, args.width) * 2 - 1

    def iteration():
        optimizer.zero_grad()
        if rank == 0:
            schedule.step(x)
        elif rank == args.pp - 1:
            schedule.step(target=y, losses=[])
        else:
            schedule.step()
        optimizer.step()

    for _ in range(WARMUP):
        iteration()
    dist.barrier()
    start = time.perf_counter()
    for _ in range(args.iterations):
        iteration()
    dist.barrier()
    if rank == 0:
        out.put((time.perf_counter() - start) / args.iterations)
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schedule", choices=["1f1b", "gpipe"], required=True)
    parser.add_argument("--pp", type=int, required=True)
    parser.add_argument("--microbatches", type=int, required=True)
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--layers-per-stage", type=int, default=2)
    parser.add_argument("--microbatch-size", type=int, default=64)
    parser.add_argument("--iterations", type=int, default=8)
    args = parser.parse_args()
    if args.pp < 2 or args.microbatches < 1 or args.iterations < 1:
        print("error: --pp must be at least 2, --microbatches and --iterations at least 1",
              file=sys.stderr)
        sys.exit(2)
    context = multiprocessing.get_context("spawn")
    out = context.Queue()
    port = free_port()
    ranks = [context.Process(target=rank_main, args=(r, args, port, out)) for r in range(args.pp)]
    for p in ranks:
        p.start()
    for p in ranks:
        p.join(timeout=600)
    if any(p.exitcode != 0 for p in ranks):
        print("error: a rank failed", file=sys.stderr)
        sys.exit(1)
    seconds = out.get(timeout=10)
    print(f"torch {torch.__version__} {args.schedule} pp {args.pp}, {args.microbatches} "
          f"micro-batches of {args.microbatch_size} x {args.width}, {args.layers_per_stage} "
          f"layers a stage: iteration {seconds * 1e3:.2f} ms (mean of {args.iterations})")


if __name__ == "__main__":
    main()
