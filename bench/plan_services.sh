#!/usr/bin/env bash
# A plan of 50 services (40 classic classifiers and 10 Llama 3.1 8B chat services at different
# rates, generated here) on one thread against every core, whole process: prints the wall time
# of each and checks that the answer is the same. Target: 50 services <= 8 s on 2 cores.
#   bench/plan_services.sh BUILD_FOLDER
set -euo pipefail
binary=${1:-build}/gpuwise
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
spec=$scratch/fifty.yaml
{
  echo "name: fifty services"
  echo "models:"
  echo "  classifier: {params: 110e6, service_time: {accelerator: T4, batch_ms: {1: 50, 8: 58, 16: 70, 32: 92, 64: 140}}}"
  echo "  chat-8b: {preset: llama-3.1-8b, precision: bf16}"
  echo "services:"
  for i in $(seq 0 49); do
    if (( i % 5 == 4 )); then
      echo "  - {name: chat$i, model: chat-8b, traffic: {rps: {average: $((1 + i % 7)), peak: $((2 + i % 7))}},"
      echo "     tokens: {input: {mean: 600, p99: 3000}, output: {mean: 200, p99: 800}}, slo: {ttft_p99_s: 2.0, tpot_p99_s: 0.1}}"
    else
      echo "  - {name: svc$i, model: classifier, traffic: {rps: {average: $((20 + i * 3)), peak: $((40 + i * 6))}}, slo: {latency_p99_s: 0.5}}"
    fi
  done
  echo "constraints: {clouds: [aws, gcp], pricing: [on-demand]}"
} > "$spec"
cores=$(nproc)
seconds() { local start end; start=$(date +%s.%N); "$@"; end=$(date +%s.%N); awk -v a="$start" -v b="$end" 'BEGIN { print b - a }'; }
one=$(seconds "$binary" plan "$spec" -j 1 --format json -o "$scratch/one.json" -q)
all=$(seconds "$binary" plan "$spec" -j 0 --format json -o "$scratch/all.json" -q)
cmp -s "$scratch/one.json" "$scratch/all.json" || { echo "plan_services: -j 1 and -j 0 plans differ" >&2; exit 1; }
printf '50-service plan (with simulation): %.2f s on 1 thread, %.2f s on %d (%.2f of it); target <= 8 s on 2 cores\n' \
  "$one" "$all" "$cores" "$(awk -v a="$all" -v b="$one" 'BEGIN { print a / b }')"
