#!/usr/bin/env bash
# `gpuwise watch` at fleet scale against the real server. A fleet of GPUS dcgm-exporter GPUs
# (default 10,000) over DAYS days (default 7) ending at the last whole hour, scraped every
# SPACING seconds (default 300: 40 M samples for the defaults), is generated (fleet_history.py),
# backfilled with promtool and served on loopback by Debian's prometheus with its defaults. Then:
#   1. the first refresh, whole process (`gpuwise watch --once --window DAYSd`, the rolling windows
#      1h, 24h, 7d and 14d): wall seconds (a cold start asks for every hour of the longest window)
#      and peak RSS (targets <= 30 s and <= 300 MB);
#   1b. a refresh of the watcher running on the large fleet (the second: it asks only for the
#      hours new or not settled since the first, the rest held): seconds (target <= 30 s);
#   2. the watcher serving (--interval 1s on a smaller fleet, SMALL GPUs over one day, so that
#      REFRESHES refreshes (default 100) fit in minutes): its resident memory after refreshes
#      1, 10, 25, 50 and the last, which must stay flat (the last within 10% of the tenth);
#   3. /metrics scraped from the watcher holding the large fleet: seconds and bytes per scrape
#      (median of 5; target <= 1 s);
#   4. a simulated week at WEEK GPUs (default 10,000; 0 leaves it out): 14 days of history, and
#      the watcher (window 7d, rolling windows 1h, 24h, 7d) refreshed once per simulated hour over
#      the last 7 by gpuwise_watch_week, its /metrics rendered after each: resident memory must
#      stay flat (after the week within 10% of after the first day) and under 300 MB at its peak.
# Exits 1 when a target is missed. The data is not committed.
# Usage: bench/watch_scale.sh [BUILD] [GPUS] [DAYS] [SPACING] [SMALL] [REFRESHES] [WEEK]
set -euo pipefail
build=$(realpath "${1:-build}")
gpus=${2:-10000}
days=${3:-7}
spacing=${4:-300}
small=${5:-500}
refreshes=${6:-100}
week=${7:-10000}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
pids=()
trap 'kill ${pids[*]:-} 2>/dev/null || true; rm -rf "$dir"' EXIT
end=$(( $(date +%s) / 3600 * 3600 ))
failed=0

# A port no one listens on now, from the kernel (a fixed one may be an outgoing connection's:
# loopback clients take ports from the same range).
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

serve_history() {  # NAME GPUS DAYS SPACING: backfills and starts a Prometheus, sets $port
  local name=$1
  mkdir -p "$dir/$name/tsdb"
  /usr/bin/time -f "$name: generated in %e s" python3 "$here/fleet_history.py" "$dir/$name/history.om" "$2" "$3" "$end" "$4"
  /usr/bin/time -f "$name: backfilled in %e s, %M KiB peak" promtool tsdb create-blocks-from openmetrics \
    --max-block-duration=168h "$dir/$name/history.om" "$dir/$name/tsdb" >"$dir/$name/promtool.log"
  rm "$dir/$name/history.om"
  printf 'global:\n  scrape_interval: 1m\nscrape_configs: []\n' >"$dir/$name/prometheus.yml"
  # A port of its own for each server (a second Prometheus that cannot bind would leave the
  # first answering in its place).
  port=$(free_port)
  prometheus --config.file="$dir/$name/prometheus.yml" --storage.tsdb.path="$dir/$name/tsdb" \
    --storage.tsdb.retention.time=3650d --web.listen-address=127.0.0.1:$port 2>>"$dir/$name/prometheus.log" &
  pids+=($!)
  for _ in $(seq 600); do
    kill -0 "${pids[-1]}" 2>/dev/null || { echo "$name: prometheus exited:" >&2; tail -5 "$dir/$name/prometheus.log" >&2; exit 1; }
    curl -sf "http://127.0.0.1:$port/-/ready" >/dev/null && return
    sleep 0.2
  done
  echo "$name: prometheus did not start" >&2
  exit 1
}

rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
hwm_kib() { awk '/^VmHWM/ {print $2}' "/proc/$1/status"; }
alive() {  # PID ERRFILE: fails, with the watcher's stderr, when it has exited
  kill -0 "$1" 2>/dev/null && return
  echo "the watcher exited:" >&2
  cat "$2" >&2
  exit 1
}
refreshes_done() {  # PORT
  curl -sf "http://127.0.0.1:$1/metrics" | awk '/^gpuwise_watch_refreshes_total\{result="success"\}/ {print $2}'
}

echo "== $gpus GPUs x $days days, a scrape every $spacing s"
serve_history large "$gpus" "$days" "$spacing"
large=$port
/usr/bin/time -f "%e %M" -o "$dir/once.time" "$build/gpuwise" watch --prometheus "http://127.0.0.1:$large" --window "${days}d" \
  --once >"$dir/once.prom" 2>"$dir/once.err" || { cat "$dir/once.err"; exit 1; }
