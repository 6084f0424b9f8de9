#include "gui/widgets.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <initializer_list>
#include <utility>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <optional>
#include <unordered_map>

#include "attnscope/figure/heatmap_layout.h"
#include "attnscope/io/file_io.h"
#include "attnscope/figure/text_raster.h"
#include "attnscope/text/tokenizer.h"
#include "gui/classroom_windows.h"
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
    case Slot::banner: return "banner";
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
  layout.open[int(Slot::banner)] = false;
  if (in.presenting) {
    // Presentation: the view (or Training / the Model view in its place) fills the screen above the
    // lesson banner; no side panel, no dialog.
    for (const Slot side : {Slot::input, Slot::model, Slot::lessons, Slot::checkpoint, Slot::analysis, Slot::kv_cache,
                            Slot::export_panel, Slot::shapes_side, Slot::dialog})
      layout.open[int(side)] = false;
    const float banner = std::min(in.banner_height, s.y * 0.4f);
    const ImRect view = Rounded(p, ImVec2(p.x + s.x, p.y + s.y - banner));
    layout.left = ImRect(p, p);
    layout.right = ImRect(ImVec2(p.x + s.x, p.y), ImVec2(p.x + s.x, p.y));
    layout.rect[int(Slot::view)] = view;
    if (banner > 0) {
      layout.open[int(Slot::banner)] = true;
      layout.rect[int(Slot::banner)] = Rounded(ImVec2(p.x, view.Max.y), ImVec2(p.x + s.x, p.y + s.y));
    }
    const bool training = layout.open[int(Slot::training)], model_view = layout.open[int(Slot::model_view)];
    layout.view_shown = !training && !model_view;
    const float mid = std::round(view.Min.x + view.GetWidth() * 0.5f);
    if (training) layout.rect[int(Slot::training)] = model_view ? ImRect(view.Min, ImVec2(mid, view.Max.y)) : view;
    if (model_view) layout.rect[int(Slot::model_view)] = training ? ImRect(ImVec2(mid, view.Min.y), view.Max) : view;
    return layout;
  }
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
  if (state.presenting) p = vp->Pos, s = vp->Size;  // no menu bar: the whole screen
  else if (const float bar_bottom = state.layout.menu_bar_max.y; bar_bottom > p.y) {
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
  // the Rollout view and the Logit lens take the Model view's place
  open(Slot::model_view, state.show_model_view || state.show_rollout || state.show_lens);
  in.presenting = state.presenting;
  if (state.presenting) in.banner_height = LessonBannerHeight(state, s.x);
  return in;
}

