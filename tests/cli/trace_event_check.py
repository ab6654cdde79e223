"""Checks a Chrome trace against the Trace Event Format's documented fields (the format the
Perfetto UI and chrome://tracing read): the JSON Object Format ({"traceEvents": [...]}); each
event's `ph` one the format defines; complete events (X) with a name, numeric ts >= 0 and dur >= 0,
and integer pid and tid; instant events (i) with a scope s of g, p or t; metadata events (M)
naming processes and threads with the args the format gives them; flow events (s, t, f) with an
id, each id started once and finished once; and every thread that has events named by a
thread_name event. Prints the counts it checked.

  trace_event_check.py FILE
"""
import json
import sys

PHASES = set("BEXiIMCsftbnePONDcRrv")
METADATA = {"process_name": "name", "thread_name": "name", "process_sort_index": "sort_index",
            "thread_sort_index": "sort_index", "process_labels": "labels"}


def number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def main(path):
    with open(path, encoding="utf-8") as f:
        root = json.load(f)
    assert isinstance(root, dict) and isinstance(root.get("traceEvents"), list), "JSON Object Format"
    counts, named, used, flows = {}, set(), set(), {}
    for k, e in enumerate(root["traceEvents"]):
        where = f"event {k}: {json.dumps(e)[:120]}"
        assert isinstance(e, dict), where
        ph = e.get("ph")
        assert ph in PHASES, where
        counts[ph] = counts.get(ph, 0) + 1
        assert isinstance(e.get("name"), str) and e["name"], where
        assert isinstance(e.get("pid"), int) and isinstance(e.get("tid"), int), where
        if ph != "M":
            assert number(e.get("ts")) and e["ts"] >= 0, where
            used.add((e["pid"], e["tid"]))
        if ph == "X":
            assert number(e.get("dur")) and e["dur"] >= 0, where
        if ph in "iI":
            assert e.get("s", "t") in ("g", "p", "t"), where
        if ph == "M":
            key = METADATA.get(e["name"])
            assert key is not None and key in e.get("args", {}), where
            if e["name"] == "thread_name":
                named.add((e["pid"], e["tid"]))
        if ph in "stf":
            assert "id" in e, where
            flows.setdefault(e["id"], []).append(ph)
        if "args" in e:
            assert isinstance(e["args"], dict), where
    for flow, phases in flows.items():
        assert phases.count("s") == 1 and phases.count("f") == 1, (flow, phases)
    unnamed = sorted(used - named)
    assert not unnamed, f"threads with events but no thread_name: {unnamed[:5]}"
    print("trace ok " + " ".join(f"{ph}={counts[ph]}" for ph in sorted(counts)))


if __name__ == "__main__":
    main(sys.argv[1])
