#include "audit/audit.h"

#include <array>

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <tuple>

#include "core/money.h"
#include "core/text.h"

namespace gw {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// The cheapest on-demand price per device-hour of an accelerator in the catalog.
// The cheapest on-demand price per device-hour of an accelerator, with the offering it comes
// from; on one cloud and host CPU architecture where `like` (what runs now) is given: a move
// keeps the account and the container image that run.
struct DevicePrice {
  double usd_per_gpu_hour = 0;
  const Offering* offering = nullptr;
};
std::optional<DevicePrice> catalog_price(const Catalog& catalog, const Accelerator& accelerator, const Offering* like) {
  OfferingFilter filter;
  filter.accelerators = {accelerator.name};
  filter.complete_prices_only = true;
  if (like) filter.clouds = {like->cloud};
  std::optional<DevicePrice> best;
  for (const Offering* o : catalog.select(filter)) {
    if (!o->on_demand_usd_per_hour) continue;
    if (like && cpu_architecture(*o) != cpu_architecture(*like)) continue;
    double per_device = *o->on_demand_usd_per_hour / o->accelerator_count;
    if (!best || per_device < best->usd_per_gpu_hour) best = DevicePrice{per_device, o};
  }
  return best;
}

// The cheapest on-demand price per device-hour of an instance type, with the offering.
const Offering* instance_offering(const Catalog& catalog, const std::string& instance_type) {
  const Offering* best = nullptr;
  for (const Offering& o : catalog.offerings()) {
    if (o.instance_type != instance_type || !o.on_demand_usd_per_hour || o.accelerator_count <= 0) continue;
    if (!best || *o.on_demand_usd_per_hour < *best->on_demand_usd_per_hour) best = &o;
  }
  return best;
}

// What the audit asks the catalog for every series, answered once per audit: 10,000 series ask
// the same few questions (an accelerator's cheapest price, a model name's accelerator, an
// instance type's offering), each a walk over the catalog.
class CatalogLookups {
 public:
  explicit CatalogLookups(const Catalog& catalog) : catalog_(catalog) {}
  const Catalog& catalog() const { return catalog_; }
  std::optional<DevicePrice> price(const Accelerator& accelerator, const Offering* like = nullptr) {
    // Views into the catalog's offerings and cpu_architecture's literals: no string built per series.
    const PriceKey key{&accelerator, like ? std::string_view(like->cloud) : std::string_view(),
                       like ? cpu_architecture(*like) : std::string_view()};
    auto [it, fresh] = prices_.try_emplace(key);
    if (fresh) it->second = catalog_price(catalog_, accelerator, like);
    return it->second;
  }
  const Accelerator* of_model(const std::string& model);
  const Offering* offering(const std::string& instance_type) {
    auto [it, fresh] = offerings_.try_emplace(instance_type);
    if (fresh) it->second = instance_offering(catalog_, instance_type);
    return it->second;
  }

