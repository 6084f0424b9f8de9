// lens_options.cpp — `compute --lens` and `export --what lens|attribution` (lens_options.h).
#include "cli/lens_options.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "attnscope/core/error.h"
#include "attnscope/pipeline/model_input.h"
#include "core/lens_export.h"
#include "core/scene_options.h"

namespace attnscope::cli {
namespace {

const char* kind_name(model::PartKind kind) {
  static const char* names[] = {"embedding", "positions", "head", "attention_bias", "mixer", "mlp", "final_norm_bias"};
  return names[int(kind)];
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

void add_lens_options(CLI::App& cmd, LensOptions& o, bool exporting) {
  o.app = &cmd;
  if (!exporting)
    cmd.add_flag("--lens", o.lens,
                 "With --checkpoint: also write the logit lens (lens_top_probs.npy [L,T,K], lens_kl.npy and lens_rank.npy "
                 "[L,T], lens.json) and the direct logit attribution (attribution.npy [P,T], attribution.json)");
  cmd.add_option("--lens-top-k", o.top_k, "With the logit lens: next tokens kept per layer and position, 1 to 100 (default 5)");
  cmd.add_option("--attribute-token", o.token,
                 "With the attribution: the token whose logit is split into parts, as an id or as text that is one token "
                 "(default: the model's top-1 at each position)");
  cmd.add_option("--attribute-position", o.position,
                 "With the attribution: the position shown and summarised, from 0 (default: the last token)");
}

bool lens_flags_given(const LensOptions& o) {
  return o.lens || flag_given(o.app, "--lens-top-k") || flag_given(o.app, "--attribute-token") ||
         flag_given(o.app, "--attribute-position");
}

void apply_lens_options(const LensOptions& o, pipeline::Request& request) {
  require(o.top_k >= 1 && o.top_k <= 100, "--lens-top-k must be between 1 and 100, got " + std::to_string(o.top_k));
  require(o.position >= 0 || !flag_given(o.app, "--attribute-position"),
          "--attribute-position must be a token position from 0, got " + std::to_string(o.position));
  request.steps.push_back(pipeline::Step::logit_lens);
  request.steps.push_back(pipeline::Step::logit_attribution);
  request.lens_top_k = o.top_k;
  if (o.token.empty()) {
    require(!flag_given(o.app, "--attribute-token"), "--attribute-token is empty: give a token id or the token's text");
    return;
  }
  const int V = request.model->config.vocab;
  if (all_digits(o.token)) {
    const long long id = o.token.size() > 10 ? -1 : std::stoll(o.token);
    require(id >= 0 && id < V, "--attribute-token " + o.token + " is outside the vocabulary (ids 0 to " +
                                   std::to_string(V - 1) + ")");
    request.attribute_token = int32_t(id);
    return;
  }
  ModelTokens one;
  try {
    one = model_tokens_from_text(request.model->dir, o.token, false);
  } catch (const InputError& e) {
    throw InputError("--attribute-token '" + o.token + "' is text, which needs the checkpoint's own tokenizer (or give "
                     "the token's id): " + e.what());
  }
  std::string pieces;
  for (const std::string& l : one.labels) pieces += (pieces.empty() ? "" : " | ") + l;
  require(one.ids.size() == 1, "--attribute-token '" + o.token + "' is " + std::to_string(one.ids.size()) +
                                   " tokens of this tokenizer (" + pieces + "); give text that is one token, or its id");
  request.attribute_token = one.ids[0];
}

void check_lens_result(const LensOptions& o, const pipeline::Result& r) {
  if (!r.lens) throw InputError(r.lens_error.empty() ? "the logit lens needs --checkpoint DIR" : r.lens_error);
  if (!r.attribution)
    throw InputError((flag_given(o.app, "--attribute-token") ? "--attribute-token: " : "") +
                     (r.attribution_error.empty() ? std::string("the attribution needs --checkpoint DIR") : r.attribution_error));
  if (o.position >= 0 && o.position >= int(r.tokens->ids.size()))
    throw InputError("--attribute-position " + std::to_string(o.position) + " is past the input's " +
                     std::to_string(r.tokens->ids.size()) + " tokens (0 to " + std::to_string(r.tokens->ids.size() - 1) + ")");
}

void write_lens_files(const LensOptions& o, const pipeline::Result& r, OutputFiles& files) {
  const model::LogitLens& lens = *r.lens;
  const int L = lens.layers, T = lens.tokens, K = lens.top_k;
  std::vector<float> probs(size_t(L) * size_t(T) * size_t(K), 0.0f), rank(size_t(L) * size_t(T));
  nlohmann::json top = nlohmann::json::array();
  for (int l = 0; l < L; ++l) {
    nlohmann::json layer = nlohmann::json::array();
    for (int t = 0; t < T; ++t) {
      nlohmann::json cell = nlohmann::json::array();
      const auto& next = lens.top[size_t(l)][size_t(t)];
      for (int k = 0; k < int(next.size()); ++k) {
        probs[(size_t(l) * size_t(T) + size_t(t)) * size_t(K) + size_t(k)] = next[size_t(k)].probability;
        cell.push_back({{"id", next[size_t(k)].id}, {"label", lens_token_label(r, next[size_t(k)].id)},
                        {"probability", next[size_t(k)].probability}});
      }
      rank[size_t(l) * size_t(T) + size_t(t)] = float(lens.final_rank(l, t));
      layer.push_back(cell);
    }
    top.push_back(layer);
  }
  files.npy("lens_top_probs.npy", probs.data(), {L, T, K});
  files.npy("lens_kl.npy", lens.kl);
  files.npy("lens_rank.npy", rank.data(), {L, T});
  nlohmann::json final_labels = nlohmann::json::array();
  for (int32_t id : lens.final_top) final_labels.push_back(lens_token_label(r, id));
  const nlohmann::json lens_json = {{"layers", L}, {"tokens", T}, {"top_k", K}, {"final_top", lens.final_top},
                                    {"final_top_labels", final_labels}, {"top", top},
                                    {"kl", "lens_kl.npy [L,T]: KL(P_final || P_layer) in nats"},
                                    {"rank", "lens_rank.npy [L,T]: rank of final_top in the layer's distribution, 1 = its top"}};
  files.text("lens.json", lens_json.dump(1) + "\n");

  const model::LogitAttribution& a = *r.attribution;
  const int p = lens_position(r, o.position);
  nlohmann::json parts = nlohmann::json::array();
  nlohmann::json notes = nlohmann::json::array();
  std::vector<std::pair<float, size_t>> at;
  for (size_t i = 0; i < a.parts.size(); ++i) {
    const model::LogitPart& part = a.parts[i];
    nlohmann::json e = {{"label", model::part_label(part)}, {"kind", kind_name(part.kind)}};
    if (part.layer >= 0) e["layer"] = part.layer;
    if (part.head >= 0) e["head"] = part.head;
    parts.push_back(e);
    at.push_back({a.values(int(i), p), i});
    if (part.kind == model::PartKind::mixer)
      notes.push_back("layer " + std::to_string(part.layer) + " (" + r.traced->layer_maps[size_t(part.layer)].kind +
                      ") has no softmax heads: its whole output is one part");
  }
  std::sort(at.begin(), at.end(), [](const auto& x, const auto& y) { return std::abs(x.first) > std::abs(y.first); });
  nlohmann::json chosen = nlohmann::json::array();
  for (const auto& [v, i] : at) chosen.push_back({{"part", model::part_label(a.parts[i])}, {"value", v}});
  nlohmann::json targets = nlohmann::json::array();
  for (int32_t id : a.target) targets.push_back(lens_token_label(r, id));
  nlohmann::json attribution = {{"parts", parts}, {"target", a.target}, {"target_labels", targets}, {"logit", a.logit},
                                {"before_softcap", a.before_softcap}, {"position", p},
                                {"values", "attribution.npy [P,T]: part p's contribution to the target's logit at position t"},
                                {"at_position", chosen}};
  if (!notes.empty()) attribution["notes"] = notes;
  files.npy("attribution.npy", a.values);
  files.text("attribution.json", attribution.dump(1) + "\n");
}

std::string lens_summary(const LensOptions& o, const pipeline::Result& r) {
  const model::LogitAttribution& a = *r.attribution;
  const int p = lens_position(r, o.position);
  std::vector<std::pair<float, size_t>> heads;
  int mixers = 0;
  for (size_t i = 0; i < a.parts.size(); ++i) {
    if (a.parts[i].kind == model::PartKind::head) heads.push_back({a.values(int(i), p), i});
    mixers += a.parts[i].kind == model::PartKind::mixer;
  }
  std::sort(heads.begin(), heads.end(), [](const auto& x, const auto& y) { return std::abs(x.first) > std::abs(y.first); });
  std::string line = "logit lens: " + std::to_string(r.lens->layers) + " layers x " + std::to_string(r.lens->tokens) +
                     " positions (top " + std::to_string(r.lens->top_k) + "); attribution of '" +
                     lens_token_label(r, a.target[size_t(p)]) + "' at position " + std::to_string(p) + ": logit " +
                     std::to_string(a.logit[size_t(p)]) + (a.before_softcap ? " before the soft-cap" : "");
  if (!heads.empty()) {
    line += "; largest heads:";
    for (size_t k = 0; k < std::min<size_t>(3, heads.size()); ++k) {
      char v[32];
      std::snprintf(v, sizeof v, "%+.4g", heads[k].first);
      line += " " + model::part_label(a.parts[heads[k].second]) + " " + v;
    }
  }
  if (mixers > 0)
    line += "; " + std::to_string(mixers) + " layers without softmax heads count as one part each (no per-head attribution)";
  return line;
}

}  // namespace attnscope::cli
