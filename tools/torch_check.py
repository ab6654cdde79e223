#!/usr/bin/env python3
"""Run a pipeline-schedule CSV on PyTorch and compare its gradients with a reference.

    python tools/torch_check.py --csv FILE --format compute_only|compute_comms
                                [--timeout 120] [--verbose]

The CSV is a torch.distributed.pipelining schedule (one row per pipeline rank,
as written by `recycle plan --format csv` or `--format csv-comms`). We read pp
(rows), the stages each rank holds, num_stages and the number of micro-batches
from it, spawn pp gloo processes on 127.0.0.1 (CPU, float64), and let each rank
run `_PipelineScheduleRuntime._load_csv(FILE, format)` + `step()` over a small
model: stage k is block k = Linear(16, 16) + tanh, loss = MSE per micro-batch.
The parent then runs the same blocks in one process (loss = mean over
micro-batches of each micro-batch's MSE) and compares every parameter gradient.

With --scale-in-loss each micro-batch's loss is divided by M and the runtime is
built with scale_grads=False: torch 2.8's runtime divides a stage's gradients by
M only when its last backward is a B, so split-backward schedules (I and W) need
the division in the loss there.

Prints one line and exits 0 if max |grad - reference| < 1e-9, 1 if it is larger
or torch rejects the schedule, crashes or hangs (timeout); 77 if torch is missing.
"""

import argparse
import csv
import multiprocessing
import os
import re
import socket
import sys
import tempfile
import time

try:
    import torch
    import torch.distributed as dist
except ImportError:
    print(f"torch-check: torch is not installed for {sys.executable}; skipped")
    sys.exit(77)

WIDTH = 16          # features per block
SAMPLES_PER_MB = 2  # the batch is M * 2 samples
TOLERANCE = 1e-9
SEED = 1234

SIMPLE_TOKEN = re.compile(r"^(\d+)([A-Z_]+?)(\d*)$")
COMPOUND_TOKEN = re.compile(r"^\((.*)\)([A-Z_]+)$")


# ---------------------------------------------------------------- schedule file

def parse_token(token):
    """'3F1' -> [(3, 'F', 1)];  '(0F1;7B0)OVERLAP_F_B' -> [(0,'F',1), (7,'B',0)]."""
    token = token.strip()
    if not token:
        return []
    compound = COMPOUND_TOKEN.match(token)
    if compound:
        return [a for part in compound.group(1).split(";") for a in parse_token(part)]
    simple = SIMPLE_TOKEN.match(token)
    if not simple:
        raise ValueError(f"cannot parse action {token!r}")
    stage, kind, mb = simple.groups()
    return [(int(stage), kind, int(mb) if mb else None)]


