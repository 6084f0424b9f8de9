// cmd_relpos.cpp — `attnscope relpos`: quadratic relative-position attention on a grid or a sentence.
//
//   attnscope relpos (--grid RxC | --text TEXT) [--heads H] [--alpha A | --alphas a1,a2,...]
//                    [--deltas "dr,dc;dr,dc;..." | --delta-preset conv3x3|conv5x5|line|random]
//                    [--query r,c | --query i] [--pad-keys] [--mixed [--lambda L]] --out DIR
// Writes probs.npy [H, N, N] (N ≤ 1024), probs_query.npy ([H, R, C] grid / [H, T] text),
// outputs.npy [H, N, ch] and relpos.json (α, Δ, query, padding). Everything is computed and checked
// before the folder is created, so bad input leaves no file behind.
#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "attnscope/analysis/analysis.h"
#include "attnscope/pipeline/pipeline.h"
#include "attnscope/core/error.h"
#include "cli/commands.h"
#include "cli/output_files.h"
#include "core/scene_options.h"

namespace attnscope::cli {
namespace {

struct RelposOptions {
  SceneOptions scene;
  std::string out;
};

nlohmann::json relpos_json(const RelposAnalysis& ra, const std::vector<std::string>& files) {
  nlohmann::json heads = nlohmann::json::array();
  for (const RelposHead& h : ra.heads) {
    nlohmann::json delta = ra.dims == 2 ? nlohmann::json{h.delta[0], h.delta[1]} : nlohmann::json(h.delta[1]);
    heads.push_back({{"alpha", h.alpha}, {"delta", delta}});
  }
  nlohmann::json j = {
      {"dims", ra.dims},
      {"input", ra.input_note},
      {"heads", heads},
      {"pad_keys", ra.geometry.pad_rows > 0 || ra.geometry.pad_cols > 0},
      {"padding", {{"rows", ra.geometry.pad_rows}, {"cols", ra.geometry.pad_cols}}},
      {"padding_mass_at_query", ra.padding_mass},
      {"mixed", ra.mixed},
      {"files", files},
  };
  if (ra.mixed) j["lambda"] = ra.lambda;
  if (ra.dims == 2) {
    j["grid"] = {{"rows", ra.rows}, {"cols", ra.cols}, {"channels", ra.x.cols()}};
    j["query"] = {ra.query_row, ra.query_col};
  } else {
    j["tokens"] = ra.labels;
    j["query"] = ra.query_col;
  }
  return j;
}

void run(const RelposOptions& o) {
  // 1. Settings: the shared flags, then what relpos infers from them.
  Scene scene = build_scene(o.scene);
  apply_relpos_defaults(scene, o.scene);

  // 2. Everything computed (and checked) before any file exists.
  const std::shared_ptr<const Analysis> analysis =
      pipeline::analyse_scene(scene, AnalysisRequest{.attention = false, .relpos = true});
  const RelposAnalysis& ra = *analysis->relpos;

  // 3. Files.
  const int64_t h = int64_t(ra.heads.size());
  std::vector<int64_t> query_shape = ra.dims == 2 ? std::vector<int64_t>{h, ra.rows, ra.cols}
                                                  : std::vector<int64_t>{h, ra.cols};
  std::vector<std::string> files;
  if (!ra.probs.empty()) files.push_back("probs.npy");
  files.insert(files.end(), {"probs_query.npy", "outputs.npy", "relpos.json"});
  OutputFiles out(o.out);
  if (!ra.probs.empty()) out.npy("probs.npy", ra.probs);
  out.npy("probs_query.npy", ra.probs_query.data(), query_shape);
  out.npy("outputs.npy", ra.outputs);
  out.text("relpos.json", relpos_json(ra, files).dump(2) + "\n");
  out.commit();

  const std::string where = ra.dims == 2 ? "cell (" + std::to_string(ra.query_row) + ", " +
                                               std::to_string(ra.query_col) + ")"
                                         : "token " + std::to_string(ra.query_col) + " '" +
                                               ra.labels[size_t(ra.query_col)] + "'";
  std::printf("relpos: %lld heads on %s, query %s%s\n", static_cast<long long>(h), ra.input_note.c_str(),
              where.c_str(),
              ra.probs.empty() ? " (probs.npy skipped: more than 1024 positions)" : "");
  std::printf("wrote %zu files to %s\n", out.written().size(), o.out.c_str());
}

void add_relpos_command(CLI::App& root) {
  auto options = std::make_shared<RelposOptions>();
  CLI::App* cmd = root.add_subcommand(
      "relpos",
      "Quadratic relative-position attention (Cordonnier et al.): each head is a Gaussian window at offset "
      "Delta of sharpness alpha, on a grid or a sentence");
  add_scene_options(*cmd, options->scene, flags_input | flags_model | flags_relpos);
  cmd->add_option("--out", options->out, "Output folder (created if missing)")->required();
  cmd->footer(
      "Writes probs.npy [H,N,N] (when N <= 1024 positions), probs_query.npy ([H,R,C] on a grid, [H,T] on "
      "text) for the query (default: the centre), outputs.npy [H,N,channels] and relpos.json.\n"
      "Heads: --heads, or one per --deltas offset, 9/25 for conv3x3/conv5x5, one per --alphas value.\n"
      "--image FILE is fitted inside --grid (default 64x64) keeping its aspect ratio; colour stays RGB.\n"
      "On text the default offsets are the line preset; --mixed adds lambda * positional scores to the\n"
      "grouped-attention content scores and needs as many heads as the model (--heads sets both).\n"
      "Example: attnscope relpos --grid 16x16 --delta-preset conv3x3 --alpha 2 --query 8,8 --out out/relpos");
  cmd->callback([options] { run(*options); });
}

CommandRegistrar registrar(add_relpos_command);

}  // namespace
}  // namespace attnscope::cli
