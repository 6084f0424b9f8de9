// window_export.cpp — the Export panel.
//
// What (the current view, one head, all heads, and with a checkpoint or attentions file open the model
// view: every layer's heads, as `export --what model`), format (PNG, SVG, CSV, .npy), scale, caption on/off
// and the path — by default exports/attnscope-<what>-<timestamp>.<ext> under the current folder. The
// engine's exporter (export.h) renders the shown Analysis with no GL involved and writes the file
// atomically, on a background thread; the panel then says the full path or why nothing was written,
// and previews a PNG. Ctrl+E opens the panel, Ctrl+S exports again with the last settings.
// A long input (its heads computed on demand, core/long_export.h): one head, all heads (and the current view, the
// Heads view) and the model view are pooled as `export --long --what head:N|heads|model` pools them, with the Heads
// view's pooling and blocks a side (the model: default_model_pixels), and the panel says so.
//
// Sections: request · running an export · window
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "attnscope/core/error.h"
#include "attnscope/figure/export.h"
#include "attnscope/io/file_io.h"
#include "core/long_export.h"
#include "core/platform_download.h"
#include "core/worker_thread.h"
#include "gui/figure_copy.h"
#include "gui/i18n.h"
#include "core/user_path.h"
#include "gui/widgets.h"
#include "gui/windows.h"

