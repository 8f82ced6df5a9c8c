#include "core/milp.h"

#include <glpk.h>

#include <fmt/format.h>

namespace gw {

Milp::Milp() : problem_(glp_create_prob()) { glp_set_obj_dir(problem_, GLP_MIN); }

Milp::~Milp() { glp_delete_prob(problem_); }

int Milp::add_binary(double cost) {
  int column = glp_add_cols(problem_, 1);
  glp_set_col_kind(problem_, column, GLP_BV);
  glp_set_obj_coef(problem_, column, cost);
  return column;
}

int Milp::add_integer(double cost) {
  int column = glp_add_cols(problem_, 1);
  glp_set_col_kind(problem_, column, GLP_IV);
  glp_set_col_bnds(problem_, column, GLP_LO, 0, 0);
  glp_set_obj_coef(problem_, column, cost);
  return column;
}

void Milp::add_row(const Terms& terms, int kind, double low, double high) {
  int row = glp_add_rows(problem_, 1);
  glp_set_row_bnds(problem_, row, kind, low, high);
  // GLPK reads index and value from position 1.
  std::vector<int> index(1, 0);
  std::vector<double> value(1, 0);
  for (auto [column, coefficient] : terms) index.push_back(column), value.push_back(coefficient);
  glp_set_mat_row(problem_, row, static_cast<int>(terms.size()), index.data(), value.data());
}

void Milp::add_at_most(const Terms& terms, double high) { add_row(terms, GLP_UP, 0, high); }

void Milp::add_exactly(const Terms& terms, double value) { add_row(terms, GLP_FX, value, value); }

bool Milp::solve(std::string* why) {
  glp_iocp options;
  glp_init_iocp(&options);
  options.presolve = GLP_ON;
  options.msg_lev = GLP_MSG_OFF;
  options.mip_gap = 0;
  int status = glp_intopt(problem_, &options);
  int mip_status = status == 0 ? glp_mip_status(problem_) : 0;
  if (status == 0 && mip_status == GLP_OPT) return true;
  if (why) {
    if (status == GLP_ENOPFS || mip_status == GLP_NOFEAS) *why = "no feasible assignment";
    else *why = fmt::format("GLPK status {}, MIP status {}", status, mip_status);
  }
  return false;
}

double Milp::value(int column) const { return glp_mip_col_val(problem_, column); }

}  // namespace gw
