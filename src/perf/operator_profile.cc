#include "perf/operator_profile.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "core/csv.h"
#include "core/text.h"

namespace gw {

namespace {

Result<CsvTable> read_csv(const std::string& path) {
  std::string text, message;
  if (!read_file(path, text, message)) return Error{path, 0, "", "cannot read: " + message};
  return parse_csv(text, path);
}

// Median time of an operator, ms; a missing or empty column reads 0 (not profiled: not run).
double median(const CsvTable& table, const CsvRow& row, const std::string& op) {
  int column = table.column("time_stats." + op + ".median");
  if (column < 0 || row.cells[static_cast<size_t>(column)].empty()) return 0;
  return std::strtod(row.cells[static_cast<size_t>(column)].c_str(), nullptr);
}

double cell(const CsvTable& table, const CsvRow& row, const char* name) {
  int column = table.column(name);
  if (column < 0) return std::nan("");
  return std::strtod(row.cells[static_cast<size_t>(column)].c_str(), nullptr);
}

}  // namespace

OperatorProfileOptions vidur_profile_options(const std::string& dir, const std::string& device, const std::string& node,
                                             const std::string& model, const ModelArch& arch, int tensor_parallel) {
  OperatorProfileOptions o;
  o.mlp_csv = dir + "/compute/" + device + "/" + model + "/mlp.csv";
  o.attention_csv = dir + "/compute/" + device + "/" + model + "/attention.csv";
  o.all_reduce_csv = dir + "/network/" + node + "/all_reduce.csv";
  o.tensor_parallel = tensor_parallel;
  o.num_layers = arch.num_layers;
  o.embedding_dim = arch.hidden_size;
  // K and V, this device's share of the KV heads, fp16.
  o.kv_bytes_per_token = 2.0 * arch.num_kv_heads / tensor_parallel * arch.head_dim * arch.num_layers * 2;
  return o;
}

double ProfiledStepTimer::Curve::at(double at_x) const {
  if (x.empty()) return 0;
  if (x.size() == 1) return y[0];
  size_t hi = static_cast<size_t>(std::lower_bound(x.begin(), x.end(), at_x) - x.begin());
  if (hi == 0) hi = 1;
  if (hi >= x.size()) hi = x.size() - 1;
  size_t lo = hi - 1;
  double f = (at_x - x[lo]) / (x[hi] - x[lo]);
  if (at_x < x[0]) f = std::max(f, -1.0);  // below the first point: no further than one step
  return std::max(0.0, y[lo] + f * (y[hi] - y[lo]));
}

double ProfiledStepTimer::Surface::at(double at_a, double b) const {
  if (a.empty()) return 0;
  if (a.size() == 1) return curves[0].at(b);
  size_t hi = static_cast<size_t>(std::lower_bound(a.begin(), a.end(), at_a) - a.begin());
  if (hi == 0) hi = 1;
  if (hi >= a.size()) hi = a.size() - 1;
  size_t lo = hi - 1;
  double f = (at_a - a[lo]) / (a[hi] - a[lo]);
  double low = curves[lo].at(b), high = curves[hi].at(b);
  return std::max(0.0, low + f * (high - low));
}

Result<std::shared_ptr<ProfiledStepTimer>> ProfiledStepTimer::load(const OperatorProfileOptions& options) {
  auto timer = std::make_shared<ProfiledStepTimer>();
  timer->options_ = options;
  if (options.num_layers <= 0 || options.embedding_dim <= 0)
    return Error{options.mlp_csv, 0, "num_layers", "the model's layers and hidden size are needed"};

  // Per-token operators of one layer, by tokens in the step.
  auto mlp = read_csv(options.mlp_csv);
  if (!mlp.ok()) return mlp.error();
  const char* ops[] = {"input_layernorm", "attn_pre_proj", "attn_rope", "attn_post_proj", "post_attention_layernorm",
                       "mlp_up_proj", "mlp_act", "mlp_down_proj", "add"};
  std::map<double, double> per_token;
  for (const auto& row : mlp.value().rows) {
    if (cell(mlp.value(), row, "num_tensor_parallel_workers") != options.tensor_parallel) continue;
    double tokens = cell(mlp.value(), row, "num_tokens");
    double ms = 0;
    for (const char* op : ops) ms += median(mlp.value(), row, op);
    per_token[tokens] = ms;
  }
  if (per_token.empty())
    return Error{options.mlp_csv, 0, "num_tensor_parallel_workers", fmt::format("no rows for tensor parallel {}", options.tensor_parallel)};
  for (auto [tokens, ms] : per_token) {
    timer->per_token_.x.push_back(tokens);
    timer->per_token_.y.push_back(ms);
  }

  // Attention: decode by (batch, KV length), prefill by (chunk, KV length).
  auto attention = read_csv(options.attention_csv);
  if (!attention.ok()) return attention.error();
  std::map<double, std::map<double, double>> decode, prefill;
  const CsvTable& a = attention.value();
  int is_prefill = a.column("is_prefill");
  if (is_prefill < 0) return Error{options.attention_csv, 0, "is_prefill", "column missing"};
  for (const auto& row : a.rows) {
    if (cell(a, row, "num_tensor_parallel_workers") != options.tensor_parallel) continue;
    if (cell(a, row, "block_size") != options.block_tokens) continue;
    double kv = cell(a, row, "kv_cache_size");
    if (row.cells[static_cast<size_t>(is_prefill)] == "True") {
      prefill[cell(a, row, "prefill_chunk_size")][kv] = median(a, row, "attn_prefill");
    } else {
      decode[cell(a, row, "batch_size")][kv] = median(a, row, "attn_decode");
    }
  }
  if (decode.empty() || prefill.empty())
    return Error{options.attention_csv, 0, "block_size",
                 fmt::format("no decode and prefill rows for tensor parallel {} and blocks of {}", options.tensor_parallel,
                             options.block_tokens)};
  auto surface = [](const std::map<double, std::map<double, double>>& rows, Surface& out) {
    for (const auto& [key, curve] : rows) {
      out.a.push_back(key);
      Curve c;
      for (auto [x, y] : curve) {
        c.x.push_back(x);
        c.y.push_back(y);
      }
      out.curves.push_back(std::move(c));
    }
  };
  surface(decode, timer->decode_);
  surface(prefill, timer->prefill_);

  // All-reduce by tokens: a message of tokens x hidden x 2 bytes (fp16), on tensor_parallel GPUs.
  if (options.tensor_parallel > 1) {
    auto network = read_csv(options.all_reduce_csv);
    if (!network.ok()) return network.error();
    std::map<double, double> by_tokens;
    for (const auto& row : network.value().rows) {
      if (cell(network.value(), row, "num_workers") != options.tensor_parallel) continue;
      if (cell(network.value(), row, "devices_per_node") != options.tensor_parallel) continue;
      if (network.value().column("collective") >= 0 &&
          row.cells[static_cast<size_t>(network.value().column("collective"))] != "all_reduce")
        continue;
      double tokens = cell(network.value(), row, "size") / (2.0 * options.embedding_dim);
      by_tokens[tokens] = median(network.value(), row, "all_reduce");
    }
    if (by_tokens.empty())
      return Error{options.all_reduce_csv, 0, "num_workers", fmt::format("no all-reduce rows for {} GPUs", options.tensor_parallel)};
    for (auto [tokens, ms] : by_tokens) {
      timer->all_reduce_.x.push_back(tokens);
      timer->all_reduce_.y.push_back(ms);
    }
  }
  return timer;
}

double ProfiledStepTimer::per_token_ms(double tokens) const { return per_token_.at(tokens); }

double ProfiledStepTimer::step_time_s(double decode_sequences, double context_sum, double prefill_tokens,
                                      double prefill_attended, double) const {
  const OperatorProfileOptions& o = options_;
  // Tokens in the step, rounded up to a multiple of 8 as Vidur rounds them.
  double tokens = std::ceil((decode_sequences + prefill_tokens) / 8) * 8;
  if (tokens <= 0) return 0;
  double layer_ms = per_token_.at(tokens);
  if (o.tensor_parallel > 1) layer_ms += 2 * (all_reduce_.at(tokens) + o.nccl_launch_overhead_ms);
  if (decode_sequences > 0) {
    double g = o.kv_granularity;
    double kv = std::ceil(context_sum / decode_sequences / g) * g;
    layer_ms += decode_.at(decode_sequences, kv) * (1 + (decode_sequences > 1 ? o.decode_batching_overhead : 0));
  }
  if (prefill_tokens > 0) {
    // Chunks after earlier chunks attend to more than c^2 / 2 pairs; the equivalent chunk covers it.
    double chunk = std::round(std::sqrt(2 * prefill_attended));
    bool several = prefill_attended * 1.0001 < prefill_tokens * prefill_tokens / 2;  // Σc²/2 < (Σc)²/2
    layer_ms += prefill_.at(chunk, 0) * (1 + (several ? o.prefill_batching_overhead : 0));
  }
  return layer_ms * o.num_layers * 1e-3;
}

}  // namespace gw
