#include "gui/heatmap_grid.h"

#include <algorithm>
#include <cmath>

#include "attnscope/figure/heatmap_layout.h"
#include "gui/i18n.h"
#include "gui/widgets.h"

namespace attnscope::gui {
namespace {

struct GridLayout {
  int grid_cols = 1, grid_rows = 1;  // heatmaps across and down
  float cell = 1;                    // cell side in pixels
  float frame = 2;
  float label_w = 0;    // row labels left of the first column
  float label_h = 0;    // column labels above the first row
  float caption_h = 0;
  float gap = 0;
  float head_bar = 0;   // per-heatmap colour bar with its numbers
  float bar = 0;        // shared colour bar with its numbers
  float strip = 0;      // a token set's strip: its thickness; strip_gap between it and the frame
  float strip_gap = 0;
  bool cols_rotated = true;
};

GridLayout Fit(const HeatmapGridSpec& spec, ImVec2 avail, float ui_scale) {
  const float font = ImGui::GetFontSize();
  GridLayout g;
  g.frame = std::max(2.0f, std::round(3.0f * ui_scale));
  // Labels take the room their longest one needs, within reason (beyond it they are cut with "…" and
  // show whole in a tooltip): at least 7 lines' worth, up to 14 when the view is large enough.
  const float row_cap = std::max(font * 7.0f, std::min(font * 14.0f, avail.x * 0.2f));
  const float key_cap = std::max(font * 7.0f, std::min(font * 14.0f, avail.y * 0.25f));
  g.label_w = spec.row_labels ? std::min(spec.labels_extent, row_cap) + font * 0.4f : 0.0f;
  const float turned_band = spec.col_labels ? TurnedExtent(*spec.col_labels, key_cap) + font * 0.4f : 0.0f;
  g.label_h = turned_band;
  g.caption_h = font * 1.5f;
  g.gap = std::round(font * 0.9f);
  float head_numbers = 0;
  if (!spec.shared_scale)
    for (int i = 0; i < spec.count; ++i) head_numbers = std::max(head_numbers, ColorBarLabelWidth(spec.range(i), 5));
  g.head_bar = spec.shared_scale ? 0.0f : font * 0.9f + head_numbers;
  if (spec.strip != GridStrip::none) {
    g.strip = std::round(font * 0.9f);
    g.strip_gap = std::round(font * 0.25f);
    (spec.strip == GridStrip::row ? g.caption_h : g.head_bar) += g.strip + g.strip_gap;
  }
  const bool bar = spec.shared_scale && spec.color_bar;
  g.bar = bar ? font * 1.4f + ColorBarLabelWidth(spec.shared_range, 5) + font * 0.5f : 0.0f;
  // As wide as the bar's title and its "masked" swatch too: a grid that fills the width (the Training
  // window's rows of heads) must not push them past the edge.
  if (bar) {
    float widest = ImGui::CalcTextSize((tr(spec.value_name) + spec.scale_note).c_str()).x;
    if (spec.masked) widest = std::max(widest, font * 1.2f + ImGui::CalcTextSize(tr("masked")).x);
    g.bar = std::max(g.bar, font * 0.8f + widest + font * 0.3f);
  }
  // The shared bar's title sits above the first row: keep a line for it.
  const float one_line = bar ? font * 1.7f : 0.0f;
  g.label_h = std::max(g.label_h, one_line);
  auto fit = [&] {
    const float usable_w = avail.x - g.label_w - g.bar;
    const float usable_h = avail.y - g.label_h;
    float best = -1;
    const int first = spec.columns > 0 ? std::min(spec.columns, spec.count) : 1;
    const int last = spec.columns > 0 ? first : spec.count;
    for (int across = first; across <= last; ++across) {
      const int down = (spec.count + across - 1) / across;
      const float w = (usable_w - float(across - 1) * g.gap) / float(across) - 2 * g.frame - g.head_bar;
      const float h = (usable_h - float(down - 1) * g.gap) / float(down) - 2 * g.frame - g.caption_h;
      const float cell = std::min(w / float(spec.cols), h / float(spec.rows));
      if (cell > best * 1.001f) {
        best = cell;
        g.grid_cols = across;
        g.grid_rows = down;
      }
    }
    best = std::max(best, 8.0f / float(std::max(spec.rows, spec.cols)));
    if (spec.max_cell > 0) best = std::min(best, spec.max_cell);
    // Whole pixels per cell once cells are big enough for a difference to show (every cell the same
    // size on screen); smaller cells keep the fraction so that large T still fills the space.
    const float n = float(std::max(spec.rows, spec.cols));
    return best >= 4.0f ? std::floor(best) : std::floor(best * n) / n;
  };
  // Column labels stand upright when every one fits its column with the band one line tall; else they
  // turn along their columns, in a band as tall as the longest.
  if (spec.col_labels) {
    const GridLayout turned = g;
    g.label_h = std::max(font * 1.7f, one_line);
    g.cell = fit();
    if (spec.labels_extent <= g.cell * 0.92f) {
      g.cols_rotated = false;
      return g;
    }
    g = turned;
  }
  g.cell = fit();
  // Thinned labels get a note under the shared bar ("every 2nd token labelled", heatmap_grid.cpp below),
  // wrapped at its spaces: the bar's column is at least as wide as its longest word.
  if (bar && (spec.row_labels || spec.col_labels) && LabelStep(g.cell) > 1) {
    const std::string note = LabelStepNote(LabelStep(g.cell));
    float word = 0;
    for (size_t start = 0; start < note.size();) {
      const size_t end = std::min(note.find(' ', start), note.size());
      word = std::max(word, ImGui::CalcTextSize(note.c_str() + start, note.c_str() + end).x);
      start = end + 1;
    }
    if (font * 0.8f + word + font * 0.3f > g.bar) {
      g.bar = font * 0.8f + word + font * 0.3f;
      g.cell = fit();
    }
  }
  return g;
}

// The caption form for the whole grid: the longest in which every caption fits `room`.
int CaptionForm(const HeatmapGridSpec& spec, float room) {
  const int forms = std::max(spec.caption_forms, 1);
  for (int f = 0; f < forms; ++f) {
    bool all = true;
    for (int i = 0; i < spec.count && all; ++i) all = ImGui::CalcTextSize(spec.captions(i, f).c_str()).x <= room;
    if (all) return f;
  }
  return forms - 1;
}

void RecordBar(LayoutRecord* record, int grid, int tile, ValueRange range, const std::string& title) {
  if (record) record->bars.push_back({grid, tile, range.lo, range.hi, title});
}

void RecordTicks(LayoutRecord* record, int grid, int tile, const std::vector<float>& values) {
  if (!record) return;
  const float step = tick_step(values);
  for (const float v : values) record->ticks.push_back({grid, tile, v, step, format_tick(v, step)});
}

}  // namespace

HeatmapGridResult DrawHeatmapGrid(const HeatmapGridSpec& spec, ColorBarCache& bar, float ui_scale, LayoutRecord* labels) {
  HeatmapGridResult out;
  if (spec.count <= 0 || spec.rows <= 0 || spec.cols <= 0) return out;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const GridLayout g = Fit(spec, avail, ui_scale);
  const float font = ImGui::GetFontSize();
  const float w = std::round(g.cell * float(spec.cols)), h = std::round(g.cell * float(spec.rows));
  const float block_w = w + 2 * g.frame + g.head_bar, block_h = h + 2 * g.frame + g.caption_h;
  ImDrawList* draw = ImGui::GetWindowDrawList();
  out.image_size = ImVec2(w, h);
  out.cell = g.cell;
  out.frame = g.frame;
  const int grid_id = labels ? labels->grids++ : 0;
  const float caption_pad = font * 0.3f;
  const int caption_form = spec.captions ? CaptionForm(spec, block_w - 2 * caption_pad) : 0;
  // Numbers in cells once the cells are big enough and every number fits its cell.
  bool numbers = spec.cell_number && g.cell >= spec.min_number_cell;
  for (int i = 0; numbers && i < spec.count; ++i)
    for (int r = 0; numbers && r < spec.rows; ++r)
      for (int c = 0; numbers && c < spec.cols; ++c) {
        std::string text;
        ImU32 color = 0;
        if (spec.cell_number(i, r, c, text, color)) numbers = ImGui::CalcTextSize(text.c_str()).x + font * 0.2f <= g.cell;
      }
  out.numbers = numbers;
  // Thinned labels say so: "The saw cat the saw dog" is every 2nd token, not a sentence.
  out.label_step = spec.row_labels || spec.col_labels ? LabelStep(g.cell) : 1;
  const std::string step_note = LabelStepNote(out.label_step);
  const float note_lines = step_note.empty() ? 0.0f : 3.4f;  // up to three lines (wrapped) and a gap

  for (int i = 0; i < spec.count; ++i) {
    const int across = i % g.grid_cols, down = i / g.grid_cols;
    const ImVec2 block(origin.x + g.label_w + float(across) * (block_w + g.gap),
                       origin.y + g.label_h + float(down) * (block_h + g.gap));
    const ImVec2 min(std::round(block.x + g.frame), std::round(block.y + g.frame));
    const ImVec2 max(min.x + w, min.y + h);
    out.image_min.push_back(min);

    // Frame, background, heatmap, outlines.
    const ImU32 frame_color = spec.frame_color ? spec.frame_color(i) : ImGui::GetColorU32(ImGuiCol_Border);
    draw->AddRectFilled(ImVec2(min.x - g.frame, min.y - g.frame), ImVec2(max.x + g.frame, max.y + g.frame), frame_color);
    // The shown part of a larger picture, or all of it.
    ImVec2 uv0(0, 0), uv1(1, 1);
    if (spec.texture_rows > 0 && spec.texture_cols > 0) {
      const float tr = float(spec.texture_rows), tc = float(spec.texture_cols);
      uv0 = ImVec2(float(spec.first_col) / tc, float(spec.first_row) / tr);
      uv1 = ImVec2(float(spec.first_col + spec.cols) / tc, float(spec.first_row + spec.rows) / tr);
    }
    if (spec.background)
      if (const ImTextureID under = spec.background(i)) draw->AddImage(under, min, max, uv0, uv1);
    draw->AddImage(spec.texture(i), min, max, uv0, uv1);
    if (numbers) {
      std::string text;
      ImU32 color = 0;
      draw->PushClipRect(min, max, true);
      for (int r = 0; r < spec.rows; ++r)
        for (int c = 0; c < spec.cols; ++c)
          if (spec.cell_number(i, r, c, text, color)) {
            const ImVec2 size = ImGui::CalcTextSize(text.c_str());
            draw->AddText(ImVec2(min.x + (float(c) + 0.5f) * g.cell - size.x * 0.5f, min.y + (float(r) + 0.5f) * g.cell - size.y * 0.5f),
                          color, text.c_str());
          }
      draw->PopClipRect();
    }
    auto outline = [&](ImVec2 a, ImVec2 b) {
      draw->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1), IM_COL32(0, 0, 0, 255), 0, 0, 3.0f);
      draw->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1), IM_COL32(255, 255, 255, 255), 0, 0, 1.0f);
    };
    if (spec.selected_row >= 0 && spec.selected_row < spec.rows)
      outline(ImVec2(min.x, min.y + float(spec.selected_row) * g.cell), ImVec2(max.x, min.y + float(spec.selected_row + 1) * g.cell));
    // A token set's rows or columns: an orange line inside a black one, on every colormap.
    auto set_outline = [&](ImVec2 a, ImVec2 b) {
      draw->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1), IM_COL32(0, 0, 0, 255), 0, 0, 3.0f);
      draw->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1), IM_COL32(255, 150, 0, 255), 0, 0, 1.5f);
    };
    for (const int r : spec.set_rows)
      if (r >= 0 && r < spec.rows) set_outline(ImVec2(min.x, min.y + float(r) * g.cell), ImVec2(max.x, min.y + float(r + 1) * g.cell));
    for (const int c : spec.set_cols)
      if (c >= 0 && c < spec.cols) set_outline(ImVec2(min.x + float(c) * g.cell, min.y), ImVec2(min.x + float(c + 1) * g.cell, max.y));
    // The token set's strip: one more row under the heatmap or column right of it, in its frame's colour.
    if (spec.strip != GridStrip::none && spec.strip_color) {
      const bool row = spec.strip == GridStrip::row;
      const ImVec2 s0 = row ? ImVec2(min.x, max.y + g.frame + g.strip_gap) : ImVec2(max.x + g.frame + g.strip_gap, min.y);
      const ImVec2 s1 = row ? ImVec2(max.x, s0.y + g.strip) : ImVec2(s0.x + g.strip, max.y);
      draw->AddRectFilled(ImVec2(s0.x - g.frame, s0.y - g.frame), ImVec2(s1.x + g.frame, s1.y + g.frame), frame_color);
      const int n = row ? spec.cols : spec.rows;
      for (int k = 0; k < n; ++k) {
        const ImVec2 a = row ? ImVec2(min.x + float(k) * g.cell, s0.y) : ImVec2(s0.x, min.y + float(k) * g.cell);
        const ImVec2 b = row ? ImVec2(min.x + float(k + 1) * g.cell, s1.y) : ImVec2(s1.x, min.y + float(k + 1) * g.cell);
        draw->AddRectFilled(a, b, spec.strip_color(i, k));
      }
      out.strip_min.push_back(s0);
      out.strip_max.push_back(s1);
      if (ImGui::IsWindowHovered() && ImGui::IsMouseHoveringRect(s0, s1)) {
        const ImVec2 mouse = ImGui::GetIO().MousePos;
        out.strip_hovered = i;
        out.strip_cell = std::clamp(int(((row ? mouse.x - min.x : mouse.y - min.y)) / g.cell), 0, n - 1);
      }
      // Its name: left of the first column's row strips, above the first row's column strips.
      const ImU32 ink = ImGui::GetColorU32(ImGuiCol_Text);
      if (row && across == 0 && g.label_w > font) {
        const float room = g.label_w - font * 0.4f;
        const std::string text = ImGui::CalcTextSize(spec.strip_label.c_str()).x <= room ? spec.strip_label
                                                                                          : Ellipsize(spec.strip_symbol, room);
        const ImVec2 size = ImGui::CalcTextSize(text.c_str());
        const ImVec2 at(min.x - g.frame - font * 0.3f - size.x, s0.y + (g.strip - size.y) * 0.5f);
        draw->AddText(at, ink, text.c_str());
      } else if (!row && down == 0 && g.label_h > font) {
        const ImVec2 size = ImGui::CalcTextSize(spec.strip_symbol.c_str());
        const ImVec2 at(s0.x + (g.strip - size.x) * 0.5f, min.y - g.frame - font * 0.2f - size.y);
        draw->AddText(at, ink, spec.strip_symbol.c_str());
      }
    }
    // Columns being picked on the key axis: shaded down the heatmap and across the labels' band.
    const bool highlight = spec.highlight_first >= 0 && spec.highlight_last >= spec.highlight_first;
    const float band_top = min.y - g.frame - (g.label_h - font * 0.4f);
    if (highlight) {
      const float x0 = min.x + float(spec.highlight_first) * g.cell, x1 = min.x + float(spec.highlight_last + 1) * g.cell;
      draw->AddRectFilled(ImVec2(x0, down == 0 ? band_top : min.y), ImVec2(x1, max.y), IM_COL32(255, 255, 255, 70));
      draw->AddRect(ImVec2(x0, down == 0 ? band_top : min.y), ImVec2(x1, max.y), IM_COL32(255, 255, 255, 220), 0, 0, 2.0f);
    }
    for (const auto& [row, col] : spec.outlined_cells) {
      const int r = row - spec.first_row, c = col - spec.first_col;
      if (r < 0 || c < 0 || r >= spec.rows || c >= spec.cols) continue;
      const ImVec2 a(min.x + float(c) * g.cell, min.y + float(r) * g.cell), b(a.x + g.cell, a.y + g.cell);
      // Thick magenta inside a black and a white line: visible on viridis, gray, diverging and the masked colour.
      const float t = std::max(2.0f, std::round(g.cell * 0.12f));
      draw->AddRect(ImVec2(a.x - t, a.y - t), ImVec2(b.x + t, b.y + t), IM_COL32(0, 0, 0, 255), 0, 0, t + 2);
      draw->AddRect(ImVec2(a.x - t, a.y - t), ImVec2(b.x + t, b.y + t), IM_COL32(255, 0, 200, 255), 0, 0, t);
      draw->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1), IM_COL32(255, 255, 255, 255), 0, 0, 1.0f);
      out.outlines.push_back({i, row, col, ImVec2(a.x - t, a.y - t), ImVec2(b.x + t, b.y + t)});
    }
    if (spec.marked_cell >= 0 && spec.marked_cell < spec.rows * spec.cols) {
      const float x = min.x + float(spec.marked_cell % spec.cols) * g.cell, y = min.y + float(spec.marked_cell / spec.cols) * g.cell;
      outline(ImVec2(x, y), ImVec2(x + g.cell, y + g.cell));
    }

    // Caption in the frame's colour, in the grid's one form; none on tiles too narrow for even "…".
    if (spec.captions && ImGui::CalcTextSize("…").x <= block_w - 2 * caption_pad) {
      // Never wider than the block: a caption too long even in the shortest form ends in "…" rather
      // than being cut or drawn over its neighbour.
      const std::string title = Ellipsize(spec.captions(i, caption_form), block_w - 2 * caption_pad);
      const ImVec2 size = ImGui::CalcTextSize(title.c_str());
      const float below = spec.strip == GridStrip::row ? g.strip + g.strip_gap : 0.0f;  // under a token set's strip
      const ImVec2 at(min.x - g.frame, max.y + g.frame + below + font * 0.2f);
      const ImVec2 end(at.x + size.x + 2 * caption_pad, at.y + size.y + caption_pad);
      draw->PushClipRect(at, ImVec2(at.x + block_w, at.y + size.y + caption_pad), true);
      draw->AddRectFilled(at, end, frame_color, caption_pad);
      draw->AddText(ImVec2(at.x + caption_pad, at.y + caption_pad * 0.5f), ContrastText(frame_color), title.c_str());
      draw->PopClipRect();
      if (labels) labels->captions.push_back({grid_id, i, caption_form, title, at, end});
    }

    // Labels on the outer edges only: all heatmaps share them. Recorded with their token indices.
    const size_t recorded = labels ? labels->labels.size() : 0;
    if (across == 0 && spec.row_labels)
      DrawQueryLabels(draw, *spec.row_labels, ImVec2(min.x - g.frame, min.y), g.cell, g.label_w - font * 0.4f,
                      spec.selected_row, labels);
    if (labels)
      for (size_t k = recorded; k < labels->labels.size(); ++k) labels->labels[k].index += spec.first_row;
    const size_t recorded_rows = labels ? labels->labels.size() : 0;
    if (down == 0 && spec.col_labels)
      DrawKeyLabels(draw, *spec.col_labels, ImVec2(min.x, min.y - g.frame), g.cell, g.label_h - font * 0.4f,
                    g.cols_rotated, labels);
    if (labels)
      for (size_t k = recorded_rows; k < labels->labels.size(); ++k) labels->labels[k].index += spec.first_col;
    if (!spec.shared_scale) {
      const float beside = spec.strip == GridStrip::column ? g.strip + g.strip_gap : 0.0f;  // right of a token set's strip
      const ImVec2 bar_min(max.x + g.frame + beside + font * 0.3f, min.y);
      std::vector<float> ticks;
      DrawColorBar(draw, bar, spec.colormap, bar_min, ImVec2(bar_min.x + font * 0.45f, max.y), spec.range(i), 5, &ticks);
      RecordTicks(labels, grid_id, i, ticks);
      RecordBar(labels, grid_id, i, spec.range(i), "");
    }

    // The token labels under the pointer (a Ctrl+click adds that token to a token set): the row labels left
    // of the first column, the key labels above the first row.
    if (ImGui::IsWindowHovered(ImGuiHoveredFlags_AllowWhenBlockedByActiveItem)) {
      const ImVec2 mouse = ImGui::GetIO().MousePos;
      if (across == 0 && spec.row_labels && mouse.x >= origin.x && mouse.x < min.x - g.frame && mouse.y >= min.y && mouse.y < max.y)
        out.label_row = std::clamp(int((mouse.y - min.y) / g.cell), 0, spec.rows - 1) + spec.first_row;
      if (down == 0 && spec.col_labels && mouse.y >= origin.y && mouse.y < min.y - g.frame && mouse.x >= min.x && mouse.x < max.x)
        out.label_col = std::clamp(int((mouse.x - min.x) / g.cell), 0, spec.cols - 1) + spec.first_col;
    }

    // Pointer: one invisible button per heatmap, never one per cell.
    ImGui::SetCursorScreenPos(min);
    ImGui::PushID(i);
    ImGui::InvisibleButton("##heatmap", ImVec2(std::max(w, 1.0f), std::max(h, 1.0f)));
    ImGui::PopID();
    if (ImGui::IsItemHovered()) {
      const ImVec2 mouse = ImGui::GetIO().MousePos;
      out.hovered = i;
      out.col = std::clamp(int((mouse.x - min.x) / g.cell), 0, spec.cols - 1);
      out.row = std::clamp(int((mouse.y - min.y) / g.cell), 0, spec.rows - 1);
      out.double_clicked = ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left);
      out.clicked = !out.double_clicked &&
                    (spec.drag_pans ? ImGui::IsItemDeactivated() && ImGui::GetIO().MouseDragMaxDistanceSqr[0] < 9.0f
                                    : ImGui::IsItemClicked(ImGuiMouseButton_Left));
      out.wheel = ImGui::GetIO().MouseWheel;
      out.pointer_cells = ImVec2((mouse.x - min.x) / g.cell, (mouse.y - min.y) / g.cell);
    }
    if (ImGui::IsItemActivated()) out.pressed = true;
    if (ImGui::IsItemActive()) out.held = true;

    // The key axis: one invisible button over each top heatmap's labels' band.
    if (spec.key_axis_drag && spec.col_labels && down == 0 && g.label_h > font) {
      const ImVec2 band_min(min.x, band_top), band_max(max.x, min.y - g.frame);
      if (i == 0) {
        out.axis_min = band_min;
        out.axis_max = band_max;
      }
      ImGui::SetCursorScreenPos(band_min);
      ImGui::PushID(i);
      ImGui::InvisibleButton("##key_axis", ImVec2(std::max(w, 1.0f), std::max(band_max.y - band_min.y, 1.0f)));
      ImGui::PopID();
      const bool active = ImGui::IsItemActive();
      if (ImGui::IsItemHovered() || active || ImGui::IsItemDeactivated()) {
        out.axis_col = std::clamp(int((ImGui::GetIO().MousePos.x - min.x) / g.cell), 0, spec.cols - 1);
        if (ImGui::IsItemHovered() && !active) ImGui::SetMouseCursor(ImGuiMouseCursor_ResizeEW);
      }
      if (ImGui::IsItemActivated()) out.axis_pressed = true;
      if (active) out.axis_held = true;
      if (ImGui::IsItemDeactivated()) out.axis_released = true;
    }
  }

  out.label_ctrl_clicked = (out.label_row >= 0 || out.label_col >= 0) && ImGui::GetIO().KeyCtrl &&
                           ImGui::IsMouseClicked(ImGuiMouseButton_Left);
  if (spec.shared_scale && spec.color_bar) {
    const float top = origin.y + g.label_h + g.frame;
    const float grid_h = float(g.grid_rows) * block_h + float(g.grid_rows - 1) * g.gap - g.caption_h - 2 * g.frame;
    // As tall as the grid within reason, and never past the space given (the "masked" swatch included):
    // small heads in a small view at a large UI scale.
    const float room = origin.y + avail.y - top - (spec.masked ? font * 1.9f : font * 0.7f) - font * note_lines;  // half a line: the last tick
    const float bar_h = std::max(font * 2.0f, std::min(std::clamp(grid_h, font * 6.0f, font * 22.0f), room));
    const float x = origin.x + g.label_w + float(g.grid_cols) * (block_w + g.gap) - g.gap + font * 0.8f;
    // Shortened with "…" only when tiles at their smallest size leave it less than its width (many heads
    // in a small view at a large UI scale).
    const std::string title = Ellipsize(tr(spec.value_name) + spec.scale_note, std::max(origin.x + avail.x - x, font));
    draw->AddText(ImVec2(x, top - font * 1.6f), ImGui::GetColorU32(ImGuiCol_TextDisabled), title.c_str());
    std::vector<float> ticks;
    DrawColorBar(draw, bar, spec.colormap, ImVec2(x, top), ImVec2(x + font * 0.9f, top + bar_h), spec.shared_range, 5, &ticks);
    RecordTicks(labels, grid_id, -1, ticks);
    RecordBar(labels, grid_id, -1, spec.shared_range, title);
    if (spec.masked) {  // the swatch of masked cells, as exported figures have it
      const ImVec2 swatch(x, top + bar_h + font * 0.8f);
      const Rgba c = masked_color(spec.colormap);
      draw->AddRectFilled(swatch, ImVec2(swatch.x + font * 0.9f, swatch.y + font * 0.9f), IM_COL32(c.r, c.g, c.b, 255));
      draw->AddRect(swatch, ImVec2(swatch.x + font * 0.9f, swatch.y + font * 0.9f), ImGui::GetColorU32(ImGuiCol_Border));
      draw->AddText(ImVec2(swatch.x + font * 1.2f, swatch.y - font * 0.05f), ImGui::GetColorU32(ImGuiCol_Text), tr("masked"));
    }
    if (!step_note.empty()) {  // under the bar (and its swatch), wrapped to the room left of the edge
      const float y = top + bar_h + (spec.masked ? font * 2.1f : font * 0.9f);
      const float wrap = std::max(origin.x + avail.x - x, font * 4);
      // Left out only when even the shortest bar leaves no room for it (a tiny view at a large UI scale).
      if (y + ImGui::CalcTextSize(step_note.c_str(), nullptr, false, wrap).y <= origin.y + avail.y)
        draw->AddText(ImGui::GetFont(), font, ImVec2(x, y), ImGui::GetColorU32(ImGuiCol_Text), step_note.c_str(), nullptr, wrap);
    }
  } else if (!step_note.empty()) {  // no shared bar: under the grid, when a line is left there
    const float bottom = origin.y + g.label_h + float(g.grid_rows) * (block_h + g.gap);
    if (bottom + font <= origin.y + avail.y)
      draw->AddText(ImVec2(origin.x + g.label_w, bottom), ImGui::GetColorU32(ImGuiCol_Text), step_note.c_str());
  }
  // Leave the cursor below the grid so the window knows its content size.
  ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + g.label_h + float(g.grid_rows) * (block_h + g.gap)));
  ImGui::Dummy(ImVec2(1, 1));
  return out;
}

}  // namespace attnscope::gui
