"""The CPU peers' timing: the median of timed calls after a warm-up, at least 3 and about a second in
all, as attngen-bench's (bench/timing.hpp). `call(n)` is the n-th call."""
import statistics
import time


def median_seconds(call):
    call(0)
    seconds = []
    n = 1
    while n <= 100 and (len(seconds) < 3 or sum(seconds) < 1.0):
        start = time.perf_counter()
        call(n)
        seconds.append(time.perf_counter() - start)
        n += 1
    return statistics.median(seconds)
