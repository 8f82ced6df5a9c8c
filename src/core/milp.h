// A mixed-integer program solved exactly by GLPK (branch and cut, presolve, gap 0): columns are
// binaries or non-negative integers with a cost, rows are linear bounds on them. One place owns
// GLPK's 1-based arrays and the problem's lifetime.
#pragma once

#include <string>
#include <utility>
#include <vector>

struct glp_prob;

namespace gw {

class Milp {
 public:
  using Terms = std::vector<std::pair<int, double>>;  // (column, coefficient)

  Milp();  // minimizes
  ~Milp();
  Milp(const Milp&) = delete;
  Milp& operator=(const Milp&) = delete;

  int add_binary(double cost = 0);
  int add_integer(double cost = 0);  // >= 0, no upper bound
  void add_at_most(const Terms& terms, double high);
  void add_exactly(const Terms& terms, double value);

  // True at a proven optimum; otherwise false and *why says what GLPK answered.
  bool solve(std::string* why = nullptr);
  double value(int column) const;  // after a successful solve
  bool chosen(int column) const { return value(column) > 0.5; }

 private:
  void add_row(const Terms& terms, int kind, double low, double high);
  glp_prob* problem_;
};

}  // namespace gw
