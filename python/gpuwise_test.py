"""The Python package gives the CLI's answers: every entry point's dict equals `gpuwise ... --format
json` on the examples, errors carry file, line and field, long calls release the GIL and stop on
Ctrl-C, and sweep runs configurations in parallel with the same figures as one at a time.

Run: PYTHONPATH=BUILD/python GPUWISE_BINARY=BUILD/gpuwise python3 -m pytest python/
"""

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import gpuwise

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BINARY = os.environ.get("GPUWISE_BINARY", os.path.join(ROOT, "build", "gpuwise"))
EXAMPLES = os.path.join(ROOT, "examples")


def cli(*args, check=True):
    done = subprocess.run([BINARY, *args], capture_output=True, text=True, env=dict(os.environ, NO_COLOR="1"), cwd=ROOT)
    if check:
        assert done.returncode in (0, 3), done.stderr
    return done


def cli_json(*args):
    return json.loads(cli(*args, "--format", "json").stdout)


def example(name):
    return os.path.join(EXAMPLES, name)


SPEC = textwrap.dedent("""\
    name: python test
    models:
      classifier:
        params: 110e6
        service_time:
          accelerator: T4
          batch_ms: {1: 50, 8: 58, 16: 70, 32: 92, 64: 140}
    services:
      - name: classify
        model: classifier
        traffic: {rps: {average: 40, peak: 80}}
        slo: {latency_p99_s: 0.500}
    constraints:
      clouds: [aws, gcp]
      pricing: [on-demand]
    """)


@pytest.fixture
def spec_file(tmp_path):
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC)
    return str(path)


def test_plan_equals_the_cli_from_a_path_text_or_dict(spec_file):
    expected = cli_json("plan", spec_file)
    from_path = gpuwise.plan(spec_file)
    assert from_path == expected
    assert from_path.text() == cli("plan", spec_file).stdout
    assert from_path.exit_code == 0
    assert gpuwise.plan(SPEC, path=spec_file) == expected
    # A dict is the YAML as JSON: the same plan, whatever the file it came from.
    document = json.loads(json.dumps(expected))  # a plain copy
    assert document == dict(from_path)
    as_dict = gpuwise.specs.to_dict(spec_file)[0]
    assert gpuwise.plan(as_dict, path=spec_file)["services"] == expected["services"]
    assert gpuwise.plan(spec_file, simulate=False, seed=3) == cli_json("plan", spec_file, "--no-simulate", "--seed", "3")
    assert gpuwise.plan(spec_file, jobs=1) == expected  # threads change nothing but the time


EXAMPLE_SPECS = sorted(f for f in os.listdir(EXAMPLES) if f.endswith(".yaml"))


@pytest.mark.parametrize("name", EXAMPLE_SPECS)
def test_plan_equals_the_cli_on_every_example(name):
    # The screen without simulation keeps this quick; the simulated plans are checked above and below.
    answer = gpuwise.plan(example(name), simulate=False)
    done = cli("plan", example(name), "--no-simulate", "--format", "json", check=False)
    assert answer == json.loads(done.stdout)
    assert answer.exit_code == done.returncode
    assert [w for w in answer.warnings] == [line for line in done.stderr.splitlines() if line.startswith("gpuwise: ")]


def test_a_plans_csv_and_manifests_are_the_clis(tmp_path):
    spec = example("nightly-batch.yaml")
    plan = gpuwise.plan(spec)
    assert plan.csv() == cli("plan", spec, "--format", "csv").stdout
    folder = tmp_path / "k8s"
    cli("plan", spec, "--emit-k8s", str(folder), "-q")
    written = plan.manifests()
    assert list(written) == [f"{job}{suffix}" for job in ("nightly-summaries", "churn-scoring")
                             for suffix in ("-driver-configmap.yaml", "-cronjob.yaml", "-karpenter-nodepool.yaml")]
    for name, text in written.items():
        assert (folder / name).read_text() == text
    with pytest.raises(AttributeError):
        gpuwise.fit("llama-3.1-8b").manifests()


