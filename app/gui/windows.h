// windows.h — one DrawXxxWindow(AppState&) per file, each reading the Analysis and editing the Scene.
//
//   window_menu.cpp    main menu bar: views, windows, UI scale, theme, status
//   window_input.cpp   sentence / tensor / grid input and the token list
//   window_model.cpp   kind, d_model, heads, groups, causal, seed, K/V source
//   window_heads.cpp   one heatmap per head, kv-group frames, colour bar, hover and selection
//   window_shapes.cpp  the shape trace, parameter counts, KV bytes, what changed
#pragma once
#include "gui/app_state.h"

namespace attnscope::gui {

void DrawMenuBar(AppState& state);
void DrawInputWindow(AppState& state);
void DrawModelWindow(AppState& state);
void DrawHeadsWindow(AppState& state);
void DrawShapesWindow(AppState& state, bool floating);

// Called when a new Analysis replaces `before` (null at the first result): records which settings
// and which shapes changed, for the Shapes window.
void NoteAnalysisChange(ShapesWindowState& shapes, const Analysis* before, const Analysis& after);

// Sets scene.view.view and, when the view needs another kind of input, switches the input
// (sentence ⇄ grid) so that the view has something to show.
void SwitchView(AppState& state, const std::string& view);

}  // namespace attnscope::gui
