#!/usr/bin/env python3
"""Specification of paired_runs.py, run by ctest: which ratio it reports, the order of the runs, errors."""
import os
import stat
import subprocess
import sys
import tempfile
import textwrap
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "paired_runs.py")

# A stand-in for attngen-bench: writes one JSON row per case (decode_paged: one per kv_dtype) whose
# seconds_median is this executable's SECONDS, and appends its name to the log of runs.
FAKE_BENCH = textwrap.dedent("""\
    #!{python}
    import json, sys
    args = sys.argv[1:]
    if {fails}:
        print("no such case", file=sys.stderr)
        sys.exit(1)
    json_path, case = args[args.index("--json") + 1], args[args.index("--case") + 1]
    with open({log!r}, "a") as log:
        log.write({name!r} + " " + " ".join(args) + "\\n")
    with open(json_path, "w") as out:
        for kv_dtype in (["f32", "int8"] if case == "decode_paged" else [None]):
            row = {{"case": case, "seconds_median": {seconds} * (0.5 if kv_dtype == "int8" else 1)}}
            if kv_dtype:
                row["kv_dtype"] = kv_dtype
            out.write(json.dumps(row) + "\\n")
    """)


class PairedRuns(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        self.log = os.path.join(self.folder.name, "runs.log")

    def tearDown(self):
        self.folder.cleanup()

    def fake_bench(self, name, seconds, fails=False):
        path = os.path.join(self.folder.name, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(FAKE_BENCH.format(python=sys.executable, fails=fails, log=self.log, name=name, seconds=seconds))
        os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
        return path

    def run_script(self, *arguments):
        done = subprocess.run([sys.executable, SCRIPT, *arguments], capture_output=True, text=True)
        return done.returncode, done.stdout + done.stderr

    def line_of(self, output, case):
        return next(line for line in output.splitlines() if line.startswith(case + " "))

    def report_line(self, baseline_seconds, candidate_seconds, rounds, case):
        """The report's line for `case` after `rounds` rounds of stand-ins taking these times."""
        baseline, candidate = self.fake_bench("old", baseline_seconds), self.fake_bench("new", candidate_seconds)
        status, output = self.run_script(baseline, candidate, "--rounds", str(rounds), "--case", case)
        self.assertEqual(status, 0, output)
        return self.line_of(output, case)

    def test_the_ratio_is_the_candidates_time_over_the_baselines(self):
        line = self.report_line(0.002, 0.0015, 3, "mha_small")
        self.assertIn(" 0.750 ", line)
        self.assertIn("3 of 3", line)

    def test_a_slower_candidate_is_faster_in_no_round(self):
        line = self.report_line(0.001, 0.002, 2, "prefill_gqa")
        self.assertIn(" 2.000 ", line)
        self.assertIn("0 of 2", line)

    def test_each_kv_dtype_row_is_paired_on_its_own(self):
        baseline, candidate = self.fake_bench("old", 0.04), self.fake_bench("new", 0.03)
        status, output = self.run_script(baseline, candidate, "--rounds", "1", "--case", "decode_paged")
        self.assertEqual(status, 0, output)
        self.assertIn("40.000", self.line_of(output, "decode_paged f32"))
        self.assertIn("20.000", self.line_of(output, "decode_paged int8"))

    def test_the_order_alternates_by_round_without_peers(self):
        baseline, candidate = self.fake_bench("old", 0.001), self.fake_bench("new", 0.001)
        status, output = self.run_script(baseline, candidate, "--rounds", "3", "--threads", "2", "--case", "x")
        self.assertEqual(status, 0, output)
        with open(self.log, encoding="utf-8") as log:
            runs = log.read().splitlines()
        self.assertEqual([run.split()[0] for run in runs], ["old", "new", "new", "old", "old", "new"])
        self.assertTrue(all("--no-peers" in run and "--threads 2" in run for run in runs))

    def test_a_failing_run_exits_2_and_shows_its_output(self):
        baseline, candidate = self.fake_bench("old", 0.001), self.fake_bench("new", 0.001, fails=True)
        status, output = self.run_script(baseline, candidate, "--case", "mha_small")
        self.assertEqual(status, 2)
        self.assertIn("no such case", output)

    def test_zero_rounds_are_refused(self):
        baseline, candidate = self.fake_bench("old", 0.001), self.fake_bench("new", 0.001)
        status, output = self.run_script(baseline, candidate, "--rounds", "0", "--case", "mha_small")
        self.assertEqual(status, 2)
        self.assertIn("--rounds", output)


if __name__ == "__main__":
    unittest.main()
