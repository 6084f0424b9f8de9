// widgets.h — small drawing helpers shared by the windows: placement, messages, rotated labels,
// kv-group colours, finite-only sliders, the busy spinner and the colour bar.
//
// Sections: placement · text · colours · sliders · busy indicator · colour bar · axis labels
#pragma once
#include <imgui.h>
#include <imgui_internal.h>
#include <imgui_stdlib.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "attnscope/figure/colormap.h"
#include "attnscope/figure/export.h"  // ExportFormat
#include "core/user_path.h"  // user_path(): every path typed in the window
#include "gui/app_state.h"

namespace attnscope::gui {

// ---- placement -------------------------------------------------------------------------------------
// One layout rule (ARCHITECTURE.md): panels do not place themselves. ComputeLayout maps the screen
// below the menu bar, the UI scale and the open panels to one rectangle per slot, and every window is
// put in its slot each frame (docked: not movable or resizable by hand, so nothing can be dragged over
// the view). Left column: Input, Model, Lessons, stacked. Right column: Checkpoint, Head analysis,
// KV-cache calculator, Export, Shapes beside the view, stacked. The view (the chosen view's window, or
// the large head over it) owns the rest; Training and the Model view take the view's place while open.
// An empty column gives its width to the view. Dialogs (About, notices) sit in the middle of the screen.
enum class Slot {
  input, model, lessons,                                     // left column, top to bottom
  checkpoint, analysis, kv_cache, export_panel, shapes_side,  // right column, top to bottom
  view,                                                      // the current view (and the large head)
  training, model_view,                                      // in place of the view while open
  dialog,                                                    // centred, over everything (About, notices)
  banner,                                                    // presentation mode: the lesson step under the view
  count
};
const char* SlotName(Slot slot);  // "input", "view", … (the layout record's names)

struct LayoutInput {
  ImRect area;                 // the screen below the main menu bar
  float ui_scale = 1.0f;
  bool open[int(Slot::count)] = {};  // which panels are shown (view and dialog: ignored)
  // Presentation mode: no side panel, the view fills the area above the banner (0: no lesson banner).
  bool presenting = false;
  float banner_height = 0;
};
struct Layout {
  ImRect rect[int(Slot::count)];     // empty (zero size) for a panel that is not open
  bool open[int(Slot::count)] = {};
  ImRect left, right;                // the columns (empty when nothing is open in them)
  bool view_shown = true;            // false while Training or the Model view takes the view's place
  const ImRect& operator[](Slot s) const { return rect[int(s)]; }
};
Layout ComputeLayout(const LayoutInput& in);
// The layout input of this frame: the screen below the menu bar drawn this frame, the UI scale and
// the state's show_* flags.
LayoutInput LayoutInputOf(const AppState& state);
ImRect SlotRect(const AppState& state, Slot slot);
// The largest UI scale a window of `size` pixels offers (Ctrl+plus, Display → UI scale): the panels
// need the room of a 640 × 360 window at 100%, so 200% at 1280 × 720, 300% (the most) at 1920 × 1080;
// never below 100%.
float MaxUiScale(ImVec2 size);
// Puts the next window in its slot: every frame for the docked slots; a dialog is centred when it
// first shows and after "Reset layout" (it may be moved).
void PlaceNextWindow(const AppState& state, Slot slot);

// ---- text ------------------------------------------------------------------------------------------
// `message` with each command-line flag it names ("--heads", "--tokenizer") put in the window's words
// ("heads H", "the tokenizer field (Input window)"): the engine and the command line share their
// messages, and no message in the window names a flag. ErrorText and NoticeText apply it.
std::string WindowTerms(const std::string& message);
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
// Save PNG, Save SVG, Save CSV of a view's figure: `save(format)` on a click; recorded as "<id>.save_png" …
// `start_line`: the first button starts where the cursor is (else it continues the line when it fits).
void SaveFigureButtons(AppState& state, const char* id, bool start_line, const std::function<void(ExportFormat)>& save);
// What a Save button does after its click: the file exports/<name(stamp)> (stamp: the local time,
// "20261129-204500"; "-2", "-3", … before the extension while that name exists), the folder made, then
// `write(path)`, which writes it and returns its bytes; the status line says where it went and its size,
// or "not exported: " and why.
void SaveToExports(AppState& state, const std::function<std::string(const std::string& stamp)>& name,
                   const std::function<size_t(const std::filesystem::path&)>& write);
float RadioWidth(const char* label);          // the width of ImGui::RadioButton(label)
// `wanted` for the next item labelled `label`, narrowed so that the item and its label fit what is left
// of the line (a narrow column at a large UI scale); at least two frame heights.
float FitItemWidth(float wanted, const char* label);
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
// A slider over a list of allowed integers (ascending): only those can be chosen. Returns true on change.
// The value shows as shown(value) (default: the number, or the number and `note`); a value that is not
// allowed (from a scene file or the command line) shows as itself, flagged. A value typed into it
// (Ctrl+click, Tab) is the value, not a position: an allowed one is taken; another one takes the
// nearest allowed value (the smaller of two as near), and a note under the slider says so until the
// value changes again.
bool SliderChoice(const char* label, int* value, const std::vector<int>& options,
                  const std::function<std::string(int)>& shown);
bool SliderChoice(const char* label, int* value, const std::vector<int>& options, const char* note = "");
// ImGui's SliderInt / a 64-bit one (flags: e.g. ImGuiSliderFlags_Logarithmic). A typed value is taken
// when the typing ends (Enter, a click elsewhere), not at every key; one outside [min, max] or not a
// whole number takes the nearest allowed value, with a note under the slider.
bool SliderIntTyped(const char* label, int* value, int min, int max, const char* format = "%d",
                    ImGuiSliderFlags flags = 0);
bool SliderInt64Typed(const char* label, int64_t* value, int64_t min, int64_t max, const char* format = "%lld",
                      ImGuiSliderFlags flags = 0);
// A number field over [min, max] (Enter, Tab or a click elsewhere ends the typing): a typed value in
// range is taken as it is; one outside it, or not whole for an int, takes the nearest allowed value
// with the sliders' note under the field; a text that is no number keeps the value, with a note.
bool InputIntTyped(const char* label, int* value, int min, int max);
bool InputFloatTyped(const char* label, float* value, float min, float max, const char* format = "%g");
// A double slider (Ctrl+click to type) that never stores NaN or ±∞: a typed text that is no finite
// number keeps the old value, a typed value out of range is clamped, each with a note under the slider.
// `error` (the caller's message line) is cleared when the value changes. Returns true then.
bool SliderDoubleFinite(const char* label, double* value, double min, double max, const char* format,
                        std::string& error, bool logarithmic = false);

// ---- busy indicator --------------------------------------------------------------------------------
// A spinner and "computing…" at the current cursor line when the worker has been busy > 100 ms.
void BusyIndicator(const AppState& state);
// A turning arc and `text` on one line (what BusyIndicator draws).
// While a checkpoint folder opens: a progress bar "opening <folder name>…". False (nothing drawn) when none
// is opening.
bool CheckpointLoadingBar(const AppState& state);
// One model on screen: in the relative-position and convolution views, whose heads come from a
// position-only model of their own, while a checkpoint is current: a notice in place of the view, with
// Close the checkpoint. True when it drew that (the view draws nothing else).
bool CheckpointHidesOwnHeads(AppState& state);
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
// Labels on cells of `cell` pixels name every LabelStep-th token (1: every one), so that they never overlap.
int LabelStep(float cell);
// What the view says when labels are thinned: "every 2nd token labelled" (empty for step 1).
std::string LabelStepNote(int step);
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
// The same for the shown part of larger pictures (zoom.h): each records its first row and column and the
// columns shown ("first_query", "first_key", "shown"); "tokens" stays the whole pictures'.
void RecordShownMaps(AppState& state, const HeatmapGridResult& grid, const Shown& shown);
// Adds the last ImGui item's rectangle to the layout record under `name`.
void RecordLastItem(AppState& state, const std::string& name);

}  // namespace attnscope::gui
