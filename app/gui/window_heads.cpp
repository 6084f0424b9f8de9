// window_heads.cpp — the Heads window: one heatmap per head in a grid.
//
// Each heatmap is a GL texture drawn with one image quad (T = 512 with 16 heads stays smooth), in a
// frame coloured by its kv group (heads that share K/V share a colour), captioned
// "head h · kv group g". Query tokens run down the left of the first column, key tokens along the
// top of the first row (thinned when cells are small). A colour bar with numbers sits on the right
// (one per head with a per-head scale). Hover a cell for its tokens, score and probability; click
// to select that query row everywhere; double-click a head to open it large.
//
// Sections: toolbar · textures and labels · grid layout · one head · large head · window
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "attnscope/weights.h"
#include "gui/widgets.h"
#include "gui/windows.h"

namespace attnscope::gui {
namespace {

// ---- toolbar ---------------------------------------------------------------------------------------

void DrawToolbar(AppState& state) {
  ViewSettings& view = state.scene.view;
  bool edited = false;
  if (ImGui::RadioButton("probabilities", !view.show_scores) && view.show_scores) {
    view.show_scores = false;
    if (view.colormap == "diverging") view.colormap = "viridis";
    edited = true;
  }
  ImGui::SameLine();
  if (ImGui::RadioButton("scores", view.show_scores) && !view.show_scores) {
    view.show_scores = true;
    if (view.colormap == "viridis") view.colormap = "diverging";  // scores have a sign: white = 0
    edited = true;
  }
  ImGui::SameLine();
  ImGui::TextDisabled("|");
  ImGui::SameLine();
  if (ImGui::RadioButton("shared scale", view.shared_scale) && !view.shared_scale) {
    view.shared_scale = true;
    edited = true;
  }
  ImGui::SameLine();
  if (ImGui::RadioButton("per head", !view.shared_scale) && view.shared_scale) {
    view.shared_scale = false;
    edited = true;
  }
  ImGui::SameLine();
  ImGui::TextDisabled("|");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::CalcTextSize("grayscale").x + ImGui::GetFrameHeight() * 1.6f);
  if (ImGui::BeginCombo("colormap", view.colormap.c_str())) {
    for (const std::string& name : colormap_names())
      if (ImGui::Selectable(name.c_str(), name == view.colormap)) {
        view.colormap = name;
        edited = true;
      }
    ImGui::EndCombo();
  }
  if (edited) NoteEdit(state, Panel::heads);

