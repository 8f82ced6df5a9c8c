"""The push-down's audit against the files' rule on the same history, series by series.
Usage: prometheus_compare.py PUSHED.json FILE.json; exits 1 when a series or a finding differs."""
import json
import sys

pushed, filed = (json.load(open(path)) for path in sys.argv[1:3])
summary = pushed["summary"]
print(f"push-down: {summary['gpus']} GPUs, partial {summary['partial']}, {summary['prometheus_queries']} queries, "
      f"{summary['prometheus_retries']} retries, {summary['prometheus_splits']} splits")
a = {x["id"]: x for x in pushed["series"]}
f = {x["id"]: x for x in filed["series"]}
missing = sorted(set(f) - set(a))
worst = {"mean": 0.0, "coverage": 0.0, "idle": 0.0, "memory": 0.0, "gaps": 0}
for key, x in f.items():
    y = a.get(key)
    if y is None:
        continue
    worst["mean"] = max(worst["mean"], abs(y["mean_util_pct"] - x["mean_util_pct"]))
    if x["coverage_hours"]:
        worst["coverage"] = max(worst["coverage"], abs(y["coverage_hours"] / x["coverage_hours"] - 1))
    worst["idle"] = max(worst["idle"], abs(y["idle_fraction"] - x["idle_fraction"]))
    worst["memory"] = max(worst["memory"], abs(y["peak_memory_bytes"] - x["peak_memory_bytes"]))
    worst["gaps"] += y["gaps"] != x["gaps"]
kinds = lambda doc: {(x["scope"], x["kind"]) for x in doc["findings"]}
differ = kinds(pushed) ^ kinds(filed)
print(f"against the file: {len(f)} series, {len(missing)} missing; worst |mean| {worst['mean']:.2e} points, "
      f"coverage {100 * worst['coverage']:.3f}%, |idle share| {worst['idle']:.4f}, |peak memory| {worst['memory']:.0f} B, "
      f"series with other gap counts {worst['gaps']}; findings differing {len(differ)} of {len(kinds(filed))}")
usd = lambda doc: doc["summary"]["recoverable_usd_per_month"]
print(f"recoverable: ${usd(pushed):,.0f}/month pushed down, ${usd(filed):,.0f}/month from the file")
sys.exit(1 if missing or differ or not summary["gpus"] or summary["partial"] else 0)