float MaxUiScale(ImVec2 size) {
  const float fits = std::min(size.x / 640.0f, size.y / 360.0f);
  return std::clamp(std::floor(fits * 20.0f + 1e-3f) / 20.0f, 1.0f, 3.0f);
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

std::string WindowTerms(const std::string& message) {
  // Each flag the engine's and the command line's messages name, as the window calls the same thing.
  // (α and λ read the same in every language: not looked up.)
  static const std::pair<const char*, const char*> terms[] = {
      {"alpha", "α"}, {"alphas", TrKey("α of each head")}, {"deltas", TrKey("Δ of each head")},
      {"delta-preset", TrKey("the offsets preset")}, {"heads", "heads H"}, {"groups", "groups G"},
      {"d-model", "d_model C"}, {"kind", TrKey("the attention kind (Model window)")},
      {"text", TrKey("the sentence")}, {"input", TrKey("the tensor X.npy")},
      {"tokenizer", TrKey("the tokenizer field (Input window)")}, {"grid", TrKey("the grid's rows and cols")},
      {"pattern", "pattern"}, {"image", TrKey("the image path")}, {"query", TrKey("the query")},
      {"kernel", "kernel"}, {"lambda", "λ"}, {"view", TrKey("the view")}, {"scene", TrKey("the scene file")},
      {"checkpoint", TrKey("the Checkpoint window")}, {"attentions", TrKey("the Checkpoint window")},
      {"layer", TrKey("the layer slider")}, {"what", TrKey("what to export")}, {"out", TrKey("the export path")},
      {"format", TrKey("the export format")}, {"scores", TrKey("scores instead of probabilities")},
      {"weights", TrKey("the weights folder")}, {"weight-source", TrKey("the weights folder")},
      {"designed", TrKey("designed heads")}, {"seed", "seed"}, {"ids", TrKey("the token ids")},
  };
  std::string out;
  for (size_t i = 0; i < message.size();) {
    const bool flag = message.compare(i, 2, "--") == 0 && i + 2 < message.size() &&
                      std::islower(static_cast<unsigned char>(message[i + 2])) &&
                      (i == 0 || !std::isalnum(static_cast<unsigned char>(message[i - 1])));
    if (!flag) {
      out += message[i++];
      continue;
    }
    size_t end = i + 2;
    while (end < message.size() && (std::islower(static_cast<unsigned char>(message[end])) ||
                                    std::isdigit(static_cast<unsigned char>(message[end])) || message[end] == '-'))
      ++end;
    const std::string name = message.substr(i + 2, end - i - 2);
    const auto it = std::find_if(std::begin(terms), std::end(terms), [&](const auto& t) { return name == t.first; });
    if (it == std::end(terms)) out += name;  // an unknown flag: its name without the dashes
    else if (std::strcmp(it->second, "α") == 0 || std::strcmp(it->second, "λ") == 0) out += it->second;
    else out += tr(it->second);
    i = end;
  }
  return out;
}

// Both wrap with WrappedText: ImGui's own wrapping breaks Chinese only at spaces, or starts a line
// with "；". Both say what a message names by a command-line flag in the window's words (WindowTerms).
void ErrorText(const std::string& message) {
  if (message.empty()) return;
  ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(214, 39, 40, 255));
  WrappedText(WindowTerms(message));
  ImGui::PopStyleColor();
}

void NoticeText(const std::string& message) {
  if (message.empty()) return;
  ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(200, 120, 0, 255));
  WrappedText(WindowTerms(message));
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

void SaveFigureButtons(AppState& state, const char* id, bool start_line, const std::function<void(ExportFormat)>& save) {
  const std::pair<const char*, ExportFormat> buttons[] = {
      {TrKey("Save PNG"), ExportFormat::png}, {TrKey("Save SVG"), ExportFormat::svg}, {TrKey("Save CSV"), ExportFormat::csv}};
  bool first = true;
  for (const auto& [label, format] : buttons) {
    if (!first || !start_line) SameLineIfFits(ImGui::CalcTextSize(tr(label)).x + ImGui::GetStyle().FramePadding.x * 2);
    first = false;
    if (ImGui::Button(tr(label))) save(format);
    RecordLastItem(state, std::string(id) + ".save_" + to_string(format));
  }
}

void SaveToExports(AppState& state, const std::function<std::string(const std::string& stamp)>& name,
                   const std::function<size_t(const std::filesystem::path&)>& write) {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &local);
  try {
    const std::filesystem::path first = std::filesystem::path("exports") / name(stamp);
    std::filesystem::path path = first;
    std::error_code ec;
    for (int n = 2; std::filesystem::exists(path, ec) && n < 1000; ++n)
      path = first.parent_path() / (first.stem().string() + "-" + std::to_string(n) + first.extension().string());
    ensure_directory(path.parent_path());
    const size_t bytes = write(path);
    char size[32];
    std::snprintf(size, sizeof size, " (%.1f KiB)", double(bytes) / 1024.0);
    state.status = tr("wrote ") + user_path(path.string()).string() + size;
  } catch (const std::exception& e) {
    state.status = tr("not exported: ") + std::string(e.what());
  }
}

float FitItemWidth(float wanted, const char* label) {
  const float label_w = ImGui::CalcTextSize(label, nullptr, true).x;
  const float room = ImGui::GetContentRegionAvail().x - (label_w > 0 ? ImGui::GetStyle().ItemInnerSpacing.x + label_w : 0.0f);
  return std::max(std::min(wanted, room), ImGui::GetFrameHeight() * 2);
}

float RadioWidth(const char* label) {
  return ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(label).x;
}

