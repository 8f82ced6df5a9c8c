#!/usr/bin/env bash
# `gpuwise scale` with steady stretches fast-forwarded, validated against the exact run
# (`--exact`, every request simulated) on a day, and timed over a week. The traffic is
# examples/dev-endpoint-weekdays.yaml (Llama 3.1 8B) at RPS requests/s on average (default 30,
# ~2.6 M requests a policy a day, 18 M a week) on two profiles: weekdays-only (08:00-20:00 on
# weekdays, one rate) and diurnal (a different rate every hour: the hard case). For each day and
# policy: cost, SLO attainment, p99 latency, scale events, and whether the SLO is met (every p99),
# fast-forwarded against exact; the exact run with another seed beside it shows the noise of
# the figures themselves. Exits 1 when a difference passes its budget (cost 2%, attainment 1
# point, p99 latency 10%, a verdict changing, or a recommendation that in the exact run misses
# the SLO or costs over 2% more than the exact run's), or a run fails.
# Usage: bench/scale_fast_forward.sh [BUILD] [RPS] [WEEK]   (WEEK=exact also runs the exact week)
set -euo pipefail
build=$(realpath "${1:-build}")
rps=${2:-30}
week=${3:-}
here=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
bin="$build/gpuwise"

spec() {  # spec PROFILE > file
  sed -e "s/average: 0.18/average: $rps/" -e "s/profile: weekdays-only/profile: $1/" "$here/examples/dev-endpoint-weekdays.yaml"
}
spec weekdays-only > "$dir/weekdays.yaml"
spec diurnal > "$dir/diurnal.yaml"

run() {  # run NAME SPEC ARGS...: JSON to $dir/NAME.json, wall seconds and peak RSS to $dir/NAME.time
  local name=$1 file=$2
  shift 2
  local rc=0
  /usr/bin/time -f "%e %M" -o "$dir/$name.time" "$bin" scale "$file" --format json "$@" > "$dir/$name.json" || rc=$?
  # 3: no policy meets the SLO (an answer, not a failure).
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ]; then echo "gpuwise scale $file $* failed ($rc)" >&2; exit 1; fi
  read -r wall rss < "$dir/$name.time"
  printf '%-28s %7.1f s %6.0f MB\n' "$name" "$wall" "$((rss / 1024))"
}

echo "gpuwise scale at $rps requests/s on average, $(nproc) cores, $(date -u +%F)"
# Monday (a working day under weekdays-only) and the first day of the diurnal profile.
for profile in weekdays diurnal; do
  run "$profile-day-exact" "$dir/$profile.yaml" --hours 24 --exact
  run "$profile-day-exact-seed2" "$dir/$profile.yaml" --hours 24 --exact --seed 2
  run "$profile-day-fast" "$dir/$profile.yaml" --hours 24 --fast-forward  # a day is exact unless asked
done
run "weekdays-week-fast" "$dir/weekdays.yaml"
run "diurnal-week-fast" "$dir/diurnal.yaml" --hours 168
if [ "$week" = exact ]; then
  run "weekdays-week-exact" "$dir/weekdays.yaml" --exact
  run "diurnal-week-exact" "$dir/diurnal.yaml" --hours 168 --exact
fi

python3 - "$dir" "$week" <<'PY'
import json, sys
d, week = sys.argv[1], sys.argv[2]
def load(name):
    with open(f"{d}/{name}.json") as f:
        svc = json.load(f)["services"][0]
    return svc, {p["name"]: p for p in svc["policies"]}
def rel(a, b):
    return (a - b) / b * 100 if b else (0.0 if a == b else float("inf"))
budget = {"usd": 2.0, "attainment": 1.0, "p99": 10.0}
failed = []
pairs = [(p, f"{p}-day") for p in ("weekdays", "diurnal")] + ([(p, f"{p}-week") for p in ("weekdays", "diurnal")] if week == "exact" else [])
for profile, span in pairs:
    exact_svc, exact = load(f"{span}-exact")
    fast_svc, fast = load(f"{span}-fast")
    noise = load(f"{span}-exact-seed2")[1] if span.endswith("day") else None
    print(f"\n{span}: fast-forwarded against exact (exact with seed 2 against seed 1 in brackets)")
    print(f"{'policy':16} {'ff h':>6} {'usd %':>16} {'attain pt':>16} {'p99 %':>16} {'events':>11} {'SLO':>5}")
    for name, e in exact.items():
        f = fast[name]
        n = noise[name] if noise else None
        def both(key, fn):
            v = fn(f[key], e[key])
            return f"{v:+6.2f}" + (f" ({fn(n[key], e[key]):+6.2f})" if n else "")
        usd = rel(f["usd"], e["usd"])
        att = (f["slo_attainment"] - e["slo_attainment"]) * 100
        p99 = rel(f["latency_p99_s"], e["latency_p99_s"])
        print(f"{name:16} {f['fast_forwarded_s'] / 3600:6.1f} {both('usd', rel):>16} "
              f"{both('slo_attainment', lambda a, b: (a - b) * 100):>16} {both('latency_p99_s', rel):>16} "
              f"{f['scale_events']:5d}/{e['scale_events']:<5d} {str(f['meets_slo'])[0]}/{str(e['meets_slo'])[0]}")
        if abs(usd) > budget["usd"]: failed.append(f"{span} {name}: cost {usd:+.2f}% (budget {budget['usd']}%)")
        if abs(att) > budget["attainment"]: failed.append(f"{span} {name}: attainment {att:+.2f} pt (budget {budget['attainment']})")
        if abs(p99) > budget["p99"]: failed.append(f"{span} {name}: p99 latency {p99:+.2f}% (budget {budget['p99']}%)")
        if f["meets_slo"] != e["meets_slo"]: failed.append(f"{span} {name}: meets the SLO {f['meets_slo']} against {e['meets_slo']}")
    # The recommendation: the same, or one that meets the SLO in the exact run too at a cost
    # within the budget of the exact run's choice (two policies a hair apart may trade places,
    # as they do between seeds).
    fr, er = fast_svc["recommended"], exact_svc["recommended"]
    if fr == er:
        print(f"recommended: {er} both ways")
    elif fr is None or er is None:
        failed.append(f"{span}: recommends {fr} against {er}")
    else:
        extra = rel(exact[fr]["usd"], exact[er]["usd"])
        print(f"recommended: {fr} against {er}; in the exact run {fr} meets the SLO: {exact[fr]['meets_slo']}, "
              f"costs {extra:+.2f}% against {er}" + (f" (seed 2 recommends {load(span + '-exact-seed2')[0]['recommended']})" if noise else ""))
        if not exact[fr]["meets_slo"] or extra > budget["usd"]:
            failed.append(f"{span}: recommends {fr}, which in the exact run costs {extra:+.2f}% over {er} or misses the SLO")
if failed:
    print("\nPAST BUDGET:\n  " + "\n  ".join(failed))
    sys.exit(1)
print("\nwithin budget: cost 2%, attainment 1 point, p99 latency 10%, the same verdicts, a recommendation within 2% of the exact one's cost")
PY
