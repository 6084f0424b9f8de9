// window_conv.cpp — the Convolution window: a K×K convolution as K² relative-position heads.
//
// Head h ↔ Δ_h over {−⌊K/2⌋…⌊K/2⌋}², output weight W_h = kernel[Δ_h], every head with width α. The
// window shows the input, the MHSA output Σ_h W_h·P_h·X beside the true (zero-padded) convolution,
// their difference, the largest interior and border error, and the error-versus-α curve the engine
// measured. Kernel choice (presets or custom numbers), α and padding keys edit the scene.
//
// Sections: kernel controls · error curve · window
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "attnscope/relpos/conv_emulation.h"
#include "gui/figure_copy.h"
#include "gui/i18n.h"
#include "gui/token_sets.h"
#include "gui/widgets.h"
#include "gui/windows.h"

namespace attnscope::gui {
namespace {

// ---- kernel controls ---------------------------------------------------------------------------------

bool DrawKernelControls(AppState& state, const ConvAnalysis* shown) {
  ConvSettings& c = state.scene.conv;
  ConvWindowState& w = state.conv;
  bool edited = false;
  ImGui::PushItemWidth(-ImGui::CalcTextSize((std::string(tr("kernel")) + " ").c_str()).x - ImGui::GetStyle().ItemInnerSpacing.x);
  if (ImGui::BeginCombo(tr("kernel"), c.kernel == "custom" ? tr("custom") : c.kernel.c_str())) {
    for (const std::string& name : kernel_preset_names())
      if (ImGui::Selectable(name.c_str(), c.kernel == name)) {
        c.kernel = name;
        c.custom.clear();
        edited = true;
      }
    if (ImGui::Selectable(tr("custom"), c.kernel == "custom")) {
      // Start from the kernel on screen so the numbers can be nudged.
      c.kernel = "custom";
      c.custom.clear();
      if (shown)
        for (int i = 0; i < shown->kernel.size; ++i)
          for (int j = 0; j < shown->kernel.size; ++j) c.custom.push_back(shown->kernel.weights(i, j));
      if (c.custom.size() != 9 && c.custom.size() != 25) c.custom = {0, 0, 0, 0, 1, 0, 0, 0, 0};
      edited = true;
    }
    ImGui::EndCombo();
  }
  double alpha = c.alpha;
  if (SliderDoubleFinite("α", &alpha, 0.01, 1000.0, "%.3g", w.input_error, true)) {
    c.alpha = alpha;
    edited = true;
  }
  ImGui::PopItemWidth();
  HelpMarker(tr("Every head's sharpness. As α grows each head looks at exactly one neighbour and the MHSA output "
                "becomes the convolution; the gap shrinks like exp(−α)."));
  edited |= ImGui::Checkbox(tr("padding keys (zero padding)"), &state.scene.relpos.pad_keys);
  HelpMarker(tr("Without padding keys a border cell's heads cannot look outside the grid, so the border cannot match a "
                "zero-padded convolution; with them it can."));

  // The kernel's numbers: editable when custom.
  const int k = c.kernel == "custom" ? (c.custom.size() == 25 ? 5 : 3) : (shown ? shown->kernel.size : 3);
  if (c.kernel == "custom") {
    int size = k;
    ImGui::TextUnformatted("K");
    ImGui::SameLine();
    if (ImGui::RadioButton("3×3", size == 3) && size != 3) size = 3;
    ImGui::SameLine();
    if (ImGui::RadioButton("5×5", size == 5) && size != 5) size = 5;
    if (size != k) {
      c.custom.assign(size_t(size * size), 0.0);
      c.custom[size_t(size * size / 2)] = 1.0;
      edited = true;
    }
  }
  if (c.kernel == "custom" || shown) {
    const float cell_w = ImGui::GetFontSize() * 3.3f;
    ImGui::TextDisabled("%s", tr("weights W_h = kernel[Δ_h]"));
    for (int i = 0; i < k; ++i)
      for (int j = 0; j < k; ++j) {
        if (j > 0) ImGui::SameLine();
        ImGui::PushID(i * k + j);
        ImGui::SetNextItemWidth(cell_w);
        if (c.kernel == "custom" && int(c.custom.size()) == k * k) {
          double v = c.custom[size_t(i * k + j)];
          if (ImGui::InputDouble("##w", &v, 0.0, 0.0, "%.3g")) {
            if (std::isfinite(v)) {
              c.custom[size_t(i * k + j)] = v;
              w.input_error.clear();
              edited = true;
            } else {
              w.input_error = tr("kernel weights must be finite numbers; the value was kept");
            }
          }
        } else if (shown && i < shown->kernel.size && j < shown->kernel.size) {
          ImGui::BeginDisabled();
          double v = shown->kernel.weights(i, j);
          ImGui::InputDouble("##w", &v, 0.0, 0.0, "%.3g", ImGuiInputTextFlags_ReadOnly);
          ImGui::EndDisabled();
        }
        ImGui::PopID();
      }
  }
  ErrorText(w.input_error);
  return edited;
}

// ---- error curve -------------------------------------------------------------------------------------

// max |MHSA − conv| against α on log–log axes, interior and border, with the current α marked.
void DrawErrorCurve(const ConvAnalysis& c, ImVec2 size) {
  if (c.curve.size() < 2 || size.x < 60 || size.y < 60) return;
  const float font = ImGui::GetFontSize();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::Dummy(size);
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const float left = font * 4.2f, bottom = font * 2.6f, top = font * 1.6f, right = font * 1.8f;
  const ImVec2 min(origin.x + left, origin.y + top), max(origin.x + size.x - right, origin.y + size.y - bottom);
  constexpr double floor_error = 1e-16;  // below double precision: drawn on the axis
  const double x0 = std::log10(c.curve.front().alpha), x1 = std::log10(c.curve.back().alpha);
  double y_hi = -16;
  for (const ConvCurvePoint& p : c.curve) y_hi = std::max({y_hi, std::log10(std::max(p.interior, floor_error)),
                                                           std::log10(std::max(p.border, floor_error))});
  const double y0 = -16, y1 = std::ceil(y_hi + 0.01);
  auto to_screen = [&](double alpha, double error) {
    const double x = (std::log10(alpha) - x0) / (x1 - x0);
    const double y = (std::log10(std::max(error, floor_error)) - y0) / (y1 - y0);
    return ImVec2(min.x + float(x) * (max.x - min.x), max.y - float(y) * (max.y - min.y));
  };
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), grid = ImGui::GetColorU32(ImGuiCol_Border);
  draw->AddRectFilled(min, max, ImGui::GetColorU32(ImGuiCol_FrameBg));
  // Decades on both axes; a decade's number is left out where it would run into the last one drawn (a
  // narrow plot at a large UI scale).
  float last_right = -FLT_MAX;
  for (int e = int(std::ceil(x0)); e <= int(std::floor(x1)); ++e) {
    const float x = to_screen(std::pow(10.0, e), 1).x;
    draw->AddLine(ImVec2(x, min.y), ImVec2(x, max.y), grid);
    char label[16];
    std::snprintf(label, sizeof label, e >= 0 ? "%.0f" : "%g", std::pow(10.0, e));
    const float w = ImGui::CalcTextSize(label).x;
    if (x - w * 0.5f < last_right + font * 0.5f) continue;
    draw->AddText(ImVec2(x - w * 0.5f, max.y + font * 0.2f), text, label);
    last_right = x + w * 0.5f;
  }
  const int step = std::max(1, int((y1 - y0) / 6));
  for (int e = int(y0); e <= int(y1); e += step) {
    const float y = to_screen(1, std::pow(10.0, e)).y;
    draw->AddLine(ImVec2(min.x, y), ImVec2(max.x, y), grid);
    char label[16];
    std::snprintf(label, sizeof label, "1e%d", e);
    const float w = ImGui::CalcTextSize(label).x;
    draw->AddText(ImVec2(min.x - w - font * 0.3f, y - font * 0.5f), text, label);
  }
  const ImU32 interior = IM_COL32(0, 114, 178, 255), border = IM_COL32(213, 94, 0, 255);
  for (size_t i = 1; i < c.curve.size(); ++i) {
    const ConvCurvePoint &a = c.curve[i - 1], &b = c.curve[i];
    draw->AddLine(to_screen(a.alpha, a.interior), to_screen(b.alpha, b.interior), interior, 2.5f);
    if (c.border_cells > 0) draw->AddLine(to_screen(a.alpha, a.border), to_screen(b.alpha, b.border), border, 2.5f);
  }
  // The current α.
  if (c.alpha > 0) {
    const float x = std::clamp(to_screen(c.alpha, 1).x, min.x, max.x);
    draw->AddLine(ImVec2(x, min.y), ImVec2(x, max.y), text, 1.5f);
  }
  // The title over the whole width, shortened with "…" where even that is too narrow.
  draw->AddText(origin, text, Ellipsize(tr("max |MHSA − conv| against α (log–log)"), size.x).c_str());
  const char* x_label = "α";
  draw->AddText(ImVec2((min.x + max.x) * 0.5f, max.y + font * 1.3f), text, x_label);
  // Legend.
  // Legend bottom-left: small α has large errors, so the curves stay high there.
  const ImVec2 legend(min.x + font * 0.6f, max.y - font * (c.border_cells > 0 ? 2.6f : 1.4f));
  draw->AddLine(legend, ImVec2(legend.x + font * 1.2f, legend.y + font * 0.5f), interior, 2.5f);
  // The legend's words inside the plot ("…" only when the plot is narrower than they are).
  const float legend_room = max.x - (legend.x + font * 1.5f);
  draw->AddText(ImVec2(legend.x + font * 1.5f, legend.y - font * 0.1f), text, Ellipsize(tr("interior"), legend_room).c_str());
  if (c.border_cells > 0) {
    const ImVec2 l2(legend.x, legend.y + font * 1.2f);
    draw->AddLine(l2, ImVec2(l2.x + font * 1.2f, l2.y + font * 0.5f), border, 2.5f);
    draw->AddText(ImVec2(l2.x + font * 1.5f, l2.y - font * 0.1f), text, Ellipsize(tr("border"), legend_room).c_str());
  }
  // Hover: the nearest measured point.
  if (ImGui::IsMouseHoveringRect(min, max)) {
    const float mx = ImGui::GetIO().MousePos.x;
    size_t best = 0;
    for (size_t i = 0; i < c.curve.size(); ++i)
      if (std::fabs(to_screen(c.curve[i].alpha, 1).x - mx) < std::fabs(to_screen(c.curve[best].alpha, 1).x - mx)) best = i;
    const ConvCurvePoint& p = c.curve[best];
    ImGui::SetTooltip("%s", trf("α = %s\ninterior: %s\nborder: %s", FormatValue(float(p.alpha)).c_str(),
                              FormatValue(float(p.interior)).c_str(), FormatValue(float(p.border)).c_str())
                              .c_str());
  }
}

}  // namespace

