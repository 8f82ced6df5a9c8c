// Progress of long work on stderr: a bar with the rate and the time left when the total is
// known, a count and a rate when it is not. Drawn only on a terminal and never with --quiet, so
// logs and pipes stay clean; redrawn at most ten times a second.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace gw {

class Progress {
 public:
  // total <= 0: unknown. enabled: stderr is a terminal and the user did not ask for quiet.
  Progress(std::string label, std::string unit, double total, bool enabled);
  ~Progress() { finish(); }
  void update(double done);
  void set_total(double total) { total_ = total; }
  void finish();  // clears the line
  static bool stderr_is_terminal();

 private:
  std::string line(double done, double seconds) const;
  std::string label_, unit_;
  double total_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace gw
