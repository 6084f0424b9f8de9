// export.cpp — from an Analysis and an ExportRequest to a figure, an array, and a written file.
//
// Sections: names and parsing · validation · captions · figures (heads, relpos, conv) · arrays and
// CSV · rendering and writing
#include "attnscope/figure/export.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdarg>
#include <cstdio>

#include "attnscope/analysis/token_set.h"
#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"
#include "attnscope/core/printf_conversions.h"
#include "attnscope/io/npy.h"
#include "attnscope/figure/render_png.h"
#include "attnscope/figure/render_svg.h"
#include "core/format.h"

namespace attnscope {

// ---- the figure's words --------------------------------------------------------------------------
std::string FigureWords::word(const std::string& english) const {
  const auto it = strings.find(english);
  return it == strings.end() || it->second.empty() ? english : it->second;
}

std::string FigureWords::format(const char* english_format, ...) const {
  std::string f = word(english_format);
  if (printf_conversions(f) != printf_conversions(english_format)) f = english_format;  // never read the wrong argument
  va_list args, again;
  va_start(args, english_format);
  va_copy(again, args);
  const int n = std::vsnprintf(nullptr, 0, f.c_str(), args);
  va_end(args);
  std::string out(size_t(std::max(n, 0)), '\0');
  if (n > 0) std::vsnprintf(out.data(), out.size() + 1, f.c_str(), again);
  va_end(again);
  return out;
}

const std::vector<std::string>& figure_word_keys() {
  static const std::vector<std::string> keys = {
      // panel titles and colour bars
      "head %d · kv group %d", "head %d", "combined (mean of the heads)", "input", "output", "difference",
      "MHSA (%d heads, α=%s)", "true %dx%d convolution", "difference MHSA − conv", "probability", "score", "masked",
      "differential weight", "differential", "A = P₁ − λ·P₂ (signed)",
      // heads without a softmax (linear_layer.h)
      "linear attention weight", "retention weight", "Mamba-2 weight", "DeltaNet weight", "Gated DeltaNet weight",
      "linear attention", "retention", "normalised", "not normalised", "γ per head 0.5–0.97", "M, signed (no softmax)",
      // captions
      "single-head attention", "causal", "not causal", "seed %s", "weights %s", "converted", "independent", "loaded",
      "designed", "scores QKᵀ/√d_k", "scores QKᵀ (unscaled)", "probabilities", "shared scale", "scale per head",
      "fixed scale 0–1", "scale locked at %s", "per head", "fixed 0–1", "locked %s",
      "rows: queries, columns: keys", "relative-position attention", "%d heads", "query cell (%d,%d)",
      "query token %d", "α per head (in the titles)", "padding keys", "no padding keys", "content + λ·position",
      "convolution as attention", "%dx%d kernel = %d heads", "max |MHSA − conv|", "interior", "border",
      "%d layers × %d heads", "%d K/V heads", "every head its own K/V", "one K/V head for all",
      "%d heads per K/V head", "K/V groups unknown (no config.json)", "%d tokens", "tokens %d–%d of %d", "panel l.h = layer l, head h",
      "%d attention layers: probabilities", "%d %s layers × %d heads: M, signed (no softmax)",
      // a generated grid, as the window describes it
      "%s pattern, %s cells", "noise pattern (seed %s), %s cells", "checkerboard", "gradient", "rings", "glyph",
      // compare A/B (compare.h)
      "A · head %d", "B · head %d · JS %s", "B − A · head %d · JS %s", "probability B − A", "A: %s", "B: %s",
      "A → B: %s", "A and B have the same settings", "one scale for A and B: %s",
      // windows, sinks and positions (SPEC "Variants after GQA")
      "sink", "window %d", "sink tokens: %d", "sink logits", "positions %s",
      // attention rollout and flow (rollout_figure.h)
      "attention (head mean)", "rollout", "flow (share)", "layer %d", "query %d «%s»",
      "rows: layers from 0, columns: input tokens", "rollout Ã_l = Â_l···Â_0, Â = 0.5·Ā + 0.5·I, rows renormalised",
      "flow: maximum flow, each row divided by its sum", "%s layers: |M| rows normalised (no softmax)",
      "share of the input token", "every query · layer %d", "rows: queries, columns: input tokens",
      // token sets (token_set.h)
      "Σ of %d queries", "mean of %d queries", "Σ of %d keys", "mean of %d keys", "Σ of %d query", "mean of %d query",
      "Σ of %d key", "mean of %d key",
      // the logit lens and the direct logit attribution (app/core/lens_export.h)
      "logit lens: top next token after each layer", "probability of the top token", "KL to the final distribution (nats)",
      "KL (nats)", "rank of the model's top-1 token (1 = the layer's top)", "log10 rank", "direct logit attribution of %s at position %d",
      "logit contribution", "other parts", "no heads", "logit %s = the sum of the parts", "before the soft-cap",
      "%s · position %d: %s",
      // long inputs: one head pooled (pooled_figure.h)
      "layer %d · head %d", "max-pooled %d×%d", "mean-pooled %d×%d", "exact cells",
      "%d tokens, computed per head on demand",
      // why a head attends (qk_figure.h)
      "layer %d · head %d · query %d «%s» → key %d «%s»",
      "score %s before the soft-cap, %s after it (drawn); the parts are attributed before the cap", "score %s = scale·q·k",
      "parts sum to %s (score %s)", "other (%d parts)"};
  return keys;
}

// ---- names and parsing ---------------------------------------------------------------------------
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string scientific(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2g", v);
  return buf;
}

}  // namespace

void parse_export_what(const std::string& text, ExportRequest& request) {
  const std::string t = lower(text);
  const std::string valid = " (valid: heads, head:N with N a head index from 0, relpos, conv, model, lens, attribution)";
  if (t == "heads") request.what = ExportWhat::heads;
  else if (t == "model") request.what = ExportWhat::model;
  else if (t == "relpos") request.what = ExportWhat::relpos;
  else if (t == "conv") request.what = ExportWhat::conv;
  else if (t.rfind("head:", 0) == 0) {
    const std::string digits = t.substr(5);
    require(!digits.empty() && digits.size() <= 6 &&
                std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }),
            "--what '" + text + "': the head index must be a whole number >= 0" + valid);
    request.what = ExportWhat::head;
    request.head = std::stoi(digits);
  } else {
    throw InputError("unknown --what '" + text + "'" + valid);
  }
}

ExportFormat parse_export_format(const std::string& text) {
  const std::string t = lower(text);
  for (ExportFormat f : {ExportFormat::png, ExportFormat::svg, ExportFormat::csv, ExportFormat::npy})
    if (t == to_string(f)) return f;
  throw InputError("unknown format '" + text + "' (valid: png, svg, csv, npy)");
}

