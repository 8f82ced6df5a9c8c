#!/usr/bin/env bash
# Side by side: gpuwise's telemetry reader and DuckDB (single-threaded, via @duckdb/node-api from
# npm with the lockfile in bench/duckdb) running the same per-series aggregation on the same
# generated nvidia-smi CSV and dcgm-exporter text. Prints MB/s for both and the ratio.
set -euo pipefail
build=${1:-build}
samples=${2:-10000000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
(cd "$(dirname "$0")/duckdb" && npm install --no-audit --no-fund --silent >/dev/null)  # follows package-lock.json
out=$(taskset -c 0 "$build/gpuwise_telemetry_speed" "$samples" "$dir")
echo "$out"
for format in nvidia-smi dcgm; do
  file=$dir/smi.csv
  [ "$format" = dcgm ] && file=$dir/dcgm.txt
  mb=$(python3 -c "import os; print(os.path.getsize('$file') / 1e6)")
  read -r series seconds < <(cd "$(dirname "$0")/duckdb" && taskset -c 0 node aggregate.mjs "$format" "$file")
  label=$format
  [ "$format" = dcgm ] && label=dcgm
  ours=$(echo "$out" | awk -v l="$label" '$1 == l { for (i = 1; i <= NF; ++i) if ($i == "MB/s,") print $(i - 1) }')
  duck=$(python3 -c "print(f'{$mb / $seconds:.1f}')")
  ratio=$(python3 -c "print(f'{$ours / ($mb / $seconds):.2f}')")
  echo "$format: gpuwise $ours MB/s, DuckDB $duck MB/s ($series series in $seconds s): gpuwise/DuckDB = ${ratio}x"
done
