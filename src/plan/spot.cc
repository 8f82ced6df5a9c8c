#include "plan/spot.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/text.h"
#include "core/random.h"

namespace gw {

ReclaimNotice reclaim_notice(std::string_view cloud) {
  // Read 2026-12-01.
  if (cloud == "aws") return {120, "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/spot-instance-termination-notices.html (two-minute warning)"};
  if (cloud == "gcp") return {30, "https://cloud.google.com/compute/docs/instances/spot#preemption-process (30 s)"};
  if (cloud == "azure") return {30, "https://learn.microsoft.com/azure/virtual-machines/spot-vms (eviction through Scheduled Events, at least 30 s)"};
  if (cloud == "runpod") return {5, "https://docs.runpod.io/pods/pricing (spot pods: SIGTERM, then SIGKILL after 5 s)"};
  return {0, "no published notice"};
}

double young_interval_s(double checkpoint_s, double mtbf_s) { return std::sqrt(2.0 * checkpoint_s * mtbf_s); }

double daly_interval_s(double delta, double m) {
  if (delta >= 2 * m) return m;
  double x = delta / (2 * m);
  return std::sqrt(2 * delta * m) * (1 + std::sqrt(x) / 3 + x / 9) - delta;
}

double expected_wall_time_s(double solve_s, double tau, double delta, double restart_s, double m) {
  return m * std::exp(restart_s / m) * (std::exp((tau + delta) / m) - 1) * solve_s / tau;
}

Result<SpotAvailability> load_spot_trace(const std::string& path) {
  std::string text, message;
  if (!read_file(path, text, message)) return Error{path, 0, "", "cannot read: " + message};
  try {
    auto doc = nlohmann::json::parse(text);
    SpotAvailability trace;
    if (!doc.contains("metadata") || !doc["metadata"].contains("gap_seconds"))
      return Error{path, 1, "metadata.gap_seconds", "required"};
    trace.gap_s = doc["metadata"]["gap_seconds"].get<double>();
    if (!(trace.gap_s > 0)) return Error{path, 1, "metadata.gap_seconds", "must be positive"};
    if (!doc.contains("data") || !doc["data"].is_array()) return Error{path, 1, "data", "expected an array of 0/1"};
    for (const auto& v : doc["data"]) {
      if (!v.is_number()) return Error{path, 1, "data", "expected numbers"};
      trace.available.push_back(v.get<double>() > 0 ? 1 : 0);
    }
    if (trace.available.empty()) return Error{path, 1, "data", "empty"};
    if (std::find(trace.available.begin(), trace.available.end(), 1) == trace.available.end())
      return Error{path, 1, "data", "capacity is never available in this trace"};
    return trace;
  } catch (const nlohmann::json::parse_error& e) {
    return Error{path, 0, "", "invalid JSON: " + without_exception_id(e.what())};
  } catch (const std::exception& e) {
    return Error{path, 0, "", "invalid JSON: " + without_exception_id(e.what())};
  }
}

std::string_view spot_policy_name(SpotPolicy policy) {
  switch (policy) {
    case SpotPolicy::spot_only: return "spot";
    case SpotPolicy::on_demand_only: return "on-demand";
    case SpotPolicy::deadline_aware: return "deadline-aware spot";
  }
  return "spot";
}

namespace {

// Capacity over time: exponential time to the next preemption, or a trace from an offset.
class Capacity {
 public:
  Capacity(const SpotRunInputs& in, Rng& rng) : in_(in), rng_(rng) {
    if (in_.trace) tick_ = static_cast<size_t>(rng_.uniform() * static_cast<double>(in_.trace->available.size()));
  }
  // Seconds until capacity is lost, from now (capacity present).
  double time_to_loss() {
    if (!in_.trace) return in_.preemptions_per_hour > 0 ? rng_.exponential(3600.0 / in_.preemptions_per_hour) : 1e300;
    double t = 0;
    const auto& a = in_.trace->available;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!a[(tick_ + i) % a.size()]) return t;
      t += in_.trace->gap_s;
    }
    return 1e300;  // always available
  }
  // Seconds until capacity returns, and moves the clock there.
  double wait_for_capacity() {
    if (!in_.trace) return 0;  // the exponential model has capacity back at once (restart covers it)
    double t = 0;
    const auto& a = in_.trace->available;
    while (!a[tick_ % a.size()]) {
      ++tick_;
      t += in_.trace->gap_s;
    }
    return t;
  }
  void advance(double seconds) {
    if (in_.trace) tick_ += static_cast<size_t>(seconds / in_.trace->gap_s);
  }

