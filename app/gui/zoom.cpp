// zoom.cpp — zoom, pan and a token range for a heatmap view (zoom.h).
//
// Sections: what is shown · into the spec · the pointer · toolbar · numbers
#include "gui/zoom.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "gui/app_state.h"
#include "gui/i18n.h"
#include "gui/widgets.h"

namespace attnscope::gui {

// ---- what is shown ---------------------------------------------------------------------------------

namespace {

// The window within the range: as many columns as the zoom asks (every one when not zoomed), rows in the
// range's proportion, from the zoom's first row and column kept inside the range.
void FillWindow(Shown& s, const ZoomState& z) {
  const int nc = s.col_hi - s.col_lo + 1, nr = s.row_hi - s.row_lo + 1;
  s.zoomed = z.zoom_cols > 0 && z.zoom_cols < nc;
  s.cols = s.zoomed ? z.zoom_cols : nc;
  s.rows = s.zoomed ? std::clamp(int(std::lround(double(s.cols) * nr / nc)), 1, nr) : nr;
  s.row = std::clamp(s.zoomed ? z.zoom_row : s.row_lo, s.row_lo, s.row_hi - s.rows + 1);
  s.col = std::clamp(s.zoomed ? z.zoom_col : s.col_lo, s.col_lo, s.col_hi - s.cols + 1);
}

}  // namespace

Shown ShownTokens(ZoomState& z, int tokens, int rows) {
  if (rows < 0) rows = tokens;
  if (z.token_last >= tokens || z.token_first < 0 || (z.token_last >= 0 && z.token_first > z.token_last)) {
    z.token_first = 0;  // the input changed length: back to every token
    z.token_last = -1;
    z.zoom_cols = 0;
  }
  if (z.axis_from >= tokens || z.axis_to >= tokens) z.axis_from = z.axis_to = -1;
  Shown s;
  s.token_axes = true;
  s.texture_rows = rows;
  s.texture_cols = tokens;
  s.col_lo = z.token_last < 0 ? 0 : z.token_first;
  s.col_hi = z.token_last < 0 ? tokens - 1 : z.token_last;
  s.row_lo = rows == tokens ? s.col_lo : 0;
  s.row_hi = rows == tokens ? s.col_hi : rows - 1;
  FillWindow(s, z);
  return s;
}

Shown ShownCells(ZoomState& z, int rows, int cols) {
  Shown s;
  s.texture_rows = rows;
  s.texture_cols = cols;
  s.row_hi = rows - 1;
  s.col_hi = cols - 1;
  FillWindow(s, z);
  return s;
}

// ---- into the spec ---------------------------------------------------------------------------------

void ApplyShown(HeatmapGridSpec& spec, const Shown& shown, const ZoomState& z, std::vector<std::string>& row_labels,
                std::vector<std::string>& col_labels) {
  spec.texture_rows = shown.texture_rows;
  spec.texture_cols = shown.texture_cols;
  spec.rows = shown.rows;
  spec.cols = shown.cols;
  spec.first_row = shown.row;
  spec.first_col = shown.col;
  spec.drag_pans = shown.zoomed;
  const bool part = shown.rows < shown.texture_rows || shown.cols < shown.texture_cols;
  if (spec.row_labels && int(spec.row_labels->size()) == shown.texture_rows) {
    row_labels.assign(spec.row_labels->begin() + shown.row, spec.row_labels->begin() + shown.row + shown.rows);
    spec.row_labels = &row_labels;
  }
  if (spec.col_labels && int(spec.col_labels->size()) == shown.texture_cols) {
    col_labels.assign(spec.col_labels->begin() + shown.col, spec.col_labels->begin() + shown.col + shown.cols);
    spec.col_labels = &col_labels;
  }
  if (part && (spec.row_labels || spec.col_labels)) {  // the widest of the labels shown (keys stand upright when they fit)
    spec.labels_extent = 0;
    for (const std::vector<std::string>* axis : {spec.row_labels, spec.col_labels})
      if (axis)
        for (const std::string& l : *axis) spec.labels_extent = std::max(spec.labels_extent, ImGui::CalcTextSize(l.c_str()).x);
  }
  const int q = spec.selected_row;
  spec.selected_row = q >= shown.row && q < shown.row + shown.rows ? q - shown.row : -1;
  if (spec.marked_cell >= 0 && shown.texture_cols > 0) {
    const int r = spec.marked_cell / shown.texture_cols - shown.row, c = spec.marked_cell % shown.texture_cols - shown.col;
    spec.marked_cell = r >= 0 && r < shown.rows && c >= 0 && c < shown.cols ? r * shown.cols + c : -1;
  }
  spec.key_axis_drag = shown.token_axes && spec.col_labels != nullptr;
  if (z.axis_from >= 0 && z.axis_to >= 0) {
    spec.highlight_first = std::clamp(std::min(z.axis_from, z.axis_to) - shown.col, 0, shown.cols - 1);
    spec.highlight_last = std::clamp(std::max(z.axis_from, z.axis_to) - shown.col, 0, shown.cols - 1);
  }
}

// ---- the pointer -----------------------------------------------------------------------------------

bool ZoomAndPan(ZoomState& z, const Shown& shown, const HeatmapGridResult& hit, bool double_click_resets) {
  bool range_changed = false;
  // A drag along the key labels: from the key pressed on to the one released over, both included.
  if (hit.axis_pressed && hit.axis_col >= 0) {
    z.axis_from = z.axis_to = shown.col + hit.axis_col;
  } else if (z.axis_from >= 0 && (hit.axis_held || hit.axis_released) && hit.axis_col >= 0) {
    z.axis_to = shown.col + hit.axis_col;
  }
  if (z.axis_from >= 0 && (hit.axis_held || hit.axis_released))
    ImGui::SetTooltip("%s", trf("tokens %d–%d", std::min(z.axis_from, z.axis_to), std::max(z.axis_from, z.axis_to)).c_str());
  else if (hit.axis_col >= 0)
    ImGui::SetTooltip("%s", tr("drag along the key labels to show only those tokens"));
  if (hit.axis_released && z.axis_from >= 0) {
    const int a = std::min(z.axis_from, z.axis_to), b = std::max(z.axis_from, z.axis_to);
    if (b > a) {  // a press and release on one label picks nothing
      const bool every = a == 0 && b == shown.texture_cols - 1;
      z.token_first = every ? 0 : a;
      z.token_last = every ? -1 : b;
      z.zoom_cols = 0;
      z.range_error.clear();
      range_changed = true;
    }
    z.axis_from = z.axis_to = -1;
  } else if (z.axis_from >= 0 && !hit.axis_held && !ImGui::IsMouseDown(ImGuiMouseButton_Left)) {
    z.axis_from = z.axis_to = -1;  // the drag ended where the band was not drawn (the view changed)
  }

  // The wheel zooms about the pointer: the cell under it stays under it.
  const int nc = shown.col_hi - shown.col_lo + 1, nr = shown.row_hi - shown.row_lo + 1;
  if (hit.hovered >= 0 && hit.wheel != 0) {
    int next = int(std::lround(float(shown.cols) * std::pow(0.8f, hit.wheel)));
    if (hit.wheel > 0 && next >= shown.cols) next = shown.cols - 1;
    if (hit.wheel < 0 && next <= shown.cols) next = shown.cols + 1;
    next = std::clamp(next, 1, nc);
    const int next_rows = std::clamp(int(std::lround(double(next) * nr / nc)), 1, nr);
    const float fx = std::clamp(hit.pointer_cells.x, 0.0f, float(shown.cols));
    const float fy = std::clamp(hit.pointer_cells.y, 0.0f, float(shown.rows));
    z.zoom_col = int(std::lround(float(shown.col) + fx - fx / float(shown.cols) * float(next)));
    z.zoom_row = int(std::lround(float(shown.row) + fy - fy / float(shown.rows) * float(next_rows)));
    z.zoom_cols = next >= nc ? 0 : next;
    z.zoom_col = std::clamp(z.zoom_col, shown.col_lo, shown.col_hi - next + 1);
    z.zoom_row = std::clamp(z.zoom_row, shown.row_lo, shown.row_hi - next_rows + 1);
  }
  if (double_click_resets && hit.hovered >= 0 && hit.double_clicked) z.zoom_cols = 0;
  if (!shown.zoomed) return range_changed;
  // A drag pans a zoomed view by the cells dragged.
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  if (hit.pressed) {
    z.drag_from = mouse;
    z.drag_row = shown.row;
    z.drag_col = shown.col;
  } else if (hit.held && hit.cell > 0) {
    z.zoom_col = std::clamp(z.drag_col - int(std::lround((mouse.x - z.drag_from.x) / hit.cell)), shown.col_lo,
                            shown.col_hi - shown.cols + 1);
    z.zoom_row = std::clamp(z.drag_row - int(std::lround((mouse.y - z.drag_from.y) / hit.cell)), shown.row_lo,
                            shown.row_hi - shown.rows + 1);
  }
  return range_changed;
}

void ToWholePicture(HeatmapGridResult& hit, const Shown& shown) {
  if (hit.hovered < 0) return;
  hit.row += shown.row;
  hit.col += shown.col;
}

// ---- toolbar ---------------------------------------------------------------------------------------

namespace {

void ResetZoomButton(AppState& state, ZoomState& z, const Shown& shown, const std::string& id) {
  // Always there (greyed out until the wheel zooms), so that zooming moves nothing on the toolbar.
  SameLineIfFits(ImGui::CalcTextSize(tr("reset zoom")).x + ImGui::GetStyle().FramePadding.x * 2);
  ImGui::BeginDisabled(!shown.zoomed);
  if (ImGui::SmallButton((std::string(tr("reset zoom")) + "##" + id).c_str())) z.zoom_cols = 0;
  ImGui::EndDisabled();
  RecordLastItem(state, id + ".reset_zoom");
}

void NumbersBox(AppState& state, ZoomState& z, const std::string& id) {
  ImGui::Checkbox((std::string(tr("numbers in cells")) + "##" + id).c_str(), &z.numbers);
  RecordLastItem(state, id + ".numbers");
}

}  // namespace

void DrawZoomBar(AppState& state, ZoomState& z, const Shown& shown, const std::string& id) {
  const ImGuiStyle& style = ImGui::GetStyle();
  if (!shown.token_axes) {
    SameLineIfFits(ImGui::CalcTextSize(tr("numbers in cells")).x + ImGui::GetFrameHeight() + style.ItemInnerSpacing.x);
    NumbersBox(state, z, id);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("%s", tr("Each cell's value with two decimals, when cells are big enough (zoom in with the "
                                 "mouse wheel, or pick fewer tokens)"));
    ResetZoomButton(state, z, shown, id);
    return;
  }
  const int tokens = shown.texture_cols;
  const std::string button = trf("tokens %d–%d", shown.lo(), shown.hi()) + "…##" + id + ".token_range";
  SameLineIfFits(ImGui::CalcTextSize(button.c_str(), nullptr, true).x + style.FramePadding.x * 2);
  const std::string popup = id + ".token_range_popup";
  if (ImGui::SmallButton(button.c_str())) ImGui::OpenPopup(popup.c_str());
  RecordLastItem(state, id + ".tokens");
  const ImVec2 below(ImGui::GetItemRectMax().x, ImGui::GetItemRectMax().y + 2);  // the popup hangs from here
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("%s", tr("Only these queries and keys, in every head (tokens are numbered from 0); the colours "
                               "keep the whole input's range"));
  ResetZoomButton(state, z, shown, id);

  // Under the button, reaching left from its right edge (the button sits at the toolbar's right end).
  ImGui::SetNextWindowPos(below, ImGuiCond_Always, ImVec2(1, 0));
  if (ImGui::BeginPopup(popup.c_str())) {
    const float field_w = ImGui::CalcTextSize("00000").x + style.FramePadding.x * 2;
    if (!z.editing_first) z.edit_first = shown.lo();
    if (!z.editing_last) z.edit_last = shown.hi();
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(tr("token range"));
    ImGui::SameLine();
    bool apply = false;
    ImGui::SetNextItemWidth(field_w);
    ImGui::InputInt("##token_first", &z.edit_first, 0, 0, ImGuiInputTextFlags_AutoSelectAll);
    RecordLastItem(state, id + ".token_first");
    z.editing_first = ImGui::IsItemActive();
    apply |= ImGui::IsItemDeactivatedAfterEdit();
    ImGui::SameLine(0, style.ItemInnerSpacing.x);
    ImGui::TextUnformatted("–");
    ImGui::SameLine(0, style.ItemInnerSpacing.x);
    ImGui::SetNextItemWidth(field_w);
    ImGui::InputInt("##token_last", &z.edit_last, 0, 0, ImGuiInputTextFlags_AutoSelectAll);
    RecordLastItem(state, id + ".token_last");
    z.editing_last = ImGui::IsItemActive();
    apply |= ImGui::IsItemDeactivatedAfterEdit();
    if (apply) {
      if (z.edit_first < 0 || z.edit_last >= tokens || z.edit_first > z.edit_last) {
        z.range_error = trf("No such range: tokens run from 0 to %d, and the first may not come after the last.", tokens - 1);
      } else {
        z.range_error.clear();
        const bool all = z.edit_first == 0 && z.edit_last == tokens - 1;
        z.token_first = all ? 0 : z.edit_first;
        z.token_last = all ? -1 : z.edit_last;
        z.zoom_cols = 0;
      }
    }
    ImGui::SameLine();
    ImGui::BeginDisabled(z.token_last < 0);
    if (ImGui::SmallButton(tr("every token"))) {
      z.token_first = 0;
      z.token_last = -1;
      z.zoom_cols = 0;
      z.range_error.clear();
    }
    ImGui::EndDisabled();
    RecordLastItem(state, id + ".every_token");
    ImGui::Dummy(ImVec2(ImGui::GetFontSize() * 20, 0));  // the width the notes below wrap at
    ErrorText(z.range_error);
    HintText(tr("Only these queries and keys, in every head (tokens are numbered from 0); the colours "
                "keep the whole input's range"));
    HintText(tr("drag along the key labels to show only those tokens"));
    NumbersBox(state, z, id);
    HintText(tr("Each cell's value with two decimals, when cells are big enough (zoom in with the "
                "mouse wheel, or pick fewer tokens)"));
    ImGui::EndPopup();
  } else {
    z.editing_first = z.editing_last = false;
  }
}

void RecordKeyAxis(AppState& state, const HeatmapGridResult& hit, const std::string& id) {
  if (hit.axis_max.x <= hit.axis_min.x || hit.axis_max.y <= hit.axis_min.y) return;
  const ImVec2 s = state.framebuffer_scale;
  state.layout.widgets.push_back({id + ".key_axis", ImVec2(hit.axis_min.x * s.x, hit.axis_min.y * s.y),
                                  ImVec2(hit.axis_max.x * s.x, hit.axis_max.y * s.y)});
}

// ---- numbers ---------------------------------------------------------------------------------------

bool CellNumber(float value, Rgba under, std::string& text, ImU32& color) {
  if (!std::isfinite(value)) return false;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", double(value));
  text = std::strcmp(buf, "-0.00") == 0 ? "0.00" : buf;
  const float luminance = 0.2126f * float(under.r) + 0.7152f * float(under.g) + 0.0722f * float(under.b);
  color = luminance > 140.0f ? IM_COL32(0, 0, 0, 255) : IM_COL32(255, 255, 255, 255);
  return true;
}

const char* ZoomHint(bool token_axes) {
  return token_axes ? tr("wheel: zoom · drag: move a zoomed view")
                    : tr("wheel: zoom · drag: move a zoomed view · double-click: reset zoom");
}

}  // namespace attnscope::gui