  const HeadsWindowState& heads = state.heads;
  const int q = view.selected_query;
  if (q >= 0 && q < int(heads.labels.size())) {
    ImGui::SameLine();
    ImGui::TextDisabled("|");
    ImGui::SameLine();
    ImGui::Text("query %d · %s", q, heads.labels[size_t(q)].c_str());
    ImGui::SameLine();
    if (ImGui::SmallButton("×##clear_query")) view.selected_query = -1;
  }
  ImGui::SameLine();
  BusyIndicator(state);
  if (ImGui::GetCursorPosX() > 0) ImGui::NewLine();
}

// ---- textures and labels ---------------------------------------------------------------------------

void UploadTextures(AppState& state) {
  HeadsWindowState& hw = state.heads;
  const HeadsPixels* pixels = state.heads_pixels.get();
  if (!pixels || hw.uploaded == pixels) return;
  hw.textures.resize(pixels->heads.size());
  for (size_t h = 0; h < pixels->heads.size(); ++h) {
    const HeadPixels& hp = pixels->heads[h];
    if (hw.textures[h].update(hp.size, hp.size, hp.pixels)) ++hw.uploads;
  }
  hw.uploaded = pixels;
}

void RefreshLabels(AppState& state, const AttentionAnalysis& att) {
  HeadsWindowState& hw = state.heads;
  if (hw.labels_for == &att && hw.labels_font_generation == state.fonts->generation()) return;
  hw.labels.clear();
  for (const std::string& l : att.labels) hw.labels.push_back(state.fonts->display_label(l));
  hw.labels_for = &att;
  hw.labels_font_generation = state.fonts->generation();
  hw.labels_extent = LabelExtent(hw.labels, ImGui::GetFontSize() * 1000.0f);
}

std::string HeadTitle(int head, int group, float width) {
  char full[64], brief[32];
  std::snprintf(full, sizeof full, "head %d · kv group %d", head, group);
  if (ImGui::CalcTextSize(full).x <= width) return full;
  std::snprintf(brief, sizeof brief, "h%d · g%d", head, group);
  return brief;
}

// ---- grid layout -----------------------------------------------------------------------------------

struct GridLayout {
  int cols = 1, rows = 1;
  float side = 0;       // heatmap side in pixels
  float frame = 2;      // kv-group frame width
  float label_w = 0;    // query labels on the left of the first column
  float label_h = 0;    // key labels above the first row
  float caption_h = 0;  // "head h · kv group g" under each heatmap
  float gap = 0;        // between head blocks
  float head_bar = 0;   // per-head colour bar and its numbers (0 with a shared scale)
  bool keys_rotated = true;  // key labels turned a quarter (upright when each fits its column)
  float bar = 0;        // shared colour bar and its numbers (0 with a per-head scale)
  float block_w() const { return side + 2 * frame + head_bar; }
  float block_h() const { return side + 2 * frame + caption_h; }
};

GridLayout ComputeGridLayout(const AppState& state, ImVec2 avail, int heads, int tokens, float head_bar_numbers,
                             float bar_numbers) {
  const float font = ImGui::GetFontSize();
  GridLayout g;
  g.frame = std::max(2.0f, std::round(3.0f * state.ui_scale));
  g.label_w = std::min(state.heads.labels_extent, font * 7.0f) + font * 0.4f;
  g.label_h = g.label_w;
  g.caption_h = font * 1.5f;
  g.gap = std::round(font * 0.9f);
  const bool shared = state.scene.view.shared_scale;
  g.head_bar = shared ? 0.0f : font * 0.9f + head_bar_numbers;
  g.bar = shared ? font * 1.4f + bar_numbers + font * 0.5f : 0.0f;
  auto fit = [&] {
    const float usable_w = avail.x - g.label_w - g.bar;
    const float usable_h = avail.y - g.label_h;
    float best = -1;
    for (int cols = 1; cols <= heads; ++cols) {
      const int rows = (heads + cols - 1) / cols;
      const float w = (usable_w - float(cols - 1) * g.gap) / float(cols) - 2 * g.frame - g.head_bar;
      const float h = (usable_h - float(rows - 1) * g.gap) / float(rows) - 2 * g.frame - g.caption_h;
      const float side = std::min(w, h);
      if (side > best + 0.5f) {
        best = side;
        g.cols = cols;
        g.rows = rows;
      }
    }
    return std::max(best, 8.0f);
  };
  float best = fit();
  // Short labels (one CJK character, a digit) that fit their column stand upright; the band above
  // the heatmaps shrinks to one line and the heatmaps grow.
  if (state.heads.labels_extent <= best / float(tokens) * 0.92f) {
    g.keys_rotated = false;
    g.label_h = font * 1.4f;
    best = fit();
  }
  // Whole pixels per cell when cells are at least a pixel: every cell the same size on screen.
  g.side = best >= float(tokens) ? std::floor(best / float(tokens)) * float(tokens) : std::floor(best);
  return g;
}

// ---- one head --------------------------------------------------------------------------------------

// Hover, click and double-click over one heatmap; returns true when it asked to open large.
bool HeadInteraction(AppState& state, const AttentionAnalysis& att, int head, ImVec2 image_min, float side) {
  const int tokens = int(att.labels.size());
  const int group = kv_group_of_head(head, att.shape.heads, att.shape.groups);
  ImGui::SetCursorScreenPos(image_min);
  ImGui::PushID(head);
  ImGui::InvisibleButton("##heatmap", ImVec2(side, side));
  ImGui::PopID();
  bool open_large = false;
  if (!ImGui::IsItemHovered()) return false;
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const float cell = side / float(tokens);
  const int col = std::clamp(int((mouse.x - image_min.x) / cell), 0, tokens - 1);
  const int row = std::clamp(int((mouse.y - image_min.y) / cell), 0, tokens - 1);
  const float score = att.result.scores[size_t(head)](row, col);
  const float prob = att.result.probs[size_t(head)](row, col);
  const auto& labels = state.heads.labels;
  ImGui::BeginTooltip();
  ImGui::Text("head %d · kv group %d", head, group);
  ImGui::Separator();
  ImGui::Text("query %d: %s", row, labels[size_t(row)].c_str());
  ImGui::Text("key   %d: %s", col, labels[size_t(col)].c_str());
  ImGui::Text("score        %s%s", FormatValue(score).c_str(), std::isinf(score) ? " (masked)" : "");
  ImGui::Text("probability  %s", FormatValue(prob).c_str());
  ImGui::TextDisabled("click: select this query · double-click: open large");
  ImGui::EndTooltip();
  if (ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) {
    open_large = true;
    state.scene.view.selected_query = row;
  } else if (ImGui::IsItemClicked(ImGuiMouseButton_Left)) {
    int& selected = state.scene.view.selected_query;
    selected = selected == row ? -1 : row;
  }
  return open_large;
}

// The heatmap, its kv-group frame and the selected-row outline.
void DrawHeadImage(AppState& state, ImDrawList* draw, int head, int group, ImVec2 image_min, float side, float frame) {
  const ImVec2 image_max(image_min.x + side, image_min.y + side);
  draw->AddRectFilled(ImVec2(image_min.x - frame, image_min.y - frame), ImVec2(image_max.x + frame, image_max.y + frame),
                      KvGroupColor(group));
  if (size_t(head) < state.heads.textures.size()) draw->AddImage(state.heads.textures[size_t(head)].id(), image_min, image_max);
  const int q = state.scene.view.selected_query;
  const int tokens = int(state.heads.labels.size());
  if (q >= 0 && q < tokens) {
    const float cell = side / float(tokens);
    const float y0 = image_min.y + float(q) * cell, y1 = y0 + cell;
    draw->AddRect(ImVec2(image_min.x - 1, y0 - 1), ImVec2(image_max.x + 1, y1 + 1), IM_COL32(0, 0, 0, 255), 0, 0, 3.0f);
    draw->AddRect(ImVec2(image_min.x - 1, y0 - 1), ImVec2(image_max.x + 1, y1 + 1), IM_COL32(255, 255, 255, 255), 0, 0,
                  1.0f);
  }
}

void DrawCaption(ImDrawList* draw, ImVec2 min, float width, int head, int group) {
  const std::string title = HeadTitle(head, group, width - ImGui::GetFontSize() * 0.6f);
  const ImVec2 size = ImGui::CalcTextSize(title.c_str());
  const float pad = ImGui::GetFontSize() * 0.3f;
  const ImU32 color = KvGroupColor(group);
  draw->AddRectFilled(min, ImVec2(min.x + size.x + 2 * pad, min.y + size.y + pad), color, pad);
  draw->AddText(ImVec2(min.x + pad, min.y + pad * 0.5f), ContrastText(color), title.c_str());
}

void RecordHead(AppState& state, int head, int group, int tokens, ImVec2 image_min, float side, float frame,
                ValueRange range) {
  const ImVec2 s = state.framebuffer_scale;
  LayoutRecord::Head rec;
  rec.head = head;
  rec.kv_group = group;
  rec.tokens = tokens;
  rec.min = ImVec2(image_min.x * s.x, image_min.y * s.y);
  rec.max = ImVec2((image_min.x + side) * s.x, (image_min.y + side) * s.y);
  rec.cell = side / float(tokens) * s.x;
  rec.frame = frame * s.x;
  rec.frame_color = KvGroupColor(group);
  rec.range = range;
  state.layout.heads.push_back(rec);
}

// ---- large head ------------------------------------------------------------------------------------

void DrawLargeHead(AppState& state, const AttentionAnalysis& att, const HeadsPixels& pixels) {
  HeadsWindowState& hw = state.heads;
  if (hw.large_head < 0 || hw.large_head >= att.shape.heads || state.scripted) return;
  const int head = hw.large_head;
  const int group = kv_group_of_head(head, att.shape.heads, att.shape.groups);
  PlaceNextWindow(state, Slot::centre);
  char title[96];
  std::snprintf(title, sizeof title, "Head %d · kv group %d###large_head", head, group);
  bool open = true;
  if (ImGui::Begin(title, &open)) {
    const float font = ImGui::GetFontSize();
    const int tokens = int(hw.labels.size());
    const ValueRange range = pixels.heads[size_t(head)].range;
    const float numbers = ColorBarLabelWidth(range, 5);
    const float label = std::min(hw.labels_extent, font * 9.0f) + font * 0.4f;
    const ImVec2 origin = ImGui::GetCursorScreenPos();
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float frame = std::max(2.0f, std::round(3.0f * state.ui_scale));
    float side = std::min(avail.x - label - font * 2.0f - numbers - 2 * frame, avail.y - label - 2 * frame);
    side = std::max(side, 8.0f);
    if (side >= float(tokens)) side = std::floor(side / float(tokens)) * float(tokens);
    const ImVec2 image_min(origin.x + label + frame, origin.y + label + frame);
    ImDrawList* draw = ImGui::GetWindowDrawList();
    DrawHeadImage(state, draw, head, group, image_min, side, frame);
    const float cell = side / float(tokens);
    DrawQueryLabels(draw, hw.labels, ImVec2(image_min.x - frame, image_min.y), cell, label - font * 0.4f,
                    state.scene.view.selected_query, nullptr);
    DrawKeyLabels(draw, hw.labels, ImVec2(image_min.x, image_min.y - frame), cell, label - font * 0.4f,
                  hw.labels_extent > cell * 0.92f, nullptr);
    const ImVec2 bar_min(image_min.x + side + frame + font * 0.6f, image_min.y);
    DrawColorBar(draw, hw.colorbar, hw.colorbar_map, pixels.colormap, bar_min,
                 ImVec2(bar_min.x + font * 0.9f, image_min.y + side), range, 5);
    HeadInteraction(state, att, head, image_min, side);
  }
  ImGui::End();
  if (!open) hw.large_head = -1;
}

}  // namespace

