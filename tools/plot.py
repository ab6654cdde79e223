#!/usr/bin/env python3
"""Figures from what recycle's subcommands write, as PNG or SVG (matplotlib).

  python3 tools/plot.py timeline out/replay-timeline.csv -o out/replay.png
  python3 tools/plot.py study out/spares.csv -o out/spares.svg [--metric goodput]
  python3 tools/plot.py degradation out/degradation.json -o out/degradation.png
  python3 tools/plot.py gantt out/plan-trace.json -o out/gantt.svg

Inputs: `replay --timeline FILE` (time_s, policy, samples_per_s), `study -o FILE` (its CSV, one row
per point, seed and policy), `degradation --json` and `simulate --chrome-trace FILE` (or `validate
--chrome-trace`: the measured timeline). The output's extension chooses the format. Bad input gets
one `error:` line naming the file and the problem, exit code 2, and no output file.
"""

import argparse
import csv
import json
import math
import os
import sys
import tempfile

KINDS = ("timeline", "study", "degradation", "gantt")
# The same colour for an action type wherever it is drawn (simulate --svg uses this order too).
ACTION_COLOURS = {"F": "#4c78a8", "I": "#f58518", "W": "#54a24b", "B": "#e45756",
                  "OPT": "#b279a2", "REDUCE_GRAD": "#9d755d", "SEND": "#bab0ac",
                  "RECV": "#bab0ac", "dropped": "#d3d3d3"}


class InputProblem(Exception):
    """A problem with the user's input: reported as one error line, exit code 2."""


def fail(where, problem):
    raise InputProblem(f"{where}: {problem}")


def number(text, where):
    try:
        value = float(text)
    except ValueError:
        fail(where, f"expected a number, got '{text}'")
    if not math.isfinite(value):
        fail(where, f"expected a finite number, got '{text}'")
    return value


