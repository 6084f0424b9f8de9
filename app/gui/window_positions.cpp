// window_positions.cpp — the Positions view: how the model's position scheme shapes the scores, beside
// the heads it produces. RoPE: the wavelength of every dimension pair (in tokens, against the sentence's
// length), and the score of a fixed query and key as they move apart, for the chosen base and scaling
// and for each scaling at the same factor; ALiBi: each head's bias −m_h·(i − j); relative position: each
// head's positional score −α_h·(δ − Δ_h)²; NoPE: that nothing but the mask orders the tokens. The
// numbers come from the engine's positions_profile (attention/positions.h), the ones `compute` writes
// to positions.json. The scheme's own controls sit on top (the Model window has the same ones). A
// checkpoint's layer is drawn from the engine's layer_positions (model_layer.h) for the input on screen:
// with a scaled RoPE (linear, dynamic, YaRN, llama3, longrope) a sentence says what the scaling did, the
// wavelengths are drawn before and after it, then how many times longer each pair's became, by band or
// factor list, with the attention factor.
#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "attnscope/analysis/model_layer.h"
#include "attnscope/attention/positions.h"
#include "attnscope/core/error.h"
#include "attnscope/core/limits.h"
#include "gui/i18n.h"
#include "gui/line_plot.h"
#include "gui/token_sets.h"
#include "gui/widgets.h"
#include "gui/windows.h"

