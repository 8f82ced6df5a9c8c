// The per-token operators of one transformer layer, as Vidur profiles them (norms, QKV and
// output projections, rotary, MLP up/act/down, residual add), timed two ways: from measured
// tables where one matches the operator's shape on the device (a GEMM profiled for one model
// predicts the same n x k in another), else from a roofline per operator whose factors are
// fitted to the profiles of that device. Attention and collectives are timed elsewhere.
#pragma once

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "catalog/accelerator.h"
#include "perf/attention_operators.h"
#include "core/error.h"
#include "model/model_arch.h"

namespace gw {

enum class LayerOperator {
  input_layernorm,
  attn_pre_proj,
  attn_rope,
  attn_post_proj,
  post_attention_layernorm,
  mlp_up_proj,
  mlp_act,
  mlp_down_proj,
  add,
};
constexpr int kLayerOperators = 9;
const char* operator_name(LayerOperator op);  // Vidur's column name, e.g. "mlp_up_proj"
bool is_gemm(LayerOperator op);

// A layer's sizes on one device of a tensor-parallel group.
struct LayerDims {
  double hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, ffn = 0;  // whole model (not per device)
  bool gated = true;               // SwiGLU-style MLP: the up projection is two matrices
  bool post_attention_norm = true;  // false where one norm feeds attention and MLP (phi-2, Falcon)
  int tensor_parallel = 1;
  // A device's query heads per KV head it holds (KV heads replicate past tp = kv_heads).
  double query_heads_per_kv_head() const {
    return heads / tensor_parallel / std::max(1.0, kv_heads / tensor_parallel);
  }
};
LayerDims layer_dims(const ModelArch& arch, int tensor_parallel);

// A GEMM's output and input widths on the device (tokens x k times k x n), or an elementwise
// operator's fp16 bytes read and written per token.
struct OperatorShape {
  double n = 0, k = 0;
  double bytes_per_token = 0;
  bool operator<(const OperatorShape& o) const {
    return std::tie(n, k, bytes_per_token) < std::tie(o.n, o.k, o.bytes_per_token);
  }
};
OperatorShape operator_shape(LayerOperator op, const LayerDims& dims);

// How a GEMM's weights and activations are stored and which tensor cores run it: 16-bit (what
// the profiles measured), W8A8 (fp8 or int8 weights and activations on 8-bit tensor cores where
// the device has them), or weight-only (4-bit weights dequantized into 16-bit GEMMs).
struct GemmPrecision {
  double weight_bytes = 2, activation_bytes = 2;  // per element read (outputs are 16-bit)
  double peak_scale = 1;     // the precision's dense peak over the 16-bit one
  double compute_scale = 1;  // its GEMMs' achieved share of that peak, over 16-bit GEMMs' share
  bool sixteen_bit() const { return weight_bytes == 2 && activation_bytes == 2 && peak_scale == 1 && compute_scale == 1; }
};
// `eight_bit_compute_scale`: what 8-bit GEMMs reach of their peak relative to 16-bit GEMMs of the
// same shape (EfficiencyFactors::operator_compute_8bit_scale).
GemmPrecision gemm_precision(const Accelerator& accelerator, Precision weights, double eight_bit_compute_scale);

// Roofline factors for one device, fp16. A GEMM takes max(2 (m + tile) n k / (peak x compute),
// fp16 bytes of its three matrices / (bandwidth x memory)) + launch: `tile` stands for the
// tokens a partly filled tile and wave wastes. An elementwise operator takes m x bytes per token
// / (bandwidth x efficiency) + launch + per_hidden x hidden (one thread block reduces a row).
struct OperatorRoofline {
  double peak_flops = 0, bandwidth_bytes_per_s = 0;
  double gemm_compute = 0.7, gemm_tile_tokens = 64, gemm_memory = 0.8, gemm_launch_s = 5e-6;
  struct Elementwise {
    double efficiency = 0.5, launch_s = 3e-6, per_hidden_s = 0;
  };
  std::array<Elementwise, kLayerOperators> elementwise{};
  // Attention's kernels, fitted to attention profiles (the device's own, else those of
  // `attention_fitted_on`), at this roofline's peak and bandwidth.
  AttentionRoofline attention;
  std::string attention_fitted_on;
  double time_s(LayerOperator op, const OperatorShape& shape, double tokens, double hidden,
                const GemmPrecision& precision = {}) const;
  bool gemm_compute_bound(const OperatorShape& shape, double tokens, const GemmPrecision& precision = {}) const;
  // A GEMM of this shape (tokens x k times k x n) by the fitted GEMM factors.
  double gemm_time_s(const OperatorShape& shape, double tokens, const GemmPrecision& precision = {}) const;
};

// One row of a Vidur mlp.csv: a model's layer on a device at some tokens, each operator's median.
struct ProfiledLayer {
  std::string device, model;
  double tokens = 0;
  LayerDims dims;
  std::array<double, kLayerOperators> time_s{};  // 0: not profiled (the operator does not run)
  double total_s() const;
  std::array<bool, kLayerOperators> timed() const;  // the operators this row has a time for
};
// Parses the text of compute/<device>/<org>/<model>/mlp.csv (`path` names it in errors); rows
// whose dims or times do not parse are errors naming line and column.
Result<std::vector<ProfiledLayer>> parse_vidur_layer_profile(std::string_view text, const std::string& path,
                                                             const std::string& device, const std::string& model);
// Every mlp.csv under a Vidur-layout folder (compute/<device>/<org>/<model>/mlp.csv).
Result<std::vector<ProfiledLayer>> read_vidur_layer_profiles(const std::string& dir);
// The profiles that ship in the catalog (catalog/profiles/<source>/compute/...), all or one
// device's (parsed on first use).
const std::vector<ProfiledLayer>& embedded_layer_profiles();
const std::vector<ProfiledLayer>& embedded_layer_profiles(const std::string& device);

// The catalog accelerator a Vidur device folder was profiled on ("a100" -> "A100-80GB"), or "".
std::string profiled_accelerator(const std::string& device);
// The catalog accelerator a profile folder names: Vidur's own names first ("a100" is the 80 GB
// SXM part it was measured on, not the catalog's alias for the 40 GB one), else a name or alias.
class Catalog;
const Accelerator* profiled_device_accelerator(const std::string& device, const Catalog& catalog);

// Fits the roofline's factors to profiled rows of one device (least squares of the log ratio).
OperatorRoofline fit_operator_roofline(const std::vector<const ProfiledLayer*>& rows, double peak_flops,
                                       double bandwidth_bytes_per_s);

// The attention factors for a device: fitted to its own rows of `profiles`, else to those of the
// first device that has some (Vidur publishes A100's only), each against the rates of the
// catalog accelerator it was measured on; sets `attention_fitted_on`.
void fit_device_attention(OperatorRoofline& roofline, const std::string& device,
                          const std::vector<ProfiledAttention>& profiles, const Catalog& catalog);

// Fitted rooflines as CSV (device, peak and bandwidth fitted against, the GEMM factors, then
// efficiency, launch and per-hidden time of each elementwise operator), so a process need not
// fit them again: catalog/profiles/<source>/rooflines.csv is written by
// `gpuwise_operator_accuracy --write-rooflines` and checked against a fresh fit by a test.
std::string rooflines_to_csv(const std::map<std::string, OperatorRoofline>& by_device);
Result<std::map<std::string, OperatorRoofline>> parse_rooflines_csv(std::string_view text, const std::string& path);
// The shipped rooflines (empty when the catalog has none).
const std::map<std::string, OperatorRoofline>& embedded_rooflines();

// Measured operator tables and fitted rooflines, by device.
class LayerOperatorModel {
 public:
  void add_measured(const ProfiledLayer& row);
  void set_roofline(const std::string& device, const OperatorRoofline& roofline) { rooflines_[device] = roofline; }
  bool has_device(const std::string& device) const { return rooflines_.count(device) > 0; }

