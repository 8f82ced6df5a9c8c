// The gpuwise command line: parses arguments, runs one subcommand, maps errors to exit codes
// (0 ok, 1 bad input or runtime error, 2 usage error, 3 constraints cannot be met).
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace gw {

int run_cli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace gw