namespace attnscope::gui {
namespace {

const char* const what_names[] = {TrKey("the current view"), TrKey("one head"), TrKey("all heads"),
                                  TrKey("the model view")};
constexpr int what_model_view = 3;

// Every layer's attentions of the run on screen (the model view's), or null without a real model.
std::shared_ptr<const model::AttentionStack> ModelStack(const AppState& state) {
  const ModelLayerRun* run = state.checkpoint.run.get();
  return state.checkpoint.is_open() && run ? run->stack : nullptr;
}
const char* const format_names[] = {"PNG", "SVG", "CSV", "NPY"};

// ---- request -----------------------------------------------------------------------------------------

ExportRequest RequestFor(const AppState& state) {
  const ExportWindowState& e = state.exporter;
  ExportRequest r = export_request_for_view(state.scene.view);
  if (e.what == 1) {
    r.what = ExportWhat::head;
    r.head = e.head;
  } else if (e.what == 2) {
    r.what = ExportWhat::heads;
  } else if (e.what == what_model_view) {
    r.what = ExportWhat::model;
    // One colour bar for every thumbnail: per head is drawn shared, as the Model view draws it.
    if (r.color_scale.mode == ScaleMode::per_head) r.color_scale.mode = ScaleMode::shared;
    r.token_set = state.scene.view.token_set;  // the thumbnails' strips, as `export --what model --query-set` draws them
  }
  r.format = ExportFormat(e.format);
  r.scale = e.scale;
  r.caption = e.caption;
  r.words = UiFigureWords();  // titles and captions in the interface's language
  if (state.heads.zoom.token_last >= 0 && (r.what == ExportWhat::heads || r.what == ExportWhat::head)) {
    r.token_first = state.heads.zoom.token_first;  // the Heads view's token range
    r.token_last = state.heads.zoom.token_last;
  }
  return r;
}

// exports/attnscope-<what>-<local time>.<ext>, with -2, -3 … when that name is taken.
std::filesystem::path DefaultPath(const ExportRequest& request) {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &local);
  const std::filesystem::path folder = "exports";
  const std::filesystem::path first = folder / default_export_file_name(request, stamp);
  std::filesystem::path path = first;
  std::error_code ec;
  for (int n = 2; std::filesystem::exists(path, ec) && n < 1000; ++n)
    path = folder / (first.stem().string() + "-" + std::to_string(n) + first.extension().string());
  return path;
}

// ---- running an export -------------------------------------------------------------------------------

// The Export panel's `what` of a long input: the current view is the Heads view (its layer's heads).
ExportWhat LongWhat(int what) {
  return what == 1 ? ExportWhat::head : what == what_model_view ? ExportWhat::model : ExportWhat::heads;
}

// The long input's export `e.what` asks for (core/long_export.h), or nullopt when no long input is on screen.
std::optional<LongExportJob> LongJob(const AppState& state) {
  ExportRequest base = RequestFor(state);
  base.head = state.exporter.head;
  return LongExportOnScreen(state, LongWhat(state.exporter.what), std::move(base));
}

// Writes the file off the frame; the panel then says where, or why not.
void RunExport(ExportWindowState& e, std::function<ExportedFile(const std::filesystem::path&)> write,
               const std::filesystem::path& path, bool default_path) {
  // Translated here: the export runs on another thread, tr() reads the window's language.
  const char* const wrote = tr("wrote ");
  const char* const not_exported = tr("not exported: ");
  e.running = run_off_frame([write = std::move(write), path, default_path, wrote, not_exported] {
    ExportOutcome out;
    try {
      if (default_path) ensure_directory(path.parent_path());  // only our own exports/ folder is created
      ExportedFile file = write(path);
      const std::filesystem::path full = user_path(path.string());
      char size[32];
      std::snprintf(size, sizeof size, " (%.1f KiB)", double(file.bytes.size()) / 1024.0);
      out.ok = true;
      out.message = wrote + full.string() + size;
      out.path = full.string();
      out.preview = std::move(file.image);
    } catch (const std::exception& e) {  // InputError: bad path, full disk, nothing to export …
      out.message = not_exported + std::string(e.what());
    }
    return out;
  });
}

void StartExport(AppState& state) {
  ExportWindowState& e = state.exporter;
  if (e.running.valid()) return;  // one at a time
  // A long input: its heads pooled as `export --long` pools them, each head's map made in turn (seconds for a whole
  // model). Without threads (the browser) it runs in one piece on the next frame, after one that says "Exporting…".
  if (std::optional<LongExportJob> job = LongJob(state)) {
    if (!threads_available() && !e.deferred) {
      e.deferred = true;
      return;
    }
    e.deferred = false;
    const bool default_path = e.path.empty();
    if (!default_path) e.path = user_path_text(e.path);
    const std::filesystem::path path = default_path ? DefaultPath(job->request) : user_path(e.path);
    RunExport(e, [job = std::move(*job)](const std::filesystem::path& p) { return export_long_to_file(job, p); }, path,
              default_path);
    return;
  }
  // The model view's stack (shared, immutable) when that is what is asked for.
  std::shared_ptr<const model::AttentionStack> stack = e.what == what_model_view ? ModelStack(state) : nullptr;
  // Never another model's heads: while a checkpoint opens or after it failed, the last result is not its.
  // "The current view" of a relpos or convolution view draws its own heads; a head or all heads are the model's.
  const bool of_view = e.what == 0 ? AnalysisOfView(state) : AnalysisOfCurrentModel(state);
  if (!state.analysis || !of_view || (e.what == what_model_view && !stack)) {
    e.last = {false, tr("nothing to export yet: the engine has no result for these settings"), std::nullopt};
    e.has_last = true;
    return;
  }
  ExportRequest request = RequestFor(state);
  // A set of tokens past this stack's (the input changed under it) is not drawn, as the Model view does not.
  if (stack) request.token_set = model_view_token_set(request.token_set, stack->tokens);
  const bool default_path = e.path.empty();
  // A typed path is expanded (~) and made absolute; the field then shows it so.
  if (!default_path) e.path = user_path_text(e.path);
  const std::filesystem::path path = default_path ? DefaultPath(request) : user_path(e.path);
  // The Analysis is immutable and shared: the export reads it while the window goes on.
  std::shared_ptr<const Analysis> analysis = state.analysis;
  RunExport(e,
            [analysis, stack, request](const std::filesystem::path& p) {
              return stack ? export_model_view(*stack, request, p) : export_to_file(*analysis, request, p);
            },
            path, default_path);
}

// Picks up a finished export (called every frame, also with the panel closed).
void CollectExport(AppState& state) {
  ExportWindowState& e = state.exporter;
  if (e.deferred) {  // a long input's export asked for on the frame before (no threads); not if the input went
    if (LongJob(state)) StartExport(state);
    else e.deferred = false;
  }
  if (!e.running.valid() || e.running.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
  e.last = e.running.get();
  e.has_last = true;
  if (e.last.preview) {
    const Image& img = *e.last.preview;
    std::vector<Rgba> pixels(size_t(img.width) * size_t(img.height));
    for (int y = 0; y < img.height; ++y)
      for (int x = 0; x < img.width; ++x) pixels[size_t(y) * size_t(img.width) + size_t(x)] = img.pixel(x, y);
    e.preview.update(img.width, img.height, pixels);
  }
  state.status = e.last.message;
  if (e.last.ok) offer_download(e.last.path);  // the browser: the file as a download
}

}  // namespace

bool ExportRunning(const AppState& state) { return state.exporter.running.valid() || state.exporter.deferred; }

void ExportWithLastSettings(AppState& state) { StartExport(state); }

// ---- window ------------------------------------------------------------------------------------------

void DrawExportWindow(AppState& state) {
  CollectExport(state);
  UpdateFigureCopy(state);  // Ctrl+C and a finished copy, every frame like a finished export
  if (!state.show_export) return;
  PlaceNextWindow(state, Slot::export_panel);
  if (!ImGui::Begin(WindowTitle("Export", "export").c_str(), &state.show_export)) {
    ImGui::End();
    return;
  }
  ExportWindowState& e = state.exporter;
  const float label_w = std::max(ImGui::CalcTextSize(tr("format")).x, ImGui::CalcTextSize(tr("what")).x) + ImGui::GetFontSize();

  ImGui::TextUnformatted(tr("what"));
  ImGui::SameLine(label_w);
  const LongHeads* long_heads = CurrentLongHeads(state);  // a long input: its heads pooled (core/long_export.h)
  const bool model_view = ModelStack(state) != nullptr || (long_heads && state.long_maps);
  if (!model_view && e.what == what_model_view) e.what = 0;  // the model closed
  for (int i = 0; i < (model_view ? 4 : 3); ++i) {
    // Each on the next line when the line is full (the first one too: a narrow column at a large scale).
    if (i > 0) SameLineIfFits(RadioWidth(tr(what_names[i])));
    else if (ImGui::GetContentRegionAvail().x < RadioWidth(tr(what_names[i]))) ImGui::NewLine();
    ImGui::RadioButton(tr(what_names[i]), &e.what, i);
    RecordLastItem(state, std::string("export.what.") + std::to_string(i));
  }
  if (e.what == what_model_view && !long_heads)
    HintText(tr("Every layer's heads as an L × H grid (PNG, SVG) or the attentions [L, H, T, T] (NPY); CSV is "
                "refused: export one layer with \"all heads\"."));
  if (e.what == what_model_view && long_heads)
    HintText(tr("Every layer's heads as an L × H grid (PNG, SVG) or their pooled maps [L, H, rows, columns] (NPY); "
                "CSV is refused: export one layer with \"all heads\"."));
  const int heads = long_heads                                                 ? int(long_heads->heads.size())
                    : state.analysis && state.analysis->attention ? state.analysis->attention->shape.heads
                                                                  : 0;
  if (e.what == 1) {
    if (heads > 0) {
      ImGui::SetNextItemWidth(ImGui::GetFontSize() * 10);
      SliderIntTyped(tr("head"), &e.head, 0, heads - 1);
      e.head = std::clamp(e.head, 0, heads - 1);
    } else {
      NoticeText(tr("The current input has no attention heads (a grid): export the current view instead."));
    }
  }

  ImGui::TextUnformatted(tr("format"));
  ImGui::SameLine(label_w);
  for (int i = 0; i < 4; ++i) {
    if (i > 0) SameLineIfFits(RadioWidth(format_names[i]));
    ImGui::RadioButton(format_names[i], &e.format, i);
    RecordLastItem(state, std::string("export.format.") + std::to_string(i));
  }
  const bool picture = e.format == int(ExportFormat::png) || e.format == int(ExportFormat::svg);
  ImGui::BeginDisabled(!picture);
  ImGui::SetNextItemWidth(FitItemWidth(ImGui::GetFontSize() * 10, tr("scale")));
  // A typed scale outside 1×–4× is clamped with a note under the slider; steps of ½.
  double scale = e.scale;
  std::string refused;
  if (SliderDoubleFinite(tr("scale"), &scale, 1.0, 4.0, "%.1f×", refused)) e.scale = float(scale);
  e.scale = std::clamp(std::round(e.scale * 2.0f) / 2.0f, 1.0f, 4.0f);
  SameLineIfFits(RadioWidth(tr("caption")));
  ImGui::Checkbox(tr("caption"), &e.caption);
  ImGui::EndDisabled();

  // A long input: how its heads are pooled (the Heads view's pooling and blocks a side), and its length.
  if (const std::optional<LongExportJob> job = LongJob(state)) {
    HintText(LongExportSummary(*job));
  } else if (const ExportRequest r = RequestFor(state); r.token_first >= 0) {  // the Heads view's token range
    HintText(trf("tokens %d–%d only: the Heads view's token range", r.token_first, r.token_last));
  }
  ImGui::SetNextItemWidth(-ImGui::CalcTextSize(tr("path")).x - ImGui::GetStyle().ItemInnerSpacing.x);
  ImGui::InputTextWithHint(tr("path"), tr("exports/attnscope-<what>-<time>.<format>  (leave empty for a fresh name)"), &e.path);

  ImGui::BeginDisabled(ExportRunning(state));
  const bool clicked = ImGui::Button(ExportRunning(state) ? tr("Exporting…") : tr("Export"));
  RecordLastItem(state, "export.button");
  ImGui::EndDisabled();
  if (clicked) StartExport(state);
  SameLineIfFits(std::min(ImGui::CalcTextSize(tr("Ctrl+S exports again with these settings")).x, ImGui::GetFontSize() * 8));
  HintText(tr("Ctrl+S exports again with these settings"));  // wraps in a narrow column

  if (e.has_last) {
    if (e.last.ok) {
      ImGui::PushStyleColor(ImGuiCol_Text, IM_COL32(0, 140, 60, 255));
      ImGui::TextWrapped("%s", e.last.message.c_str());
      ImGui::PopStyleColor();
    } else {
      ErrorText(e.last.message);
    }
  }
  // The last PNG, scaled to fit what is left of the panel.
  if (e.last.ok && e.last.preview && e.preview.valid()) {
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float k = std::min({avail.x / float(e.preview.width()), avail.y / float(e.preview.height()), 1.0f});
    if (k > 0) ImGui::Image(e.preview.id(), ImVec2(float(e.preview.width()) * k, float(e.preview.height()) * k));
  }
  ImGui::End();
}

}  // namespace attnscope::gui