// ---- window ------------------------------------------------------------------------------------------

void DrawConvWindow(AppState& state) {
  PlaceNextWindow(state, Slot::view);
  if (!ImGui::Begin(WindowTitle("Convolution as attention", "conv").c_str(), nullptr, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse)) {
    ImGui::End();
    return;
  }
  state.layout.view = to_string(View::conv);
  const float font = ImGui::GetFontSize();
  TokenSetNotDrawnNote(state, "conv");  // also over "works on a 2D grid" (a set is of a sentence's tokens)
  if (CheckpointHidesOwnHeads(state) ||
      WrongInputForView(state, true, tr("Convolution works on a 2D grid; the input is a sentence or a tensor."), Panel::conv)) {
    ImGui::End();
    return;
  }
  const ConvAnalysis* shown = state.analysis ? state.analysis->conv.get() : nullptr;

  // Scrolls sideways when the view is narrow (side panels open): a checkbox's label cannot wrap.
  ImGui::BeginChild("controls", ImVec2(std::min(font * 16.0f, ImGui::GetContentRegionAvail().x * 0.35f), 0), false,
                    ImGuiWindowFlags_HorizontalScrollbar);
  BusyIndicator(state);
  CopyFigureButton(state, false);
  if (DrawKernelControls(state, shown)) NoteEdit(state, Panel::conv);
  ErrorText(ErrorFor(state, Panel::conv));
  if (shown) {
    SectionHeader(tr("Error"));
    ImGui::TextUnformatted(trf("%d×%d kernel → %d heads", shown->kernel.size, shown->kernel.size, int(shown->heads.size())).c_str());
    ImGui::TextUnformatted(trf("interior: %s", FormatValue(float(shown->max_abs_interior)).c_str()).c_str());
    ImGui::SameLine();
    ImGui::TextDisabled("%s", trf("(%d cells)", shown->interior_cells).c_str());
    ImGui::TextUnformatted(trf("border:   %s", FormatValue(float(shown->max_abs_border)).c_str()).c_str());
    ImGui::SameLine();
    ImGui::TextDisabled("%s", trf("(%d cells)", shown->border_cells).c_str());
    HintText(tr("largest |MHSA − conv| over each set"));
  }
  ImGui::EndChild();
  ImGui::SameLine();

  ImGui::BeginChild("images", ImVec2(0, 0), false, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  if (!state.error.empty())
    ErrorText(std::string(shown ? tr("Showing the last valid settings: ") : tr("Nothing to show: ")) + state.error);
  const Pictures* pictures = state.pictures.get();
  if (!shown || !pictures || pictures->conv_input.width == 0) {
    if (state.error.empty()) ImGui::TextDisabled("%s", tr("computing…"));
    ImGui::EndChild();
    ImGui::End();
    return;
  }
  Textures& tex = state.textures;
  ImGui::TextWrapped("%s", GridNote(state, shown->input_note).c_str());
  ZoomState& z = state.conv.zoom;
  const Shown part = ShownCells(z, shown->rows, shown->cols);
  DrawZoomBar(state, z, part, "conv");
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  // As tall as three square images across the width need, at most half the height.
  const float top_h = std::round(std::min(avail.y * 0.52f, (avail.x - font * 14.0f) / 3.0f + font * 4.5f));

  // Top: input, MHSA output and convolution in gray.
  HeatmapGridSpec three;
  three.count = 3;
  three.rows = shown->rows;
  three.cols = shown->cols;
  three.texture = [&tex](int i) { return (i == 0 ? tex.conv_input : i == 1 ? tex.conv_mhsa : tex.conv_true).id(); };
  three.captions = [](int i, int form) {
    const char* full[] = {tr("input X"), "MHSA Σ_h W_h·P_h·X", tr("convolution")};
    const char* brief[] = {tr("input"), "MHSA", tr("conv")};
    return std::string(form == 0 ? full[i] : brief[i]);
  };
  three.caption_forms = 2;
  three.frame_color = [](int) { return IM_COL32(150, 150, 150, 255); };
  // One bar per image: the input has its own scale, MHSA and convolution share theirs.
  three.shared_scale = false;
  three.range = [pictures](int i) { return (i == 0 ? pictures->conv_input : i == 1 ? pictures->conv_mhsa : pictures->conv_true).range; };
  three.colormap = Colormap::grayscale;
  three.value_name = TrKey("value");
  three.columns = 3;
  std::vector<std::string> no_rows, no_cols;
  ApplyShown(three, part, z, no_rows, no_cols);
  // Numbers in cells: each image's values, read against its own colours.
  if (z.numbers)
    three.cell_number = [shown, pictures, part](int i, int row, int col, std::string& text, ImU32& color) {
      const Mat& m = i == 0 ? shown->input : i == 1 ? shown->mhsa : shown->conv;
      const Picture& p = i == 0 ? pictures->conv_input : i == 1 ? pictures->conv_mhsa : pictures->conv_true;
      const int r = part.row + row, c = part.col + col;
      const Rgba* under = p.cell(r, c);
      return under && r < m.rows() && c < m.cols() && CellNumber(float(m(r, c)), *under, text, color);
    };
  ImGui::BeginChild("three", ImVec2(avail.x, top_h), false, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  HeatmapGridResult g3 = DrawHeatmapGrid(three, state.conv.gray_bar, state.ui_scale, nullptr);
  ImGui::EndChild();

  // Bottom: the difference on a diverging scale, and the error curve beside it.
  HeatmapGridSpec diff = three;
  diff.count = 1;
  diff.texture = [&tex](int) { return tex.conv_difference.id(); };
  diff.captions = [](int, int) { return std::string(tr("MHSA − conv")); };
  diff.caption_forms = 1;
  diff.shared_scale = true;
  diff.shared_range = pictures->conv_difference.range;
  diff.colormap = Colormap::diverging;
  diff.value_name = TrKey("difference");
  diff.columns = 1;
  diff.max_cell = g3.cell;  // the same cell size as the images above
  if (z.numbers)
    diff.cell_number = [shown, pictures, part](int, int row, int col, std::string& text, ImU32& color) {
      const int r = part.row + row, c = part.col + col;
      const Rgba* under = pictures->conv_difference.cell(r, c);
      return under && r < shown->difference.rows() && c < shown->difference.cols() &&
             CellNumber(float(shown->difference(r, c)), *under, text, color);
    };
  const float bottom_h = ImGui::GetContentRegionAvail().y;
  ImGui::BeginChild("difference", ImVec2(std::min(avail.x * 0.4f, bottom_h + font * 6.0f), bottom_h), false,
                    ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  HeatmapGridResult g1 = DrawHeatmapGrid(diff, state.conv.diff_bar, state.ui_scale, nullptr);
  ImGui::EndChild();
  RecordShownMaps(state, g3, part);
  RecordShownMaps(state, g1, part);
  // One zoom for all four images: the wheel over any of them zooms them all.
  for (HeatmapGridResult* g : {&g3, &g1}) {
    ZoomAndPan(z, part, *g, true);
    ToWholePicture(*g, part);
    if (g->hovered >= 0) {
      const int r = g->row, c = g->col;
      ImGui::SetTooltip("%s", (trf("cell (%d, %d)\ninput: %s\nMHSA: %s\nconv: %s\ndifference: %s", r, c,
                        FormatValue(shown->input(r, c)).c_str(), FormatValue(shown->mhsa(r, c)).c_str(),
                        FormatValue(shown->conv(r, c)).c_str(), FormatValue(shown->difference(r, c)).c_str()) +
                               "\n" + ZoomHint(false)).c_str());
    }
  }
  ImGui::SameLine();
  DrawErrorCurve(*shown, ImGui::GetContentRegionAvail());
  ImGui::EndChild();
  ImGui::End();
}

}  // namespace attnscope::gui