def read_layout(path):
    """Return (stages held by each rank, num_stages, n_microbatches)."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    stages_per_rank, last_forward_mb = [], -1
    for row in rows:
        actions = [a for cell in row for a in parse_token(cell)]
        stages_per_rank.append(sorted({stage for stage, _, _ in actions}))
        for _, kind, mb in actions:
            if kind == "F":
                last_forward_mb = max(last_forward_mb, mb)
    num_stages = 1 + max(s for stages in stages_per_rank for s in stages)
    return stages_per_rank, num_stages, last_forward_mb + 1


# ---------------------------------------------------------------- model and data

def make_blocks(num_stages):
    torch.manual_seed(SEED)
    return [
        torch.nn.Sequential(torch.nn.Linear(WIDTH, WIDTH, dtype=torch.float64), torch.nn.Tanh())
        for _ in range(num_stages)
    ]


def make_batch(n_microbatches):
    gen = torch.Generator().manual_seed(SEED + 1)
    shape = (n_microbatches * SAMPLES_PER_MB, WIDTH)
    return (torch.randn(shape, generator=gen, dtype=torch.float64),
            torch.randn(shape, generator=gen, dtype=torch.float64))


def reference_grads(num_stages, n_microbatches):
    blocks = make_blocks(num_stages)
    model = torch.nn.Sequential(*blocks)
    x, y = make_batch(n_microbatches)
    losses = [torch.nn.functional.mse_loss(model(xm), ym)
              for xm, ym in zip(x.tensor_split(n_microbatches), y.tensor_split(n_microbatches))]
    torch.stack(losses).mean().backward()
    return {(k, name): p.grad for k, b in enumerate(blocks) for name, p in b.named_parameters()}


# ---------------------------------------------------------------- one pipeline rank

def run_rank(rank, world, port, args, stage_ids, num_stages, n_mb, outdir):
    if not args.verbose:  # torch prints the whole schedule on errors: keep our output to one line
        log = os.open(os.path.join(outdir, f"rank{rank}.log"), os.O_WRONLY | os.O_CREAT)
        os.dup2(log, 1)
        os.dup2(log, 2)
    try:
        from torch.distributed.pipelining import PipelineStage
        from torch.distributed.pipelining.schedules import _PipelineScheduleRuntime

        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}",
                                rank=rank, world_size=world)
        blocks = make_blocks(num_stages)
        x, y = make_batch(n_mb)
        cpu = torch.device("cpu")
        stages = [PipelineStage(blocks[s], s, num_stages, cpu, group=dist.group.WORLD)
                  for s in stage_ids]  # ascending stage order, as torch's own multi-stage tests use
        if args.scale_in_loss:  # the loss carries the 1/M; torch scales nothing
            def loss_fn(out, target):
                return torch.nn.functional.mse_loss(out, target) / n_mb
        else:
            loss_fn = torch.nn.functional.mse_loss
        schedule = _PipelineScheduleRuntime(stages, n_microbatches=n_mb, loss_fn=loss_fn,
                                            scale_grads=not args.scale_in_loss)
        schedule._load_csv(args.csv, format=args.format)
        inputs = (x,) if 0 in stage_ids else ()
        target = y if num_stages - 1 in stage_ids else None
        schedule.step(*inputs, target=target)

        grads = {(s, name): p.grad for s in stage_ids for name, p in blocks[s].named_parameters()}
        torch.save(grads, os.path.join(outdir, f"rank{rank}.pt"))
        dist.destroy_process_group()
    except BaseException as e:  # report the first line of torch's message to the parent
        first_line = (str(e).strip().splitlines() or [""])[0]
        with open(os.path.join(outdir, f"rank{rank}.err"), "w") as f:
            f.write(f"rank {rank}: {type(e).__name__}: {first_line}")
        raise


def run_pipeline(args, stages_per_rank, num_stages, n_mb, outdir):
    """Start the ranks; return (grads, error text or None)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = multiprocessing.get_context("spawn")
    world = len(stages_per_rank)
    procs = [ctx.Process(target=run_rank,
                         args=(r, world, port, args, stages_per_rank[r], num_stages, n_mb, outdir))
             for r in range(world)]
    for p in procs:
        p.start()

    deadline, error = time.monotonic() + args.timeout, None
    while any(p.is_alive() for p in procs) and time.monotonic() < deadline:
        if error is None:  # the first error seen is the cause; peers fail after it
            for r in range(world):
                err_file = os.path.join(outdir, f"rank{r}.err")
                if os.path.exists(err_file):
                    time.sleep(0.2)
                    error = open(err_file).read()
                    deadline = min(deadline, time.monotonic() + 5)  # let the others fail or finish
                    break
        time.sleep(0.1)
    hung = [r for r, p in enumerate(procs) if p.is_alive()]
    for p in procs:
        if p.is_alive():
            p.terminate()
        p.join()

    if error is None:
        errs = sorted(f for f in os.listdir(outdir) if f.endswith(".err"))
        if errs:
            error = open(os.path.join(outdir, errs[0])).read()
        elif hung:
            error = f"timeout after {args.timeout:g} s (ranks {hung} still running)"
        elif any(p.exitcode != 0 for p in procs):
            error = "rank exit codes " + str([p.exitcode for p in procs])
    if error:
        return None, error
    grads = {}
    for r in range(world):
        grads.update(torch.load(os.path.join(outdir, f"rank{r}.pt")))
    return grads, None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", required=True, help="schedule CSV, one row per pipeline rank")
    parser.add_argument("--format", required=True, choices=["compute_only", "compute_comms"])
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds before a hang fails")
    parser.add_argument("--verbose", action="store_true", help="let the ranks print to the terminal")
    parser.add_argument("--scale-in-loss", action="store_true",
                        help="divide each micro-batch's loss by M and build the runtime with "
                             "scale_grads=False (torch 2.8 divides by M only after a B, not a W)")
    args = parser.parse_args()

    version = ".".join(torch.__version__.split("+")[0].split(".")[:2])
    head = f"{args.csv} {args.format} torch {version}"
    if args.scale_in_loss:
        head += " (loss / M, scale_grads=False)"
    args.csv = os.path.abspath(args.csv)  # the ranks may start elsewhere
    try:
        stages_per_rank, num_stages, n_mb = read_layout(args.csv)
    except (OSError, ValueError) as e:
        print(f"{head}: cannot read schedule: {e}")
        return 1

    with tempfile.TemporaryDirectory(prefix="torch-check-") as outdir:
        grads, error = run_pipeline(args, stages_per_rank, num_stages, n_mb, outdir)
    if error:
        print(f"{head}: FAILED: {error}")
        return 1

    worst = 0.0
    for key, ref in reference_grads(num_stages, n_mb).items():
        got = grads.get(key)
        if got is None:  # a stage that never ran its backward (or was never placed)
            worst = float("inf")
            continue
        diff = (got - ref).abs().max().item()
        worst = max(worst, diff if diff == diff else float("inf"))  # NaN counts as a failure
    verdict = "ok" if worst < TOLERANCE else f"FAILED (tolerance {TOLERANCE:g})"
    print(f"{head}: max |grad - reference| = {worst:.3g} {verdict}")
    return 0 if worst < TOLERANCE else 1


if __name__ == "__main__":
    sys.exit(main())