 private:
  const Catalog& catalog_;
  using PriceKey = std::tuple<const Accelerator*, std::string_view, std::string_view>;  // accelerator, cloud, CPU architecture
  std::map<PriceKey, std::optional<DevicePrice>> prices_;
  std::map<std::string, const Accelerator*> models_;
  std::map<std::string, const Offering*> offerings_;
};

// Throughput a series' work needs, in devices of `to`, running at `target_share` busy: its
// compute (tensor or SM activity where measured, else the duty cycle) and its memory traffic
// (DRAM activity where measured, else the duty cycle), each scaled by the two devices' peaks;
// over_mean scales the work to an hour busier than the mean (the busiest hour over the mean).
std::optional<double> devices_needed(const SeriesReport& s, const Accelerator& from, const Accelerator& to,
                                     double target_share, double over_mean = 1) {
  auto fp16 = [](const Accelerator& a) { return a.peak(Precision::fp16) ? a.peak(Precision::fp16) : a.peak(Precision::bf16); };
  if (!fp16(from) || !fp16(to) || from.memory_gb_per_s <= 0 || to.memory_gb_per_s <= 0) return std::nullopt;
  double busy = s.mean_util_pct / 100;
  double compute = (s.mean_tensor_active ? *s.mean_tensor_active : s.mean_sm_active ? *s.mean_sm_active : busy) * over_mean;
  double by_compute = std::min(1.0, compute) * *fp16(from) / *fp16(to);
  double traffic = (s.mean_dram_active ? *s.mean_dram_active : busy) * over_mean;
  double by_bandwidth = std::min(1.0, traffic) * from.memory_gb_per_s / to.memory_gb_per_s;
  return std::max(by_compute, by_bandwidth) / target_share;
}

// The duty cycle of a series' busiest hour of the week, over the hours with at least half the
// median hour's samples (the mean where none has data): a move must carry the busy hours, not
// the average of busy days and idle nights.
double busiest_hour_util_pct(const SeriesAggregate& a, double mean_util_pct) {
  std::vector<long long> counts;
  for (size_t h = 0; h < 168; ++h)
    if (a.hour_count[h] > 0) counts.push_back(a.hour_count[h]);
  if (counts.empty()) return mean_util_pct;
  std::nth_element(counts.begin(), counts.begin() + counts.size() / 2, counts.end());
  const long long median = counts[counts.size() / 2];
  double busiest = mean_util_pct;
  for (size_t h = 0; h < 168; ++h)
    if (a.hour_count[h] > 0 && 2 * a.hour_count[h] >= median)
      busiest = std::max(busiest, a.hour_sum[h] / static_cast<double>(a.hour_count[h]));
  return busiest;
}

// "NVIDIA A100-SXM4-80GB" -> A100-80GB; "Tesla T4" -> T4.
const Accelerator* accelerator_from_model(const Catalog& catalog, std::string model) {
  for (const char* prefix : {"NVIDIA ", "Tesla ", "AMD Instinct ", "Intel "})
    if (model.rfind(prefix, 0) == 0) model = model.substr(std::string(prefix).size());
  if (const Accelerator* a = catalog.find_accelerator(model)) return a;
  std::string n = normalize_name(model);
  const Accelerator* best = nullptr;
  for (const auto& a : catalog.accelerators()) {
    std::string name = normalize_name(a.name);
    // The catalog name's parts all appear in the model string (A100 + 80GB in A100SXM480GB).
    bool all = true;
    for (const auto& part : split(to_lower(a.name), '-'))
      if (!part.empty() && n.find(normalize_name(part)) == std::string::npos) all = false;
    if (all && (!best || name.size() > normalize_name(best->name).size())) best = &a;
  }
  return best;
}

const Accelerator* CatalogLookups::of_model(const std::string& model) {
  auto [it, fresh] = models_.try_emplace(model);
  if (fresh) it->second = accelerator_from_model(catalog_, model);
  return it->second;
}

// An exporter whose numbers cannot be acted on: no dollars, high confidence.
Finding bad_exporter(const std::string& scope, std::string evidence, std::string recommendation) {
  Finding f;
  f.kind = "bad_exporter";
  f.scope = scope;
  f.evidence = std::move(evidence);
  f.recommendation = std::move(recommendation);
  f.confidence = "high";
  return f;
}

std::string scope_of(const SeriesReport& s) {
  std::string out;
  for (const auto& [k, v] : s.labels) {
    if (k == "model") continue;
    out += (out.empty() ? "" : " ") + k + "=" + std::string(utf8_prefix(v, 12));
  }
  return out.empty() ? s.id : out;
}

// Starved: the GPU waits on its input. CPU-bound when the host's CPUs are busy (not counting
// I/O wait); I/O-bound when they wait on storage. The CPUs a right-sized host needs scale with
// the duty cycle the GPU should reach: a pipeline that feeds 25% with 8 busy CPUs needs about
// 8 x 70/25 to feed 70%, run at the headroom share.
std::optional<Finding> starved_finding(const SeriesReport& s, const AuditOptions& o) {
  if (s.mean_util_pct >= o.underused_pct || !s.host_cpu_util_pct) return std::nullopt;
  double iowait = s.host_iowait_pct.value_or(0);
  double compute_pct = std::max(0.0, *s.host_cpu_util_pct - iowait);
  bool cpu_bound = compute_pct > o.starved_cpu_pct;
  bool io_bound = iowait > o.starved_iowait_pct;
  if (!cpu_bound && !io_bound) return std::nullopt;
  Finding f;
  f.kind = "starved";
  f.confidence = "medium";
  f.waste_usd_per_month = s.usd_per_month * (1 - s.mean_util_pct / o.target_util_pct);
  std::string cpus = s.host_cpus ? fmt::format(" of {} CPUs", *s.host_cpus) : "";
  f.evidence = fmt::format("duty cycle {:.1f}% while the host CPU is {:.0f}% busy{} and {:.0f}% waiting on I/O", s.mean_util_pct,
                           compute_pct, cpus, iowait);
  // CPUs needed to feed the GPU at the target duty cycle, run at the headroom share.
  std::optional<int> needed;
  if (s.host_cpus && s.mean_util_pct > 0.5)
    needed = std::max(1, static_cast<int>(std::ceil(*s.host_cpus * compute_pct / 100 * (o.target_util_pct / s.mean_util_pct) /
                                                    (o.host_cpu_headroom_pct / 100) - 1e-9)));
  if (cpu_bound) {
    f.recommendation = "the input pipeline is CPU-bound: move decoding and augmentation to the GPU or to more loader "
                       "processes on a host with more CPUs per GPU before buying GPUs; a smaller host would not do";
    if (needed && s.host_cpus && *needed > *s.host_cpus)
      f.recommendation += fmt::format(" (about {} CPUs feed it at {:.0f}%, against {} now)", *needed, o.target_util_pct, *s.host_cpus);
  } else {
    f.recommendation = "the input pipeline waits on storage: stage the data on local NVMe, prefetch, or read larger shards "
                       "before buying GPUs";
    if (needed && s.host_cpus && *needed < *s.host_cpus)
      f.recommendation += fmt::format("; a smaller host would do: about {} CPUs feed it at {:.0f}%, against {} now", *needed,
                                      o.target_util_pct, *s.host_cpus);
    else if (compute_pct < 30 && !s.host_cpus)
      f.recommendation += fmt::format("; its CPUs are {:.0f}% busy, so a smaller host would likely do", compute_pct);
    else
      f.recommendation += "; keep the host's size: its CPUs will be needed once storage keeps up";
  }
  return f;
}

// The accelerator a series ran on and its price per GPU-hour: given, the instance type's
// (--offering or the series' label), or, labelled as a fallback, the catalog's cheapest
// offering of the accelerator. Where the price came from goes into s.price_source.
struct SeriesPrice {
  const Accelerator* accelerator = nullptr;
  std::optional<double> usd_per_gpu_hour;
  const Offering* running = nullptr;  // the instance type that runs, where known
};

std::string host_of(const SeriesAggregate& a) { return a.label("hostname").empty() ? a.label("host") : a.label("hostname"); }

Result<SeriesPrice> price_series(const SeriesAggregate& a, CatalogLookups& catalog, const AuditOptions& o,
                                 const Accelerator* fallback, int gpus_on_host, SeriesReport& s, AuditReport& report) {
  SeriesPrice out;
  const Accelerator*& accelerator = out.accelerator;
  std::optional<double>& price = out.usd_per_gpu_hour;
  accelerator = fallback;
  if (!accelerator && !a.label("model").empty()) accelerator = catalog.of_model(a.label("model"));
  price = o.usd_per_gpu_hour;
  std::string instance_type = o.offering.empty() ? a.label("instance_type") : o.offering;
  const Offering* running = instance_type.empty() ? nullptr : catalog.offering(instance_type);
  if (!o.offering.empty() && !running)
    return Error{"", 0, "--offering", "no instance type '" + o.offering + "' with an on-demand price in the catalog"};
  if (running && !accelerator) accelerator = catalog.catalog().find_accelerator(running->accelerator);
  out.running = running;
  if (!price && running) {
    price = *running->on_demand_usd_per_hour / running->accelerator_count;
    s.price_source = fmt::format("{} on demand", running->instance_type);
  } else if (!price && accelerator) {
    if (auto cheapest = catalog.price(*accelerator)) price = cheapest->usd_per_gpu_hour;
    if (price) {
      s.price_source = fmt::format("the catalog's cheapest {} (fallback: give --offering or an instance_type label)", accelerator->name);
      ++report.priced_by_fallback;
    }
  } else if (price) {
    s.price_source = "given";
  }
  if (price && o.host_usd_per_hour) {
    // The host VM's price, shared by the GPUs on it.
    *price += *o.host_usd_per_hour / std::max(1, gpus_on_host);
    s.price_source += fmt::format(" + the host VM's ${:.4g}/h shared by {} GPU(s)", *o.host_usd_per_hour, std::max(1, gpus_on_host));
  } else if (running && running->gpu_only_price) {
    ++report.gpu_only_prices;
    s.price_source += " (the GPU alone: its host VM is priced apart; --host-usd-per-hour adds it)";
  }
  if (accelerator) s.accelerator = accelerator->name;
  return out;
}

// The host's CPU and I/O wait: the series' own, or a node_exporter series on the same host.
void join_host(const SeriesAggregate& a, const std::map<std::string, const SeriesAggregate*>& hosts, SeriesReport& s) {
  const SeriesAggregate* host = &a;
  if (a.cpu_samples == 0 && a.iowait_samples == 0) {
    std::string name = host_of(a);
    auto it = hosts.find(name);
    host = it == hosts.end() || name.empty() ? nullptr : it->second;
  }
  if (host && host->cpu_samples > 0) s.host_cpu_util_pct = host->cpu_sum / host->cpu_samples;
  if (host && host->iowait_samples > 0) s.host_iowait_pct = host->iowait_sum / host->iowait_samples;
  if (host && host->host_cpus > 0) s.host_cpus = host->host_cpus;
}

// Over half its memory in use at peak: another workload's copy would not fit beside it.
constexpr double kUnshareableMemoryShare = 0.5;

// What the duty cycle says of one series: too little data, idle, idle on a schedule, starved,
// under-used, inefficient or healthy. Under-used series are counted into report and underused_util
// (one that holds most of its memory as a whole GPU at the target: its work cannot share one).
Finding utilization_finding(const SeriesAggregate& a, const SeriesReport& s, const AuditOptions& o, bool priced,
                            double device_memory_bytes, AuditReport& report, double& underused_util) {
  Finding f;
  f.scope = scope_of(s);
  if (a.util_samples == 0) {
    // Memory alone says nothing of how busy the GPU is: no mean, no idle or under-used verdict.
    f.kind = "insufficient_data";
    f.evidence = "memory samples only: no duty cycle (DCGM_FI_DEV_GPU_UTIL or nvidia-smi utilization.gpu) was recorded";
    f.recommendation = "record the duty cycle too; the memory figures still size the VRAM";
    f.confidence = "low";
    return f;
  }
  if (s.coverage_hours < o.min_coverage_hours) {
    f.kind = "insufficient_data";
    f.evidence = fmt::format("{:.2f} hours of data, below the {:.0f} needed{}", s.coverage_hours, o.min_coverage_hours,
                             s.gaps > 0 ? fmt::format(" ({} gap{} totalling {:.2f} h not counted)", s.gaps,
                                                      s.gaps == 1 ? "" : "s", s.gap_hours)
                                        : std::string());
    f.recommendation = fmt::format("collect more telemetry before acting, or lower the bar with --min-coverage-hours (now {:.0f}): a "
                                   "finding on {:.1f} hours judges that stretch only",
                                   o.min_coverage_hours, s.coverage_hours);
    f.confidence = "low";
    return f;
  }
  if (!priced) f.evidence = "(no price: give --usd-per-gpu-hour or --accelerator) ";
  // Idle on a schedule: some hours of the week are idle, others busy.
  int idle_hours = 0, busy_hours = 0;
  for (size_t h = 0; h < 168; ++h) {
    if (a.hour_count[h] == 0) continue;
    double mean = a.hour_sum[h] / static_cast<double>(a.hour_count[h]);
    (mean < 5 ? idle_hours : busy_hours) += 1;
  }
  if (s.mean_util_pct < 5 && a.util_samples > 0) {
    f.kind = "idle";
    f.evidence += fmt::format("mean duty cycle {:.1f}%, {:.0f}% of samples idle, over {:.0f} hours", s.mean_util_pct,
                              s.idle_fraction * 100, s.coverage_hours);
    f.waste_usd_per_month = s.usd_per_month * (1 - s.mean_util_pct / 100);
    f.recommendation = "shut it down, or scale it to zero and start on demand";
    f.confidence = s.idle_fraction > 0.95 ? "high" : "medium";
  } else if (idle_hours >= 24 && busy_hours > 0 && s.idle_fraction > 0.3) {
    f.kind = "idle_schedule";
    double share = static_cast<double>(idle_hours) / (idle_hours + busy_hours);
    f.evidence += fmt::format("idle in {} of {} hours of the week with data (nights or weekends)", idle_hours,
                              idle_hours + busy_hours);
    f.waste_usd_per_month = s.usd_per_month * share;
    f.recommendation = "scale to zero on a schedule for the idle hours";
    f.confidence = "medium";
  } else if (auto starved = starved_finding(s, o)) {
    starved->evidence = f.evidence + starved->evidence;
    starved->scope = f.scope;
    f = *starved;
  } else if (s.mean_util_pct < o.underused_pct && a.util_samples > 0) {
    f.kind = "underused";
    ++report.underused_gpus;
    f.evidence += fmt::format("mean duty cycle {:.1f}% (under {:.0f}%)", s.mean_util_pct, o.underused_pct);
    f.waste_usd_per_month = s.usd_per_month * (1 - s.mean_util_pct / o.target_util_pct);
    const bool memory_bound = device_memory_bytes > 0 && s.peak_memory_bytes > kUnshareableMemoryShare * device_memory_bytes;
    if (memory_bound) {
      underused_util += o.target_util_pct;
      f.evidence += fmt::format(", {:.1f} of {:.1f} GiB in use at peak", s.peak_memory_bytes / kGiB, device_memory_bytes / kGiB);
      f.recommendation = "give it more of the work (batch more requests per step, fewer replicas beside it): its memory leaves no "
                         "room to share the GPU";
    } else {
      underused_util += s.mean_util_pct;
      f.recommendation = "consolidate: its work fits on a share of a GPU (batch requests, or share the GPU)";
    }
    f.confidence = "medium";
  } else if (a.sm_samples > 0 && s.mean_util_pct > 80 && a.sm_sum / a.sm_samples < 0.3) {
    f.kind = "inefficient";
    f.evidence += fmt::format("busy {:.0f}% of the time but SM activity {:.0f}%", s.mean_util_pct, a.sm_sum / a.sm_samples * 100);
    f.recommendation = "profile the kernels: small batches or launch-bound code leave the SMs idle";
    f.confidence = "medium";
  } else {
    f.kind = "healthy";
    f.evidence += fmt::format("mean duty cycle {:.1f}%", s.mean_util_pct);
    f.recommendation = "none";
    f.confidence = "high";
  }
  return f;
}

// The smallest devices of the named one's vendor that hold a peak, up to three ("L20, A40,
// L40S"), or "" where none does (then the figure is no device's).
std::string devices_that_hold(const Catalog& catalog, double peak_bytes, const Accelerator& named) {
  std::vector<const Accelerator*> holders;
  for (const auto& candidate : catalog.accelerators())
    if (candidate.vendor == named.vendor && candidate.memory_bytes() >= peak_bytes) holders.push_back(&candidate);
  std::sort(holders.begin(), holders.end(), [](const Accelerator* a, const Accelerator* b) {
    return a->memory_bytes() != b->memory_bytes() ? a->memory_bytes() < b->memory_bytes() : a->name < b->name;
  });
  std::vector<std::string> names;
  for (size_t i = 0; i < holders.size() && i < 3; ++i) names.push_back(holders[i]->name);
  return join_list(names);
}

// VRAM oversized: the peak fits a cheaper accelerator with 20% headroom, and enough of them
// carry the work's compute and memory traffic at the target duty cycle.
std::optional<Finding> vram_finding(const SeriesReport& s, const Accelerator& accelerator, double price, const Offering* running,
                                    CatalogLookups& catalog, const AuditOptions& o) {
  double need_gib = s.peak_memory_bytes / kGiB * 1.2;
  // Sized for the busiest hour of the week: a GPU busy by day and idle by night needs by day
  // what the day needs. Priced on the cloud and host architecture that run it where known.
  const double busiest_pct = s.busiest_hour_util_pct;
  const double over_mean = s.mean_util_pct > 0 ? busiest_pct / s.mean_util_pct : 1;
  const Accelerator* cheaper = nullptr;
  const Offering* cheaper_offering = nullptr;
  double cheaper_price = 0, cheaper_total = price * 0.9;
  int cheaper_count = 0;
  for (const auto& candidate : catalog.catalog().accelerators()) {
    if (candidate.reported_gib() < need_gib || &candidate == &accelerator) continue;
    auto p = catalog.price(candidate, running);
    auto needed = devices_needed(s, accelerator, candidate, o.target_util_pct / 100, over_mean);
    if (!p || !needed) continue;
    if (!(*needed < 1e6)) continue;  // not a move anyone would make (and no int overflow)
    int count = std::max(1, static_cast<int>(std::ceil(*needed - 1e-9)));
    const double total = p->usd_per_gpu_hour * count;
    // Ties go to the name: the finding must not depend on the catalog's order.
    if (total < cheaper_total - 1e-9 || (cheaper && std::abs(total - cheaper_total) <= 1e-9 && candidate.name < cheaper->name)) {
      cheaper = &candidate;
      cheaper_offering = p->offering;
      cheaper_price = p->usd_per_gpu_hour;
      cheaper_count = count;
      cheaper_total = total;
    }
  }
  if (!cheaper || accelerator.reported_gib() <= need_gib * 1.5) return std::nullopt;
  Finding v;
  v.kind = "vram_oversized";
  v.scope = scope_of(s);
  v.evidence = fmt::format("peak memory {:.1f} GiB of {:.1f} GiB, {:.0f}% busy{}", s.peak_memory_bytes / kGiB,
                           accelerator.reported_gib(), s.mean_util_pct,
                           busiest_pct > s.mean_util_pct + 0.5 ? fmt::format(" ({:.0f}% in its busiest hour)", busiest_pct) : "");
  v.waste_usd_per_month = (price - cheaper_total) * kHoursPerMonth * s.billed_share;
  v.recommendation = fmt::format(
      "move to {} x {} ({:.1f} GiB each, ${:.2f}/hour each on {} {}{}: ${:.2f}/hour against ${:.2f}/hour for {}){}", cheaper_count,
      cheaper->name, cheaper->reported_gib(), cheaper_price, cheaper_offering->cloud, cheaper_offering->instance_type,
      !running && cpu_architecture(*cheaper_offering) == "arm64" ? ", an arm64 host: the image must be built for it" : "",
      cheaper_total, price, s.price_source,
      cheaper_count > 1 ? fmt::format("; {} carry its compute and memory traffic in its busiest hour at {:.0f}% busy, sharing its work",
                                      cheaper_count, o.target_util_pct)
                        : std::string());
  v.confidence = s.coverage_hours >= o.min_coverage_hours * 2 ? "high" : "medium";
  return v;
}

// A busy job on a schedule: what a run costs, and what it would cost on the accelerator that
// runs it for least (its compute and memory traffic scaled by the peaks, the idle share of the
// run unchanged). A finding when that is at least 10% cheaper; otherwise the figures go into the
// healthy finding's evidence.
struct RunCost {
  double hours = 0, usd = 0, runs_per_month = 0;
  const Accelerator* alternative = nullptr;
  double alternative_hours = 0, alternative_usd = 0, alternative_price = 0;
};

std::optional<RunCost> run_cost(const SeriesReport& s, const Accelerator& accelerator, double price, CatalogLookups& catalog,
                                double log_span_h) {
  if (!s.util_measured || s.billed_share >= 1 || log_span_h <= 0) return std::nullopt;
  RunCost r;
  const double runs = static_cast<double>(s.gaps + 1);
  r.hours = s.coverage_hours / runs;
  r.usd = price * r.hours;
  r.runs_per_month = runs / log_span_h * kHoursPerMonth;
  const double busy = s.mean_util_pct / 100;
  const double need_gib = s.peak_memory_bytes / kGiB * 1.2;
  for (const auto& candidate : catalog.catalog().accelerators()) {
    if (&candidate == &accelerator || candidate.reported_gib() < need_gib) continue;
    auto device = catalog.price(candidate);
    auto needed = devices_needed(s, accelerator, candidate, 1.0);
    if (!device || !needed || *needed >= 1e6) continue;
    const std::optional<double> p = device->usd_per_gpu_hour;
    const double hours = r.hours * ((1 - busy) + *needed);
    // Ties go to the name: the finding must not depend on the catalog's order.
    if (!r.alternative || *p * hours < r.alternative_usd - 1e-12 ||
        (std::abs(*p * hours - r.alternative_usd) <= 1e-12 && candidate.name < r.alternative->name))
      r.alternative = &candidate, r.alternative_hours = hours, r.alternative_usd = *p * hours, r.alternative_price = *p;
  }
  return r;
}

std::string run_cost_text(const RunCost& r, const Accelerator& accelerator) {
  std::string out = fmt::format("{:.2f} h and ${:.2f} per run on {} ({:.1f} runs a month)", r.hours, r.usd, accelerator.name,
                                r.runs_per_month);
  if (r.alternative)
    out += fmt::format("; on {} (${:.2f}/h) a run would take {:.2f} h and cost ${:.2f}", r.alternative->name, r.alternative_price,
                       r.alternative_hours, r.alternative_usd);
  return out;
}

// The fleet's sums over its series.
struct FleetTotals {
  double util_sum = 0, idle_sum = 0, util_count = 0, requests_per_s = 0, priced_for_requests = 0, underused_util = 0;
  std::array<double, 168> hour_idle{}, hour_count{}, hour_idle_usd{}, hour_util_pct_sum{}, hour_gpus{};
  // Each group's idle and all samples by hour of the week.
  std::map<const Attribution*, std::pair<std::array<double, 168>, std::array<double, 168>>> group_hours;
};

// Idle samples over samples in each hour of the week; -1 where there were none.
std::vector<double> idle_ratios(const std::array<double, 168>& idle, const std::array<double, 168>& count) {
  std::vector<double> out(168, -1);
  for (size_t h = 0; h < 168; ++h)
    if (count[h] > 0) out[h] = idle[h] / count[h];
  return out;
}

// Fleet figures, findings by waste, attribution by cost, and the assumptions.
void summarize(AuditReport& report, std::map<std::string, Attribution>& groups, const FleetTotals& t, const AuditOptions& o) {
  report.mean_util_pct = t.util_count > 0 ? t.util_sum / t.util_count : 0;
  report.underused_fit_on = static_cast<int>(std::ceil(t.underused_util / o.target_util_pct - 1e-9));
  if (t.requests_per_s > 0) report.usd_per_1k_inferences = t.priced_for_requests / kHoursPerMonth / (t.requests_per_s * 3600) * 1000;
  report.idle_sample_fraction = t.util_count > 0 ? t.idle_sum / t.util_count : 0;
  report.hour_of_week_idle_ratio = idle_ratios(t.hour_idle, t.hour_count);
  report.hour_of_week_idle_usd_per_hour.assign(t.hour_idle_usd.begin(), t.hour_idle_usd.end());
  report.hour_of_week_util_pct.assign(168, -1);
  for (size_t h = 0; h < 168; ++h)
    if (t.hour_gpus[h] > 0) report.hour_of_week_util_pct[h] = t.hour_util_pct_sum[h] / t.hour_gpus[h];
  // One recoverable amount per series: the largest of its findings.
  std::map<std::string, double> per_scope;
  for (const auto& f : report.findings) per_scope[f.scope] = std::max(per_scope[f.scope], f.waste_usd_per_month);
  for (const auto& [scope, waste] : per_scope) report.recoverable_usd_per_month += waste;
  std::stable_sort(report.findings.begin(), report.findings.end(),
                   [](const Finding& a, const Finding& b) { return a.waste_usd_per_month > b.waste_usd_per_month; });
  for (auto& [name, g] : groups) {
    g.group = name;
    g.mean_util_pct /= std::max(1, g.gpus);
    if (auto hours = t.group_hours.find(&g); hours != t.group_hours.end())
      g.hour_of_week_idle_ratio = idle_ratios(hours->second.first, hours->second.second);
    report.attribution.push_back(g);
  }
  std::sort(report.attribution.begin(), report.attribution.end(),
            [](const Attribution& a, const Attribution& b) { return a.usd_per_month > b.usd_per_month; });
  if (!report.attribution.empty() && report.fleet_usd_per_month > 0) {
    size_t top = std::max<size_t>(1, static_cast<size_t>(std::ceil(report.attribution.size() * 0.2)));
    double sum = 0;
    for (size_t i = 0; i < top; ++i) sum += report.attribution[i].usd_per_month;
    report.top20_cost_share = sum / report.fleet_usd_per_month;
  }
  report.assumptions.push_back(fmt::format("idle: duty cycle under 5%; under-used: under {:.0f}%; consolidated GPUs run at {:.0f}%",
                                           o.underused_pct, o.target_util_pct));
  if (o.usd_per_gpu_hour) report.assumptions.push_back(fmt::format("price: ${:.2f} per GPU-hour (given)", *o.usd_per_gpu_hour));
  else if (!o.offering.empty()) report.assumptions.push_back("price: " + o.offering + " on demand, per GPU (--offering)");
  else report.assumptions.push_back(fmt::format(
      "price: the instance type's on-demand price per GPU where a series has an instance_type label; {} series priced "
      "at the catalog's cheapest offering of their accelerator instead (give --offering for what runs)",
      report.priced_by_fallback));
  report.assumptions.push_back(fmt::format(
      "right-sizing: a smaller accelerator must hold the peak memory + 20% on each device, and enough of them carry the "
      "compute (tensor or SM activity where measured, else the duty cycle, x the fp16 peaks' ratio) and the memory "
      "traffic (DRAM activity where measured, else the duty cycle, x the bandwidths' ratio) at {:.0f}% busy", o.target_util_pct));
  report.assumptions.push_back(fmt::format("a month is {:.0f} hours; findings need {:.0f} hours of data (--min-coverage-hours)",
                                           kHoursPerMonth, o.min_coverage_hours));
  if (report.gpu_only_prices > 0)
    report.assumptions.push_back(fmt::format(
        "{} GPU(s) priced without their host VM (GPUs attached to a VM, as GCP's N1 + T4): --host-usd-per-hour adds the VM, "
        "shared by the GPUs on each host", report.gpu_only_prices));
  if (o.host_usd_per_hour)
    report.assumptions.push_back(fmt::format("host VM: ${:.4g} per hour, shared by the GPUs on each host (hostname or host label; "
                                             "a GPU without one has its own)", *o.host_usd_per_hour));
  if (report.scheduled_gpus > 0)
    report.assumptions.push_back(fmt::format(
        "billed hours: {} GPU(s) reported for under {:.0f}% of the log's {:.1f} h (jobs on a schedule): each is priced for the "
        "share of the log it reported, extrapolated to the month, not 730 h; --always-on prices them around the clock (a VM "
        "left up between runs)",
        report.scheduled_gpus, o.scheduled_below_share * 100, report.log_span_hours));
}

}  // namespace

