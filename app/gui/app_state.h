// app_state.h — the one state of the window, owned by run_window and handed to every
// DrawXxxWindow(AppState&).
//
// Widgets edit `scene` and call NoteEdit; at the end of the frame the edited scene goes to the
// compute worker. The worker's newest answer is swapped in at the start of a frame (TakeResult);
// windows only read `analysis` and the heatmap pixels, never compute.
//
// Sections: panels and errors · per-window state · layout record (scripted runs) · AppState
#pragma once
#include <imgui.h>

#include <array>
#include <chrono>
#include <future>
#include <optional>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attnscope/analysis/analysis.h"
#include "attnscope/analysis/head_patterns.h"
#include "attnscope/analysis/model_layer.h"
#include "attnscope/figure/colormap.h"
#include "attnscope/figure/image.h"
#include "attnscope/scene/scene.h"
#include "attnscope/core/language.h"
#include "gui/classroom_state.h"
#include "core/checkpoint_loader.h"
#include "core/compute_worker.h"
#include "core/platform_clipboard.h"
#include "core/platform_open.h"
#include "gui/fonts.h"
#include "gui/gl_texture.h"
#include "gui/heatmap_grid.h"
#include "gui/zoom.h"
#include "gui/history.h"
#include "core/model_view.h"
#include "core/pictures.h"
#include "gui/training_state.h"

namespace attnscope::gui {

// ---- panels and errors -------------------------------------------------------------------------

// The window a setting was edited in, so that the engine's complaint shows where it was caused.
enum class Panel { startup, input, model, heads, shapes, relpos, conv, exporter, checkpoint };
const char* panel_title(Panel panel);  // "Input", "Model", … ("the command line" for startup)

// ---- per-window state --------------------------------------------------------------------------

struct InputWindowState {
  std::string tensor_path;  // the path being typed (applied with the Load button)
  std::string image_path;
  std::string tokenizer_path;             // a model's tokenizer being typed (applied with Load)
  bool tokenizer_path_shown = false;      // the field was filled from the scene once
  std::vector<std::string> recent_tokenizers;  // newest first, persisted with the preferences
  // A drag over the token strip (window_input.cpp): the chip pressed and the chip under the pointer now;
  // −1 while no drag is under way. Released on another chip, the range becomes the token set.
  int drag_from = -1, drag_to = -1;
  // When a key last changed the sentence (ImGui::GetTime(); −1 never): on the page's one thread a checkpoint's
  // forward waits for a pause in typing (SubmitIfEdited).
  double typed_at = -1;
};

struct ModelWindowState {
  std::string weights_dir;  // the folder being typed (applied with the Load button)
  // The heads and groups last chosen by hand (0: not yet): a d_model that H does not divide lowers H for
  // as long as it must, and the next d_model that allows them brings them back (typing "4096" passes
  // through 4 and 40 on its way), so no setting drifts unseen.
  int chosen_heads = 0, chosen_groups = 0;
  // The settings as this window left them last frame: any other difference was made elsewhere (a lesson, a
  // scene file), which makes the new H and G the chosen ones.
  int seen_d_model = 0, seen_heads = 0, seen_groups = 0;
  AttentionKind seen_kind = AttentionKind::mha;
};

// The Checkpoint window (window_checkpoint.cpp): a real model whose layer the Heads view draws: an open
// checkpoint, or attentions computed elsewhere (at most one of the two; neither: the seeded layer).
struct CheckpointWindowState {
  std::string path;                  // the folder or file being typed (applied with Open)
  std::vector<std::string> recent;   // most recent first (persisted with the preferences)
  CheckpointLoader* loader = nullptr;  // owned by run_window
  std::string loading;               // the folder or file being opened ("" when none)
  std::shared_ptr<const model::Model> model;  // the open checkpoint
  std::shared_ptr<const model::AttentionStack> attentions;  // the open attentions file
  std::string opened;                // the path it was opened from (folder or file)
  std::string error;                 // why the last open failed (the engine's message)
  std::string tokenizer_error;       // why the open model's tokenizer cannot be used ("" when it can)
  std::shared_ptr<const Tokenizer> tokenizer;  // the open model's own (null: it takes ids only)
  int layer = 0;                     // the layer the Heads view draws
  // The layer run on screen: its top-5 next tokens per position (null without a checkpoint).
  std::shared_ptr<const ModelLayerRun> run;
  // That run's head pattern scores (lesson 6's table), made on the compute worker with it; null with
  // head_patterns_error saying why (one token) or without a checkpoint.
  std::shared_ptr<const HeadPatternScores> head_patterns;
  std::string head_patterns_error;
  // Convert to GQA/MQA: pool each layer's K/V to this many heads (a divisor of the checkpoint's G;
  // 0: as trained), and the unconverted run of the same layer that the drift is measured against.
  int kv_heads = 0;
  std::shared_ptr<const ModelLayerRun> original;
  // The heads the Model view switched off (zero or mean; none: empty), part of what undo restores, and the
  // run's comparison with the unablated pass (null without heads off, or until the worker delivers it).
  model::HeadAblation ablation;
  std::shared_ptr<const pipeline::AblationComparison> ablation_result;
  // The window's --ablate/--ablate-mode, applied to the first checkpoint that opens ("" none).
  std::string open_ablate, open_ablate_mode = "zero";

