// widgets.h — small drawing helpers shared by the windows: placement, messages, rotated labels,
// kv-group colours, finite-only sliders, the busy spinner and the colour bar.
//
// Sections: placement · text · colours · sliders · busy indicator · colour bar · axis labels
#pragma once
#include <imgui.h>
#include <imgui_internal.h>
#include <imgui_stdlib.h>

#include <functional>
#include <string>
#include <vector>

#include "attnscope/figure/colormap.h"
#include "gui/app_state.h"

namespace attnscope::gui {

// ---- placement -------------------------------------------------------------------------------------
// The default layout: Input above Model in a left column, the chosen view filling the rest.
// centre: the middle of the screen (dialogs); main_centre: the middle of the main area, clear of the
// left column (a window shown over the view it belongs to, such as the Heads view's large head).
enum class Slot { left_top, left_bottom, main, right_third, centre, main_centre };
ImRect SlotRect(const AppState& state, Slot slot);
// Sets the next window's position and size: always in scripted runs and after "Reset layout",
// otherwise only when imgui.ini has no entry for it yet.
void PlaceNextWindow(const AppState& state, Slot slot);

// ---- text ------------------------------------------------------------------------------------------
void ErrorText(const std::string& message);   // red, wrapped; nothing when empty
void NoticeText(const std::string& message);  // amber, wrapped; nothing when empty
void HintText(const std::string& text);       // greyed, wrapped (also between CJK characters)
void HelpMarker(const char* text);            // "(?)" with a tooltip
void SectionHeader(const char* title);        // a little space, the title, a rule
// A view that works on a grid (wants_grid) or on a sentence, shown with the other kind of input: writes
// `explanation` and a button that switches the input (an edit of `panel`). Returns true when the input
// is the wrong kind; the caller then ends its window.
bool WrongInputForView(AppState& state, bool wants_grid, const char* explanation, Panel panel);
// Continues the line when an item `width` pixels wide still fits, else starts a new line (toolbars
// that wrap at large UI scales instead of running off the window).
void SameLineIfFits(float width);
float RadioWidth(const char* label);          // the width of ImGui::RadioButton(label)
// `text` cut to at most `max_width` pixels with "…" (whole code points).
std::string Ellipsize(const std::string& text, float max_width);
// Text rotated 90° counter-clockwise (reads bottom to top). The ink occupies the box from
// (x, y) to (x + line height, y + text width): `bottom_left` is that box's bottom-left corner.
void AddTextRotated(ImDrawList* draw, ImVec2 bottom_left, ImU32 color, const std::string& text);

// ---- colours ---------------------------------------------------------------------------------------
// The frame colour of kv group g: the engine's (heatmap_layout.h), so exports match the window.
ImU32 KvGroupColor(int group);
ImU32 ToImU32(Rgba c);
// Black or white, whichever reads better on `background`.
ImU32 ContrastText(ImU32 background);

// ---- sliders ---------------------------------------------------------------------------------------
// The divisors of n up to cap, smallest first.
std::vector<int> divisors(int n, int cap);
// A slider over a list of allowed integers: only those can be chosen. Returns true on change. The
// value shows as shown(value) (default: the number, or the number and `note`); a value that is not
// allowed (from a scene file or the command line) shows as itself, flagged.
bool SliderChoice(const char* label, int* value, const std::vector<int>& options,
                  const std::function<std::string(int)>& shown);
bool SliderChoice(const char* label, int* value, const std::vector<int>& options, const char* note = "");
// A double slider (Ctrl+click to type) that never stores NaN or ±∞: such input is refused, the old
// value kept, and `error` set to say so. Returns true when the value changed.
bool SliderDoubleFinite(const char* label, double* value, double min, double max, const char* format,
                        std::string& error, bool logarithmic = false);

// ---- busy indicator --------------------------------------------------------------------------------
// A spinner and "computing…" at the current cursor line when the worker has been busy > 100 ms.
void BusyIndicator(const AppState& state);
// A turning arc and `text` on one line (what BusyIndicator draws).
// While a checkpoint folder opens: a progress bar "opening <folder name>…". False (nothing drawn) when none
// is opening.
bool CheckpointLoadingBar(const AppState& state);
void SpinnerText(const std::string& text);

// ---- colour bar ------------------------------------------------------------------------------------
// A vertical colour bar in [min, max] with at most `ticks` numbers on its right (fewer when the bar is
// short), at round values (nice_ticks, heatmap_layout.h: the exports' rule); returns the width used by
// the numbers. `bar` caches the 1 × 256 texture of `map`. `drawn` (may be null) gets the tick values.
float DrawColorBar(ImDrawList* draw, ColorBarCache& bar, Colormap map, ImVec2 min, ImVec2 max, ValueRange range,
                   int ticks, std::vector<float>* drawn = nullptr);
// Width the numbers of DrawColorBar need, whatever the bar's height.
float ColorBarLabelWidth(ValueRange range, int ticks);
// The engine's one-line description of the grid input ("rings pattern, 16×16 cells"), in the window's
// language: in Chinese a generated pattern is described from the analysed scene's settings; an image's
// description (its file name and sizes) stays as the engine wrote it.
std::string GridNote(const AppState& state, const std::string& engine_note);
std::string FormatValue(float value);  // "0.125", "−3.2", "1.2e+04", "−∞"
// What a real model's tokenizer made of token i, for hovers: "id 1234 · piece “Ġcat” · bytes 20 63 61 74"
// (and "· special"). Empty with SPEC's word tokenizer, which has no ids.
std::string TokenDetail(const AttentionAnalysis& att, int i);

// ---- axis labels -----------------------------------------------------------------------------------
// Labels down the left of a heatmap (queries) or along its top (keys), thinned so that they never
// overlap; the selected one is always drawn, highlighted. A label drawn shortened shows the whole token
// in a tooltip. Records what it drew in `record` (may be null).
void DrawQueryLabels(ImDrawList* draw, const std::vector<std::string>& labels, ImVec2 image_min, float cell,
                     float max_width, int selected, LayoutRecord* record);
// rotated = false writes them upright, centred over their columns (the grid chooses that when every
// label fits a cell); rotated = true turns them along their columns, reading upwards, CJK ones
// (label_stacks, heatmap_layout.h) one character under the other as the exports draw them; either is
// cut to `max_height` only when longer.
void DrawKeyLabels(ImDrawList* draw, const std::vector<std::string>& labels, ImVec2 image_min, float cell,
                   float max_height, bool rotated, LayoutRecord* record);
// The widest label, capped at `cap` pixels.
float LabelExtent(const std::vector<std::string>& labels, float cap);
// How long a label is when turned along its column (stacked CJK: one line per character), and the
// longest of them capped at `cap`.
float TurnedLength(const std::string& label);
float TurnedExtent(const std::vector<std::string>& labels, float cap);

// ---- layout record -----------------------------------------------------------------------------------
// Adds the images of a heatmap grid that are not attention heads (relative position, convolution) to
// the layout record, with kv_group −1.
void RecordMaps(AppState& state, const HeatmapGridResult& grid, int rows, int cols);
// Adds the last ImGui item's rectangle to the layout record under `name`.
void RecordLastItem(AppState& state, const std::string& name);

}  // namespace attnscope::gui
