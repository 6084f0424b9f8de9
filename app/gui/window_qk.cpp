// window_qk.cpp — "Why does this head attend here?" (issue 38 item 4): right-click a cell of the Heads view and
// choose it; a small panel beside the cell splits that cell's score into the contributions of the residual
// stream's parts at the query and at the key (model/qk_attribution.h), as a bar chart of the largest
// query part × key part entries (figure/qk_figure.h: the same bars as the saved figure), the rest summed as one
// bar, and the check that the parts sum to the score.
//
// The attribution is the pipeline's qk_attribution step, run by the compute worker with the Heads view's pass
// (ModelSource::qk): another cell costs the step alone, a newer cell cancels an older one. The panel follows the
// layer slider. A seeded scene or an attentions file has no weights to attribute through, and a linear/mixer
// layer or a masked key no score: the panel says so.
//
// Save PNG / SVG / CSV write the same bytes as `attnscope export --what qk-attribution` for the same cell.
//
// Sections: menu · saving · bars · panel
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include <GLFW/glfw3.h>

#include "attnscope/core/error.h"
#include "attnscope/figure/colormap.h"
#include "attnscope/figure/qk_figure.h"
#include "attnscope/io/file_io.h"
#include "core/user_path.h"
#include "gui/figure_copy.h"
#include "gui/i18n.h"
#include "gui/widgets.h"
#include "gui/windows.h"

