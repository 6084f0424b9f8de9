// token_sets.h — token sets in the window (issue 38 item 5; engine side: analysis/token_set.h).
//
// Ctrl+click a query label (left of the heads) or a key label (above them) — or a token chip of the Input
// window — to add that token to a set of queries or of keys (again: take it out); a click on the other axis
// starts a set there. Every head then draws the set's sum or mean (a toggle on the Heads toolbar) as one more
// row under its heatmap (queries) or column right of it (keys), labelled "Σ of 3 queries", in the heads'
// colours (whose ranges include it: pictures.h), and its rows or columns are outlined in orange. Exports of
// the Heads view carry it (export.h ExportRequest::token_set). The set is the scene's (ViewSettings::token_set):
// undo and redo restore it, scene files keep it, and an edit of the input (new tokens) clears it.
#pragma once
#include "gui/app_state.h"
#include "gui/heatmap_grid.h"
#include "gui/zoom.h"

namespace attnscope::gui {

// Adds `token` to the set on `axis` (or takes it out; a set on the other axis is replaced by {token}).
void ToggleTokenInSet(AppState& state, TokenSetAxis axis, int token);
void ClearTokenSet(AppState& state);
// Makes the set the tokens first..last (either order) on `axis`, in place of any set (a drag over the token strip).
void SetTokenRange(AppState& state, TokenSetAxis axis, int first, int last);

// "Σ of 3 queries" in the UI's language.
std::string TokenSetName(const TokenSet& set);

// The Heads toolbar's line while a set is chosen: its name and tokens, sum | mean, and × to clear it. Its
// widgets are recorded as "<prefix>.token_set", "<prefix>.token_set_sum", … (the Model view draws it too).
void DrawTokenSetBar(AppState& state, const std::string& prefix = "heads");

// In a view that draws no token set (Shapes, Positions, relative position, Convolution, the Logit lens), while a
// set is chosen: one muted line saying so, recorded as "<name>.token_set_note", rather than silently ignoring it.
void TokenSetNotDrawnNote(AppState& state, const std::string& name);

// The set's outlines, strip and labels in a Heads grid showing `shown` of the pictures.
void ApplyTokenSet(HeatmapGridSpec& spec, const AppState& state, const Pictures& pictures, const Shown& shown);

// After the grid is drawn: Ctrl+clicks on token labels, the strip's tooltip, and the strips in the layout
// record ("heads.token_set_strip.<head>").
void HandleTokenSetHit(AppState& state, const HeatmapGridResult& grid, const std::vector<std::string>& labels,
                       const Shown& shown);

}  // namespace attnscope::gui
