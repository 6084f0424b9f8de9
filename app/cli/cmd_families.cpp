// cmd_families.cpp — `attnscope families`: the checkpoint families `--checkpoint` opens, from the
// loader's own table (attnscope/model/families.h).
//
//   attnscope families [--format text|md|json]
//   attnscope families --checkpoints DIR [--format text|md|json]
// text: one block per model_type; md: the table and lists of docs/real-models.md (scripts/gen-docs.sh
// writes them there); json: an array with one object per model_type.
// --checkpoints: every config.json-like file under DIR (DIR/owner/name.json, as tests/fixtures/real-configs/)
// read by the loader's own parse_model_config, one row per file: whether it opens or the loader's reason
// for refusing it, its family, attention and positions as read; DIR/sources.tsv (model_id, status) adds
// how each file was obtained. docs/real-models.md's table of real checkpoints is this output.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"
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

// ---- --checkpoints DIR: what the loader does with each real config ------------------------------------

struct CheckpointRow {
  std::string id;           // owner/name: the file's path under DIR without .json
  std::string source;       // sources.tsv's status ("" when DIR has none)
  std::string model_type;   // as the file says ("" when it names none)
  bool opens = false;
  std::string reason;       // the loader's message when refused
  std::string family, attention, positions, windows;  // when it opens
};

// 500000, not 5e+05: bases and factors as config.json writes them.
std::string number(double v) {
  char buf[32];
  if (v == std::floor(v) && std::fabs(v) < 1e15) std::snprintf(buf, sizeof buf, "%.0f", v);
  else std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string attention_of(const model::ModelConfig& c) {
  if (c.is_mla()) return "MLA, " + std::to_string(c.heads) + " heads, latent " + std::to_string(c.mla.kv_lora_rank);
  if (c.kv_heads == c.heads) return "MHA, " + std::to_string(c.heads) + " heads";
  if (c.kv_heads == 1) return "MQA, " + std::to_string(c.heads) + " heads";
  return "GQA, " + std::to_string(c.heads) + " heads, " + std::to_string(c.kv_heads) + " K/V";
}

std::string positions_of(const model::ModelConfig& c) {
  if (c.positions == model::PositionKind::learned) return "learned (wpe)";
  if (c.is_mla())
    return "RoPE θ " + number(c.rope_theta) + " on " + std::to_string(c.mla.rope_dim) + " rotary dims, interleaved" +
           (c.mla.yarn ? ", yarn ×" + number(c.mla.yarn_factor) : "");
  std::string p = "RoPE θ " + number(c.rope_theta);
  const model::RopeScalingConfig& s = c.rope_scaling;
  if (s.type != model::RopeType::plain) {
    p += ", " + std::string(model::to_string(s.type));
    if (s.type != model::RopeType::longrope) p += " ×" + number(s.factor);
    const int scaled = int(std::count(c.layer_rope_scaled.begin(), c.layer_rope_scaled.end(), true));
    if (!c.layer_rope_scaled.empty() && scaled < c.layers) p += " on " + std::to_string(scaled) + " of " + std::to_string(c.layers) + " layers";
  }
  if (c.rotated_dim() < c.head_dim) p += ", rotary " + std::to_string(c.rotated_dim()) + " of " + std::to_string(c.head_dim) + " dims";
  int nope = 0;
  for (int l = 0; l < c.layers; ++l) nope += c.nope_layer(l) ? 1 : 0;
  if (nope > 0) p += ", NoPE in " + std::to_string(nope) + " of " + std::to_string(c.layers) + " layers";
  std::vector<double> bases;
  for (double t : c.layer_rope_theta)
    if (t != 0 && std::find(bases.begin(), bases.end(), t) == bases.end()) bases.push_back(t);
  for (double t : bases)
    if (t != c.rope_theta) p += ", θ " + number(t) + " on local layers";
  return p;
}

std::string windows_of(const model::ModelConfig& c) {
  std::map<int, int> count;  // window → layers
  for (int w : c.layer_window)
    if (w > 0) ++count[w];
  std::string s;
  for (const auto& [w, n] : count)
    s += (s.empty() ? "" : ", ") + std::to_string(w) + " tokens in " + std::to_string(n) + " of " + std::to_string(c.layers) + " layers";
  return s;
}

std::vector<CheckpointRow> checkpoint_rows(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir))
    throw InputError("--checkpoints '" + dir.string() + "' is not a folder (give a folder of config.json files, "
                     "e.g. tests/fixtures/real-configs)");
  std::map<std::string, std::string> sources;
  if (std::ifstream tsv(dir / "sources.tsv"); tsv) {
    std::string line;
    std::getline(tsv, line);  // the header
    while (std::getline(tsv, line)) {
      const size_t a = line.find('\t'), b = a == std::string::npos ? a : line.find('\t', a + 1);
      if (a != std::string::npos) sources[line.substr(0, a)] = line.substr(a + 1, b == std::string::npos ? b : b - a - 1);
    }
  }
  std::vector<CheckpointRow> rows;
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file() || e.path().extension() != ".json") continue;
    CheckpointRow r;
    r.id = fs::relative(e.path(), dir).replace_extension().generic_string();
    r.source = sources.count(r.id) ? sources[r.id] : "";
    const std::string text = read_file(e.path(), 1 << 22);
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_object() && j.contains("model_type") && j["model_type"].is_string()) r.model_type = j["model_type"];
    try {
      const model::ModelConfig c = model::parse_model_config(text, r.id);
      r.opens = true;
      const model::ModelFamily* f = model::find_model_family(c.model_type);
      r.family = f ? std::string(f->name) : c.model_type;
      r.attention = attention_of(c);
      r.positions = positions_of(c);
      r.windows = windows_of(c);
    } catch (const InputError& err) {
      r.reason = err.what();
      const std::string prefix = "'" + r.id + "': ";  // the loader names the file first: the row does
      if (r.reason.starts_with(prefix)) r.reason = r.reason.substr(prefix.size());
      // and lists the model_types it opens, which the families table above the rows lists too
      const std::string supported = std::string(" (supported: ") + model::supported_model_types() + ")";
      if (const size_t at = r.reason.find(supported); at != std::string::npos) r.reason.erase(at, supported.size());
    }
    rows.push_back(std::move(r));
  }
  if (rows.empty()) throw InputError("--checkpoints '" + dir.string() + "' holds no .json file");
  std::sort(rows.begin(), rows.end(), [](const CheckpointRow& a, const CheckpointRow& b) { return a.id < b.id; });
  return rows;
}

