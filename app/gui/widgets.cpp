#include "gui/widgets.h"

#include <algorithm>
#include <filesystem>
#include <cfloat>
#include <cmath>
#include <cstdio>

#include "attnscope/figure/heatmap_layout.h"
#include "attnscope/figure/text_raster.h"
#include "attnscope/text/tokenizer.h"
#include "gui/i18n.h"
#include "gui/layout_record.h"

namespace attnscope::gui {

// ---- placement -------------------------------------------------------------------------------------

ImRect SlotRect(const AppState& state, Slot slot) {
  // The screen below the main menu bar. ImGui's work area leaves the bar out only from the frame
  // after it was first drawn, so the bar drawn this frame counts too: a first start must not lay
  // its windows over it.
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImVec2 p = vp->WorkPos, s = vp->WorkSize;
  if (const float bar_bottom = state.layout.menu_bar_max.y; bar_bottom > p.y) {
    s.y -= bar_bottom - p.y;
    p.y = bar_bottom;
  }
  const float scale = state.ui_scale;
  const float left = std::min(std::clamp(s.x * 0.27f, 330.0f * scale, 560.0f * scale), s.x * 0.45f);
  const float top_h = std::round(s.y * 0.42f);
  switch (slot) {
    case Slot::left_top: return ImRect(p, ImVec2(p.x + left, p.y + top_h));
    case Slot::left_bottom: return ImRect(ImVec2(p.x, p.y + top_h), ImVec2(p.x + left, p.y + s.y));
    case Slot::main: return ImRect(ImVec2(p.x + left, p.y), ImVec2(p.x + s.x, p.y + s.y));
    case Slot::right_third: return ImRect(ImVec2(p.x + s.x * 0.62f, p.y), ImVec2(p.x + s.x, p.y + s.y));
    case Slot::centre: {
      const ImVec2 size(std::min(s.x * 0.6f, 720.0f * scale), std::min(s.y * 0.7f, 560.0f * scale));
      const ImVec2 min(p.x + (s.x - size.x) * 0.5f, p.y + (s.y - size.y) * 0.5f);
      return ImRect(min, ImVec2(min.x + size.x, min.y + size.y));
    }
    case Slot::main_centre: {
      const ImVec2 mp(p.x + left, p.y), ms(s.x - left, s.y);
      const ImVec2 size(std::min(ms.x * 0.9f, 720.0f * scale), std::min(ms.y * 0.9f, 560.0f * scale));
      const ImVec2 min(mp.x + (ms.x - size.x) * 0.5f, mp.y + (ms.y - size.y) * 0.5f);
      return ImRect(min, ImVec2(min.x + size.x, min.y + size.y));
    }
  }
  return ImRect(p, ImVec2(p.x + s.x, p.y + s.y));
}

void PlaceNextWindow(const AppState& state, Slot slot) {
  const ImRect r = SlotRect(state, slot);
  const ImGuiCond cond = (state.scripted || state.reset_layout) ? ImGuiCond_Always : ImGuiCond_FirstUseEver;
  ImGui::SetNextWindowPos(r.Min, cond);
  ImGui::SetNextWindowSize(r.GetSize(), cond);
}

// ---- text ------------------------------------------------------------------------------------------

// Both wrap with WrappedText: ImGui's own wrapping breaks Chinese only at spaces, or starts a line
// with "；".
void ErrorText(const std::string& message) {
  if (message.empty()) return;
  ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(214, 39, 40, 255));
  WrappedText(message);
  ImGui::PopStyleColor();
}

void NoticeText(const std::string& message) {
  if (message.empty()) return;
  ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(200, 120, 0, 255));
  WrappedText(message);
  ImGui::PopStyleColor();
}

void HintText(const std::string& text) {
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  WrappedText(text);
  ImGui::PopStyleColor();
}

void HelpMarker(const char* text) {
  ImGui::SameLine();
  ImGui::TextDisabled("(?)");
  if (ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 32.0f);
    ImGui::TextUnformatted(text);
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
}

