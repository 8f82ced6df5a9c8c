// gpuwise: the command-line entry point.
#include <iostream>

#include "cli/app.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return gw::run_cli(args, std::cout, std::cerr);
}
