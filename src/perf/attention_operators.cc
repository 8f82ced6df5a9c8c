#include "perf/attention_operators.h"

#include <algorithm>
#include <cmath>

#include "core/csv.h"
#include "core/pattern_search.h"
#include "core/text.h"
#include "perf/vidur_files.h"

namespace gw {

double AttentionRoofline::decode_time_s(double sequences, double kv_tokens, double kv_bytes_per_token,
                                        double bandwidth_bytes_per_s) const {
  if (sequences <= 0) return 0;
  return decode_launch_s + sequences * decode_per_sequence_s +
         kv_tokens * kv_bytes_per_token / (bandwidth_bytes_per_s * decode_memory);
}

double AttentionRoofline::decode_per_query_head_time_s(double sequences, double kv_tokens, double kv_bytes_per_token,
                                                       double kv_bytes_per_element, double query_heads_per_kv_head,
                                                       double bandwidth_bytes_per_s, double l2_bytes_per_s) const {
  double grouped = decode_time_s(sequences, kv_tokens, kv_bytes_per_token, bandwidth_bytes_per_s);
  if (sequences <= 0 || query_heads_per_kv_head <= 1) return grouped;
  double fixed = decode_launch_s + sequences * decode_per_sequence_s;
  if (l2_bytes_per_s <= 0) return fixed + query_heads_per_kv_head * (grouped - fixed);
  // Paced by the work per element (load, convert to fp32, multiply-add), which a narrower cache
  // does not shrink: its elements are charged as 16-bit ones. Kernels that convert a cache on the
  // fly gain nothing from fp8 elsewhere too: github.com/NVIDIA/TensorRT-LLM/issues/2372 (XQA on
  // H100, 2024-10), github.com/flashinfer-ai/flashinfer/issues/1753 (fp8 KV 30% slower than bf16),
  // github.com/vllm-project/vllm/pull/45829 (A100: 1.60x the 16-bit kernel's time).
  double l2_bytes_per_token = kv_bytes_per_token * std::max(1.0, 2.0 / kv_bytes_per_element);
  return std::max(grouped, fixed + query_heads_per_kv_head * kv_tokens * l2_bytes_per_token / l2_bytes_per_s);
}

double measured_l2_read_bytes_per_s(std::string_view accelerator) {
  // github.com/te42kyfo/gpu-benches, gpu-l2-cache (one block per SM, every block reading the same
  // buffer): the median over its 4-25 MB data sets, which fit every one of these L2s. a100_80.txt,
  // h200.txt and l40.txt at commit 3088b33 (2024-04-03), h100_pcie.txt at f54baaa (2023-11-02).
  // H100 SXM and GH200 take H200's figure: the same GH100 configuration (132 SMs, 50 MB L2, 1,980
  // MHz boost), differing in HBM; A100 40GB takes A100 80GB's: the same GA100 configuration (108
  // SMs, 40 MB L2, 1,410 MHz). L40S takes L40's: the same AD102 configuration (142 SMs, 96 MB L2).
  constexpr double kA100 = 5'403e9, kH200 = 9'920e9, kH100Pcie = 6'993e9, kL40 = 5'189e9;
  if (accelerator == "A100-80GB" || accelerator == "A100-40GB") return kA100;
  if (accelerator == "H200" || accelerator == "H100" || accelerator == "GH200") return kH200;
  if (accelerator == "H100-PCIE") return kH100Pcie;
  if (accelerator == "L40" || accelerator == "L40S") return kL40;
  return 0;
}

double AttentionRoofline::prefill_time_s(double tokens, double attended_pairs, double q_dim, double peak_flops) const {
  if (tokens <= 0) return 0;
  return prefill_launch_s + 4 * q_dim * (attended_pairs + tokens * prefill_pairs_per_token) / (peak_flops * prefill_compute);
}

Result<std::vector<ProfiledAttention>> parse_vidur_attention_profile(std::string_view text, const std::string& path,
                                                                     const std::string& device, const std::string& model) {
  auto table = parse_csv(text, path);
  if (!table.ok()) return table.error();
  std::vector<ProfiledAttention> rows;
  for (const auto& row : table.value().rows) {
    CsvRecord r(table.value(), row);
    ProfiledAttention p;
    p.device = device;
    p.model = model;
    std::string prefill = r.text("is_prefill");
    if (prefill != "True" && prefill != "False")
      return Error{path, row.line, "is_prefill", "expected True or False, got '" + prefill + "'"};
    p.prefill = prefill == "True";
    double hidden = r.number("n_embd", 1, 1e6), heads = r.number("n_q_head", 1, 1e5);
    double kv_heads = r.number("n_kv_head", 1, 1e5);
    p.tensor_parallel = static_cast<int>(r.number("num_tensor_parallel_workers", 1, 1024));
    double head_dim = hidden / heads;
    p.q_dim = heads / p.tensor_parallel * head_dim;
    p.kv_dim = std::max(1.0, kv_heads / p.tensor_parallel) * head_dim;
    p.batch = r.number("batch_size", 1, 1e6);
    p.chunk = r.number("prefill_chunk_size", 0, 1e7);
    p.kv_tokens = r.number("kv_cache_size", 0, 1e8);
    // The kernel and the reshapes around it; an empty reshape cell: not measured, adds nothing.
    std::string kernel = p.prefill ? "time_stats.attn_prefill.median" : "time_stats.attn_decode.median";
    double ms = r.number(kernel, 0, 1e6);
    for (const char* reshape : {"time_stats.attn_input_reshape.median", "time_stats.attn_output_reshape.median"})
      if (auto v = r.optional_number(reshape, 0, 1e6)) ms += *v;
    p.time_s = ms * 1e-3;
    if (!r.ok()) return r.error();
    if (p.prefill && p.chunk <= 0) return Error{path, row.line, "prefill_chunk_size", "a prefill row needs a chunk"};
    if (p.time_s > 0) rows.push_back(p);
  }
  if (rows.empty()) return Error{path, 0, "", "no profiled rows"};
  return rows;
}

Result<std::vector<ProfiledAttention>> read_vidur_attention_profiles(const std::string& dir) {
  std::vector<ProfiledAttention> all;
  for (const auto& file : vidur_files(dir, "attention.csv")) {
    std::string text, message;
    if (!read_file(file.path, text, message)) return Error{file.path, 0, "", "cannot read: " + message};
    auto rows = parse_vidur_attention_profile(text, file.path, file.device, file.model);
    if (!rows.ok()) return rows.error();
    all.insert(all.end(), rows.value().begin(), rows.value().end());
  }
  return all;
}

const std::vector<ProfiledAttention>& embedded_attention_profiles() {
  static const std::vector<ProfiledAttention> profiles = [] {
    std::vector<ProfiledAttention> all;
    for_each_embedded_vidur_file("attention.csv", [&](const VidurFile& file, std::string_view text) {
      auto rows = parse_vidur_attention_profile(text, file.path, file.device, file.model);
      if (rows.ok()) all.insert(all.end(), rows.value().begin(), rows.value().end());  // checked by a test
    });
    return all;
  }();
  return profiles;
}

double predicted_attention_s(const AttentionRoofline& f, const ProfiledAttention& row, double peak_flops,
                             double bandwidth_bytes_per_s) {
  return row.prefill ? f.prefill_time_s(row.chunk, row.attended_pairs(), row.q_dim, peak_flops)
                     : f.decode_time_s(row.batch, row.batch * row.kv_tokens, row.kv_bytes_per_token(), bandwidth_bytes_per_s);
}

AttentionRoofline fit_attention_roofline(const std::vector<const ProfiledAttention*>& rows, double peak_flops,
                                         double bandwidth_bytes_per_s) {
  AttentionRoofline f;
  // From a few starting efficiencies (the loss has shallow ridges where an efficiency trades
  // against a per-item term), the best fit kept.
  auto fit = [&](bool prefill, std::vector<double> start, const std::vector<std::pair<double, double>>& bounds,
                 auto assign) {
    auto loss = [&](const std::vector<double>& y) {
      AttentionRoofline t = f;
      assign(t, y);
      double sum = 0;
      for (const auto* r : rows)
        if (r->prefill == prefill) sum += log_ratio_squared(predicted_attention_s(t, *r, peak_flops, bandwidth_bytes_per_s), r->time_s);
      return sum;
    };
    std::vector<double> best;
    double best_loss = 0;
    for (double efficiency : {0.2, 0.5, 0.8}) {
      std::vector<double> x = start;
      x[0] = efficiency;
      pattern_search(x, bounds, loss);
      double value = loss(x);
      if (best.empty() || value < best_loss) best = x, best_loss = value;
    }
    assign(f, best);
  };
  fit(false, {f.decode_memory, f.decode_launch_s, 1e-7}, {{0.05, 1.0}, {1e-7, 1e-3}, {1e-10, 1e-4}},
      [](AttentionRoofline& t, const std::vector<double>& y) {
        t.decode_memory = y[0], t.decode_launch_s = y[1], t.decode_per_sequence_s = y[2];
      });
  fit(true, {f.prefill_compute, f.prefill_launch_s, 64}, {{0.02, 1.0}, {1e-7, 1e-3}, {0, 1e5}},
      [](AttentionRoofline& t, const std::vector<double>& y) {
        t.prefill_compute = y[0], t.prefill_launch_s = y[1], t.prefill_pairs_per_token = y[2];
      });
  return f;
}

}  // namespace gw
