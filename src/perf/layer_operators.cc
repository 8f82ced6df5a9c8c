#include "perf/layer_operators.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <mutex>

#include <fmt/format.h>

#include "core/csv.h"
#include "core/pattern_search.h"
#include "catalog/catalog.h"
#include "catalog/embedded.h"
#include "core/text.h"
#include "perf/efficiency.h"
#include "perf/matmul_efficiency.h"
#include "perf/step_time.h"
#include "perf/vidur_files.h"

namespace gw {

namespace {

constexpr const char* kNames[kLayerOperators] = {"input_layernorm", "attn_pre_proj", "attn_rope",
                                                 "attn_post_proj",  "post_attention_layernorm", "mlp_up_proj",
                                                 "mlp_act",         "mlp_down_proj", "add"};

// A GEMM's compute and memory times (without the launch).
std::pair<double, double> gemm_terms_s(const OperatorRoofline& r, const OperatorShape& s, double tokens,
                                       const GemmPrecision& p) {
  return {2 * (tokens + r.gemm_tile_tokens) * s.n * s.k / (r.peak_flops * p.peak_scale * r.gemm_compute * p.compute_scale),
          (p.weight_bytes * s.n * s.k + p.activation_bytes * tokens * s.k + 2 * tokens * s.n) /
              (r.bandwidth_bytes_per_s * r.gemm_memory)};
}


double sixteen_bit_peak_flops(const Accelerator& a) {
  return a.peak(Precision::bf16).value_or(a.peak(Precision::fp16).value_or(0)) * 1e12;
}

}  // namespace

const char* operator_name(LayerOperator op) { return kNames[static_cast<int>(op)]; }

bool is_gemm(LayerOperator op) {
  return op == LayerOperator::attn_pre_proj || op == LayerOperator::attn_post_proj || op == LayerOperator::mlp_up_proj ||
         op == LayerOperator::mlp_down_proj;
}

LayerDims layer_dims(const ModelArch& arch, int tensor_parallel) {
  LayerDims d;
  d.hidden = arch.hidden_size;
  d.heads = arch.num_heads;
  d.kv_heads = arch.num_kv_heads;
  d.head_dim = arch.head_dim > 0 ? arch.head_dim : arch.hidden_size / std::max(1, arch.num_heads);
  d.ffn = arch.intermediate_size;
  d.gated = arch.gated_mlp;
  d.post_attention_norm = !arch.parallel_attention && arch.norms_per_layer >= 2;
  d.tensor_parallel = std::max(1, tensor_parallel);
  return d;
}

OperatorShape operator_shape(LayerOperator op, const LayerDims& d) {
  const double tp = d.tensor_parallel;
  const double q = d.heads * d.head_dim / tp, kv = d.kv_heads * d.head_dim / tp, ffn = d.ffn / tp;
  OperatorShape s;
  switch (op) {
    case LayerOperator::attn_pre_proj: s.n = q + 2 * kv, s.k = d.hidden; break;
    case LayerOperator::attn_post_proj: s.n = d.hidden, s.k = q; break;
    case LayerOperator::mlp_up_proj: s.n = (d.gated ? 2 : 1) * ffn, s.k = d.hidden; break;
    case LayerOperator::mlp_down_proj: s.n = d.hidden, s.k = ffn; break;
    // fp16 bytes read and written per token.
    case LayerOperator::input_layernorm:
    case LayerOperator::post_attention_layernorm: s.bytes_per_token = 4 * d.hidden; break;
    case LayerOperator::attn_rope: s.bytes_per_token = 4 * (q + kv); break;
    case LayerOperator::mlp_act: s.bytes_per_token = (d.gated ? 6 : 4) * ffn; break;
    case LayerOperator::add: s.bytes_per_token = 6 * d.hidden; break;
  }
  return s;
}

double OperatorRoofline::time_s(LayerOperator op, const OperatorShape& shape, double tokens, double hidden,
                                const GemmPrecision& precision) const {
  if (is_gemm(op)) return gemm_time_s(shape, tokens, precision);
  const Elementwise& e = elementwise[static_cast<size_t>(op)];
  return tokens * shape.bytes_per_token / (bandwidth_bytes_per_s * e.efficiency) + e.launch_s + e.per_hidden_s * hidden;
}

GemmPrecision gemm_precision(const Accelerator& a, Precision weights, double eight_bit_compute_scale) {
  GemmPrecision p;
  const double sixteen = sixteen_bit_peak_flops(a);
  switch (weights) {
    case Precision::fp8:
    case Precision::int8: {
      p.weight_bytes = 1;
      // W8A8 on 8-bit tensor cores; without them (fp8 before Ada/Hopper) the weights are
      // dequantized into 16-bit GEMMs.
      double peak = compute_peak_tflops(a, weights) * 1e12;
      if (sixteen > 0 && peak > sixteen * 1.01) {
        p.activation_bytes = 1;
        p.peak_scale = peak / sixteen;
        p.compute_scale = eight_bit_compute_scale;
      }
      break;
    }
    case Precision::int4:
    case Precision::fp4: p.weight_bytes = (4.0 + 20.0 / 128) / 8; break;  // group-128 scales, 16-bit GEMMs
    default: break;
  }
  return p;
}

double OperatorRoofline::gemm_time_s(const OperatorShape& s, double tokens, const GemmPrecision& precision) const {
  auto [compute, memory] = gemm_terms_s(*this, s, tokens, precision);
  return std::max(compute, memory) + gemm_launch_s;
}

bool OperatorRoofline::gemm_compute_bound(const OperatorShape& s, double tokens, const GemmPrecision& precision) const {
  auto [compute, memory] = gemm_terms_s(*this, s, tokens, precision);
  return compute > memory;
}

double ProfiledLayer::total_s() const {
  double total = 0;
  for (double t : time_s) total += t;
  return total;
}

std::array<bool, kLayerOperators> ProfiledLayer::timed() const {
  std::array<bool, kLayerOperators> t{};
  for (size_t i = 0; i < t.size(); ++i) t[i] = time_s[i] > 0;
  return t;
}

Result<std::vector<ProfiledLayer>> parse_vidur_layer_profile(std::string_view text, const std::string& path,
                                                             const std::string& device, const std::string& model) {
  auto table = parse_csv(text, path);
  if (!table.ok()) return table.error();
  std::vector<ProfiledLayer> rows;
  for (const auto& row : table.value().rows) {
    CsvRecord r(table.value(), row);
    ProfiledLayer p;
    p.device = device;
    p.model = model;
    p.tokens = r.number("num_tokens", 1, 1e7);
    double heads = r.number("n_head", 1, 1e5);
    p.dims.hidden = r.number("n_embd", 1, 1e6);
    p.dims.heads = heads;
    p.dims.kv_heads = r.number("n_kv_head", 1, 1e5);
    p.dims.head_dim = p.dims.hidden / heads;
    p.dims.ffn = r.number("n_expanded_embd", 1, 1e7);
    p.dims.tensor_parallel = static_cast<int>(r.number("num_tensor_parallel_workers", 1, 1024));
    std::string gated = r.text("use_gated_mlp");
    if (gated != "True" && gated != "False")
      return Error{path, row.line, "use_gated_mlp", "expected True or False, got '" + gated + "'"};
    p.dims.gated = gated == "True";
    p.dims.post_attention_norm = table.value().column("time_stats.post_attention_layernorm.median") >= 0;
    for (int i = 0; i < kLayerOperators; ++i) {
      std::string column = fmt::format("time_stats.{}.median", kNames[i]);
      // A column Vidur did not write (no post-attention norm where one norm feeds attention and
      // MLP) or an empty cell: the operator does not run, so it adds nothing.
      if (table.value().column(column) < 0 || r.text(column).empty()) continue;
      p.time_s[static_cast<size_t>(i)] = r.number(column, 0, 1e6) * 1e-3;
    }
    if (!r.ok()) return r.error();
    rows.push_back(p);
  }
  if (rows.empty()) return Error{path, 0, "", "no profiled rows"};
  return rows;
}

Result<std::vector<ProfiledLayer>> read_vidur_layer_profiles(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(std::filesystem::path(dir) / "compute", ec))
    return Error{dir, 0, "", "not a Vidur profile folder (no compute/ inside)"};
  std::vector<ProfiledLayer> all;
  for (const auto& file : vidur_files(dir, "mlp.csv")) {
    std::string text, message;
    if (!read_file(file.path, text, message)) return Error{file.path, 0, "", "cannot read: " + message};
    auto rows = parse_vidur_layer_profile(text, file.path, file.device, file.model);
    if (!rows.ok()) return rows.error();
    all.insert(all.end(), rows.value().begin(), rows.value().end());
  }
  if (all.empty()) return Error{dir, 0, "", "no compute/<device>/<model>/mlp.csv inside"};
  return all;
}

