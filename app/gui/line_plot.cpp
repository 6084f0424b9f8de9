// line_plot.cpp — see line_plot.h.
#include "gui/line_plot.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>

#include "attnscope/figure/heatmap_layout.h"  // nice_ticks, format_tick
#include "gui/widgets.h"

namespace attnscope::gui {

ImU32 SeriesColor(int i) { return KvGroupColor(i); }

std::string TickText(float v) {
  char buf[32];
  const float a = std::fabs(v);
  if (a != 0 && (a >= 1e5f || a < 1e-3f)) {
    const float e = std::round(std::log10(a));
    if (std::fabs(a - std::pow(10.0f, e)) <= 1e-3f * a) std::snprintf(buf, sizeof buf, "%s1e%d", v < 0 ? "-" : "", int(e));
    else std::snprintf(buf, sizeof buf, "%.1e", double(v));
  }
  else if (a >= 100 || std::fabs(v - std::round(v)) <= 1e-4f * std::max(1.0f, a))  // 10 and 1, not 10.0 and 1.00
    std::snprintf(buf, sizeof buf, "%.0f", double(v));
  else if (a >= 10) std::snprintf(buf, sizeof buf, "%.1f", double(v));
  else std::snprintf(buf, sizeof buf, "%.2f", double(v));
  return buf;
}

int LegendRows(const std::vector<Series>& series, float width) {
  const float line = ImGui::GetTextLineHeight(), spacing = ImGui::GetStyle().ItemSpacing.x;
  int rows = series.empty() ? 0 : 1;
  float x = 0;
  for (size_t i = 0; i < series.size(); ++i) {
    const float text_w = ImGui::CalcTextSize(series[i].label.c_str()).x;
    const float item_w = line * 0.8f + 2 + text_w;  // the swatch, a gap, the label
    if (i > 0 && width - x - spacing < line + text_w + spacing) ++rows, x = item_w;  // as SameLineIfFits
    else x += (i > 0 ? spacing : 0) + item_w;
  }
  return rows;
}

void DrawLinePlot(const char* id, const std::vector<Series>& series, const char* x_name, const char* y_name,
                  float total_height, const LinePlotOptions& o) {
  ImGui::PushID(id);
  const float legend_h = float(LegendRows(series, std::max(ImGui::GetContentRegionAvail().x, 120.0f))) *
                         ImGui::GetTextLineHeightWithSpacing();
  const float height = std::max(total_height - legend_h - ImGui::GetStyle().ItemSpacing.y, ImGui::GetTextLineHeight() * 5);
  // The y axis in plotted units: log10(y) on a log axis.
  auto fy = [&](float y) { return o.log_y ? (y > 0 ? std::log10(y) : NAN) : y; };
  float x_min = FLT_MAX, x_max = -FLT_MAX, lo = FLT_MAX, hi = -FLT_MAX;
  for (const Series& s : series) {
    for (float x : s.x)
      if (std::isfinite(x)) x_min = std::min(x_min, x), x_max = std::max(x_max, x);
    for (float y : s.y)
      if (const float v = fy(y); std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  }
  if (o.x_from_zero || x_min > x_max) x_min = std::min(0.0f, x_min > x_max ? 0.0f : x_min);
  if (x_max <= x_min) x_max = x_min + 1;
  const bool fixed = o.y_lo < o.y_hi;
  if (fixed) lo = fy(o.y_lo), hi = fy(o.y_hi);
  if (lo > hi) lo = 0, hi = 1;
  if (hi - lo < 1e-6f) hi = lo + (o.log_y ? 1.0f : std::max(1.0f, std::fabs(lo)));
  if (!fixed) {
    const float pad = (hi - lo) * 0.05f;
    lo = !o.log_y && o.y_from_zero && lo >= 0 ? std::max(0.0f, lo - pad) : lo - pad;
    hi += pad;
  }

  ImDrawList* draw = ImGui::GetWindowDrawList();
  const float line = ImGui::GetTextLineHeight();
  auto tick_value = [&](float v) { return o.log_y ? std::pow(10.0f, v) : v; };
  // y ticks in plotted units: five even ones, or on a log axis the powers of ten inside the range (when
  // there are at least two; numbers like 1, 10, 100 read at a glance).
  std::vector<float> y_ticks;
  if (o.log_y)
    for (float e = std::ceil(lo); e <= hi; e += 1) y_ticks.push_back(e);
  // On a linear axis: round values (1, 2 or 5 × 10^k apart) with the decimals their step needs, as the colour
  // bars and the exports draw them — five even ones labelled "%.2f" read "0.00" four times on a KL of 0.001.
  float step = 0;
  if (y_ticks.size() < 2 && !o.log_y) {
    y_ticks = nice_ticks(ValueRange{lo, hi}, 5);
    step = tick_step(y_ticks);
  }
  if (y_ticks.size() < 2) {
    y_ticks.clear();
    step = 0;
    for (int i = 0; i <= 4; ++i) y_ticks.push_back(lo + (hi - lo) * float(i) / 4);
  }
  auto y_label = [&](float v) {
    if (step <= 0) return TickText(tick_value(v));
    const std::string t = format_tick(v, step);
    return !t.empty() && t[0] == '-' ? "−" + t.substr(1) : t;
  };
  float tick_w = 0;
  for (float v : y_ticks) tick_w = std::max(tick_w, ImGui::CalcTextSize(y_label(v).c_str()).x);
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float width = std::max(ImGui::GetContentRegionAvail().x, 120.0f);
  // y name rotated on the far left, the tick numbers, then the plot area; x ticks and name below it.
  const ImVec2 area_min(origin.x + line * 1.3f + tick_w + 6, origin.y + line * 0.5f);
  const ImVec2 area_max(origin.x + width - ImGui::CalcTextSize("0000").x * 0.5f, origin.y + height - line * 2.4f);
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text), grid = ImGui::GetColorU32(ImGuiCol_Border);
  draw->AddRectFilled(area_min, area_max, ImGui::GetColorU32(ImGuiCol_FrameBg));
  const float w = area_max.x - area_min.x, h = area_max.y - area_min.y;
  auto to_screen = [&](float x, float v) {  // v in plotted units
    return ImVec2(area_min.x + w * (x - x_min) / (x_max - x_min), area_max.y - h * (std::clamp(v, lo, hi) - lo) / (hi - lo));
  };
  for (float v : y_ticks) {
    const ImVec2 p = to_screen(x_min, v);
    draw->AddLine(ImVec2(area_min.x, p.y), ImVec2(area_max.x, p.y), grid);
    const std::string t = y_label(v);
    draw->AddText(ImVec2(area_min.x - 4 - ImGui::CalcTextSize(t.c_str()).x, p.y - line * 0.5f), text, t.c_str());
  }
  if (o.zero_line && !o.log_y && lo < 0 && hi > 0) {
    const ImVec2 p = to_screen(x_min, 0);
    draw->AddLine(ImVec2(area_min.x, p.y), ImVec2(area_max.x, p.y), text, std::max(1.0f, line * 0.08f));
  }
  // x ticks: four intervals, or fewer when the widest number would not fit between them
  const float x_tick_w = std::max(ImGui::CalcTextSize(o.integer_x ? std::to_string(int(x_max)).c_str() : TickText(x_max).c_str()).x,
                                  ImGui::CalcTextSize(o.integer_x ? std::to_string(int(x_min)).c_str() : TickText(x_min).c_str()).x) + line;
  const int x_intervals = std::clamp(int(w / std::max(x_tick_w, 1.0f)), 1, 4);
  for (int i = 0; i <= x_intervals; ++i) {
    float v = x_min + (x_max - x_min) * float(i) / float(x_intervals);
    if (o.integer_x) v = std::round(v);
    const ImVec2 p = to_screen(v, lo);
    draw->AddLine(ImVec2(p.x, area_min.y), ImVec2(p.x, area_max.y), grid);
    const std::string t = o.integer_x ? std::to_string(int(v)) : TickText(v);
    const float tw = ImGui::CalcTextSize(t.c_str()).x;
    draw->AddText(ImVec2(std::clamp(p.x - tw * 0.5f, area_min.x, area_max.x - tw), area_max.y + 2), text, t.c_str());
  }
  draw->AddRect(area_min, area_max, text);
  const float x_name_w = ImGui::CalcTextSize(x_name).x;
  draw->AddText(ImVec2(area_min.x + (w - x_name_w) * 0.5f, area_max.y + line + 4), text, x_name);
  AddTextRotated(draw, ImVec2(origin.x, area_min.y + (h + ImGui::CalcTextSize(y_name).x) * 0.5f), text, y_name);
  draw->PushClipRect(area_min, area_max, true);
  for (const Series& s : series) {
    std::vector<ImVec2> points;
    points.reserve(s.x.size());
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i)
      if (const float v = fy(s.y[i]); std::isfinite(v) && std::isfinite(s.x[i])) points.push_back(to_screen(s.x[i], v));
    if (points.size() >= 2) draw->AddPolyline(points.data(), int(points.size()), s.color, 0, std::max(1.5f, line * 0.12f));
    if (points.size() == 1 || o.points)
      for (const ImVec2& p : points) draw->AddCircleFilled(p, line * 0.2f, s.color);
  }
  draw->PopClipRect();
  ImGui::Dummy(ImVec2(width, height));
  // The nearest point of each series to the pointer's x.
  if (o.hover_format && ImGui::IsMouseHoveringRect(area_min, area_max)) {
    const float px = x_min + (ImGui::GetIO().MousePos.x - area_min.x) / w * (x_max - x_min);
    std::string tip;
    for (const Series& s : series) {
      size_t best = s.x.size();
      for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i)
        if (best == s.x.size() || std::fabs(s.x[i] - px) < std::fabs(s.x[best] - px)) best = i;
      if (best == s.x.size()) continue;
      char buf[256];
      std::snprintf(buf, sizeof buf, o.hover_format, s.label.c_str(), double(s.x[best]), double(s.y[best]));
      tip += (tip.empty() ? "" : "\n") + std::string(buf);
    }
    if (!tip.empty()) ImGui::SetTooltip("%s", tip.c_str());
  }
  // Legend: a colour swatch and the label of each series, wrapping.
  for (size_t i = 0; i < series.size(); ++i) {
    const Series& s = series[i];
    const float item_w = line + ImGui::CalcTextSize(s.label.c_str()).x + ImGui::GetStyle().ItemSpacing.x;
    if (i > 0) SameLineIfFits(item_w);
    const ImVec2 p = ImGui::GetCursorScreenPos();
    draw->AddRectFilled(ImVec2(p.x, p.y + line * 0.3f), ImVec2(p.x + line * 0.7f, p.y + line * 0.7f), s.color);
    ImGui::Dummy(ImVec2(line * 0.8f, line));
    ImGui::SameLine(0, 2);
    ImGui::TextUnformatted(s.label.c_str());
  }
  ImGui::PopID();
}

}  // namespace attnscope::gui
