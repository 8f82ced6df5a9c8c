// gpuwise._native: the public library (include/gpuwise/) for Python. Calls run on a worker
// thread with the GIL released, so other Python threads go on; the calling thread checks for
// Ctrl-C every 50 ms and stops the call through an InterruptScope. python/gpuwise/ turns the
// JSON answers into dicts and the errors into gpuwise.Error subclasses.
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <yaml-cpp/yaml.h>

#include <atomic>
#include <chrono>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>

#include "gpuwise/gpuwise.h"

namespace py = pybind11;

namespace {

// Runs `call(stop)` on a worker thread while this one waits with the GIL released, looking for
// Ctrl-C; a signal sets `stop` (which the call's InterruptScopes watch) and raises
// KeyboardInterrupt here once the call has stopped.
template <typename Call>
auto run_interruptibly(Call&& call) -> decltype(call(std::declval<const std::atomic<bool>&>())) {
  using Value = decltype(call(std::declval<const std::atomic<bool>&>()));
  std::atomic<bool> stop{false};
  std::packaged_task<Value()> task([&] { return call(stop); });
  std::future<Value> done = task.get_future();
  bool interrupted = false;
  {
    py::gil_scoped_release released;
    std::thread worker(std::move(task));
    while (done.wait_for(std::chrono::milliseconds(50)) != std::future_status::ready) {
      py::gil_scoped_acquire acquired;
      if (PyErr_CheckSignals() != 0) {  // only the main thread sees signals; elsewhere this is 0
        interrupted = true;
        stop = true;
        break;
      }
    }
    worker.join();
  }
  if (interrupted) throw py::error_already_set();  // the KeyboardInterrupt PyErr_CheckSignals set
  return done.get();
}

// One library call, stoppable by Ctrl-C.
template <typename Call>
auto interruptible(Call&& call) -> decltype(call()) {
  return run_interruptibly([&](const std::atomic<bool>& stop) {
    gpuwise::InterruptScope scope(stop);
    return call();
  });
}

// A YAML document as JSON, scalars typed as YAML 1.2's core schema reads them (quoted: strings).
nlohmann::json yaml_to_json(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Sequence: {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& item : node) list.push_back(yaml_to_json(item));
      return list;
    }
    case YAML::NodeType::Map: {
      nlohmann::json object = nlohmann::json::object();
      for (const auto& item : node) object[item.first.as<std::string>()] = yaml_to_json(item.second);
      return object;
    }
    case YAML::NodeType::Scalar: {
      const std::string& text = node.Scalar();
      if (node.Tag() == "!") return text;  // quoted
      if (text == "true" || text == "True" || text == "TRUE") return true;
      if (text == "false" || text == "False" || text == "FALSE") return false;
      if (text == "null" || text == "~" || text.empty()) return nullptr;
      nlohmann::json number = nlohmann::json::parse(text, nullptr, false);
      if (!number.is_discarded() && number.is_number()) return number;
      return text;
    }
    default: return nullptr;
  }
}

std::string yaml_text_to_json(const std::string& text, const std::string& path) {
  try {
    return yaml_to_json(YAML::Load(text)).dump();
  } catch (const YAML::Exception& e) {
    throw gpuwise::Error(path, e.mark.line + 1, "", e.msg);
  }
}

// Simulates each (spec text, path) on `threads` workers; each entry is a JSON answer or an
// error's fields. Ctrl-C on the calling thread stops them all.
py::list simulate_many(const gpuwise::Catalog& catalog, const std::vector<std::pair<std::string, std::string>>& specs,
                       const gpuwise::SimulateOptions& options, int threads) {
  struct Outcome {
    std::string json;
    std::optional<gpuwise::Error> error;
  };
  std::vector<Outcome> outcomes(specs.size());
  std::atomic<size_t> next{0};
  auto work = [&](const std::atomic<bool>& stop) {
    gpuwise::InterruptScope scope(stop);
    for (size_t i = next++; i < specs.size(); i = next++) {
      try {
        outcomes[i].json = gpuwise::simulate(catalog, gpuwise::Spec::parse(specs[i].first, specs[i].second), options).to_json();
      } catch (const gpuwise::Error& e) {
        if (e.kind() == gpuwise::Error::Kind::interrupted) throw;
        outcomes[i].error = e;
      }
    }
    return 0;
  };
  const int workers = std::max(1, std::min<int>(threads, static_cast<int>(specs.size())));
  run_interruptibly([&](const std::atomic<bool>& stop) {
    std::vector<std::future<int>> helpers;
    for (int w = 1; w < workers; ++w) helpers.push_back(std::async(std::launch::async, work, std::cref(stop)));
    std::exception_ptr failure;
    try {
      work(stop);
    } catch (...) {
      failure = std::current_exception();
    }
    for (auto& helper : helpers) {
      try {
        helper.get();
      } catch (...) {
        if (!failure) failure = std::current_exception();
      }
    }
    if (failure) std::rethrow_exception(failure);
    return 0;
  });
  py::list out;
  for (auto& o : outcomes) {
    if (o.error)
      out.append(py::make_tuple(static_cast<int>(o.error->kind()), o.error->file(), o.error->line(), o.error->field(),
                                o.error->message(), std::string(o.error->what())));
    else
      out.append(py::str(o.json));
  }
  return out;
}

}  // namespace