std::string profiled_accelerator(const std::string& device) {
  // Vidur's README (commit 7d47513): A100 80GB SXM and H100 SXM (DGX nodes), A40 (pairs on NVLink).
  if (device == "a100") return "A100-80GB";
  if (device == "h100") return "H100";
  if (device == "a40") return "A40";
  return "";
}

const Accelerator* profiled_device_accelerator(const std::string& device, const Catalog& catalog) {
  std::string vidur = profiled_accelerator(device);
  return catalog.find_accelerator(vidur.empty() ? device : vidur);
}

namespace {

// Embedded mlp.csv files by device: profiles/<source>/compute/<device>/<org>/<model>/mlp.csv.
std::vector<ProfiledLayer> parse_embedded_profiles(const std::string* only_device) {
  std::vector<ProfiledLayer> all;
  for_each_embedded_vidur_file("mlp.csv", [&](const VidurFile& file, std::string_view text) {
    if (only_device && file.device != *only_device) return;
    auto rows = parse_vidur_layer_profile(text, file.path, file.device, file.model);
    if (rows.ok()) all.insert(all.end(), rows.value().begin(), rows.value().end());  // checked by a test
  });
  return all;
}

}  // namespace

const std::vector<ProfiledLayer>& embedded_layer_profiles() {
  static const std::vector<ProfiledLayer> profiles = parse_embedded_profiles(nullptr);
  return profiles;
}

