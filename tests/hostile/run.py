#!/usr/bin/env python3
"""Runs the hostile-input corpus (cases.txt) against the recycle program.

Each case must exit with one of its allowed codes within the time limit, never die of a signal or
print "internal error"; exit 2 must print exactly one line starting with "error:" on stderr, which
names a flag or a file (not "error: schedule:"); and a case that does not exit 0 must leave nothing
behind in its output directory. Prints every case that
breaks a rule and exits 1 if any does.

usage: run.py RECYCLE CASES FILES DATA [--timeout SECONDS]
"""
import os
import shlex
import subprocess
import sys
import tempfile


def main():
    args = sys.argv[1:]
    timeout = 60.0
    if "--timeout" in args:
        i = args.index("--timeout")
        timeout = float(args[i + 1])
        del args[i : i + 2]
    recycle, cases_path, files, data = args
    failures = []
    count = 0
    with open(cases_path, encoding="utf-8") as f:
        lines = list(enumerate(f, start=1))
    for number, raw in lines:
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        codes_text, _, command = line.partition("|")
        limit = timeout
        if "@" in codes_text:
            codes_text, _, seconds = codes_text.partition("@")
            limit = float(seconds)
        codes = {int(c) for c in codes_text.split(",")}
        count += 1
        with tempfile.TemporaryDirectory() as out:
            words = [
                w.replace("{F}", files).replace("{D}", data).replace("{O}", out)
                for w in shlex.split(command)
            ]
            where = f"{cases_path}:{number}: recycle {command.strip()}"
            try:
                run = subprocess.run(
                    [recycle] + words,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    timeout=limit,
                )
            except subprocess.TimeoutExpired:
                failures.append(f"{where}\n  still running after {limit:g} s")
                continue
            err = run.stderr.decode("utf-8", "replace")
            problems = []
            if run.returncode < 0:
                problems.append(f"killed by signal {-run.returncode}")
            elif run.returncode not in codes:
                problems.append(f"exit {run.returncode}, allowed {sorted(codes)}")
            if "internal error" in err:
                problems.append("printed an internal error")
            if run.returncode == 2:
                errors = [l for l in err.splitlines() if l.startswith("error:")]
                if len(errors) != 1:
                    problems.append(f"{len(errors)} 'error:' lines on stderr, expected 1")
                # An error names what the user gave (a flag, a file), never the placeholder of
                # a schedule made from flags (planner::kUnnamedSchedule).
                if any(l.startswith("error: schedule:") for l in errors):
                    problems.append("the error names no flag or file ('error: schedule:')")
            if run.returncode != 0:
                left = sorted(os.listdir(out))
                if left:
                    problems.append(f"left {left} behind after failing")
            if problems:
                tail = "\n    ".join(err.strip().splitlines()[-3:])
                failures.append(f"{where}\n  " + "; ".join(problems) + f"\n    {tail}")
    for f in failures:
        print(f)
    print(f"{count - len(failures)} of {count} hostile cases pass")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
