#include "sim/arrivals.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <queue>

namespace gw {

void TokenSampler::fill(Arrival& arrival) {
  auto draw = [&](const TokenDistribution& d) {
    if (d.sample.empty()) return 0.0;
    if (d.sample.size() == 1) return d.sample[0];
    size_t index = static_cast<size_t>(rng_.uniform() * static_cast<double>(d.sample.size()));
    return d.sample[std::min(index, d.sample.size() - 1)];
  };
  arrival.input_tokens = std::round(draw(input_));
  arrival.output_tokens = std::max(1.0, std::round(draw(output_)));
}

namespace {

class RenewalArrivals : public ArrivalProcess {
 public:
  RenewalArrivals(double rate, double cv, TokenSampler sampler, Rng& rng)
      : rate_(rate), cv_(cv), sampler_(std::move(sampler)), rng_(rng) {}
  std::optional<Arrival> next() override {
    double mean = 1.0 / rate_;
    if (std::fabs(cv_ - 1.0) < 1e-12) {
      now_ += rng_.exponential(mean);
    } else {
      double shape = 1.0 / (cv_ * cv_);  // gamma with this cv and the mean gap
      now_ += rng_.gamma(shape, mean / shape);
    }
    Arrival a;
    a.time_s = now_;
    sampler_.fill(a);
    return a;
  }
  double stationary_until(double) const override { return std::numeric_limits<double>::infinity(); }
  double rate_at(double) const override { return rate_; }
  void skip(double seconds) override { now_ += seconds; }

 private:
  double rate_, cv_, now_ = 0;
  TokenSampler sampler_;
  Rng& rng_;
};

// Non-homogeneous Poisson by thinning (Lewis and Shedler 1979) under an hourly curve.
class CurveArrivals : public ArrivalProcess {
 public:
  CurveArrivals(double rate, std::vector<double> profile, TokenSampler sampler, Rng& rng)
      : rate_(rate), profile_(std::move(profile)), sampler_(std::move(sampler)), rng_(rng) {
    for (double f : profile_) max_factor_ = std::max(max_factor_, f);
  }
  std::optional<Arrival> next() override {
    double bound = rate_ * max_factor_;
    while (true) {
      now_ += rng_.exponential(1.0 / bound);
      size_t hour = static_cast<size_t>(now_ / 3600.0) % profile_.size();
      if (rng_.uniform() * max_factor_ <= profile_[hour]) break;
    }
    Arrival a;
    a.time_s = now_;
    sampler_.fill(a);
    return a;
  }
  // The end of the run of hours with the factor of time_s's hour (never, when all are equal).
  double stationary_until(double time_s) const override {
    if (profile_.empty() || time_s < 0) return time_s;
    const size_t hours = profile_.size();
    const double hour = std::floor(time_s / 3600.0);
    const double factor = profile_[static_cast<size_t>(hour) % hours];
    for (size_t ahead = 1; ahead <= hours; ++ahead)
      if (profile_[(static_cast<size_t>(hour) + ahead) % hours] != factor) return (hour + static_cast<double>(ahead)) * 3600.0;
    return std::numeric_limits<double>::infinity();
  }
  double rate_at(double time_s) const override {
    if (profile_.empty() || time_s < 0) return 0;
    return rate_ * profile_[static_cast<size_t>(time_s / 3600.0) % profile_.size()];
  }
  void skip(double seconds) override { now_ += seconds; }

 private:
  double rate_;
  std::vector<double> profile_;
  double max_factor_ = 0, now_ = 0;
  TokenSampler sampler_;
  Rng& rng_;
};

// A measured rate series replayed once: a Poisson process piecewise constant in rate, drawn
// interval by interval (memoryless, so a draw that runs past an interval's end restarts at the
// next one). Exact, and O(arrivals + intervals): thinning under the peak would take as long as
// peak x duration on a spiky series.
class SeriesArrivals : public ArrivalProcess {
 public:
  SeriesArrivals(RateSeries series, TokenSampler sampler, Rng& rng)
      : series_(std::move(series)), sampler_(std::move(sampler)), rng_(rng) {}
  std::optional<Arrival> next() override {
    while (index_ < series_.points.size()) {
      const double rate = series_.points[index_].rps;
      const double end = index_ + 1 < series_.points.size() ? series_.points[index_ + 1].time_s : series_.duration_s;
      if (now_ < series_.points[index_].time_s) now_ = series_.points[index_].time_s;
      double candidate = rate > 0 ? now_ + rng_.exponential(1.0 / rate) : end;
      if (candidate < end) {
        now_ = candidate;
        Arrival a;
        a.time_s = now_;
        sampler_.fill(a);
        return a;
      }
      now_ = end;
      ++index_;
    }
    return std::nullopt;
  }