const std::vector<ProfiledLayer>& embedded_layer_profiles(const std::string& device) {
  static std::mutex mutex;
  static std::map<std::string, std::vector<ProfiledLayer>> by_device;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = by_device.find(device);
  if (it == by_device.end()) it = by_device.emplace(device, parse_embedded_profiles(&device)).first;
  return it->second;
}

std::string rooflines_to_csv(const std::map<std::string, OperatorRoofline>& by_device) {
  std::string out = "device,peak_flops,bandwidth_bytes_per_s,gemm_compute,gemm_tile_tokens,gemm_memory,gemm_launch_s";
  for (int i = 0; i < kLayerOperators; ++i)
    if (!is_gemm(static_cast<LayerOperator>(i)))
      out += fmt::format(",{0}_efficiency,{0}_launch_s,{0}_per_hidden_s", kNames[i]);
  out += ",attention_fitted_on,decode_memory,decode_launch_s,decode_per_sequence_s,prefill_compute,prefill_launch_s,"
         "prefill_pairs_per_token\n";
  for (const auto& [device, r] : by_device) {
    out += fmt::format("{},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g}", device, r.peak_flops, r.bandwidth_bytes_per_s,
                       r.gemm_compute, r.gemm_tile_tokens, r.gemm_memory, r.gemm_launch_s);
    for (int i = 0; i < kLayerOperators; ++i) {
      if (is_gemm(static_cast<LayerOperator>(i))) continue;
      const auto& e = r.elementwise[static_cast<size_t>(i)];
      out += fmt::format(",{:.6g},{:.6g},{:.6g}", e.efficiency, e.launch_s, e.per_hidden_s);
    }
    const AttentionRoofline& a = r.attention;
    out += fmt::format(",{},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g}\n", r.attention_fitted_on, a.decode_memory,
                       a.decode_launch_s, a.decode_per_sequence_s, a.prefill_compute, a.prefill_launch_s,
                       a.prefill_pairs_per_token);
  }
  return out;
}

