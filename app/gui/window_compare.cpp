// window_compare.cpp — compare A/B (issue 23 item 4).
//
// The Heads toolbar's "Keep as A" keeps the scene on screen as A — the analysis itself, so a checkpoint's
// layer with its K/V heads is kept as it is, with its top-1 next tokens. Every later change is B. "Compare
// with A" opens this window over the Heads view: A and B head by head on one locked colour scale, or
// B − A on a diverging scale, each head titled with its Jensen–Shannon drift (the engine's numbers:
// figure/compare.h). It closes with its × or "Back to the heads"; A stays kept until "Forget A" or the
// next "Keep as A". A and B with different heads or tokens are refused on screen, naming both. Heads switched
// off in the Model view (issue 38 item 3) are not scene settings: the caption's "A → B" names them from each side's
// run ("+ heads switched off: 0.1 (set to 0)"), on screen and in the exported figure.
// A is UI state, not part of the scene: undo changes B only.
//
// Sections: keeping A · the picture · export · window
#include <algorithm>
#include <ctime>
#include <filesystem>

#include "attnscope/analysis/token_set.h"
#include "attnscope/io/file_io.h"
#include "attnscope/pipeline/pipeline.h"
#include "attnscope/scene/scene_json.h"
#include "gui/compare_state.h"
#include "gui/figure_copy.h"
#include "gui/i18n.h"
#include "gui/scale_control.h"
#include "gui/token_sets.h"
#include "gui/widgets.h"
#include "gui/windows.h"