namespace attnscope::gui {
namespace {

constexpr const char* kMenu = "##qk_menu";

// Where the panel is (the user may drag it) and its last height (it grows to its content). UI thread only; one
// panel per window.
struct Placement {
  ImVec2 pos;
  float height = 0;
  bool had_bars = false;  // the bars were shown last frame
  int front_frames = 0;   // frames left to bring the panel over the windows (a window focused as it opens, the
                          // Checkpoint window when --why opens a model, would hide it)
};
Placement placement;

// The panel's attribution when it is of the cell asked about (the layer on the slider), else null.
const model::QkAttribution* PanelAttribution(const AppState& state) {
  const QkPanelState& q = state.qk;
  const pipeline::Result* r = q.result.get();
  if (!r || !r->qk_attribution || r->request.model != state.checkpoint.model) return nullptr;
  const model::QkCell want{state.checkpoint.layer, q.head, q.query, q.key};
  return r->qk_attribution->cell == want ? r->qk_attribution.get() : nullptr;
}

// The engine's refusal of the cell asked about, when the newest result is of it.
std::string PanelError(const AppState& state) {
  const QkPanelState& q = state.qk;
  const pipeline::Result* r = q.result.get();
  if (!r || r->qk_attribution_error.empty() || r->request.model != state.checkpoint.model) return {};
  const pipeline::Request& rq = r->request;
  if (rq.layer != state.checkpoint.layer || rq.head != q.head || rq.query != q.query || rq.key != q.key) return {};
  return r->qk_attribution_error;
}

}  // namespace

// ---- menu --------------------------------------------------------------------------------------------

void QkCellMenu(AppState& state, int head, int query, int key, ImVec2 anchor) {
  QkPanelState& q = state.qk;
  q.menu_head = head;
  q.menu_query = query;
  q.menu_key = key;
  q.menu_anchor = anchor;
  ImGui::OpenPopup(kMenu);
}

void DrawQkMenu(AppState& state) {
  if (!ImGui::BeginPopup(kMenu)) return;
  QkPanelState& q = state.qk;
  ImGui::TextDisabled("%s", trf("head %d · query %d → key %d", q.menu_head, q.menu_query, q.menu_key).c_str());
  if (ImGui::MenuItem(tr("Why does this head attend here?"))) {
    q.open = true;
    q.placed = false;
    q.head = q.menu_head;
    q.query = q.menu_query;
    q.key = q.menu_key;
    q.anchor = q.menu_anchor;
    NoteEdit(state, Panel::heads);  // the worker runs the attribution with the heads' pass
  }
  RecordLastItem(state, "heads.why");
  ImGui::EndPopup();
}

// ---- saving ------------------------------------------------------------------------------------------
namespace {

void Save(AppState& state, const model::QkAttribution& a, const std::vector<std::string>& labels, ExportFormat format) {
  SaveToExports(
      state,
      [&](const std::string& stamp) {
        char name[128];
        std::snprintf(name, sizeof name, "attnscope-qk-L%d-H%d-q%d-k%d-%s.%s", a.cell.layer, a.cell.head, a.cell.query,
                      a.cell.key, stamp.c_str(), to_string(format));
        return std::string(name);
      },
      [&](const std::filesystem::path& path) {
        std::string bytes;
        if (format == ExportFormat::csv) {
          bytes = model::qk_attribution_csv(a);
        } else {
          ExportRequest request;
          request.format = format;
          request.words = UiFigureWords();
          bytes = render_qk_figure(QkFigureInput{&a, labels}, request).bytes;
        }
        write_file_atomic(path, bytes);
        return bytes.size();
      });
}

// ---- bars --------------------------------------------------------------------------------------------

// The bars of qk_figure.h: labels at the left, signed bars about one zero line on the diverging colours, values
// at the right. Each bar is in the layout record as "qk.bar.<n>".
struct BarTexts {
  std::vector<QkBar> bars;
  std::vector<std::string> labels, values;
  float label_w = 0, value_w = 0, gap = 0, area_w = 0;
  double neg = 0, pos = 0, largest = 0;
  float width() const { return label_w + gap + area_w + gap + value_w; }
};

BarTexts MeasureBars(const model::QkAttribution& a) {
  BarTexts t;
  t.bars = qk_bars(a, qk_figure_bars);
  const float font = ImGui::GetFontSize();
  t.gap = font * 0.5f;
  t.area_w = font * 12;
  for (const QkBar& b : t.bars) {
    t.labels.push_back(b.other_parts > 0 ? trf("other (%d parts)", b.other_parts) : b.label);
    char v[32];
    std::snprintf(v, sizeof v, "%.4g", b.value);
    t.values.emplace_back(v);
    t.label_w = std::max(t.label_w, ImGui::CalcTextSize(t.labels.back().c_str()).x);
    t.value_w = std::max(t.value_w, ImGui::CalcTextSize(t.values.back().c_str()).x);
    t.neg = std::max(t.neg, -b.value);
    t.pos = std::max(t.pos, b.value);
    t.largest = std::max(t.largest, std::abs(b.value));
  }
  return t;
}

void DrawBars(AppState& state, const model::QkAttribution& a) {
  const BarTexts t = MeasureBars(a);
  const std::vector<QkBar>& bars = t.bars;
  const std::vector<std::string>& labels = t.labels;
  const std::vector<std::string>& values = t.values;
  const float label_w = t.label_w, value_w = t.value_w, gap = t.gap, area_w = t.area_w;
  const double neg = t.neg, pos = t.pos, largest = t.largest;
  const float row_h = ImGui::GetTextLineHeightWithSpacing() + 2;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const float area_x = origin.x + label_w + gap;
  const double span = neg + pos > 0 ? neg + pos : 1.0;
  const float zero_x = area_x + float(double(area_w) * neg / span);
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  const ImVec2 s = state.framebuffer_scale;
  for (size_t i = 0; i < bars.size(); ++i) {
    const float y = origin.y + float(i) * row_h;
    const float lw = ImGui::CalcTextSize(labels[i].c_str()).x;
    draw->AddText(ImVec2(area_x - gap - lw, y + 1), text, labels[i].c_str());
    draw->AddText(ImVec2(area_x + area_w + gap, y + 1), text, values[i].c_str());
    const float length = std::max(1.0f, float(double(area_w) * std::abs(bars[i].value) / span));
    const float x0 = bars[i].value < 0 ? zero_x - length : zero_x;
    const double t = std::min(1.0, std::abs(bars[i].value) / std::max(largest, 1e-30));
    const double shift = 0.2 + 0.3 * t;
    const Rgba c = colormap_lookup(Colormap::diverging, float(bars[i].value < 0 ? 0.5 - shift : 0.5 + shift));
    const ImVec2 bmin(x0, y + 2), bmax(x0 + length, y + row_h - 2);
    draw->AddRectFilled(bmin, bmax, IM_COL32(c.r, c.g, c.b, 255));
    state.layout.widgets.push_back({"qk.bar." + std::to_string(i), ImVec2(bmin.x * s.x, bmin.y * s.y),
                                    ImVec2(bmax.x * s.x, bmax.y * s.y)});
    if (ImGui::IsMouseHoveringRect(ImVec2(origin.x, y), ImVec2(area_x + area_w + gap + value_w, y + row_h)))
      ImGui::SetTooltip("%s", bars[i].other_parts > 0
                                  ? trf("the sum of the other %d query part × key part entries", bars[i].other_parts).c_str()
                                  : tr("what this query part contributes through this key part: the score is the sum "
                                       "of all such entries"));
  }
  const float height = row_h * float(bars.size());
  draw->AddRectFilled(ImVec2(zero_x, origin.y), ImVec2(zero_x + 1, origin.y + height), ImGui::GetColorU32(ImGuiCol_TextDisabled));
  ImGui::Dummy(ImVec2(label_w + gap + area_w + gap + value_w, height));
  RecordLastItem(state, "qk.bars");
}

}  // namespace

// ---- panel -------------------------------------------------------------------------------------------

void DrawQkPanel(AppState& state) {
  QkPanelState& q = state.qk;
  if (!q.open) return;
  const float font = ImGui::GetFontSize();
  const model::QkAttribution* a = PanelAttribution(state);
  // The content's width, known before the window is made (its sentences wrap at it), so that the panel is placed
  // whole on screen in the frame its bars first show: beside the cell (or, opened without a click, at the
  // view's right), moved in from the screen's edges, and left where the user drags it.
  float content_w = font * 24;
  if (a) {
    const FigureWords& words = UiFigureWords();
    content_w = std::max({content_w, MeasureBars(*a).width(), ImGui::CalcTextSize(qk_score_line(*a, words).c_str()).x,
                          ImGui::CalcTextSize(qk_sum_line(*a, words).c_str()).x});
  }
  const ImGuiStyle& style = ImGui::GetStyle();
  Placement& p = placement;
  const ImVec2 size(content_w + style.WindowPadding.x * 2, std::max(p.height, font * 6));
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const ImVec2 lo = vp->WorkPos, hi(vp->WorkPos.x + vp->WorkSize.x, vp->WorkPos.y + vp->WorkSize.y);
  ImVec2 want = p.pos;
  if (!q.placed)
    want = q.anchor.x >= 0 ? ImVec2(q.anchor.x + font, q.anchor.y + font)
                           : ImVec2(hi.x - font - size.x, lo.y + font * 8);  // opened without a click (--why)
  const ImVec2 fit(std::clamp(want.x, lo.x, std::max(lo.x, hi.x - size.x)), std::clamp(want.y, lo.y, std::max(lo.y, hi.y - size.y)));
  if (!q.placed || fit.x != p.pos.x || fit.y != p.pos.y) ImGui::SetNextWindowPos(fit, ImGuiCond_Always);
  ImGui::SetNextWindowContentSize(ImVec2(content_w, 0));
  bool open = true;
  const std::string title = trf("Why head %d attends here", q.head) + "###qk_panel";
  if (ImGui::Begin(title.c_str(), &open, ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoCollapse |
                                             ImGuiWindowFlags_NoSavedSettings)) {
    p.pos = ImGui::GetWindowPos();
    if (!q.placed || (a != nullptr) != p.had_bars) p.front_frames = 3;  // opened, or its bars came or went
    p.had_bars = a != nullptr;
    if (p.front_frames > 0 && !ImGui::IsPopupOpen("", ImGuiPopupFlags_AnyPopupId)) {
      ImGui::BringWindowToDisplayFront(ImGui::GetCurrentWindow());
      --p.front_frames;
    }
    q.placed = true;
    RecordLastItem(state, "qk.panel");
    const CheckpointWindowState& c = state.checkpoint;
    // The checkpoint's tokens; without one (a seeded scene, an attentions file) the heads' own labels.
    const std::vector<std::string>* labels = c.model && q.result && q.result->tokens ? &q.result->tokens->labels
                                             : state.analysis && state.analysis->attention ? &state.analysis->attention->labels
                                                                                           : nullptr;
    const auto token = [&](int t) {
      return labels && size_t(t) < labels->size() ? state.fonts->display_label((*labels)[size_t(t)]) : std::string();
    };
    if (c.is_open()) ImGui::TextUnformatted(trf("layer %d · head %d", c.layer, q.head).c_str());
    ImGui::TextUnformatted(trf("query %d: %s", q.query, token(q.query).c_str()).c_str());
    ImGui::TextUnformatted(trf("key %d: %s", q.key, token(q.key).c_str()).c_str());
    ImGui::Separator();
    const std::string error = PanelError(state);
    if (!c.model) {
      NoticeText(c.attentions ? tr("Why a head attends is worked out through a model's weights; an attentions file "
                                   "has only the maps. Open the checkpoint itself to ask.")
                              : tr("Why a head attends is worked out through a trained model's weights; these heads "
                                   "are seeded. Open a checkpoint (or the shipped induction model) to ask."));
    } else if (state.analysis && state.analysis->attention && state.analysis->attention->linear &&
               c.run && c.run->layer == c.layer) {
      NoticeText(tr("This layer has no softmax scores (a linear or mixer layer): there is no q·k score to split."));
    } else if (!error.empty()) {
      // The two refusals a teacher meets by clicking, in the window's language; the engine's reason under them.
      if (error.find("is not seen by query") != std::string::npos)
        NoticeText(tr("This key is masked for this query (after it, or outside its window): the head gives it no "
                      "score to explain."));
      else if (error.find("no softmax scores") != std::string::npos)
        NoticeText(tr("This layer has no softmax scores (a linear or mixer layer): there is no q·k score to split."));
      ErrorText(std::string(tr("Error: ")) + error);
    } else if (!a) {
      ImGui::TextDisabled("%s", tr("computing…"));
    } else {
      const FigureWords& words = UiFigureWords();
      ImGui::TextUnformatted(qk_score_line(*a, words).c_str());
      RecordLastItem(state, "qk.score");
      if (a->before_softcap)
        HintText(tr("Gemma 2 caps its scores (cap·tanh(s/cap)): the parts add up to the score before the cap."));
      HintText(tr("query part × key part: what each part of the stream at the query contributes through each part "
                  "at the key (norms frozen at their values)"));
      DrawBars(state, *a);
      ImGui::TextUnformatted(qk_sum_line(*a, words).c_str());
      RecordLastItem(state, "qk.sum");
      const std::vector<std::string> none;
      SaveFigureButtons(state, "qk", true, [&](ExportFormat format) { Save(state, *a, labels ? *labels : none, format); });
      // The chart as Save PNG draws it, at the Export panel's scale, onto the clipboard (the result is shared and
      // immutable: the render thread holds it).
      ExportRequest copy;
      copy.format = ExportFormat::png;
      copy.scale = state.exporter.scale;
      copy.words = UiFigureWords();
      CopyFigureButton(state, "qk.copy_figure",
                       [attribution = state.qk.result->qk_attribution, names = labels ? *labels : none, copy] {
                         return render_qk_figure(QkFigureInput{attribution.get(), names}, copy);
                       });
    }
    // The height this content needs: where the next frame places the panel. The window grows to it only in the
    // next frame, so one is asked for at once (else it would wait for the pointer, partly off screen).
    const float needed = ImGui::GetCursorPosY() - ImGui::GetStyle().ItemSpacing.y + ImGui::GetStyle().WindowPadding.y;
    if (std::abs(needed - ImGui::GetWindowSize().y) > 0.5f) glfwPostEmptyEvent();
    p.height = needed;
  }
  ImGui::End();
  if (!open) {
    q.open = false;
    NoteEdit(state, Panel::heads);  // the worker stops attributing
  }
}

}  // namespace attnscope::gui