namespace attnscope::gui {
namespace {

const char* SchemeName(PositionScheme s) {
  switch (s) {
    case PositionScheme::absolute: return tr("absolute (sinusoidal)");
    case PositionScheme::nope: return tr("none (NoPE)");
    case PositionScheme::rope: return "RoPE";
    case PositionScheme::alibi: return "ALiBi";
    case PositionScheme::relpos: return tr("relative (quadratic)");
  }
  return "";
}

const char* ScalingName(RopeScaling s) {
  switch (s) {
    case RopeScaling::none: return tr("no scaling");
    case RopeScaling::linear: return tr("linear (position interpolation)");
    case RopeScaling::ntk: return tr("NTK-aware");
    case RopeScaling::yarn: return "YaRN";
  }
  return "";
}

std::vector<float> Iota(size_t n) {
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = float(i);
  return x;
}

Series CurveSeries(const DistanceCurve& c, std::string label, int color) {
  Series s{std::move(label), SeriesColor(color), Iota(c.value.size()), {}};
  s.y.assign(c.value.begin(), c.value.end());
  return s;
}

std::string FactorText(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", f);
  return buf;
}

// A computed ratio (a float32 quotient) in 3 significant figures: 64.84, not 64.8400002.
std::string RatioText(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", f);
  return buf;
}

// What a curve of decay_by_scaling is called on screen.
std::string ScalingCurveLabel(const std::string& name, double factor) {
  if (name == "none") return tr("no scaling");
  const std::string f = " ×" + FactorText(factor);
  if (name == "linear") return tr("linear") + f;
  if (name == "ntk") return tr("NTK-aware") + f;
  if (name == "yarn") return "YaRN" + f;
  return name;
}

// The scheme and its settings in one line ("RoPE · base θ 10000 · YaRN · factor 4 · trained context 32"),
// in the controls' own words.
std::string SettingsLine(const ModelSettings& m) {
  std::string line = SchemeName(m.positions);
  if (m.positions != PositionScheme::rope && m.kind != AttentionKind::mla) return line;
  line += std::string(" · ") + tr("base θ") + " " + FactorText(m.rope_base);
  if (m.rope_scaling == RopeScaling::none) return line;
  line += std::string(" · ") + ScalingName(m.rope_scaling) + " · " + tr("factor") + " " + FactorText(m.rope_factor);
  if (m.rope_scaling != RopeScaling::linear)
    line += std::string(" · ") + tr("trained context") + " " + std::to_string(m.rope_original_context);
  return line;
}

// The wavelength of each dimension pair on a log axis, under its title: `share` of the column's height
// left after two lines for the next plot's title, and at least `min_lines` lines.
void DrawWavelengths(const std::vector<Series>& waves, size_t pairs, float width, float share, float min_lines) {
  const float line = ImGui::GetTextLineHeightWithSpacing();
  WrappedText(tr("Wavelength of each dimension pair: tokens for one full turn"));
  const float waves_h = std::max((ImGui::GetContentRegionAvail().y - line * 2) * share, line * min_lines);
  ImGui::BeginChild("##waves", ImVec2(width, waves_h), false, ImGuiWindowFlags_NoScrollbar);
  LinePlotOptions o;
  o.log_y = true;
  o.points = pairs <= 64;
  o.hover_format = "%s: pair %.0f → %.1f";
  DrawLinePlot("waves", waves, tr("dimension pair k"), tr("tokens (log)"), waves_h, o);
  ImGui::EndChild();
}

// Two plots one above the other in the rest of the column, each under its title (wrapped to the column).
void DrawRopePlots(const PositionsProfile& p, int tokens, float width) {
  const float line = ImGui::GetTextLineHeightWithSpacing();
  // 1. Wavelengths per pair, on a log axis, with the sentence's length as a line.
  std::vector<Series> waves;
  const size_t pairs = p.wavelength.size();
  waves.push_back({trf("base %s", FactorText(p.rope.base).c_str()), SeriesColor(0), Iota(pairs), {}});
  waves.back().y.assign(p.wavelength.begin(), p.wavelength.end());
  if (p.rope.scaling != RopeScaling::none) {
    waves.push_back({ScalingCurveLabel(to_string(p.rope.scaling), p.rope.factor), SeriesColor(1), Iota(pairs), {}});
    waves.back().y.assign(p.wavelength_scaled.begin(), p.wavelength_scaled.end());
  }
  waves.push_back({trf("this sentence: %d tokens", tokens), ImGui::GetColorU32(ImGuiCol_TextDisabled),
                   {0.0f, float(std::max<size_t>(pairs, 2) - 1)}, {float(tokens), float(tokens)}});
  // Half of what is left, keeping about two lines for the second title.
  DrawWavelengths(waves, pairs, width, 0.5f, 7);

  // 2. The score of q = k = all-ones against the distance.
  std::vector<Series> decay;
  int color = 0;
  for (const DistanceCurve& c : p.decay_by_scaling) decay.push_back(CurveSeries(c, ScalingCurveLabel(c.name, p.comparison_factor), color++));
  if (p.rope.base != default_rope_base)
    decay.push_back(CurveSeries(p.decay_default, trf("base %s, no scaling", FactorText(default_rope_base).c_str()), color++));
  WrappedText(trf("Score of a fixed query and key, %d tokens apart at most", p.max_distance));
  HelpMarker(tr("q = k = (1, 1, …, 1): the score is Σ 2·cos(δ·θ_k) over the pairs, largest at distance 0. RoPE makes "
                "the same two vectors score less the further apart they stand; the base and the scalings set how fast."));
  const float decay_h = std::max(ImGui::GetContentRegionAvail().y - ImGui::GetStyle().ItemSpacing.y, line * 7);
  ImGui::BeginChild("##decay", ImVec2(width, decay_h), false, ImGuiWindowFlags_NoScrollbar);
  LinePlotOptions d;
  d.y_from_zero = false;
  d.zero_line = true;
  d.hover_format = "%s: i − j = %.0f → %.2f";
  DrawLinePlot("decay", decay, tr("distance i − j (tokens)"), tr("score"), decay_h, d);
  ImGui::EndChild();
}

void DrawAlibiPlot(const PositionsProfile& p, float width) {
  std::vector<Series> bias;
  for (size_t h = 0; h < p.alibi_bias.size(); ++h)
    bias.push_back(CurveSeries(p.alibi_bias[h], trf("head %d: m = %s", int(h), FactorText(p.alibi_slopes[h]).c_str()), int(h)));
  WrappedText(tr("Bias added to every score: −m_h·(i − j)"));
  HelpMarker(tr("ALiBi adds no position vector: each head subtracts its slope times the distance. The steepest head "
                "looks only nearby, the flattest almost everywhere; the causal mask still hides the future."));
  const float plot_h = std::max(ImGui::GetContentRegionAvail().y - ImGui::GetStyle().ItemSpacing.y,
                                ImGui::GetTextLineHeightWithSpacing() * 7);
  ImGui::BeginChild("##alibi", ImVec2(width, plot_h), false, ImGuiWindowFlags_NoScrollbar);
  LinePlotOptions o;
  o.y_from_zero = false;
  o.hover_format = "%s: i − j = %.0f → %.2f";
  // Biases run from 0 at distance 0 down to −m_0·δ_max: the axis ends at 0.
  float lowest = 0;
  for (const Series& s : bias)
    for (float v : s.y) lowest = std::min(lowest, v);
  if (lowest < 0) o.y_lo = lowest, o.y_hi = 0;
  DrawLinePlot("alibi", bias, tr("distance i − j (tokens)"), tr("bias"), plot_h, o);
  ImGui::EndChild();
}

// The relative-position heads' positional score −α_h·(δ − Δ_h)² over δ = j − i.
void DrawRelposPlot(const AppState& state, const ModelSettings& m, int heads, int head_dim, int tokens, float width) {
  PositionEncoding enc;
  try {
    enc = position_encoding(m, state.scene.relpos, heads, head_dim);
  } catch (const std::exception& e) {
    ErrorText(e.what());
    return;
  }
  std::vector<Series> curves;
  const int reach = std::max(tokens - 1, 1);
  for (size_t h = 0; h < enc.relpos_alphas.size(); ++h) {
    const double alpha = enc.relpos_alphas[h], delta = enc.relpos_deltas[h];
    Series s{trf("head %d: α = %s, Δ = %s", int(h), FactorText(alpha).c_str(), FactorText(delta).c_str()),
             SeriesColor(int(h)), {}, {}};
    for (int d = -reach; d <= reach; ++d) {
      s.x.push_back(float(d));
      s.y.push_back(float(-enc.relpos_lambda * alpha * (double(d) - delta) * (double(d) - delta)));
    }
    curves.push_back(std::move(s));
  }
  WrappedText(tr("Positional score added to every score: −λ·α_h·(δ − Δ_h)², δ = j − i"));
  const float plot_h = std::max(ImGui::GetContentRegionAvail().y - ImGui::GetStyle().ItemSpacing.y,
                                ImGui::GetTextLineHeightWithSpacing() * 7);
  ImGui::BeginChild("##relpos", ImVec2(width, plot_h), false, ImGuiWindowFlags_NoScrollbar);
  LinePlotOptions o;
  o.y_from_zero = false;
  o.x_from_zero = false;
  o.hover_format = "%s: δ = %.0f → %.2f";
  DrawLinePlot("relpos", curves, tr("offset δ = j − i (tokens)"), tr("score"), plot_h, o);
  ImGui::EndChild();
}

std::vector<float> Floats(const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); }

// A horizontal line across the pairs at y (a length in tokens), in a quiet colour.
Series LevelLine(std::string label, size_t pairs, double y, ImU32 color) {
  return {std::move(label), color, {0.0f, float(std::max<size_t>(pairs, 2) - 1)}, {float(y), float(y)}};
}

// The pairs of one band as a series of the stretch plot (bands are contiguous: wavelengths grow with k).
Series BandSeries(const LayerPositions& lp, RopeBand band, std::string label, int color) {
  Series s{std::move(label), SeriesColor(color), {}, {}};
  for (size_t k = 0; k < lp.band.size(); ++k)
    if (lp.band[k] == band) s.x.push_back(float(k)), s.y.push_back(float(lp.stretch[k]));
  return s;
}

int BandCount(const LayerPositions& lp, RopeBand band) { return int(std::count(lp.band.begin(), lp.band.end(), band)); }

// What the checkpoint's scaling did to this layer's wavelengths, in one or two sentences.
std::string ScalingCaption(const LayerPositions& lp) {
  const std::string f = FactorText(lp.factor);
  const auto [lo, hi] = std::minmax_element(lp.stretch.begin(), lp.stretch.end());
  switch (lp.rope_type) {
    case model::RopeType::plain: return "";
    case model::RopeType::linear:
      return trf("Linear scaling ×%s: every pair turns %s times slower, so every wavelength is %s times longer "
                 "(positions interpolated).", f.c_str(), f.c_str(), f.c_str());
    case model::RopeType::dynamic:
      if (lp.tokens <= lp.max_positions)
        return trf("Dynamic NTK ×%s: this input of %d tokens fits the %d positions the model was trained on, so "
                   "the wavelengths are unchanged; a longer input would raise the base.", f.c_str(), lp.tokens,
                   lp.max_positions);
      return trf("Dynamic NTK ×%s: this input of %d tokens is longer than the %d trained positions, so the base "
                 "rises from %s to %s: the slowest pair's wavelength grows ×%s, pair 0's not at all.", f.c_str(),
                 lp.tokens, lp.max_positions, FactorText(lp.rope.base).c_str(), FactorText(lp.dynamic_base).c_str(),
                 RatioText(*hi).c_str());
    case model::RopeType::yarn:
      return trf("YaRN ×%s, trained on %d tokens: the fast pairs keep their wavelengths, the slow ones turn %s times "
                 "slower, and those between blend the two (kept %d, blended %d, slowed %d of %d pairs).", f.c_str(),
                 lp.original_context, f.c_str(), BandCount(lp, RopeBand::kept), BandCount(lp, RopeBand::blended),
                 BandCount(lp, RopeBand::scaled), int(lp.band.size()));
    case model::RopeType::llama3:
      return trf("Llama 3 scaling ×%s, trained on %d tokens: pairs with a wavelength under %s tokens keep it, those "
                 "over %s tokens turn %s times slower, and those between blend the two (kept %d, blended %d, slowed %d "
                 "of %d pairs).", f.c_str(), lp.original_context, FactorText(lp.high_freq_wavelength).c_str(),
                 FactorText(lp.low_freq_wavelength).c_str(), f.c_str(), BandCount(lp, RopeBand::kept),
                 BandCount(lp, RopeBand::blended), BandCount(lp, RopeBand::scaled), int(lp.band.size()));
    case model::RopeType::longrope:
      return lp.long_factors
                 ? trf("LongRoPE: this input of %d tokens is longer than the %d trained tokens, so each pair's "
                       "wavelength is stretched by its own long_factor, ×%s to ×%s.", lp.tokens, lp.original_context,
                       RatioText(*lo).c_str(), RatioText(*hi).c_str())
                 : trf("LongRoPE: this input of %d tokens fits the %d trained tokens, so each pair's wavelength is "
                       "stretched by its own short_factor, ×%s to ×%s.", lp.tokens, lp.original_context,
                       RatioText(*lo).c_str(), RatioText(*hi).c_str());
  }
  return "";
}

// A scaled layer of a checkpoint: its wavelengths before and after the scaling, with the lengths that
// set the bands, then how many times longer each pair's wavelength became, by band or factor list.
void DrawScaledRope(const LayerPositions& lp, float width) {
  const float line = ImGui::GetTextLineHeightWithSpacing();
  const size_t pairs = lp.wavelength.size();
  const ImU32 quiet = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  std::vector<Series> waves;
  waves.push_back({tr("before scaling"), SeriesColor(0), Iota(pairs), Floats(lp.wavelength)});
  waves.push_back({tr("after scaling"), SeriesColor(1), Iota(pairs), Floats(lp.wavelength_scaled)});
  if (lp.rope_type == model::RopeType::llama3) {
    waves.push_back(LevelLine(trf("L/high_freq_factor = %s tokens", FactorText(lp.high_freq_wavelength).c_str()), pairs,
                              lp.high_freq_wavelength, SeriesColor(2)));
    waves.push_back(LevelLine(trf("L/low_freq_factor = %s tokens", FactorText(lp.low_freq_wavelength).c_str()), pairs,
                              lp.low_freq_wavelength, SeriesColor(3)));
  } else if (lp.rope_type == model::RopeType::dynamic) {
    waves.push_back(LevelLine(trf("trained: %d tokens", lp.max_positions), pairs, lp.max_positions, SeriesColor(3)));
  } else if (lp.original_context > 0 && lp.rope_type != model::RopeType::linear) {
    waves.push_back(LevelLine(trf("trained: %d tokens", lp.original_context), pairs, lp.original_context, SeriesColor(3)));
  }
  waves.push_back(LevelLine(trf("this sentence: %d tokens", lp.tokens), pairs, lp.tokens, quiet));
  // More than half of what is left (its legend has up to five entries), keeping two lines for the
  // second title.
  DrawWavelengths(waves, pairs, width, 0.56f, 8);

  std::vector<Series> stretch;
  const std::string f = "×" + FactorText(lp.factor);
  if (lp.rope_type == model::RopeType::llama3 || lp.rope_type == model::RopeType::yarn) {
    for (auto [band, label, color] : {std::tuple{RopeBand::kept, tr("kept (fast pairs)"), 0},
                                      std::tuple{RopeBand::blended, tr("blended"), 2},
                                      std::tuple{RopeBand::scaled, "", 1}}) {
      Series s = BandSeries(lp, band, band == RopeBand::scaled ? trf("%s (slow pairs)", f.c_str()) : label, color);
      if (!s.x.empty()) stretch.push_back(std::move(s));
    }
  } else if (lp.rope_type == model::RopeType::longrope) {
    stretch.push_back({lp.long_factors ? tr("long_factor (in use)") : tr("short_factor (in use)"), SeriesColor(1),
                       Iota(pairs), Floats(lp.stretch)});
    stretch.push_back({lp.long_factors ? tr("short_factor (for shorter inputs)") : tr("long_factor (for longer inputs)"),
                       quiet, Iota(pairs), Floats(lp.unused_factors)});
  } else {
    stretch.push_back({lp.rope_type == model::RopeType::linear ? f : tr("this input"), SeriesColor(1), Iota(pairs),
                       Floats(lp.stretch)});
  }
  WrappedText(tr("How many times longer each pair's wavelength became"));
  const float stretch_h = std::max(ImGui::GetContentRegionAvail().y - ImGui::GetStyle().ItemSpacing.y, line * 7);
  ImGui::BeginChild("##stretch", ImVec2(width, stretch_h), false, ImGuiWindowFlags_NoScrollbar);
  LinePlotOptions so;
  so.log_y = true;  // ×1 (kept) to ×32 (llama3) read at a glance
  so.points = pairs <= 64;
  so.hover_format = "%s: pair %.0f → ×%.3g";
  DrawLinePlot("stretch", stretch, tr("dimension pair k"), tr("times longer (log)"), stretch_h, so);
  ImGui::EndChild();
}

// A checkpoint's layer: how its config puts positions in (model_layer.h layer_positions), its RoPE curves
// when it has RoPE, beside its heads. Its settings are its config's, so there are no controls here.
void DrawCheckpointPositions(AppState& state) {
  const CheckpointWindowState& c = state.checkpoint;
  const model::ModelConfig* config = c.model ? &c.model->config : nullptr;
  const int tokens = state.analysis && state.analysis->attention ? int(state.analysis->attention->labels.size()) : 1;
  CheckpointPositionsCache& cache = state.positions_cache;
  if (config && (cache.model != c.model.get() || cache.layer != c.layer || cache.tokens != tokens)) {
    cache.model = c.model.get(), cache.layer = c.layer, cache.tokens = tokens;
    cache.error.clear();
    try {
      // The frequencies the forward pass used on this input (dynamic and longrope choose by its length).
      cache.layer_positions = layer_positions(*config, c.layer, tokens);
      if (cache.layer_positions.scheme == PositionScheme::rope && cache.layer_positions.rope_type == model::RopeType::plain) {
        // An unscaled layer's curves (DrawRopePlots). The distances: the sentence, or the model's context,
        // at most the longest input (a Qwen3 YaRN config's 8192 positions were refused here).
        const int distance = std::min(std::max(tokens - 1, config->max_positions > 0 ? config->max_positions : limits::max_tokens),
                                      limits::max_tokens);
        cache.profile = positions_profile(PositionScheme::rope, cache.layer_positions.rope, config->heads,
                                          cache.layer_positions.rotated_dim, distance);
      }
    } catch (const std::exception& e) {
      cache.error = e.what();
    }
  }
  const LayerPositions& lp = cache.layer_positions;
  const bool rope = config && cache.error.empty() && lp.scheme == PositionScheme::rope;
  const bool scaled = rope && lp.rope_type != model::RopeType::plain;
  if (rope) {
    // What the layer's RoPE is, and for a scaled one what the scaling did, across the whole view: in the
    // column beside the heads it took half the height at 1280×720.
    std::string what = trf("Layer %d of %s: RoPE, base %s, over %d dimensions", c.layer, c.name().c_str(),
                           FactorText(lp.rope.base).c_str(), lp.rotated_dim);
    if (lp.rope.layout == RopeLayout::interleaved) what += tr(", interleaved pairs");
    if (!config->is_mla() && lp.rotated_dim < lp.head_dim)
      what += trf(" (partial rotary: the other %d of the head's %d pass unturned)", lp.head_dim - lp.rotated_dim,
                  lp.head_dim);
    WrappedText(what);
    if (scaled) {
      WrappedText(ScalingCaption(lp));
      WrappedText(trf("Attention factor: cos and sin × %s", FactorText(lp.attention_factor).c_str()));
    }
  }
  const float avail_w = ImGui::GetContentRegionAvail().x;
  const float left_w = std::floor(avail_w * 0.48f);
  ImGui::BeginChild("##positions_left", ImVec2(left_w, 0), false, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  if (!config) {
    WrappedText(c.attentions ? tr("Attentions computed elsewhere carry no position settings: open the checkpoint itself "
                                  "to see how its layers put positions in.")
                             : tr("No checkpoint is open yet."));
  } else if (!cache.error.empty()) {
    ErrorText(cache.error);
  } else if (lp.scheme == PositionScheme::absolute) {
    WrappedText(trf("%s learns one position vector per position and adds it to the token embeddings before the "
                    "first layer: the scores see positions only through them, so no curve describes them.",
                    c.name().c_str()));
  } else if (lp.scheme == PositionScheme::nope) {
    WrappedText(trf("Layer %d of %s uses no positions at all (a NoPE layer): its scores depend only on the tokens, "
                    "and only the causal mask orders them.", c.layer, c.name().c_str()));
  } else if (scaled) {
    DrawScaledRope(lp, left_w);
  } else {
    DrawRopePlots(cache.profile, tokens, left_w);
  }
  ImGui::EndChild();
  RecordLastItem(state, "positions.plots");
  ImGui::SameLine(0, ImGui::GetStyle().ItemSpacing.x);
  ImGui::BeginChild("##positions_heads", ImVec2(0, 0), false, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  DrawHeadsBeside(state);
  ImGui::EndChild();
}

}  // namespace

bool DrawPositionControls(AppState& state, ModelSettings& m) {
  bool edited = false;
  const PositionScheme schemes[] = {PositionScheme::absolute, PositionScheme::nope, PositionScheme::rope,
                                    PositionScheme::alibi, PositionScheme::relpos};
  ImGui::TextUnformatted(tr("Positions"));
  HelpMarker(tr("absolute: sinusoidal position vectors added to the embeddings (Vaswani et al. 2017).\n"
                "NoPE: no positions at all; only the causal mask orders the tokens.\n"
                "RoPE: queries and keys turned by an angle proportional to the position (Su et al. 2021).\n"
                "ALiBi: a linear penalty −m_h·(i − j) on the scores, one slope per head (Press et al. 2022).\n"
                "relative: the quadratic relative-position scores of the Relative position view (Cordonnier et al. 2020)."));
  for (PositionScheme s : schemes) {
    if (s != schemes[0]) SameLineIfFits(RadioWidth(SchemeName(s)));
    // Heads without a softmax take absolute positions or none (analysis.cpp's check_variant).
    const bool refused = is_linear_kind(m.kind) && s != PositionScheme::absolute && s != PositionScheme::nope;
    ImGui::BeginDisabled(refused);
    if (ImGui::RadioButton(SchemeName(s), m.positions == s) && m.positions != s) {
      m.positions = s;
      edited = true;
    }
    ImGui::EndDisabled();
    RecordLastItem(state, std::string("model.positions.") + to_string(s));
    if (refused && ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
      ImGui::SetTooltip("%s", tr("Heads without a softmax take absolute positions or none here: RoPE, ALiBi and "
                                 "relative positions act on softmax scores."));
  }
  if (m.positions == PositionScheme::rope || m.kind == AttentionKind::mla) {
    const float label_w = std::max({ImGui::CalcTextSize(tr("base θ")).x, ImGui::CalcTextSize(tr("factor")).x,
                                    ImGui::CalcTextSize(tr("trained context")).x}) +
                          ImGui::GetFontSize();
    ImGui::PushItemWidth(std::max(ImGui::GetContentRegionAvail().x - label_w, 80.0f));
    std::vector<int> bases = {10, 100, 500, 1000, 10000, 100000, 500000, 1000000};
    int base = int(std::lround(m.rope_base));
    if (std::find(bases.begin(), bases.end(), base) == bases.end() || double(base) != m.rope_base) {
      bases.push_back(base);
      std::sort(bases.begin(), bases.end());
    }
    if (SliderChoice(tr("base θ"), &base, bases)) {
      m.rope_base = base;
      edited = true;
    }
    RecordLastItem(state, "model.rope_base");
    const RopeScaling scalings[] = {RopeScaling::none, RopeScaling::linear, RopeScaling::ntk, RopeScaling::yarn};
    if (ImGui::BeginCombo("##rope_scaling", ScalingName(m.rope_scaling))) {
      for (RopeScaling s : scalings)
        if (ImGui::Selectable(ScalingName(s), m.rope_scaling == s) && m.rope_scaling != s) {
          m.rope_scaling = s;
          if (s == RopeScaling::none) m.rope_factor = 1;
          else if (m.rope_factor <= 1) m.rope_factor = 4;
          edited = true;
        }
      ImGui::EndCombo();
    }
    RecordLastItem(state, "model.rope_scaling");
    if (m.rope_scaling != RopeScaling::none) {
      int factor = std::max(2, int(std::lround(m.rope_factor)));
      if (SliderChoice(tr("factor"), &factor, {2, 4, 8, 16, 32})) {
        m.rope_factor = factor;
        edited = true;
      }
      RecordLastItem(state, "model.rope_factor");
      if (m.rope_scaling == RopeScaling::yarn) {  // NTK-aware and linear scaling do not depend on it
        int context = m.rope_original_context;
        if (SliderChoice(tr("trained context"), &context, {8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096})) {
          m.rope_original_context = context;
          edited = true;
        }
        RecordLastItem(state, "model.rope_context");
      }
    }
    ImGui::PopItemWidth();
    bool interleaved = m.rope_layout == RopeLayout::interleaved;
    if (ImGui::Checkbox(tr("interleaved pairs (GPT-J, DeepSeek)"), &interleaved)) {
      m.rope_layout = interleaved ? RopeLayout::interleaved : RopeLayout::half;
      edited = true;
    }
    RecordLastItem(state, "model.rope_layout");
    HelpMarker(tr("Off: dimension k turns with dimension k + d/2 (Llama's rotate-half). On: dimension 2k with 2k + 1. "
                  "The scores are the same up to a permutation of the weights; the figures show which pairing is used."));
  }
  return edited;
}

void DrawPositionsWindow(AppState& state) {
  PlaceNextWindow(state, Slot::view);
  if (!ImGui::Begin(WindowTitle("Positions", "positions").c_str(), nullptr, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse)) {
    ImGui::End();
    return;
  }
  state.layout.view = to_string(View::positions);
  if (LongInputNotice(state, TrKey("Positions"))) {  // a long input keeps no stack to draw
    ImGui::End();
    return;
  }
  if (WrongInputForView(state, false, tr("The Positions view shows attention over a sentence or a tensor; the input is a 2D grid."),
                        Panel::model)) {
    ImGui::End();
    return;
  }
  if (state.checkpoint.current()) {
    // One current model: the checkpoint's layer, with the positions of its own config.
    DrawCheckpointPositions(state);
    ImGui::End();
    return;
  }
  const AttentionAnalysis* att = state.analysis ? state.analysis->attention.get() : nullptr;
  ModelSettings& m = state.scene.model;
  const float avail_w = ImGui::GetContentRegionAvail().x;
  const float left_w = std::floor(avail_w * 0.48f);
  const float spacing = ImGui::GetStyle().ItemSpacing.x;

  ImGui::BeginChild("##positions_left", ImVec2(left_w, 0), false, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  // Presenting, the plots take the column (at 720p under the banner the controls left them no room):
  // one line says what is set, the lesson step sets it.
  if (state.presenting) WrappedText(SettingsLine(m));
  else if (DrawPositionControls(state, m)) NoteEdit(state, Panel::model);
  TokenSetNotDrawnNote(state, "positions");
  ErrorText(ErrorFor(state, Panel::model));
  const ModelSettings& shown = state.analysis ? state.analysis->scene.model : m;
  const int tokens = att ? int(att->labels.size()) : 1;
  const int heads = att ? att->shape.heads : effective_heads(shown);
  const int head_dim = att && att->shape.heads > 0 ? att->shape.d_model / att->shape.heads : shown.d_model / std::max(heads, 1);
  ImGui::Separator();
  // The profile comes with the heads (AttentionAnalysis::positions): the numbers compute writes to positions.json.
  const PositionsProfile* p = att ? &att->positions : nullptr;
  if (!att) {
    ImGui::TextDisabled("%s", tr("computing…"));
  } else if (p->scheme == PositionScheme::rope) {
    if (shown.kind == AttentionKind::mla)
      WrappedText(trf("MLA: only the decoupled rotary part of %d dimensions carries positions.", shown.rope_dim));
    DrawRopePlots(*p, tokens, left_w);
  } else if (p->scheme == PositionScheme::alibi) {
    DrawAlibiPlot(*p, left_w);
  } else if (shown.positions == PositionScheme::relpos) {
    DrawRelposPlot(state, shown, heads, head_dim, tokens, left_w);
  } else if (shown.kind == AttentionKind::mla) {
    WrappedText(tr("This MLA layer has no rotary part (d_rope = 0): its scores see no positions at all."));
  } else if (shown.positions == PositionScheme::absolute) {
    WrappedText(tr("Absolute positions: each token's embedding has a sinusoidal vector of its position added before "
                   "attention (Vaswani et al. 2017). The scores see positions only through the embeddings, so no curve "
                   "describes them; choose RoPE, ALiBi or relative to see one."));
  } else {
    WrappedText(tr("No positions (NoPE): the embeddings carry no position and nothing is added to the scores, so a "
                   "score depends only on the two tokens. The same word gets the same score wherever it stands; only "
                   "the causal mask tells a query what came before it."));
  }
  ImGui::EndChild();
  RecordLastItem(state, "positions.plots");

  ImGui::SameLine(0, spacing);
  ImGui::BeginChild("##positions_heads", ImVec2(0, 0), false, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  DrawHeadsBeside(state);
  ImGui::EndChild();
  ImGui::End();
}

}  // namespace attnscope::gui
