#include "gui/app_state.h"

#include "attnscope/core/error.h"
#include "attnscope/model/forward.h"
#include "core/worker_thread.h"
#include "gui/i18n.h"
#include "core/head_ablation_list.h"
#include "gui/widgets.h"
#include "gui/windows.h"

#include <algorithm>
#include <cstdio>
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
  // An edit of the input makes new tokens: a token set named the old ones (token_sets.h).
  if (panel == Panel::input) {
    state.scene.view.token_set.axis = TokenSetAxis::none;
    state.scene.view.token_set.tokens.clear();
  }
}

namespace {
// Where workers have no thread (the page), a checkpoint's forward runs inside a frame: a sentence being typed
// goes to the engine once no key has changed it for typing_pause_s, not at every key (each would freeze the
// page for a whole forward: 1.5 s on GPT-2 small at 105 tokens). True while such an edit waits.
constexpr double typing_pause_s = 0.4;
bool WaitsForTypingPause(const AppState& state) {
  return state.scene_edited && state.edited_by == Panel::input && state.checkpoint.model && !threads_available() &&
         state.input.typed_at >= 0 && ImGui::GetTime() - state.input.typed_at < typing_pause_s;
}
}  // namespace

void SubmitIfEdited(AppState& state) {
  if (!state.scene_edited || WaitsForTypingPause(state)) return;
  state.scene_edited = false;
  std::optional<ModelSource> source;
  const CheckpointWindowState& c = state.checkpoint;
  const bool model_views = ViewDrawsModel(state);  // they draw the open checkpoint's layer
  if (c.model && model_views) {
    source = ModelSource{c.model, state.scene.input.text, c.layer, c.kv_heads, nullptr,
                         tr("this checkpoint has no tokenizer: type token ids instead, e.g. \"ids: 1 2 3\" ({})")};
    source->ablation = c.ablation;
  } else if (c.attentions && model_views)
    source = ModelSource{nullptr, "", c.layer, 0, c.attentions};
  if (source && source->model && state.show_lens) {  // the Logit lens window reads the same forward
    source->lens = true;
    source->attribute_token = state.lens.target;
  }
  if (source && source->model) {  // used when the input is too long for the whole stack (core/long_heads.h)
    source->pooling = state.heads.long_pooling;
    source->pixels = state.heads.long_pixels;
    source->long_zoom = state.heads.long_zoom;
    source->thumb_pixels = state.model_view.long_pixels;  // once the Model view drew a long input's grid
  }
  if (source && source->model && state.qk.open)  // the Heads view's "why" panel
    source->qk = model::QkCell{c.layer, state.qk.head, state.qk.query, state.qk.key};
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
  c.ablation_result.reset();
  state.model_view.pictures.reset();
  state.model_view.error.clear();
  state.lens.result.reset();
  state.qk.result.reset();
  state.qk.open = false;
}

// The Input window's text for a model just opened: the text on screen when the model reads it, else the
// model's default input (a repeated sequence in its own ids), keeping the text for Close.
// The sentence on screen against the model just opened, as the loader checked it (pipeline::open_source, off
// this thread). A sentence typed while the folder opened is the user's own: it stays, and the run says what
// is wrong with it, as for any sentence typed.
void FitInputToModel(AppState& state, const CheckpointResult& result) {
  CheckpointWindowState& c = state.checkpoint;
  c.input_note.clear();
  if (!c.model) return;
  std::string problem = result.input == state.scene.input.text ? result.input_problem : std::string();
  if (problem.empty() && state.scene.input.source != InputSource::text) problem = "the input is not text";
  // A vocabulary of one token has no repeated sequence (no default input): its error shows in place of the heads.
  if (problem.empty() || result.default_input.empty()) return;
  if (c.synthetic_text.empty()) c.synthetic_text = state.scene.input.text;
  state.scene.input.text = c.default_text = result.default_input;
  state.scene.input.source = InputSource::text;
  c.input_note = problem;
}

}  // namespace

void OpenCheckpoint(AppState& state, const std::string& path) {
  CheckpointWindowState& c = state.checkpoint;
  if (!c.loader || path.empty()) return;
  c.loading = path;
  c.error.clear();
  c.path = path;
  c.loader->open(path, state.scene.input.text);  // checked against the model as it opens
  state.show_checkpoint = true;
}