Result<std::map<std::string, OperatorRoofline>> parse_rooflines_csv(std::string_view text, const std::string& path) {
  auto table = parse_csv(text, path);
  if (!table.ok()) return table.error();
  std::map<std::string, OperatorRoofline> out;
  for (const auto& row : table.value().rows) {
    CsvRecord r(table.value(), row);
    std::string device = r.text("device");
    if (device.empty()) return Error{path, row.line, "device", "missing"};
    OperatorRoofline f;
    f.peak_flops = r.number("peak_flops", 1, 1e20);
    f.bandwidth_bytes_per_s = r.number("bandwidth_bytes_per_s", 1, 1e16);
    f.gemm_compute = r.number("gemm_compute", 1e-3, 1);
    f.gemm_tile_tokens = r.number("gemm_tile_tokens", 0, 1e6);
    f.gemm_memory = r.number("gemm_memory", 1e-3, 1);
    f.gemm_launch_s = r.number("gemm_launch_s", 0, 1);
    for (int i = 0; i < kLayerOperators; ++i) {
      if (is_gemm(static_cast<LayerOperator>(i))) continue;
      auto& e = f.elementwise[static_cast<size_t>(i)];
      e.efficiency = r.number(fmt::format("{}_efficiency", kNames[i]), 1e-4, 1);
      e.launch_s = r.number(fmt::format("{}_launch_s", kNames[i]), 0, 1);
      e.per_hidden_s = r.number(fmt::format("{}_per_hidden_s", kNames[i]), 0, 1);
    }
    f.attention_fitted_on = r.required_text("attention_fitted_on");
    f.attention.decode_memory = r.number("decode_memory", 1e-3, 1);
    f.attention.decode_launch_s = r.number("decode_launch_s", 0, 1);
    f.attention.decode_per_sequence_s = r.number("decode_per_sequence_s", 0, 1);
    f.attention.prefill_compute = r.number("prefill_compute", 1e-3, 1);
    f.attention.prefill_launch_s = r.number("prefill_launch_s", 0, 1);
    f.attention.prefill_pairs_per_token = r.number("prefill_pairs_per_token", 0, 1e6);
    if (!r.ok()) return r.error();
    out[device] = f;
  }
  return out;
}

const std::map<std::string, OperatorRoofline>& embedded_rooflines() {
  static const std::map<std::string, OperatorRoofline> rooflines = [] {
    for (const auto& file : embedded_catalog_files()) {
      std::string_view path = file.path;
      if (path.rfind("profiles/", 0) != 0 || path.size() < 14 || path.substr(path.size() - 14) != "/rooflines.csv") continue;
      auto parsed = parse_rooflines_csv(file.contents, "catalog/" + std::string(path));
      if (parsed.ok()) return parsed.value();  // checked by a test
    }
    return std::map<std::string, OperatorRoofline>{};
  }();
  return rooflines;
}

