#pragma once
// The test programs' Catch2 session (catch_session.cpp), for mains that do something before it runs.

namespace attngen::testing {

/// Runs the test cases the command line selects and returns the number that failed (capped by
/// Catch2), or Catch2's status for a bad command line; `report_passes` false keeps passing
/// assertions out of the output even under -s.
int run_test_session(int argc, char** argv, bool report_passes = true);

}  // namespace attngen::testing