std::string Ellipsize(const std::string& text, float max_width) {
  // Half a pixel of slack: a room computed as (widest + pad) − pad can come out a rounding error short
  // of the widest label itself.
  if (ImGui::CalcTextSize(text.c_str()).x <= max_width + 0.5f) return text;
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

// How the window's sliders take typed values. ImGui types into a slider after Ctrl+click, Tab or the
// keyboard's input key, and applies the text at every key, clamped or not; here the text is applied
// once, when the typing ends (Enter, Tab, a click elsewhere; Escape restores the text it started
// with), as the value itself: an allowed value is taken, another one becomes the nearest allowed value
// and a note under the slider says so until the value changes again.
namespace {

struct TypedNote {
  std::string text;
  double taken = 0;
};
std::unordered_map<ImGuiID, TypedNote>& TypedNotes() {
  static std::unordered_map<ImGuiID, TypedNote> notes;
  return notes;
}

// A typed number as the user wrote it: "16", "7.5".
std::string TypedNumber(double typed) {
  char buf[48];
  if (typed == std::floor(typed) && std::fabs(typed) < 1e15) std::snprintf(buf, sizeof buf, "%.0f", typed);
  else std::snprintf(buf, sizeof buf, "%g", typed);
  return buf;
}

// Draws the note of slider `id` on the line under it while it still holds the value it took; the
// slider stays the last item (for IsItemHovered and the layout record's RecordLastItem).
void DrawTypedNote(ImGuiID id, double value) {
  auto& notes = TypedNotes();
  const auto it = notes.find(id);
  if (it == notes.end()) return;
  if (it->second.taken != value) {
    notes.erase(it);
    return;
  }
  ImGuiContext& g = *GImGui;
  const ImGuiLastItemData slider = g.LastItemData;
  NoticeText(it->second.text);
  g.LastItemData = slider;
}

// What a slider takes for a typed text.
struct Typed {
  bool number = false;  // false: not a number (nothing taken)
  double value = 0;     // the value taken
  std::string note;     // empty when the typed value was taken as it is
};

// The text as a number: "16", " 7.5 ", "1e3". False for anything else ("", "3+", "nan").
bool ParseTyped(const std::string& text, double& typed) {
  char* end = nullptr;
  typed = std::strtod(text.c_str(), &end);
  if (end == text.c_str()) return false;
  while (*end == ' ') ++end;
  return *end == '\0' && std::isfinite(typed);
}

std::string OutOfRangeNote(double typed, double lo, const std::string& taken) {
  return typed < lo ? trf("%s is below the minimum: %s taken", TypedNumber(typed).c_str(), taken.c_str())
                    : trf("%s is above the maximum: %s taken", TypedNumber(typed).c_str(), taken.c_str());
}

Typed NotANumber(const std::string& text, const std::string& kept) {
  return {false, 0, trf("“%s” is not a number: %s kept", text.c_str(), kept.c_str())};
}

// A typed text for a slider over `options` (ascending): the nearest option (the smaller of two as near).
Typed TakeChoice(const std::string& text, int current, const std::vector<int>& options) {
  double typed = 0;
  if (!ParseTyped(text, typed)) return NotANumber(text, std::to_string(current));
  int best = options.front();
  for (int o : options)
    if (std::fabs(double(o) - typed) < std::fabs(double(best) - typed)) best = o;
  if (double(best) == typed) return {true, double(best), {}};
  if (typed < double(options.front()) || typed > double(options.back()))
    return {true, double(best), OutOfRangeNote(typed, double(options.front()), std::to_string(best))};
  // Inside the range but not allowed: name the two allowed values around it.
  const auto above = std::upper_bound(options.begin(), options.end(), int(std::floor(typed)));
  const int lo = *(above - 1), hi = above == options.end() ? lo : *above;
  return {true, double(best),
          trf("%s not allowed (%d or %d): %d taken", TypedNumber(typed).c_str(), lo, hi, best)};
}

// A typed text for a slider over [min, max], of whole numbers when `whole`; `format` shows a value.
Typed TakeInRange(const std::string& text, double current, double min, double max, bool whole, const char* format) {
  auto shown = [&](double v) {
    char buf[64];
    if (whole) std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
    else std::snprintf(buf, sizeof buf, format, v);
    return std::string(buf);
  };
  double typed = 0;
  if (!ParseTyped(text, typed)) return NotANumber(text, shown(current));
  if (typed < min || typed > max) {
    const double taken = std::clamp(whole ? std::round(typed) : typed, min, max);
    return {true, taken, OutOfRangeNote(typed, min, shown(taken))};
  }
  if (whole && typed != std::round(typed))
    return {true, std::round(typed), trf("%s is not a whole number: %s taken", TypedNumber(typed).c_str(), shown(std::round(typed)).c_str())};
  return {true, typed, {}};
}

// The text being typed into each slider (ImGui's TempInputText writes into it at every key).
std::unordered_map<ImGuiID, std::array<char, 64>>& TypingBuffers() {
  static std::unordered_map<ImGuiID, std::array<char, 64>> buffers;
  return buffers;
}

// The slider's rectangles, laid out as ImGui::SliderScalar does. False when clipped (nothing to draw).
struct SliderRects {
  ImGuiID id = 0;
  ImRect frame, total;
  ImVec2 label_size;
};
bool LayOutSlider(const char* label, SliderRects& r) {
  ImGuiWindow* window = ImGui::GetCurrentWindow();
  if (window->SkipItems) return false;
  const ImGuiStyle& style = ImGui::GetStyle();
  r.id = window->GetID(label);
  const float w = ImGui::CalcItemWidth();
  r.label_size = ImGui::CalcTextSize(label, nullptr, true);
  const ImVec2 pos = window->DC.CursorPos;
  r.frame = ImRect(pos, ImVec2(pos.x + w, pos.y + r.label_size.y + style.FramePadding.y * 2.0f));
  r.total = ImRect(r.frame.Min, ImVec2(r.frame.Max.x + (r.label_size.x > 0.0f ? style.ItemInnerSpacing.x + r.label_size.x : 0.0f),
                                       r.frame.Max.y));
  ImGui::ItemSize(r.total, style.FramePadding.y);
  return ImGui::ItemAdd(r.total, r.id, &r.frame, ImGuiItemFlags_Inputable);
}

// The text field over a slider while it is typed into; the typed text once the typing has ended.
// `start` is the text it starts with when this call starts the typing.
std::optional<std::string> TypeIntoSlider(const SliderRects& r, const char* label, const std::string& start, bool decimal) {
  auto [it, fresh] = TypingBuffers().try_emplace(r.id);
  if (fresh) std::snprintf(it->second.data(), it->second.size(), "%s", start.c_str());
  ImGui::TempInputText(r.frame, r.id, label, it->second.data(), int(it->second.size()),
                       ImGuiInputTextFlags_AutoSelectAll |
                           (decimal ? ImGuiInputTextFlags_CharsDecimal : ImGuiInputTextFlags_CharsScientific));
  if (ImGui::TempInputIsActive(r.id)) return std::nullopt;  // still typing
  std::string text = it->second.data();
  TypingBuffers().erase(r.id);
  return text;
}

// Applies what typing gave: the note (or none), and the value when it is a number. True when the value
// changed.
//
// The typing ends when the field loses the active id, and that is often to another widget: a click into
// the Input window's sentence box, which is drawn before the Training window's fields, makes the box
// active in the very frame the field reads its text. ImGui::MarkItemEdited is only for the active item
// (it asserts so, and it marks the active item's "edited" flags, which would then belong to the box):
// then only this item is marked edited.
template <typename T>
bool TakeTyped(ImGuiID id, const Typed& t, T* value) {
  TypedNotes().erase(id);
  if (!t.note.empty()) TypedNotes()[id] = {t.note, t.number ? t.value : double(*value)};
  if (!t.number || T(t.value) == *value) return false;
  *value = T(t.value);
  ImGuiContext& g = *GImGui;
  if (g.ActiveId == id || g.ActiveId == 0 || g.DragDropActive) ImGui::MarkItemEdited(id);
  else g.LastItemData.StatusFlags |= ImGuiItemStatusFlags_Edited;
  return true;
}

// ImGui's slider of `type` over [min, max] (it draws and drags; a drag never leaves the range), with
// the typing done here: ImGui starts it (the frame of the Ctrl+click) and this takes it over from the
// next frame on.
template <typename T>
bool SliderRange(const char* label, ImGuiDataType type, T* value, T min, T max, const char* format,
                 ImGuiSliderFlags flags, bool whole) {
  ImGuiWindow* window = ImGui::GetCurrentWindow();
  if (window->SkipItems) return false;
  const ImGuiID id = window->GetID(label);
  if (ImGui::TempInputIsActive(id)) {
    SliderRects r;
    if (!LayOutSlider(label, r)) return false;
    char start[64];
    if (whole) std::snprintf(start, sizeof start, "%lld", static_cast<long long>(*value));
    else std::snprintf(start, sizeof start, "%g", double(*value));
    const std::optional<std::string> text = TypeIntoSlider(r, label, start, whole);
    if (!text) return false;
    const bool changed = TakeTyped(id, TakeInRange(*text, double(*value), double(min), double(max), whole, format), value);
    DrawTypedNote(id, double(*value));
    return changed;
  }
  TypingBuffers().erase(id);
  T edited = *value;
  ImGui::SliderScalar(label, type, &edited, &min, &max, format, flags | ImGuiSliderFlags_AlwaysClamp);
  // Only a drag changes it here (the frame that starts typing applies nothing).
  const bool changed = !ImGui::TempInputIsActive(id) && edited != *value;
  if (changed) {
    *value = std::clamp(edited, min, max);
    TypedNotes().erase(id);
  }
  DrawTypedNote(id, double(*value));
  return changed;
}

}  // namespace

// ImGui::SliderScalar's own drawing, with the slider over the positions in `options` and a typed
// text read as a value, not as a position (ImGui's SliderInt over the positions would read a typed 16
// as the 16th position, the last one, clamped).
bool SliderChoice(const char* label, int* value, const std::vector<int>& options,
                  const std::function<std::string(int)>& shown_for) {
  if (options.empty()) return false;
  SliderRects r;
  if (!LayOutSlider(label, r)) return false;
  ImGuiWindow* window = ImGui::GetCurrentWindow();
  ImGuiContext& g = *GImGui;
  const ImGuiStyle& style = g.Style;
  const ImGuiID id = r.id;
  const bool hovered = ImGui::ItemHoverable(r.frame, id);
  bool typing = ImGui::TempInputIsActive(id);
  if (!typing) {
    TypingBuffers().erase(id);
    const bool tabbed = (g.LastItemData.StatusFlags & ImGuiItemStatusFlags_FocusedByTabbing) != 0;
    const bool clicked = hovered && g.IO.MouseClicked[0];
    if (tabbed || clicked || g.NavActivateId == id || g.NavActivateInputId == id) {
      ImGui::SetActiveID(id, window);
      ImGui::SetFocusID(id, window);
      ImGui::FocusWindow(window);
      g.ActiveIdUsingNavDirMask |= (1 << ImGuiDir_Left) | (1 << ImGuiDir_Right);
      typing = tabbed || (clicked && g.IO.KeyCtrl) || g.NavActivateInputId == id;
    }
  }
  if (typing) {
    const std::optional<std::string> text = TypeIntoSlider(r, label, std::to_string(*value), true);
    if (!text) return false;
    const bool changed = TakeTyped(id, TakeChoice(*text, *value, options), value);
    DrawTypedNote(id, *value);
    return changed;
  }

  int index = int(std::find(options.begin(), options.end(), *value) - options.begin());
  const bool allowed = index < int(options.size());
  if (!allowed) index = 0;
  const std::string full = allowed ? shown_for(options[size_t(index)]) : std::to_string(*value) + tr(" (not allowed)");
  const ImU32 frame_col = ImGui::GetColorU32(g.ActiveId == id ? ImGuiCol_FrameBgActive
                                             : hovered        ? ImGuiCol_FrameBgHovered
                                                              : ImGuiCol_FrameBg);
  ImGui::RenderNavHighlight(r.frame, id);
  ImGui::RenderFrame(r.frame.Min, r.frame.Max, frame_col, true, style.FrameRounding);
  ImRect grab;
  const int first = 0, last = int(options.size()) - 1;
  int moved = index;
  bool changed = ImGui::SliderBehavior(r.frame, id, ImGuiDataType_S32, &moved, &first, &last, "%d",
                                       ImGuiSliderFlags_AlwaysClamp, &grab);
  const bool has_grab = grab.Max.x > grab.Min.x;
  if (has_grab) {
    window->DrawList->AddRectFilled(grab.Min, grab.Max,
                                    ImGui::GetColorU32(g.ActiveId == id ? ImGuiCol_SliderGrabActive : ImGuiCol_SliderGrab),
                                    style.GrabRounding);
    RecordSliderGrab(id, grab.Min, grab.Max);
  }
  // The value and its note stay off the grab ("8  (MLA: G = H)" over the grab read as neither): centred on
  // the frame when that misses the grab, else centred beside it on the wider side. When it does not fit
  // beside the grab (a grab in the middle of a short slider), it is centred on a patch of the frame's
  // colour over the grab, so it still reads and the grab shows on both sides. The number alone only
  // when the note does not fit the frame at all.
  const float pad = style.FramePadding.x;
  std::string shown;
  ImRect box = r.frame;
  bool over_grab = false;
  for (const std::string& text : {full, std::to_string(*value)}) {
    const float w = ImGui::CalcTextSize(text.c_str()).x, centre = (r.frame.Min.x + r.frame.Max.x) * 0.5f;
    if (w > r.frame.GetWidth() - 2 * pad) continue;
    if (!has_grab || centre + w * 0.5f + pad * 0.5f <= grab.Min.x || centre - w * 0.5f - pad * 0.5f >= grab.Max.x) {
      shown = text;
      box = r.frame;
      break;
    }
    const bool left = grab.Min.x - r.frame.Min.x >= r.frame.Max.x - grab.Max.x;
    const ImRect side = left ? ImRect(r.frame.Min, ImVec2(grab.Min.x, r.frame.Max.y)) : ImRect(ImVec2(grab.Max.x, r.frame.Min.y), r.frame.Max);
    shown = text;
    if (w <= side.GetWidth() - 2 * pad) box = side;
    else over_grab = true;
    break;
  }
  if (shown.empty()) shown = std::to_string(*value);  // not even the number fits: cut, as ImGui's own sliders
  if (over_grab) {
    const float w = ImGui::CalcTextSize(shown.c_str()).x, centre = (r.frame.Min.x + r.frame.Max.x) * 0.5f;
    // The frame's colour as it looks over the window (opaque: the grab must not show through).
    const ImVec4 f = style.Colors[ImGuiCol_FrameBg], b = style.Colors[ImGuiCol_WindowBg];
    const ImU32 patch = ImGui::GetColorU32(ImVec4(f.x * f.w + b.x * (1 - f.w), f.y * f.w + b.y * (1 - f.w), f.z * f.w + b.z * (1 - f.w), 1.0f));
    window->DrawList->AddRectFilled(ImVec2(centre - w * 0.5f - pad * 0.5f, r.frame.Min.y + 2),
                                    ImVec2(centre + w * 0.5f + pad * 0.5f, r.frame.Max.y - 2), patch, style.FrameRounding);
  }
  ImGui::RenderTextClipped(box.Min, box.Max, shown.c_str(), nullptr, nullptr, ImVec2(0.5f, 0.5f));
  if (r.label_size.x > 0.0f)
    ImGui::RenderText(ImVec2(r.frame.Max.x + style.ItemInnerSpacing.x, r.frame.Min.y + style.FramePadding.y), label);
  moved = std::clamp(moved, first, last);
  changed = changed && options[size_t(moved)] != *value;
  if (changed) {
    *value = options[size_t(moved)];
    TypedNotes().erase(id);
    ImGui::MarkItemEdited(id);
  }
  DrawTypedNote(id, *value);
  return changed;
}

bool SliderChoice(const char* label, int* value, const std::vector<int>& options, const char* note) {
  return SliderChoice(label, value, options, [note](int v) { return std::to_string(v) + note; });
}

bool SliderIntTyped(const char* label, int* value, int min, int max, const char* format, ImGuiSliderFlags flags) {
  return SliderRange(label, ImGuiDataType_S32, value, min, max, format, flags, true);
}

bool SliderInt64Typed(const char* label, int64_t* value, int64_t min, int64_t max, const char* format,
                      ImGuiSliderFlags flags) {
  return SliderRange(label, ImGuiDataType_S64, value, min, max, format, flags, true);
}

namespace {

// A number field (no slider) over [min, max] that takes its typed text as the sliders above do: once,
// when the typing ends, the value itself or the nearest allowed one with a note under the field.
template <typename T>
bool FieldRange(const char* label, T* value, double min, double max, bool whole, const char* format) {
  ImGuiWindow* window = ImGui::GetCurrentWindow();
  if (window->SkipItems) return false;
  ImGuiContext& g = *GImGui;
  const ImGuiID id = window->GetID(label);
  auto shown = [&](double v) {
    char buf[64];
    if (whole) std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
    else std::snprintf(buf, sizeof buf, format, v);
    return std::string(buf);
  };
  auto [it, fresh] = TypingBuffers().try_emplace(id);
  // The field shows the value unless it is being typed into, or its typing ended this frame (the text
  // is read below).
  if (fresh || (g.ActiveId != id && g.ActiveIdPreviousFrame != id))
    std::snprintf(it->second.data(), it->second.size(), "%s", shown(double(*value)).c_str());
  ImGui::InputText(label, it->second.data(), it->second.size(),
                   ImGuiInputTextFlags_AutoSelectAll | (whole ? ImGuiInputTextFlags_CharsDecimal : ImGuiInputTextFlags_CharsScientific));
  bool changed = false;
  if (ImGui::IsItemDeactivated()) {
    const std::string text = it->second.data();
    changed = TakeTyped(id, TakeInRange(text, double(*value), min, max, whole, format), value);
    std::snprintf(it->second.data(), it->second.size(), "%s", shown(double(*value)).c_str());
  }
  DrawTypedNote(id, double(*value));
  return changed;
}

}  // namespace

bool InputIntTyped(const char* label, int* value, int min, int max) {
  return FieldRange(label, value, double(min), double(max), true, "%d");
}

bool InputFloatTyped(const char* label, float* value, float min, float max, const char* format) {
  return FieldRange(label, value, double(min), double(max), false, format);
}

bool SliderDoubleFinite(const char* label, double* value, double min, double max, const char* format,
                        std::string& error, bool logarithmic) {
  // Typed text is parsed here (TakeInRange): "nan" or "inf" is no number, and the value is kept.
  const bool changed =
      SliderRange(label, ImGuiDataType_Double, value, min, max, format, logarithmic ? ImGuiSliderFlags_Logarithmic : 0, false);
  if (changed) error.clear();
  return changed;
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

bool CheckpointHidesOwnHeads(AppState& state) {
  if (!state.checkpoint.current()) return false;
  ImGui::Spacing();
  NoticeText(trf("A checkpoint (%s) is the current model. This view's heads come from a position-only model of its own, "
                 "so they are shown only while no checkpoint is open: one model on screen at a time.",
                 state.checkpoint.name().c_str()));
  if (ImGui::Button(tr("Close the checkpoint"))) CloseCheckpoint(state);
  RecordLastItem(state, "view.close_checkpoint");
  HintText(tr("The Heads and Shapes views draw the checkpoint."));
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

// A tick mark is 0.3 of the font long and its number starts 0.35 of the font after it: a mark that
// touched its number read as a minus sign ("+0.5" as "-0.5", "−0.5" as "- −0.5"), which on a diverging
// scale flips the meaning.
constexpr float tick_mark = 0.3f, tick_text = 0.65f;
// The width right of the bar that a number takes besides its own: mark, gap and a little after it.
float ColorBarTickRoom() { return ImGui::GetFontSize() * (tick_text + 0.1f); }
}  // namespace

float ColorBarLabelWidth(ValueRange range, int ticks) {
  // Whatever height the bar gets, its numbers are one of these sets.
  float w = 0;
  for (int most = 2; most <= std::max(ticks, 2); ++most) {
    const std::vector<float> values = nice_ticks(range, most);
    for (const float v : values) w = std::max(w, ImGui::CalcTextSize(TickText(v, tick_step(values)).c_str()).x);
  }
  return w + ColorBarTickRoom();
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
  if (drawn) drawn->clear();
  float width = 0;
  float last_ty = -FLT_MAX;  // where the previous number was drawn
  for (const float v : values) {
    const float f = flat ? 0.5f : normalise(v, range);  // 0 at the bottom
    const float y = max.y - (max.y - min.y) * f;
    const std::string s = TickText(v, step);
    // Centred on its tick, but inside what can be drawn: a bar at the very top of a child (the
    // Convolution window's) would lose the upper half of its top number.
    const float ty = std::clamp(y - font * 0.5f, std::max(min.y - font * 0.5f, draw->GetClipRectMin().y),
                                std::max(max.y - font * 0.5f, draw->GetClipRectMin().y));
    // A bar shorter than two lines (small tiles at a large UI scale) keeps the numbers that do not
    // run into one another.
    if (std::fabs(ty - last_ty) < font * 0.9f) continue;
    last_ty = ty;
    draw->AddLine(ImVec2(max.x, y), ImVec2(max.x + font * tick_mark, y), text);
    draw->AddText(ImVec2(max.x + font * tick_text, ty), text, s.c_str());
    if (drawn) drawn->push_back(v);
    width = std::max(width, ImGui::CalcTextSize(s.c_str()).x);
  }
  return width + ColorBarTickRoom();
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

}  // namespace

int LabelStep(float cell) {
  const float line = ImGui::GetFontSize() * 0.9f;  // glyphs' ink is shorter than the line
  return std::max(1, int(std::ceil(line / std::max(cell, 1e-3f))));
}

std::string LabelStepNote(int step) {
  if (step <= 1) return "";
  // English: "every 2nd token labelled"; Chinese: "每 2 个词元标注一个".
  std::string nth = std::to_string(step);
  if (UiLanguage() != Language::zh) {
    const int tens = step % 100, ones = step % 10;
    nth += tens >= 11 && tens <= 13 ? "th" : ones == 1 ? "st" : ones == 2 ? "nd" : ones == 3 ? "rd" : "th";
  }
  return trf("every %s token labelled", nth.c_str());
}

namespace {

// Which labels to draw: every step-th, plus the selected one with its near neighbours left out.
std::vector<int> thinned(int count, float cell, int selected) {
  const int step = LabelStep(cell);
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

void RecordShownMaps(AppState& state, const HeatmapGridResult& grid, const Shown& shown) {
  const size_t first = state.layout.heads.size();
  RecordMaps(state, grid, shown.texture_rows, shown.texture_cols);
  for (size_t i = first; i < state.layout.heads.size(); ++i) {
    LayoutRecord::Head& rec = state.layout.heads[i];
    rec.first_query = shown.row;
    rec.first_key = shown.col;
    rec.shown = shown.cols;
  }
}

void RecordLastItem(AppState& state, const std::string& name) {
  // Not an item of a window ImGui lays out unseen (a popup's first frame, which sizes it: the next frame
  // may place it elsewhere, e.g. above its combo): a click aimed at it there would miss.
  if (const ImGuiWindow* w = ImGui::GetCurrentWindowRead(); w && w->Hidden) return;
  const ImVec2 s = state.framebuffer_scale, min = ImGui::GetItemRectMin(), max = ImGui::GetItemRectMax();
  state.layout.widgets.push_back({name, ImVec2(min.x * s.x, min.y * s.y), ImVec2(max.x * s.x, max.y * s.y)});
}

}  // namespace attnscope::gui