OperatorRoofline fit_operator_roofline(const std::vector<const ProfiledLayer*>& rows, double peak_flops,
                                       double bandwidth_bytes_per_s) {
  OperatorRoofline r;
  r.peak_flops = peak_flops;
  r.bandwidth_bytes_per_s = bandwidth_bytes_per_s;
  struct Point {
    OperatorShape shape;
    double tokens, hidden, measured_s;
  };
  std::array<std::vector<Point>, kLayerOperators> points;
  for (const ProfiledLayer* row : rows)
    for (int i = 0; i < kLayerOperators; ++i)
      if (row->time_s[static_cast<size_t>(i)] > 0)
        points[static_cast<size_t>(i)].push_back({operator_shape(static_cast<LayerOperator>(i), row->dims), row->tokens,
                                                  row->dims.hidden, row->time_s[static_cast<size_t>(i)]});
  // One GEMM class (the four projections), each elementwise operator on its own.
  std::vector<double> gemm = {r.gemm_compute, r.gemm_tile_tokens, r.gemm_memory, r.gemm_launch_s};
  pattern_search(gemm, {{0.05, 1.0}, {0.1, 4096}, {0.05, 1.0}, {1e-7, 1e-3}}, [&](const std::vector<double>& x) {
    OperatorRoofline t = r;
    t.gemm_compute = x[0], t.gemm_tile_tokens = x[1], t.gemm_memory = x[2], t.gemm_launch_s = x[3];
    double loss = 0;
    for (int i = 0; i < kLayerOperators; ++i)
      if (is_gemm(static_cast<LayerOperator>(i)))
        for (const auto& p : points[static_cast<size_t>(i)]) loss += log_ratio_squared(t.gemm_time_s(p.shape, p.tokens), p.measured_s);
    return loss;
  });
  r.gemm_compute = gemm[0], r.gemm_tile_tokens = gemm[1], r.gemm_memory = gemm[2], r.gemm_launch_s = gemm[3];
  for (int i = 0; i < kLayerOperators; ++i) {
    auto op = static_cast<LayerOperator>(i);
    if (is_gemm(op) || points[static_cast<size_t>(i)].empty()) continue;
    auto& e = r.elementwise[static_cast<size_t>(i)];
    std::vector<double> x = {e.efficiency, e.launch_s, 1e-10};
    pattern_search(x, {{0.01, 1.0}, {1e-7, 1e-3}, {1e-13, 1e-6}}, [&](const std::vector<double>& y) {
      OperatorRoofline t = r;
      t.elementwise[static_cast<size_t>(i)] = {y[0], y[1], y[2]};
      double loss = 0;
      for (const auto& p : points[static_cast<size_t>(i)]) loss += log_ratio_squared(t.time_s(op, p.shape, p.tokens, p.hidden), p.measured_s);
      return loss;
    });
    e = {x[0], x[1], x[2]};
  }
  return r;
}

void fit_device_attention(OperatorRoofline& roofline, const std::string& device,
                          const std::vector<ProfiledAttention>& profiles, const Catalog& catalog) {
  auto measured_on = [&](const std::string& d) { return profiled_device_accelerator(d, catalog); };
  std::string source;
  for (const auto& p : profiles)
    if (p.device == device) source = device;
  for (const auto& p : profiles)
    if (source.empty() || (source != device && p.device < source)) source = p.device;
  const Accelerator* a = source.empty() ? nullptr : measured_on(source);
  if (!a) return;  // no attention profile: the defaults stand (the shipped fits always have one)
  std::vector<const ProfiledAttention*> rows;
  for (const auto& p : profiles)
    if (p.device == source) rows.push_back(&p);
  roofline.attention = fit_attention_roofline(rows, sixteen_bit_peak_flops(*a), a->memory_gb_per_s * 1e9);
  roofline.attention_fitted_on = source;
}

void LayerOperatorModel::add_measured(const ProfiledLayer& row) {
  for (int i = 0; i < kLayerOperators; ++i) {
    if (row.time_s[static_cast<size_t>(i)] <= 0) continue;
    auto op = static_cast<LayerOperator>(i);
    double hidden = is_gemm(op) ? 0 : row.dims.hidden;  // elementwise times also depend on the row width
    tables_[Key{row.device, i, operator_shape(op, row.dims), hidden}][row.tokens] = row.time_s[static_cast<size_t>(i)];
  }
}

