// Independent pieces of work on a bounded pool of threads, results kept in input order so the
// output is the same as a serial run's. Workers see the caller's stop flag (core/cancel.h).
#pragma once

#include <atomic>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

#include "core/cancel.h"

namespace gw {

// Threads for `jobs` (0: one per core), never more than the pieces of work.
int worker_count(int jobs, size_t pieces);

// Calls work(i) for i in [0, n) on up to `jobs` threads (this one among them); rethrows the
// first exception a piece threw once all have stopped. work must not touch shared mutable state.
template <typename Work>
void parallel_for(size_t n, int jobs, Work&& work) {
  const int workers = worker_count(jobs, n);
  if (workers <= 1) {
    for (size_t i = 0; i < n; ++i) work(i);
    return;
  }
  std::atomic<size_t> next{0};
  std::exception_ptr failure;
  std::atomic<bool> failed{false};
  const std::atomic<bool>* stop = current_cancel_flag();
  auto run = [&](std::exception_ptr& error) {
    const std::atomic<bool>* previous = exchange_cancel_flag(stop);
    try {
      for (size_t i = next++; i < n && !failed; i = next++) work(i);
    } catch (...) {
      error = std::current_exception();
      failed = true;
    }
    exchange_cancel_flag(previous);
  };
  std::vector<std::exception_ptr> errors(static_cast<size_t>(workers));
  std::vector<std::thread> threads;
  for (int w = 1; w < workers; ++w) threads.emplace_back(run, std::ref(errors[static_cast<size_t>(w)]));
  run(errors[0]);
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace gw
