// A mix of accelerator types for one LLM service, by request size (as Mélange, 2024, does):
// requests fall into buckets by prompt length (quantiles of the service's own sample, with the
// outputs that came with them when a trace gives pairs); each bucket's capacity per replica at
// the SLO comes from the planner on each type; each bucket goes wholly to one type, and a type's
// replicas carry the buckets it holds at the utilization limit. The cheapest assignment is a
// small MILP (GLPK); brute force over every bucket-to-type choice checks it; the best single
// type is the baseline.
#pragma once

#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "core/error.h"
#include "perf/efficiency.h"
#include "spec/spec.h"

namespace gw {

struct BucketOption {
  std::string accelerator;        // type and tensor parallelism, as a replica
  int tensor_parallel = 1;
  double usd_per_replica_hour = 0;
  double capacity_rps = 0;        // per replica, this bucket's requests only, at utilization 1
  int pipeline_parallel = 1;      // nodes a replica spans (Configuration::pipeline_parallel)
};

// "H100 tp2", or "H100 tp8 pp2" for a replica across nodes: what makes two options one type.
std::string type_key(const BucketOption& o);

struct RequestBucket {
  double input_from = 0, input_to = 0;  // prompt tokens
  double mean_input = 0, mean_output = 0;
  double share = 0;                     // of requests
  double peak_rps = 0;
  std::vector<BucketOption> options;    // one per replica type meeting the SLO for this bucket
};

struct BucketAssignment {
  std::vector<int> option_of_bucket;    // index into each bucket's options
  std::vector<std::pair<std::string, int>> replicas;  // per replica type ("L4 tp1"): count
  double usd_per_month = 0;
  std::string method;
};

// Buckets with their options from the planner (screen at each bucket's peak share).
Result<std::vector<RequestBucket>> request_buckets(const Catalog& catalog, const Spec& spec, const ServiceSpec& service, int buckets,
                                                   const Calibration* calibration);

Result<BucketAssignment> assign_buckets_exact(const std::vector<RequestBucket>& buckets, double max_utilization);
BucketAssignment assign_buckets_brute_force(const std::vector<RequestBucket>& buckets, double max_utilization);
// Every bucket on the same replica type: the cheapest such type.
BucketAssignment best_single_type(const std::vector<RequestBucket>& buckets, double max_utilization);

}  // namespace gw