def test_manifests_that_cannot_be_written_raise_bad_input():
    plan = gpuwise.plan(textwrap.dedent("""\
        constraints: {clouds: [gcp], pricing: [on-demand], accelerators: [TPU-v3]}
        models: {m: {preset: llama-3.1-8b, precision: bf16}}
        services:
          - {name: chat, model: m, traffic: {rps: 6}, tokens: {input: 1000, output: 200}, slo: {ttft_p99_s: 2.0, tpot_p99_s: 0.1}}
        """), sim_requests=2000)
    with pytest.raises(gpuwise.BadInputError, match="Cloud TPU VM"):
        plan.manifests()


def test_the_readme_one_liner_on_the_azure_chat_trace():
    best = gpuwise.plan(example("chat-azure.yaml"))["services"][0]["best"]
    assert best == cli_json("plan", example("chat-azure.yaml"))["services"][0]["best"]
    assert best["usd_per_month"] > 0


def test_simulate_equals_the_cli(spec_file):
    run = gpuwise.simulate(spec_file, requests=3000, seed=7)
    assert run == cli_json("simulate", spec_file, "--requests", "3000", "--seed", "7")
    assert run.text() == cli("simulate", spec_file, "--requests", "3000", "--seed", "7").stdout


@pytest.mark.parametrize("args,call", [
    (["fit", "llama-3.1-70b", "--context", "8192", "--batch", "16"],
     lambda: gpuwise.fit("llama-3.1-70b", context_tokens=8192, batch=16)),
    (["fit", "llama-3.1-8b", "--train", "--zero", "3", "--dp", "64", "--recompute", "selective"],
     lambda: gpuwise.fit("llama-3.1-8b", train=True, zero=3, dp=64, recompute="selective")),
    (["perf", "llama-3.1-70b", "--accelerator", "H100", "--count", "2", "--precision", "fp8", "--phase", "decode",
      "--context", "4096"],
     lambda: gpuwise.perf("llama-3.1-70b", "H100", count=2, precision="fp8", phase="decode", context_tokens=4096)),
    (["perf", "llama-2-70b", "--accelerator", "A100-80GB", "--tp", "4", "--phase", "decode", "--batch", "64",
      "--decode-attention", "per-query-head"],
     lambda: gpuwise.perf("llama-2-70b", "A100-80GB", tp=4, phase="decode", batch=64,
                          decode_attention="per-query-head")),
    (["perf", "llama-3.1-8b", "--accelerator", "H100", "--precision", "fp8", "--max-throughput", "--lengths",
      example("traces/azure-llm-2023-conv.csv")],
     lambda: gpuwise.perf("llama-3.1-8b", "H100", precision="fp8", max_throughput=True,
                          lengths=example("traces/azure-llm-2023-conv.csv"))),
    (["perf", "llama-3.1-8b", "--accelerator", "H100", "--precision", "fp8", "--max-throughput", "--input-tokens",
      "1000", "--output-tokens", "500", "--max-batch", "4096", "--tpot-ms", "20"],
     lambda: gpuwise.perf("llama-3.1-8b", "H100", precision="fp8", max_throughput=True, input_tokens=1000,
                          output_tokens=500, max_batch=4096, tpot_ms=20)),
    (["train", "llama-2-7b", "--tokens", "500e9", "--deadline-days", "20", "--runs", "300"],
     lambda: gpuwise.train("llama-2-7b", 500e9, deadline_days=20, runs=300)),
    (["mix", example("demand-week.csv"), "--on-demand", "4", "--reserved-1y", "2.5", "--spot", "1.2"],
     lambda: gpuwise.mix(example("demand-week.csv"), on_demand=4, reserved_1y=2.5, spot=1.2)),
    (["fleet", example("fleet-shared-pool.yaml")], lambda: gpuwise.fleet(example("fleet-shared-pool.yaml"))),
])
def test_each_question_equals_the_cli(args, call):
    answer = call()
    expected = cli_json(*args)
    assert answer == expected
    assert answer.command == expected["command"]
    assert answer.text() == cli(*args).stdout


