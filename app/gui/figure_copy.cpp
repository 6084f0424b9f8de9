#include "gui/figure_copy.h"

#include <imgui.h>

#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/platform_clipboard.h"
#include "core/platform_page.h"
#include "core/scene_link.h"
#include "core/worker_thread.h"
#include "core/translations.h"
#include "attnscope/figure/pooled_figure.h"
#include "gui/app_state.h"
#include "gui/i18n.h"
#include "gui/widgets.h"
#include "gui/windows.h"

namespace attnscope::gui {
namespace {

// The figure `render()` makes (a PNG), rendered and handed to the clipboard off the frame; the status line says
// how it went once it is done (UpdateFigureCopy).
void StartRender(AppState& state, std::function<ExportedFile()> render) {
  state.figure_copy.running = run_off_frame([render = std::move(render)] {
    FigureCopyOutcome out;
    try {
      const ExportedFile file = render();
      out.width = file.layout ? file.layout->width : file.image ? file.image->width : 0;
      out.height = file.layout ? file.layout->height : file.image ? file.image->height : 0;
      out.clipboard = copy_png_to_clipboard(file.bytes);
    } catch (const std::exception& e) {  // InputError: this view has nothing the export can draw
      out.render_error = e.what();
    }
    return out;
  });
}

void StartCopy(AppState& state) {
  if (FigureCopyRunning(state)) return;
  // Compare A/B open over the heads: its figure, as Save PNG draws it.
  if (std::optional<CompareExport> shown = CompareOnScreen(state, ExportFormat::png)) {
    StartRender(state, [shown = std::move(*shown)] { return render_compare(*shown.a, *shown.b, shown.request); });
    return;
  }
  // A long input: the Heads view's layer of pooled heads, as `export --long --what heads` draws it.
  if (std::optional<LongExportJob> job = LongExportOnScreen(state, ExportWhat::heads, CopyRequest(state))) {
    StartRender(state, [job = std::move(*job)] { return render_long_export(job); });
    return;
  }
  if (!state.analysis || !AnalysisOfView(state)) {  // never another model's heads (a relpos view's own are its)
    state.status = tr("Nothing to copy yet: the engine has no result for these settings.");
    return;
  }
  // The analysis is immutable and shared: read on the other thread.
  StartRender(state, [analysis = state.analysis, request = CopyRequest(state)] { return render_export(*analysis, request); });
}

}  // namespace

namespace {

// Why a clipboard write failed, as the end of a "… not copied: " sentence.
std::string ClipboardReason(const ClipboardOutcome& c) {
  const char* tool = c.tool.c_str();
  switch (c.problem) {
    case ClipboardProblem::none:
      return "";
    case ClipboardProblem::no_display:
      return tr("there is no display session to copy to (neither Wayland nor X11).");
    case ClipboardProblem::missing_tool:
      return trf("%s is not installed (install the package %s).", tool, c.package.c_str());
    case ClipboardProblem::no_pipe:
      return trf("no pipe to %s could be made (%s).", tool, c.detail.c_str());
    case ClipboardProblem::cannot_start:
      return trf("%s could not be started (%s).", tool, c.detail.c_str());
    case ClipboardProblem::too_slow:
      return trf("%s did not finish within 5 seconds and was stopped.", tool);
    case ClipboardProblem::short_read:
      return trf("%s stopped before reading the whole image.", tool);
    case ClipboardProblem::tool_failed:
      return c.exit_status < 0 ? trf("%s was stopped by a signal.", tool)
                               : trf("%s failed with exit status %d.", tool, c.exit_status);
    case ClipboardProblem::insecure_page:
      return tr("the browser lets only https:// pages (and localhost) use the clipboard.");
    case ClipboardProblem::no_image_api:
      return tr("this browser cannot put an image on the clipboard (use Export instead).");
    case ClipboardProblem::refused:
      return trf("the browser refused the clipboard (%s).", c.detail.c_str());
  }
  return "";
}

// The status line once a copy has finished.
void ReportCopy(AppState& state, const FigureCopyOutcome& out) {
  if (!out.link.empty()) {
    state.status = out.clipboard.ok ? trf("Link copied (%d characters): it opens this scene in a browser",
                                          int(out.link.size()))
                                    : std::string(tr("Link not copied: ")) + ClipboardReason(out.clipboard);
  } else if (!out.render_error.empty()) {
    state.status = std::string(tr("Figure not copied: ")) + out.render_error;
  } else if (!out.clipboard.ok) {
    state.status = ClipboardMessage(out.clipboard);
  } else {
    state.status = trf("Figure copied (%d×%d PNG)", out.width, out.height);
  }
}

}  // namespace

std::string ClipboardMessage(const ClipboardOutcome& c) {
  if (c.problem == ClipboardProblem::none) return "";
  return std::string(tr("Figure not copied: ")) + ClipboardReason(c);
}

std::string LinkSite(const AppState& state) {
  const std::string page = page_address();
  return page.empty() ? state.figure_copy.site_url : page;
}

void CopyLink(AppState& state) {
  FigureCopyState& copy = state.figure_copy;
  if (copy.running.valid() || copy.waiting) return;
  const std::string site = LinkSite(state);
  if (site.empty()) {
    state.status = std::string(tr("Link not copied: ")) +
                   tr("no web address to link to: start attnscope with --site-url ADDRESS (or set ATTNSCOPE_SITE_URL).");
    return;
  }
  std::string link;
  try {
    link = scene_link(site, state.scene);
  } catch (const std::exception& e) {
    state.status = std::string(tr("Link not copied: ")) + e.what();
    return;
  }
  copy.running = run_off_frame([link] {
    FigureCopyOutcome out;
    out.link = link;
    out.clipboard = copy_text_to_clipboard(link);
    return out;
  });
}

const FigureWords& UiFigureWords() {
  static std::map<Language, FigureWords> words;
  const Language language = UiLanguage();
  auto it = words.find(language);
  if (it == words.end()) {
    FigureWords w;
    try {
      w = figure_words(language);
    } catch (const std::exception&) {  // the file's problem is already on screen (TranslationProblem)
    }
    it = words.emplace(language, std::move(w)).first;
  }
  return it->second;
}

ExportRequest CopyRequest(const AppState& state) {
  ExportRequest r = export_request_for_view(state.scene.view);
  r.format = ExportFormat::png;
  r.scale = state.exporter.scale;
  r.caption = state.exporter.caption;
  r.words = UiFigureWords();
  if (state.heads.zoom.token_last >= 0 && (r.what == ExportWhat::heads || r.what == ExportWhat::head)) {
    r.token_first = state.heads.zoom.token_first;  // the Heads view's token range
    r.token_last = state.heads.zoom.token_last;
  }
  return r;
}

std::optional<LongExportJob> LongExportOnScreen(const AppState& state, ExportWhat what, ExportRequest base) {
  const LongHeads* heads = CurrentLongHeads(state);
  if (!heads || !state.long_maps) return std::nullopt;
  LongExportJob job;
  job.maps = state.long_maps;
  job.model_name = heads->model_name;
  job.layer = heads->layer;
  job.pooling = heads->pooling;
  job.pixels = what == ExportWhat::model ? default_model_pixels : heads->pixels;
  base.what = what;
  base.scores = false;  // a long input's heads are probabilities
  base.token_first = base.token_last = -1;
  base.token_set = TokenSet{};
  if (what != ExportWhat::heads && base.color_scale.mode == ScaleMode::per_head) base.color_scale.mode = ScaleMode::shared;
  job.request = std::move(base);
  return job;
}

std::string LongExportSummary(const LongExportJob& job) {
  const int T = job.maps ? job.maps->tokens : 0;
  const int block = model::pool_block(std::max(T, 1), std::max(job.pixels, 1));
  const int side = (T + block - 1) / block;
  return job.pooling == model::Pooling::max
             ? trf("each head max-pooled to %d×%d blocks, from a long input of %d tokens", side, side, T)
             : trf("each head mean-pooled to %d×%d blocks, from a long input of %d tokens", side, side, T);
}

void CopyFigureButton(AppState& state, bool same_line, const char* id) {
  const char* label = tr("Copy figure");
  if (same_line) SameLineIfFits(ImGui::CalcTextSize(label).x + ImGui::GetStyle().FramePadding.x * 2);
  if (ImGui::SmallButton((std::string(label) + "##" + id).c_str())) StartCopy(state);
  RecordLastItem(state, id);  // the layout record's rectangle (tests click it)
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("%s", tr("Puts this view's figure on the clipboard as a PNG image (Ctrl+C), ready to paste "
                               "into slides"));
}

void CopyFigureButton(AppState& state, const char* id, std::function<ExportedFile()> render) {
  const char* label = tr("Copy figure");
  SameLineIfFits(ImGui::CalcTextSize(label).x + ImGui::GetStyle().FramePadding.x * 2);
  if (ImGui::Button((std::string(label) + "##" + id).c_str()) && !FigureCopyRunning(state)) StartRender(state, std::move(render));
  RecordLastItem(state, id);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("%s", tr("Puts this figure on the clipboard as a PNG image, ready to paste into slides"));
}

bool FigureCopyRunning(const AppState& state) { return state.figure_copy.running.valid() || state.figure_copy.waiting; }

void UpdateFigureCopy(AppState& state) {
  const ImGuiIO& io = ImGui::GetIO();
  if (io.KeyCtrl && !io.KeyShift && !io.KeyAlt && !io.WantTextInput &&
      ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_C), false))
    StartCopy(state);
  // The browser's answer to a write handed over on an earlier frame.
  std::optional<FigureCopyOutcome>& waiting = state.figure_copy.waiting;
  if (waiting) {
    if (const std::optional<ClipboardOutcome> answer = finished_clipboard_write()) {
      waiting->clipboard = *answer;
      ReportCopy(state, *waiting);
      waiting.reset();
    }
    return;
  }
  std::future<FigureCopyOutcome>& copy = state.figure_copy.running;
  if (!copy.valid() || copy.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
  const FigureCopyOutcome out = copy.get();
  if (out.clipboard.pending) waiting = out;
  else ReportCopy(state, out);
}

}  // namespace attnscope::gui