void SectionHeader(const char* title) {
  ImGui::Spacing();
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_PlotHistogramHovered));
  ImGui::TextUnformatted(title);
  ImGui::PopStyleColor();
  ImGui::Separator();
}

bool WrongInputForView(AppState& state, bool wants_grid, const char* explanation, Panel panel) {
  if ((state.scene.input.source == InputSource::grid) == wants_grid) return false;
  ImGui::TextWrapped("%s", explanation);
  if (ImGui::Button(wants_grid ? tr("Use a grid") : tr("Use the sentence"))) {
    state.scene.input.source = wants_grid ? InputSource::grid : InputSource::text;
    NoteEdit(state, panel);
  }
  return true;
}

void SameLineIfFits(float width) {
  ImGui::SameLine();
  if (ImGui::GetContentRegionAvail().x < width) ImGui::NewLine();
}

float RadioWidth(const char* label) {
  return ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(label).x;
}

std::string Ellipsize(const std::string& text, float max_width) {
  if (ImGui::CalcTextSize(text.c_str()).x <= max_width) return text;
  const std::u32string cps = decode_utf8_lenient(text);
  const float ellipsis = ImGui::CalcTextSize("…").x;
  std::string out;
  for (char32_t cp : cps) {
    std::string next = out + encode_utf8(cp);
    if (ImGui::CalcTextSize(next.c_str()).x + ellipsis > max_width) break;
    out = std::move(next);
  }
  return out + "…";
}

void AddTextRotated(ImDrawList* draw, ImVec2 bottom_left, ImU32 color, const std::string& text) {
  // Lay the text out unrotated at the clip rectangle's corner (so no glyph is culled), then turn
  // its vertices a quarter turn counter-clockwise into place.
  const ImVec4 clip = draw->_CmdHeader.ClipRect;
  const ImVec2 origin(clip.x, clip.y);
  const int first = draw->VtxBuffer.Size;
  {
    const TextRecordPause laid_out_elsewhere;  // recorded below, where it ends up
    draw->AddText(origin, color, text.c_str());
  }
  for (int i = first; i < draw->VtxBuffer.Size; ++i) {
    ImDrawVert& v = draw->VtxBuffer[i];
    const float u = v.pos.x - origin.x;  // along the baseline
    const float w = v.pos.y - origin.y;  // down from the top of the line
    v.pos = ImVec2(bottom_left.x + w, bottom_left.y - u);
  }
  const ImVec2 size = ImGui::CalcTextSize(text.c_str());
  RecordText(text, ImVec2(bottom_left.x, bottom_left.y - size.x), ImVec2(bottom_left.x + size.y, bottom_left.y));
}

// ---- colours ---------------------------------------------------------------------------------------

ImU32 KvGroupColor(int group) { return ToImU32(kv_group_color(group)); }

ImU32 ToImU32(Rgba c) { return IM_COL32(c.r, c.g, c.b, c.a); }

ImU32 ContrastText(ImU32 background) {
  const ImVec4 c = ImGui::ColorConvertU32ToFloat4(background);
  const float luminance = 0.2126f * c.x + 0.7152f * c.y + 0.0722f * c.z;
  return luminance > 0.55f ? IM_COL32(0, 0, 0, 255) : IM_COL32(255, 255, 255, 255);
}

// ---- sliders ---------------------------------------------------------------------------------------

