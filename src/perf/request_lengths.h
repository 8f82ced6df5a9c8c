// Request lengths as continuous batching sees them. A request holds its batch slot for as many
// steps as it has output tokens, so the running batch over-represents long outputs (length-biased
// sampling): where lengths vary, a slot attends to and reserves more than a mean-length request
// would. Fixed lengths are the special case.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"

namespace gw {

struct RequestLengths {
  double mean_input_tokens = 0;
  double mean_output_tokens = 0;
  double mean_input_squared = 0;       // E[input^2]
  double mean_input_times_output = 0;  // E[input x output]
  double mean_output_squared = 0;      // E[output^2]
  size_t requests = 0;                 // 0: fixed lengths, not read from requests
  // For the screen's TPOT tail, set by the planner (plan/service_level.cc, service_lengths). A
  // request's time per output token averages its output - 1 steps, so the p99 request carries
  // this share of one step's p99 excess over the mean step (plan/queueing.h,
  // mean_gap_excess_share), short answers weighing most; 0 where not worked out, and one
  // mean-length answer's 1 / sqrt(output - 1) is taken.
  double tpot_p99_excess_share = 0;
  double tpot_p99_share() const;
  // The answers' gap counts (output - 1 of those of two tokens or more) as evenly spaced order
  // statistics, and E[input^2] over the prompts as they vary (the moments above take a spec's
  // mean where it gives no trace); empty and 0 where not worked out.
  std::vector<double> answer_gaps;
  double prompt_tokens_squared = 0;

  static RequestLengths fixed(double input_tokens, double output_tokens);
  // The moments of (input, output) pairs, outputs below 1 counted as 1. REQUIRES: inputs >= 0.
  static RequestLengths from_pairs(const std::vector<std::pair<double, double>>& input_output);

  // The context a slot's sequence attends to in a decode step, averaged over the steps of every
  // request: (E[in x out] + E[out^2] / 2) / E[out]; input + output / 2 for fixed lengths.
  double slot_context_tokens() const;
  // The KV tokens a slot holds when each request reserves its input + output, averaged over the
  // steps: (E[in x out] + E[out^2]) / E[out]; input + output for fixed lengths.
  double slot_reserved_tokens() const;
  // The prompt length, weighted by prompt tokens, that prefill attention's pairs grow with:
  // E[in^2] / E[in]; input for fixed lengths.
  double prefill_context_tokens() const;
};

// One request per row, columns input_length and output_length (tokens), or an Azure LLM inference
// trace's ContextTokens and GeneratedTokens; the error names the file, line and field of the first
// bad row. Outputs must be >= 1, inputs >= 0.
Result<RequestLengths> read_request_lengths(std::string_view csv_text, const std::string& file);
// The same from a file; an unreadable file is an error naming it.
Result<RequestLengths> read_request_lengths_file(const std::string& path);

}  // namespace gw