namespace {

// A table's time at tokens within its profiled range, interpolated; NaN outside it.
double table_time_s(const std::map<double, double>& table, double tokens) {
  if (tokens < table.begin()->first || tokens > table.rbegin()->first) return std::nan("");
  auto hi = table.lower_bound(tokens);
  if (hi->first == tokens) return hi->second;
  auto lo = std::prev(hi);
  return lo->second + (hi->second - lo->second) * (tokens - lo->first) / (hi->first - lo->first);
}

}  // namespace

LayerOperatorModel::BoundLayer LayerOperatorModel::bind(const std::string& device, const LayerDims& dims,
                                                        const std::array<bool, kLayerOperators>* timed,
                                                        const GemmPrecision& precision) const {
  BoundLayer layer;
  layer.roofline_ = &rooflines_.at(device);
  layer.hidden_ = dims.hidden;
  layer.precision_ = precision;
  for (int i = 0; i < kLayerOperators; ++i) {
    auto op = static_cast<LayerOperator>(i);
    if (timed ? !(*timed)[static_cast<size_t>(i)] : op == LayerOperator::post_attention_layernorm && !dims.post_attention_norm)
      continue;
    BoundLayer::Operator o{op, operator_shape(op, dims), nullptr};
    auto table = tables_.find(Key{device, i, o.shape, is_gemm(op) ? 0 : dims.hidden});
    if (table != tables_.end() && (!is_gemm(op) || precision.sixteen_bit())) o.table = &table->second;
    layer.operators_.push_back(o);
  }
  return layer;
}

LayerOperatorModel::LayerTime LayerOperatorModel::BoundLayer::time(double tokens) const {
  LayerTime out;
  for (const auto& o : operators_) {
    // Interpolated within the profiled tokens only; beyond them the roofline answers.
    double t = o.table ? table_time_s(*o.table, tokens) : std::nan("");
    if (!std::isnan(t)) {
      out.time_s += t;
      ++out.measured_operators;
    } else {
      out.time_s += roofline_->time_s(o.op, o.shape, tokens, hidden_, precision_);
      ++out.roofline_operators;
    }
  }
  return out;
}

LayerOperatorModel::LayerTime LayerOperatorModel::layer_time(const std::string& device, const LayerDims& dims,
                                                             double tokens, const std::array<bool, kLayerOperators>* timed,
                                                             const GemmPrecision& precision) const {
  return bind(device, dims, timed, precision).time(tokens);
}

namespace {

std::mutex user_mutex;
UserLayerProfiles user_profiles;  // guarded by user_mutex

}  // namespace

