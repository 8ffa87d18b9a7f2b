#!/usr/bin/env python3
"""Compares two attngen-bench JSON files (--json) case by case and flags the cases that got slower.

Each case is compared by its speed against its own run's measured fp32 peak (`ratio_to_peak`, the
backward's for training cases), so runs on different days or machines of the same kind compare.
The machines this project runs on move such ratios by up to about 20% between runs; a drop past
--threshold (default 0.25) is flagged. Exit status: 0 when none is, 1 when some case got slower,
2 for unreadable input.

Usage: compare_runs.py BASELINE.json CURRENT.json [--threshold 0.25]
"""
import argparse
import json
import math
import sys

# The speed field each kind of case reports against the peak, in the order looked for.
SPEED_FIELDS = ("ratio_to_peak", "backward_ratio_to_peak")


def case_values(path, fields):
    """{case name (with its kv_dtype where it has one): the first of `fields` its row holds as a
    finite positive number} of one attngen-bench JSON file (also read by paired_runs.py)."""
    values = {}
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}:{number}: not a JSON line ({error.msg})") from None
            name = row.get("case")
            if name is None:
                raise ValueError(f"{path}:{number}: no \"case\" field")
            if "kv_dtype" in row:
                name += " " + row["kv_dtype"]
            value = next((row[f] for f in fields if isinstance(row.get(f), (int, float))), None)
            if value is not None and math.isfinite(value) and value > 0:
                values[name] = value
    return values


def case_speeds(path):
    """{case name: speed against the peak} of one JSON file."""
    return case_values(path, SPEED_FIELDS)


def compare(baseline, current, threshold):
    """The report's lines, and whether some case got slower by more than `threshold`."""
    lines = [f"{'case':<28} {'baseline':>9} {'now':>9} {'now/base':>9}"]
    slower = False
    for name in sorted(baseline.keys() | current.keys()):
        if name not in current:
            lines.append(f"{name:<28} {baseline[name]:>9.3f} {'-':>9} {'':>9}  not run now")
            continue
        if name not in baseline:
            lines.append(f"{name:<28} {'-':>9} {current[name]:>9.3f} {'':>9}  not in the baseline")
            continue
        ratio = current[name] / baseline[name]
        flag = ""
        if ratio < 1 - threshold:
            flag = "  SLOWER"
            slower = True
        lines.append(f"{name:<28} {baseline[name]:>9.3f} {current[name]:>9.3f} {ratio:>9.2f}{flag}")
    return lines, slower


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("baseline")
    parser.add_argument("current")
    parser.add_argument("--threshold", type=float, default=0.25,
                        help="flag a case whose speed fell by more than this fraction (default 0.25)")
    args = parser.parse_args()
    if not 0 < args.threshold < 1:
        print("compare_runs.py: --threshold must lie between 0 and 1", file=sys.stderr)
        return 2
    try:
        baseline, current = case_speeds(args.baseline), case_speeds(args.current)
    except (OSError, ValueError) as error:
        print(f"compare_runs.py: {error}", file=sys.stderr)
        return 2
    lines, slower = compare(baseline, current, args.threshold)
    print("speed against each run's fp32 peak, " + args.current + " against " + args.baseline)
    print("\n".join(lines))
    if slower:
        print(f"compare_runs.py: some cases are more than {args.threshold:.0%} slower than the baseline")
    return 1 if slower else 0


if __name__ == "__main__":
    sys.exit(main())