  // The Input window's text from before the model opened on its default input (restored on Close; ""
  // when the model took the text on screen), and why that text could not go in ("" likewise).
  std::string synthetic_text;
  std::string input_note;
  std::string default_text;  // the model's default input as it was put in the Input window

  bool is_open() const { return model || attentions; }
  // The checkpoint is the current model (ARCHITECTURE "One current model"): open, opening, or failed to
  // open (its error then stands in place of its heads until Close). Otherwise the synthetic layer is.
  bool current() const { return is_open() || !loading.empty() || !error.empty(); }
  // What ComputeResult::of_model names for the open model (null: none open).
  const void* id() const { return model ? static_cast<const void*>(model.get()) : attentions.get(); }
  int layers() const { return model ? model->config.layers : attentions ? attentions->layers : 0; }
  int heads() const { return model ? model->config.heads : attentions ? attentions->heads : 0; }
  std::string shown_name;             // the checkpoint's name, or the attentions' (set when it opens)
  // The browser: why the page did not copy the folder last picked or dropped (platform_open.h), said in
  // the Checkpoint window until another is picked; the open model, if any, stays open.
  std::optional<FolderRefusal> picker_refusal;
  // What captions call it: the checkpoint's name, or the attentions' folder name.
  const std::string& name() const { return shown_name; }
};
// A recent entry or an opened path as the window names it (no file system access: it runs every frame):
// a folder by its name, an attentions file as "folder/file".
std::string CheckpointPathName(const std::string& path);
inline constexpr size_t max_recent_checkpoints = 6;

// The Model view window (window_model_view.cpp): every layer's heads of the open checkpoint as an
// L × H grid of thumbnails, from the worker's newest model result.
struct ModelViewWindowState {
  std::shared_ptr<const ModelViewPictures> pictures;  // null until a forward pass delivered one
  std::string error;                                  // why the newest pass has none
  GlTexture atlas;                                    // pictures->atlas, re-sent when it changes
  GlTexture strips;                                   // pictures->strips (a token set's rows or columns)
  ColorBarCache bar;
  ColorBarCache signed_bar;                           // linear layers' signed matrices (Qwen3-Next)
  bool ablate_clicks = false;                         // "Click switches heads off": a click toggles a head
  // A long input (core/long_heads.h): the thumbnails' blocks a side asked of the worker (0: the view has not drawn
  // one), and each head's texture of state.long_overview's pictures (the picture it holds, to re-send only new ones).
  int long_pixels = 0;
  std::vector<GlTexture> long_thumbs;
  std::vector<const Picture*> long_uploaded;
};

// The Logit lens window (window_lens.cpp): the logit lens and the direct logit attribution of the open
// checkpoint's forward pass (pipeline steps logit_lens, logit_attribution), from the worker's newest result.
struct LensWindowState {
  std::shared_ptr<const pipeline::Result> result;  // the newest checkpoint result (its lens may be null: lens_error)
  int position = -1;            // the chosen position (−1: the last token)
  int layer = -1;               // the clicked cell's layer (highlighted), −1: none
  int32_t target = -1;          // the attributed token (−1: the model's top-1 at each position)
  int tab = 0;                  // 0 the lens, 1 the attribution
  const void* fonts_of = nullptr;  // the lens whose token labels were asked of the fonts
  bool was_open = false, model_view_was_open = false;  // the one opened last takes the view's place
};

// Every picture of the current Pictures as a GL texture; re-sent only when its pixels changed.
struct Textures {
  const Pictures* uploaded = nullptr;  // what the textures hold
  std::vector<GlTexture> heads;        // attention heads
  std::vector<GlTexture> relpos_heads;
  GlTexture relpos_combined, grid;
  GlTexture conv_input, conv_mhsa, conv_true, conv_difference;
  int uploads = 0;                     // textures re-sent so far (benchmark report)
};

// Token labels as drawn (display_label) and their widest extent, cached per label list and font.
struct LabelCache {
  std::vector<std::string> labels;
  // What they were made from: the tokens themselves (a new analysis may reuse the old one's address
  // with other tokens of the same count), the font and its size.
  std::vector<std::string> source;
  int font_generation = -1;
  float font_size = 0;
  float extent = 0;
};

// The Positions view of a checkpoint's layer (window_positions.cpp): its positions and RoPE profile, made
// again only when the model, the layer or the token count changes.
struct CheckpointPositionsCache {
  const void* model = nullptr;
  int layer = -1, tokens = -1;
  LayerPositions layer_positions;
  PositionsProfile profile;
  std::string error;
};

struct HeadsWindowState {
  ColorBarCache bar;
  int large_head = -1;  // double-clicked head shown large (−1: none)
  LabelCache labels;
  // Token range and zoom (zoom.h), shared by the Heads view, its head opened large, the Model view and
  // Compare A/B: they draw the same input's tokens.
  ZoomState zoom;
  // A long input (core/long_heads.h; window_heads_long.cpp): how its heads are pooled, the exact cells opened
  // (the zoom; none: the overview), the blocks a side asked of the worker, and their textures.
  model::Pooling long_pooling = model::Pooling::max;
  std::optional<LongZoom> long_zoom;
  int long_pixels = 256;
  std::vector<GlTexture> long_textures;
  GlTexture long_zoom_texture;
  const LongHeads* long_uploaded = nullptr;
  LabelCache long_labels;
};

// The Heads view's "why does this head attend here?" panel (window_qk.cpp): the cell it explains and the newest
// checkpoint result (its qk_attribution is that cell's once the worker has made it).
struct QkPanelState {
  bool open = false;
  int head = 0, query = 0, key = 0;  // from 0; the layer is the Heads view's (the panel follows its slider)
  ImVec2 anchor;                                // the cell's screen position when asked (the panel opens beside it)
  bool placed = false;                          // the panel was placed beside the cell once
  int menu_head = 0, menu_query = 0, menu_key = 0;  // the cell right-clicked (the menu's)
  ImVec2 menu_anchor;
  std::optional<std::array<int, 3>> open_cell;  // the window's --why HEAD,QUERY,KEY, opened with the model
  std::shared_ptr<const pipeline::Result> result;
};

struct RelposWindowState {
  ColorBarCache bar;
  int edit_head = 0;         // the head whose α and Δ the sliders and the pad edit
  std::string input_error;   // a refused slider value (NaN, ∞)
  LabelCache labels;
  // The (head, query, key) whose score expansion is printed: the hovered cell, else the edited
  // head's peak.
  int expansion_head = 0, expansion_query = 0, expansion_key = 0;
  ZoomState zoom_1d, zoom_2d;  // the sentence's heads; the grid, its mean and its heads (zoom.h)
};

struct ConvWindowState {
  ColorBarCache gray_bar, diff_bar;
  ZoomState zoom;  // all four images
  std::string input_error;
};

// The Export panel: its settings survive between exports so that
// Ctrl+S repeats the last one; the export itself runs off the UI thread.
struct ExportOutcome {
  bool ok = false;
  std::string message;             // the full path written, or why nothing was
  std::optional<Image> preview;    // PNG exports: the pixels, shown in the panel
  std::string path;                // the file written (ok)
};
struct ExportWindowState {
  int what = 0;                    // 0 the current view, 1 one head, 2 all heads, 3 the model view
  int head = 0;
  int format = 0;                  // ExportFormat: png, svg, csv, npy
  float scale = 2.0f;              // 1–4
  bool caption = true;
  std::string path;                // as typed; empty → exports/<name>-<timestamp>.<ext>
  std::future<ExportOutcome> running;
  bool deferred = false;           // a long input's export starts on the next frame (no threads: see StartExport)
  ExportOutcome last;
  bool has_last = false;
  GlTexture preview;
};

// Copy figure (figure_copy.cpp): one copy at a time, drawn and handed to the clipboard off the UI thread.
// File → Copy link goes the same way with the link as its text.
struct FigureCopyOutcome {
  ClipboardOutcome clipboard;
  std::string render_error;  // the figure could not be drawn (English, from the engine)
  int width = 0, height = 0;
  std::string link;  // a Copy link: the link copied
};
struct FigureCopyState {
  std::future<FigureCopyOutcome> running;  // a press while one runs is ignored
  std::optional<FigureCopyOutcome> waiting;  // the browser: handed over, its answer not yet in
  std::string site_url;  // the desktop's --site-url (ATTNSCOPE_SITE_URL): the page Copy link links to
};

// Help → About (window_about.cpp): where the assets were found, looked up once.
struct AboutWindowState {
  bool assets_checked = false;
  std::string assets_folder;  // found here
  std::string assets_error;   // or why not (the folders tried)
};

struct ShapesWindowState {
  std::vector<std::string> setting_changes;  // "groups: 8 → 2"
  std::vector<std::string> shape_changes;    // "split kv heads: [8, 6, 8] → [2, 6, 8]"
};

// ---- layout record -----------------------------------------------------------------------------

// Where things were drawn in the last frame, in framebuffer pixels (y down) — written as
// --layout-json so tests can sample the screenshot and check the layout (layout_record.h).
struct LayoutRecord {
  struct Head {
    int head = 0, kv_group = 0, tokens = 0;
    int first_query = 0, first_key = 0, shown = 0;  // the tokens drawn: shown queries and keys from these (zoom, range)
    ImVec2 min, max;     // the heatmap image rectangle
    float cell = 0;      // cell side in pixels
    float frame = 0;     // width of the kv-group frame drawn just outside the image
    ImU32 frame_color = 0;
    ValueRange range;
  };
  struct Label {
    std::string text;    // as drawn (after display_label)
    std::string axis;    // "query" or "key"
    int index = 0;       // token index
    ImVec2 min, max;
    std::string full;    // the whole label (display_label's), which `text` may shorten
    std::string orientation;  // "upright", "turned" (reads upwards) or "stacked" (CJK, one character under the other)
    bool shortened = false;   // text != full: cut with "…"
  };
  struct Caption {       // the caption under one heatmap of a grid (heatmap_grid.h)
    int grid = 0;        // which grid drawn this frame, from 0
    int tile = 0;        // which heatmap of it
    int form = 0;        // which of the grid's caption forms (0: the longest): one for the whole grid
    std::string text;
    ImVec2 min, max;
  };
  struct Tick {          // a number on a grid's colour bar
    int grid = 0;
    int tile = -1;       // its heatmap's own bar, or −1: the grid's shared bar
    float value = 0, step = 0;  // step: between neighbouring ticks (0 with a single tick)
    std::string text;
  };
  struct Bar {           // a grid's colour bar: its range and title (the scale mode shows in it)
    int grid = 0;
    int tile = -1;       // its heatmap's own bar, or −1: the grid's shared bar
    float lo = 0, hi = 0;
    std::string title;   // empty for a heatmap's own thin bar
  };
  struct Widget {
    std::string name;    // "model.kind.mqa", …
    ImVec2 min, max;
    std::string text;    // what a drawn cell shows, as drawn (the Logit lens's cells: the token after display_label); "" none
  };
  struct Window {
    std::string title;   // ImGui's name: the title shown, then "###" and its id ("Heads###heads")
    ImVec2 min, max;
    bool scroll_x = false, scroll_y = false;  // has that scrollbar: what lies past that edge can be scrolled to
  };
  struct Text {
    std::string window;  // the root window's name (as Window::title)
    std::string text;
    ImVec2 min, max;     // where the whole text is laid out
    ImVec2 clip_min, clip_max;  // what of it can show: the window, child, table cell or widget frame
    bool scroll_x = false, scroll_y = false;  // the (child) window it is in has that scrollbar
  };
  struct Thumb {          // a Model view thumbnail
    int layer = 0, head = 0, kv_group = 0;
    ImVec2 min, max;      // the image rectangle
    float frame = 0;      // width of the kv-group frame drawn just outside it
    ImU32 frame_color = 0;
    bool current = false; // the Heads view's layer and its large head
    int first_query = 0, first_key = 0, shown = 0;  // the tokens drawn (zoom, range), as Head's
    std::string kind;     // its layer's kind without a softmax ("Gated DeltaNet"), "" for softmax attention
    ImVec2 strip_min, strip_max;  // a token set's strip under (queries) or right of (keys) it; empty: none
  };
  std::string view;
  std::vector<Head> heads;
  std::vector<Thumb> thumbs;
  std::vector<Label> labels;
  int grids = 0;                  // heatmap grids recorded this frame (Caption::grid, Tick::grid)
  std::vector<Caption> captions;
  std::vector<Tick> ticks;
  std::vector<Bar> bars;
  std::vector<Widget> widgets;  // a few controls, so tests can click them
  ImVec2 menu_bar_min, menu_bar_max;  // the main menu bar (set before any other window is drawn)
  std::vector<Window> windows;        // every root window shown, but the menu bar, tooltips and popups
  struct Slot {           // the layout function's output (widgets.h, ComputeLayout): one per open slot
    std::string name;     // "input", "view", "analysis", … ; "left"/"right" for the columns
    ImVec2 min, max;
  };
  std::vector<Slot> slots;
  bool view_shown = true;             // false while Training or the Model view takes the view's place
  std::vector<Text> texts;            // only while RecordTextsInto(&texts) is on
  bool checkpoint_current = false;    // a checkpoint was the current model while the frame was drawn
  std::string colormap;
  bool scores = false;
  void clear() { *this = LayoutRecord{}; }
};

// ---- AppState ----------------------------------------------------------------------------------

// The Rollout view's state (window_rollout.cpp), made when the view first opens.
struct RolloutViewState;

struct AppState {
  // The settings the widgets edit, and who edited them last.
  Scene scene;
  bool scene_edited = false;
  Panel edited_by = Panel::startup;

