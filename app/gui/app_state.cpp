#include "gui/app_state.h"

#include "gui/i18n.h"
#include "gui/windows.h"

#include <algorithm>
#include <filesystem>

namespace attnscope::gui {

const char* panel_title(Panel panel) {
  switch (panel) {
    case Panel::startup: return TrKey("the command line");
    case Panel::input: return TrKey("Input");
    case Panel::model: return TrKey("Model");
    case Panel::heads: return TrKey("Heads");
    case Panel::shapes: return TrKey("Shapes");
    case Panel::relpos: return TrKey("Relative position");
    case Panel::conv: return TrKey("Convolution");
    case Panel::exporter: return TrKey("Export");
    case Panel::checkpoint: return TrKey("Checkpoint");
  }
  return "";
}

void NoteEdit(AppState& state, Panel panel) {
  state.scene_edited = true;
  state.edited_by = panel;
}

void SubmitIfEdited(AppState& state) {
  if (!state.scene_edited) return;
  state.scene_edited = false;
  std::optional<ModelSource> source;
  const CheckpointWindowState& c = state.checkpoint;
  if (c.model && state.scene.view.view == View::heads)
    source = ModelSource{c.model, state.scene.input.text, c.layer, c.kv_heads, nullptr};
  else if (c.attentions && state.scene.view.view == View::heads)
    source = ModelSource{nullptr, "", c.layer, 0, c.attentions};
  state.submitted_generation = state.worker->submit(state.scene, source);
  // The model's complaints (no tokenizer, text too long) show in the Checkpoint window.
  state.submitted_by = source && state.edited_by != Panel::heads ? Panel::checkpoint : state.edited_by;
}

std::string CheckpointPathName(const std::string& path) {
  const std::filesystem::path p(path);
  const std::string ext = p.extension().string();
  const std::filesystem::path name =
      ext == ".npy" || ext == ".safetensors" ? p.parent_path().filename() / p.filename() : p.filename();
  return name.empty() ? path : name.string();
}

namespace {
// The run on screen and everything made from it: a new or closed model must not show the old one's
// layer, grid, scores or conversion until its own results arrive.
void ForgetRun(AppState& state) {
  CheckpointWindowState& c = state.checkpoint;
  c.run.reset();
  c.head_patterns.reset();
  c.head_patterns_error.clear();
  c.original.reset();
  state.model_view.pictures.reset();
  state.model_view.error.clear();
}
}  // namespace

void OpenCheckpoint(AppState& state, const std::string& path) {
  CheckpointWindowState& c = state.checkpoint;
  if (!c.loader || path.empty()) return;
  c.loading = path;
  c.error.clear();
  c.path = path;
  c.loader->open(path);
  state.show_checkpoint = true;
}

void CloseCheckpoint(AppState& state) {
  CheckpointWindowState& c = state.checkpoint;
  if (c.loader) c.loader->cancel();
  c.loading.clear();
  c.model.reset();
  c.attentions.reset();
  c.opened.clear();
  c.shown_name.clear();
  ForgetRun(state);
  c.tokenizer_error.clear();
  NoteEdit(state, Panel::checkpoint);  // the seeded layer again
}

bool TakeCheckpoint(AppState& state) {
  CheckpointWindowState& c = state.checkpoint;
  if (!c.loader) return false;
  std::optional<CheckpointResult> result = c.loader->take_result();
  if (!result) return false;
  c.loading.clear();
  if (!result->model && !result->attentions) {
    c.error = result->error;  // the open model, if any, stays
    return true;
  }
  c.error.clear();
  c.model = result->model;
  c.attentions = result->attentions;
  c.opened = result->dir.string();
  // Attentions are named by their folder (the info table gives the file).
  c.shown_name = c.model ? c.model->name
                         : (c.attentions->source == result->dir.filename().string() ? result->dir.parent_path()
                                                                                     : result->dir)
                               .filename()
                               .string();
  ForgetRun(state);
  c.tokenizer_error = result->tokenizer_error;
  c.kv_heads = 0;  // as trained: another model has other divisors
  c.layer = std::min(c.layer, c.layers() - 1);
  if (c.attentions && state.fonts)  // the file's own tokens, in any script
    for (const std::string& label : c.attentions->labels) state.fonts->request_text(label);
  const std::string dir = result->dir.string();
  std::erase(c.recent, dir);
  c.recent.insert(c.recent.begin(), dir);
  if (c.recent.size() > max_recent_checkpoints) c.recent.resize(max_recent_checkpoints);
  if (state.scene.view.view != View::heads) SwitchView(state, View::heads);
  NoteEdit(state, Panel::checkpoint);
  return true;
}

bool TakeResult(AppState& state) {
  std::optional<ComputeResult> result = state.worker->take_result();
  if (!result) return false;
  state.result_generation = result->generation;
  state.result_seconds = result->seconds;
  if (!result->error.empty()) {
    // Keep showing the last good pictures; say why the new settings gave none.
    state.error = result->error;
    state.error_panel = state.submitted_by;
    return true;
  }
  state.error.clear();
  if (result->analysis != state.analysis) NoteAnalysisChange(state.shapes, state.analysis.get(), *result->analysis);
  state.analysis = result->analysis;
  state.pictures = result->pictures;
  state.head_stats = result->stats;
  state.head_stats_error = result->stats_error;
  if (state.fonts && result->model_run && result->model_run != state.checkpoint.run)  // next tokens: any script
    for (const auto& labels : result->model_run->next_labels)
      for (const std::string& label : labels) state.fonts->request_text(label);
  state.checkpoint.run = result->model_run;
  state.checkpoint.head_patterns = result->head_patterns;
  state.checkpoint.head_patterns_error = result->head_patterns_error;
  state.checkpoint.original = result->original_run;
  // The last grid stays while the worker makes the new pass's (its second delivery).
  if (result->model_view) state.model_view.pictures = result->model_view;
  else if (!result->model_run) state.model_view.pictures.reset();  // not a checkpoint's pass
  state.model_view.error = result->model_view_error;
  return true;
}

void UploadTextures(AppState& state) {
  if (const auto& mv = state.model_view.pictures; mv && mv->atlas.width > 0 &&
      state.model_view.atlas.update(mv->atlas.width, mv->atlas.height,
                                    std::shared_ptr<const std::vector<Rgba>>(mv, &mv->atlas.pixels)))
    ++state.textures.uploads;
  Textures& t = state.textures;
  const Pictures* p = state.pictures.get();
  if (!p || t.uploaded == p) return;
  // Each texture refers to its pixels inside the immutable Pictures (aliasing shared_ptr): no copy.
  auto send = [&](GlTexture& texture, const Picture& picture) {
    if (picture.width == 0) texture.forget_pixels();  // not drawn; lets the old Pictures go
    else if (texture.update(picture.width, picture.height,
                            std::shared_ptr<const std::vector<Rgba>>(state.pictures, &picture.pixels)))
      ++t.uploads;
  };
  auto send_all = [&](std::vector<GlTexture>& textures, const std::vector<Picture>& pictures) {
    textures.resize(pictures.size());
    for (size_t i = 0; i < pictures.size(); ++i) send(textures[i], pictures[i]);
  };
  send_all(t.heads, p->heads);
  send_all(t.relpos_heads, p->relpos_heads);
  send(t.relpos_combined, p->relpos_combined);
  send(t.grid, p->grid);
  send(t.conv_input, p->conv_input);
  send(t.conv_mhsa, p->conv_mhsa);
  send(t.conv_true, p->conv_true);
  send(t.conv_difference, p->conv_difference);
  t.uploaded = p;
}

const LabelCache& CachedLabels(AppState& state, LabelCache& cache, const std::vector<std::string>& labels) {
  if (cache.source == &labels && cache.font_generation == state.fonts->generation() && cache.labels.size() == labels.size())
    return cache;
  cache.labels.clear();
  cache.extent = 0;
  for (const std::string& l : labels) {
    cache.labels.push_back(state.fonts->display_label(l));
    cache.extent = std::max(cache.extent, ImGui::CalcTextSize(cache.labels.back().c_str()).x);
  }
  cache.source = &labels;
  cache.font_generation = state.fonts->generation();
  return cache;
}

void SelectQuery(AppState& state, int index) {
  state.scene.view.selected_query = index;
  // The sentence relative-position view computes its expansion for one query: tell the engine.
  if (state.scene.input.source != InputSource::grid) {
    state.scene.relpos.query_index = index;
    if (state.scene.view.view == View::relpos1d) NoteEdit(state, Panel::relpos);
  }
}

std::string ErrorFor(const AppState& state, Panel panel) {
  if (state.error_panel != panel || state.error.empty()) return {};
  return std::string(tr("Error: ")) + state.error;  // the engine's message stays English (shared with the CLI)
}

}  // namespace attnscope::gui