std::vector<int> divisors(int n, int cap) {
  std::vector<int> out;
  for (int d = 1; d <= std::min(n, cap); ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

bool SliderChoice(const char* label, int* value, const std::vector<int>& options,
                  const std::function<std::string(int)>& shown_for) {
  int index = int(std::find(options.begin(), options.end(), *value) - options.begin());
  const bool allowed = index < int(options.size());
  if (!allowed) index = 0;
  const std::string shown = allowed ? shown_for(options[size_t(index)]) : std::to_string(*value) + tr(" (not allowed)");
  if (!ImGui::SliderInt(label, &index, 0, int(options.size()) - 1, shown.c_str(), ImGuiSliderFlags_AlwaysClamp))
    return false;
  index = std::clamp(index, 0, int(options.size()) - 1);
  if (options[size_t(index)] == *value) return false;
  *value = options[size_t(index)];
  return true;
}

bool SliderChoice(const char* label, int* value, const std::vector<int>& options, const char* note) {
  return SliderChoice(label, value, options, [note](int v) { return std::to_string(v) + note; });
}

bool SliderDoubleFinite(const char* label, double* value, double min, double max, const char* format,
                        std::string& error, bool logarithmic) {
  double edited = *value;
  ImGuiSliderFlags flags = ImGuiSliderFlags_AlwaysClamp;
  if (logarithmic) flags |= ImGuiSliderFlags_Logarithmic;
  if (!ImGui::SliderScalar(label, ImGuiDataType_Double, &edited, &min, &max, format, flags)) return false;
  if (!std::isfinite(edited)) {
    error = std::string(label).substr(0, std::string(label).find("##")) +
            tr(": only finite numbers are allowed, the value was kept");
    return false;
  }
  // AlwaysClamp lets NaN through its comparisons; clamp again after the check above.
  edited = std::clamp(edited, min, max);
  if (edited == *value) return false;
  *value = edited;
  error.clear();
  return true;
}

// ---- busy indicator --------------------------------------------------------------------------------

void BusyIndicator(const AppState& state) {
  if (!state.worker || state.worker->seconds_busy() < 0.1) return;
  SpinnerText(trf("computing… %.1f s", state.worker->seconds_busy()));
}

bool CheckpointLoadingBar(const AppState& state) {
  const CheckpointWindowState& c = state.checkpoint;
  if (c.loading.empty()) return false;
  const std::string name = std::filesystem::path(c.loading).filename().string();  // a full path overflows
  ImGui::ProgressBar(float(c.loader ? c.loader->progress() : 0), ImVec2(-FLT_MIN, 0), trf("opening %s…", name.c_str()).c_str());
  return true;
}

void SpinnerText(const std::string& text) {
  ImDrawList* draw = ImGui::GetWindowDrawList();
  const float r = ImGui::GetFontSize() * 0.45f;
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const ImVec2 c(p.x + r + 2, p.y + ImGui::GetFontSize() * 0.5f);
  const float t = float(ImGui::GetTime());
  const int segments = 24;
  const float start = t * 6.0f;
  draw->PathClear();
  for (int i = 0; i <= segments; ++i) {
    const float a = start + float(i) / float(segments) * 4.5f;
    draw->PathLineTo(ImVec2(c.x + std::cos(a) * r, c.y + std::sin(a) * r));
  }
  draw->PathStroke(ImGui::GetColorU32(ImGuiCol_Text), 0, r * 0.35f);
  ImGui::Dummy(ImVec2(2 * r + 6, ImGui::GetFontSize()));
  ImGui::SameLine();
  ImGui::TextUnformatted(text.c_str());
}

// ---- colour bar ------------------------------------------------------------------------------------

std::string GridNote(const AppState& state, const std::string& engine_note) {
  if (UiLanguage() != Language::zh || !state.analysis) return engine_note;
  const InputSettings& in = state.analysis->scene.input;
  if (in.source != InputSource::grid || !in.grid.image_path.empty()) return engine_note;
  const std::string size = std::to_string(in.grid.rows) + "×" + std::to_string(in.grid.cols);
  if (in.grid.pattern == "noise")
    return trf("noise pattern (seed %s), %s cells", std::to_string(in.grid.seed).c_str(), size.c_str());
  return trf("%s pattern, %s cells", tr(in.grid.pattern.c_str()), size.c_str());
}

std::string TokenDetail(const AttentionAnalysis& att, int i) {
  const Encoding& e = att.encoding;
  if (i < 0 || size_t(i) >= e.size() || e.ids[size_t(i)] == kNoTokenId) return {};
  std::string hex;
  for (const unsigned char b : e.bytes[size_t(i)]) {
    char two[4];
    std::snprintf(two, sizeof two, "%s%02X", hex.empty() ? "" : " ", unsigned(b));
    hex += two;
  }
  std::string out = trf("id %d · piece “%s” · bytes %s", int(e.ids[size_t(i)]), e.pieces[size_t(i)].c_str(),
                        hex.empty() ? "—" : hex.c_str());
  if (e.special[size_t(i)]) out += tr(" · special");
  return out;
}

std::string FormatValue(float value) {
  if (std::isinf(value)) return value < 0 ? "−∞" : "+∞";
  if (std::isnan(value)) return "NaN";
  if (value == 0.0f) return "0";  // never "−0"
  char buf[32];
  const float a = std::fabs(value);
  if (a != 0 && (a < 1e-3f || a >= 1e4f)) std::snprintf(buf, sizeof buf, "%.2e", double(value));
  else std::snprintf(buf, sizeof buf, "%.3g", double(value));
  std::string s = buf;
  if (!s.empty() && s[0] == '-') s = "−" + s.substr(1);  // a real minus sign reads better
  return s;
}

namespace {
// A tick's number as the exports write it (format_tick), with a real minus sign.
std::string TickText(float value, float step) {
  const std::string s = format_tick(value, step);
  return !s.empty() && s[0] == '-' ? "−" + s.substr(1) : s;
}

// How many ticks a bar `height` pixels tall has room for (numbers a line and a half apart), at most `ticks`.
int TicksFor(float height, int ticks) {
  return std::clamp(int(height / (ImGui::GetFontSize() * 1.5f)) + 1, 2, std::max(ticks, 2));
}
}  // namespace

float ColorBarLabelWidth(ValueRange range, int ticks) {
  // Whatever height the bar gets, its numbers are one of these sets.
  float w = 0;
  for (int most = 2; most <= std::max(ticks, 2); ++most) {
    const std::vector<float> values = nice_ticks(range, most);
    for (const float v : values) w = std::max(w, ImGui::CalcTextSize(TickText(v, tick_step(values)).c_str()).x);
  }
  return w + ImGui::GetFontSize() * 0.5f;
}

float DrawColorBar(ImDrawList* draw, ColorBarCache& bar, Colormap map, ImVec2 min, ImVec2 max, ValueRange range,
                   int ticks, std::vector<float>* drawn) {
  if (bar.map != int(map) || !bar.strip.valid()) {
    std::vector<Rgba> pixels(256);
    for (int i = 0; i < 256; ++i) pixels[size_t(i)] = colormap_lookup(map, float(255 - i) / 255.0f);
    bar.strip.update(1, 256, pixels);  // top row = high values
    bar.map = int(map);
  }
  // A range without spread (one token: every probability 1) colours everything as its middle
  // (normalise): one swatch of that colour and one tick, not a gradient with the same number at every tick.
  const bool flat = !(range.hi > range.lo) || !std::isfinite(range.lo) || !std::isfinite(range.hi);  // as normalise()
  if (flat) {
    const Rgba c = colormap_lookup(map, 0.5f);
    draw->AddRectFilled(min, max, IM_COL32(c.r, c.g, c.b, 255));
  } else {
    draw->AddImage(bar.strip.id(), min, max);
  }
  draw->AddRect(min, max, ImGui::GetColorU32(ImGuiCol_Border));
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  const float font = ImGui::GetFontSize();
  // Round numbers (1-2-5 steps) where they fall on the bar, as exported figures have them; the ends
  // are only numbered when they are round.
  const std::vector<float> values = flat ? std::vector<float>{range.lo} : nice_ticks(range, TicksFor(max.y - min.y, ticks));
  const float step = tick_step(values);
  if (drawn) *drawn = values;
  float width = 0;
  for (const float v : values) {
    const float f = flat ? 0.5f : normalise(v, range);  // 0 at the bottom
    const float y = max.y - (max.y - min.y) * f;
    draw->AddLine(ImVec2(max.x, y), ImVec2(max.x + font * 0.3f, y), text);
    const std::string s = TickText(v, step);
    // Centred on its tick, but inside what can be drawn: a bar at the very top of a child (the
    // Convolution window's) would lose the upper half of its top number.
    const float ty = std::clamp(y - font * 0.5f, std::max(min.y - font * 0.5f, draw->GetClipRectMin().y),
                                std::max(max.y - font * 0.5f, draw->GetClipRectMin().y));
    draw->AddText(ImVec2(max.x + font * 0.4f, ty), text, s.c_str());
    width = std::max(width, ImGui::CalcTextSize(s.c_str()).x);
  }
  return width + font * 0.5f;
}

// ---- axis labels -----------------------------------------------------------------------------------

float LabelExtent(const std::vector<std::string>& labels, float cap) {
  float w = 0;
  for (const std::string& l : labels) {
    w = std::max(w, ImGui::CalcTextSize(l.c_str()).x);
    if (w >= cap) return cap;
  }
  return w;
}

float TurnedLength(const std::string& label) {
  if (!label_stacks(label)) return ImGui::CalcTextSize(label.c_str()).x;
  return float(decode_utf8_lenient(label).size()) * ImGui::GetFontSize();
}

float TurnedExtent(const std::vector<std::string>& labels, float cap) {
  float h = 0;
  for (const std::string& l : labels) {
    h = std::max(h, TurnedLength(l));
    if (h >= cap) return cap;
  }
  return h;
}

namespace {

// Which labels to draw: every step-th, plus the selected one with its near neighbours left out.
std::vector<int> thinned(int count, float cell, int selected) {
  const float line = ImGui::GetFontSize() * 0.9f;  // glyphs' ink is shorter than the line
  const int step = std::max(1, int(std::ceil(line / std::max(cell, 1e-3f))));
  std::vector<int> out;
  for (int i = 0; i < count; i += step) {
    if (selected >= 0 && i != selected && std::abs(i - selected) < step) continue;
    out.push_back(i);
  }
  if (selected >= 0 && selected < count && (selected % step != 0)) out.push_back(selected);
  return out;
}

// A CJK label along its column, one character under the other (each centred on `centre_x`), cut to
// `max_height` with "…" in the last place. Returns what was drawn and its box.
std::string AddTextStacked(ImDrawList* draw, float centre_x, float bottom, float max_height, ImU32 color,
                           const std::string& label, ImVec2& min, ImVec2& max) {
  const float line = ImGui::GetFontSize();
  std::vector<std::string> chars;
  for (const char32_t cp : decode_utf8_lenient(label)) chars.push_back(encode_utf8(cp));
  const size_t room = size_t(std::max(1.0f, std::floor(max_height / line)));
  if (chars.size() > room) {
    chars.resize(room - 1);
    chars.push_back("…");
  }
  std::string shown;
  float widest = 0;
  for (const std::string& c : chars) {
    shown += c;
    widest = std::max(widest, ImGui::CalcTextSize(c.c_str()).x);
  }
  min = ImVec2(centre_x - widest * 0.5f, bottom - line * float(chars.size()));
  max = ImVec2(centre_x + widest * 0.5f, bottom);
  {
    const TextRecordPause recorded_whole;  // one text for the label, recorded below
    float y = min.y;
    for (const std::string& c : chars) {
      draw->AddText(ImVec2(centre_x - ImGui::CalcTextSize(c.c_str()).x * 0.5f, y), color, c.c_str());
      y += line;
    }
  }
  RecordText(shown, min, max);
  return shown;
}

// The whole token as a tooltip over a label drawn shortened.
void FullLabelTooltip(bool shortened, ImVec2 min, ImVec2 max, const std::string& full) {
  if (shortened && ImGui::IsWindowHovered() && ImGui::IsMouseHoveringRect(min, max, false))
    ImGui::SetTooltip("%s", full.c_str());
}

}  // namespace

void DrawQueryLabels(ImDrawList* draw, const std::vector<std::string>& labels, ImVec2 image_min, float cell,
                     float max_width, int selected, LayoutRecord* record) {
  const float font = ImGui::GetFontSize();
  const float pad = font * 0.3f;
  for (int i : thinned(int(labels.size()), cell, selected)) {
    const std::string& full = labels[size_t(i)];
    const std::string text = Ellipsize(full, max_width);
    const ImVec2 size = ImGui::CalcTextSize(text.c_str());
    const ImVec2 pos(image_min.x - pad - size.x, image_min.y + (float(i) + 0.5f) * cell - size.y * 0.5f);
    if (i == selected) {
      draw->AddRectFilled(ImVec2(pos.x - 2, pos.y), ImVec2(pos.x + size.x + 2, pos.y + size.y),
                          ImGui::GetColorU32(ImGuiCol_HeaderActive), 3.0f);
    }
    draw->AddText(pos, ImGui::GetColorU32(ImGuiCol_Text), text.c_str());
    const ImVec2 end(pos.x + size.x, pos.y + size.y);
    FullLabelTooltip(text != full, pos, end, full);
    if (record) record->labels.push_back({text, "query", i, pos, end, full, "upright", text != full});
  }
}

void DrawKeyLabels(ImDrawList* draw, const std::vector<std::string>& labels, ImVec2 image_min, float cell,
                   float max_height, bool rotated, LayoutRecord* record) {
  const float font = ImGui::GetFontSize();
  const float pad = font * 0.3f;
  const ImU32 color = ImGui::GetColorU32(ImGuiCol_Text);
  // Upright labels are as wide as they are long: thin them by their width, not the line height.
  const float upright_cell = rotated ? cell : cell * font * 0.9f / std::max(LabelExtent(labels, FLT_MAX), 1.0f);
  for (int i : thinned(int(labels.size()), rotated ? cell : upright_cell, -1)) {
    const std::string& full = labels[size_t(i)];
    const float centre = image_min.x + (float(i) + 0.5f) * cell;
    const float bottom = image_min.y - pad;
    ImVec2 min, max;
    std::string text;
    const char* orientation = "upright";
    if (rotated && label_stacks(full)) {
      orientation = "stacked";
      text = AddTextStacked(draw, centre, bottom, max_height, color, full, min, max);
    } else if (rotated) {
      orientation = "turned";
      text = Ellipsize(full, max_height);
      const ImVec2 size = ImGui::CalcTextSize(text.c_str());  // x: length along the text
      const ImVec2 bottom_left(centre - size.y * 0.5f, bottom);
      AddTextRotated(draw, bottom_left, color, text);
      min = ImVec2(bottom_left.x, bottom_left.y - size.x);
      max = ImVec2(bottom_left.x + size.y, bottom_left.y);
    } else {
      // The grid turns the labels when one is wider than its column; never wider than the cell here.
      text = Ellipsize(full, std::max(cell, font));
      const ImVec2 size = ImGui::CalcTextSize(text.c_str());
      min = ImVec2(centre - size.x * 0.5f, bottom - size.y);
      max = ImVec2(min.x + size.x, min.y + size.y);
      draw->AddText(min, color, text.c_str());
    }
    FullLabelTooltip(text != full, min, max, full);
    if (record) record->labels.push_back({text, "key", i, min, max, full, orientation, text != full});
  }
}

// ---- layout record -----------------------------------------------------------------------------------

void RecordMaps(AppState& state, const HeatmapGridResult& grid, int rows, int cols) {
  const ImVec2 s = state.framebuffer_scale;
  for (size_t i = 0; i < grid.image_min.size(); ++i) {
    LayoutRecord::Head rec;
    rec.head = int(i);
    rec.kv_group = -1;
    rec.tokens = std::max(rows, cols);
    rec.min = ImVec2(grid.image_min[i].x * s.x, grid.image_min[i].y * s.y);
    rec.max = ImVec2((grid.image_min[i].x + grid.image_size.x) * s.x, (grid.image_min[i].y + grid.image_size.y) * s.y);
    rec.cell = grid.cell * s.x;
    rec.frame = grid.frame * s.x;
    state.layout.heads.push_back(rec);
  }
}

void RecordLastItem(AppState& state, const std::string& name) {
  const ImVec2 s = state.framebuffer_scale, min = ImGui::GetItemRectMin(), max = ImGui::GetItemRectMax();
  state.layout.widgets.push_back({name, ImVec2(min.x * s.x, min.y * s.y), ImVec2(max.x * s.x, max.y * s.y)});
}

}  // namespace attnscope::gui
