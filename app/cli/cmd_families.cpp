// cmd_families.cpp — `attnscope families`: the checkpoint families `--checkpoint` opens, from the
// loader's own table (attnscope/model/families.h).
//
//   attnscope families [--format text|md|json]
// text: one block per model_type; md: the table and lists of docs/real-models.md (scripts/gen-docs.sh
// writes them there); json: an array with one object per model_type.
#include <cstdio>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "attnscope/core/error.h"
#include "attnscope/model/config.h"
#include "attnscope/model/families.h"
#include "cli/commands.h"

namespace attnscope::cli {
namespace {

using model::ModelFamily;

std::string joined(const std::vector<std::string_view>& items, const char* before, const char* after) {
  std::string s;
  for (std::string_view item : items) s += (s.empty() ? "" : ", ") + std::string(before) + std::string(item) + after;
  return s;
}

std::string or_none(std::string_view s) { return s.empty() ? "—" : std::string(s); }

void print_text(const std::vector<ModelFamily>& families) {
  for (const ModelFamily& f : families) {
    std::printf("%s — %s (%s)\n", std::string(f.model_type).c_str(), std::string(f.name).c_str(),
                std::string(f.architecture).c_str());
    std::printf("  attention:  %s\n", std::string(f.attention).c_str());
    std::printf("  positions:  %s\n", std::string(f.positions).c_str());
    std::printf("  windows:    %s\n",
                f.windows.empty() ? "none (every layer sees all earlier tokens)" : std::string(f.windows).c_str());
    if (!f.extras.empty()) std::printf("  also:       %s\n", std::string(f.extras).c_str());
    std::printf("  tensors:    %s\n", std::string(f.tensors).c_str());
    std::printf("  config.json keys read: %s\n", joined(f.config_keys, "", "").c_str());
    std::printf("  examples:   %s\n\n", joined(f.examples, "", "").c_str());
  }
  std::printf(
      "Other model_type values are refused by name; a key read above whose value attnscope does not\n"
      "implement is refused with a message naming the key. Keys not listed are not read.\n");
}

// Table cells: a '|' would end the cell.
std::string cell(std::string_view s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

void print_markdown(const std::vector<ModelFamily>& families) {
  std::printf(
      "| Family | `model_type` | `architectures` | Attention | Positions | Sliding windows | Also | Example "
      "checkpoints |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (const ModelFamily& f : families)
    std::printf("| %s | `%s` | `%s` | %s | %s | %s | %s | %s |\n", cell(f.name).c_str(),
                std::string(f.model_type).c_str(), std::string(f.architecture).c_str(), cell(f.attention).c_str(),
                cell(f.positions).c_str(), cell(or_none(f.windows)).c_str(), cell(or_none(f.extras)).c_str(),
                cell(joined(f.examples, "`", "`")).c_str());
  std::printf(
      "\nThe `config.json` keys each family's reader looks at. A value attnscope does not implement is "
      "refused with a message naming the key; keys not listed are not read. Other `model_type` values "
      "are refused.\n\n");
  for (const ModelFamily& f : families)
    std::printf("- `%s`: %s\n", std::string(f.model_type).c_str(), joined(f.config_keys, "`", "`").c_str());
  std::printf("\nThe weights each family reads from its safetensors files (one file or shards):\n\n");
  for (const ModelFamily& f : families)
    std::printf("- `%s`: `%s`\n", std::string(f.model_type).c_str(), std::string(f.tensors).c_str());
}

void print_json(const std::vector<ModelFamily>& families) {
  nlohmann::json all = nlohmann::json::array();
  auto strings = [](const std::vector<std::string_view>& v) {
    nlohmann::json a = nlohmann::json::array();
    for (std::string_view s : v) a.push_back(std::string(s));
    return a;
  };
  for (const ModelFamily& f : families)
    all.push_back({{"model_type", std::string(f.model_type)},
                   {"name", std::string(f.name)},
                   {"architecture", std::string(f.architecture)},
                   {"attention", std::string(f.attention)},
                   {"positions", std::string(f.positions)},
                   {"windows", std::string(f.windows)},
                   {"extras", std::string(f.extras)},
                   {"tensors", std::string(f.tensors)},
                   {"config_keys", strings(f.config_keys)},
                   {"examples", strings(f.examples)}});
  std::printf("%s\n", all.dump(2).c_str());
}

void add_families_command(CLI::App& root) {
  auto format = std::make_shared<std::string>("text");
  CLI::App* cmd = root.add_subcommand(
      "families",
      "The checkpoint families --checkpoint opens: model_type, attention, positions, config.json keys read");
  cmd->add_option("--format", *format, "text (default) | md (the table of docs/real-models.md) | json");
  cmd->callback([format] {
    const auto& families = model::model_families();
    if (*format == "text")
      print_text(families);
    else if (*format == "md")
      print_markdown(families);
    else if (*format == "json")
      print_json(families);
    else
      throw InputError("--format must be text, md or json, got '" + *format + "'");
  });
}

CommandRegistrar registrar(add_families_command);

}  // namespace
}  // namespace attnscope::cli