  // The engine's newest answer. `analysis` stays the last good one when the newest settings were
  // refused; `error` then says why and `error_panel` where it was caused.
  ComputeWorker* worker = nullptr;
  std::shared_ptr<const Analysis> analysis;
  std::shared_ptr<const Pictures> pictures;
  std::shared_ptr<const HeadStats> head_stats;  // of analysis->attention; null while being computed
  std::string head_stats_error;                 // why there are none
  std::string error;
  Panel error_panel = Panel::startup;
  // The model `analysis` and `error` are of: CheckpointWindowState::id() of the checkpoint they came from,
  // null for the synthetic layer. A view draws heads only of the current model (AnalysisOfCurrentModel).
  const void* analysis_of = nullptr;
  const void* error_of = nullptr;
  // A checkpoint's input too long for its whole stack (core/long_heads.h): its layer's heads pooled, in place of
  // `analysis` and `pictures` (then null), and the model they are of.
  std::shared_ptr<const LongHeads> long_heads;
  const void* long_heads_of = nullptr;
  // With long_heads: every layer's heads as far as the worker's cache holds them (the Model view's thumbnails) and
  // how far its prefetch went.
  std::shared_ptr<const LongOverview> long_overview;
  // That pass's q and k (pipeline::Result::head_maps): what the Export panel and Copy figure pool a long input's heads
  // from (core/long_export.h). Only they are held, not the pass's logits.
  std::shared_ptr<const model::HeadMaps> long_maps;
  uint64_t submitted_generation = 0;
  Panel submitted_by = Panel::startup;
  uint64_t result_generation = 0;
  // The slowest frame's own work, in ms, since the first result was on screen: the events taken, the
  // workers' share (worker_thread.h: a slice where there are no threads), drawing and rendering — not the
  // wait for events or vsync, nor the layout record's writing. The browser test prints it while training
  // (live layout record: "slowest_frame_work_ms").
  double slowest_frame_work_ms = 0;
  // Frames whose picture was drawn (live layout record: "frames_drawn"; beside "frame", the frames shown): in
  // the browser a frame whose picture is the one on screen is not drawn again (platform_page.h).
  int frames_drawn = 0;
  double result_seconds = 0;