read -r seconds kib <"$dir/once.time"
series=$(awk '/^gpuwise_watch_series / {print $2}' "$dir/once.prom")
echo "the first refresh (whole process, cold): $seconds s wall, $((kib / 1024)) MiB peak RSS, $series GPU series, $(wc -c <"$dir/once.prom") bytes of metrics"
[ "$kib" -le $((300 * 1024)) ] || { echo "  over the 300 MB target"; failed=1; }
awk -v s="$seconds" 'BEGIN { exit !(s <= 30) }' || { echo "  over the 30 s target"; failed=1; }

# The watcher holding the large fleet: /metrics scrape time and size.
wport=$(free_port)
"$build/gpuwise" watch --prometheus "http://127.0.0.1:$large" --window "${days}d" --interval 90s --listen "127.0.0.1:$wport" \
  2>"$dir/watch-large.err" &
pids+=($!)
watcher=$!
for _ in $(seq 900); do
  alive "$watcher" "$dir/watch-large.err"
  [ "$(refreshes_done $wport 2>/dev/null || echo 0)" = "1" ] && break
  sleep 0.2
done
echo "the watcher serving $series GPUs: $(( $(hwm_kib $watcher) / 1024 )) MiB peak RSS over its first refresh, $(( $(rss_kib $watcher) / 1024 )) MiB after it"
for _ in 1 2 3 4 5; do
  curl -s -o /dev/null -w '%{time_total} %{size_download}\n' "http://127.0.0.1:$wport/metrics"
done | sort -n | sed -n 3p | {
  read -r scrape bytes
  echo "/metrics at $series GPUs: $scrape s, $bytes bytes (median of 5 scrapes)"
  awk -v s="$scrape" 'BEGIN { exit !(s <= 1) }' || { echo "  over the 1 s target"; exit 1; }
} || failed=1
# Its second refresh: what changed since the first.
for _ in $(seq 1800); do
  alive "$watcher" "$dir/watch-large.err"
  [ "$(refreshes_done $wport 2>/dev/null || echo 0)" = "2" ] && break
  sleep 0.2
done
curl -sf "http://127.0.0.1:$wport/metrics" >"$dir/second.prom"
refresh=$(awk '/^gpuwise_watch_refresh_duration_seconds / {print $2}' "$dir/second.prom")
asked=$(awk '/^gpuwise_watch_asked_span_seconds / {print $2 / 3600}' "$dir/second.prom")
kept=$(awk '/^gpuwise_watch_hourly_answers_kept / {print $2}' "$dir/second.prom")
echo "a refresh of the running watcher: $refresh s ($asked hours asked of Prometheus, $kept series-hours held), $(( $(hwm_kib $watcher) / 1024 )) MiB peak RSS over both"
awk -v s="$refresh" 'BEGIN { exit !(s <= 30) }' || { echo "  over the 30 s target"; failed=1; }
kill "$watcher"

echo "== memory over $refreshes refreshes: $small GPUs x 1 day"
serve_history small "$small" 1 "$spacing"
small_port=$port
wport=$(free_port)
"$build/gpuwise" watch --prometheus "http://127.0.0.1:$small_port" --window 1d --interval 1s --listen "127.0.0.1:$wport" \
  2>"$dir/watch-small.err" &
pids+=($!)
watcher=$!
declare -A at
for _ in $(seq $((refreshes * 50))); do
  alive "$watcher" "$dir/watch-small.err"
  done_now=$(refreshes_done $wport 2>/dev/null || echo 0)
  for mark in 1 10 25 50 "$refreshes"; do
    [ "$mark" -le "$refreshes" ] || continue
    [ -z "${at[$mark]:-}" ] && [ "${done_now:-0}" -ge "$mark" ] && at[$mark]=$(rss_kib $watcher)
  done
  [ "${done_now:-0}" -ge "$refreshes" ] && break
  sleep 0.1
done
line="RSS after refresh"
for mark in 1 10 25 50 "$refreshes"; do
  if [ "$mark" -le "$refreshes" ]; then line+=" $mark: $(( ${at[$mark]:-0} / 1024 )) MiB;"; fi
done
echo "$line"
[ -n "${at[$refreshes]:-}" ] || { echo "  $refreshes refreshes did not finish"; failed=1; }
[ -n "${at[$refreshes]:-}" ] && [ "${at[$refreshes]}" -le $(( ${at[10]} * 11 / 10 )) ] || { echo "  memory grew past 10% after the tenth refresh"; failed=1; }
kill "$watcher"

if [ "$week" -gt 0 ]; then
  echo "== a simulated week: $week GPUs x 14 days, one refresh per simulated hour over the last 7"
  kill "${pids[@]}" 2>/dev/null || true  # the earlier servers: their memory is not the week's
  rm -rf "$dir/large" "$dir/small"
  serve_history week "$week" 14 "$spacing"
  "$build/gpuwise_watch_week" "http://127.0.0.1:$port" "$end" 168 7d 1h,24h,7d || failed=1
fi
exit $failed
