#!/usr/bin/env python3
"""Disaggregated prefill and decode against aggregated replicas on the same GPUs.

Llama-3.1-70B bf16, 4 x H100 (tp 4) per replica, 1,500-token prompts (p99 6,000) and 250-token
answers (p99 1,000), Poisson arrivals, 4,000 requests per point: four aggregated replicas
(vLLM v1, chunked prefill, least outstanding tokens) against two prefill and two decode replicas
over InfiniBand (400 Gb/s per GPU). Prints TTFT and TPOT p50/p99 and the KV transfer wait per
rate. No budget: the measured check against DistServe's published runs is still to come.
"""
from simulate_spec import simulate
SPEC = """version: 1
name: disaggregation
models:
  m: {{preset: llama-3.1-70b, precision: bf16}}
services:
  - name: chat
    model: m
    traffic: {{rps: {rps}}}
    tokens: {{input: {{mean: 1500, p99: 6000}}, output: {{mean: 250, p99: 1000}}}}
    batching: continuous
    deployment:
{deployment}
      router: least-outstanding-tokens
"""
AGGREGATED = "      accelerator: H100\n      tp: 4\n      replicas: 4"
DISAGGREGATED = ("      replicas:\n        - {accelerator: H100, tp: 4, count: 2, role: prefill}\n"
                 "        - {accelerator: H100, tp: 4, count: 2, role: decode}\n      disaggregation: {link: infiniband}")


def run(rps, deployment):
    return simulate(SPEC.format(rps=rps, deployment=deployment), "--requests", "4000")


print(f"{'req/s':>5} {'layout':14} {'TTFT p50 ms':>11} {'p99':>7} {'TPOT p50 ms':>11} {'p99':>6} {'KV wait p99 ms':>14} {'verdict':>10}")
for rps in (4, 8, 12, 16):
    for name, deployment in (("4 aggregated", AGGREGATED), ("2 P + 2 D", DISAGGREGATED)):
        s = run(rps, deployment)
        wait = s["kv_transfer"]["wait_s"]["p99"] * 1e3 if s["kv_transfer"] else float("nan")
        print(f"{rps:5} {name:14} {s['ttft_s']['p50'] * 1e3:11.1f} {s['ttft_s']['p99'] * 1e3:7.1f} "
              f"{s['tpot_s']['p50'] * 1e3:11.1f} {s['tpot_s']['p99'] * 1e3:6.1f} {wait:14.1f} {s['verdict']:>10}")
