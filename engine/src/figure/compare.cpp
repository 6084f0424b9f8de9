// compare.cpp — A/B comparison: per-head JS drift, B − A, one locked range, and its figure (compare.h).
#include "attnscope/figure/compare.h"

#include <algorithm>
#include <cmath>

#include "attnscope/analysis/token_set.h"
#include "attnscope/attention/head_stats.h"
#include "attnscope/core/error.h"
#include "attnscope/figure/render_png.h"
#include "attnscope/figure/render_svg.h"

namespace attnscope {

CompareShapes compare_shapes(const AttentionAnalysis& a, const AttentionAnalysis& b) {
  CompareShapes s;
  s.heads_a = int(a.result.probs.size());
  s.heads_b = int(b.result.probs.size());
  s.tokens_a = s.heads_a > 0 ? int(a.result.probs[0].rows()) : 0;
  s.tokens_b = s.heads_b > 0 ? int(b.result.probs[0].rows()) : 0;
  return s;
}

std::string compare_mismatch(const CompareShapes& s) {
  if (s.comparable()) return {};
  const auto part = [](int heads, int tokens) {
    return std::to_string(heads) + (heads == 1 ? " head" : " heads") + " and " + std::to_string(tokens) +
           (tokens == 1 ? " token" : " tokens");
  };
  return "A has " + part(s.heads_a, s.tokens_a) + ", B has " + part(s.heads_b, s.tokens_b) +
         ": compare A/B needs the same heads and tokens";
}

namespace {

ExportRequest heads_request(const CompareRequest& r, const ColorScale& scale) {
  ExportRequest e;
  e.what = ExportWhat::heads;
  e.format = r.format;
  e.scale = r.scale;
  e.colormap = r.colormap == Colormap::diverging ? Colormap::viridis : r.colormap;  // probabilities
  e.scores = false;
  e.color_scale = scale;
  e.caption = r.caption;
  e.sink_column = false;  // A and B are compared token by token (the difference view reuses B's panels)
  e.words = r.words;
  e.token_first = r.token_first;
  e.token_last = r.token_last;
  e.token_set = r.token_set;
  return e;
}

// Key j hidden from query i: after it (causal or windowed), or outside a window but for its sink keys.
bool masked(const Analysis& a, int i, int j) {
  const AttentionAnalysis& att = *a.attention;
  if ((a.scene.model.causal || att.window > 0) && j > i) return true;
  return att.window > 0 && j <= i - att.window && j >= att.sinks;
}

}  // namespace

AbComparison compare_analyses(const Analysis& a, const Analysis& b, const ColorScale& scale, const TokenSet& token_set) {
  require(a.attention && b.attention, "compare A/B needs the attention heads of a sentence or a tensor in both A and B");
  const CompareShapes shapes = compare_shapes(*a.attention, *b.attention);
  require(shapes.comparable(), compare_mismatch(shapes));
  AbComparison c;
  c.heads = shapes.heads_a;
  c.tokens = shapes.tokens_a;
  c.same_tokens = a.attention->labels == b.attention->labels;
  const Tensor3& pa = a.attention->result.probs;
  const Tensor3& pb = b.attention->result.probs;
  // A signed side (differential attention's A, a head without a softmax's matrix M): its drift is that of its
  // weight distribution |A| per row (head_stats.h).
  auto distribution = [](const AttentionAnalysis& att) {
    return signed_maps(att) ? weight_distribution(att.result.probs) : att.result.probs;
  };
  c.drift = !signed_maps(*a.attention) && !signed_maps(*b.attention)
                ? head_drift(pb, pa)
                : head_drift(distribution(*b.attention), distribution(*a.attention));
  float m = 0;
  for (int h = 0; h < c.heads; ++h) {
    Mat d = pb[size_t(h)] - pa[size_t(h)];
    for (int i = 0; i < c.tokens; ++i)
      for (int j = 0; j < c.tokens; ++j) {
        if (masked(a, i, j) && masked(b, i, j)) d(i, j) = -INFINITY;
        else m = std::max(m, std::abs(d(i, j)));
      }
    c.difference.push_back(std::move(d));
  }
  // A token set: B's reduced row (column) minus A's, on the difference's range too.
  if (token_set.active()) {
    check_token_set(token_set, c.tokens, token_set.axis == TokenSetAxis::queries ? "--query-set" : "--key-set");
    c.token_set = token_set;
    for (int h = 0; h < c.heads; ++h) {
      const std::vector<float> ra = reduce_token_set(pa[size_t(h)], token_set), rb = reduce_token_set(pb[size_t(h)], token_set);
      std::vector<float> d(ra.size());
      for (size_t k = 0; k < d.size(); ++k) m = std::max(m, std::abs(d[k] = rb[k] - ra[k]));
      c.set_difference.push_back(std::move(d));
    }
  }
  c.difference_range = m > 0 ? ValueRange{-m, m} : ValueRange{-1.0f, 1.0f};
  switch (scale.mode) {
    case ScaleMode::fixed: c.locked = {0.0f, 1.0f}; break;
    case ScaleMode::locked: c.locked = scale.locked; break;
    case ScaleMode::shared:
    case ScaleMode::per_head: {
      // Each side's shared range as its own export draws it, then their union.
      CompareRequest r;
      r.token_set = c.token_set;  // the sides' ranges include their set rows, as their exports' do
      const FigureSpec fa = export_figure(a, heads_request(r, ColorScale{}));
      const FigureSpec fb = export_figure(b, heads_request(r, ColorScale{}));
      const ValueRange ra = fa.colorbars.at(0).range, rb = fb.colorbars.at(0).range;
      c.locked = lockable_range({std::min(ra.lo, rb.lo), std::max(ra.hi, rb.hi)});
      break;
    }
  }
  validate_color_scale({ScaleMode::locked, c.locked}, true);
  return c;
}

const char* to_string(CompareView view) { return view == CompareView::difference ? "difference" : "side-by-side"; }

CompareView parse_compare_view(const std::string& text) {
  if (text == "side-by-side") return CompareView::side_by_side;
  if (text == "difference") return CompareView::difference;
  throw InputError("compare view '" + text + "' is not one of: side-by-side, difference");
}

namespace {

std::vector<std::string> split_caption(const std::string& caption) {
  std::vector<std::string> parts;
  const std::string sep = " · ";
  size_t start = 0;
  for (;;) {
    const size_t at = caption.find(sep, start);
    parts.push_back(caption.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) break;
    start = at + sep.size();
  }
  return parts;
}

// What differs between A's and B's captions, piece by piece (" · " apart) along their longest common
// subsequence: "MHA → MQA · G=8 → G=1", a piece only B has "+ K/V pooled from 2 heads", only A "− …".
std::string difference_caption(const std::string& ca, const std::string& cb, const FigureWords& w) {
  const std::vector<std::string> pa = split_caption(ca), pb = split_caption(cb);
  const size_t n = pa.size(), m = pb.size();
  std::vector<std::vector<int>> lcs(n + 1, std::vector<int>(m + 1, 0));  // lcs[i][j]: of pa[i…], pb[j…]
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      lcs[i][j] = pa[i] == pb[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
  std::vector<std::string> changes;
  std::vector<std::string> gone, added;  // the current run of pieces only A / only B has
  const auto flush = [&] {
    // The run's last pieces pair up (a name added before the kind: "+ K/V pooled … · GQA → MQA").
    const size_t pairs = std::min(gone.size(), added.size());
    const size_t only_a = gone.size() - pairs, only_b = added.size() - pairs;
    for (size_t k = 0; k < only_a; ++k) changes.push_back("− " + gone[k]);
    for (size_t k = 0; k < only_b; ++k) changes.push_back("+ " + added[k]);
    for (size_t k = 0; k < pairs; ++k) changes.push_back(gone[only_a + k] + " → " + added[only_b + k]);
    gone.clear();
    added.clear();
  };
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && pa[i] == pb[j]) {
      flush();
      ++i, ++j;
    } else if (j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j])) {
      added.push_back(pb[j++]);
    } else {
      gone.push_back(pa[i++]);
    }
  }
  flush();
  std::string changed;
  for (const std::string& c : changes) changed += (changed.empty() ? "" : " · ") + c;
  return changed.empty() ? w.word("A and B have the same settings") : w.format("A → B: %s", changed.c_str());
}