void parse_token_range(const std::string& text, ExportRequest& request) {
  const size_t dash = text.find('-');
  auto whole = [](const std::string& d) {
    return !d.empty() && d.size() <= 7 && std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  const std::string first = dash == std::string::npos ? "" : text.substr(0, dash);
  const std::string last = dash == std::string::npos ? "" : text.substr(dash + 1);
  require(whole(first) && whole(last),
          "token range '" + text + "': give I-J, two token indices from 0 with I <= J (e.g. 2-9)");
  request.token_first = std::stoi(first);
  request.token_last = std::stoi(last);
  require(request.token_first <= request.token_last,
          "token range '" + text + "': the first token must not come after the last (e.g. 2-9)");
}

const char* to_string(ExportFormat format) {
  switch (format) {
    case ExportFormat::png: return "png";
    case ExportFormat::svg: return "svg";
    case ExportFormat::csv: return "csv";
    case ExportFormat::npy: return "npy";
  }
  return "png";
}

std::string to_string(const ExportRequest& r) {
  switch (r.what) {
    case ExportWhat::heads: return "heads";
    case ExportWhat::head: return "head:" + std::to_string(r.head);
    case ExportWhat::relpos: return "relpos";
    case ExportWhat::conv: return "conv";
    case ExportWhat::model: return "model";
  }
  return "heads";
}

ExportRequest export_request_for_view(const ViewSettings& view) {
  ExportRequest r;
  if (view.view == View::relpos1d || view.view == View::relpos2d) r.what = ExportWhat::relpos;
  else if (view.view == View::conv) r.what = ExportWhat::conv;
  r.colormap = parse_colormap(view.colormap);
  r.scores = view.show_scores;
  r.color_scale = color_scale_of(view);
  if (r.what == ExportWhat::heads) r.token_set = view.token_set;
  if (r.what == ExportWhat::conv || (r.scores && r.color_scale.mode == ScaleMode::fixed)) r.color_scale.mode = ScaleMode::shared;
  return r;
}

std::string scale_bar_title(const std::string& values, const ColorScale& scale, const FigureWords& w) {
  switch (scale.mode) {
    case ScaleMode::shared: return values;
    case ScaleMode::per_head: return values + " · " + w.word("per head");
    case ScaleMode::fixed: return values + " · " + w.word("fixed 0–1");
    case ScaleMode::locked: return values + " · " + w.format("locked %s", range_text(scale.locked).c_str());
  }
  return values;
}

// ---- validation ----------------------------------------------------------------------------------
namespace {

// The command line's flag of a token set, named in its errors.
std::string token_set_flag(const TokenSet& set) { return set.axis == TokenSetAxis::keys ? "--key-set" : "--query-set"; }

std::string kind_name(AttentionKind k, const FigureWords& w = {}) {
  switch (k) {
    case AttentionKind::single: return w.word("single-head attention");
    case AttentionKind::mha: return "MHA";
    case AttentionKind::mqa: return "MQA";
    case AttentionKind::gqa: return "GQA";
    case AttentionKind::mla: return "MLA";
    case AttentionKind::linear: return w.word("linear attention");
    case AttentionKind::retention: return w.word("retention");
    case AttentionKind::mamba2: return "Mamba-2";
    case AttentionKind::deltanet: return "DeltaNet";
    case AttentionKind::gated_deltanet: return "Gated DeltaNet";
  }
  return "attention";
}

// Differential attention's heads: probs holds the signed map A = P₁ − λ·P₂.
bool differential_heads(const Analysis& a) { return a.attention && !a.attention->result.probs_1.empty(); }
// Heads whose maps are signed (differential attention, or heads without a softmax and their matrices M).
bool signed_heads(const Analysis& a) { return a.attention && signed_maps(*a.attention); }
bool linear_heads(const Analysis& a) { return a.attention && a.attention->linear; }

// "MLA r_kv=16 · r_q=0 · d_R=8" or "differential GQA · λ=0.31" for the caption: what the kind alone does not say.
std::string variant_text(const Analysis& a, const FigureWords& w) {
  const ModelSettings& m = a.scene.model;
  if (!a.attention || !a.attention->source_note.empty()) return "";
  if (m.kind == AttentionKind::mla)
    return " · r_kv=" + std::to_string(m.kv_rank) + " · r_q=" + std::to_string(m.q_rank) + " · d_R=" + std::to_string(m.rope_dim);
  if (differential_heads(a)) return " · " + w.word("differential") + " · λ=" + detail::format_g(a.attention->result.lambda);
  if (m.kind == AttentionKind::linear) return " · " + w.word(m.linear_normalize ? "normalised" : "not normalised");
  if (m.kind == AttentionKind::retention)
    return m.decay > 0 ? " · γ=" + detail::format_g(m.decay) : " · " + w.word("γ per head 0.5–0.97");
  return "";
}

}  // namespace

void validate_export(const Analysis& a, const ExportRequest& r) {
  require(std::isfinite(r.scale) && r.scale >= min_export_scale && r.scale <= max_export_scale,
          "scale must be between 1 and 4, got " + detail::format_g(r.scale));
  require(r.what != ExportWhat::conv || r.color_scale.mode == ScaleMode::shared,
          std::string("the convolution figure has scales of its own (the input's, one for MHSA and the convolution, a "
                      "symmetric one for the difference): leave the scale mode shared, not ") + to_string(r.color_scale.mode));
  const bool signed_map = (r.what == ExportWhat::heads || r.what == ExportWhat::head) && signed_heads(a);
  validate_color_scale(r.color_scale, !r.scores, signed_map && !r.scores);
  switch (r.what) {
    case ExportWhat::heads:
    case ExportWhat::head: {
      require(a.attention != nullptr, "the input is a grid, which has no token attention heads: export relpos or "
                                      "conv, or give a sentence (--text)");
      require(!r.scores || !linear_heads(a),
              "heads without a softmax have no scores: they are drawn as their matrices M (compute writes them as "
              "matrix.npy): leave out --scores");
      require(!r.scores || !signed_map,
              "differential attention has two score maps per head (Q1K1 and Q2K2, in compute's scores.npy) and draws "
              "their signed difference A = P1 - lambda*P2: leave out --scores");
      require(!r.scores || a.attention->result.scores.size() == a.attention->result.probs.size(),
              "these heads hold probabilities only (attentions computed elsewhere keep no scores): leave out --scores");
      const int heads = int(a.attention->result.probs.size());
      if (r.what == ExportWhat::head)
        require(r.head >= 0 && r.head < heads,
                "head " + std::to_string(r.head) + " does not exist: this " + kind_name(a.scene.model.kind) +
                    " has " + std::to_string(heads) + (heads == 1 ? " head (0)" : " heads (0-" + std::to_string(heads - 1) + ")"));
      if (r.token_first >= 0 || r.token_last >= 0) {
        const int t = int(a.attention->labels.size());
        require(r.token_first >= 0 && r.token_first <= r.token_last && r.token_last < t,
                "token range " + std::to_string(r.token_first) + "-" + std::to_string(r.token_last) +
                    " does not fit this input of " + std::to_string(t) + " tokens: valid range 0.." + std::to_string(t - 1));
      }
      check_token_set(r.token_set, int(a.attention->labels.size()), token_set_flag(r.token_set));
      break;
    }
    case ExportWhat::relpos:
      require(!r.token_set.active(), token_set_flag(r.token_set) + " applies to --what heads or head:N");
      require(a.relpos != nullptr && !a.relpos->heads.empty(),
              "this analysis has no relative-position heads: use a grid (--grid/--pattern/--image) or the relpos1d "
              "view of a sentence");
      break;
    case ExportWhat::conv:
      require(a.conv != nullptr, "this analysis has no convolution comparison: use a grid input and the conv view");
      break;
    case ExportWhat::model:
      throw InputError("--what model shows every layer of a real model: give --checkpoint DIR or --attentions FILE");
  }
}

// ---- captions ------------------------------------------------------------------------------------
namespace {

std::string alpha_text(const std::vector<RelposHead>& heads, const FigureWords& w) {
  bool same = true;
  for (const auto& h : heads) same = same && h.alpha == heads.front().alpha;
  return same ? "α=" + detail::format_g(heads.front().alpha) : w.word("α per head (in the titles)");
}

// The grid's description in the figure's language: a generated pattern from the analysed scene's
// settings, as the window says it; an image's description (its file name and sizes) as the engine wrote it.
std::string grid_note(const Analysis& a, const std::string& engine_note, const FigureWords& w) {
  const InputSettings& in = a.scene.input;
  if (w.strings.empty() || in.source != InputSource::grid || !in.grid.image_path.empty()) return engine_note;
  const std::string size = std::to_string(in.grid.rows) + "×" + std::to_string(in.grid.cols);
  if (in.grid.pattern == "noise")
    return w.format("noise pattern (seed %s), %s cells", std::to_string(in.grid.seed).c_str(), size.c_str());
  return w.format("%s pattern, %s cells", w.word(in.grid.pattern).c_str(), size.c_str());
}

// "RoPE", "RoPE θ=500000 interleaved yarn×4", "ALiBi", "relpos".
std::string position_name(const ModelSettings& m) {
  switch (m.positions) {
    case PositionScheme::absolute: return "absolute";
    case PositionScheme::nope: return "NoPE";
    case PositionScheme::alibi: return "ALiBi";
    case PositionScheme::relpos: return "relpos";
    case PositionScheme::rope: break;
  }
  std::string s = "RoPE";
  if (m.rope_base != default_rope_base) s += " θ=" + detail::format_g(m.rope_base);
  if (m.rope_layout == RopeLayout::interleaved) s += " interleaved";
  if (m.rope_scaling != RopeScaling::none) s += std::string(" ") + to_string(m.rope_scaling) + "×" + detail::format_g(m.rope_factor);
  return s;
}

std::string delta_text(const RelposHead& h, int dims) {
  if (dims == 1) return "Δ=" + detail::format_g(h.delta[1]);
  return "Δ=(" + detail::format_g(h.delta[0]) + "," + detail::format_g(h.delta[1]) + ")";
}

}  // namespace

std::string export_caption(const Analysis& a, const ExportRequest& r) {
  const std::string sep = " · ";
  const FigureWords& w = r.words;
  std::string scale;
  switch (r.color_scale.mode) {
    case ScaleMode::shared: scale = w.word("shared scale"); break;
    case ScaleMode::per_head: scale = w.word("scale per head"); break;
    case ScaleMode::fixed: scale = w.word("fixed scale 0–1"); break;
    case ScaleMode::locked: scale = w.format("scale locked at %s", range_text(r.color_scale.locked).c_str()); break;
  }
  const std::string queries_keys = w.word("rows: queries, columns: keys");
  if (r.what == ExportWhat::heads || r.what == ExportWhat::head) {
    const ModelSettings& m = a.scene.model;
    const AttentionShape& s = a.attention->shape;
    // A token range: which of the input's tokens the panels show.
    std::string range = r.token_first < 0 ? std::string()
                                          : sep + w.format("tokens %d–%d of %d", r.token_first, r.token_last,
                                                           int(a.attention->labels.size()));
    // A token set: its strip's label and its tokens.
    if (r.token_set.active())
      range += sep + w.format(token_set_label_key(r.token_set), int(r.token_set.tokens.size())) + ": " + token_set_list(r.token_set);
    if (!a.attention->source_note.empty()) {  // a real model's layer: its own name, not seeded settings
      if (linear_heads(a))  // a checkpoint's Gated DeltaNet layer: its signed matrices, each head its own
        return a.attention->source_note + sep + w.word(map_value_word(*a.attention)) + sep + "H=" +
               std::to_string(s.heads) + sep + w.word("causal") + sep + w.word("M, signed (no softmax)") +
               (r.what == ExportWhat::heads ? sep + scale : std::string()) + sep + queries_keys + range;
      std::string c = a.attention->source_note + sep + kind_name(m.kind, w) + sep + "H=" + std::to_string(s.heads) + sep +
                      "G=" + std::to_string(s.groups) + sep + w.word(m.causal ? "causal" : "not causal") + sep +
                      w.word(r.scores ? "scores QKᵀ/√d_k" : "probabilities");
      // the layer's own sliding window, and gpt-oss's learned sinks (the first column)
      if (a.attention->window > 0) c += sep + w.format("window %d", a.attention->window);
      if (!a.attention->options.sink_logits.empty()) c += sep + w.word("sink logits");
      if (r.what == ExportWhat::heads) c += sep + scale;
      return c + sep + queries_keys + range;
    }
    std::string c = kind_name(m.kind, w) + variant_text(a, w) + sep + "H=" + std::to_string(s.heads) + sep +
                    "G=" + std::to_string(s.groups) + sep + "d_model=" + std::to_string(s.d_model) + sep +
                    w.word(m.causal || m.window > 0 ? "causal" : "not causal") + sep + w.format("seed %s", std::to_string(m.seed).c_str()) + sep +
                    w.format("weights %s", w.word(to_string(m.weights)).c_str()) + sep +
                    w.word(r.scores ? (m.scale_scores ? "scores QKᵀ/√d_k" : "scores QKᵀ (unscaled)")
                                    : differential_heads(a) ? "A = P₁ − λ·P₂ (signed)"
                                    : linear_heads(a)       ? "M, signed (no softmax)"
                                                            : "probabilities");
    if (m.window > 0) c += sep + w.format("window %d", m.window);
    if (m.sinks > 0) c += sep + w.format("sink tokens: %d", m.sinks);
    if (m.sink_logits) c += sep + w.word("sink logits");
    if (m.positions != PositionScheme::absolute) c += sep + w.format("positions %s", position_name(m).c_str());
    if (r.what == ExportWhat::heads) c += sep + scale;
    return c + sep + queries_keys + range;
  }
  if (r.what == ExportWhat::relpos) {
    const RelposAnalysis& rp = *a.relpos;
    std::string where = rp.dims == 2 ? w.format("query cell (%d,%d)", rp.query_row, rp.query_col)
                                     : w.format("query token %d", rp.query_col);
    std::string c = w.word("relative-position attention") + sep + w.format("%d heads", int(rp.heads.size())) + sep +
                    (rp.dims == 1 ? w.format("%d tokens", rp.cols) : grid_note(a, rp.input_note, w)) + sep + where + sep + alpha_text(rp.heads, w) + sep +
                    w.word(rp.geometry.pad_rows > 0 || rp.geometry.pad_cols > 0 ? "padding keys" : "no padding keys");
    if (rp.mixed) c += sep + w.word("content + λ·position") + ", λ=" + detail::format_g(rp.lambda);
    c += sep + w.word("probabilities") + sep + scale;
    return c;
  }
  const ConvAnalysis& cv = *a.conv;
  std::string c = w.word("convolution as attention") + sep + cv.kernel.name + " " +
                  w.format("%dx%d kernel = %d heads", cv.kernel.size, cv.kernel.size, int(cv.heads.size())) + sep +
                  "α=" + detail::format_g(cv.alpha) + sep + grid_note(a, cv.input_note, w) + sep + w.word("max |MHSA − conv|");
  if (cv.interior_cells > 0) c += " " + w.word("interior") + " " + scientific(cv.max_abs_interior) + ",";
  if (cv.border_cells > 0) c += " " + w.word("border") + " " + scientific(cv.max_abs_border);
  return c + sep + w.word(cv.pad_keys ? "padding keys" : "no padding keys");
}

// ---- figures -------------------------------------------------------------------------------------
namespace {

ValueRange range_of(const float* values, size_t count, Colormap map) {
  return map == Colormap::diverging ? symmetric_range(values, count) : auto_range(values, count);
}

}  // namespace

void assign_colorbars(FigureSpec& f, const ColorScale& scale, Colormap map, const std::string& title, bool show_masked,
                      const FigureWords& w, ValueRange (*adjust)(ValueRange), size_t first_panel) {
  std::vector<ValueRange> own;
  for (size_t i = first_panel; i < f.panels.size(); ++i)
    own.push_back(range_of(f.panels[i].values.data(), f.panels[i].values.size(), map));
  std::vector<ValueRange> ranges = scale_ranges(scale, own);
  const bool from_data = scale.mode == ScaleMode::shared || scale.mode == ScaleMode::per_head;
  if (adjust && from_data)
    for (ValueRange& r : ranges) r = adjust(r);
  const std::string bar_title = scale_bar_title(title, scale, w);
  const bool one_each = scale.mode == ScaleMode::per_head;
  for (size_t i = first_panel; i < f.panels.size(); ++i) {
    if (one_each || i == first_panel) f.colorbars.push_back({ranges[i - first_panel], map, bar_title, show_masked, w.word("masked")});
    f.panels[i].colorbar = int(f.colorbars.size()) - 1;
  }
}

namespace {

// One more column after panel `p`'s columns: `column[i]` ends row i (a token set's reduced keys).
void append_column(PanelSpec& p, const std::vector<float>& column) {
  std::vector<float> with_column;
  with_column.reserve(size_t(p.rows) * size_t(p.cols + 1));
  for (int i = 0; i < p.rows; ++i) {
    with_column.insert(with_column.end(), p.values.begin() + i * p.cols, p.values.begin() + (i + 1) * p.cols);
    with_column.push_back(column[size_t(i)]);
  }
  p.values = std::move(with_column);
  p.cols += 1;
}

std::vector<std::string> index_labels(int n) {
  std::vector<std::string> v(size_t(std::max(n, 0)));
  for (int i = 0; i < n; ++i) v[size_t(i)] = std::to_string(i);
  return v;
}

ValueRange unite(ValueRange a, ValueRange b) { return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)}; }