 private:
  RateSeries series_;
  TokenSampler sampler_;
  Rng& rng_;
  size_t index_ = 0;
  double now_ = 0;
};

// Two-state MMPP: exponential sojourns in a high-rate and a low-rate state.
class MmppArrivals : public ArrivalProcess {
 public:
  MmppArrivals(const ArrivalOptions& o, TokenSampler sampler, Rng& rng) : o_(o), sampler_(std::move(sampler)), rng_(rng) {
    state_end_ = rng_.exponential(o_.mmpp_low_mean_s);
  }
  std::optional<Arrival> next() override {
    while (true) {
      double rate = high_ ? o_.mmpp_high_rps : o_.mmpp_low_rps;
      double candidate = rate > 0 ? now_ + rng_.exponential(1.0 / rate) : state_end_ + 1;
      if (candidate < state_end_) {
        now_ = candidate;
        break;
      }
      // Memoryless: restart from the state change.
      now_ = state_end_;
      high_ = !high_;
      state_end_ = now_ + rng_.exponential(high_ ? o_.mmpp_high_mean_s : o_.mmpp_low_mean_s);
    }
    Arrival a;
    a.time_s = now_;
    sampler_.fill(a);
    return a;
  }

 private:
  ArrivalOptions o_;
  TokenSampler sampler_;
  Rng& rng_;
  bool high_ = false;
  double now_ = 0, state_end_ = 0;
};

class TraceArrivals : public ArrivalProcess {
 public:
  TraceArrivals(const ArrivalOptions& o) : stream_(o.trace_path, o.trace_format), scale_(o.time_scale) {}
  std::optional<Arrival> next() override {
    auto request = stream_.next();
    if (!request) return std::nullopt;
    if (!origin_) origin_ = request->timestamp_s;
    Arrival a;
    a.time_s = (request->timestamp_s - *origin_) / scale_;
    a.input_tokens = request->input_tokens;
    a.output_tokens = std::max(1.0, request->output_tokens);
    a.prefix_block_ids = std::move(request->prefix_block_ids);
    a.prefix_block_tokens = request->prefix_block_tokens;
    return a;
  }
  std::optional<Error> error() const override {
    // Reaching the end is not an error for replay.
    if (stream_.error() && stream_.rows() > 0 && stream_.error()->message == "the trace has no requests") return std::nullopt;
    return stream_.error();
  }

