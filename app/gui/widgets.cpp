#include "gui/widgets.h"

#include <algorithm>
#include <filesystem>
#include <initializer_list>
#include <utility>
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

namespace {

ImRect Rounded(ImVec2 min, ImVec2 max) {
  return ImRect(ImVec2(std::round(min.x), std::round(min.y)), ImVec2(std::round(max.x), std::round(max.y)));
}

// Stacks the open slots of `column` (top to bottom) in `rect`, each as tall as its weight's share.
void Stack(Layout& layout, const ImRect& rect, std::initializer_list<std::pair<Slot, float>> column) {
  float total = 0;
  for (const auto& [slot, weight] : column)
    if (layout.open[int(slot)]) total += weight;
  float y = rect.Min.y;
  for (const auto& [slot, weight] : column) {
    if (!layout.open[int(slot)]) continue;
    const float h = rect.GetHeight() * weight / total;
    layout.rect[int(slot)] = Rounded(ImVec2(rect.Min.x, y), ImVec2(rect.Max.x, y + h));
    y += h;
  }
}

}  // namespace

const char* SlotName(Slot slot) {
  switch (slot) {
    case Slot::input: return "input";
    case Slot::model: return "model";
    case Slot::lessons: return "lessons";
    case Slot::checkpoint: return "checkpoint";
    case Slot::analysis: return "analysis";
    case Slot::kv_cache: return "kv_cache";
    case Slot::export_panel: return "export";
    case Slot::shapes_side: return "shapes_side";
    case Slot::view: return "view";
    case Slot::training: return "training";
    case Slot::model_view: return "model_view";
    case Slot::dialog: return "dialog";
    case Slot::count: break;
  }
  return "";
}

Layout ComputeLayout(const LayoutInput& in) {
  Layout layout;
  const ImVec2 p = in.area.Min, s = in.area.GetSize();
  const float scale = in.ui_scale;
  for (int i = 0; i < int(Slot::count); ++i) layout.open[i] = in.open[i];
  layout.open[int(Slot::view)] = layout.open[int(Slot::dialog)] = true;
  auto any_open = [&](std::initializer_list<Slot> slots) {
    for (const Slot slot : slots)
      if (layout.open[int(slot)]) return true;
    return false;
  };
  const bool left_open = any_open({Slot::input, Slot::model, Slot::lessons});
  const bool right_open =
      any_open({Slot::checkpoint, Slot::analysis, Slot::kv_cache, Slot::export_panel, Slot::shapes_side});
  // Column widths grow with the UI scale (their text does), within a share of the screen; together
  // they leave the view at least 38% of the width (a narrow screen narrows both).
  float left = left_open ? std::min(std::clamp(s.x * 0.27f, 330.0f * scale, 560.0f * scale), s.x * 0.45f) : 0.0f;
  float right = right_open ? std::min(std::clamp(s.x * 0.30f, 360.0f * scale, 600.0f * scale), s.x * 0.45f) : 0.0f;
  if (const float most = s.x * 0.62f; left + right > most) {
    left *= most / (left + right);
    right = most - left;
  }
  layout.left = left_open ? Rounded(p, ImVec2(p.x + left, p.y + s.y)) : ImRect(p, p);
  layout.right = right_open ? Rounded(ImVec2(p.x + s.x - right, p.y), ImVec2(p.x + s.x, p.y + s.y))
                            : ImRect(ImVec2(p.x + s.x, p.y), ImVec2(p.x + s.x, p.y));
  Stack(layout, layout.left, {{Slot::input, 0.42f}, {Slot::model, 0.58f}, {Slot::lessons, 1.0f}});
  Stack(layout, layout.right,
        {{Slot::checkpoint, 1.2f}, {Slot::analysis, 1.2f}, {Slot::kv_cache, 1.0f}, {Slot::export_panel, 1.0f},
         {Slot::shapes_side, 1.0f}});
  const ImRect view(ImVec2(layout.left.Max.x, p.y), ImVec2(layout.right.Min.x, p.y + s.y));
  layout.rect[int(Slot::view)] = view;
  // Training and the Model view are whole workspaces: they take the view's place (side by side when
  // both are open), and the view is not drawn under them.
  const bool training = layout.open[int(Slot::training)], model_view = layout.open[int(Slot::model_view)];
  layout.view_shown = !training && !model_view;
  const float mid = std::round(view.Min.x + view.GetWidth() * 0.5f);
  if (training) layout.rect[int(Slot::training)] = model_view ? ImRect(view.Min, ImVec2(mid, view.Max.y)) : view;
  if (model_view) layout.rect[int(Slot::model_view)] = training ? ImRect(ImVec2(mid, view.Min.y), view.Max) : view;
  const ImVec2 size(std::min(s.x * 0.6f, 720.0f * scale), std::min(s.y * 0.7f, 560.0f * scale));
  const ImVec2 min(p.x + (s.x - size.x) * 0.5f, p.y + (s.y - size.y) * 0.5f);
  layout.rect[int(Slot::dialog)] = Rounded(min, ImVec2(min.x + size.x, min.y + size.y));
  return layout;
}

