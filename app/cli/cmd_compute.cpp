// cmd_compute.cpp — `attnscope compute`: every intermediate tensor of grouped attention as .npy.
//
//   attnscope compute (--text TEXT | --input X.npy) [--kind single|mha|mqa|gqa|mla|linear|retention|mamba2|
//                     deltanet|gated-deltanet] [--decay G (retention)] [--no-normalizer (linear)] [--d-model C]
//                     [--heads H] [--groups G] [--causal] [--seed N] [--weights DIR] [--language en|zh] --out DIR
//                     [--kv-rank R --q-rank R --rope-dim D (mla)] [--differential]
//                     [--window W [--sinks N]] [--sink-logits] [--positions rope|alibi|nope|relpos --rope-… ]
// Writes probs/scores [H,T,T], output [T,C], q [H,T,d_k], k/v [G,T,d_k], trace.json, tokens.json;
// sink_share.npy [H,T] with --sink-logits; positions.json (the Positions view's data) unless positions are nope.
// MLA also c_kv.npy [T, r_kv] (the cached latent), with q, k [H,T,d_N+d_R] and v [H,T,d_v]; differential
// attention writes probs = A [H,T,T] (signed), scores [2H,T,T], q [2H,T,d], k [2G,T,d], v [G,T,2d], and also
// probs_1.npy, probs_2.npy [H,T,T] (grouped_attention.h's notes). The kinds without a softmax (linear, retention,
// mamba2, deltanet, gated-deltanet; linear_layer.h) write matrix.npy [H,T,T] (the explicit matrices M, signed)
// instead of probs and scores, state.npy [H,d,d] (each head's state after the last token), head_out.npy
// [H,T,d] (= M·V, + D·V for Mamba-2), and their gates beta.npy, step.npy, decay.npy [H,T] where the kind has them.
#include <cstdio>
#include <filesystem>
#include <memory>

#include <nlohmann/json.hpp>

#include "attnscope/analysis/analysis.h"
#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"
#include "attnscope/io/npy.h"
#include "attnscope/pipeline/pipeline.h"
#include "cli/commands.h"
#include "cli/model_options.h"
#include "cli/output_files.h"
#include "cli/trace_json.h"
#include "core/scene_options.h"
#include "core/translations.h"

