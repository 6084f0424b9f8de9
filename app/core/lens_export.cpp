// lens_export.cpp — the logit lens and the direct logit attribution as figures and CSV (lens_export.h).
#include "core/lens_export.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "attnscope/core/error.h"
#include "attnscope/io/npy.h"

namespace attnscope {
namespace {

const model::LogitLens& lens_of(const pipeline::Result& r) {
  if (!r.lens)
    throw InputError(r.lens_error.empty() ? "the logit lens needs a checkpoint: give --checkpoint DIR" : r.lens_error);
  return *r.lens;
}

const model::LogitAttribution& attribution_of(const pipeline::Result& r) {
  if (!r.attribution)
    throw InputError(r.attribution_error.empty() ? "the direct logit attribution needs a checkpoint: give --checkpoint DIR"
                                                 : r.attribution_error);
  return *r.attribution;
}

std::string number(double v, const char* format = "%.9g") {
  char text[48];
  std::snprintf(text, sizeof text, format, v);
  return text;
}

// RFC 4180: quoted when it holds a comma, a quote, a line break or edge spaces.
std::string field(const std::string& s) {
  if (!s.empty() && s.find_first_of(",\"\r\n") == std::string::npos && s.front() != ' ' && s.back() != ' ') return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string layer_labels_name(const pipeline::Result& r) { return r.ran_model ? r.ran_model->name : std::string(); }

// A layer without softmax heads (Gated DeltaNet, Mamba-2, a trained linear layer): its layer_maps say so.
bool mixer_layer(const pipeline::Result& r, int l) {
  return r.traced && l < int(r.traced->layer_maps.size()) && r.traced->layer_maps[size_t(l)].signed_weights;
}

}  // namespace

int lens_position(const pipeline::Result& r, int position) {
  const int T = r.tokens ? int(r.tokens->ids.size()) : 0;
  require(T > 0, "the logit lens needs a checkpoint's tokens");
  if (position < 0) return T - 1;
  require(position < T, "position " + std::to_string(position) + " is outside the input's " + std::to_string(T) +
                            " tokens (0 to " + std::to_string(T - 1) + ")");
  return position;
}

std::string lens_token_label(const pipeline::Result& r, int32_t id) {
  const std::string label = r.tokens ? token_label(*r.tokens, id) : std::string();
  return label.empty() ? "#" + std::to_string(id) : label;
}

FigureSpec lens_figure(const pipeline::Result& r, const LensExportRequest& q) {
  const model::LogitLens& lens = lens_of(r);
  lens_position(r, q.position);  // a position outside the input is refused as for the attribution
  const FigureWords& w = q.words;
  const int L = lens.layers, T = lens.tokens;
  FigureSpec f;
  PanelSpec grid;
  grid.title = w.word("logit lens: top next token after each layer");
  grid.rows = L;
  grid.cols = T;
  for (int l = 0; l < L; ++l) {
    grid.row_labels.push_back(std::to_string(l));
    for (int t = 0; t < T; ++t) {
      const auto& top = lens.top[size_t(l)][size_t(t)];
      grid.values.push_back(top.empty() ? 0.0f : top[0].probability);
      grid.cell_text.push_back(top.empty() ? "" : lens_token_label(r, top[0].id));
    }
  }
  grid.col_labels = r.tokens->labels;
  grid.colorbar = 0;
  f.panels.push_back(grid);
  f.colorbars.push_back({ValueRange{0, 1}, Colormap::viridis, w.word("probability of the top token")});
  // KL to the final distribution and the rank of the model's top-1, every layer and position, under the grid.
  PanelSpec kl, rank;
  kl.title = w.word("KL to the final distribution (nats)");
  rank.title = w.word("rank of the model's top-1 token (1 = the layer's top)");
  kl.rows = rank.rows = L;
  kl.cols = rank.cols = T;
  float kl_hi = 0, rank_hi = 1;
  for (int l = 0; l < L; ++l)
    for (int t = 0; t < T; ++t) {
      const float d = lens.kl(l, t);
      const int k = lens.final_rank(l, t);
      kl.values.push_back(d);
      kl.cell_text.push_back(number(d, "%.3g"));
      rank.values.push_back(std::log10(float(k)));  // ranks span orders of magnitude: coloured by log10
      rank.cell_text.push_back(std::to_string(k));
      kl_hi = std::max(kl_hi, d);
      rank_hi = std::max(rank_hi, float(k));
    }
  kl.row_labels = rank.row_labels = grid.row_labels;
  kl.col_labels = rank.col_labels = grid.col_labels;
  grid.marked_row = -1;
  kl.colorbar = 1;
  rank.colorbar = 2;
  f.panels.push_back(kl);
  f.panels.push_back(rank);
  f.colorbars.push_back({ValueRange{0, std::max(kl_hi, 0.1f)}, Colormap::magma, w.word("KL (nats)")});
  f.colorbars.push_back({ValueRange{0, std::max(std::log10(rank_hi), 1.0f)}, Colormap::magma, w.word("log10 rank")});
  f.grid_columns = 1;
  if (q.caption)
    f.caption = layer_labels_name(r) + " · " + w.format("%d layers × %d heads", L, r.ran_model->config.heads) + " · " +
                w.format("%d tokens", T);
  return f;
}

FigureSpec attribution_figure(const pipeline::Result& r, const LensExportRequest& q) {
  const model::LogitAttribution& a = attribution_of(r);
  const int p = lens_position(r, q.position);
  const FigureWords& w = q.words;
  const int L = r.ran_model->config.layers;
  int H = 1;
  for (const model::LogitPart& part : a.parts)
    if (part.kind == model::PartKind::head) H = std::max(H, part.head + 1);
  PanelSpec heads;
  const std::string target = lens_token_label(r, a.target[size_t(p)]);
  heads.title = w.format("direct logit attribution of %s at position %d", ("'" + target + "'").c_str(), p);
  heads.rows = L;
  heads.cols = H;
  heads.values.assign(size_t(L) * size_t(H), -std::numeric_limits<float>::infinity());
  heads.cell_text.assign(heads.values.size(), "");
  PanelSpec others;
  others.title = w.word("other parts");
  others.cols = 1;
  float extent = 0;
  for (size_t i = 0; i < a.parts.size(); ++i) {
    const model::LogitPart& part = a.parts[i];
    const float v = a.values(int(i), p);
    extent = std::max(extent, std::abs(v));
    if (part.kind == model::PartKind::head) {
      const size_t at = size_t(part.layer) * size_t(H) + size_t(part.head);
      heads.values[at] = v;
      heads.cell_text[at] = number(v, "%+.3g");
    } else {
      others.values.push_back(v);
      others.cell_text.push_back(number(v, "%+.3g"));
      others.row_labels.push_back(model::part_label(part));
      ++others.rows;
    }
  }
  for (int l = 0; l < L; ++l)
    heads.row_labels.push_back(mixer_layer(r, l) ? std::to_string(l) + " " + r.traced->layer_maps[size_t(l)].kind
                                                 : std::to_string(l));
  for (int h = 0; h < H; ++h) heads.col_labels.push_back(std::to_string(h));
  for (size_t i = 0; i < heads.values.size(); ++i)
    if (!std::isfinite(heads.values[i])) heads.cell_text[i] = w.word("no heads");
  FigureSpec f;
  f.panels.push_back(heads);
  if (others.rows > 0) f.panels.push_back(others);
  extent = std::max(extent, 1e-6f);
  ColorBarSpec bar{ValueRange{-extent, extent}, Colormap::diverging, w.word("logit contribution")};
  bool any_mixer = false;
  for (int l = 0; l < L; ++l) any_mixer |= mixer_layer(r, l);
  bar.show_masked = any_mixer;
  bar.masked_label = w.word("no heads");
  f.colorbars.push_back(bar);
  f.grid_columns = int(f.panels.size());
  if (q.caption) {
    f.caption = w.format("%s · position %d: %s", layer_labels_name(r).c_str(), p, r.tokens->labels[size_t(p)].c_str()) + " · " +
                w.format("logit %s = the sum of the parts", number(a.logit[size_t(p)], "%.4g").c_str());
    if (a.before_softcap) f.caption += " (" + w.word("before the soft-cap") + ")";
  }
  return f;
}

std::string lens_csv(const pipeline::Result& r) {
  const model::LogitLens& lens = lens_of(r);
  std::string out = "layer,position,input_token,final_top1_id,final_top1_token,rank_of_final_top1,kl_nats";
  for (int k = 0; k < lens.top_k; ++k) {
    const std::string n = std::to_string(k + 1);
    out += ",top" + n + "_id,top" + n + "_token,top" + n + "_probability";
  }
  out += "\n";
  for (int l = 0; l < lens.layers; ++l)
    for (int t = 0; t < lens.tokens; ++t) {
      const int32_t final_top = lens.final_top[size_t(t)];
      out += std::to_string(l) + "," + std::to_string(t) + "," + field(r.tokens->labels[size_t(t)]) + "," +
             std::to_string(final_top) + "," + field(lens_token_label(r, final_top)) + "," +
             std::to_string(lens.final_rank(l, t)) + "," + number(lens.kl(l, t));
      for (const model::NextToken& n : lens.top[size_t(l)][size_t(t)])
        out += "," + std::to_string(n.id) + "," + field(lens_token_label(r, n.id)) + "," + number(n.probability);
      out += "\n";
    }
  return out;
}

std::string attribution_csv(const pipeline::Result& r, int position) {
  const model::LogitAttribution& a = attribution_of(r);
  const int p = lens_position(r, position);
  const int32_t v = a.target[size_t(p)];
  const std::string lead = std::to_string(p) + "," + field(r.tokens->labels[size_t(p)]) + "," + std::to_string(v) + "," +
                           field(lens_token_label(r, v)) + ",";
  static const char* kinds[] = {"embedding", "positions", "head", "attention_bias", "mixer", "mlp", "final_norm_bias"};
  std::string out = "position,input_token,target_id,target_token,part,kind,layer,head,value\n";
  for (size_t i = 0; i < a.parts.size(); ++i) {
    const model::LogitPart& part = a.parts[i];
    out += lead + field(model::part_label(part)) + "," + kinds[int(part.kind)] + "," +
           (part.layer >= 0 ? std::to_string(part.layer) : "") + "," + (part.head >= 0 ? std::to_string(part.head) : "") +
           "," + number(a.values(int(i), p)) + "\n";
  }
  out += lead + (a.before_softcap ? "logit before the soft-cap" : "logit") + ",logit,,," + number(a.logit[size_t(p)]) + "\n";
  return out;
}

ExportedFile render_lens_export(const pipeline::Result& r, const LensExportRequest& q) {
  require(q.format != ExportFormat::npy, std::string("the ") + (q.attribution ? "attribution" : "lens") +
                                             " exports as png, svg or csv; `attnscope compute --lens` writes its arrays as .npy");
  require(q.scale >= min_export_scale && q.scale <= max_export_scale,
          "the scale must be between 1 and 4, got " + number(q.scale, "%g"));
  ExportedFile out;
  if (q.format == ExportFormat::csv) {
    out.bytes = q.attribution ? attribution_csv(r, q.position) : lens_csv(r);
    return out;
  }
  encode_figure(out, q.attribution ? attribution_figure(r, q) : lens_figure(r, q), q.format, q.scale);
  return out;
}

ExportedFile export_lens_to_file(const pipeline::Result& r, const LensExportRequest& q, const std::filesystem::path& path) {
  return write_export(path, q.format, [&] { return render_lens_export(r, q); });
}

std::string default_lens_file_name(const LensExportRequest& q, const std::string& stamp) {
  return std::string("attnscope-") + (q.attribution ? "attribution" : "lens") + "-" + stamp + "." + to_string(q.format);
}

}  // namespace attnscope
