// The fleet section of a spec: shared pools, bucket mix, projects, buy versus rent, what-if.
#include "spec/spec_reader.h"

namespace gw::spec_reading {

namespace {

// fleet.projects: teams' GPU demand by schedule on a shared pool.
void read_projects(const Reader& r, const YAML::Node& node, const std::string& path, [[maybe_unused]] Spec& spec, FleetSpec& fleet) {
  if (const YAML::Node projects = node["projects"]) {
    if (!projects.IsSequence()) r.fail(projects, path + ".projects", "expected a list of projects");
    for (size_t i = 0; i < projects.size(); ++i) {
      const YAML::Node p = projects[i];
      std::string where = fmt::format("{}.projects[{}]", path, i);
      r.check_keys(p, where, {"name", "gpus", "peak_gpus", "peak_hours", "schedule", "duration_hours", "shiftable"});
      FleetProjectSpec project;
      project.line = p.Mark().line + 1;
      if (!p["name"]) r.fail(p, where + ".name", "required");
      project.name = r.text(p["name"], where + ".name");
      where = path + ".projects." + project.name;
      if (!p["gpus"]) r.fail(p, where + ".gpus", "required");
      project.gpus = static_cast<int>(r.number(p["gpus"], where + ".gpus", 1, 100000));
      if (p["peak_gpus"]) {
        project.peak_gpus = static_cast<int>(r.number(p["peak_gpus"], where + ".peak_gpus", 1, 100000));
        if (project.peak_gpus < project.gpus) r.fail(p["peak_gpus"], where + ".peak_gpus", "below gpus");
      }
      if (const YAML::Node hours = p["peak_hours"]) {
        if (!hours.IsSequence() || hours.size() != 2) r.fail(hours, where + ".peak_hours", "give [from, to] hours of the day, e.g. [9, 17]");
        project.peak_from_hour = static_cast<int>(r.number(hours[0], where + ".peak_hours", 0, 23));
        project.peak_to_hour = static_cast<int>(r.number(hours[1], where + ".peak_hours", 1, 24));
        if (project.peak_to_hour <= project.peak_from_hour) r.fail(hours, where + ".peak_hours", "the window must end after it starts");
      }
      if (p["schedule"]) {
        project.schedule = r.text(p["schedule"], where + ".schedule");
        std::string why;
        if (!parse_cron(project.schedule, &why)) r.fail(p["schedule"], where + ".schedule", why);
        if (!p["duration_hours"]) r.fail(p, where + ".duration_hours", "a scheduled project needs duration_hours");
        project.duration_hours = r.number(p["duration_hours"], where + ".duration_hours", 1.0 / 60, 24 * 7);
        if (project.peak_gpus) r.fail(p["peak_gpus"], where + ".peak_gpus", "peak_gpus is for always-on projects (no schedule)");
      } else if (p["duration_hours"]) {
        r.fail(p["duration_hours"], where + ".duration_hours", "duration_hours needs a schedule (without one a project runs always)");
      }
      if (p["shiftable"]) project.shiftable = r.flag(p["shiftable"], where + ".shiftable");
      for (const auto& other : fleet.projects)
        if (other.name == project.name) r.fail(p["name"], where, "duplicate project name");
      fleet.projects.push_back(project);
    }
  }
}

// fleet.buy_vs_rent: owning a cluster (purchase, power, colocation, staff) against renting.
void read_buy_vs_rent(const Reader& r, const YAML::Node& node, const std::string& path, [[maybe_unused]] Spec& spec, FleetSpec& fleet) {
  if (const YAML::Node b = node["buy_vs_rent"]) {
    std::string where = path + ".buy_vs_rent";
    r.check_keys(b, where, {"gpus", "purchase_usd", "overhead_fraction", "life_years", "utilization", "on_demand_usd_per_gpu_hour",
                            "reserved_1y_usd_per_gpu_hour", "reserved_3y_usd_per_gpu_hour", "spot_usd_per_gpu_hour", "accelerator",
                            "watts_per_gpu", "pue", "usd_per_kwh", "colocation_usd_per_kw_month", "networking_fraction",
                            "staff_usd_per_gpu_month", "cost_of_capital", "resale_fraction"});
    BuyVsRentSpec buy;
    buy.line = b.Mark().line + 1;
    for (const char* key : {"gpus", "purchase_usd"})
      if (!b[key]) r.fail(b, where + "." + key, "required");
    if (!b["on_demand_usd_per_gpu_hour"] && !b["accelerator"])
      r.fail(b, where + ".on_demand_usd_per_gpu_hour",
             "required unless accelerator names the GPU (then the rent prices are the catalog's for it)");
    buy.gpus = static_cast<int>(r.number(b["gpus"], where + ".gpus", 1, 1e6));
    buy.purchase_usd = r.number(b["purchase_usd"], where + ".purchase_usd", 1, 1e12);
    if (b["on_demand_usd_per_gpu_hour"])
      buy.on_demand_usd_per_gpu_hour = r.number(b["on_demand_usd_per_gpu_hour"], where + ".on_demand_usd_per_gpu_hour", 1e-6, 1e5);
    if (b["overhead_fraction"]) buy.overhead_fraction = r.number(b["overhead_fraction"], where + ".overhead_fraction", 0, 10);
    if (b["accelerator"]) {
      buy.accelerator = r.text(b["accelerator"], where + ".accelerator");
      buy.accelerator_line = b["accelerator"].Mark().line + 1;
    }
    auto term = [&](const char* key, double& out, double min, double max) {
      if (b[key]) out = r.number(b[key], where + "." + key, min, max);
    };
    term("watts_per_gpu", buy.watts_per_gpu, 1, 1e5);
    term("pue", buy.pue, 1, 5);
    term("usd_per_kwh", buy.usd_per_kwh, 0, 10);
    term("colocation_usd_per_kw_month", buy.colocation_usd_per_kw_month, 0, 1e5);
    term("networking_fraction", buy.networking_fraction, 0, 10);
    term("staff_usd_per_gpu_month", buy.staff_usd_per_gpu_month, 0, 1e6);
    term("cost_of_capital", buy.cost_of_capital, 0, 1);
    term("resale_fraction", buy.resale_fraction, 0, 0.99);
    if (!buy.overhead_fraction && !b["accelerator"] && !b["watts_per_gpu"])
      r.fail(b, where + ".accelerator", "power needs the GPUs' watts: name the accelerator (its TDP from the catalog) or give watts_per_gpu "
                                        "(or one overhead_fraction for power, colocation, networking and staff)");
    if (b["life_years"]) buy.life_years = r.number(b["life_years"], where + ".life_years", 0.25, 20);
    if (b["utilization"]) buy.utilization = r.number(b["utilization"], where + ".utilization", 0, 1);
    if (b["reserved_1y_usd_per_gpu_hour"]) buy.reserved_1y_usd_per_gpu_hour = r.number(b["reserved_1y_usd_per_gpu_hour"], where + ".reserved_1y_usd_per_gpu_hour", 0, 1e5);
    if (b["reserved_3y_usd_per_gpu_hour"]) buy.reserved_3y_usd_per_gpu_hour = r.number(b["reserved_3y_usd_per_gpu_hour"], where + ".reserved_3y_usd_per_gpu_hour", 0, 1e5);
    if (b["spot_usd_per_gpu_hour"]) buy.spot_usd_per_gpu_hour = r.number(b["spot_usd_per_gpu_hour"], where + ".spot_usd_per_gpu_hour", 0, 1e5);
    if (!buy.utilization && fleet.projects.empty())
      r.fail(b, where + ".utilization", "required unless fleet.projects gives the demand");
    fleet.buy_vs_rent = buy;
  }
}

// fleet.what_if: optimizations of one service (batching, quantization, caching, cascades).
void read_what_if(const Reader& r, const YAML::Node& node, const std::string& path, [[maybe_unused]] Spec& spec, FleetSpec& fleet) {
  if (const YAML::Node w = node["what_if"]) {
    std::string where = path + ".what_if";
    r.check_keys(w, where, {"service", "current", "engineering_usd_per_week", "steps"});
    WhatIfSpec what;
    what.line = w.Mark().line + 1;
    if (!w["service"]) r.fail(w, where + ".service", "required: a service of this spec");
    what.service = r.text(w["service"], where + ".service");
    bool found = false;
    for (const auto& svc : spec.services) found = found || svc.name == what.service;
    if (!found) r.fail(w["service"], where + ".service", "no service named '" + what.service + "' in this spec (services come before fleet)");
    const YAML::Node current = w["current"];
    if (!current) r.fail(w, where + ".current", "required: {accelerator, gpus, usd_per_month} of what runs today");
    r.check_keys(current, where + ".current", {"accelerator", "gpus", "usd_per_month"});
    for (const char* key : {"accelerator", "gpus", "usd_per_month"})
      if (!current[key]) r.fail(current, where + ".current." + key, "required");
    what.accelerator = r.text(current["accelerator"], where + ".current.accelerator");
    what.gpus = static_cast<int>(r.number(current["gpus"], where + ".current.gpus", 1, 1e6));
    what.usd_per_month = r.number(current["usd_per_month"], where + ".current.usd_per_month", 0, 1e12);
    if (!w["engineering_usd_per_week"]) r.fail(w, where + ".engineering_usd_per_week", "required: the cost of a week of engineering");
    what.engineering_usd_per_week = r.number(w["engineering_usd_per_week"], where + ".engineering_usd_per_week", 0, 1e9);
    const YAML::Node steps = w["steps"];
    if (!steps || !steps.IsSequence() || steps.size() == 0) r.fail(w, where + ".steps", "a list of optimizations, applied in order");
    for (size_t i = 0; i < steps.size(); ++i) {
      const YAML::Node st = steps[i];
      std::string at = fmt::format("{}.steps[{}]", where, i);
      r.check_keys(st, at, {"name", "weeks", "batching", "precision", "cache_hit_rate", "small_model", "small_share", "distill_to"});
      WhatIfStepSpec step;
      step.line = st.Mark().line + 1;
      if (!st["name"]) r.fail(st, at + ".name", "required");
      step.name = r.text(st["name"], at + ".name");
      if (st["weeks"]) step.weeks = r.number(st["weeks"], at + ".weeks", 0, 520);
      int kinds = 0;
      if (st["batching"]) {
        ++kinds;
        step.batching = r.text(st["batching"], at + ".batching");
        if (step.batching != "dynamic" && step.batching != "continuous" && step.batching != "none")
          r.fail(st["batching"], at + ".batching", "one of none, dynamic, continuous");
      }
      if (st["precision"]) {
        ++kinds;
        auto precision = parse_precision(r.text(st["precision"], at + ".precision"));
        if (!precision) r.fail(st["precision"], at + ".precision", "one of " + precision_choices());
        step.precision = *precision;
      }
      if (st["cache_hit_rate"]) {
        ++kinds;
        step.cache_hit_rate = r.number(st["cache_hit_rate"], at + ".cache_hit_rate", 0, 0.99);
      }
      if (st["small_model"]) {
        ++kinds;
        step.small_model = r.text(st["small_model"], at + ".small_model");
        if (!st["small_share"]) r.fail(st, at + ".small_share", "a cascade needs the share of requests the small model settles");
        step.small_share = r.number(st["small_share"], at + ".small_share", 0, 1);
      }
      if (st["distill_to"]) {
        ++kinds;
        step.distill_to = r.text(st["distill_to"], at + ".distill_to");
      }
      if (kinds != 1) r.fail(st, at, "give exactly one of batching, precision, cache_hit_rate, small_model (with small_share), distill_to");
      for (const std::string& name : {step.small_model, step.distill_to})
        if (!name.empty() && !spec.models.count(name) && !load_preset(name).ok())
          r.fail(st, at, "'" + name + "' is neither a key under models: nor a preset");
      what.steps.push_back(step);
    }
    fleet.what_if = what;
  }
}

}  // namespace

FleetSpec read_fleet(const Reader& r, const YAML::Node& node, Spec& spec) {
  const std::string path = "fleet";
  r.check_keys(node, path, {"shared_pools", "bucket_mix", "projects", "usd_per_gpu_hour", "buy_vs_rent", "what_if"});
  FleetSpec fleet;
  fleet.line = node.Mark().line + 1;
  if (node["shared_pools"]) {
    fleet.shared_pools = r.flag(node["shared_pools"], path + ".shared_pools");
    if (fleet.shared_pools && spec.services.size() < 2)
      r.fail(node["shared_pools"], path + ".shared_pools", "needs at least two services to share pools");
  }
  if (node["usd_per_gpu_hour"]) fleet.usd_per_gpu_hour = r.number(node["usd_per_gpu_hour"], path + ".usd_per_gpu_hour", 0, 1e5);
  if (const YAML::Node mix = node["bucket_mix"]) {
    std::string where = path + ".bucket_mix";
    r.check_keys(mix, where, {"service", "buckets"});
    BucketMixSpec m;
    m.line = mix.Mark().line + 1;
    if (!mix["service"]) r.fail(mix, where + ".service", "required: an LLM service of this spec");
    m.service = r.text(mix["service"], where + ".service");
    auto found = std::find_if(spec.services.begin(), spec.services.end(), [&](const ServiceSpec& s) { return s.name == m.service; });
    if (found == spec.services.end()) r.fail(mix["service"], where + ".service", "no service named '" + m.service + "' in this spec");
    if (spec.models.at(found->model_key).arch.kind != ModelKind::decoder)
      r.fail(mix["service"], where + ".service", "buckets by prompt length apply to LLM services");
    if (mix["buckets"]) m.buckets = static_cast<int>(r.number(mix["buckets"], where + ".buckets", 1, 8));
    fleet.bucket_mix = m;
  }
  read_projects(r, node, path, spec, fleet);
  read_buy_vs_rent(r, node, path, spec, fleet);
  read_what_if(r, node, path, spec, fleet);
  if (fleet.projects.empty() && !fleet.buy_vs_rent && !fleet.what_if && !fleet.shared_pools && !fleet.bucket_mix)
    r.fail(node, path, "give shared_pools, bucket_mix, projects, buy_vs_rent or what_if");
  return fleet;
}

}  // namespace gw::spec_reading