Result<UserLayerProfiles> load_user_layer_profiles(const std::string& dir, const Catalog& catalog) {
  auto rows = read_vidur_layer_profiles(dir);
  if (!rows.ok()) return rows.error();
  UserLayerProfiles out;
  out.dir = dir;
  std::map<std::string, std::vector<ProfiledLayer>> by_accelerator;
  for (auto row : rows.value()) {
    const Accelerator* a = profiled_device_accelerator(row.device, catalog);
    if (!a) {
      std::string hint = closest_match(row.device, catalog.accelerator_names());
      return Error{dir + "/compute/" + row.device, 0, "device",
                   "'" + row.device + "' is not a catalog accelerator" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)")};
    }
    row.device = a->name;
    by_accelerator[a->name].push_back(std::move(row));
  }
  // The folder's attention profiles (attention.csv beside mlp.csv), devices named as above.
  auto attention = read_vidur_attention_profiles(dir);
  if (!attention.ok()) return attention.error();
  std::vector<ProfiledAttention> own_attention;
  for (auto row : attention.value()) {
    const Accelerator* a = profiled_device_accelerator(row.device, catalog);
    if (!a) continue;  // a device without mlp.csv is refused above; attention alone adds nothing
    row.device = a->name;
    own_attention.push_back(std::move(row));
  }
  for (auto& [name, device_rows] : by_accelerator) {
    const Accelerator* a = catalog.find_accelerator(name);
    double peak = sixteen_bit_peak_flops(*a);
    std::vector<const ProfiledLayer*> pointers;
    auto model = std::make_shared<LayerOperatorModel>();
    for (const auto& r : device_rows) {
      pointers.push_back(&r);
      model->add_measured(r);
    }
    OperatorRoofline roofline = fit_operator_roofline(pointers, peak, a->memory_gb_per_s * 1e9);
    const std::string accelerator_name = name;  // a lambda may not capture a structured binding before C++20's clang 16
    bool measured_attention = std::any_of(own_attention.begin(), own_attention.end(),
                                          [&](const ProfiledAttention& p) { return p.device == accelerator_name; });
    fit_device_attention(roofline, name, measured_attention ? own_attention : embedded_attention_profiles(), catalog);
    LayerOperatorModel roofline_only;  // the fit's in-sample error, without the tables
    roofline_only.set_roofline(name, roofline);
    std::vector<double> errors;
    for (const auto& r : device_rows) {
      auto timed = r.timed();
      errors.push_back(std::abs(roofline_only.layer_time(name, r.dims, r.tokens, &timed).time_s / r.total_s() - 1));
    }
    std::sort(errors.begin(), errors.end());
    model->set_roofline(name, roofline);
    out.models[name] = model;
    out.rooflines[name] = roofline;
    out.fit_quality[name] = {errors.size(), errors[errors.size() / 2]};
  }
  return out;
}

void set_user_layer_profiles(const UserLayerProfiles& profiles) {
  std::lock_guard<std::mutex> lock(user_mutex);
  user_profiles = profiles;
}

namespace {

std::string attention_basis(const OperatorRoofline& roofline) {
  if (roofline.attention_fitted_on.empty()) return "";
  std::string on = profiled_accelerator(roofline.attention_fitted_on);
  return "; attention kernels by a roofline fitted to " + (on.empty() ? roofline.attention_fitted_on : on) +
         " FlashAttention profiles";
}

}  // namespace

