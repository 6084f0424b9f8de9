// figure_copy.h — "Copy figure": the current view's figure on the clipboard as a PNG, for slides.
//
// Ctrl+C (when no text field is being edited) and the Copy figure button of each view render the
// view's export — the same figure the Export panel writes as PNG, at its scale, with its caption
// setting, in the interface's language — and hand the PNG to the clipboard (core/platform_clipboard.h)
// on another thread (in the browser the page's Clipboard API, whose answer comes a few frames later). The status line then says "Figure copied (W×H PNG)", or names the package to
// install when the clipboard tool is missing.
#pragma once
#include <functional>
#include <optional>
#include <string>

#include "attnscope/figure/export.h"
#include "core/long_export.h"
#include "core/platform_clipboard.h"

namespace attnscope::gui {

struct AppState;

// The figure words (titles, captions, colour-bar titles) of the interface's language, read from its
// translation file once per language; English when the file cannot be read.
const FigureWords& UiFigureWords();

// The request a copy renders: the view's figure as PNG at the Export panel's scale and caption setting.
ExportRequest CopyRequest(const AppState& state);

// A long input on screen (core/long_heads.h, its heads pooled): what an export of `what` (head: `base.head`) writes,
// as `export --long` writes it — the Heads view's layer, pooling and blocks a side (the model: default_model_pixels
// blocks a side, the Heads view's pooling) — with `base`'s format, scale, caption, words, colormap and colour scale (a
// per-head scale of a figure with one colour bar drawn shared). nullopt when no long input is on screen.
std::optional<LongExportJob> LongExportOnScreen(const AppState& state, ExportWhat what, ExportRequest base);
// "each head max-pooled to 220×220 blocks, from a long input of 2152 tokens": what such an export holds.
std::string LongExportSummary(const LongExportJob& job);

// A small "Copy figure" button on the current line of a view's toolbar (the next line when it does
// not fit); pressing it copies the figure.
void CopyFigureButton(AppState& state, bool same_line = true, const char* id = "copy_figure");
// A panel's own Copy figure button (why a head attends), after its Save buttons: `render()` makes the PNG on
// another thread, so it holds what it reads (copies, shared pointers), never references into the frame.
void CopyFigureButton(AppState& state, const char* id, std::function<ExportedFile()> render);

// The status line's words for a clipboard outcome, in the interface's language ("" when it went well).
std::string ClipboardMessage(const ClipboardOutcome& outcome);

// File → Copy link: a link that opens the current scene (core/scene_link.h) on the clipboard as text.
// The address it links to is the page's own in the browser, --site-url (ATTNSCOPE_SITE_URL) on the
// desktop; "" when there is none (the menu item is then disabled and says how to set it).
std::string LinkSite(const AppState& state);
void CopyLink(AppState& state);

// Once a frame: the Ctrl+C shortcut, and a finished copy's message on the status line.
void UpdateFigureCopy(AppState& state);

// A copy is being rendered or handed to the clipboard (a scripted run waits for its message).
bool FigureCopyRunning(const AppState& state);

}  // namespace attnscope::gui