FigureSpec heads_figure(const Analysis& a, const ExportRequest& r) {
  const AttentionAnalysis& att = *a.attention;
  const Tensor3& values = r.scores ? att.result.scores : att.result.probs;
  const int heads = int(values.size()), groups = att.shape.groups;
  const bool causal = a.scene.model.causal;
  const bool masking = causal || att.window > 0;  // a window implies the causal mask
  // Learned sinks: a first column "sink" with the sink's share of each row (its logit s_h in scores).
  const bool sink_column = r.sink_column && att.result.sink_share.size() > 0 && !att.options.sink_logits.empty();
  const bool designed = a.scene.model.weights == WeightSource::designed &&
                        a.scene.model.designed.size() == size_t(heads);
  FigureSpec f;
  const int first = r.what == ExportWhat::head ? r.head : 0;
  const int last = r.what == ExportWhat::head ? r.head : heads - 1;
  for (int h = first; h <= last; ++h) {
    const Mat& m = values[size_t(h)];
    const int g = kv_group_of_head(h, heads, groups);
    PanelSpec p;
    p.title = r.words.format("head %d · kv group %d", h, g);
    if (designed) p.title += " · " + a.scene.model.designed[size_t(h)];
    p.rows = int(m.rows());
    p.cols = int(m.cols());
    p.values.assign(m.data(), m.data() + m.size());
    // Masked keys (after the query, or outside a sliding window but for its sink keys) show as masked,
    // whether the view is scores (−inf) or probs (0).
    if (masking)
      for (int i = 0; i < p.rows; ++i)
        for (int j = 0; j < p.cols; ++j)
          if (j > i || (att.window > 0 && j <= i - att.window && j >= att.sinks))
            p.values[size_t(i) * size_t(p.cols) + size_t(j)] = -INFINITY;
    p.row_labels = att.labels;
    p.col_labels = att.labels;
    if (sink_column) {
      std::vector<float> with_sink;
      with_sink.reserve(size_t(p.rows) * size_t(p.cols + 1));
      for (int i = 0; i < p.rows; ++i) {
        with_sink.push_back(r.scores ? float(att.options.sink_logits[size_t(h)]) : att.result.sink_share(h, i));
        with_sink.insert(with_sink.end(), p.values.begin() + i * p.cols, p.values.begin() + (i + 1) * p.cols);
      }
      p.values = std::move(with_sink);
      p.cols += 1;
      p.col_labels.insert(p.col_labels.begin(), r.words.word("sink"));
    }
    // A token set: the selected queries' reduced row under the rows (its sink cell, the same reduction of the
    // sink's shares), or the selected keys' reduced column after the columns.
    if (r.token_set.active()) {
      const std::vector<float> strip = reduce_token_set(m, r.token_set);
      const std::string label = r.words.format(token_set_label_key(r.token_set), int(r.token_set.tokens.size()));
      if (r.token_set.axis == TokenSetAxis::queries) {
        if (sink_column) {
          Mat sinks(p.rows, 1);
          for (int i = 0; i < p.rows; ++i) sinks(i, 0) = r.scores ? float(att.options.sink_logits[size_t(h)]) : att.result.sink_share(h, i);
          p.values.push_back(reduce_token_set(sinks, r.token_set)[0]);
        }
        p.values.insert(p.values.end(), strip.begin(), strip.end());
        p.rows += 1;
        p.row_labels.push_back(label);
      } else {
        append_column(p, strip);
        p.col_labels.push_back(label);
      }
    }
    p.frame = kv_group_color(g);
    f.panels.push_back(std::move(p));
  }
  ColorScale scale = r.color_scale;  // one head: its own range is the shared one, drawn on one bar
  if (r.what == ExportWhat::head && scale.mode == ScaleMode::per_head) scale.mode = ScaleMode::shared;
  // Differential attention's signed map on the diverging colormap, over a range symmetric about 0 (white = 0).
  const bool signed_map = signed_heads(a) && !r.scores;
  assign_colorbars(f, scale, signed_map ? Colormap::diverging : r.colormap,
                   r.words.word(r.scores ? "score" : map_value_word(*a.attention)), masking, r.words);
  // A token range: the panels keep those queries and keys only; the bars keep the whole input's ranges.
  // The sink column, when there is one, stays first; a token set's row or column stays last.
  if (r.token_first >= 0) {
    const int lo = r.token_first, n = r.token_last - r.token_first + 1, extra = sink_column ? 1 : 0;
    const int tokens = int(att.labels.size());
    std::vector<int> rows, cols;  // the kept rows and columns of each panel
    for (int i = 0; i < n; ++i) rows.push_back(lo + i);
    if (extra) cols.push_back(0);
    for (int j = 0; j < n; ++j) cols.push_back(extra + lo + j);
    if (r.token_set.active() && r.token_set.axis == TokenSetAxis::queries) rows.push_back(tokens);
    if (r.token_set.active() && r.token_set.axis == TokenSetAxis::keys) cols.push_back(extra + tokens);
    for (PanelSpec& p : f.panels) {
      std::vector<float> kept;
      kept.reserve(rows.size() * cols.size());
      for (const int i : rows)
        for (const int j : cols) kept.push_back(p.values[size_t(i) * size_t(p.cols) + size_t(j)]);
      std::vector<std::string> row_labels, col_labels;
      for (const int i : rows) row_labels.push_back(p.row_labels[size_t(i)]);
      for (const int j : cols) col_labels.push_back(p.col_labels[size_t(j)]);
      p.values = std::move(kept);
      p.rows = int(rows.size());
      p.cols = int(cols.size());
      p.row_labels = std::move(row_labels);
      p.col_labels = std::move(col_labels);
    }
  }
  return f;
}