  struct LayerTime {
    double time_s = 0;
    int measured_operators = 0;  // answered by a table (interpolated in tokens)
    int roofline_operators = 0;
  };
  // One layer's per-token operators at this many tokens; the device must have a roofline. With
  // `timed`, only the operators it marks are summed (to compare with a profile that lacks some).
  // Other than 16-bit GEMMs (`precision`) take the roofline: the tables are fp16.
  LayerTime layer_time(const std::string& device, const LayerDims& dims, double tokens,
                       const std::array<bool, kLayerOperators>* timed = nullptr, const GemmPrecision& precision = {}) const;
  // A layer's operators resolved once (tables found, shapes computed), for a hot loop; valid
  // while the model lives.
  class BoundLayer {
   public:
    LayerTime time(double tokens) const;
    double time_s(double tokens) const { return time(tokens).time_s; }

   private:
    friend class LayerOperatorModel;
    struct Operator {
      LayerOperator op;
      OperatorShape shape;
      const std::map<double, double>* table = nullptr;
    };
    std::vector<Operator> operators_;
    const OperatorRoofline* roofline_ = nullptr;
    double hidden_ = 0;
    GemmPrecision precision_;
  };
  BoundLayer bind(const std::string& device, const LayerDims& dims,
                  const std::array<bool, kLayerOperators>* timed = nullptr, const GemmPrecision& precision = {}) const;
  // The device's fitted roofline (launch cost, whether a GEMM is compute- or memory-bound).
  const OperatorRoofline& roofline(const std::string& device) const { return rooflines_.at(device); }

