#include "cli/command_tree.h"

namespace gw {

std::vector<const CLI::App*> children(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App* a) { return !a->get_name().empty(); });
}

void walk(const CLI::App& app, const std::string& prefix, std::vector<CommandInfo>& out) {
  for (const CLI::App* child : children(app)) {
    std::string path = prefix.empty() ? child->get_name() : prefix + " " + child->get_name();
    out.push_back({path, child});
    walk(*child, path, out);
  }
}

std::vector<const CLI::Option*> flags_of(const CLI::App& app) {
  return app.get_options([](const CLI::Option* o) { return !o->get_positional() && !o->get_lnames().empty(); });
}

}  // namespace gw