FigureSpec relpos_figure(const Analysis& a, const ExportRequest& r) {
  const RelposAnalysis& rp = *a.relpos;
  const int heads = int(rp.heads.size());
  const bool full_1d = rp.dims == 1 && !rp.probs.empty();
  FigureSpec f;
  for (int h = 0; h < heads; ++h) {
    const RelposHead& head = rp.heads[size_t(h)];
    PanelSpec p;
    p.title = r.words.format("head %d", h) + " · α=" + detail::format_g(head.alpha) + " · " + delta_text(head, rp.dims);
    if (full_1d) {  // the sentence's T × T map, the query's own cell marked
      const Mat& m = rp.probs[size_t(h)];
      p.rows = int(m.rows());
      p.cols = int(m.cols());
      p.values.assign(m.data(), m.data() + m.size());
      p.row_labels = rp.labels;
      p.col_labels = rp.labels;
      p.marked_row = p.marked_col = rp.query_col;
    } else {  // the query's map: [R, C] on a grid, [1, T] on a long sentence
      p.rows = rp.rows;
      p.cols = rp.cols;
      p.values.resize(size_t(rp.probs_query.cols()));
      for (Eigen::Index k = 0; k < rp.probs_query.cols(); ++k) p.values[size_t(k)] = rp.probs_query(h, k);
      p.row_labels = rp.dims == 2 ? index_labels(rp.rows) : std::vector<std::string>{rp.labels[size_t(rp.query_col)]};
      p.col_labels = rp.dims == 2 ? index_labels(rp.cols) : rp.labels;
      p.marked_row = rp.dims == 2 ? rp.query_row : 0;
      p.marked_col = rp.query_col;
    }
    f.panels.push_back(std::move(p));
  }
  // Heads whose offsets are the K×K kernel positions in order are laid out as that kernel (K per row).
  for (int kside : {3, 5}) {
    bool kernel_order = rp.dims == 2 && heads == kside * kside;
    for (int h = 0; kernel_order && h < heads; ++h)
      kernel_order = rp.heads[size_t(h)].delta[0] == h / kside - kside / 2 && rp.heads[size_t(h)].delta[1] == h % kside - kside / 2;
    if (kernel_order) f.grid_columns = kside;
  }
  PanelSpec combined;
  combined.title = r.words.word("combined (mean of the heads)");
  combined.rows = int(rp.combined.rows());
  combined.cols = int(rp.combined.cols());
  combined.values.assign(rp.combined.data(), rp.combined.data() + rp.combined.size());
  combined.row_labels = rp.dims == 2 ? index_labels(combined.rows) : std::vector<std::string>{rp.labels[size_t(rp.query_col)]};
  combined.col_labels = rp.dims == 2 ? index_labels(combined.cols) : rp.labels;
  combined.marked_row = rp.dims == 2 ? rp.query_row : 0;
  combined.marked_col = rp.query_col;
  f.panels.push_back(std::move(combined));
  // Probabilities start at 0 whatever the colormap, so the scale reads as "share of the attention".
  Colormap map = r.colormap;
  assign_colorbars(f, r.color_scale, map, r.words.word("probability"), false, r.words,
                   [](ValueRange range) { return ValueRange{std::min(0.0f, range.lo), range.hi}; });
  return f;
}