namespace attnscope::cli {
namespace {

struct ComputeOptions {
  SceneOptions scene;
  ModelOptions model;  // --checkpoint: a real model instead of the seeded layer
  std::string out;
  bool table = false;
  std::string language = "en";  // trace.json's step names and formulas, the table's headings
};

// One entry per token. Every entry has the label (docs/real-models.md "Tokenizers"); with a model's tokenizer
// also its id, its vocabulary piece, its raw bytes in hex (they may be part of a character) and
// whether it is special. byte_begin/byte_end index the input text for SPEC's word tokenizer and the
// tokenizer's decoded text otherwise.
nlohmann::json tokens_json(const AttentionAnalysis& att) {
  static const char* hex = "0123456789abcdef";
  nlohmann::json tokens = nlohmann::json::array();
  const Encoding& e = att.encoding;
  for (size_t i = 0; i < att.tokens.size(); ++i) {
    const Token& t = att.tokens[i];
    const char* kind = t.kind == TokenKind::word ? "word" : t.kind == TokenKind::cjk ? "cjk" : "punctuation";
    nlohmann::json entry = {{"text", t.text}, {"label", att.labels[i]}, {"byte_begin", t.byte_begin},
                            {"byte_end", t.byte_end}, {"kind", kind}};
    if (i < e.size() && e.ids[i] != kNoTokenId) {
      std::string bytes;
      for (unsigned char c : e.bytes[i]) bytes += std::string{' ', hex[c >> 4], hex[c & 15]};
      entry["id"] = e.ids[i];
      entry["piece"] = e.pieces[i];
      entry["bytes"] = bytes.empty() ? bytes : bytes.substr(1);
      entry["special"] = e.special[i] != 0;
    }
    tokens.push_back(std::move(entry));
  }
  return tokens;
}

// A compact per-head table of probabilities, for a first look in the terminal.
void print_table(const AttentionAnalysis& att, const FigureWords& words) {
  const int T = int(att.x.rows());
  const int shown = std::min(T, 12);
  for (int h = 0; h < att.shape.heads; ++h) {
    std::printf("%s%s\n", words.format("head %d · kv group %d", h, kv_group_of_head(h, att.shape.heads, att.shape.groups)).c_str(),
                shown < T ? "  (first 12 tokens)" : "");
    std::printf("%10s", "");
    for (int j = 0; j < shown; ++j) std::printf(" %6.6s", att.labels[size_t(j)].c_str());
    std::printf("\n");
    for (int i = 0; i < shown; ++i) {
      std::printf("%10.10s", att.labels[size_t(i)].c_str());
      for (int j = 0; j < shown; ++j) std::printf(" %6.3f", att.result.probs[size_t(h)](i, j));  // M without a softmax
      std::printf("\n");
    }
    std::printf("\n");
  }
}

void run(const ComputeOptions& o) {
  const Language language = parse_language_option(o.language);
  const Translations words = language == Language::en ? Translations{} : load_translations(translations_path(to_string(language)));
  if (wants_model(o.model)) {
    require(!o.table, "--table prints a seeded layer; with --checkpoint read attentions.npy instead");
    if (o.model.long_input) return run_long_compute(o.model, o.scene, o.out);
    return run_model_compute(o.model, o.scene, o.out, words);
  }
  refuse_long_without_checkpoint(o.model);
  require(!lens_flags_given(o.model.lens), "--lens needs --checkpoint DIR: the seeded layer has no unembedding to read "
                                           "the residual stream with");
  refuse_ablation_without_checkpoint(o.model);
  const Scene scene = build_scene(o.scene);
  require(scene.input.source != InputSource::grid, "compute takes --text or --input; for grids use `attnscope relpos`");
  pipeline::Request request;  // the engine's pipeline, as the window's worker runs it
  request.scene = scene;
  const pipeline::Result result = pipeline::run(request);  // every check happens before anything is written
  const Analysis& a = *result.analysis;
  const AttentionAnalysis& att = *a.attention;
  const auto& r = att.result;

  OutputFiles out(o.out);
  if (att.linear) {
    // Heads without a softmax: the explicit matrices (not probabilities), the states a decoder keeps and the
    // gates; output = M·V (+ D·V for Mamba-2) per head, then W_O.
    const LinearLayerResult& l = att.linear_layer;
    out.npy("matrix.npy", r.probs);
    out.npy("state.npy", l.state);
    if (l.beta.size()) out.npy("beta.npy", l.beta);
    if (l.step.size()) out.npy("step.npy", l.step);
    if (l.decay.size()) out.npy("decay.npy", l.decay);
    out.npy("head_out.npy", r.head_out);
  } else {
    out.npy("probs.npy", r.probs);
    out.npy("scores.npy", r.scores);
  }
  out.npy("output.npy", r.output);
  out.npy("q.npy", r.q);
  out.npy("k.npy", r.k);
  out.npy("v.npy", r.v);
  if (a.scene.model.kind == AttentionKind::mla) out.npy("c_kv.npy", r.c_kv);
  if (!r.probs_1.empty()) {
    out.npy("probs_1.npy", r.probs_1);
    out.npy("probs_2.npy", r.probs_2);
  }
  if (r.sink_share.size()) out.npy("sink_share.npy", r.sink_share);
  if (att.positions.scheme != PositionScheme::nope)
    out.text("positions.json", positions_profile_json(att.positions).dump(2) + "\n");
  out.text("trace.json", trace_json(a, words).dump(2) + "\n");
  if (!att.tokens.empty()) out.text("tokens.json", tokens_json(att).dump(2) + "\n");
  out.commit();
  if (o.table) print_table(att, figure_words(words));
  std::printf("wrote %zu files to %s\n", out.written().size(), o.out.c_str());
}

void add_compute_command(CLI::App& root) {
  auto options = std::make_shared<ComputeOptions>();
  CLI::App* cmd = root.add_subcommand("compute", "Grouped attention (single, MHA, MQA, GQA), MLA, differential attention, and attention without a softmax (linear, retention, Mamba-2, DeltaNet, Gated DeltaNet): every tensor as .npy");
  add_scene_options(*cmd, options->scene, flags_input | flags_model);
  cmd->add_option("--out", options->out, "Output folder (created if missing)")->required();
  cmd->add_flag("--table", options->table, "Also print each head's probabilities as a table");
  cmd->add_option("--language", options->language,
                  "Language of trace.json's step names and formulas and of the table: en | zh (default en)");
  add_model_options(*cmd, options->model, false);
  cmd->callback([options] { run(*options); });
}

CommandRegistrar registrar(add_compute_command);

}  // namespace
}  // namespace attnscope::cli
