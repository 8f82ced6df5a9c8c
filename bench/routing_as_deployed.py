#!/usr/bin/env python3
"""What the routing in front of the replicas does to `gpuwise plan`.

`plan` verifies a layout by simulating it behind the routing `--emit-k8s` deploys: the vLLM
Router with round_robin for LLM replicas of one node (and both halves of a disaggregated plan).
A spec's `deployment.router` says how the user routes instead, and `plan` verifies with that.
Here the same services are planned under each routing a deployment can have: round robin (the
default: one vLLM Router with round_robin), round robin dealt by two copies of the router (each
its own turns: `deployment.router_replicas: 2`), power of two (its power_of_two), random (a plain
Kubernetes Service: kube-proxy spreads connections at random) and least outstanding tokens (what
the simulation routed with before, which no emitted object deploys).

Models other than LLMs (`CLASSIC`) are planned likewise: behind HAProxy as `--emit-k8s` deploys
it (the default: one queue the replicas share for a model served one request at a time, each
replica taking one request from the proxy; round robin for one batched per replica), behind
join-shortest-queue (HAProxy's leastconn without the limit), power of two (its random(2)) and
random (a plain Service).

Budget (plans that hold): every plan meets its SLO in its own simulation. Exits 1 otherwise.
Prints per service and routing the plan's layout, $/month and the simulated TTFT and TPOT p99
(the latency p99 for other models).
"""
import os
import re
import sys

from simulate_spec import ROOT, run_on_spec

EXAMPLES = ["chat-azure", "llama-70b", "llama-70b-vllm-memory", "rag-long-prompts"]
# The code-completion trace on L4s at a TPOT p99 of 50 ms: bursts within its busiest minute.
CODE_ON_L4 = """version: 1
name: code-on-l4
constraints: {pricing: [on-demand], accelerators: [L4]}
models: {code: {preset: llama-3.1-8b, precision: bf16}}
services:
  - name: code
    model: code
    traffic: {trace: traces/azure-llm-2023-code.csv, trace_format: azure}
    slo: {ttft_p99_s: 2, tpot_p99_s: 0.05}
"""
ROUTERS = [None, "round-robin x2", "power-of-two", "random", "least-outstanding-tokens"]
CLASSIC = ["cluster-peak-95-night-20", "sd-serving-alibaba"]
CLASSIC_ROUTERS = [None, "join-shortest-queue", "power-of-two", "random"]


def with_router(text, router):
    """The spec with the first service routed so (None: as plan --emit-k8s deploys; "round-robin
    x2": two copies of the router, deployment.router_replicas: 2, each dealing its own turns)."""
    text = re.sub(r"trace: traces/", "trace: " + os.path.join(ROOT, "examples", "traces") + "/", text)
    text = re.sub(r"file: telemetry/", "file: " + os.path.join(ROOT, "examples", "telemetry") + "/", text)
    if router is None:
        return text
    fields = {"router": router}
    if router == "round-robin x2":
        fields = {"router": "round-robin", "router_replicas": 2}
    if "\n    deployment:\n" in text:
        lines = "".join("      %s: %s\n" % item for item in fields.items())
        return text.replace("\n    deployment:\n", "\n    deployment:\n" + lines, 1)
    flow = ", ".join("%s: %s" % item for item in fields.items())
    return re.sub(r"(\n    slo: [^\n]*\n)", lambda m: m.group(1) + "    deployment: {%s}\n" % flow, text, count=1)


def llm_row(best):
    sim = best["simulated"]
    layout = "%d x %s tp%d%s" % (best["replicas"], best["accelerator"], best["tensor_parallel"],
                                 " (disaggregated)" if "disaggregated" in best else "")
    return "%-44s %14s %8.3fs %7.1fms" % (layout, "${:,.2f}".format(best["usd_per_month"]), sim["ttft_p99_s"], sim["tpot_p99_s"] * 1e3)


def classic_row(best):
    layout = "%d x %s (%s batching)" % (best["replicas"], best["accelerator"], best["batching"])
    return "%-44s %14s %8.3fs" % (layout, "${:,.2f}".format(best["usd_per_month"]), best["simulated"]["latency_p99_s"])


def plan_under_routings(specs, routers, deployed, row):
    """Plans each spec under each routing and prints a row each; the plans that miss their SLO."""
    failed = 0
    for name, text in specs:
        for router in routers:
            best = run_on_spec("plan", with_router(text, router), "-q").get("best")
            label = router or deployed
            if not best or not best.get("simulated"):
                print("%-26s %-26s no plan" % (name, label))
                failed += 1
                continue
            print("%-26s %-26s %s" % (name, label, row(best)))
            failed += 0 if best["simulated"]["meets_slo"] else 1
    return failed


def main():
    specs = [(name, open(os.path.join(ROOT, "examples", name + ".yaml")).read()) for name in EXAMPLES]
    specs.append(("code-on-l4 (TPOT 50 ms)", CODE_ON_L4))
    print("%-26s %-26s %-44s %14s %9s %9s" % ("service", "routing", "plan", "usd_per_month", "ttft_p99", "tpot_p99"))
    failed = plan_under_routings(specs, ROUTERS, "round-robin (deployed)", llm_row)
    print()
    print("%-26s %-26s %-44s %14s %9s" % ("service", "routing", "plan", "usd_per_month", "p99"))
    classic = [(name, open(os.path.join(ROOT, "examples", name + ".yaml")).read()) for name in CLASSIC]
    failed += plan_under_routings(classic, CLASSIC_ROUTERS, "HAProxy (deployed)", classic_row)
    print("budget: every plan meets its SLO in its own simulation: %s" % ("met" if failed == 0 else "MISSED (%d)" % failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