void print_checkpoints(const std::vector<CheckpointRow>& rows, const std::string& format) {
  const auto opening = std::count_if(rows.begin(), rows.end(), [](const CheckpointRow& r) { return r.opens; });
  if (format == "json") {
    nlohmann::json all = nlohmann::json::array();
    for (const CheckpointRow& r : rows)
      all.push_back({{"id", r.id}, {"source", r.source}, {"model_type", r.model_type}, {"opens", r.opens},
                     {"reason", r.reason}, {"family", r.family}, {"attention", r.attention},
                     {"positions", r.positions}, {"windows", r.windows}});
    std::printf("%s\n", all.dump(2).c_str());
    return;
  }
  if (format == "md") {
    const int refused = int(rows.size()) - int(opening);
    std::printf("%d of %d configs open; %d %s refused, with the loader's reason.\n\n", int(opening), int(rows.size()),
                refused, refused == 1 ? "is" : "are");
    std::printf("| Checkpoint | `model_type` | Opens | Family | Attention | Positions | Sliding windows | config.json |\n");
    std::printf("|---|---|---|---|---|---|---|---|\n");
    for (const CheckpointRow& r : rows)
      std::printf("| `%s` | `%s` | %s | %s | %s | %s | %s | %s |\n", r.id.c_str(), or_none(r.model_type).c_str(),
                  r.opens ? "yes" : cell("no: " + r.reason).c_str(), cell(or_none(r.family)).c_str(),
                  cell(or_none(r.attention)).c_str(), cell(or_none(r.positions)).c_str(),
                  cell(or_none(r.windows)).c_str(), cell(or_none(r.source)).c_str());
    return;
  }
  for (const CheckpointRow& r : rows) {
    std::printf("%s (%s): %s\n", r.id.c_str(), or_none(r.model_type).c_str(),
                r.opens ? ("opens — " + r.family + "; " + r.attention + "; " + r.positions +
                           (r.windows.empty() ? "" : "; sliding windows " + r.windows)).c_str()
                        : ("refused — " + r.reason).c_str());
  }
  std::printf("\n%d of %d open\n", int(opening), int(rows.size()));
}

void add_families_command(CLI::App& root) {
  auto format = std::make_shared<std::string>("text");
  CLI::App* cmd = root.add_subcommand(
      "families",
      "The checkpoint families --checkpoint opens: model_type, attention, positions, config.json keys read");
  auto checkpoints = std::make_shared<std::string>();
  cmd->add_option("--format", *format, "text (default) | md (the table of docs/real-models.md) | json");
  cmd->add_option("--checkpoints", *checkpoints,
                  "A folder of config.json files (owner/name.json, e.g. tests/fixtures/real-configs): for each, "
                  "whether it opens (or the loader's reason for refusing it), its family, attention and positions");
  cmd->callback([format, checkpoints] {
    if (*format != "text" && *format != "md" && *format != "json")
      throw InputError("--format must be text, md or json, got '" + *format + "'");
    if (!checkpoints->empty()) {
      print_checkpoints(checkpoint_rows(*checkpoints), *format);
      return;
    }
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
