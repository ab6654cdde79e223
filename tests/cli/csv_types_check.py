"""Loads a CSV recycle wrote in pandas ('#' lines skipped) and checks each named column's type:
int (whole numbers), number (int or float), str, bool (pandas reads true/false as bool), event
(down or up). Prints the rows and columns it read.

  csv_types_check.py FILE COLUMN:TYPE ...
"""
import sys

import pandas


def main(path, *specs):
    frame = pandas.read_csv(path, comment="#", keep_default_na=False)
    assert len(frame) > 0, "no rows"
    for spec in specs:
        column, kind = spec.rsplit(":", 1)
        assert column in frame.columns, (column, list(frame.columns))
        dtype = frame[column].dtype
        if kind == "int":
            assert dtype.kind in "iu", (column, dtype)
        elif kind == "number":
            assert dtype.kind in "iuf", (column, dtype)
        elif kind == "bool":
            assert dtype.kind == "b", (column, dtype)
        elif kind == "str":
            assert dtype.kind == "O", (column, dtype)
        elif kind == "event":
            assert set(frame[column]) <= {"down", "up"}, (column, set(frame[column]))
        else:
            raise AssertionError(f"unknown type {kind}")
    print(f"csv ok {len(frame)} rows {len(frame.columns)} columns")


if __name__ == "__main__":
    main(*sys.argv[1:])
