#!/usr/bin/env python3
"""What a notebook would run: plan the Azure chat trace, sweep accelerators x batch limits in the
simulator on every core, price each configuration from the catalog, and plot cost against p99
time to first token into a PNG.

    PYTHONPATH=build/python python3 examples/notebook.py [OUT.png]
"""
import os
import sys

import gpuwise

here = os.path.dirname(os.path.abspath(__file__))
spec_path = os.path.join(here, "chat-azure.yaml")
out = sys.argv[1] if len(sys.argv) > 1 else "chat-azure-sweep.png"

# 1. The plan: the cheapest deployment meeting the SLO, verified by simulation.
plan = gpuwise.plan(spec_path)
best = plan["services"][0]["best"]
print(f"plan: {best['replicas']} x {best['accelerator']} tp{best['tensor_parallel']} "
      f"at ${best['usd_per_month']:,.2f}/month, simulated TTFT p99 {best['simulated']['ttft_p99_s']:.2f} s")

# 2. The sweep: one replica of each accelerator at three batch limits, 3,000 requests each.
spec, _ = gpuwise.specs.to_dict(spec_path)
spec["services"][0]["deployment"] = {"replicas": 1, "accelerator": "A100-80GB", "batching": "continuous"}
accelerators = ["L40S", "A100-80GB", "H100"]
table = gpuwise.sweep(spec, {
    "services.chat.deployment.accelerator": accelerators,
    "services.chat.deployment.max_batch": [16, 64, 256],
}, path=spec_path, requests=3000, seed=1)

# 3. Prices: the cheapest on-demand offering per accelerator-hour in the plan's clouds.
clouds = spec["constraints"]["clouds"]
usd_per_gpu_hour = {a: gpuwise.catalog.offerings(accelerators=[a], clouds=clouds, limit=1)[0]["usd_per_accelerator_hour"]
                    for a in accelerators}
rows = []
for row in table:
    accelerator = row["services.chat.deployment.accelerator"]
    if row["error"]:
        print(f"{accelerator} max_batch {row['services.chat.deployment.max_batch']}: {row['error']}")
        continue
    row["usd_per_month"] = usd_per_gpu_hour[accelerator] * 730
    rows.append(row)
    print(f"{accelerator:10} max_batch {row['services.chat.deployment.max_batch']:4}: "
          f"TTFT p99 {row['ttft_p99_s']:7.2f} s, TPOT p99 {row['tpot_p99_s'] * 1000:6.1f} ms, "
          f"SLO {row['slo_attainment']:.1%}, ${row['usd_per_month']:,.0f}/month")

# 4. The plot.
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

figure, axes = plt.subplots(figsize=(7, 4.5))
for accelerator in accelerators:
    points = [r for r in rows if r["services.chat.deployment.accelerator"] == accelerator]
    axes.plot([r["usd_per_month"] for r in points], [r["ttft_p99_s"] for r in points], "o", label=accelerator)
    for r in points:
        axes.annotate(f"max {r['services.chat.deployment.max_batch']}", (r["usd_per_month"], r["ttft_p99_s"]),
                      textcoords="offset points", xytext=(5, 3), fontsize=8)
axes.axhline(spec["services"][0]["slo"]["ttft_p99_s"], color="grey", linestyle="--", label="TTFT SLO")
axes.set_yscale("log")
axes.set_xlabel("USD per month (one replica, cheapest on-demand offering)")
axes.set_ylabel("TTFT p99 (s, simulated)")
axes.set_title("Azure conversation trace: cost against p99 time to first token")
axes.legend(loc="lower left")
figure.tight_layout()
figure.savefig(out, dpi=120)
print(f"wrote {out}")
