#!/usr/bin/env python3
"""Prefix caching against the Mooncake FAST'25 traces' published figures.

The simulator replays the conversation and synthetic traces (examples/traces, hash_ids per
512-token block) through `gpuwise simulate` on Llama-3.1-70B, 8 x H100 per replica:

1. Sequence only, as the paper's Figure 9 counts it: one replica, the trace slowed 1000x so
   every request has finished (and cached its blocks) before the next arrives. With an
   unlimited cache the token hit ratio is checked against Table 2's "cache ratio" (conversation
   40%, synthetic 66%; Qin et al., FAST 2025, Table 2), budget 0.03 absolute. Against cache size:
   the paper says a 3M-token cache "does not achieve 50% of the theoretical maximum hit rate in
   most scenarios" and that 50M tokens "nearly reaches" it: checked as < 0.5 and >= 0.95 of the
   unlimited ratio (conversation and synthetic).
2. In real time on 8 replicas: round robin against prefix affinity (SGLang's cache-aware
   policy), caches in the KV cache's free blocks and unlimited; reported, no budget (the paper
   gives no single-replica-group figure to hold them to).
3. What prefix caching does to the plan: `gpuwise plan` on the conversation trace (TTFT p99 8.5 s,
   TPOT p99 100 ms, AWS H100s) with the engine's prefix cache on (kv, the default) and off;
   reported, no budget.

Nothing is fitted to these traces: every figure is held out. Exits 1 past a budget.
"""
import os
import sys

from simulate_spec import ROOT, run_on_spec, simulate
PUBLISHED = {"conversation": 0.40, "synthetic": 0.66}  # Table 2, "Cache Ratio"
BUDGET = 0.03

SPEC = """version: 1
name: mooncake-{trace}
models:
  llama-70b: {{preset: llama-3.1-70b, precision: bf16}}
services:
  - name: chat
    model: llama-70b
    traffic:
      trace: {path}
      trace_format: mooncake
      time_scale: {time_scale}
    batching: continuous
    deployment:
      accelerator: H100
      tp: 8
      replicas: {replicas}
      router: {router}
      prefix_cache: {cache}
"""


def simulate_trace(trace, replicas, router, cache, time_scale):
    path = os.path.join(ROOT, "examples", "traces", f"mooncake-{trace}.jsonl")
    return simulate(SPEC.format(trace=trace, path=path, replicas=replicas, router=router, cache=cache, time_scale=time_scale))


failures = []
print("1. sequence only (one replica, the trace slowed 1000x), token hit ratio")
print(f"{'trace':13} {'unlimited':>9} {'published':>9} {'3M tokens':>10} {'of max':>7} {'50M tokens':>10} {'of max':>7}")
for trace, published in PUBLISHED.items():
    ratio = {}
    for name, cache in (("unlimited", "unlimited"), ("3M", "{capacity_tokens: 3000000}"), ("50M", "{capacity_tokens: 50000000}")):
        ratio[name] = simulate_trace(trace, 1, "round-robin", cache, 0.001)["prefix_cache"]["hit_ratio_tokens"]
    small, large = ratio["3M"] / ratio["unlimited"], ratio["50M"] / ratio["unlimited"]
    print(f"{trace:13} {ratio['unlimited']:9.3f} {published:9.2f} {ratio['3M']:10.3f} {small:7.2f} {ratio['50M']:10.3f} {large:7.2f}")
    if abs(ratio["unlimited"] - published) > BUDGET:
        failures.append(f"{trace}: unlimited hit ratio {ratio['unlimited']:.3f} against {published:.2f} published (budget {BUDGET})")
    if small >= 0.5:
        failures.append(f"{trace}: a 3M-token cache reaches {small:.2f} of the maximum (the paper: under half)")
    if large < 0.95:
        failures.append(f"{trace}: a 50M-token cache reaches {large:.2f} of the maximum (the paper: nearly all)")

print("\n2. in real time, 8 replicas of 8 x H100 (conversation trace)")
print(f"{'router':25} {'cache':10} {'hit ratio':>9} {'TTFT mean s':>11} {'TTFT p99 s':>10} {'saved prefill tokens':>20}")
for router in ("round-robin", "least-outstanding-tokens", "prefix-affinity"):
    for cache in ("off", "kv", "unlimited"):
        s = simulate_trace("conversation", 8, router, cache, 1)
        p = s["prefix_cache"] or {"hit_ratio_tokens": 0, "saved_prefill_tokens": 0}
        print(f"{router:25} {cache:10} {p['hit_ratio_tokens']:9.3f} {s['ttft_s']['mean']:11.2f} {s['ttft_s']['p99']:10.2f} "
              f"{p['saved_prefill_tokens']:20.4g}")

PLAN = """version: 1
name: mooncake-plan
constraints: {{clouds: [aws], pricing: [on-demand], accelerators: [H100]}}
models:
  llama-70b: {{preset: llama-3.1-70b, precision: bf16}}
services:
  - name: chat
    model: llama-70b
    traffic: {{trace: {path}, trace_format: mooncake}}
    slo: {{ttft_p99_s: 8.5, tpot_p99_s: 0.1}}
    deployment: {{prefix_cache: {cache}}}
"""
print("\n3. the plan for the conversation trace (TTFT p99 8.5 s, TPOT p99 100 ms, AWS H100)")
print(f"{'cache':6} {'layout':>14} {'GPUs':>6} {'usd_per_month':>14} {'sim TTFT p99 s':>14} {'sim TPOT p99 ms':>15}")
path = os.path.join(ROOT, "examples", "traces", "mooncake-conversation.jsonl")
for cache in ("kv", "off"):
    best = run_on_spec("plan", PLAN.format(path=path, cache=cache))["best"]
    dis = best.get("disaggregated")
    print(f"{cache:6} {'disaggregated' if dis else 'one pool':>14} {dis['ratio'] if dis else best['tensor_parallel'] * best['replicas']:>6} "
          f"{best['usd_per_month']:14,.2f} {best['simulated']['ttft_p99_s']:14.2f} {best['simulated']['tpot_p99_s'] * 1e3:15.1f}")

if failures:
    print("\nPAST BUDGET:\n  " + "\n  ".join(failures))
    sys.exit(1)
print("\nwithin budget")
