"""What the CPU peer scripts share: PyTorch, or exit code 3 (attngen-bench reports a missing peer),
and their timing, as attngen-bench's (bench/timing.hpp)."""
import statistics
import sys
import time


def require_torch():
    """The torch module; exits with code 3 when it is not importable."""
    try:
        import torch
    except ImportError:
        print("missing: torch is not importable by " + sys.executable)
        sys.exit(3)
    return torch


# As bench/timing.hpp's most_timed_calls: a second of calls however short the call.
MOST_TIMED_CALLS = 100000


def median_seconds(call):
    """Median of timed calls after a warm-up: at least 3 and about a second in all; `call(n)` is the
    n-th call."""
    call(0)
    seconds = []
    total = 0.0
    n = 1
    while n <= MOST_TIMED_CALLS and (len(seconds) < 3 or total < 1.0):
        start = time.perf_counter()
        call(n)
        seconds.append(time.perf_counter() - start)
        total += seconds[-1]
        n += 1
    return statistics.median(seconds)