FigureSpec conv_figure(const Analysis& a, const FigureWords& w) {
  const ConvAnalysis& cv = *a.conv;
  FigureSpec f;
  auto panel = [&](const std::string& title, const Mat& m, int bar) {
    PanelSpec p;
    p.title = title;
    p.rows = int(m.rows());
    p.cols = int(m.cols());
    p.values.assign(m.data(), m.data() + m.size());
    p.row_labels = index_labels(p.rows);
    p.col_labels = index_labels(p.cols);
    p.colorbar = bar;
    f.panels.push_back(std::move(p));
  };
  panel(w.word("input"), cv.input, 0);
  panel(w.format("MHSA (%d heads, α=%s)", int(cv.heads.size()), detail::format_g(cv.alpha).c_str()), cv.mhsa, 1);
  panel(w.format("true %dx%d convolution", cv.kernel.size, cv.kernel.size), cv.conv, 1);
  panel(w.word("difference MHSA − conv"), cv.difference, 2);
  // Gray images: the input on its own scale (a kernel like sobel_x leaves [0, 1] far behind), MHSA and
  // the convolution on one shared scale so they compare cell by cell, and the difference on a
  // symmetric diverging scale (white = no error).
  f.colorbars.push_back({auto_range(cv.input.data(), size_t(cv.input.size())), Colormap::grayscale, w.word("input"), false});
  const ValueRange outputs = unite(auto_range(cv.mhsa.data(), size_t(cv.mhsa.size())),
                                   auto_range(cv.conv.data(), size_t(cv.conv.size())));
  f.colorbars.push_back({outputs, Colormap::grayscale, w.word("output"), false});
  f.colorbars.push_back({symmetric_range(cv.difference.data(), size_t(cv.difference.size())), Colormap::diverging,
                         w.word("difference"), false});
  f.grid_columns = 4;
  return f;
}

}  // namespace