void CloseCheckpoint(AppState& state) {
  CheckpointWindowState& c = state.checkpoint;
  if (c.loader) c.loader->cancel();
  c.loading.clear();
  c.model.reset();
  c.attentions.reset();
  c.ablation = {};
  c.opened.clear();
  c.shown_name.clear();
  ForgetRun(state);
  c.tokenizer_error.clear();
  c.tokenizer.reset();
  c.error.clear();
  c.input_note.clear();
  // The synthetic layer's text again, unless the user typed a sentence of their own meanwhile (token ids,
  // the model's default input or a lesson's, mean nothing to the synthetic layer).
  const std::string& text = state.scene.input.text;
  if (!c.synthetic_text.empty() && (text == c.default_text || text.rfind("ids:", 0) == 0)) state.scene.input.text = c.synthetic_text;
  c.synthetic_text.clear();
  c.default_text.clear();
  NoteEdit(state, Panel::checkpoint);  // the seeded layer again
}

bool TakeCheckpoint(AppState& state) {
  CheckpointWindowState& c = state.checkpoint;
  if (!c.loader) return false;
  std::optional<CheckpointResult> result = c.loader->take_result();
  if (!result) return false;
  c.loading.clear();
  if (!result->model && !result->attentions) {
    // The model asked for is the current one, and its error stands in place of its heads: nothing of the
    // model open before (or of the synthetic layer) stays on screen under its name.
    c.error = result->error;
    c.model.reset();
    c.attentions.reset();
    c.opened = result->dir.string();
    c.shown_name = result->dir.filename().string();
    c.tokenizer_error.clear();
    c.tokenizer.reset();
    c.input_note.clear();
    ForgetRun(state);
    if (state.scene.view.view != View::heads) SwitchView(state, View::heads);
    NoteEdit(state, Panel::checkpoint);
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
  c.tokenizer = result->tokenizer;
  c.kv_heads = 0;  // as trained: another model has other divisors
  c.ablation = {};  // another model has other heads
  if (!c.open_ablate.empty() && c.model) {  // the window's --ablate, checked against this model
    try {
      c.ablation = parse_head_ablation(c.open_ablate, c.open_ablate_mode, *c.model);
    } catch (const InputError& e) {
      state.error = e.what();
      state.error_panel = Panel::checkpoint;
      std::fprintf(stderr, "error: %s\n", e.what());
    }
    c.open_ablate.clear();
  }
  c.layer = std::min(c.layer, c.layers() - 1);
  if (const std::optional<std::array<int, 3>> cell = state.qk.open_cell) {  // the window's --why
    state.qk.open = true;
    state.qk.placed = false;
    state.qk.head = (*cell)[0];
    state.qk.query = (*cell)[1];
    state.qk.key = (*cell)[2];
    state.qk.anchor = ImVec2(-1, -1);  // no cell clicked: at the view's right
    state.qk.open_cell.reset();
  }
  FitInputToModel(state, *result);
  if (state.fonts) state.fonts->request_text(state.scene.input.text);
  if (c.attentions && state.fonts)  // the file's own tokens, in any script
    for (const std::string& label : c.attentions->labels) state.fonts->request_text(label);
  const std::string dir = result->dir.string();
  std::erase(c.recent, dir);
  c.recent.insert(c.recent.begin(), dir);
  if (c.recent.size() > max_recent_checkpoints) c.recent.resize(max_recent_checkpoints);
  // The Heads view, unless the view shown draws the model too (Shapes, Positions: `--view shapes
  // --checkpoint DIR` opens the checkpoint in the Shapes view).
  if (!ViewDrawsModel(state)) SwitchView(state, View::heads);
  NoteEdit(state, Panel::checkpoint);
  return true;
}

bool TakeResult(AppState& state) {
  std::optional<ComputeResult> result = state.worker->take_result();
  if (!result) return false;
  state.result_generation = result->generation;
  state.result_seconds = result->seconds;
  if (!result->error.empty()) {
    // Keep showing the last good pictures of the same model; say why the new settings gave none.
    state.error = result->error;
    state.error_panel = state.submitted_by;
    state.error_of = result->of_model;
    return true;
  }
  state.error.clear();
  state.error_of = nullptr;
  // What changed is told within one model; another model's shapes are not a change of setting.
  // A long input: its pooled heads stand in place of the analysis (the old heads stay until these arrive).
  state.long_heads = result->long_heads;
  state.long_heads_of = result->long_heads ? result->of_model : nullptr;
  state.long_overview = result->long_heads ? result->long_overview : nullptr;
  state.long_maps = result->long_heads && result->pipeline_result ? result->pipeline_result->head_maps : nullptr;
  if (result->analysis && result->analysis != state.analysis) {
    if (state.analysis_of == result->of_model) {
      NoteAnalysisChange(state.shapes, state.analysis.get(), *result->analysis);
    } else {
      state.shapes.setting_changes.clear();
      state.shapes.shape_changes.clear();
    }
  }
  state.analysis_of = result->of_model;
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
  state.checkpoint.ablation_result = result->ablation;
  // The last grid stays while the worker makes the new pass's (its second delivery).
  if (result->model_view) state.model_view.pictures = result->model_view;
  else if (!result->model_run) state.model_view.pictures.reset();  // not a checkpoint's pass
  state.model_view.error = result->model_view_error;
  state.lens.result = result->model_run ? result->pipeline_result : nullptr;
  state.qk.result = state.lens.result;
  return true;
}

void UploadTextures(AppState& state) {
  if (const auto& mv = state.model_view.pictures; mv && mv->atlas.width > 0 &&
      state.model_view.atlas.update(mv->atlas.width, mv->atlas.height,
                                    std::shared_ptr<const std::vector<Rgba>>(mv, &mv->atlas.pixels)))
    ++state.textures.uploads;
  if (const auto& mv = state.model_view.pictures; mv && mv->strips.width > 0 &&
      state.model_view.strips.update(mv->strips.width, mv->strips.height,
                                     std::shared_ptr<const std::vector<Rgba>>(mv, &mv->strips.pixels)))
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
  if (cache.font_generation == state.fonts->generation() && cache.font_size == ImGui::GetFontSize() && cache.source == labels)
    return cache;
  cache.labels.clear();
  cache.extent = 0;
  for (const std::string& l : labels) {
    cache.labels.push_back(state.fonts->display_label(l));
    cache.extent = std::max(cache.extent, ImGui::CalcTextSize(cache.labels.back().c_str()).x);
  }
  cache.source = labels;
  cache.font_generation = state.fonts->generation();
  cache.font_size = ImGui::GetFontSize();
  return cache;
}

bool ViewDrawsModel(const AppState& state) {
  const View view = state.scene.view.view;
  return view == View::heads || view == View::shapes || view == View::positions;
}

bool AnalysisOfCurrentModel(const AppState& state) {
  const CheckpointWindowState& c = state.checkpoint;
  if (!state.analysis) return false;
  if (!c.current()) return state.analysis_of == nullptr;
  return c.is_open() && state.analysis_of == c.id();
}

bool AnalysisOfView(const AppState& state) {
  if (ViewDrawsModel(state)) return AnalysisOfCurrentModel(state);
  // Relpos and conv come from the scene alone, and are not drawn while a checkpoint is the current model.
  return state.analysis && state.analysis_of == nullptr && !state.checkpoint.current();
}

std::string CurrentCheckpointError(const AppState& state) {
  const CheckpointWindowState& c = state.checkpoint;
  if (!c.current()) return {};
  if (!c.error.empty()) return c.error;
  if (c.is_open() && !state.error.empty() && state.error_of == c.id()) return state.error;
  return {};
}

const LongHeads* CurrentLongHeads(const AppState& state) {
  const CheckpointWindowState& c = state.checkpoint;
  if (!state.long_heads || !c.current() || !c.is_open() || state.long_heads_of != c.id()) return nullptr;
  return state.long_heads.get();
}

bool LongInputNotice(const AppState& state, const char* view) {
  const LongHeads* l = CurrentLongHeads(state);
  if (!l || !state.checkpoint.model) return false;
  // The longest input whose whole stack this model holds (model::stack_fits is monotone in T).
  int lo = 1, hi = l->tokens;
  while (lo < hi) {
    const int mid = lo + (hi - lo + 1) / 2;
    if (model::stack_fits(state.checkpoint.model->config, mid)) lo = mid;
    else hi = mid - 1;
  }
  NoticeText(trf("%s needs every layer's attention at once. This input has %d tokens, so its heads are computed one "
                 "at a time on demand (a long input); with this model the view takes at most %d tokens.",
                 tr(view), l->tokens, lo));
  return true;
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