 private:
  TraceStream stream_;
  double scale_;
  std::optional<double> origin_;
};

// Gives another process's arrivals shared prefixes (PrefixShape): every arrival is the next turn
// of the conversation that has waited longest for its turn (the think time after the one
// before), or opens a new one. Its prompt is the system prompt, the conversation so far (earlier
// turns' new tokens and answers) and its own new tokens (the inner arrival's); its chain hashes
// name the system prompt's blocks alike for everyone and the rest by conversation, so a turn
// finds its conversation's earlier prompts and answers in the cache. Arrival times are the inner process's.
class PrefixedArrivals : public ArrivalProcess {
 public:
  PrefixedArrivals(std::unique_ptr<ArrivalProcess> inner, PrefixShape shape, Rng& rng)
      : inner_(std::move(inner)), shape_(shape), rng_(rng) {}
  std::optional<Arrival> next() override {
    auto a = inner_->next();
    if (!a) return a;
    Conversation c;
    if (!waiting_.empty() && waiting_.front().ready_s <= a->time_s) {
      // A heap by hand (what std::priority_queue runs), so that the conversation moves out.
      std::pop_heap(waiting_.begin(), waiting_.end(), std::greater<>());
      c = std::move(waiting_.back());
      waiting_.pop_back();
    } else {
      c.id = ++conversations_;
    }
    const double fresh = a->input_tokens;
    a->input_tokens = shape_.system_prompt_tokens + c.history_tokens + fresh;
    c.history_tokens += fresh + a->output_tokens;
    // The prompt's full blocks as runs: the system prompt's, then each earlier turn's prompt
    // beyond the one before (this conversation's), then its own. A run is cached and found
    // whole: the prefix vLLM's 16-token blocks would find when whole prompts stay cached, at one
    // lookup per turn rather than one per block.
    const double block = shape_.block_tokens;
    auto add = [&](unsigned long long owner, size_t index, double end) {
      if (end <= (a->prefix_block_ends.empty() ? 0.0 : a->prefix_block_ends.back())) return;
      a->prefix_block_ids.push_back(chain_hash(owner, index));
      a->prefix_block_ends.push_back(end);
    };
    // Each turn ends two runs: its prompt, and its prompt with its answer (cached as it is
    // written, as vLLM caches the blocks decoding fills); its own answer's run is registered
    // when it completes, for the next turn to find.
    add(0, 0, std::floor(shape_.system_prompt_tokens / block) * block);
    for (size_t i = 0; i < c.turn_ends.size(); ++i) add(c.id, i + 1, c.turn_ends[i]);
    const size_t own = c.turn_ends.size() + 1;
    add(c.id, own, std::floor(a->input_tokens / block) * block);
    add(c.id, own + 1, std::floor((a->input_tokens + a->output_tokens) / block) * block);
    a->prefix_block_tokens = shape_.block_tokens;
    if (++c.turns_done < shape_.turns) {
      c.turn_ends.push_back(std::floor(a->input_tokens / block) * block);
      c.turn_ends.push_back(std::floor((a->input_tokens + a->output_tokens) / block) * block);
      c.ready_s = a->time_s + (shape_.think_time_s > 0 ? rng_.exponential(shape_.think_time_s) : 0);
      waiting_.push_back(std::move(c));
      std::push_heap(waiting_.begin(), waiting_.end(), std::greater<>());
    }
    return a;
  }
  std::optional<Error> error() const override { return inner_->error(); }
  double stationary_until(double time_s) const override { return inner_->stationary_until(time_s); }
  double rate_at(double time_s) const override { return inner_->rate_at(time_s); }
  void skip(double seconds) override { inner_->skip(seconds); }

 private:
  struct Conversation {
    unsigned long long id = 0;
    int turns_done = 0;
    double history_tokens = 0;
    double ready_s = 0;
    std::vector<double> turn_ends;  // each earlier turn's prompt, then with its answer, to the last full block
    bool operator>(const Conversation& o) const { return ready_s != o.ready_s ? ready_s > o.ready_s : id > o.id; }
  };
  // Run `index` of conversation `owner`'s token stream (0: the system prompt everyone shares).
  static unsigned long long chain_hash(unsigned long long owner, size_t j) {
    unsigned long long x = owner * 0x9E3779B97F4A7C15ULL + j + 1;  // splitmix64's finaliser
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
  }

  std::unique_ptr<ArrivalProcess> inner_;
  PrefixShape shape_;
  Rng& rng_;
  std::vector<Conversation> waiting_;  // a min-heap by ready_s
  unsigned long long conversations_ = 0;
};

std::unique_ptr<ArrivalProcess> make_unshaped(const ArrivalOptions& o, const ServiceSpec& service, Rng& rng) {
  TokenSampler sampler(service.input_tokens, service.output_tokens, rng);
  if (o.process == "trace") return std::make_unique<TraceArrivals>(o);
  if (o.process == "curve") return std::make_unique<CurveArrivals>(o.rate_rps, o.profile, std::move(sampler), rng);
  if (o.process == "series" && o.rates) return std::make_unique<SeriesArrivals>(*o.rates, std::move(sampler), rng);
  if (o.process == "mmpp") return std::make_unique<MmppArrivals>(o, std::move(sampler), rng);
  return std::make_unique<RenewalArrivals>(o.rate_rps, o.process == "gamma" ? o.cv : 1.0, std::move(sampler), rng);
}

}  // namespace

std::unique_ptr<ArrivalProcess> make_arrivals(const ArrivalOptions& o, const ServiceSpec& service, Rng& rng) {
  auto arrivals = make_unshaped(o, service, rng);
  if (service.traffic.prefix.given() && o.process != "trace")
    return std::make_unique<PrefixedArrivals>(std::move(arrivals), service.traffic.prefix, rng);
  return arrivals;
}

}  // namespace gw
