#!/usr/bin/env bash
# Side by side, whole process against whole process: `gpuwise audit FILE --format json` (read,
# aggregate, findings, JSON) and DuckDB (node + @duckdb/node-api from npm, the lockfile in
# bench/duckdb: start, read, the same per-series aggregation) on the same files: the generated
# nvidia-smi CSV, dcgm-exporter text and Alibaba-layout long CSV (2,860 series of hashed ids),
# and the real Alibaba GenAI pods' duty cycle (examples/telemetry, 143 pods) replicated 20 times
# under hashed ids (2,860 series). DuckDB runs its best query per format (split_part, no regular
# expressions) on 1 and on 2 threads; gpuwise reads one file on one thread. Each figure is the
# median wall time of 5 runs, the tools interleaved. Usage: bench/telemetry_vs_duckdb.sh [BUILD] [SAMPLES]
set -euo pipefail
build=$(realpath "${1:-build}")
samples=${2:-3000000}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
(cd "$here/duckdb" && npm install --no-audit --no-fund --silent >/dev/null)  # follows package-lock.json
taskset -c 0 "$build/gpuwise_telemetry_speed" "$samples" "$dir"  # the readers in process, MB/s and bytes per series
tar xzf "$here/../examples/telemetry/pod_gpu_duty_cycle_anon.tar.gz" -C "$dir"
python3 - "$dir/pod_gpu_duty_cycle_anon.csv" "$dir/alibaba_x20.csv" <<'PY'
import hashlib, sys
rows = open(sys.argv[1]).read().splitlines()
with open(sys.argv[2], "w") as out:
    out.write(rows[0] + "\n")
    for line in rows[1:]:
        value, time, pod = line.split(",")
        for copy in range(20):
            out.write(f"{value},{time},{hashlib.md5(f'{pod}-{copy}'.encode()).hexdigest()}\n")
PY
columns="--columns timestamp=timestamp_anon,series=container_ip,value=value"
python3 - "$build/gpuwise" "$here/duckdb" "$dir" "$columns" <<'PY'
import os, statistics, subprocess, sys, time
gpuwise, duckdb, folder, columns = sys.argv[1:5]
cases = [("nvidia-smi", "smi.csv", []), ("dcgm", "dcgm.txt", []),
         ("long-csv", "long.csv", columns.split()), ("long-csv", "alibaba_x20.csv", columns.split())]
def wall(command, cwd=None):
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start
print(f"{'file':<16} {'MB':>7} {'gpuwise s':>10} {'MB/s':>7} {'DuckDB 1t s':>12} {'MB/s':>7} {'ratio':>6} {'DuckDB 2t s':>12} {'ratio':>6}")
for fmt, name, extra in cases:
    path = os.path.join(folder, name)
    mb = os.path.getsize(path) / 1e6
    target = path + "@gpu_util_pct" if fmt == "long-csv" else path
    ours, one, two = [], [], []
    for _ in range(5):
        ours.append(wall(["taskset", "-c", "0", gpuwise, "audit", target, *extra, "--format", "json"]))
        one.append(wall(["taskset", "-c", "0", "node", "aggregate.mjs", fmt, path, "1"], cwd=duckdb))
        two.append(wall(["node", "aggregate.mjs", fmt, path, "2"], cwd=duckdb))
    g, d1, d2 = (statistics.median(x) for x in (ours, one, two))
    print(f"{name:<16} {mb:>7.1f} {g:>10.3f} {mb / g:>7.1f} {d1:>12.3f} {mb / d1:>7.1f} {d1 / g:>5.2f}x {d2:>12.3f} {d2 / g:>5.2f}x")
print("ratio: DuckDB's wall time over gpuwise's (above 1: gpuwise is faster); whole processes, medians of 5")
PY