Result<AuditReport> run_audit(const TelemetryAggregator& telemetry, const Catalog& catalog, const AuditOptions& o) {
  AuditReport report;
  const Accelerator* fallback = nullptr;
  if (!o.accelerator.empty()) {
    fallback = catalog.find_accelerator(o.accelerator);
    if (!fallback) return Error{"", 0, "--accelerator", "unknown accelerator '" + o.accelerator + "'"};
  }
  FleetTotals totals;
  std::map<std::string, Attribution> groups;
  CatalogLookups lookups(catalog);
  // The log's span: the first to the last sample of any series.
  double log_first_s = 1e300, log_last_s = -1e300;
  for (const auto& [id, a] : telemetry.series())
    if (a.timed_samples > 0) log_first_s = std::min(log_first_s, a.first_s), log_last_s = std::max(log_last_s, a.last_s);
  const double log_span_h = log_last_s > log_first_s ? (log_last_s - log_first_s) / 3600.0 : 0;
  // GPUs per host, to share a host VM's price among them.
  std::map<std::string, int> gpus_per_host;
  for (const auto& [id, a] : telemetry.series())
    if (a.util_samples > 0 || a.memory.count() > 0) ++gpus_per_host[host_of(a)];
  report.log_span_hours = log_span_h;
  // Host CPU series (node_exporter) by host name, joined to the GPUs on that host.
  std::map<std::string, const SeriesAggregate*> hosts;
  for (const auto& [id, a] : telemetry.series())
    if (a.util_samples == 0 && a.memory.count() == 0 && (a.cpu_samples > 0 || a.iowait_samples > 0))
      hosts[a.label("hostname")] = &a;
  for (const auto& [id, a] : telemetry.series()) {
    if (a.util_samples == 0 && a.memory.count() == 0 && a.out_of_range == 0) continue;
    if (a.out_of_range > a.util_samples + static_cast<long long>(a.memory.count())) {
      // Mostly impossible values: the exporter is broken, and nothing it says can be acted on.
      report.findings.push_back(bad_exporter(
          id, fmt::format("{} of {} samples outside the metric's physical range (a utilization above 100%, a negative reading)",
                          a.out_of_range, a.out_of_range + a.util_samples + a.memory.count()),
          "fix or replace the exporter for this GPU before acting on its numbers"));
      if (a.util_samples == 0 && a.memory.count() == 0) continue;
    }
    SeriesReport s;
    s.id = id;
    s.labels = a.labels;
    s.mean_util_pct = a.mean_util();
    s.idle_fraction = a.idle_fraction();
    s.peak_memory_bytes = a.memory_peak;
    // The p95 comes from a log-bucketed sketch: never above the exact peak.
    s.p95_memory_bytes = std::min(a.memory.quantile(0.95) * kGiB, s.peak_memory_bytes);
    s.util_measured = a.util_samples > 0;
    s.coverage_hours = a.coverage_hours();
    s.gaps = a.gaps();
    s.gap_hours = a.gap_hours();
    s.out_of_range_samples = a.out_of_range;
    const std::string host = host_of(a);
    auto priced = price_series(a, lookups, o, fallback, host.empty() ? 1 : gpus_per_host[host], s, report);
    if (!priced.ok()) return priced.error();
    const Accelerator* accelerator = priced.value().accelerator;
    const std::optional<double> price = priced.value().usd_per_gpu_hour;
    // A peak above the device's memory is no measurement (a unit mistake, a broken exporter), or
    // the device is not the one named: --accelerator is the user's word, the telemetry's is not.
    bool impossible_peak = accelerator && s.peak_memory_bytes > accelerator->memory_bytes() * 1.05;
    if (impossible_peak) {
      std::string recommendation = "check the exporter's memory unit (DCGM's FB_USED is MiB) before acting on its memory figures";
      const std::string holders = accelerator == fallback ? devices_that_hold(lookups.catalog(), s.peak_memory_bytes, *accelerator) : "";
      if (!holders.empty())
        recommendation = fmt::format("the GPU that ran is likely not the {} given (--accelerator): its peak fits {}; give "
                                     "--accelerator or --offering for the one that ran (its price and right-sizing follow), or {}",
                                     accelerator->name, holders, recommendation);
      report.findings.push_back(bad_exporter(
          id, fmt::format("peak memory {:.1f} GiB on a {:.1f} GiB {}: more than the device holds", s.peak_memory_bytes / kGiB,
                          accelerator->reported_gib(), accelerator->name),
          recommendation));
    }
    if (a.sm_samples > 0) s.mean_sm_active = a.sm_sum / a.sm_samples;
    if (a.tensor_samples > 0) s.mean_tensor_active = a.tensor_sum / a.tensor_samples;
    if (a.dram_samples > 0) s.mean_dram_active = a.dram_sum / a.dram_samples;
    if (a.power_samples > 0) s.mean_power_w = a.power_sum / a.power_samples;
    join_host(a, hosts, s);
    for (size_t h = 0; h < 168; ++h)
      s.hour_of_week_util_pct.push_back(a.hour_count[h] ? a.hour_sum[h] / static_cast<double>(a.hour_count[h]) : -1);
    s.busiest_hour_util_pct = busiest_hour_util_pct(a, s.mean_util_pct);
    // Billed for the hours it runs: a series that reported for a share of the log (a nightly job)
    // is priced for that share of the month, the rest around the clock.
    if (!o.always_on && log_span_h > 0 && s.coverage_hours < o.scheduled_below_share * log_span_h)
      s.billed_share = std::clamp(s.coverage_hours / log_span_h, 0.0, 1.0);
    if (s.billed_share < 1) ++report.scheduled_gpus;
    s.usd_per_month = price.value_or(0) * kHoursPerMonth * s.billed_share;
    if (a.requests_samples > 0 && a.requests_sum > 0 && price) {
      double rps = a.requests_sum / a.requests_samples;
      s.usd_per_1k_inferences = *price / (rps * 3600) * 1000;
      totals.requests_per_s += rps;
      totals.priced_for_requests += s.usd_per_month;
    }
    report.series.push_back(s);
    ++report.gpus;
    report.fleet_usd_per_month += s.usd_per_month;
    totals.util_sum += a.util_sum;
    totals.idle_sum += static_cast<double>(a.idle_samples);
    totals.util_count += static_cast<double>(a.util_samples);
    for (size_t h = 0; h < 168; ++h) {
      if (a.hour_count[h] == 0) continue;
      totals.hour_idle[h] += a.hour_idle[h];
      totals.hour_count[h] += a.hour_count[h];
      totals.hour_idle_usd[h] += price.value_or(0) * a.hour_idle[h] / a.hour_count[h];
      totals.hour_util_pct_sum[h] += s.hour_of_week_util_pct[h];
      ++totals.hour_gpus[h];
    }
    std::string group = o.group_by.empty() ? std::string() : a.label(o.group_by);
    if (!o.group_by.empty()) {
      auto& g = groups[group.empty() ? "(no " + o.group_by + ")" : group];
      g.usd_per_month += s.usd_per_month;
      g.mean_util_pct += s.mean_util_pct;
      ++g.gpus;
      auto& hours = totals.group_hours[&g];
      for (size_t h = 0; h < 168; ++h) {
        hours.first[h] += a.hour_idle[h];
        hours.second[h] += a.hour_count[h];
      }
    }

    const double device_memory_bytes = a.memory_total > 0 ? a.memory_total : accelerator ? accelerator->memory_bytes() : 0;
    Finding f = utilization_finding(a, s, o, price.has_value(), device_memory_bytes, report, totals.underused_util);
    if (f.kind == "insufficient_data") {
      report.findings.push_back(f);
      continue;
    }
    if (accelerator && price && (f.kind == "healthy" || f.kind == "inefficient")) {
      if (auto run = run_cost(s, *accelerator, *price, lookups, log_span_h)) {
        if (run->alternative && run->alternative_usd < 0.9 * run->usd) {
          Finding faster;
          faster.kind = "cheaper_per_run";
          faster.scope = f.scope;
          faster.evidence = fmt::format("a job on a schedule, {:.0f}% busy while it runs: {}", s.mean_util_pct,
                                        run_cost_text(*run, *accelerator));
          faster.waste_usd_per_month = (run->usd - run->alternative_usd) * run->runs_per_month;
          faster.recommendation = fmt::format("run it on {}: each run {:.0f}% cheaper{}", run->alternative->name,
                                              (1 - run->alternative_usd / run->usd) * 100,
                                              run->alternative_hours < run->hours ? " and sooner" : "");
          faster.confidence = "medium";
          report.findings.push_back(faster);
          continue;
        }
        f.evidence += "; " + run_cost_text(*run, *accelerator);
      }
    }
    if (accelerator && price && s.peak_memory_bytes > 0 && !impossible_peak && f.kind != "idle") {
      if (auto v = vram_finding(s, *accelerator, *price, priced.value().running, lookups, o);
          v && (f.kind == "healthy" || v->waste_usd_per_month > f.waste_usd_per_month)) {
        report.findings.push_back(*v);
        if (f.kind == "healthy") continue;
      }
    }
    report.findings.push_back(f);
  }
  if (report.series.empty()) return Error{"", 0, "", "no GPU utilization or memory samples in the input"};
  summarize(report, groups, totals, o);
  return report;
}

}  // namespace gw
