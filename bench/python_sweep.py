#!/usr/bin/env python3
"""gpuwise.sweep on every core against the same 64 simulations run one by one with
gpuwise.simulate, in one process on the Azure conversation trace: prints the wall time of each
and their ratio, and exits 1 when the sweep takes more than 0.65 of the sum of single runs on a
machine with 2 or more cores (ideal: 1 / cores).

    PYTHONPATH=build/python python3 bench/python_sweep.py [REQUESTS]
"""
import os
import sys
import time

import gpuwise

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
spec_path = os.path.join(root, "examples", "chat-azure.yaml")
requests = int(sys.argv[1]) if len(sys.argv) > 1 else 4000
spec, _ = gpuwise.specs.to_dict(spec_path)
spec["services"][0]["deployment"] = {"replicas": 1, "accelerator": "A100-80GB", "batching": "continuous"}
grid = {
    "services.chat.deployment.accelerator": ["L40S", "A100-80GB", "H100", "A10G"],
    "services.chat.deployment.max_batch": [8, 16, 32, 64, 128, 256, 512, 1024],
    "services.chat.deployment.replicas": [1, 2],
}
cores = os.cpu_count() or 1


def timed(threads):
    start = time.perf_counter()
    table = gpuwise.sweep(spec, grid, path=spec_path, requests=requests, threads=threads)
    return time.perf_counter() - start, table


def single_runs():
    """The same configurations, one gpuwise.simulate call each."""
    import copy
    import itertools
    start = time.perf_counter()
    results = []
    for combo in itertools.product(*grid.values()):
        config = copy.deepcopy(spec)
        for key, value in zip(grid, combo):
            gpuwise.specs.set_path(config, key, value)
        results.append(dict(gpuwise.simulate(config, path=spec_path, requests=requests)))
    return time.perf_counter() - start, results


timed(1)  # warm: the page cache and the catalog
single_s, singles = single_runs()
serial_s, serial = timed(1)
parallel_s, parallel = timed(cores)
assert list(serial) == list(parallel), "the parallel sweep's figures differ from the serial ones"
assert singles == parallel.results, "the sweep's answers differ from single gpuwise.simulate calls"
configs = len(parallel.results)
ratio = parallel_s / single_s
print(f"sweep of {configs} configurations x {requests} requests of the Azure conversation trace")
print(f"  single gpuwise.simulate calls: {single_s:.2f} s ({single_s / configs * 1000:.0f} ms each)")
print(f"  sweep, 1 thread:               {serial_s:.2f} s")
print(f"  sweep, {cores} threads:              {parallel_s:.2f} s, {ratio:.2f} of the single runs (ideal {1 / cores:.2f})")
if cores >= 2 and ratio > 0.65:
    print("python_sweep: the sweep is not using the cores (budget 0.65 of the single runs)", file=sys.stderr)
    sys.exit(1)
