"""A synthetic GPU fleet's telemetry as OpenMetrics for promtool to backfill: GPUS dcgm-exporter
GPUs (duty cycle and memory) eight to a host, and their hosts' node_exporter CPU counters, over
DAYS days ending at END (seconds since the epoch), one scrape every SPACING seconds (default 60).
A fleet as audits find it: 10% idle, 25% under-used, 15% on a night schedule, 10% short-lived
pods of 1-5 hours, the rest busy. Seeded: the same arguments write the same file.
Usage: fleet_history.py OUTPUT GPUS DAYS END [SPACING]"""
import math, random, sys
path, gpus, days, end = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
spacing = int(sys.argv[5]) if len(sys.argv) > 5 else 60  # seconds between scrapes
start = end - days * 86400
rng = random.Random(7)
hosts = max(1, gpus // 8)
# A fleet as audits find it: idle GPUs, under-used ones, a night-time schedule, busy ones, and
# short-lived pods (a few hours) that come and go.
kinds = []
for g in range(gpus):
    r = rng.random()
    kind = "idle" if r < 0.1 else "low" if r < 0.35 else "nightly" if r < 0.5 else "pod" if r < 0.6 else "busy"
    life = (start, end)
    if kind == "pod":
        begin = start + rng.randrange(0, days * 86400 - 6 * 3600) // spacing * spacing
        life = (begin, begin + rng.randrange(1, 6) * 3600)
    kinds.append((kind, life, rng.uniform(8, 70) * 1024))
def util(kind, t, noise):
    hour = (t // 3600) % 24
    if kind == "idle": return 0
    if kind == "low": return max(0, round(12 + 6 * noise))
    if kind == "nightly": return 95 if hour < 6 else 0
    return min(100, max(0, round(70 + 20 * math.sin(t / 5400) + 8 * noise)))
with open(path, "w", buffering=1 << 22) as out:
    for metric in ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED"):
        out.write(f"# TYPE {metric} gauge\n")
        for g, (kind, (begin, finish), memory_mib) in enumerate(kinds):
            labels = (f'gpu="{g % 8}",UUID="GPU-{g:08x}-5e1f-4c2b-9a7d-{g * 2654435761 % 2**48:012x}",'
                      f'Hostname="node-{g // 8:04d}",modelName="NVIDIA A100-SXM4-80GB"')
            prefix = f"{metric}{{{labels}}} "
            lines = []
            for t in range(begin + spacing, finish + 1, spacing):
                if metric == "DCGM_FI_DEV_GPU_UTIL":
                    value = util(kind, t, rng.gauss(0, 1))
                else:
                    value = 0 if kind == "idle" else round(memory_mib)
                lines.append(f"{prefix}{value} {t}\n")
            out.write("".join(lines))
    out.write("# TYPE node_cpu_seconds counter\n")
    for h in range(hosts):
        for cpu in range(2):
            for mode, share in (("idle", 0.6), ("iowait", 0.05)):
                prefix = f'node_cpu_seconds_total{{cpu="{cpu}",instance="node-{h:04d}:9100",mode="{mode}"}} '
                out.write("".join(f"{prefix}{1000 + share * (t - start):.3f} {t}\n" for t in range(start + spacing, end + 1, spacing)))
    out.write("# EOF\n")
