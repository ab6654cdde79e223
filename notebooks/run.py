"""Executes notebooks top to bottom, headlessly (nbclient), as `make test` does; exits 1 naming
the first cell that raised. Outputs are not written back: the committed notebooks stay stripped
(--keep DIR writes the executed copies there, to read).

  /usr/bin/python3 notebooks/run.py notebooks/schedules.ipynb [...] [--keep DIR]
"""
import os
import sys
import time

import nbclient
import nbformat


def main(paths):
    keep = None
    if "--keep" in paths:
        at = paths.index("--keep")
        keep = paths[at + 1]
        paths = paths[:at] + paths[at + 2:]
    here = os.path.dirname(os.path.abspath(__file__))
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")  # the kernel's debugger notice
    if "RECYCLE" in os.environ:  # the kernel runs in notebooks/: a path from here, made absolute
        os.environ["RECYCLE"] = os.path.abspath(os.environ["RECYCLE"])
    for path in paths:
        notebook = nbformat.read(path, as_version=4)
        start = time.monotonic()
        client = nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3",
                                         resources={"metadata": {"path": here}})
        try:
            client.execute()
        except nbclient.exceptions.CellExecutionError as e:
            print(f"error: {path}: {str(e).strip().splitlines()[-1]}", file=sys.stderr)
            return 1
        print(f"{path}: {len(notebook.cells)} cells ran in {time.monotonic() - start:.1f} s")
        if keep:
            os.makedirs(keep, exist_ok=True)
            nbformat.write(notebook, os.path.join(keep, os.path.basename(path)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
