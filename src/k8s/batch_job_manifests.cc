#include "k8s/batch_job_manifests.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/formatting.h"

namespace gw {
namespace {

constexpr const char* kDriver = R"PY(# Sends each line of INPUT to the engine beside it, CONCURRENCY at once, and appends each
# answer to OUTPUT. Lines whose id OUTPUT already holds (copied back after a reclaim) are
# not sent again. Written by gpuwise plan --emit-k8s.
import concurrent.futures, json, os, sys, threading, time, urllib.error, urllib.request

source, sink_path = os.environ["INPUT"], os.environ["OUTPUT"]
server = os.environ.get("SERVER", "http://localhost:8000")
openai = os.environ.get("PROTOCOL", "openai") == "openai"
model = os.environ.get("MODEL", "")
workers = int(os.environ.get("CONCURRENCY", "256"))
tries = int(os.environ.get("TRIES", "6"))  # per request, 1, 2, 4 ... 30 s apart
key = "custom_id" if openai else "id"

done = set()
if os.path.exists(sink_path):
    with open(sink_path, "rb+") as f:
        kept = f.read()
        f.truncate(kept.rfind(b"\n") + 1)  # a line cut short when the pod stopped: its request is sent again
    for line in kept.splitlines():
        try:
            done.add(json.loads(line)[key])
        except (ValueError, KeyError, TypeError):
            pass
lock = threading.Lock()
sink = open(sink_path, "a")
counts = {"sent": 0, "skipped": 0, "errors": 0}


def send(item):
    if openai:
        url, body = server + item.get("url", "/v1/chat/completions"), item["body"]
    else:
        url, body = server + "/v2/models/" + model + "/infer", item
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    for attempt in range(tries):
        try:
            with urllib.request.urlopen(request, timeout=3600) as reply:
                status, answer, error = reply.status, json.loads(reply.read()), None
            break
        except urllib.error.HTTPError as e:
            if e.code < 500 or attempt == tries - 1:  # the request's own fault: recorded, not retried
                status, answer, error = e.code, None, e.read().decode(errors="replace")
                break
        except (urllib.error.URLError, OSError):
            if attempt == tries - 1:
                raise
        time.sleep(min(30, 2 ** attempt))
    if openai:
        record = {"id": item[key], "custom_id": item[key], "response": {"status_code": status, "body": answer},
                  "error": None if error is None else {"message": error}}
    else:
        record = answer if error is None else {"id": item[key], "error": error, "status_code": status}
    with lock:
        sink.write(json.dumps(record) + "\n")
        sink.flush()
        counts["sent"] += 1
        counts["errors"] += error is not None


failed = 0
with open(source) as f, concurrent.futures.ThreadPoolExecutor(workers) as pool:
    pending = set()
    for line in f:
        if not line.strip():
            continue
        item = json.loads(line)
        if item.get(key) in done:
            counts["skipped"] += 1
            continue
        pending.add(pool.submit(send, item))
        if len(pending) >= 4 * workers:
            finished, pending = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
            failed += sum(1 for x in finished if x.exception())
    failed += sum(1 for x in concurrent.futures.wait(pending)[0] if x.exception())
print(f"sent {counts['sent']} ({counts['errors']} answered with an error), skipped {counts['skipped']} already done, "
      f"{failed} not sent", flush=True)
sys.exit(1 if failed else 0)
)PY";

// What the driver asks beside the engine, out of the replica's share of its node.
constexpr double kDriverCpu = 0.25;
constexpr double kDriverMemoryGib = 0.25;

std::string duration_s(double seconds) { return fmt::format("{}", static_cast<long long>(std::ceil(seconds))); }

bool on_gcs(const std::string& uri) { return uri.rfind("gs://", 0) == 0; }

// Copy one object (cp) with the cloud's CLI; optional: a missing source is no error.
std::string copy_command(const std::string& from, const std::string& to, bool optional) {
  const bool gcs = on_gcs(from) || on_gcs(to);
  const std::string cp = gcs ? fmt::format("gcloud storage cp {} {}", from, to) : fmt::format("aws s3 cp --only-show-errors {} {}", from, to);
  return optional ? "(" + cp + " 2>/dev/null || true)" : cp;
}

std::string cli_image(const std::string& uri) {
  return on_gcs(uri) ? "gcr.io/google.com/cloudsdktool/google-cloud-cli:slim" : "amazon/aws-cli:2.17.0";
}

std::string indented(const std::string& text, int indent) {
  const std::string pad(static_cast<size_t>(indent), ' ');
  std::istringstream in(text);
  std::string out, line;
  while (std::getline(in, line)) out += line.empty() ? "\n" : pad + line + "\n";
  return out;
}

std::string prefix_placeholder(const ManifestInput& in, const std::string& what) {
  return fmt::format("{}://YOUR-BUCKET/batch/{}/{}", in.cloud == "gcp" ? "gs" : "s3", dns_label(in.service), what);
}

// The engine, started before the driver and kept beside it (a native sidecar: restartPolicy
// Always; its startup probe holds the driver back until it serves). Pod-spec keys at column 0.
std::string engine_sidecar(const ManifestInput& in, const std::string& image, const std::string& target) {
  const std::string args =
      in.llm ? fmt::format("[--model, {0}, --served-model-name, {1}, --port, \"8000\", --tensor-parallel-size, \"{2}\", --max-num-seqs, "
                           "\"{3}\", --max-num-batched-tokens, \"{4}\", --gpu-memory-utilization, \"{5:.2f}\"]",
                           yaml_quoted(target), yaml_quoted(in.model_name), in.gpus_per_replica, in.max_batch, in.token_budget,
                           in.gpu_memory_utilization)
             : fmt::format("[tritonserver, --model-repository={}, --http-port=8000]", target);
  return fmt::format(
      "  - name: engine\n"
      "    image: {0}\n"
      "    restartPolicy: Always\n"
      "    args: {1}\n"
      "    ports: [{{name: http, containerPort: 8000}}]\n"
      "{2}"
      "    startupProbe:\n"
      "      httpGet: {{path: {3}, port: http}}\n"
      "      periodSeconds: {4}\n"
      "      failureThreshold: {5}\n",
      yaml_quoted(image), args, container_resources(in, 4), in.llm ? "/health" : "/v2/health/ready", kStartupProbePeriodS,
      startup_probe_failures(in));
}

}  // namespace