PYBIND11_MODULE(_native, m) {
  m.doc() = "gpuwise's C++ library; use the gpuwise package, not this module";
  m.def("version", &gpuwise::version);

  static py::exception<gpuwise::Error> native_error(m, "NativeError");
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const gpuwise::Error& e) {
      py::tuple fields = py::make_tuple(static_cast<int>(e.kind()), e.file(), e.line(), e.field(), e.message(), std::string(e.what()));
      PyErr_SetObject(native_error.ptr(), fields.ptr());
    }
  });

  py::class_<gpuwise::Catalog>(m, "Catalog")
      .def_static("embedded", &gpuwise::Catalog::embedded)
      .def("copy", [](const gpuwise::Catalog& c) { return c; })  // shares the data until changed
      .def("apply_overrides", &gpuwise::Catalog::apply_overrides)
      .def("accelerator_count", &gpuwise::Catalog::accelerator_count)
      .def("offering_count", &gpuwise::Catalog::offering_count)
      .def("accelerators_json", &gpuwise::Catalog::accelerators_json)
      .def("offerings_json", py::overload_cast<const gpuwise::Catalog::OfferingFilter&>(&gpuwise::Catalog::offerings_json, py::const_));
  py::class_<gpuwise::Catalog::OfferingFilter>(m, "OfferingFilter")
      .def(py::init<>())
      .def_readwrite("clouds", &gpuwise::Catalog::OfferingFilter::clouds)
      .def_readwrite("regions", &gpuwise::Catalog::OfferingFilter::regions)
      .def_readwrite("accelerators", &gpuwise::Catalog::OfferingFilter::accelerators)
      .def_readwrite("geo", &gpuwise::Catalog::OfferingFilter::geo)
      .def_readwrite("pricing", &gpuwise::Catalog::OfferingFilter::pricing)
      .def_readwrite("min_vram_gib", &gpuwise::Catalog::OfferingFilter::min_vram_gib)
      .def_readwrite("max_usd_per_hour", &gpuwise::Catalog::OfferingFilter::max_usd_per_hour)
      .def_readwrite("limit", &gpuwise::Catalog::OfferingFilter::limit);

  py::class_<gpuwise::Spec>(m, "Spec")
      .def_static("load", &gpuwise::Spec::load)
      .def_static("parse", &gpuwise::Spec::parse, py::arg("yaml"), py::arg("path") = "spec.yaml")
      .def_property_readonly("path", &gpuwise::Spec::path)
      .def_property_readonly("name", &gpuwise::Spec::name)
      .def("service_names", &gpuwise::Spec::service_names)
      .def("training_names", &gpuwise::Spec::training_names);
  m.def("yaml_to_json", &yaml_text_to_json, py::arg("text"), py::arg("path") = "spec.yaml");

  py::class_<gpuwise::PlanOptions>(m, "PlanOptions")
      .def(py::init<>())
      .def_readwrite("calibration", &gpuwise::PlanOptions::calibration_path)
      .def_readwrite("usable_memory_fraction", &gpuwise::PlanOptions::usable_memory_fraction)
      .def_readwrite("overhead_gib", &gpuwise::PlanOptions::overhead_gib)
      .def_readwrite("step_token_budget", &gpuwise::PlanOptions::step_token_budget)
      .def_readwrite("simulate", &gpuwise::PlanOptions::simulate)
      .def_readwrite("sim_requests", &gpuwise::PlanOptions::sim_requests)
      .def_readwrite("seed", &gpuwise::PlanOptions::seed)
      .def_readwrite("jobs", &gpuwise::PlanOptions::jobs);
  py::class_<gpuwise::PlanResult>(m, "PlanResult")
      .def("to_json", &gpuwise::PlanResult::to_json)
      .def("to_text", &gpuwise::PlanResult::to_text, py::arg("explain") = false)
      .def("to_markdown", &gpuwise::PlanResult::to_markdown, py::arg("explain") = false)
      .def("to_html", &gpuwise::PlanResult::to_html)
      .def("warnings", &gpuwise::PlanResult::warnings)
      .def("to_csv", &gpuwise::PlanResult::to_csv)
      .def("manifests", &gpuwise::PlanResult::manifests, py::arg("prometheus_url") = "http://prometheus-operated.monitoring.svc:9090")
      .def("exit_code", &gpuwise::PlanResult::exit_code);
  m.def("plan", [](const gpuwise::Catalog& c, const gpuwise::Spec& s, const gpuwise::PlanOptions& o) {
    return interruptible([&] { return gpuwise::plan(c, s, o); });
  });

  py::class_<gpuwise::SimulateOptions>(m, "SimulateOptions")
      .def(py::init<>())
      .def_readwrite("calibration", &gpuwise::SimulateOptions::calibration_path)
      .def_readwrite("seed", &gpuwise::SimulateOptions::seed)
      .def_readwrite("average_rate", &gpuwise::SimulateOptions::average_rate)
      .def_readwrite("requests", &gpuwise::SimulateOptions::requests)
      .def_readwrite("duration_s", &gpuwise::SimulateOptions::duration_s)
      .def_readwrite("explain", &gpuwise::SimulateOptions::explain);
  py::class_<gpuwise::SimulateResult>(m, "SimulateResult")
      .def("to_json", &gpuwise::SimulateResult::to_json)
      .def("to_text", &gpuwise::SimulateResult::to_text)
      .def("to_markdown", &gpuwise::SimulateResult::to_markdown)
      .def("all_meet", &gpuwise::SimulateResult::all_meet);
  m.def("simulate", [](const gpuwise::Catalog& c, const gpuwise::Spec& s, const gpuwise::SimulateOptions& o) {
    return interruptible([&] { return gpuwise::simulate(c, s, o); });
  });
  m.def("simulate_many", &simulate_many);

  py::class_<gpuwise::Answer>(m, "Answer")
      .def("command", &gpuwise::Answer::command)
      .def("exit_code", &gpuwise::Answer::exit_code)
      .def("to_json", &gpuwise::Answer::to_json)
      .def("to_text", &gpuwise::Answer::to_text, py::arg("explain") = false)
      .def("to_markdown", &gpuwise::Answer::to_markdown, py::arg("explain") = false)
      .def("to_html", &gpuwise::Answer::to_html)
      .def("warnings", &gpuwise::Answer::warnings);

  using gpuwise::FitQuery;
  py::class_<FitQuery>(m, "FitQuery")
      .def(py::init<>())
      .def_readwrite("model", &FitQuery::model)
      .def_readwrite("train", &FitQuery::train)
      .def_readwrite("precision", &FitQuery::precision)
      .def_readwrite("kv_precision", &FitQuery::kv_precision)
      .def_readwrite("batch", &FitQuery::batch)
      .def_readwrite("context_tokens", &FitQuery::context_tokens)
      .def_readwrite("tp", &FitQuery::tp)
      .def_readwrite("pp", &FitQuery::pp)
      .def_readwrite("dp", &FitQuery::dp)
      .def_readwrite("zero", &FitQuery::zero)
      .def_readwrite("optimizer", &FitQuery::optimizer)
      .def_readwrite("recompute", &FitQuery::recompute)
      .def_readwrite("pricing", &FitQuery::pricing)
      .def_readwrite("sequence_parallel", &FitQuery::sequence_parallel)
      .def_readwrite("no_flash_attention", &FitQuery::no_flash_attention)
      .def_readwrite("offload_optimizer", &FitQuery::offload_optimizer)
      .def_readwrite("overhead_gib", &FitQuery::overhead_gib)
      .def_readwrite("usable_memory_fraction", &FitQuery::usable_memory_fraction)
      .def_readwrite("quant_group_size", &FitQuery::quant_group_size)
      .def_readwrite("prefill_chunk_tokens", &FitQuery::prefill_chunk_tokens)
      .def_readwrite("max_devices", &FitQuery::max_devices)
      .def_readwrite("clouds", &FitQuery::clouds)
      .def_readwrite("regions", &FitQuery::regions)
      .def_readwrite("accelerators", &FitQuery::accelerators)
      .def_readwrite("geo", &FitQuery::geo);
  m.def("fit", [](const gpuwise::Catalog& c, const FitQuery& q) { return interruptible([&] { return gpuwise::fit(c, q); }); });

  using gpuwise::PerfQuery;
  py::class_<PerfQuery>(m, "PerfQuery")
      .def(py::init<>())
      .def_readwrite("model", &PerfQuery::model)
      .def_readwrite("accelerator", &PerfQuery::accelerator)
      .def_readwrite("count", &PerfQuery::count)
      .def_readwrite("tp", &PerfQuery::tp)
      .def_readwrite("precision", &PerfQuery::precision)
      .def_readwrite("kv_precision", &PerfQuery::kv_precision)
      .def_readwrite("phase", &PerfQuery::phase)
      .def_readwrite("batch", &PerfQuery::batch)
      .def_readwrite("context_tokens", &PerfQuery::context_tokens)
      .def_readwrite("max_throughput", &PerfQuery::max_throughput)
      .def_readwrite("input_tokens", &PerfQuery::input_tokens)
      .def_readwrite("output_tokens", &PerfQuery::output_tokens)
      .def_readwrite("max_batch", &PerfQuery::max_batch)
      .def_readwrite("tpot_ms", &PerfQuery::tpot_ms)
      .def_readwrite("step_model", &PerfQuery::step_model)
      .def_readwrite("decode_attention", &PerfQuery::decode_attention)
      .def_readwrite("lengths", &PerfQuery::lengths_path)
      .def_readwrite("calibration", &PerfQuery::calibration_path);
  m.def("perf", [](const gpuwise::Catalog& c, const PerfQuery& q) { return interruptible([&] { return gpuwise::perf(c, q); }); });

  using gpuwise::TrainQuery;
  py::class_<TrainQuery>(m, "TrainQuery")
      .def(py::init<>())
      .def_readwrite("model", &TrainQuery::model)
      .def_readwrite("tokens", &TrainQuery::tokens)
      .def_readwrite("accelerator", &TrainQuery::accelerator)
      .def_readwrite("count", &TrainQuery::count)
      .def_readwrite("offering", &TrainQuery::offering)
      .def_readwrite("precision", &TrainQuery::precision)
      .def_readwrite("pricing", &TrainQuery::pricing)
      .def_readwrite("zero", &TrainQuery::zero)
      .def_readwrite("recompute", &TrainQuery::recompute)
      .def_readwrite("allow_tcp_clusters", &TrainQuery::allow_tcp_clusters)
      .def_readwrite("cross_zone", &TrainQuery::cross_zone)
      .def_readwrite("deadline_days", &TrainQuery::deadline_days)
      .def_readwrite("sequence_length", &TrainQuery::sequence_length)
      .def_readwrite("global_batch_tokens", &TrainQuery::global_batch_tokens)
      .def_readwrite("preemptions_per_hour", &TrainQuery::preemptions_per_hour)
      .def_readwrite("spot_trace", &TrainQuery::spot_trace)
      .def_readwrite("storage_gbps", &TrainQuery::storage_gbps)
      .def_readwrite("checkpoint_interval_min", &TrainQuery::checkpoint_interval_min)
      .def_readwrite("provisioning_s", &TrainQuery::provisioning_s)
      .def_readwrite("runs", &TrainQuery::runs)
      .def_readwrite("seed", &TrainQuery::seed)
      .def_readwrite("clouds", &TrainQuery::clouds)
      .def_readwrite("regions", &TrainQuery::regions)
      .def_readwrite("calibration", &TrainQuery::calibration_path);
  m.def("train", [](const gpuwise::Catalog& c, const TrainQuery& q) { return interruptible([&] { return gpuwise::train(c, q); }); });

  py::class_<gpuwise::ScaleOptions>(m, "ScaleOptions")
      .def(py::init<>())
      .def_readwrite("calibration", &gpuwise::ScaleOptions::calibration_path)
      .def_readwrite("seed", &gpuwise::ScaleOptions::seed)
      .def_readwrite("hours", &gpuwise::ScaleOptions::hours)
      .def_readwrite("shapes", &gpuwise::ScaleOptions::shapes)
      .def_readwrite("explain", &gpuwise::ScaleOptions::explain)
      .def_readwrite("jobs", &gpuwise::ScaleOptions::jobs)
      .def_readwrite("exact", &gpuwise::ScaleOptions::exact)
      .def_readwrite("fast_forward", &gpuwise::ScaleOptions::fast_forward);
  m.def("scale", [](const gpuwise::Catalog& c, const gpuwise::Spec& s, const gpuwise::ScaleOptions& o) {
    return interruptible([&] { return gpuwise::scale(c, s, o); });
  });

  using gpuwise::MixQuery;
  py::class_<MixQuery>(m, "MixQuery")
      .def(py::init<>())
      .def_readwrite("demand", &MixQuery::demand)
      .def_readwrite("offering", &MixQuery::offering)
      .def_readwrite("service", &MixQuery::service)
      .def_readwrite("on_demand", &MixQuery::on_demand)
      .def_readwrite("reserved_1y", &MixQuery::reserved_1y)
      .def_readwrite("reserved_3y", &MixQuery::reserved_3y)
      .def_readwrite("spot", &MixQuery::spot)
      .def_readwrite("horizon_months", &MixQuery::horizon_months)
      .def_readwrite("seed", &MixQuery::seed);
  m.def("mix", [](const gpuwise::Catalog& c, const MixQuery& q) { return interruptible([&] { return gpuwise::mix(c, q); }); });

  py::class_<gpuwise::FleetOptions>(m, "FleetOptions")
      .def(py::init<>())
      .def_readwrite("calibration", &gpuwise::FleetOptions::calibration_path)
      .def_readwrite("seed", &gpuwise::FleetOptions::seed);
  m.def("fleet", [](const gpuwise::Catalog& c, const gpuwise::Spec& s, const gpuwise::FleetOptions& o) {
    return interruptible([&] { return gpuwise::fleet(c, s, o); });
  });

  using gpuwise::AuditQuery;
  py::class_<AuditQuery>(m, "AuditQuery")
      .def(py::init<>())
      .def_readwrite("files", &AuditQuery::files)
      .def_readwrite("telemetry_format", &AuditQuery::telemetry_format)
      .def_readwrite("timestamp_unit", &AuditQuery::timestamp_unit)
      .def_readwrite("host", &AuditQuery::host)
      .def_readwrite("columns", &AuditQuery::columns)
      .def_readwrite("metric", &AuditQuery::metric)
      .def_readwrite("label_columns", &AuditQuery::label_columns)
      .def_readwrite("prometheus", &AuditQuery::prometheus_url)
      .def_readwrite("range", &AuditQuery::range)
      .def_readwrite("selector", &AuditQuery::selector)
      .def_readwrite("prometheus_timeout_s", &AuditQuery::prometheus_timeout_s)
      .def_readwrite("prometheus_retries", &AuditQuery::prometheus_retries)
      .def_readwrite("max_points_per_query", &AuditQuery::max_points_per_query)
      .def_readwrite("prometheus_concurrency", &AuditQuery::prometheus_concurrency)
      .def_readwrite("use_recording_rules", &AuditQuery::use_recording_rules)
      .def_readwrite("usd_per_gpu_hour", &AuditQuery::usd_per_gpu_hour)
      .def_readwrite("host_usd_per_hour", &AuditQuery::host_usd_per_hour)
      .def_readwrite("always_on", &AuditQuery::always_on)
      .def_readwrite("accelerator", &AuditQuery::accelerator)
      .def_readwrite("offering", &AuditQuery::offering)
      .def_readwrite("group_by", &AuditQuery::group_by)
      .def_readwrite("min_coverage_hours", &AuditQuery::min_coverage_hours)
      .def_readwrite("top", &AuditQuery::top)
      .def_readwrite("allow_partial", &AuditQuery::allow_partial);
  // Warnings go to Python's warnings module from the wrapper, after the call (not from the
  // worker thread, which holds no GIL).
  m.def("audit", [](const gpuwise::Catalog& c, const AuditQuery& q) { return interruptible([&] { return gpuwise::audit(c, q); }); });
  m.def("recording_rules", &gpuwise::recording_rules);
}
