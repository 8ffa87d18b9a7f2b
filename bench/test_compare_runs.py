#!/usr/bin/env python3
"""Specification of compare_runs.py, run by ctest: which cases it flags, by which field, and its exit status."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "compare_runs.py")


def run(baseline_rows, current_rows, *options):
    """compare_runs.py over two JSON files of these rows: (exit status, stdout + stderr)."""
    with tempfile.TemporaryDirectory() as folder:
        paths = []
        for name, rows in (("baseline.json", baseline_rows), ("current.json", current_rows)):
            path = os.path.join(folder, name)
            with open(path, "w", encoding="utf-8") as f:
                for row in rows:
                    f.write(row if isinstance(row, str) else json.dumps(row))
                    f.write("\n")
            paths.append(path)
        done = subprocess.run([sys.executable, SCRIPT, *paths, *options], capture_output=True, text=True)
        return done.returncode, done.stdout + done.stderr


def line_of(output, case):
    return next(line for line in output.splitlines() if line.startswith(case + " "))


class CompareRuns(unittest.TestCase):
    def assert_flagged(self, status, output, case):
        """The run exited 1 and `case`'s line carries the flag."""
        self.assertEqual(status, 1)
        self.assertIn("SLOWER", line_of(output, case))

    def test_a_case_at_half_its_speed_is_flagged_and_exits_1(self):
        status, output = run([{"case": "prefill_chunk", "ratio_to_peak": 0.75}],
                             [{"case": "prefill_chunk", "ratio_to_peak": 0.42}])
        self.assert_flagged(status, output, "prefill_chunk")

    def test_a_case_10_percent_slower_is_within_the_noise(self):
        status, output = run([{"case": "mha_small", "ratio_to_peak": 0.14}],
                             [{"case": "mha_small", "ratio_to_peak": 0.126}])
        self.assertEqual(status, 0)
        self.assertNotIn("SLOWER", output)

    def test_the_threshold_option_tightens_the_flag(self):
        status, output = run([{"case": "mha_small", "ratio_to_peak": 0.14}],
                             [{"case": "mha_small", "ratio_to_peak": 0.126}], "--threshold", "0.05")
        self.assert_flagged(status, output, "mha_small")

    def test_decode_rows_compare_per_kv_dtype(self):
        status, output = run([{"case": "decode_paged", "kv_dtype": "f32", "ratio_to_peak": 0.13},
                              {"case": "decode_paged", "kv_dtype": "int8", "ratio_to_peak": 0.22}],
                             [{"case": "decode_paged", "kv_dtype": "f32", "ratio_to_peak": 0.06},
                              {"case": "decode_paged", "kv_dtype": "int8", "ratio_to_peak": 0.23}])
        self.assert_flagged(status, output, "decode_paged f32")
        self.assertNotIn("SLOWER", line_of(output, "decode_paged int8"))

    def test_training_cases_compare_their_backward(self):
        status, output = run([{"case": "train_mha", "backward_ratio_to_peak": 0.63}],
                             [{"case": "train_mha", "backward_ratio_to_peak": 0.30}])
        self.assert_flagged(status, output, "train_mha")

    def test_cases_in_one_run_only_are_listed_not_flagged(self):
        status, output = run([{"case": "long_causal", "ratio_to_peak": 0.68}],
                             [{"case": "prefill_gqa", "ratio_to_peak": 0.79}])
        self.assertEqual(status, 0)
        self.assertIn("not run now", line_of(output, "long_causal"))
        self.assertIn("not in the baseline", line_of(output, "prefill_gqa"))

    def test_a_case_without_a_speed_is_skipped(self):
        status, output = run([{"case": "prefill_gqa_f16", "ratio_to_peak": None}],
                             [{"case": "prefill_gqa_f16", "ratio_to_peak": None}])
        self.assertEqual(status, 0)
        self.assertNotIn("prefill_gqa_f16", output)

    def test_a_line_that_is_not_json_is_named_and_exits_2(self):
        status, output = run(["{\"case\": \"mha_small\""], [{"case": "mha_small", "ratio_to_peak": 0.1}])
        self.assertEqual(status, 2)
        self.assertIn("baseline.json:1", output)


if __name__ == "__main__":
    unittest.main()