 private:
  const SpotRunInputs& in_;
  Rng& rng_;
  size_t tick_ = 0;
};

struct RunResult {
  double time_s = 0, usd = 0, on_demand_s = 0, spot_s = 0;
  int preemptions = 0;
};

RunResult one_run(const SpotRunInputs& in, SpotPolicy policy, Rng& rng) {
  RunResult r;
  if (policy == SpotPolicy::on_demand_only) {
    // No preemptions: checkpoints still cost their write time.
    double segments = std::ceil(in.work_s / in.interval_s);
    r.time_s = in.work_s + segments * in.checkpoint_s;
    r.on_demand_s = r.time_s;
    r.usd = r.time_s / 3600 * in.on_demand_usd_per_hour;
    return r;
  }
  Capacity capacity(in, rng);
  double done = 0;
  bool on_demand = false;
  capacity.wait_for_capacity();
  while (done < in.work_s - 1e-9) {
    if (policy == SpotPolicy::deadline_aware && !on_demand && in.deadline_s) {
      // Behind the uniform-progress line: finish on on-demand capacity.
      double remaining = in.work_s - done;
      double needed = remaining + std::ceil(remaining / in.interval_s) * in.checkpoint_s + in.restart_s;
      if (r.time_s + needed >= *in.deadline_s * 0.98 || done / in.work_s < r.time_s / *in.deadline_s - 0.05) {
        on_demand = true;
        r.time_s += in.restart_s;
        r.on_demand_s += in.restart_s;
      }
    }
    double segment = std::min(in.interval_s, in.work_s - done);
    double needed = segment + in.checkpoint_s;
    if (on_demand) {
      r.time_s += needed;
      r.on_demand_s += needed;
      done += segment;
      continue;
    }
    double loss = capacity.time_to_loss();
    if (loss >= needed) {
      r.time_s += needed;
      r.spot_s += needed;
      capacity.advance(needed);
      done += segment;
      continue;
    }
    // Preempted: the segment since the last checkpoint is lost; wait for capacity, restart.
    ++r.preemptions;
    r.time_s += loss;
    r.spot_s += loss;
    capacity.advance(loss);
    r.time_s += capacity.wait_for_capacity();
    // The restart itself can be preempted too (exponential model).
    while (true) {
      double next = capacity.time_to_loss();
      if (next >= in.restart_s) {
        r.time_s += in.restart_s;
        r.spot_s += in.restart_s;
        capacity.advance(in.restart_s);
        break;
      }
      ++r.preemptions;
      r.time_s += next;
      r.spot_s += next;
      capacity.advance(next);
      r.time_s += capacity.wait_for_capacity();
    }
  }
  r.usd = r.spot_s / 3600 * in.spot_usd_per_hour + r.on_demand_s / 3600 * in.on_demand_usd_per_hour;
  return r;
}

double percentile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  size_t index = static_cast<size_t>(std::ceil(q * static_cast<double>(values.size()))) - 1;
  return values[std::min(index, values.size() - 1)];
}

}  // namespace

SpotOutcome simulate_spot(const SpotRunInputs& in, SpotPolicy policy, int runs, unsigned long long seed) {
  Rng rng(seed);
  std::vector<double> times, costs;
  double preemptions = 0, met = 0, on_demand = 0, billed = 0;
  for (int i = 0; i < runs; ++i) {
    RunResult r = one_run(in, policy, rng);
    times.push_back(r.time_s);
    costs.push_back(r.usd);
    preemptions += r.preemptions;
    on_demand += r.on_demand_s;
    billed += r.on_demand_s + r.spot_s;
    if (!in.deadline_s || r.time_s <= *in.deadline_s) ++met;
  }
  SpotOutcome out;
  out.policy = policy;
  double n = std::max(1, runs);
  for (double t : times) out.mean_time_s += t / n;
  for (double c : costs) out.mean_usd += c / n;
  out.times_s = times;  // before percentile() sorts its copy
  out.p90_time_s = percentile(times, 0.9);
  out.p90_usd = percentile(costs, 0.9);
  out.mean_preemptions = preemptions / n;
  out.deadline_met_fraction = met / n;
  out.on_demand_share = billed > 0 ? on_demand / billed : 0;
  return out;
}

}  // namespace gw