std::string drift_text(double d) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", d);
  return text;
}

}  // namespace

FigureSpec compare_figure(const Analysis& a, const Analysis& b, const AbComparison& cmp, const CompareRequest& r) {
  const FigureWords& w = r.words;
  const ColorScale locked{ScaleMode::locked, cmp.locked};
  const ExportRequest er = heads_request(r, locked);
  FigureSpec fa = export_figure(a, er);
  FigureSpec fb = export_figure(b, er);
  FigureSpec f;
  if (r.view == CompareView::side_by_side) {
    f.colorbars = fa.colorbars;  // one bar: the locked range, with the masked swatch when either side is causal
    f.colorbars[0].show_masked = fa.colorbars[0].show_masked || fb.colorbars[0].show_masked;
    for (int h = 0; h < cmp.heads; ++h) {
      PanelSpec pa = std::move(fa.panels[size_t(h)]);
      PanelSpec pb = std::move(fb.panels[size_t(h)]);
      pa.title = w.format("A · head %d", h);
      pb.title = w.format("B · head %d · JS %s", h, drift_text(cmp.drift[size_t(h)]).c_str());
      pa.colorbar = pb.colorbar = 0;
      f.panels.push_back(std::move(pa));
      f.panels.push_back(std::move(pb));
    }
    f.grid_columns = cmp.heads <= 2 ? 2 * cmp.heads : 4;
  } else {
    f.colorbars.push_back({cmp.difference_range, Colormap::diverging, w.word("probability B − A"),
                           fa.colorbars[0].show_masked && fb.colorbars[0].show_masked, w.word("masked")});
    const bool query_set = r.token_set.active() && r.token_set.axis == TokenSetAxis::queries;
    const bool key_set = r.token_set.active() && r.token_set.axis == TokenSetAxis::keys;
    require(!r.token_set.active() || (cmp.token_set == r.token_set && cmp.set_difference.size() == size_t(cmp.heads)),
            "compare A/B: the comparison was made without this token set");
    for (int h = 0; h < cmp.heads; ++h) {
      PanelSpec p = std::move(fb.panels[size_t(h)]);  // B's labels and frame (of the token range; its set's row or column)
      const int lo = r.token_first >= 0 ? r.token_first : 0, n = p.rows - (query_set ? 1 : 0);
      const Mat d = cmp.difference[size_t(h)].block(lo, lo, n, n);  // row-major [n, n]
      p.values.clear();
      for (int i = 0; i < n; ++i) {
        p.values.insert(p.values.end(), d.data() + size_t(i) * size_t(n), d.data() + size_t(i + 1) * size_t(n));
        if (key_set) p.values.push_back(cmp.set_difference[size_t(h)][size_t(lo + i)]);
      }
      if (query_set)
        p.values.insert(p.values.end(), cmp.set_difference[size_t(h)].begin() + lo, cmp.set_difference[size_t(h)].begin() + lo + n);
      p.title = w.format("B − A · head %d · JS %s", h, drift_text(cmp.drift[size_t(h)]).c_str());
      p.colorbar = 0;
      f.panels.push_back(std::move(p));
    }
  }
  if (r.caption) {
    ExportRequest plain = er;
    plain.color_scale = {};
    const auto with = [](std::string caption, const std::string& setting) {
      return setting.empty() ? caption : caption + " · " + setting;
    };
    std::string c = difference_caption(with(export_caption(a, plain), r.a_setting), with(export_caption(b, plain), r.b_setting), w);
    c += " · " + (r.view == CompareView::side_by_side
                      ? w.format("one scale for A and B: %s", range_text(cmp.locked).c_str())
                      : w.word("probability B − A"));
    if (r.token_first >= 0) c += " · " + w.format("tokens %d–%d of %d", r.token_first, r.token_last, cmp.tokens);
    if (r.token_set.active())  // in both sides' captions alike, so not among their differences
      c += " · " + w.format(token_set_label_key(r.token_set), int(r.token_set.tokens.size())) + ": " + token_set_list(r.token_set);
    if (!r.caption_note.empty()) c += " · " + r.caption_note;
    f.caption = c;
  }
  return f;
}

ExportedFile render_compare(const Analysis& a, const Analysis& b, const CompareRequest& r, const TextRasterizer& text) {
  require(r.format == ExportFormat::png || r.format == ExportFormat::svg,
          std::string("compare A/B exports a figure: --format png or svg, not ") + to_string(r.format));
  require(r.scale >= 1 && r.scale <= 4, "--scale must be between 1 and 4");
  const AbComparison cmp = compare_analyses(a, b, r.color_scale, r.token_set);
  ExportedFile out;
  encode_figure(out, compare_figure(a, b, cmp, r), r.format, r.scale, text);
  return out;
}

ExportedFile export_compare_to_file(const Analysis& a, const Analysis& b, const CompareRequest& r,
                                    const std::filesystem::path& path, const TextRasterizer& text) {
  return write_export(path, r.format, [&] { return render_compare(a, b, r, text); });
}

}  // namespace attnscope