  // Look and feel.
  FontAtlas* fonts = nullptr;
  float ui_scale = 1.0f;
  float fitted_ui_scale = 0.0f;  // the scale fitted to the screen at start; 0 when a flag or the saved one chose it
  bool light_theme = true;
  bool reset_layout = true;  // centre the dialogs again this frame (the panels are placed every frame)
  std::string status;        // one line for the menu bar (save failures, export results)
  std::shared_ptr<struct CompareState> compare;  // compare A/B (compare_state.h); null until A is first kept
  std::string translation_notice_closed;  // the translation problem whose notice was closed (i18n.h)

  // Which windows are open.
  bool show_input = true;
  bool show_model = true;
  bool show_shapes_floating = false;  // Shapes beside another view
  bool show_export = false;
  // Classroom: the Lessons panel, head Analysis, the KV-cache calculator, and the UI
  // language (i18n.h; persisted with the preferences).
  bool show_lessons = false;
  bool show_analysis = false;
  bool show_kv_cache = false;
  Language language = Language::en;
  bool show_about = false;  // Help → About
  bool show_keys = false;   // Help → Keys
  bool show_getting_started = false;  // Help → Getting started (a first start opens it)
  // Display → Presentation (F11): full screen, no menu bar or side panel, the view fills the screen
  // with the lesson step as a banner under it, type for the back row; Esc or F11 leaves.
  bool presenting = false;
  float ui_scale_before_presenting = 0;  // restored on leaving
  bool show_training = false;  // Classroom → Training (window_training.cpp)
  bool show_checkpoint = false;  // Windows → Checkpoint
  bool show_model_view = false;  // Windows → Model view
  bool show_rollout = false;     // Windows → Rollout (window_rollout.cpp), in the Model view's place
  std::shared_ptr<RolloutViewState> rollout;
  bool show_lens = false;        // Windows → Logit lens

