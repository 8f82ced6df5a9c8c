// Plans a workload spec with the gpuwise library and prints the plan as JSON, exactly as
// `gpuwise plan SPEC --format json` does; exits as the CLI would (0 met, 1 bad input, 3 not met).
#include <gpuwise/gpuwise.h>

#include <iostream>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: plan_json SPEC.yaml\n";
    return 2;
  }
  try {
    const gpuwise::Catalog catalog = gpuwise::Catalog::embedded();
    const gpuwise::Spec spec = gpuwise::Spec::load(argv[1]);
    const gpuwise::PlanResult plan = gpuwise::plan(catalog, spec);
    std::cout << plan.to_json();
    for (const std::string& line : plan.warnings()) std::cerr << line << "\n";
    return plan.exit_code();
  } catch (const gpuwise::Error& e) {
    std::cerr << "plan_json: error: " << e.what() << "\n";
    return 1;
  }
}