// ---- window ----------------------------------------------------------------------------------------

void DrawHeadsWindow(AppState& state) {
  PlaceNextWindow(state, Slot::main);
  if (!ImGui::Begin("Heads###heads", nullptr, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse)) {
    ImGui::End();
    return;
  }
  state.layout.view = "heads";
  DrawToolbar(state);
  ErrorText(ErrorFor(state, Panel::heads));

  const bool grid_input = state.scene.input.source == InputSource::grid;
  if (grid_input) {
    ImGui::TextWrapped("The Heads view shows attention over a sentence or a tensor; the input is a 2D grid.");
    if (ImGui::Button("Use the sentence")) {
      state.scene.input.source = InputSource::text;
      NoteEdit(state, Panel::heads);
    }
    ImGui::End();
    return;
  }
  if (!state.error.empty() && state.analysis) {
    ErrorText("These are the last valid settings' heads: the engine refused the new ones (see the " +
              std::string(panel_title(state.error_panel)) + " window).");
  }
  if (!state.analysis || !state.analysis->attention || !state.heads_pixels) {
    if (!state.error.empty()) ErrorText("Nothing to show: " + state.error);
    else ImGui::TextDisabled("computing…");
    ImGui::End();
    return;
  }
  const AttentionAnalysis& att = *state.analysis->attention;
  const HeadsPixels& pixels = *state.heads_pixels;
  UploadTextures(state);
  RefreshLabels(state, att);

  const int heads = int(pixels.heads.size());
  const int tokens = int(att.labels.size());
  float head_numbers = 0;
  for (const HeadPixels& hp : pixels.heads) head_numbers = std::max(head_numbers, ColorBarLabelWidth(hp.range, 2));
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const GridLayout g = ComputeGridLayout(state, avail, heads, tokens, head_numbers, ColorBarLabelWidth(pixels.shared_range, 5));
  const float font = ImGui::GetFontSize();
  const float cell = g.side / float(tokens);
  ImDrawList* draw = ImGui::GetWindowDrawList();
  state.layout.colormap = to_string(pixels.colormap);
  state.layout.scores = pixels.scores;

  int open_large = -1;
  for (int h = 0; h < heads; ++h) {
    const int col = h % g.cols, row = h / g.cols;
    const int group = kv_group_of_head(h, att.shape.heads, att.shape.groups);
    const ImVec2 block(origin.x + g.label_w + float(col) * (g.block_w() + g.gap),
                       origin.y + g.label_h + float(row) * (g.block_h() + g.gap));
    const ImVec2 image_min(std::round(block.x + g.frame), std::round(block.y + g.frame));
    DrawHeadImage(state, draw, h, group, image_min, g.side, g.frame);
    DrawCaption(draw, ImVec2(image_min.x - g.frame, image_min.y + g.side + g.frame + font * 0.2f),
                g.block_w(), h, group);
    if (col == 0)
      DrawQueryLabels(draw, state.heads.labels, ImVec2(image_min.x - g.frame, image_min.y), cell, g.label_w - font * 0.4f,
                      state.scene.view.selected_query, &state.layout);
    if (row == 0)
      DrawKeyLabels(draw, state.heads.labels, ImVec2(image_min.x, image_min.y - g.frame), cell, g.label_w - font * 0.4f,
                    g.keys_rotated, &state.layout);
    if (g.head_bar > 0) {
      // Per-head scale: a thin bar with this head's own min and max.
      const ImVec2 bar_min(image_min.x + g.side + g.frame + font * 0.3f, image_min.y);
      DrawColorBar(draw, state.heads.colorbar, state.heads.colorbar_map, pixels.colormap, bar_min,
                   ImVec2(bar_min.x + font * 0.45f, image_min.y + g.side), pixels.heads[size_t(h)].range, 2);
    }
    RecordHead(state, h, group, tokens, image_min, g.side, g.frame, pixels.heads[size_t(h)].range);
    if (HeadInteraction(state, att, h, image_min, g.side)) open_large = h;
  }
  if (g.bar > 0) {
    const float top = origin.y + g.label_h + g.frame;
    const float grid_h = float(g.rows) * g.block_h() + float(g.rows - 1) * g.gap - g.caption_h - 2 * g.frame;
    const float h = std::clamp(grid_h, font * 6.0f, font * 22.0f);
    const float x = origin.x + g.label_w + float(g.cols) * (g.block_w() + g.gap) - g.gap + font * 0.8f;
    DrawColorBar(draw, state.heads.colorbar, state.heads.colorbar_map, pixels.colormap, ImVec2(x, top),
                 ImVec2(x + font * 0.9f, top + h), pixels.shared_range, 5);
    const char* what = pixels.scores ? "score" : "probability";
    draw->AddText(ImVec2(x, top - font * 1.6f), ImGui::GetColorU32(ImGuiCol_TextDisabled), what);
  }
  if (open_large >= 0) state.heads.large_head = open_large;
  ImGui::End();
  DrawLargeHead(state, att, pixels);
}

}  // namespace attnscope::gui