FigureSpec export_figure(const Analysis& a, const ExportRequest& r) {
  validate_export(a, r);
  FigureSpec f;
  switch (r.what) {
    case ExportWhat::heads:
    case ExportWhat::head: f = heads_figure(a, r); break;
    case ExportWhat::relpos: f = relpos_figure(a, r); break;
    case ExportWhat::conv: f = conv_figure(a, r.words); break;
    case ExportWhat::model: break;  // validate_export refused it: the model view needs every layer
  }
  if (r.caption) f.caption = export_caption(a, r);
  return f;
}

// ---- arrays and CSV ------------------------------------------------------------------------------
ExportArray export_array(const Analysis& a, const ExportRequest& r) {
  validate_export(a, r);
  ExportArray out;
  auto append = [&out](const float* data, int64_t count) { out.values.insert(out.values.end(), data, data + count); };
  switch (r.what) {
    case ExportWhat::heads:
    case ExportWhat::head: {
      const AttentionAnalysis& att = *a.attention;
      const Tensor3& values = r.scores ? att.result.scores : att.result.probs;
      const int heads = int(values.size());
      const int64_t all = values[0].rows();
      // A token range keeps those queries and keys (row-major blocks of t × t).
      const int64_t lo = r.token_first >= 0 ? r.token_first : 0;
      const int64_t t = r.token_first >= 0 ? r.token_last - r.token_first + 1 : all;
      out.row_labels.assign(att.labels.begin() + lo, att.labels.begin() + lo + t);
      out.col_labels = out.row_labels;
      // A token set: its reduced row after the rows (queries) or its reduced column after the columns (keys).
      const TokenSetAxis set = r.token_set.active() ? r.token_set.axis : TokenSetAxis::none;
      const std::string set_label = set == TokenSetAxis::none ? std::string()
                                                              : r.words.format(token_set_label_key(r.token_set),
                                                                               int(r.token_set.tokens.size())) +
                                                                    " (" + token_set_list(r.token_set, r.token_set.tokens.size()) + ")";
      if (set == TokenSetAxis::queries) out.row_labels.push_back(set_label);
      if (set == TokenSetAxis::keys) out.col_labels.push_back(set_label);
      const int64_t rows = t + (set == TokenSetAxis::queries ? 1 : 0), cols = t + (set == TokenSetAxis::keys ? 1 : 0);
      auto append_head = [&](int h) {
        const Mat& m = values[size_t(h)];
        const std::vector<float> strip = reduce_token_set(m, r.token_set);
        for (int64_t i = lo; i < lo + t; ++i) {
          append(m.data() + i * all + lo, t);
          if (set == TokenSetAxis::keys) out.values.push_back(strip[size_t(i)]);
        }
        if (set == TokenSetAxis::queries) append(strip.data() + lo, t);
      };
      if (r.what == ExportWhat::head) {
        out.shape = {rows, cols};
        append_head(r.head);
      } else {
        out.shape = {heads, rows, cols};
        for (int h = 0; h < heads; ++h) {
          append_head(h);
          out.block_names.push_back("head " + std::to_string(h) + " (kv group " +
                                    std::to_string(kv_group_of_head(h, heads, att.shape.groups)) + ")");
        }
      }
      break;
    }
    case ExportWhat::relpos: {
      const RelposAnalysis& rp = *a.relpos;
      const int heads = int(rp.heads.size());
      for (int h = 0; h < heads; ++h)
        out.block_names.push_back("head " + std::to_string(h) + " (α=" + detail::format_g(rp.heads[size_t(h)].alpha) + ", " +
                                  delta_text(rp.heads[size_t(h)], rp.dims) + ")");
      if (rp.dims == 1 && !rp.probs.empty()) {
        out.shape = {heads, rp.cols, rp.cols};
        for (const Mat& m : rp.probs) append(m.data(), m.size());
        out.row_labels = out.col_labels = rp.labels;
      } else {
        out.shape = rp.dims == 2 ? std::vector<int64_t>{heads, rp.rows, rp.cols} : std::vector<int64_t>{heads, rp.cols};
        for (int h = 0; h < heads; ++h)
          for (Eigen::Index k = 0; k < rp.probs_query.cols(); ++k) out.values.push_back(rp.probs_query(h, k));
        out.row_labels = rp.dims == 2 ? index_labels(rp.rows) : out.block_names;
        out.col_labels = rp.dims == 2 ? index_labels(rp.cols) : rp.labels;
        if (rp.dims == 1) out.block_names.clear();  // [H, T]: one row per head
      }
      break;
    }
    case ExportWhat::conv: {
      const ConvAnalysis& cv = *a.conv;
      out.shape = {4, cv.rows, cv.cols};
      for (const Mat* m : {&cv.input, &cv.mhsa, &cv.conv, &cv.difference}) append(m->data(), m->size());
      out.block_names = {"input", "mhsa", "conv", "difference"};
      out.row_labels = index_labels(cv.rows);
      out.col_labels = index_labels(cv.cols);
      break;
    }
    case ExportWhat::model: break;  // validate_export refused it: the model view needs every layer
  }
  return out;
}