  InputWindowState input;
  ModelWindowState model;
  HeadsWindowState heads;
  CheckpointPositionsCache positions_cache;
  ShapesWindowState shapes;
  ExportWindowState exporter;
  FigureCopyState figure_copy;
  History history;  // Edit → Undo / Redo (history.h)
  RelposWindowState relpos;
  ConvWindowState conv;
  LessonsWindowState lessons;
  AnalysisWindowState analysis_window;
  KvCacheWindowState kv_cache;
  AboutWindowState about;
  TrainingWindowState training;
  CheckpointWindowState checkpoint;
  ModelViewWindowState model_view;
  LensWindowState lens;
  QkPanelState qk;
  SceneDialogState scene_dialog;
  Textures textures;

  // Scripted runs: no persisted state, fixed layout, record where heatmaps went.
  bool scripted = false;
  LayoutRecord layout;
  // Scripted runs that record texts: what each frame before the last one drew (its texts by window, and
  // whether a checkpoint was current), so that tests see a model's first frames too, not only the settled one.
  struct EarlierFrame {
    int frame = 0;
    bool checkpoint_current = false;
    std::vector<std::pair<std::string, std::string>> texts;  // (window, text)
  };
  std::vector<EarlierFrame> earlier_frames;
  ImVec2 framebuffer_scale{1, 1};
};

// A widget changed `scene`: submit it at the end of the frame.
void NoteEdit(AppState& state, Panel panel);
// Submits the scene if it was edited this frame.
void SubmitIfEdited(AppState& state);
// Where workers have no thread (the page), a sentence typed with a checkpoint open waits for a pause in the
// typing (app_state.cpp).
// Swaps in the worker's newest result, if any. Returns true when one arrived.
bool TakeResult(AppState& state);
// Re-sends the textures whose pixels changed since the last upload (UI thread, GL context current).
void UploadTextures(AppState& state);
// Token labels with glyph-less code points spelled "U+XXXX", cached until the labels or fonts change.
const LabelCache& CachedLabels(AppState& state, LabelCache& cache, const std::vector<std::string>& labels);
// Starts opening `path` on the loader: a checkpoint folder, or an attentions file or folder (the Checkpoint
// window, a dropped folder or file, --checkpoint).
void OpenCheckpoint(AppState& state, const std::string& path);
// Closes the open checkpoint or attentions file (and cancels an opening): the seeded layer again.
void CloseCheckpoint(AppState& state);
// Takes a finished open, if any: the model replaces the seeded layer in the Heads view, or its error
// shows in the Checkpoint window. Returns true when one arrived.
bool TakeCheckpoint(AppState& state);
// True when the view shown draws the current model's attention (its heads or its shape trace): with a
// checkpoint open these views run it; the relative-position and convolution views have their own heads.
bool ViewDrawsModel(const AppState& state);
// True when `analysis` is of the current model: the open checkpoint's, or the synthetic layer's when none
// is current. False while a checkpoint opens, after it failed to open, and before its first pass arrives.
bool AnalysisOfCurrentModel(const AppState& state);
// True when `analysis` is what the view shown draws: the current model's in the Heads and Shapes views,
// the synthetic scene's own relative-position or convolution heads in theirs (whatever model is current).
bool AnalysisOfView(const AppState& state);
// The current checkpoint's error, to show in place of its heads: why it failed to open, or why its last
// forward pass gave no heads ("" when none, and always "" for the synthetic layer).
std::string CurrentCheckpointError(const AppState& state);
// The current checkpoint's long input (its heads computed on demand), or null when its input's stack fits.
const LongHeads* CurrentLongHeads(const AppState& state);
// In a view that needs the whole stack: with a long input current, a notice saying why the view has nothing
// (`view`, an English key: the view's name) and up to what T it works with this model; returns true then.
bool LongInputNotice(const AppState& state, const char* view);
// Selects query token/cell `index` in every view (−1: none).
void SelectQuery(AppState& state, int index);

// The error to show in `panel`'s window (empty when the engine accepted the settings or the error
// belongs elsewhere), after a translated "Error: " label.
std::string ErrorFor(const AppState& state, Panel panel);

}  // namespace attnscope::gui