def test_scale_equals_the_cli(spec_file):
    assert gpuwise.scale(spec_file, hours=2) == cli_json("scale", spec_file, "--hours", "2")
    assert gpuwise.scale(spec_file, hours=2, exact=True) == cli_json("scale", spec_file, "--hours", "2", "--exact")
    assert gpuwise.scale(spec_file, hours=2, fast_forward=True) == \
        cli_json("scale", spec_file, "--hours", "2", "--fast-forward")


def test_audit_equals_the_cli_and_warns(tmp_path):
    path = tmp_path / "smi.csv"
    lines = ["timestamp, name, pci.bus_id, uuid, utilization.gpu [%], memory.used [MiB], memory.total [MiB]"]
    for minute in range(60 * 40):
        for gpu in range(2):
            lines.append(f"2026/11/0{1 + minute // 1440} {minute // 60 % 24:02d}:{minute % 60:02d}:00.000, "
                         f"NVIDIA A100-SXM4-80GB, 00000000:0{gpu}:00.0, GPU-{gpu}, {3 + minute % 5 if gpu else 90} %, "
                         "20000 MiB, 81920 MiB")
    lines.append("2026/11/01 00:00:30.000, NVIDIA A100-SXM4-80GB, 00000000:00:00.0, GPU-0, 90 %, 20000 MiB, 81920 MiB")
    path.write_text("\n".join(lines) + "\n")
    with pytest.warns(UserWarning, match="out of time order"):
        answer = gpuwise.audit(str(path), host="node-a")
    assert answer == cli_json("audit", str(path), "--host", "node-a")
    assert answer.warnings == cli("audit", str(path), "--host", "node-a").stderr.splitlines()
    assert answer["findings"]