namespace attnscope::gui {
namespace {

CompareState& Compare(AppState& state) {
  if (!state.compare) state.compare = std::make_shared<CompareState>();
  return *state.compare;
}

// B: the current model's heads when there are any.
const Analysis* CurrentB(const AppState& state) {
  if (!state.analysis || !AnalysisOfCurrentModel(state) || !state.analysis->attention) return nullptr;
  return state.analysis.get();
}

// "top-1 next token: A 'the' (0.312) · B 'a' (0.221)", after the last token, for two checkpoint runs.
std::string NextTokenNote(AppState& state, const ModelLayerRun* a, const ModelLayerRun* b) {
  if (!a || !b || a->next.empty() || b->next.empty() || a->next.back().empty() || b->next.back().empty()) return "";
  const auto name = [&state](const ModelLayerRun& run) {
    const std::string& label = run.next_labels.back()[0];
    char p[48];
    if (label.empty()) {
      std::snprintf(p, sizeof p, "#%lld (%.3f)", static_cast<long long>(run.next.back()[0].id),
                    double(run.next.back()[0].probability));
      return std::string(p);
    }
    std::snprintf(p, sizeof p, "' (%.3f)", double(run.next.back()[0].probability));
    std::string name = "'";
    name.append(state.fonts->display_label(label));
    name.append(p);
    return name;
  };
  return trf("top-1 next token: A %s · B %s", name(*a).c_str(), name(*b).c_str());
}

// The heads switched off in the checkpoint run on screen (the worker's comparison is of that run; none: empty).
model::HeadAblation RunAblation(const AppState& state) {
  const CheckpointWindowState& c = state.checkpoint;
  return c.current() && c.ablation_result ? c.ablation_result->ablation : model::HeadAblation{};
}

// "heads switched off: 0.1, 1.2 (set to 0)", a caption piece of the side that ran without them; "" none.
std::string AblationSetting(const model::HeadAblation& x) {
  if (x.heads.empty()) return "";
  std::string heads;
  for (const model::HeadRef& h : x.heads) heads += (heads.empty() ? "" : ", ") + std::to_string(h.layer) + "." + std::to_string(h.head);
  heads += std::string(" (") + (x.mode == model::AblationMode::mean ? tr("set to its mean") : tr("set to 0")) + ")";
  return trf("heads switched off: %s", heads.c_str());
}

// ---- the picture ---------------------------------------------------------------------------------------

CompareRequest RequestFor(const AppState& state, const CompareState& c) {
  CompareRequest r;
  r.view = c.view;
  r.colormap = parse_colormap(state.scene.view.colormap);
  r.color_scale = color_scale_of(state.scene.view);
  if (state.scene.view.show_scores) r.color_scale = {};  // compare shows probabilities: a scores' range does not apply
  r.words = UiFigureWords();
  r.a_setting = AblationSetting(c.a_ablation);  // the caption's "A → B" names them (no scene setting does)
  r.b_setting = AblationSetting(RunAblation(state));
  // The token set, when it names B's tokens (an input edit clears it; A and B have the same tokens to compare).
  const TokenSet& set = state.scene.view.token_set;
  const int tokens = state.analysis && state.analysis->attention ? int(state.analysis->attention->labels.size()) : 0;
  if (set.active() && std::all_of(set.tokens.begin(), set.tokens.end(), [tokens](int t) { return t < tokens; }))
    r.token_set = set;
  return r;
}

// Remakes the comparison and its textures when A, B, the view or the language changed.
void Update(AppState& state, CompareState& c, const Analysis& b) {
  const int language = int(UiLanguage());
  const ViewSettings& v = state.scene.view;
  std::string settings = v.colormap + " " + std::to_string(int(v.scale)) + " " + std::to_string(v.locked_lo) + " " +
                         std::to_string(v.locked_hi) + (v.show_scores ? " scores" : "") + " set " + to_string(v.token_set.axis) +
                         (v.token_set.reduce == SetReduce::mean ? " mean" : " sum");
  for (const int t : v.token_set.tokens) settings += " " + std::to_string(t);
  if (c.made_a == c.a.get() && c.made_b == &b && c.made_view == c.view && c.made_language == language &&
      c.made_view_settings == settings)
    return;
  c.made_view_settings = settings;
  c.made_a = c.a.get();
  c.made_b = &b;
  c.made_b_held = state.analysis;
  c.made_view = c.view;
  c.made_language = language;
  c.error.clear();
  c.comparison.reset();
  c.figure.reset();
  const CompareShapes shapes = compare_shapes(*c.a->attention, *b.attention);
  if (!shapes.comparable()) {
    c.error = trf("A has %d heads and %d tokens, B has %d heads and %d tokens: compare A/B needs the same number of "
                  "both. Change B back, or keep B as A.",
                  shapes.heads_a, shapes.tokens_a, shapes.heads_b, shapes.tokens_b);
    return;
  }
  try {
    const CompareRequest request = RequestFor(state, c);
    c.comparison = compare_analyses(*c.a, b, request.color_scale, request.token_set);
    c.figure = compare_figure(*c.a, b, *c.comparison, request);
  } catch (const std::exception& e) {
    c.error = e.what();
    c.comparison.reset();
    return;
  }
  c.textures.resize(c.figure->panels.size());
  c.colors.resize(c.figure->panels.size());
  // A token set: the panels' last row (queries) or column (keys) is each one's strip; the textures keep T × T.
  const TokenSet& set = c.comparison->token_set;
  const int T = c.comparison->tokens;
  c.strip_axis = set.active() ? set.axis : TokenSetAxis::none;
  c.strips.assign(set.active() ? c.figure->panels.size() : 0, {});
  c.strip_values.assign(c.strips.size(), {});
  for (size_t i = 0; i < c.figure->panels.size(); ++i) {
    const PanelSpec& p = c.figure->panels[i];
    std::vector<Rgba> colors = panel_colors(*c.figure, i);
    if (set.active()) {
      const bool rows = set.axis == TokenSetAxis::queries;
      std::vector<Rgba> cells;
      cells.reserve(size_t(T) * size_t(T));
      for (int r = 0; r < p.rows; ++r)
        for (int k = 0; k < p.cols; ++k) {
          const size_t at = size_t(r) * size_t(p.cols) + size_t(k);
          if ((rows && r == T) || (!rows && k == T)) {
            c.strips[i].push_back(colors[at]);
            c.strip_values[i].push_back(p.values[at]);
          } else {
            cells.push_back(colors[at]);
          }
        }
      colors = std::move(cells);
    }
    c.colors[i] = std::move(colors);
    c.textures[i].update(T, T, c.colors[i]);
  }
}

void DrawGrid(AppState& state, CompareState& c, const Analysis& b) {
  const FigureSpec& f = *c.figure;
  const LabelCache& labels = CachedLabels(state, c.labels, b.attention->labels);
  HeatmapGridSpec spec;
  spec.count = int(f.panels.size());
  spec.rows = spec.cols = c.comparison->tokens;  // the token cells (a token set's strip is drawn apart)
  spec.texture = [&c](int i) { return c.textures[size_t(i)].id(); };
  // Caption forms, longest first: the figure's title ("B · head 0 · JS 0.012"), "B h0 · 0.012", "B0".
  const bool side_by_side = c.view == CompareView::side_by_side;
  const std::vector<double>& drift = c.comparison->drift;
  spec.caption_forms = 3;
  spec.captions = [&f, &drift, side_by_side](int i, int form) -> std::string {
    if (form == 0) return f.panels[size_t(i)].title;
    const int head = side_by_side ? i / 2 : i;
    const char* side = side_by_side ? (i % 2 == 0 ? "A" : "B") : "B−A";
    char brief[48];
    if (form == 1 && (!side_by_side || i % 2 == 1))
      std::snprintf(brief, sizeof brief, "%s h%d · %.3f", side, head, drift[size_t(head)]);
    else if (form == 1)
      std::snprintf(brief, sizeof brief, "%s h%d", side, head);
    else
      std::snprintf(brief, sizeof brief, "%s%d", side, head);
    return brief;
  };
  spec.frame_color = [&f](int i) {
    const Rgba k = f.panels[size_t(i)].frame.value_or(Rgba{160, 160, 160, 255});
    return IM_COL32(k.r, k.g, k.b, k.a);
  };
  spec.row_labels = spec.col_labels = &labels.labels;
  spec.labels_extent = labels.extent;
  spec.shared_scale = true;
  spec.shared_range = f.colorbars[0].range;
  spec.colormap = f.colorbars[0].colormap;
  const bool side = c.view == CompareView::side_by_side;
  spec.value_name = side ? TrKey("probability") : TrKey("probability B − A");
  if (side) spec.scale_note = ScaleNote({ScaleMode::locked, f.colorbars[0].range});  // " · locked 0.01–0.46"
  spec.masked = f.colorbars[0].show_masked;
  // Side by side, A and B of a head stay neighbours: the number of pairs a row that gives the largest
  // tiles in the room left (roughly: the row labels, the colour bar and each tile's caption set aside);
  // the difference's tiles go wherever the grid makes them largest.
  if (side) {
    const ImVec2 room = ImGui::GetContentRegionAvail();
    const float font = ImGui::GetFontSize();
    const std::string bar_title = std::string(tr(spec.value_name)) + spec.scale_note;
    const float bar = std::max(ImGui::CalcTextSize(bar_title.c_str()).x, font * 5) + font * 3;
    const float width = room.x - labels.extent - bar, height = room.y - labels.extent - font;
    const int panels = spec.count;
    float best = -1;
    for (int cols = 2; cols <= panels; cols += 2) {
      const int rows = (panels + cols - 1) / cols;
      const float tile = std::min(width / float(cols), height / float(rows) - font * 1.8f);
      if (tile > best) {
        best = tile;
        spec.columns = cols;
      }
    }
  }
  // The Heads view's token range and zoom (zoom.h): the same tokens of A and B.
  ZoomState& z = state.heads.zoom;
  const Shown shown = ShownTokens(z, spec.cols);
  std::vector<std::string> row_labels, col_labels;
  ApplyShown(spec, shown, z, row_labels, col_labels);
  if (z.numbers)
    spec.cell_number = [&f, &c, shown](int i, int r, int col, std::string& text, ImU32& color) {
      const PanelSpec& p = f.panels[size_t(i)];
      const int T = c.comparison->tokens;
      const size_t value = size_t(shown.row + r) * size_t(p.cols) + size_t(shown.col + col);  // p: with a key set's column
      const size_t cell = size_t(shown.row + r) * size_t(T) + size_t(shown.col + col);
      return value < p.values.size() && size_t(i) < c.colors.size() && cell < c.colors[size_t(i)].size() &&
             CellNumber(p.values[value], c.colors[size_t(i)][cell], text, color);
    };
  // A token set: its rows or columns outlined and its strip under (right of) every panel, as the Heads view draws it.
  const TokenSet& set = c.comparison->token_set;
  if (set.active() && c.strips.size() == size_t(spec.count)) {
    const bool queries = set.axis == TokenSetAxis::queries;
    for (const int t : set.tokens) (queries ? spec.set_rows : spec.set_cols).push_back(t - (queries ? shown.row : shown.col));
    spec.strip = queries ? GridStrip::row : GridStrip::column;
    const int first = queries ? shown.col : shown.row;
    spec.strip_color = [&c, first](int i, int k) {
      const std::vector<Rgba>& strip = c.strips[size_t(i)];
      const size_t at = size_t(first + k);
      if (at >= strip.size()) return IM_COL32(0, 0, 0, 0);
      return IM_COL32(strip[at].r, strip[at].g, strip[at].b, 255);
    };
    spec.strip_label = TokenSetName(set);
    spec.strip_symbol = set.reduce == SetReduce::sum ? "Σ" : "μ";
  }
  HeatmapGridResult grid = DrawHeatmapGrid(spec, c.bar, state.ui_scale, &state.layout);
  RecordKeyAxis(state, grid, "compare");
  for (size_t i = 0; i < grid.strip_min.size(); ++i)  // the strips in the layout record
    state.layout.widgets.push_back({"compare.token_set_strip." + std::to_string(i),
                                    ImVec2(grid.strip_min[i].x * state.framebuffer_scale.x, grid.strip_min[i].y * state.framebuffer_scale.y),
                                    ImVec2(grid.strip_max[i].x * state.framebuffer_scale.x, grid.strip_max[i].y * state.framebuffer_scale.y)});
  if (grid.strip_hovered >= 0 && size_t(grid.strip_hovered) < c.strip_values.size()) {
    const int k = grid.strip_cell + (set.axis == TokenSetAxis::queries ? shown.col : shown.row);
    const std::vector<float>& values = c.strip_values[size_t(grid.strip_hovered)];
    if (k >= 0 && size_t(k) < values.size() && size_t(k) < labels.labels.size()) {
      const std::string where = set.axis == TokenSetAxis::queries ? trf("key %d: %s", k, labels.labels[size_t(k)].c_str())
                                                                  : trf("query %d: %s", k, labels.labels[size_t(k)].c_str());
      ImGui::SetTooltip("%s", (f.panels[size_t(grid.strip_hovered)].title + "\n" + TokenSetName(set) + " (" +
                               token_set_list(set) + ")\n" + where + "\n" + FormatValue(values[size_t(k)]))
                                  .c_str());
    }
  }
  ZoomAndPan(z, shown, grid, true);
  ToWholePicture(grid, shown);
  // The layout record's heads are the compare panels (A h, B h, … or B − A h) while it is open.
  state.layout.heads.clear();
  const ImVec2 s = state.framebuffer_scale;
  for (int i = 0; i < spec.count; ++i) {
    LayoutRecord::Head rec;
    rec.head = i;
    rec.tokens = shown.texture_cols;
    rec.first_query = shown.row;
    rec.first_key = shown.col;
    rec.shown = shown.cols;
    const ImVec2 min = grid.image_min[size_t(i)];
    rec.min = ImVec2(min.x * s.x, min.y * s.y);
    rec.max = ImVec2((min.x + grid.image_size.x) * s.x, (min.y + grid.image_size.y) * s.y);
    rec.cell = grid.cell * s.x;
    rec.frame = grid.frame * s.x;
    rec.range = spec.shared_range;
    state.layout.heads.push_back(rec);
  }
  if (grid.hovered >= 0) {
    const int head = side ? grid.hovered / 2 : grid.hovered;
    const Mat& pa = c.a->attention->result.probs[size_t(head)];
    const Mat& pb = b.attention->result.probs[size_t(head)];
    ImGui::BeginTooltip();
    ImGui::TextUnformatted(trf("head %d · query %d: %s · key %d: %s", head, grid.row, labels.labels[size_t(grid.row)].c_str(),
                               grid.col, labels.labels[size_t(grid.col)].c_str()).c_str());
    ImGui::TextUnformatted(trf("A %.3f · B %.3f · B − A %+.3f", double(pa(grid.row, grid.col)), double(pb(grid.row, grid.col)),
                               double(pb(grid.row, grid.col) - pa(grid.row, grid.col))).c_str());
    ImGui::TextUnformatted(trf("drift of head %d (Jensen–Shannon): %.3f nats", head, c.comparison->drift[size_t(head)]).c_str());
    ImGui::TextDisabled("%s", ZoomHint(false));
    ImGui::EndTooltip();
  }
}

// ---- export --------------------------------------------------------------------------------------------

// exports/attnscope-compare-<local time>.<png|svg>; the status line says where it went.
void SaveFigure(AppState& state, ExportFormat format) {
  const std::optional<CompareExport> shown = CompareOnScreen(state, format);
  if (!shown) return;
  const std::string view = shown->request.view == CompareView::difference ? "difference" : "ab";
  SaveToExports(
      state, [&](const std::string& stamp) { return "attnscope-compare-" + view + "-" + stamp + "." + to_string(format); },
      [&](const std::filesystem::path& path) { return export_compare_to_file(*shown->a, *shown->b, shown->request, path).bytes.size(); });
}

}  // namespace

// ---- the figure on screen as an export -----------------------------------------------------------------

std::optional<CompareExport> CompareOnScreen(AppState& state, ExportFormat format) {
  if (!state.compare || !state.compare->open || !state.compare->a || !CurrentB(state)) return std::nullopt;
  CompareState& c = *state.compare;
  if (!c.error.empty() || !c.figure) return std::nullopt;
  CompareExport e{c.a, state.analysis, RequestFor(state, c)};
  e.request.format = format;
  e.request.scale = state.exporter.scale;
  e.request.caption = state.exporter.caption;
  e.request.caption_note =
      NextTokenNote(state, c.a_run.get(), state.checkpoint.current() ? state.checkpoint.run.get() : nullptr);
  if (state.heads.zoom.token_last >= 0) {  // the token range on screen (zoom.h)
    e.request.token_first = state.heads.zoom.token_first;
    e.request.token_last = state.heads.zoom.token_last;
  }
  return e;
}

// ---- keeping A -----------------------------------------------------------------------------------------

void KeepAsA(AppState& state) {
  const Analysis* b = CurrentB(state);
  if (!b) return;
  CompareState& c = Compare(state);
  c.a = state.analysis;
  c.a_run = state.checkpoint.current() ? state.checkpoint.run : nullptr;
  c.a_ablation = RunAblation(state);
  c.made_a = nullptr;  // remake
}

bool KeepSceneFileAsA(AppState& state, const std::string& path, CompareView view) {
  try {
    Scene scene = load_scene(path);
    CompareState& c = Compare(state);
    const AnalysisRequest what = request_for(scene);
    c.a = pipeline::analyse_scene(std::move(scene), what);
    c.a_run = nullptr;
    c.a_ablation = {};
    c.open = true;
    c.view = view;
    c.made_a = nullptr;
    return true;
  } catch (const std::exception& e) {
    state.status = std::string(tr("A not kept: ")) + e.what();
    return false;
  }
}

void CompareToolbar(AppState& state) {
  const bool has_a = state.compare && state.compare->a;
  const char* keep = tr("Keep as A");
  SameLineIfFits(ImGui::CalcTextSize(keep).x + ImGui::GetStyle().FramePadding.x * 2);
  ImGui::BeginDisabled(!CurrentB(state));
  if (ImGui::SmallButton(keep)) KeepAsA(state);
  ImGui::EndDisabled();
  RecordLastItem(state, "heads.keep_a");
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
    ImGui::SetTooltip("%s", tr("Keeps these heads as A: every change you make next is B, and Compare with A shows "
                               "the two side by side on one colour scale"));
  if (!has_a) return;
  const char* compare = tr("Compare with A");
  SameLineIfFits(ImGui::CalcTextSize(compare).x + ImGui::GetStyle().FramePadding.x * 2);
  if (ImGui::SmallButton(compare)) state.compare->open = true;
  RecordLastItem(state, "heads.compare");
}

void DrawCompareWindow(AppState& state) {
  if (!state.compare || !state.compare->open || !state.compare->a) return;
  CompareState& c = *state.compare;
  PlaceNextWindow(state, Slot::view);  // the view's area, over the Heads window
  bool open = true;
  const std::string title = WindowTitle("Compare A/B", "compare");
  const bool shown = ImGui::Begin(title.c_str(), &open, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  if (shown && LongInputNotice(state, TrKey("Compare A/B"))) {  // a long input keeps no stack to compare
    if (ImGui::SmallButton(tr("Back to the heads"))) open = false;
  } else if (shown) {
    int view = int(c.view);
    if (ImGui::RadioButton(tr("A and B side by side"), view == 0)) view = 0;
    SameLineIfFits(RadioWidth(tr("difference B − A")));
    if (ImGui::RadioButton(tr("difference B − A"), view == 1)) view = 1;
    RecordLastItem(state, "compare.difference");
    c.view = CompareView(view);
    const Analysis* b = CurrentB(state);
    const bool ready = b && (Update(state, c, *b), c.figure.has_value());
    SameLineIfFits(ImGui::CalcTextSize(tr("Save PNG")).x + ImGui::GetFontSize() * 2);
    ImGui::BeginDisabled(!ready);
    if (ImGui::SmallButton(tr("Save PNG"))) SaveFigure(state, ExportFormat::png);
    RecordLastItem(state, "compare.save_png");
    SameLineIfFits(ImGui::CalcTextSize(tr("Save SVG")).x + ImGui::GetFontSize());
    if (ImGui::SmallButton(tr("Save SVG"))) SaveFigure(state, ExportFormat::svg);
    ImGui::EndDisabled();
    CopyFigureButton(state, true, "compare.copy_figure");  // the comparison, as Save PNG draws it
    SameLineIfFits(ImGui::CalcTextSize(tr("Keep B as A")).x + ImGui::GetFontSize());
    ImGui::BeginDisabled(!b);
    if (ImGui::SmallButton(tr("Keep B as A"))) KeepAsA(state);  // compare later changes with this one
    ImGui::EndDisabled();
    RecordLastItem(state, "compare.keep_b");
    SameLineIfFits(ImGui::CalcTextSize(tr("Forget A")).x + ImGui::GetFontSize());
    const bool forget = ImGui::SmallButton(tr("Forget A"));
    SameLineIfFits(ImGui::CalcTextSize(tr("Back to the heads")).x + ImGui::GetFontSize());
    if (ImGui::SmallButton(tr("Back to the heads"))) open = false;
    RecordLastItem(state, "compare.close");
    if (ready && !c.figure->panels.empty()) DrawZoomBar(state, state.heads.zoom, ShownTokens(state.heads.zoom, c.figure->panels[0].cols), "compare");
    if (!b) {
      SpinnerText(tr("running the model…"));
    } else if (!c.error.empty()) {
      ErrorText(c.error);
    } else if (c.figure) {
      HintText(c.figure->caption);  // what differs between A and B, and the scale
      if (const std::string note = NextTokenNote(state, c.a_run.get(), state.checkpoint.current() ? state.checkpoint.run.get() : nullptr);
          !note.empty())
        WrappedText(note);
      // Every head's drift in one line, readable however small the tiles' captions get.
      std::string heads;
      double mean = 0;
      for (size_t h = 0; h < c.comparison->drift.size(); ++h) {
        char one[40];
        std::snprintf(one, sizeof one, "%sh%zu %.3f", h ? " · " : "", h, c.comparison->drift[h]);
        heads += one;
        mean += c.comparison->drift[h] / double(c.comparison->drift.size());
      }
      WrappedText(trf("Jensen–Shannon drift A → B per head (nats): %s · mean %.3f", heads.c_str(), mean));
      if (!c.comparison->same_tokens) NoticeText(tr("A and B have different tokens: the axes name B's."));
      DrawGrid(state, c, *b);
    }
    if (forget) {
      c.a.reset();
      c.a_run.reset();
      c.a_ablation = {};
      open = false;
    }
  }
  ImGui::End();
  if (!open) c.open = false;
}

}  // namespace attnscope::gui
