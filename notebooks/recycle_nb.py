"""The one helper the notebooks share: runs a recycle subcommand and returns what it wrote.

    import recycle_nb as rc
    report = rc.json("simulate", "--schedule", "zb-h1", "--pp", "4", "--microbatches", "8",
                     "--costs", "1,1,1")                       # --json output, as a dict
    frame = rc.csv("study", "--job", "job.json", "--sweep", "cluster.spares=0,4", ...)  # a DataFrame
    rc.figure("gantt", trace_file)                            # tools/plot.py's figure, inline

The binary is $RECYCLE, else build/tools/recycle (a relative path from the repository root). A refusal (exit
code 2) raises RecycleError with recycle's one `error:` line; nothing is cached between calls, so
a notebook runs top to bottom with no hidden state.
"""

import importlib.util
import io
import json as _json
import os
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# ../shared beside the repository (public traces), or $RECYCLE_SHARED.
SHARED = os.environ.get("RECYCLE_SHARED", os.path.join(os.path.dirname(ROOT), "shared"))


class RecycleError(RuntimeError):
    """recycle refused the input (its error line is the message) or failed."""


def binary():
    path = os.path.join(ROOT, os.environ.get("RECYCLE", os.path.join("build", "tools", "recycle")))
    if not os.access(path, os.X_OK):
        raise RecycleError(f"{path}: not built (make, or set RECYCLE to the recycle binary)")
    return path


def run(*args):
    """recycle ARGS...; returns its stdout (str)."""
    done = subprocess.run([binary(), *map(str, args)], capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        message = done.stderr.strip().splitlines()
        raise RecycleError(message[-1] if message else f"recycle exited {done.returncode}")
    return done.stdout


def json(*args):
    """recycle ARGS... --json, parsed."""
    return _json.loads(run(*args, "--json"))


def csv(*args):
    """recycle ARGS... -o FILE, the CSV read as a pandas DataFrame ('#' lines skipped)."""
    import pandas

    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "out.csv")
        run(*args, "-o", path)
        return pandas.read_csv(path, comment="#")


def read_csv(path):
    """A CSV recycle wrote (replay --timeline, study), '#' lines skipped."""
    import pandas

    return pandas.read_csv(path, comment="#")


def _plot_module():
    spec = importlib.util.spec_from_file_location("recycle_plot",
                                                  os.path.join(ROOT, "tools", "plot.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def figure(kind, input_path, title=None, metric=None):
    """The figure tools/plot.py draws for `kind` from `input_path` (a matplotlib Figure): the same
    figure as the command line's, one definition."""
    import matplotlib.pyplot as plt

    plot = _plot_module()
    args = type("Args", (), {"input": str(input_path), "title": title, "metric": metric})()
    try:
        return getattr(plot, kind)(args, plt)
    except plot.InputProblem as e:
        raise RecycleError(f"error: {e}") from None


def scratch(name):
    """A path for an intermediate file: under $RECYCLE_SCRATCH, else out/notebooks/ (git ignores
    out/)."""
    folder = os.environ.get("RECYCLE_SCRATCH", os.path.join(ROOT, "out", "notebooks"))
    os.makedirs(folder, exist_ok=True)
    return os.path.join(folder, name)


def shared(*parts):
    """A file of ../shared (public traces), or None when it is absent."""
    path = os.path.join(SHARED, *parts)
    return path if os.path.exists(path) else None