def _free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def prometheus(tmp_path):
    """A real Prometheus on loopback serving three A100s' last three days, backfilled with promtool."""
    import shutil
    import urllib.request
    if not shutil.which("prometheus") or not shutil.which("promtool"):
        pytest.fail("prometheus and promtool are required (scripts/bootstrap installs them)")
    end = (int(time.time()) // 3600 - 1) * 3600
    lines = []
    for metric in ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED"):
        lines.append(f"# TYPE {metric} gauge")
        for name, util, memory_mib in (("idle", 0, 900), ("underused", 20, 60000), ("busy", 85, 70000)):
            labels = f'gpu="0",UUID="GPU-{name}",Hostname="node-{name}",modelName="NVIDIA A100-SXM4-80GB"'
            value = util if metric == "DCGM_FI_DEV_GPU_UTIL" else memory_mib
            lines.extend(f"{metric}{{{labels}}} {value} {t}" for t in range(end - 3 * 86400, end + 1, 300))
    lines.append("# EOF")
    (tmp_path / "history.om").write_text("\n".join(lines) + "\n")
    subprocess.run(["promtool", "tsdb", "create-blocks-from", "openmetrics", str(tmp_path / "history.om"),
                    str(tmp_path / "tsdb")], check=True, capture_output=True)
    (tmp_path / "prometheus.yml").write_text("global:\n  scrape_interval: 1m\nscrape_configs: []\n")
    port = _free_port()
    server = subprocess.Popen(["prometheus", f"--config.file={tmp_path / 'prometheus.yml'}",
                               f"--storage.tsdb.path={tmp_path / 'tsdb'}", f"--web.listen-address=127.0.0.1:{port}",
                               "--storage.tsdb.retention.time=3650d"],
                              stdout=subprocess.DEVNULL, stderr=open(tmp_path / "prometheus.log", "w"))
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(150):
            try:
                if urllib.request.urlopen(url + "/-/ready", timeout=1).status == 200:
                    break
            except OSError:
                time.sleep(0.2)
        else:
            pytest.fail("prometheus did not start; see " + str(tmp_path / "prometheus.log"))
        yield url
    finally:
        server.terminate()
        server.wait()


def test_audit_through_prometheus_equals_the_cli(prometheus):
    args = ["audit", "--prometheus", prometheus, "--range", "3d", "--min-coverage-hours", "24"]
    before = cli_json(*args)
    answer = gpuwise.audit(prometheus=prometheus, range="3d", min_coverage_hours=24)
    after = cli_json(*args)
    assert answer in (before, after)  # the range ends now: an hour may turn between the calls
    kinds = {f["kind"] for f in answer["findings"]}
    assert {"idle", "underused"} <= kinds, kinds
    # No recorded idle flag on this server: the same answer by subqueries, and a warning saying so.
    with pytest.warns(UserWarning, match="gpuwise:DCGM_FI_DEV_GPU_UTIL:idle"):
        by_rule = gpuwise.audit(prometheus=prometheus, range="3d", min_coverage_hours=24, use_recording_rules=True,
                                prometheus_concurrency=2)
    assert by_rule["findings"] == answer["findings"] or by_rule["findings"] == after["findings"]


def test_recording_rules_equal_the_cli():
    assert gpuwise.recording_rules() == cli("audit", "--print-recording-rules").stdout
    assert "record: gpuwise:DCGM_FI_DEV_GPU_UTIL:idle" in gpuwise.recording_rules()


def test_catalog_listings_equal_the_cli():
    assert gpuwise.catalog.accelerators() == cli_json("catalog", "accelerators")["accelerators"]
    assert gpuwise.catalog.offerings(clouds=["aws"], accelerators=["H100"], pricing="spot", limit=3) == \
        cli_json("catalog", "offerings", "--cloud", "aws", "--accelerator", "H100", "--pricing", "spot",
                 "--limit", "3")["offerings"]


def test_errors_carry_file_line_and_field(tmp_path):
    bad = tmp_path / "no-slo.yaml"
    bad.write_text(SPEC.replace("    slo: {latency_p99_s: 0.500}\n", ""))
    with pytest.raises(gpuwise.BadInputError) as caught:
        gpuwise.plan(str(bad))
    error = caught.value
    assert error.file == str(bad) and error.line > 0 and error.field == "services.classify.slo"
    assert isinstance(error, ValueError) and error.exit_code == 1
    assert "gpuwise: error: " + str(error) == cli("plan", str(bad), check=False).stderr.strip()
    with pytest.raises(gpuwise.BadInputError) as caught:
        gpuwise.fit("no-such-model")
    with pytest.raises(gpuwise.InfeasibleError) as caught:
        gpuwise.train("llama-3.1-405b", 1e12, accelerator="T4", count=1)
    assert caught.value.exit_code == 3
    with pytest.raises(gpuwise.BadInputError) as caught:
        gpuwise.audit("x.csv", columns="timestamp")
    assert caught.value.field == "--columns"
    with pytest.raises(TypeError, match="unexpected keyword argument 'contxt'"):
        gpuwise.fit("llama-3.1-8b", contxt=4096)
    # A dict has no lines: its errors name the field, not a file and line that point nowhere.
    as_dict = gpuwise.specs.to_dict(str(bad))[0]
    with pytest.raises(gpuwise.BadInputError) as caught:
        gpuwise.plan(as_dict)
    assert caught.value.line is None and caught.value.field == "services.classify.slo"
    assert str(caught.value).startswith("the spec dict: field 'services.classify.slo'"), str(caught.value)
    as_dict["constraints"] = {"accelerators": ["H100-80G"]}
    as_dict["services"][0]["slo"] = {"latency_p99_s": 0.5}
    with pytest.raises(gpuwise.BadInputError) as caught:
        gpuwise.plan(as_dict)
    assert ":1:" not in str(caught.value) and "did you mean 'H100'" in str(caught.value), str(caught.value)


def test_a_long_call_releases_the_gil(spec_file):
    ticks = 0
    done = threading.Event()

    def run():
        gpuwise.simulate(spec_file, requests=400_000)
        done.set()

    worker = threading.Thread(target=run)
    worker.start()
    while not done.is_set():
        ticks += 1  # only runs while the simulation holds no GIL
        time.sleep(0.001)
    worker.join()
    assert ticks > 20


def test_ctrl_c_interrupts_a_long_simulation(spec_file):
    script = textwrap.dedent(f"""\
        import sys, time, gpuwise
        print("started", flush=True)
        start = time.monotonic()
        try:
            gpuwise.simulate({spec_file!r}, requests=200_000_000)
            print("finished")
        except KeyboardInterrupt:
            print("interrupted after", round(time.monotonic() - start, 1), flush=True)
        """)
    # SIGINT as a terminal leaves it: a harness that runs tests in the background starts them with
    # SIGINT ignored, and Python then installs no KeyboardInterrupt handler at all.
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=os.environ,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert child.stdout.readline().strip() == "started"
    time.sleep(1.0)
    child.send_signal(signal.SIGINT)
    out, _ = child.communicate(timeout=30)
    assert out.startswith("interrupted after"), out
    assert child.returncode == 0


def test_readme_sweep_runs_every_row():
    # The README's example, as written there: a plan-only spec swept over accelerators and batches.
    table = gpuwise.sweep(os.path.join(EXAMPLES, "chat-azure.yaml"),
                          {"services.chat.deployment.accelerator": ["A100-80GB", "H100"],
                           "services.chat.deployment.replicas": [2],
                           "services.chat.deployment.max_batch": [32, 64, 128]}, requests=1000)
    assert len(table) == 6 and all(row["error"] is None for row in table), [row["error"] for row in table]
    assert all(row["usd_per_month"] > 0 for row in table)


def test_sweep_equals_single_runs(spec_file):
    grid = {"services.classify.deployment.max_batch": [8, 32], "services.0.deployment.replicas": [1, 2]}
    base = gpuwise.specs.to_dict(spec_file)[0]
    base["services"][0]["deployment"] = {"accelerator": "T4", "replicas": 1, "batching": "dynamic", "max_batch": 8}
    table = gpuwise.sweep(base, grid, requests=2000, seed=5, threads=2)
    assert len(table) == 4 and all(row["error"] is None for row in table)
    for row, result in zip(table, table.results):
        one = json.loads(json.dumps(base))
        one["services"][0]["deployment"]["max_batch"] = row["services.classify.deployment.max_batch"]
        one["services"][0]["deployment"]["replicas"] = row["services.0.deployment.replicas"]
        assert result == gpuwise.simulate(one, requests=2000, seed=5)
        assert row["latency_p99_s"] == result["services"][0]["latency_s"]["p99"]
        # What it costs: two replicas cost twice one (whole one-GPU instances).
        assert row["usd_per_month"] == result["services"][0]["usd_per_month"] > 0
    by_replicas = {row["services.0.deployment.replicas"]: row["usd_per_month"] for row in table}
    assert by_replicas[2] == pytest.approx(2 * by_replicas[1])
    # A configuration the simulator refuses is a row with its error, not a failed sweep.
    failed = gpuwise.sweep(base, {"services.0.deployment.accelerator": ["T4", "NoSuchGPU"]}, requests=500)
    assert failed[0]["error"] is None and "NoSuchGPU" in failed[1]["error"]


def test_to_pandas_when_pandas_is_installed():
    pandas = pytest.importorskip("pandas")
    frame = gpuwise.fit("llama-3.1-8b").to_pandas()
    assert isinstance(frame, pandas.DataFrame) and len(frame) == len(gpuwise.fit("llama-3.1-8b")["fits"])