AcceleratorOperators operators_for(const Accelerator& accelerator) {
  {
    std::lock_guard<std::mutex> lock(user_mutex);
    auto mine = user_profiles.models.find(accelerator.name);
    if (mine != user_profiles.models.end())
      return {mine->second, accelerator.name,
              "per-operator times you measured on " + accelerator.name + " (" + user_profiles.dir +
                  "), a roofline fitted to them elsewhere"};
  }
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const LayerOperatorModel>> profiled_models;  // by device
  static std::map<std::string, OperatorRoofline> rooflines;                                 // by device
  // A profiled device's roofline, fitted against the rates of the hardware it was measured on.
  auto fitted = [&](const std::string& device) -> const OperatorRoofline& {
    auto it = rooflines.find(device);
    if (it != rooflines.end()) return it->second;
    auto shipped = embedded_rooflines().find(device);
    if (shipped != embedded_rooflines().end()) return rooflines[device] = shipped->second;
    static const auto catalog = Catalog::embedded();
    const Accelerator* measured_on = catalog.ok() ? catalog.value().find_accelerator(profiled_accelerator(device)) : nullptr;
    std::vector<const ProfiledLayer*> rows;
    for (const auto& r : embedded_layer_profiles(device)) rows.push_back(&r);
    OperatorRoofline roofline;
    if (measured_on && !rows.empty())
      roofline = fit_operator_roofline(rows, sixteen_bit_peak_flops(*measured_on), measured_on->memory_gb_per_s * 1e9);
    if (catalog.ok()) fit_device_attention(roofline, device, embedded_attention_profiles(), catalog.value());
    return rooflines[device] = roofline;
  };
  std::string own_device;
  for (const char* device : {"a100", "h100", "a40"})
    if (profiled_accelerator(device) == accelerator.name) own_device = device;
  std::lock_guard<std::mutex> lock(mutex);
  AcceleratorOperators out;
  if (!own_device.empty()) {
    auto& model = profiled_models[own_device];
    if (!model) {
      auto built = std::make_shared<LayerOperatorModel>();
      for (const auto& r : embedded_layer_profiles(own_device)) built->add_measured(r);
      built->set_roofline(own_device, fitted(own_device));
      model = built;
    }
    out.model = model;
    out.device = own_device;
    out.basis = "per-operator times measured on " + accelerator.name + " (Vidur 7d47513), a roofline fitted to them elsewhere" +
                attention_basis(model->roofline(own_device));
    return out;
  }
  const double sixteen = sixteen_bit_peak_flops(accelerator);
  std::string basis = sixteen >= 600e12 ? "h100" : accelerator.memory_gb_per_s >= 1000 ? "a100" : "a40";
  OperatorRoofline roofline = fitted(basis);
  roofline.peak_flops = sixteen > 0 ? sixteen : 1e12;
  roofline.bandwidth_bytes_per_s = accelerator.memory_gb_per_s * 1e9;
  // The factors are CUDA kernels' shares of an NVIDIA part's peak and bandwidth. Another vendor's
  // kernels reach another share: its peak counts at the ratio of the two parts' measured matmul
  // shares (measured_matmul_share) where both were measured, else, as its bandwidth does, at the
  // ratio of the two families' defaults (default_efficiency, with their sources); 1 for NVIDIA.
  const EfficiencyFactors own = default_efficiency(accelerator), cuda = vendor_default_efficiency("nvidia");
  const auto own_matmul = measured_matmul_share(accelerator.name);
  const auto basis_matmul = measured_matmul_share(profiled_accelerator(basis));
  const bool matmul_measured = accelerator.vendor != "nvidia" && own_matmul && basis_matmul;
  const double compute_share = matmul_measured ? *own_matmul / *basis_matmul : own.compute / cuda.compute;
  const double memory_share = own.memory / cuda.memory;
  roofline.peak_flops *= compute_share;
  roofline.bandwidth_bytes_per_s *= memory_share;
  auto model = std::make_shared<LayerOperatorModel>();
  model->set_roofline(accelerator.name, roofline);
  out.model = model;
  out.device = accelerator.name;
  std::string compute_basis =
      matmul_measured ? fmt::format("the peak: its measured matmul share {:.1f}% against {}'s {:.1f}% "
                                    "(Maximum Achievable Matmul FLOPS, github.com/stas00/ml-engineering); ",
                                    *own_matmul * 100, profiled_accelerator(basis), *basis_matmul * 100)
                      : std::string();
  std::string shares = compute_share == 1 && memory_share == 1
                           ? std::string("'s own peak and bandwidth")
                           : fmt::format("'s own peak x {:.3g} and bandwidth x {:.3g} (what its kernels reach of "
                                         "them against what CUDA kernels reach: {}{}the ratio of the {} to NVIDIA's)",
                                         compute_share, memory_share, compute_basis,
                                         matmul_measured ? "the bandwidth: " : "", own.source);
  out.basis = "a per-operator roofline with the factors fitted to " + profiled_accelerator(basis) +
              " profiles (Vidur 7d47513), at " + accelerator.name + shares + attention_basis(roofline);
  return out;
}

void use_layer_operators(PerfSetup& setup, const Calibration* calibration) {
  if (!setup.accelerator || (calibration && calibration->find(setup.accelerator->name))) return;
  AcceleratorOperators operators = operators_for(*setup.accelerator);
  setup.layer_operators = operators.model;
  setup.operator_device = operators.device;
  setup.operator_basis = operators.basis;
}

}  // namespace gw
