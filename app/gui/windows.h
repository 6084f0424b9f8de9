// windows.h — one DrawXxxWindow(AppState&) per file, each reading the Analysis and editing the Scene.
//
//   window_menu.cpp    main menu bar: views, windows, UI scale, theme, status
//   window_input.cpp   sentence / tensor / grid input and the token list
//   window_model.cpp   kind, d_model, heads, groups, causal, seed, K/V source
//   window_heads.cpp   one heatmap per head, kv-group frames, colour bar, hover and selection
//   window_shapes.cpp  the shape trace, parameter counts, KV bytes, what changed
//   window_relpos.cpp  relative-position heads on a sentence (1D) and on a grid (2D)
//   window_conv.cpp    a K×K convolution as K² heads, beside the true convolution
//   window_export.cpp  the Export panel: PNG / SVG / CSV / .npy of what is on screen
//   window_about.cpp   Help → About: version, git revision, assets folder, library licences
//   window_checkpoint.cpp  Windows → Checkpoint: open a real model, what it is, its next tokens
//   window_model_view.cpp  Windows → Model view: the open model's L × H heads as thumbnails
#pragma once
#include <vector>
#include "gui/app_state.h"
#include "attnscope/figure/compare.h"

namespace attnscope::gui {

void DrawMenuBar(AppState& state);
// The chosen language's translation file was missing or broken: says so (in English, the words the
// window falls back to) until closed. Drawn last, so that it starts in front of the other windows.
void DrawTranslationNotice(AppState& state);
void DrawInputWindow(AppState& state);
void DrawModelWindow(AppState& state);
void DrawHeadsWindow(AppState& state);
// The Heads view of a long input (window_heads_long.cpp): its pooled heads inside the Heads window, and the zoom's
// exact cells in a window of their own (drawn after it).
void DrawLongHeads(AppState& state);
void DrawLongZoom(AppState& state);
// Shared with the Model view's thumbnails of a long input (window_model_view.cpp): the tokens a pooled block spans
// ("8–15", one token: "8"); the pooling as the window names it ("max-pooled 8×8", "mean-pooled 8×8", "exact cells");
// a block's tooltip lines (its token ranges, or its tokens when exact, and its max or mean); the line saying how far
// the worker's cache of pooled heads and its prefetch went.
std::string LongBlockRange(const model::PooledMap& m, int b);
std::string LongPoolingName(const model::PooledMap& m);
void LongBlockTooltipLines(const model::PooledMap& m, int r, int c, const std::vector<std::string>& labels);
std::string LongCacheLine(const LongOverview& o);
// The blocks a side to ask for a tile `side` framebuffer pixels wide, asked `now`: in steps of 32 up to `most`, the
// same while the tile is within an eighth below it (so that a relayout of a few pixels pools nothing again).
int LongPixels(float side, int now, int most);
// Why a head attends (window_qk.cpp): a right-click on a cell of the Heads view opens its menu (QkCellMenu, at the
// cell's screen position), whose item opens the panel beside the cell; DrawQkMenu inside the Heads window, DrawQkPanel
// after it.
void QkCellMenu(AppState& state, int head, int query, int key, ImVec2 anchor);
void DrawQkMenu(AppState& state);
void DrawQkPanel(AppState& state);
// Compare A/B (window_compare.cpp): the Heads toolbar's Keep as A / Compare with A buttons, the window
// over the Heads view, and A kept from a scene file (--compare-a, scripted runs and tests).
void CompareToolbar(AppState& state);
void DrawCompareWindow(AppState& state);
void KeepAsA(AppState& state);
// False (the reason on the status line) when the file cannot be read or analysed.
bool KeepSceneFileAsA(AppState& state, const std::string& path, CompareView view);
// Compare A/B's figure as shown (A, B, view, scale, token range) for an export of `format`: Save PNG/SVG
// and Copy figure draw it. Nothing while the Compare window is closed or shows no comparison.
struct CompareExport {
  std::shared_ptr<const Analysis> a, b;
  CompareRequest request;
};
std::optional<CompareExport> CompareOnScreen(AppState& state, ExportFormat format);
void DrawShapesWindow(AppState& state, bool floating);
void DrawRelpos1dWindow(AppState& state);
void DrawRelpos2dWindow(AppState& state);
void DrawConvWindow(AppState& state);
// The Positions view (window_positions.cpp), its scheme controls (shared with the Model window; true when
// edited) and the heads it draws beside them (window_heads.cpp).
void DrawPositionsWindow(AppState& state);
bool DrawPositionControls(AppState& state, ModelSettings& model);
void DrawHeadsBeside(AppState& state);
void DrawExportWindow(AppState& state);
void DrawAboutWindow(AppState& state);
// Help → Keys (window_keys.cpp): every shortcut of the window, from key_bindings().
void DrawKeysWindow(AppState& state);
// Help → Getting started (window_getting_started.cpp): what attnscope shows, the lessons, presenting, a real
// model; opened by a first start with nothing saved.
void DrawGettingStartedWindow(AppState& state);
struct KeyBinding {
  const char* id;      // stable name (layout record "keys.<id>", shortcut_of)
  const char* group;   // where it works ("Anywhere", "Heatmaps", …), English, translated when drawn
  const char* keys;    // the keys as printed on a keyboard ("Ctrl+E"), or a pointer action ("double-click")
  const char* action;  // what it does, English, translated when drawn
  bool pointer = false;  // `keys` is a pointer action, translated when drawn
};
const std::vector<KeyBinding>& key_bindings();
// The keys of binding `id` ("Ctrl+E"), for a menu item's shortcut text; nullptr for an unknown id.
const char* shortcut_of(const char* id);
void DrawCheckpointWindow(AppState& state);
// The Model window while a checkpoint is the current model: its card (what it is, its layer, the K/V
// heads conversion) in place of the synthetic settings (window_checkpoint.cpp).
void DrawCheckpointCard(AppState& state);
void DrawModelViewWindow(AppState& state);
// Windows → Rollout (window_rollout.cpp): attention rollout and flow of the open checkpoint, in the Model
// view's place. RolloutBusy: its rollout or flow is being computed (scripted runs wait for it).
void DrawRolloutWindow(AppState& state);
bool RolloutBusy(const AppState& state);
// Opens the Rollout view in the Model view's place (closing the Model view and the lens) on query `position`
// (−1: the last token; a position past the input draws the last): a lesson step's "view".
void ShowRolloutAt(AppState& state, int position);
// The view's "every query" toggle (the layout sweep's screens set it as a click would).
void SetRolloutEveryQuery(AppState& state, bool every_query);
// Windows → Logit lens (window_lens.cpp): the open checkpoint's logit lens and direct logit attribution.
void DrawLensWindow(AppState& state);
// Opens assets/models/induction (the model attnscope's trainer made) in the Checkpoint window; a
// missing assets folder shows as the Checkpoint window's error.
void OpenShippedInductionModel(AppState& state);
// Looks for the assets folder once (state.about); false when it is missing.
bool LocateAssets(AppState& state);
// Ctrl+S: export the current view with the Export panel's last settings (to a fresh file name).
void ExportWithLastSettings(AppState& state);
// True while an export is being written (scripted runs wait for it before their last frame).
bool ExportRunning(const AppState& state);

// Called when a new Analysis replaces `before` (null at the first result): records which settings
// and which shapes changed, for the Shapes window.
void NoteAnalysisChange(ShapesWindowState& shapes, const Analysis* before, const Analysis& after);

// Makes `scene` showable in its view: a grid view gets a grid input and a sentence view a sentence
// (when may_change_input), and a sentence's relative-position heads a 1D offset preset instead of a
// 2D one (when may_change_preset).
// Sets scene.view.view and adapts the scene to it.
void SwitchView(AppState& state, View view);
// Presentation mode on or off (F11, Display → Presentation, Esc; window_main.cpp): state.presenting,
// the UI scale for the back row and back, and the layout placed afresh.
void SetPresenting(AppState& state, bool on);

}  // namespace attnscope::gui
