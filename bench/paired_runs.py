#!/usr/bin/env python3
"""Times two attngen-bench executables in turn, case by case, and reports the ratio of their times.

The machines this project runs on drift by 20-35% within minutes, so two binaries timed one after
the other compare the machine's moods as much as the code. Here each round runs the baseline, then
the candidate (in the opposite order every other round), each case in its own process, and takes
the ratio of the two medians of that round: candidate time / baseline time, below 1 when the
candidate is faster. The report gives each case's per-round ratios, their median and range, and in
how many rounds the candidate was faster. A change whose ratios straddle 1 is within the noise.

Usage: paired_runs.py BASELINE_BENCH CANDIDATE_BENCH [--rounds N] [--threads T] [--case NAME]...
The executables are run with --no-peers (the peers' times do not enter the ratio) and --json.
Exit status: 0, or 2 when a run fails or leaves no time for a case.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

from compare_runs import case_values


def timed_run(executable, case, threads, folder):
    """One process of `executable` on `case`: {case: seconds}."""
    path = os.path.join(folder, "run.json")
    if os.path.exists(path):
        os.remove(path)
    command = [executable, "--no-peers", "--json", path, "--case", case]
    if threads:
        command += ["--threads", str(threads)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}:\n{done.stdout}{done.stderr}")
    seconds = case_values(path, ("seconds_median",))
    if not seconds:
        raise RuntimeError(f"{' '.join(command)} reported no time for {case}")
    return seconds


def paired_ratios(baseline, candidate, cases, rounds, threads):
    """{case name: [(baseline seconds, candidate seconds) per round]}, the order alternating by round."""
    pairs = {}
    with tempfile.TemporaryDirectory() as folder:
        for case in cases:
            for number in range(rounds):
                order = (baseline, candidate) if number % 2 == 0 else (candidate, baseline)
                times = {executable: timed_run(executable, case, threads, folder) for executable in order}
                for name in times[baseline].keys() & times[candidate].keys():
                    pairs.setdefault(name, []).append((times[baseline][name], times[candidate][name]))
    return pairs


def report(pairs):
    """The report's lines: per case the medians of each binary, and the ratios' median and range."""
    lines = [f"{'case':<26} {'baseline ms':>12} {'candidate ms':>13} {'ratio':>6} {'range':>12} {'faster in':>10}"
             "  per round"]
    for name in sorted(pairs):
        rounds = pairs[name]
        ratios = [candidate / base for base, candidate in rounds]
        base_ms = statistics.median(base for base, _ in rounds) * 1e3
        candidate_ms = statistics.median(candidate for _, candidate in rounds) * 1e3
        spread = f"{min(ratios):.3f}-{max(ratios):.3f}"
        faster = f"{sum(r < 1 for r in ratios)} of {len(ratios)}"
        each = " ".join(f"{r:.3f}" for r in ratios)
        lines.append(f"{name:<26} {base_ms:>12.3f} {candidate_ms:>13.3f} {statistics.median(ratios):>6.3f} "
                     f"{spread:>12} {faster:>10}  {each}")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("baseline", help="the attngen-bench executable to compare against")
    parser.add_argument("candidate", help="the attngen-bench executable being measured")
    parser.add_argument("--rounds", type=int, default=5, help="processes of each binary per case (default 5)")
    parser.add_argument("--threads", type=int, default=0, help="threads per run (default: the bench's own)")
    parser.add_argument("--case", action="append", required=True, help="a case to time; repeat for several")
    args = parser.parse_args()
    if args.rounds < 1:
        print("paired_runs.py: --rounds must be at least 1", file=sys.stderr)
        return 2
    try:
        pairs = paired_ratios(args.baseline, args.candidate, args.case, args.rounds, args.threads)
    except (OSError, ValueError, RuntimeError) as error:
        print(f"paired_runs.py: {error}", file=sys.stderr)
        return 2
    print(f"time of {args.candidate} / time of {args.baseline}, {args.rounds} rounds in turn "
          "(below 1: the candidate is faster)")
    print("\n".join(report(pairs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