 private:
  using Key = std::tuple<std::string, int, OperatorShape, double>;  // device, operator, shape, hidden
  std::map<Key, std::map<double, double>> tables_;                  // tokens -> seconds
  std::map<std::string, OperatorRoofline> rooflines_;
};

// The operator model gpuwise uses for an accelerator, from the profiles that ship: a profiled
// accelerator gets its tables and its own fitted roofline; any other the fitted factors of the
// nearest profiled generation (Hopper-class peaks: H100; other HBM parts: A100; GDDR: A40) with
// its own peak and bandwidth, and no tables. Fitted once per process and device (thread-safe).
struct AcceleratorOperators {
  std::shared_ptr<const LayerOperatorModel> model;
  std::string device;  // the key to ask the model with
  std::string basis;   // what answers, for --explain: "measured on A100-80GB (Vidur 7d47513)" ...
};
AcceleratorOperators operators_for(const Accelerator& accelerator);

// Profiles a team measured on its own hardware, in Vidur's layout: each compute/<device>/ folder
// names a catalog accelerator (name or alias, any case; Vidur's own a100, h100, a40 too). Each
// accelerator gets its tables and a roofline fitted to them (its in-sample median error and rows
// kept for reports).
struct UserLayerProfiles {
  std::string dir;
  std::map<std::string, std::shared_ptr<const LayerOperatorModel>> models;  // by accelerator name
  std::map<std::string, OperatorRoofline> rooflines;
  std::map<std::string, std::pair<size_t, double>> fit_quality;             // rows, median |error|
};
Result<UserLayerProfiles> load_user_layer_profiles(const std::string& dir, const Catalog& catalog);
// Makes operators_for answer from these for the accelerators they cover, in this process, until
// cleared (an empty set); the CLI sets them for one run (`--profiles DIR`).
void set_user_layer_profiles(const UserLayerProfiles& profiles);

// Has the setup's step time take its layers by operator (operators_for its accelerator), unless
// the accelerator has calibrated factors (`gpuwise calibrate` fits the whole-step roofline).
struct PerfSetup;
class Calibration;
void use_layer_operators(PerfSetup& setup, const Calibration* calibration);

}  // namespace gw
