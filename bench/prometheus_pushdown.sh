#!/usr/bin/env bash
# The Prometheus push-down at fleet scale, against the real server: GPUS dcgm-exporter GPUs
# (default 1,000) and their hosts' node_exporter CPU counters, DAYS days (default 7) scraped each
# minute (GPUS x DAYS x 1440 x 2 GPU samples: 20.2 M for the defaults), generated here, backfilled
# with promtool into a fresh TSDB and served on loopback by Debian's prometheus with its defaults
# (2-minute query timeout, 50 M samples per query). Then `gpuwise audit --prometheus` with its own
# defaults, whole process: wall time, peak RSS, completeness, and the time per aggregate (from
# --explain). Then the same history audited from the OpenMetrics file, and the push-down's
# figures set against the files' rule series by series (bench/prometheus_compare.py; exits 1 when
# a series or a finding differs). Then gpuwise's recording rule backfilled by promtool over the
# range and the audit again with --use-recording-rules, compared the same way. The data is not
# committed; KEEP (if given) keeps it for reruns.
# Usage: bench/prometheus_pushdown.sh [BUILD] [GPUS] [DAYS] [KEEP]
set -euo pipefail
build=$(realpath "${1:-build}")
gpus=${2:-1000}
days=${3:-7}
keep=${4:-}
dir=${keep:-$(mktemp -d)}
mkdir -p "$dir"
trap 'kill ${prom:-} 2>/dev/null || true; [ -n "$keep" ] || rm -rf "$dir"' EXIT
end=1767225600   # 2026-01-01T00:00:00Z: a fixed end, so reruns query the same hours
if [ ! -d "$dir/tsdb" ]; then
  python3 "$(dirname "$0")/fleet_history.py" "$dir/history.om" "$gpus" "$days" "$end" 60
  mkdir -p "$dir/tsdb"
  /usr/bin/time -f "backfill: %e s, %M KiB peak" promtool tsdb create-blocks-from openmetrics --max-block-duration=168h \
    "$dir/history.om" "$dir/tsdb" >"$dir/promtool.log"
fi
printf 'global:\n  scrape_interval: 1m\nscrape_configs: []\n' >"$dir/prometheus.yml"
port=$((30000 + $$ % 20000))
start_prometheus() {
  prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/tsdb" --storage.tsdb.retention.time=3650d \
    --web.listen-address=127.0.0.1:$port 2>>"$dir/prometheus.log" &
  prom=$!
  for _ in $(seq 300); do curl -sf "http://127.0.0.1:$port/-/ready" >/dev/null && break; sleep 0.2; done
}
# One whole-process audit through the server: its last line, then the seconds per kind of query.
audit_through_prometheus() {  # OUTPUT [FLAGS...]
  local out=$1
  shift
  /usr/bin/time -f "gpuwise: %e s wall, %U s user, %M KiB peak" "$build/gpuwise" audit --prometheus "http://127.0.0.1:$port" \
    --range "${days}d" --end "$end" --format json --explain "$@" >"$dir/$out.json" 2>"$dir/$out.err" || { cat "$dir/$out.err"; exit 1; }
  grep -v "^gpuwise: Prometheus:\|^gpuwise: recording rule" "$dir/$out.err" | tail -n 1
  grep "^gpuwise: recording rule" "$dir/$out.err" | sed 's/^gpuwise: /  /' || true
  grep "^gpuwise: Prometheus:" "$dir/$out.err" | sed 's/^[^:]*: [^:]*: //; s/, /\n/g' | sed 's/^/  /'
}
start_prometheus
echo "defaults (subqueries):"
audit_through_prometheus audit
# gpuwise's recorded idle flag, backfilled over the whole range by promtool from this server,
# then the audit with --use-recording-rules on the same TSDB.
if [ ! -e "$dir/rules-backfilled" ]; then
  "$build/gpuwise" audit --print-recording-rules >"$dir/rules.yml"
  # The file named relative to its folder: promtool's evaluation offset hashes the path as given, and
  # where it lands in a minute's last second each 2-hour block loses its last evaluation.
  (cd "$dir" && /usr/bin/time -f "rule backfill: %e s" promtool tsdb create-blocks-from rules --start=$((end - days * 86400)) \
    --end=$((end + 60)) --url="http://127.0.0.1:$port" --output-dir=rule-blocks rules.yml >promtool-rules.log)
  kill $prom; wait $prom 2>/dev/null || true
  mv "$dir"/rule-blocks/* "$dir/tsdb/"
  touch "$dir/rules-backfilled"
  start_prometheus
fi
echo "--use-recording-rules:"
audit_through_prometheus audit-rules --use-recording-rules
kill $prom; wait $prom 2>/dev/null || true
/usr/bin/time -f "from the file: %e s wall, %M KiB peak" "$build/gpuwise" audit "$dir/history.om" --format json \
  >"$dir/file.json" 2>"$dir/file.err" || { cat "$dir/file.err"; exit 1; }
tail -n 1 "$dir/file.err"
echo "defaults against the file:"
python3 "$(dirname "$0")/prometheus_compare.py" "$dir/audit.json" "$dir/file.json"
echo "--use-recording-rules against the file:"
python3 "$(dirname "$0")/prometheus_compare.py" "$dir/audit-rules.json" "$dir/file.json"