namespace {

std::string csv_field(const std::string& s) {
  const bool quote = s.empty() || s.find_first_of(",\"\r\n") != std::string::npos || s.front() == ' ' ||
                     s.back() == ' ';
  if (!quote) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string csv_number(float v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", double(v));
  return buf;
}

}  // namespace

std::string export_csv(const ExportArray& array) {
  require(array.shape.size() == 2 || array.shape.size() == 3, "CSV export needs a 2D or 3D array");
  const bool blocks = array.shape.size() == 3;
  const int64_t n_blocks = blocks ? array.shape[0] : 1;
  const int64_t rows = array.shape[array.shape.size() - 2], cols = array.shape.back();
  std::string out = blocks ? "block,row" : "row";
  for (int64_t c = 0; c < cols; ++c) out += "," + csv_field(array.col_labels[size_t(c)]);
  out += "\n";
  size_t i = 0;
  for (int64_t b = 0; b < n_blocks; ++b)
    for (int64_t r = 0; r < rows; ++r) {
      if (blocks) out += csv_field(array.block_names[size_t(b)]) + ",";
      out += csv_field(array.row_labels[size_t(r)]);
      for (int64_t c = 0; c < cols; ++c) out += "," + csv_number(array.values[i++]);
      out += "\n";
    }
  return out;
}

// ---- rendering and writing -----------------------------------------------------------------------
void encode_figure(ExportedFile& out, FigureSpec figure, ExportFormat format, float scale, const TextRasterizer& text) {
  out.figure = std::move(figure);
  out.layout = layout_figure(*out.figure, scale, text);
  if (format == ExportFormat::png) {
    out.image = render_figure(*out.figure, *out.layout, text);
    out.bytes = encode_png(*out.image);
  } else {
    out.bytes = render_svg(*out.figure, *out.layout, text);
  }
}

ExportedFile encode_export(const ExportRequest& r, const std::function<ExportArray()>& array,
                           const std::function<FigureSpec()>& figure, const TextRasterizer& text) {
  ExportedFile out;
  if (r.format == ExportFormat::csv || r.format == ExportFormat::npy) {
    const ExportArray values = array();
    out.shape = values.shape;
    out.bytes = r.format == ExportFormat::csv ? export_csv(values) : serialize_npy(values.values.data(), values.shape);
    return out;
  }
  encode_figure(out, figure(), r.format, r.scale, text);
  return out;
}

ExportedFile render_export(const Analysis& a, const ExportRequest& r, const TextRasterizer& text) {
  validate_export(a, r);
  return encode_export(r, [&] { return export_array(a, r); }, [&] { return export_figure(a, r); }, text);
}

void check_export_path(const std::filesystem::path& path, ExportFormat format) {
  namespace fs = std::filesystem;
  std::error_code ec;
  require(!path.empty(), "no output file given (--out FILE)");
  require(!fs::is_directory(path, ec), "--out '" + path.string() + "' is a folder; give a file name, e.g. '" +
                                           (path / ("heads." + std::string(to_string(format)))).string() + "'");
  require(path.has_filename(), "--out '" + path.string() + "' names no file");
  const fs::path parent = path.has_parent_path() ? path.parent_path() : fs::path(".");
  require(fs::is_directory(parent, ec), "cannot write '" + path.string() + "': folder '" + parent.string() +
                                            "' does not exist");
  const std::string ext = lower(path.extension().string());
  for (ExportFormat f : {ExportFormat::png, ExportFormat::svg, ExportFormat::csv, ExportFormat::npy})
    require(ext != "." + std::string(to_string(f)) || f == format,
            "--out '" + path.string() + "' ends in " + ext + " but the format is " + to_string(format) +
                " (change --format or the file name)");
}

ExportedFile write_export(const std::filesystem::path& path, ExportFormat format,
                          const std::function<ExportedFile()>& render) {
  check_export_path(path, format);
  ExportedFile out = render();
  write_file_atomic(path, out.bytes);
  return out;
}

ExportedFile export_to_file(const Analysis& a, const ExportRequest& r, const std::filesystem::path& path,
                            const TextRasterizer& text) {
  return write_export(path, r.format, [&] { return render_export(a, r, text); });
}

std::string default_export_file_name(const ExportRequest& r, const std::string& stamp) {
  std::string what = to_string(r);
  std::replace(what.begin(), what.end(), ':', '-');
  return "attnscope-" + what + "-" + stamp + "." + to_string(r.format);
}

// ---- the model view ------------------------------------------------------------------------------
std::string model_view_caption(const model::AttentionStack& s, const FigureWords& w) {
  const std::string sep = " · ";
  const int per_group = s.heads / std::max(s.kv_heads, 1);
  std::string groups = std::string(grouping_name(s.heads, s.kv_heads)) + ", " +
                       (s.kv_heads == s.heads ? w.word("every head its own K/V")
                        : s.kv_heads == 1     ? w.word("one K/V head for all")
                                              : w.format("%d heads per K/V head", per_group));
  if (!s.groups_from_config && s.kv_heads == s.heads) groups = w.word("K/V groups unknown (no config.json)");
  std::string values = w.word("probabilities");
  if (s.has_linear_layers()) {  // Qwen3-Next: which layers are which, and that theirs are signed
    std::string kind;
    int linear = 0, linear_heads = 0;
    for (int l = 0; l < s.layers; ++l)
      if (s.linear_layer(l)) kind = s.layer_kind[size_t(l)], ++linear, linear_heads = s.layer_heads(l);
    values = w.format("%d attention layers: probabilities", s.layers - linear) + sep +
             w.format("%d %s layers × %d heads: M, signed (no softmax)", linear, kind.c_str(), linear_heads);
  }
  return s.source + sep + w.format("%d layers × %d heads", s.layers, s.heads) + sep +
         w.format("%d K/V heads", s.kv_heads) + " (" + groups + ")" + sep + w.format("%d tokens", s.tokens) + sep +
         w.word(s.causal ? "causal" : "not causal") + sep + values + sep + w.word("panel l.h = layer l, head h");
}

void check_model_view_stack(const model::AttentionStack& s) {
  require(s.layers >= 1 && s.heads >= 1 && s.tokens >= 1 &&
              s.attentions.size() == size_t(s.layers) * size_t(s.heads) * size_t(s.tokens) * size_t(s.tokens),
          "the model view needs attentions [L, H, T, T]");
  require(s.kv_heads >= 1 && s.heads % s.kv_heads == 0, "the model view needs K/V heads that divide the heads");
  require(s.layer_kind.empty() || (s.layer_kind.size() == size_t(s.layers) && s.linear_maps.size() == size_t(s.layers)),
          "the model view needs one kind and one list of matrices per layer");
  const size_t cells = size_t(s.tokens) * size_t(s.tokens);
  for (int l = 0; l < s.layers; ++l)
    require(!s.linear_layer(l) || (s.linear_maps[size_t(l)].size() % cells == 0 && !s.linear_maps[size_t(l)].empty()),
            "layer " + std::to_string(l) + "'s matrices are not [H, T, T]");
}

namespace {
// A token set's reduced row under panel `p` (queries) or column after it (keys), as heads_figure adds it; `m`
// the panel's unmasked values.
void add_token_set_strip(PanelSpec& p, const Mat& m, const TokenSet& set) {
  const std::vector<float> strip = reduce_token_set(m, set);
  if (set.axis == TokenSetAxis::queries) {
    p.values.insert(p.values.end(), strip.begin(), strip.end());
    p.rows += 1;
    return;
  }
  append_column(p, strip);
}
}  // namespace

int model_view_matrix_side(int columns) { return std::max(48, 1400 / std::max(columns, 1)); }

std::string model_view_panel_title(int layer, int head, int heads, int kv_heads) {
  std::string title = std::to_string(layer) + "." + std::to_string(head);
  // Past the palette two groups share a frame colour: the title names the group.
  if (!kv_groups_have_own_colors(kv_heads)) title += " · g" + std::to_string(kv_group_of_head(head, heads, kv_heads));
  return title;
}

FigureSpec model_view_figure(const model::AttentionStack& s, const ExportRequest& r) {
  check_model_view_stack(s);
  if (r.token_set.active()) check_token_set(r.token_set, s.tokens, token_set_flag(r.token_set));
  // Softmax layers' probabilities and linear layers' signed matrices get a colour bar each: made on two
  // figures of their own panels (assign_colorbars), then laid out in the grid, row l = layer l; a layer with
  // fewer heads than the widest leaves its last places blank.
  FigureSpec f, soft, linear;
  const int columns = s.most_heads();
  f.grid_columns = columns;
  f.matrix_side = model_view_matrix_side(columns);
  const size_t cells = size_t(s.tokens) * size_t(s.tokens);
  std::vector<std::pair<bool, size_t>> place;  // per grid place: (linear, index in its figure); blank: (false, npos)
  for (int l = 0; l < s.layers; ++l) {
    const bool lin = s.linear_layer(l);
    const int heads = s.layer_heads(l);
    for (int h = 0; h < columns; ++h) {
      if (h >= heads) {
        place.emplace_back(false, std::string::npos);
        continue;
      }
      PanelSpec p;
      p.rows = p.cols = s.tokens;
      const float* a = lin ? s.linear_maps[size_t(l)].data() + size_t(h) * cells
                           : s.attentions.data() + (size_t(l) * size_t(s.heads) + size_t(h)) * cells;
      p.values.assign(a, a + cells);
      // masked keys (after the query, or outside a sliding window) in the masked colour, as every heads
      // figure shows them; a linear layer is causal by nature
      const int window = s.layer_window.empty() || lin ? 0 : s.layer_window[size_t(l)];
      if (s.causal || lin)
        for (int i = 0; i < p.rows; ++i)
          for (int j = 0; j < p.cols; ++j)
            if (j > i || (window > 0 && j <= i - window)) p.values[size_t(i) * size_t(p.cols) + size_t(j)] = -INFINITY;
      if (r.token_set.active()) add_token_set_strip(p, Eigen::Map<const Mat>(a, s.tokens, s.tokens), r.token_set);
      if (lin) {  // each head its own: no K/V group frame
        p.title = std::to_string(l) + "." + std::to_string(h);
        linear.panels.push_back(std::move(p));
        place.emplace_back(true, linear.panels.size() - 1);
      } else {
        p.title = model_view_panel_title(l, h, s.heads, s.kv_heads);
        p.frame = kv_group_color(kv_group_of_head(h, s.heads, s.kv_heads));
        soft.panels.push_back(std::move(p));
        place.emplace_back(false, soft.panels.size() - 1);
      }
    }
  }
  require(r.color_scale.mode != ScaleMode::per_head,
          "the model view has one colour bar for all its thumbnails (valid scale modes here: shared, fixed, locked)");
  validate_color_scale(r.color_scale, true);
  if (!soft.panels.empty()) assign_colorbars(soft, r.color_scale, r.colormap, r.words.word("probability"), s.causal, r.words);
  std::string kind;
  for (int l = 0; l < s.layers && kind.empty(); ++l)
    if (s.linear_layer(l)) kind = s.layer_kind[size_t(l)];
  // The signed matrices: the diverging colormap over a range symmetric about 0 (white = 0), shared (a fixed
  // 0–1 or locked range is the probabilities').
  if (!linear.panels.empty())
    assign_colorbars(linear, ColorScale{}, Colormap::diverging, r.words.word(kind + " weight"), true, r.words);
  for (const ColorBarSpec& bar : soft.colorbars) f.colorbars.push_back(bar);
  for (const ColorBarSpec& bar : linear.colorbars) f.colorbars.push_back(bar);
  const int linear_bar = int(soft.colorbars.size());
  for (const auto& [lin, index] : place) {
    if (index == std::string::npos) {
      PanelSpec blank;
      blank.blank = true;
      blank.rows = blank.cols = s.tokens;
      if (r.token_set.active()) (r.token_set.axis == TokenSetAxis::queries ? blank.rows : blank.cols) += 1;
      f.panels.push_back(std::move(blank));
      continue;
    }
    PanelSpec p = std::move(lin ? linear.panels[index] : soft.panels[index]);
    if (lin) p.colorbar = linear_bar;
    f.panels.push_back(std::move(p));
  }
  if (r.caption) {
    f.caption = model_view_caption(s, r.words);
    if (r.token_set.active())  // the strip under (or right of) every thumbnail, as the heads figure's caption names it
      f.caption += " · " + r.words.format(token_set_label_key(r.token_set), int(r.token_set.tokens.size())) + ": " +
                   token_set_list(r.token_set);
  }
  return f;
}

ExportedFile export_model_view(const model::AttentionStack& s, const ExportRequest& r, const std::filesystem::path& path,
                               const TextRasterizer& text) {
  require(std::isfinite(r.scale) && r.scale >= min_export_scale && r.scale <= max_export_scale,
          "scale must be between 1 and 4, got " + detail::format_g(r.scale));
  require(r.what != ExportWhat::conv || r.color_scale.mode == ScaleMode::shared,
          std::string("the convolution figure has scales of its own (the input's, one for MHSA and the convolution, a "
                      "symmetric one for the difference): leave the scale mode shared, not ") + to_string(r.color_scale.mode));
  validate_color_scale(r.color_scale, !r.scores);
  require(r.format != ExportFormat::csv, "--what model has no CSV (L·H blocks in one table): use --format npy for "
                                         "the attentions [L, H, T, T], or --what heads --layer N --format csv");
  require(!r.scores, "--what model shows probabilities (the layers' scores are not kept): leave out --scores");
  require(r.format != ExportFormat::npy || !s.has_linear_layers(),
          "--what model --format npy writes probabilities [L, H, T, T], and this model's " +
              (s.layer_kind.empty() ? std::string() : *std::find_if(s.layer_kind.begin(), s.layer_kind.end(),
                                                                    [](const std::string& k) { return !k.empty(); })) +
              " layers have signed matrices instead: `attnscope compute --checkpoint` writes both (attentions.npy and "
              "linear_maps.npy), or export PNG/SVG");
  check_export_path(path, r.format);
  ExportedFile out;
  if (r.format == ExportFormat::npy && r.token_set.active()) {
    // [L, H, T+1, T] or [L, H, T, T+1]: each head's block with the set's row or column, as --what heads writes it
    check_token_set(r.token_set, s.tokens, token_set_flag(r.token_set));
    const bool queries = r.token_set.axis == TokenSetAxis::queries;
    out.shape = {s.layers, s.heads, s.tokens + (queries ? 1 : 0), s.tokens + (queries ? 0 : 1)};
    std::vector<float> values;
    values.reserve(size_t(s.layers) * size_t(s.heads) * size_t(out.shape[2]) * size_t(out.shape[3]));
    for (int l = 0; l < s.layers; ++l)
      for (int h = 0; h < s.heads; ++h) {
        const float* a = s.attentions.data() + (size_t(l) * size_t(s.heads) + size_t(h)) * size_t(s.tokens) * size_t(s.tokens);
        PanelSpec p;
        p.rows = p.cols = s.tokens;
        p.values.assign(a, a + size_t(s.tokens) * size_t(s.tokens));
        add_token_set_strip(p, Eigen::Map<const Mat>(a, s.tokens, s.tokens), r.token_set);
        values.insert(values.end(), p.values.begin(), p.values.end());
      }
    out.bytes = serialize_npy(values.data(), out.shape);
  } else if (r.format == ExportFormat::npy) {
    out.shape = {s.layers, s.heads, s.tokens, s.tokens};
    out.bytes = serialize_npy(s.attentions.data(), out.shape);
  } else {
    encode_figure(out, model_view_figure(s, r), r.format, r.scale, text);
  }
  write_file_atomic(path, out.bytes);
  return out;
}

}  // namespace attnscope
