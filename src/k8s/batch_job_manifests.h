// Kubernetes manifests for a planned batch job (the spec's batch_jobs): an Indexed Job, on the
// job's cron schedule a CronJob, whose pods are the plan's replicas, one part of the input each.
// A pod runs the serving engine as a native sidecar (vLLM, or Triton for other models) and a
// small driver beside it (the ConfigMap's run_batch.py) that sends its part's lines, as many at
// once as the replica's batch holds, and appends each answer to its output part; a second
// sidecar copies that output to object storage every 30 s and when the pod stops. A pod that a
// spot reclaim or a drain takes is replaced without counting as a failure (podFailurePolicy on
// DisruptionTarget), and its replacement fetches the output already copied and skips those
// lines: the work lost is what the last 30 s and the batch in flight held, as the plan assumed.
// The nodes come from the cloud's provisioner (Karpenter NodePool, or a GKE ComputeClass),
// spot first where the job is interruptible, and the pods ask Karpenter not to disrupt them.
#pragma once

#include <string>
#include <vector>

#include "k8s/manifests.h"

namespace gw {

struct BatchJobManifestInput {
  ManifestInput pod;                // the replica: model, image, engine settings, nodes, requests
  std::string schedule;             // cron, UTC; empty: a Job created per run
  double runs_per_month = 0;
  double deadline_hours = 0;        // from the start to the last item
  double run_hours = 0;             // as planned, reclaims' expected losses included
  double items = 0;
  double usd_per_run = 0;
  bool spot = false;                // the plan's pricing
  double usd_per_run_on_demand = 0; // the same nodes on demand, where spot is short
  std::string input_uri;            // prefix of the input parts (part-<index>.jsonl); empty: a placeholder
  std::string output_uri;           // prefix the answers go to, part by part; empty: a placeholder
};

std::vector<Manifest> batch_job_manifests(const BatchJobManifestInput& input);

// The driver each pod runs (python3, standard library only): INPUT and OUTPUT paths, SERVER,
// PROTOCOL (openai: OpenAI batch lines {custom_id, url, body}; kserve-v2: inference requests
// {id, inputs}, sent to /v2/models/MODEL/infer), CONCURRENCY. Exits 1 where a line could not be
// sent after retries (the index is retried and resumes).
const std::string& batch_driver_script();

}  // namespace gw