def read_csv(path):
    """The rows of a CSV as dicts, '#' comment lines skipped."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            lines = [line for line in f if not line.startswith("#")]
    except OSError as e:
        fail(path, e.strerror or str(e))
    except UnicodeDecodeError:
        fail(path, "not UTF-8 text")
    reader = csv.DictReader(lines)
    if reader.fieldnames is None:
        fail(path, "empty: expected a header line")
    return reader.fieldnames, list(reader)


def read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        fail(path, e.strerror or str(e))
    except (ValueError, UnicodeDecodeError) as e:
        fail(path, f"not JSON ({e})")


def require_columns(path, fields, needed, what):
    missing = [c for c in needed if c not in fields]
    if missing:
        shown = ", ".join(fields[:8]) + (", ..." if len(fields) > 8 else "")
        fail(path, f"expected {what}: no column {', '.join(missing)} (its columns: {shown})")


def window_means(points, end, bins):
    """The time-weighted mean of a step function (points: (time, value) from time on, sorted) over
    each of `bins` equal windows of [0, end): the throughput a window averaged, pauses included."""
    width = end / bins
    sums = [0.0] * bins
    for k, (start, value) in enumerate(points):
        stop = points[k + 1][0] if k + 1 < len(points) else end
        first, last = int(start // width), min(bins - 1, int(stop // width))
        for b in range(max(0, first), last + 1):
            overlap = min(stop, (b + 1) * width) - max(start, b * width)
            if overlap > 0:
                sums[b] += value * overlap
    return [(b + 0.5) * width for b in range(bins)], [x / width for x in sums]


def timeline(args, plt):
    fields, rows = read_csv(args.input)
    require_columns(args.input, fields, ("time_s", "policy", "samples_per_s"),
                    "the CSV of `recycle replay --timeline`")
    series = {}
    for i, row in enumerate(rows, start=2):
        where = f"{args.input}:{i}"
        series.setdefault(row["policy"], []).append(
            (number(row["time_s"], where), number(row["samples_per_s"], where)))
    if not series:
        fail(args.input, "no rows")
    end = max(t for points in series.values() for t, _ in points)
    if not end > 0:
        fail(args.input, "every row at time 0: nothing to draw over time")
    # Checkpoint writes and restarts are seconds to minutes in weeks: drawn as they are, they
    # blacken the chart. Each point is the mean over a window of 6 hours (several checkpoint
    # intervals, so that how many writes fall in a window barely moves it), or of a twentieth of a
    # replay shorter than 5 days, or of a 200th of one longer than 50.
    window = min(max(end / 200, 6 * 3600.0), end / 20)
    bins = max(1, round(end / window))
    fig, ax = plt.subplots(figsize=(10, 5))
    styles = ("-", "--", "-.", ":")  # policies that run alike stay apart
    for k, (policy, points) in enumerate(series.items()):
        points.sort()
        xs, ys = window_means(points, end, bins)
        ax.plot([x / 86400.0 for x in xs], ys, styles[k % len(styles)], label=policy,
                linewidth=1.4)
    ax.set_xlabel("days of training")
    ax.set_ylabel(f"samples per second (mean over windows of {end / bins / 3600:.3g} h)")
    ax.set_title(args.title or "Throughput over the trace, by policy")
    ax.set_ylim(bottom=0)
    ax.legend(title="policy")
    ax.grid(alpha=0.3)
    return fig


def study(args, plt):
    fields, rows = read_csv(args.input)
    require_columns(args.input, fields, ("point", "seed", "policy"), "the CSV of `recycle study`")
    swept = fields[fields.index("point") + 1:fields.index("seed")]
    if not swept:
        fail(args.input, "no swept column between 'point' and 'seed'")
    metric = args.metric or "goodput"
    require_columns(args.input, fields, (metric,), f"a --metric column of the study")
    # Swept together (`--sweep a/b=1/2,3/4`): one axis of their values joined as the sweep writes
    # them.
    x_name = "/".join(swept)
    # Per policy and point: the swept value and the metric of each seed.
    points = {}
    for i, row in enumerate(rows, start=2):
        where = f"{args.input}:{i}"
        key = (row["policy"], int(number(row["point"], where)))
        entry = points.setdefault(key, {"x": "/".join(row[c] for c in swept), "values": []})
        entry["values"].append(number(row[metric], where))
    if not points:
        fail(args.input, "no rows")
    labels = {}
    for (_, p), entry in points.items():
        labels.setdefault(p, entry["x"])
    try:
        x_of = {p: float(x) for p, x in labels.items()}
        categorical = False
    except ValueError:
        order = sorted(labels)
        x_of = {p: float(i) for i, p in enumerate(order)}
        categorical = True
    fig, ax = plt.subplots(figsize=(8, 5))
    for policy in dict.fromkeys(k[0] for k in points):
        ps = sorted((p for (pol, p) in points if pol == policy), key=lambda p: x_of[p])
        xs = [x_of[p] for p in ps]
        values = [points[(policy, p)]["values"] for p in ps]
        means = [sum(v) / len(v) for v in values]
        lows = [m - min(v) for m, v in zip(means, values)]
        highs = [max(v) - m for m, v in zip(means, values)]
        ax.errorbar(xs, means, yerr=[lows, highs], marker="o", capsize=3, label=policy)
    if categorical:
        ax.set_xticks([x_of[p] for p in sorted(labels, key=lambda p: x_of[p])])
        ax.set_xticklabels([labels[p] for p in sorted(labels, key=lambda p: x_of[p])])
    seeds = len({row["seed"] for row in rows})
    ax.set_xlabel(x_name)
    ax.set_ylabel(f"{metric} (mean over {seeds} seed{'s' if seeds != 1 else ''}; bars: range)")
    ax.set_title(args.title or f"{metric} by {x_name}, by policy")
    ax.legend(title="policy")
    ax.grid(alpha=0.3)
    return fig


def degradation(args, plt):
    report = read_json(args.input)
    if not isinstance(report, dict) or not isinstance(report.get("rows"), list):
        fail(args.input, "expected `recycle degradation --json` output (an object with rows)")
    fault_free = report.get("fault_free_s")
    if not isinstance(fault_free, (int, float)) or not fault_free > 0:
        fail(args.input, "no positive fault_free_s")
    patterns = {}
    for i, row in enumerate(report["rows"]):
        if not isinstance(row, dict):
            fail(args.input, f"rows[{i}]: expected an object")
        for key in ("pattern", "failures", "recycle_s", "naive_s", "bound_s"):
            if key not in row:
                fail(args.input, f"rows[{i}]: no {key}")
        patterns.setdefault(str(row["pattern"]), []).append(row)
    if not patterns:
        fail(args.input, "no rows")
    fig, axes = plt.subplots(1, len(patterns), figsize=(6 * len(patterns), 4.5), squeeze=False)
    for ax, (pattern, rows) in zip(axes[0], patterns.items()):
        rows.sort(key=lambda r: r["failures"])
        xs = [r["failures"] for r in rows]
        for key, label, style in (("recycle_s", "ReCycle", "o-"), ("naive_s", "naive re-routing",
                                                                    "s--"),
                                  ("bound_s", "bound", ":")):
            ax.plot(xs, [r[key] / fault_free for r in rows], style, label=label)
        ax.axhline(1.0, color="grey", linewidth=0.8)
        ax.xaxis.set_major_locator(plt.MaxNLocator(integer=True))
        ax.set_title(f"failures: {pattern}")
        ax.set_xlabel("failed workers")
        ax.set_ylabel("iteration time / fault-free")
        ax.legend()
        ax.grid(alpha=0.3)
    fig.suptitle(args.title or "Iteration time as workers fail")
    return fig


def gantt(args, plt):
    trace = read_json(args.input)
    events = trace.get("traceEvents") if isinstance(trace, dict) else trace
    if not isinstance(events, list):
        fail(args.input, "expected a Chrome trace (an object with traceEvents, or a list)")
    names, tracks = {}, {}
    for e in events:
        if not isinstance(e, dict):
            continue
        if e.get("ph") == "M" and e.get("name") == "process_name":
            names[e.get("pid")] = str(e.get("args", {}).get("name", e.get("pid")))
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            tracks[(e.get("pid"), e.get("tid"))] = str(e.get("args", {}).get("name", ""))
    bars = []
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        if tracks.get((e.get("pid"), e.get("tid")), "compute") != "compute":
            continue
        try:
            start, length = float(e["ts"]), float(e["dur"])
        except (KeyError, TypeError, ValueError):
            fail(args.input, f"an X event without a numeric ts and dur: {json.dumps(e)[:80]}")
        bars.append((e.get("pid"), start, length, str(e.get("cat", "")), str(e.get("name", ""))))
    if not bars:
        fail(args.input, "no compute events (ph X on a compute track)")
    workers = sorted({b[0] for b in bars}, key=lambda p: (str(type(p)), p))
    row = {p: i for i, p in enumerate(workers)}
    scale, unit = (1e-3, "ms") if max(b[1] + b[2] for b in bars) < 1e7 else (1e-6, "s")
    fig, ax = plt.subplots(figsize=(12, 0.45 * len(workers) + 1.5))
    seen = set()
    for pid, start, length, cat, name in bars:
        colour = ACTION_COLOURS.get(cat, "#888888")
        label = cat if cat not in seen else None
        seen.add(cat)
        ax.barh(row[pid], length * scale, left=start * scale, height=0.8, color=colour,
                edgecolor="white", linewidth=0.4, label=label)
        if len(bars) <= 400:
            ax.text((start + length / 2) * scale, row[pid], name, ha="center", va="center",
                    fontsize=6, color="white")
    ax.set_yticks(range(len(workers)))
    ax.set_yticklabels([names.get(p, str(p)) for p in workers])
    ax.invert_yaxis()
    ax.set_xlabel(f"time ({unit})")
    ax.set_ylabel("worker")
    ax.set_title(args.title or "Schedule: compute actions per worker")
    ax.legend(title="action", loc="upper left", bbox_to_anchor=(1.005, 1), fontsize=8)
    return fig


def main(argv):
    parser = argparse.ArgumentParser(
        prog="tools/plot.py", description=__doc__.split("\n\n")[0],
        epilog="examples:\n" + "\n".join(line for line in __doc__.splitlines()
                                         if line.startswith("  python3")),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kind", choices=KINDS, help="which figure")
    parser.add_argument("input", help="the CSV or JSON a recycle subcommand wrote")
    parser.add_argument("-o", "--output", required=True, help="FILE.png or FILE.svg")
    parser.add_argument("--title", help="the figure's title (default: one naming what it shows)")
    parser.add_argument("--metric", help="study: the column to plot (default goodput)")
    # argparse's own errors: one line, exit 2, as the tool's.
    parser.error = lambda message: (_ for _ in ()).throw(InputProblem(message))
    try:
        args = parser.parse_args(argv)
        extension = os.path.splitext(args.output)[1].lower()
        if extension not in (".png", ".svg"):
            fail("--output", f"'{args.output}': expected a .png or .svg file")
        try:
            import matplotlib
            matplotlib.use("Agg")
            matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text in SVGs
            matplotlib.rcParams["svg.hashsalt"] = "recycle"  # the same SVG for the same input
            import matplotlib.pyplot as plt
        except ImportError:
            fail("tools/plot.py", f"matplotlib is not installed for {sys.executable} "
                 "(tools/install-deps.sh installs Debian's, for /usr/bin/python3)")
        fig = globals()[args.kind](args, plt)
        # Written whole or not at all: a temporary file in the same folder, then renamed.
        folder = os.path.dirname(os.path.abspath(args.output))
        try:
            handle, temporary = tempfile.mkstemp(dir=folder, suffix=extension)
        except OSError as e:
            fail(args.output, e.strerror or str(e))
        os.close(handle)
        try:
            metadata = {"Date": None} if extension == ".svg" else {}
            fig.savefig(temporary, dpi=100, bbox_inches="tight", metadata=metadata)
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(temporary, 0o666 & ~umask)
            os.replace(temporary, args.output)
        finally:
            if os.path.exists(temporary):
                os.remove(temporary)
    except InputProblem as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