LayoutInput LayoutInputOf(const AppState& state) {
  // The screen below the main menu bar. ImGui's work area leaves the bar out only from the frame
  // after it was first drawn, so the bar drawn this frame counts too: a first start must not lay
  // its windows over it.
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImVec2 p = vp->WorkPos, s = vp->WorkSize;
  if (const float bar_bottom = state.layout.menu_bar_max.y; bar_bottom > p.y) {
    s.y -= bar_bottom - p.y;
    p.y = bar_bottom;
  }
  LayoutInput in;
  in.area = ImRect(p, ImVec2(p.x + s.x, p.y + s.y));
  in.ui_scale = state.ui_scale;
  auto open = [&in](Slot slot, bool shown) { in.open[int(slot)] = shown; };
  open(Slot::input, state.show_input);
  open(Slot::model, state.show_model);
  open(Slot::lessons, state.show_lessons);
  open(Slot::checkpoint, state.show_checkpoint);
  open(Slot::analysis, state.show_analysis);
  open(Slot::kv_cache, state.show_kv_cache);
  open(Slot::export_panel, state.show_export);
  open(Slot::shapes_side, state.show_shapes_floating);
  open(Slot::training, state.show_training);
  open(Slot::model_view, state.show_model_view);
  return in;
}

ImRect SlotRect(const AppState& state, Slot slot) { return ComputeLayout(LayoutInputOf(state))[slot]; }

void PlaceNextWindow(const AppState& state, Slot slot) {
  const ImRect r = SlotRect(state, slot);
  const bool dialog = slot == Slot::dialog;
  const ImGuiCond cond = (!dialog || state.scripted || state.reset_layout) ? ImGuiCond_Always : ImGuiCond_FirstUseEver;
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
  SameLineIfFits(ImGui::CalcTextSize("(?)").x);  // a narrow panel puts it on the next line, not past its edge
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
  WrappedText(title);  // a side panel may be narrower than a long title
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
// The value at fraction f of the bar; one within a millionth of the span from 0 is 0, so a probability
// bar whose smallest entry is 3.9e-15 reads "0", not "3.86e-15".
float ColorBarTick(ValueRange range, float f) {
  const float v = range.lo + (range.hi - range.lo) * f;
  return std::fabs(v) <= std::fabs(range.hi - range.lo) * 1e-6f ? 0.0f : v;
}
}  // namespace

float ColorBarLabelWidth(ValueRange range, int ticks) {
  float w = 0;
  for (int i = 0; i < ticks; ++i) {
    const float v = ColorBarTick(range, float(i) / float(std::max(1, ticks - 1)));
    w = std::max(w, ImGui::CalcTextSize(FormatValue(v).c_str()).x);
  }
  return w + ImGui::GetFontSize() * 0.5f;
}

float DrawColorBar(ImDrawList* draw, ColorBarCache& bar, Colormap map, ImVec2 min, ImVec2 max, ValueRange range,
                   int ticks) {
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
  float width = 0;
  for (int i = 0; i < (flat ? 1 : ticks); ++i) {
    const float f = flat ? 0.5f : float(i) / float(std::max(1, ticks - 1));  // 0 at the bottom
    const float v = flat ? range.lo : ColorBarTick(range, f);
    const float y = max.y - (max.y - min.y) * f;
    draw->AddLine(ImVec2(max.x, y), ImVec2(max.x + font * 0.3f, y), text);
    const std::string s = FormatValue(v);
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

}  // namespace

void DrawQueryLabels(ImDrawList* draw, const std::vector<std::string>& labels, ImVec2 image_min, float cell,
                     float max_width, int selected, LayoutRecord* record) {
  const float font = ImGui::GetFontSize();
  const float pad = font * 0.3f;
  for (int i : thinned(int(labels.size()), cell, selected)) {
    const std::string text = Ellipsize(labels[size_t(i)], max_width);
    const ImVec2 size = ImGui::CalcTextSize(text.c_str());
    const ImVec2 pos(image_min.x - pad - size.x, image_min.y + (float(i) + 0.5f) * cell - size.y * 0.5f);
    if (i == selected) {
      draw->AddRectFilled(ImVec2(pos.x - 2, pos.y), ImVec2(pos.x + size.x + 2, pos.y + size.y),
                          ImGui::GetColorU32(ImGuiCol_HeaderActive), 3.0f);
    }
    draw->AddText(pos, ImGui::GetColorU32(ImGuiCol_Text), text.c_str());
    if (record) record->labels.push_back({text, "query", i, pos, ImVec2(pos.x + size.x, pos.y + size.y)});
  }
}

void DrawKeyLabels(ImDrawList* draw, const std::vector<std::string>& labels, ImVec2 image_min, float cell,
                   float max_height, bool rotated, LayoutRecord* record) {
  const float font = ImGui::GetFontSize();
  const float pad = font * 0.3f;
  const ImU32 color = ImGui::GetColorU32(ImGuiCol_Text);
  // Upright labels are as wide as they are long: thin them by their width, not the line height.
  const float upright_cell = rotated ? cell : cell * font * 0.9f / std::max(LabelExtent(labels, max_height), 1.0f);
  for (int i : thinned(int(labels.size()), rotated ? cell : upright_cell, -1)) {
    const std::string text = Ellipsize(labels[size_t(i)], max_height);
    const ImVec2 size = ImGui::CalcTextSize(text.c_str());  // x: length along the text
    const float centre = image_min.x + (float(i) + 0.5f) * cell;
    ImVec2 min, max;
    if (rotated) {
      const ImVec2 bottom_left(centre - size.y * 0.5f, image_min.y - pad);
      AddTextRotated(draw, bottom_left, color, text);
      min = ImVec2(bottom_left.x, bottom_left.y - size.x);
      max = ImVec2(bottom_left.x + size.y, bottom_left.y);
    } else {
      min = ImVec2(centre - size.x * 0.5f, image_min.y - pad - size.y);
      max = ImVec2(min.x + size.x, min.y + size.y);
      draw->AddText(min, color, text.c_str());
    }
    if (record) record->labels.push_back({text, "key", i, min, max});
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
