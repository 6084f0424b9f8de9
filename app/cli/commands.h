// commands.h — how command-line subcommands plug into `attnscope`.
//
// Each app/cli/cmd_<name>.cpp defines `void add_<name>_command(CLI::App& root)` and registers it with
//   static attnscope::cli::CommandRegistrar registrar(add_<name>_command);
// main() then adds every registered command. A command's callback returns nothing and reports bad
// input by throwing attnscope::InputError; main prints "error: <message>" and exits 2.
#pragma once
#include <CLI/CLI.hpp>
#include <vector>

namespace attnscope::cli {

using AddCommand = void (*)(CLI::App& root);

inline std::vector<AddCommand>& command_registry() {
  static std::vector<AddCommand> registry;
  return registry;
}

struct CommandRegistrar {
  explicit CommandRegistrar(AddCommand add) { command_registry().push_back(add); }
};

}  // namespace attnscope::cli
