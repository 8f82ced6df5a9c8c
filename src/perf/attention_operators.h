// Attention's kernels (FlashAttention prefill over a prompt chunk, decode over each sequence's
// KV cache) timed by a roofline whose factors are fitted to measured profiles: Vidur's
// attention.csv, by batch, chunk and context length. The timings are linear in the counts the
// simulator keeps (sequences, context tokens summed, attended token pairs), so a step is a few
// multiplications however mixed its batch.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace gw {

struct AttentionRoofline {
  // Decode: launch + sequences x per_sequence + KV bytes read / (bandwidth x decode_memory).
  double decode_memory = 0.7, decode_launch_s = 15e-6, decode_per_sequence_s = 0;
  // Prefill: launch + 4 x q_dim x (attended pairs + tokens x pairs_per_token) / (peak x
  // prefill_compute) (causal: a chunk of c tokens after p done attends to c x p + c^2 / 2 pairs).
  // The per-token pairs are the kernel's work that grows with the chunk, not its square (whole
  // tiles on the causal diagonal, each query row's softmax and output, the reshapes around it).
  // It is work on each query head, so it scales with the device's heads and compute rate as
  // the pairs do: a fixed time per token would charge a tp8 device for a tp2 device's heads and
  // an H100 for an A100's rate.
  double prefill_compute = 0.4, prefill_launch_s = 8e-6, prefill_pairs_per_token = 0;

  // One layer's decode attention on one device: `kv_tokens` summed over the sequences, each
  // token `kv_bytes_per_token` (K and V of the device's KV heads, at the cache's precision).
  double decode_time_s(double sequences, double kv_tokens, double kv_bytes_per_token, double bandwidth_bytes_per_s) const;
  // The same by a decode kernel that runs one thread block per query head (FasterTransformer's
  // masked multi-head attention; TensorRT-LLM before its XQA kernels of 2024-01; see
  // measured_l2_read_bytes_per_s): each of a KV head's `query_heads_per_kv_head` query heads reads
  // that head's cache. The group's blocks run together, so memory serves each byte once and L2
  // serves it once per query head: the longer of decode_time_s and the group's reads at
  // `l2_bytes_per_s` (0, not measured: every read at memory bandwidth). That kernel converts each
  // cached element to fp32 before its arithmetic, so its reads from L2 are paced per element: a
  // cache narrower than 16 bits (`kv_bytes_per_element` < 2) streams from L2 at the 16-bit
  // element rate, not faster (the "conversion" XQA removed; see measured_l2_read_bytes_per_s).
  double decode_per_query_head_time_s(double sequences, double kv_tokens, double kv_bytes_per_token,
                                      double kv_bytes_per_element, double query_heads_per_kv_head,
                                      double bandwidth_bytes_per_s, double l2_bytes_per_s) const;
  // One layer's prefill attention on one device: `q_dim` = the device's query heads x head size.
  double prefill_time_s(double tokens, double attended_pairs, double q_dim, double peak_flops) const;
};

// The device's L2 read bandwidth where it is measured (every SM reading one L2-resident buffer),
// bytes/s; 0 where it is not.
double measured_l2_read_bytes_per_s(std::string_view accelerator);

// One row of a Vidur attention.csv (fp16, FlashAttention): a decode of `batch` sequences each
// `kv_tokens` long, or a prefill of a `chunk` after `kv_tokens` done; per-device sizes.
struct ProfiledAttention {
  std::string device, model;
  bool prefill = false;
  double batch = 0, chunk = 0, kv_tokens = 0;
  double q_dim = 0, kv_dim = 0;  // per device: heads / tp x head size
  int tensor_parallel = 1;
  double time_s = 0;             // the kernel with its input and output reshapes
  double kv_bytes_per_token() const { return 2 * kv_dim * 2; }  // K and V, fp16
  double attended_pairs() const { return chunk * kv_tokens + chunk * chunk / 2; }
};
// Parses attention.csv text (`path` names it in errors: line and column of what does not parse).
Result<std::vector<ProfiledAttention>> parse_vidur_attention_profile(std::string_view text, const std::string& path,
                                                                     const std::string& device, const std::string& model);
// Every compute/<device>/<org>/<model>/attention.csv under a Vidur-layout folder (none: empty).
Result<std::vector<ProfiledAttention>> read_vidur_attention_profiles(const std::string& dir);
// The attention profiles that ship in catalog/profiles (parsed on first use).
const std::vector<ProfiledAttention>& embedded_attention_profiles();

// Fits the factors to profiled rows (least squares of the log ratio), against the rates of the
// hardware they were measured on.
AttentionRoofline fit_attention_roofline(const std::vector<const ProfiledAttention*>& rows, double peak_flops,
                                         double bandwidth_bytes_per_s);
double predicted_attention_s(const AttentionRoofline& roofline, const ProfiledAttention& row, double peak_flops,
                             double bandwidth_bytes_per_s);

}  // namespace gw