const std::string& batch_driver_script() {
  static const std::string script = kDriver;
  return script;
}

std::vector<Manifest> batch_job_manifests(const BatchJobManifestInput& b) {
  const ManifestInput& in = b.pod;
  const std::string name = dns_label(in.service);
  const std::string model = dns_label(in.model_name.empty() ? in.service : in.model_name);
  const std::string weights = weights_uri(in, model);
  const std::string target = "/models/" + model;
  const std::string image = serving_image(in);
  const std::string input = b.input_uri.empty() ? prefix_placeholder(in, "input") : b.input_uri;
  const std::string output = b.output_uri.empty() ? prefix_placeholder(in, "output") : b.output_uri;
  const std::string part = "part-${JOB_COMPLETION_INDEX}.jsonl";
  const std::string labels = pod_labels(name, in.role);
  std::vector<Manifest> out;

  std::string config = manifest_header(in, "ConfigMap (v1): the driver each pod of the batch job runs");
  config += "# It sends its part's lines to the engine beside it and appends each answer to its output part, skipping the\n"
            "# lines a reclaimed pod's output already holds. Python 3, standard library only.\n";
  config += fmt::format(
      "apiVersion: v1\n"
      "kind: ConfigMap\n"
      "metadata:\n"
      "  name: {0}-driver\n"
      "  labels: {{app.kubernetes.io/managed-by: gpuwise, {1}}}\n"
      "data:\n"
      "  run_batch.py: |\n"
      "{2}",
      name, labels, indented(batch_driver_script(), 4));
  out.push_back({name + "-driver-configmap.yaml", config, "run_batch.py, the driver each pod runs beside its engine"});

  // Started late, a run has the deadline less its planned hours to spare; past that, skip it.
  const double slack_s = std::max(60.0, (b.deadline_hours - b.run_hours) * 3600);
  const int replicas = in.replicas;
  std::string job = manifest_header(in, b.schedule.empty() ? "Job (batch/v1): one run of the batch job"
                                                           : "CronJob (batch/v1): the batch job on its schedule");
  job += fmt::format("# The plan: {} items by {:.3g} h after each start; {} replica(s) of {} x {} on {} node(s), {:.2f} h a run, "
                     "${:.4g} a run{}.\n",
                     format_number(b.items, 0), b.deadline_hours, replicas, in.gpus_per_replica, in.accelerator,
                     in.min_nodes, b.run_hours, b.usd_per_run, b.spot ? " on spot" : "");
  job += fmt::format("# Input: {0}, a line per item, each\n"
                     "# {1}: pod K (its JOB_COMPLETION_INDEX) takes part K. Answers go to {2}/part-K.jsonl.\n",
                     replicas == 1 ? fmt::format("one part, {}/part-0.jsonl", input)
                                   : fmt::format("split it into {} parts, {}/part-0.jsonl to part-{}.jsonl", replicas, input, replicas - 1),
                     in.llm ? fmt::format("an OpenAI batch line ({{\"custom_id\", \"url\", \"body\"}}, as vLLM's run-batch reads; body.model "
                                          "\"{}\", the name the engine serves)", in.model_name)
                            : fmt::format("a KServe v2 inference request ({{\"id\", \"inputs\"}}, as Triton's /v2/models/{}/infer takes)",
                                          in.model_name),
                     output);
  if (b.spot && b.usd_per_run_on_demand > 0)
    job += fmt::format("# Spot first: where spot is short the node provisioner starts the same nodes on demand, the run then\n"
                       "# costing up to ${:.4g}.\n", b.usd_per_run_on_demand);
  job += "# A pod a spot reclaim or a drain takes (condition DisruptionTarget) is replaced without counting against\n"
         "# its index's backoff; the replacement copies back the answers already uploaded and skips those lines.\n";
  job += fmt::format("# activeDeadlineSeconds: the {:.3g} h deadline (the run stops there, its nodes freed).{}\n", b.deadline_hours,
                     b.schedule.empty() ? "" : fmt::format(" startingDeadlineSeconds: the {:.0f} s the deadline leaves beyond the planned run.", slack_s));
  if (b.schedule.empty())
    job += "# No schedule in the spec: create one Job per run with kubectl create -f (generateName gives each its name).\n";
  if (!in.why_resources.empty())
    job += fmt::format("# Requests: {}; of each replica's share the driver takes {} CPU and {} MiB, the engine the rest.\n", in.why_resources,
                       kDriverCpu, kDriverMemoryGib * 1024);
  // The pod spec, keys at column 0, then placed at its depth: the Job's template at 2, the
  // CronJob's at 6; the pod spec 4 deeper.
  std::string spec = node_placement(in, 0) + weights_init_container(weights, target, 0);
  spec += fmt::format(
      "  - name: fetch-work\n"
      "    image: {0}\n"
      "    command: [sh, -c, {1}]\n"
      "    volumeMounts: [{{name: work, mountPath: /batch}}]\n",
      yaml_quoted(cli_image(input)),
      yaml_quoted(copy_command(input + "/" + part, "/batch/in.jsonl", false) + " && " +
                  copy_command(output + "/" + part, "/batch/out.jsonl", true)));
  // The replica's share of its node holds the engine and the driver (the uploader requests nothing).
  ManifestInput engine = in;
  engine.cpu_per_replica = std::max(0.5, in.cpu_per_replica - kDriverCpu);
  engine.memory_gib_per_replica = std::max(1.0, std::floor(in.memory_gib_per_replica) - std::ceil(kDriverMemoryGib));
  spec += engine_sidecar(engine, image, target);
  spec += fmt::format(
      "  - name: upload\n"
      "    image: {0}\n"
      "    restartPolicy: Always\n"
      "    command: [sh, -c, {1}]\n"
      "    volumeMounts: [{{name: work, mountPath: /batch}}]\n"
      "containers:\n"
      "  - name: driver\n"
      "    image: {2}\n"
      "    command: [python3, /driver/run_batch.py]\n"
      "    env:\n"
      "      - {{name: INPUT, value: /batch/in.jsonl}}\n"
      "      - {{name: OUTPUT, value: /batch/out.jsonl}}\n"
      "      - {{name: SERVER, value: \"http://localhost:8000\"}}\n"
      "      - {{name: PROTOCOL, value: {3}}}\n"
      "      - {{name: MODEL, value: {4}}}\n"
      "      - {{name: CONCURRENCY, value: \"{5}\"}}\n"
      "    resources: {{requests: {{cpu: {8}m, memory: {9}Mi}}}}\n"
      "    volumeMounts:\n"
      "      - {{name: work, mountPath: /batch}}\n"
      "      - {{name: driver, mountPath: /driver}}\n"
      "volumes:\n"
      "  - {{name: weights, emptyDir: {{}}}}\n"
      "  - {{name: shm, emptyDir: {{medium: Memory, sizeLimit: {6}Gi}}}}\n"
      "  - {{name: work, emptyDir: {{}}}}\n"
      "  - {{name: driver, configMap: {{name: {7}-driver}}}}\n",
      yaml_quoted(cli_image(output)),
      yaml_quoted(fmt::format("trap '{0}; exit 0' TERM; while true; do sleep 30 & wait $!; [ -f /batch/out.jsonl ] && {0}; done",
                              copy_command("/batch/out.jsonl", output + "/" + part, false))),
      yaml_quoted(image), in.llm ? "openai" : "kserve-v2", yaml_quoted(model), std::max(1, in.max_batch),
      static_cast<long long>(shm_gib(engine.memory_gib_per_replica)), name, static_cast<long long>(kDriverCpu * 1000),
      static_cast<long long>(kDriverMemoryGib * 1024));
  const int depth = b.schedule.empty() ? 2 : 6;  // the Job spec's keys
  const std::string job_spec = fmt::format(
      "completionMode: Indexed\n"
      "completions: {0}\n"
      "parallelism: {0}\n"
      "backoffLimitPerIndex: 3\n"
      "maxFailedIndexes: 0\n"
      "activeDeadlineSeconds: {1}\n"
      "ttlSecondsAfterFinished: 86400\n"
      "podFailurePolicy:\n"
      "  rules:\n"
      "    - action: Ignore\n"
      "      onPodConditions: [{{type: DisruptionTarget}}]\n"
      "template:\n"
      "  metadata:\n"
      "    labels: {{app.kubernetes.io/name: {2}, {3}}}\n"
      "    annotations: {{karpenter.sh/do-not-disrupt: \"true\"}}\n"
      "  spec:\n"
      "    restartPolicy: Never\n"
      "    terminationGracePeriodSeconds: 120\n",
      replicas, duration_s(b.deadline_hours * 3600), name, labels);
  const std::string body = indented(job_spec, depth) + indented(spec, depth + 4);
  if (b.schedule.empty()) {
    job += fmt::format(
        "apiVersion: batch/v1\n"
        "kind: Job\n"
        "metadata:\n"
        "  generateName: {0}-\n"
        "  labels: {{app.kubernetes.io/managed-by: gpuwise, {1}}}\n"
        "spec:\n"
        "{2}",
        name, labels, body);
    out.push_back({name + "-job.yaml", job,
                   fmt::format("an Indexed Job of {} pods, one part of the input each; create one per run", replicas)});
  } else {
    job += fmt::format(
        "apiVersion: batch/v1\n"
        "kind: CronJob\n"
        "metadata:\n"
        "  name: {0}\n"
        "  labels: {{app.kubernetes.io/managed-by: gpuwise, {1}}}\n"
        "spec:\n"
        "  schedule: {2}\n"
        "  timeZone: Etc/UTC\n"
        "  concurrencyPolicy: Forbid\n"
        "  startingDeadlineSeconds: {3}\n"
        "  successfulJobsHistoryLimit: 3\n"
        "  failedJobsHistoryLimit: 3\n"
        "  jobTemplate:\n"
        "    spec:\n"
        "{4}",
        name, labels, yaml_quoted(b.schedule), duration_s(slack_s), body);
    out.push_back({name + "-cronjob.yaml", job,
                   fmt::format("on '{}' (UTC): an Indexed Job of {} pods, one part of the input each", b.schedule, replicas)});
  }
  const int accelerators = replicas * in.gpus_per_replica;
  out.push_back(nodes_manifest(in, accelerators, fmt::format("{} replicas x {} {}", replicas, in.gpus_per_replica, accelerator_words(in)), name,
                               fmt::format("nodes of {} for {} {}{}", yaml_quoted_list(in.instance_types), accelerators, accelerator_words(in),
                                           b.spot ? ", spot first" : "")));
  return out;
}

}  // namespace gw
