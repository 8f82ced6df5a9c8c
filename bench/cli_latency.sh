#!/usr/bin/env bash
# Wall time of whole gpuwise commands (process start, embedded catalog load, answer), the
# figure a user feels, beside /bin/true's (what starting any process costs here). Prints the
# median of 11 runs per command in milliseconds. Target: start-up (--version) <= 10 ms.
set -euo pipefail
gpuwise=${1:-build/gpuwise}
measure() {
  local times=()
  for _ in $(seq 11); do
    local start end
    start=$(date +%s%N)
    "$@" >/dev/null 2>&1 || true
    end=$(date +%s%N)
    times+=($(( (end - start) / 1000 )))
  done
  local median
  median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n 6p)
  printf '%8.1f ms  %s\n' "$(echo "$median / 1000" | bc -l)" "$*"
}
measure /bin/true
measure "$gpuwise" --version
measure "$gpuwise" catalog offerings --min-vram-gib 80 --geo europe --limit 1
measure "$gpuwise" fit llama-3.1-70b --precision bf16 --context 8192 --batch 16
measure "$gpuwise" fit deepseek-v3 --precision fp8 --format json
measure "$gpuwise" fit llama-3.1-8b --train --zero 3 --dp 64
measure "$gpuwise" plan examples/chat-azure.yaml
measure "$gpuwise" plan examples/llama-70b.yaml
measure "$gpuwise" plan examples/spam-filter.yaml
