#include "gui/scripted_run.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "attnscope/classroom/lessons.h"
#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"
#include "attnscope/scene/scene_json.h"
#include "attnscope/figure/image.h"
#include "attnscope/figure/render_png.h"
#include "gui/classroom_windows.h"
#include "gui/compare_state.h"
#include "gui/i18n.h"
#include "gui/layout_record.h"
#include "gui/training_windows.h"
#include "gui/windows.h"

namespace attnscope::gui {
namespace {

nlohmann::json rect_json(nlohmann::json j, ImVec2 min, ImVec2 max) {
  j["x"] = min.x;
  j["y"] = min.y;
  j["w"] = max.x - min.x;
  j["h"] = max.y - min.y;
  return j;
}

// The screen-wide part of a layout record (layout_record.h), scaled from ImGui's to framebuffer pixels.
void add_screen_json(nlohmann::json& j, const LayoutRecord& layout, ImVec2 s) {
  auto px = [s](ImVec2 p) { return ImVec2(p.x * s.x, p.y * s.y); };
  j["menu_bar"] = rect_json(nlohmann::json::object(), px(layout.menu_bar_min), px(layout.menu_bar_max));
  j["slots"] = nlohmann::json::object();
  for (const LayoutRecord::Slot& slot : layout.slots) j["slots"][slot.name] = rect_json(nlohmann::json::object(), px(slot.min), px(slot.max));
  j["view_shown"] = layout.view_shown;
  j["windows"] = nlohmann::json::array();
  for (const LayoutRecord::Window& w : layout.windows)
    j["windows"].push_back(rect_json({{"title", w.title}, {"scroll_x", w.scroll_x}, {"scroll_y", w.scroll_y}}, px(w.min), px(w.max)));
  j["texts"] = nlohmann::json::array();
  for (const LayoutRecord::Text& t : layout.texts) {
    nlohmann::json e = {{"window", t.window}, {"text", t.text}, {"scroll_x", t.scroll_x}, {"scroll_y", t.scroll_y}};
    e["clip"] = rect_json(nlohmann::json::object(), px(t.clip_min), px(t.clip_max));
    j["texts"].push_back(rect_json(std::move(e), px(t.min), px(t.max)));
  }
}

}  // namespace

void WriteScreenshot(const std::filesystem::path& path, int width, int height, const std::vector<unsigned char>& rgba) {
  // The engine's PNG writer, the same as for exports: encoded in memory, then written atomically.
  Image image;
  image.width = width;
  image.height = height;
  image.rgba.assign(rgba.begin(), rgba.end());
  write_png(path, image);
}

void WriteLayoutJson(const std::filesystem::path& path, const AppState& state, int width, int height,
                     const LayoutSweep* sweep, int frame) {
  nlohmann::json j;
  if (frame >= 0) {  // an interactive run's record: its frame count and the slowest frame's own work
    j["frame"] = frame;
    j["slowest_frame_work_ms"] = state.slowest_frame_work_ms;
    j["frames_drawn"] = state.frames_drawn;
  }
  j["width"] = width;
  j["height"] = height;
  j["view"] = state.layout.view;
  j["colormap"] = state.layout.colormap;
  j["values"] = state.layout.scores ? "scores" : "probabilities";
  j["error"] = state.error;
  j["font_notice"] = state.fonts ? state.fonts->notice() : "";
  j["selected_query"] = state.scene.view.selected_query;
  j["token_set"] = {{"axis", to_string(state.scene.view.token_set.axis)}, {"tokens", state.scene.view.token_set.tokens},
                    {"reduce", to_string(state.scene.view.token_set.reduce)}};
  // A drag over the Input window's token strip under way: the chips it lights up, "1-4" ("" none).
  const int drag_from = state.input.drag_from, drag_to = state.input.drag_to;
  j["token_drag"] = drag_from < 0 || drag_from == drag_to ? std::string()
                                                          : std::to_string(std::min(drag_from, drag_to)) + "-" +
                                                                std::to_string(std::max(drag_from, drag_to));
  std::string ablated;  // the heads the Model view switched off, "1.0,1.3" ("" none)
  for (const model::HeadRef& h : state.checkpoint.ablation.heads)
    ablated += (ablated.empty() ? "" : ",") + std::to_string(h.layer) + "." + std::to_string(h.head);
  j["ablated_heads"] = ablated;
  j["status"] = state.status;
  j["requests"] = state.submitted_generation;  // the settings sent to the engine so far (each a forward with a model)
  j["language"] = to_string(state.language);
  j["ui_scale"] = state.ui_scale;
  j["translation_problem"] = TranslationProblem();
  j["untranslated"] = UntranslatedKeys();
  j["lesson"] = state.lessons.lesson >= 0 ? state.lessons.lessons[size_t(state.lessons.lesson)].number : 0;
  j["lesson_step"] = state.lessons.step + 1;
  j["lesson_steps"] = state.lessons.lesson >= 0 ? int(state.lessons.lessons[size_t(state.lessons.lesson)].steps.size()) : 0;
  j["export_message"] = state.exporter.has_last ? state.exporter.last.message : "";
  j["large_head"] = state.heads.large_head;
  j["lens_position"] = state.lens.position;
  j["lens_page"] = state.lens.tab == 1 ? "attribution" : "lens";
  j["lens_target"] = state.lens.target;
  {  // the Heads view's "why" panel: its cell and the numbers it shows (none until the worker has them)
    nlohmann::json q = {{"open", state.qk.open}, {"layer", state.checkpoint.layer}, {"head", state.qk.head},
                        {"query", state.qk.query}, {"key", state.qk.key}};
    const pipeline::Result* r = state.qk.result.get();
    if (state.qk.open && r && r->qk_attribution) {
      const model::QkAttribution& a = *r->qk_attribution;
      q["cell"] = {a.cell.layer, a.cell.head, a.cell.query, a.cell.key};
      q["score"] = a.score;
      q["drawn"] = a.drawn;
      q["sum"] = a.sum();
      q["before_softcap"] = a.before_softcap;
    }
    q["error"] = r ? r->qk_attribution_error : "";
    j["qk"] = q;
  }
  j["relpos_query"] = {state.scene.relpos.query_index, state.scene.relpos.query_row, state.scene.relpos.query_col};
  j["heads"] = nlohmann::json::array();
  for (const LayoutRecord::Head& h : state.layout.heads) {
    nlohmann::json e = {{"head", h.head}, {"kv_group", h.kv_group}, {"tokens", h.tokens}, {"cell", h.cell}, {"frame", h.frame},
                      {"first_query", h.first_query}, {"first_key", h.first_key}, {"shown", h.shown}};
    const ImVec4 c = ImGui::ColorConvertU32ToFloat4(h.frame_color);
    e["frame_color"] = {int(c.x * 255.0f + 0.5f), int(c.y * 255.0f + 0.5f), int(c.z * 255.0f + 0.5f)};
    e["range"] = {h.range.lo, h.range.hi};
    j["heads"].push_back(rect_json(std::move(e), h.min, h.max));
  }
  j["thumbs"] = nlohmann::json::array();
  for (const LayoutRecord::Thumb& t : state.layout.thumbs) {
    nlohmann::json e = {{"layer", t.layer}, {"head", t.head}, {"kv_group", t.kv_group}, {"frame", t.frame},
                        {"current", t.current}, {"first_query", t.first_query}, {"first_key", t.first_key},
                        {"shown", t.shown}, {"kind", t.kind}};
    const ImVec4 c = ImGui::ColorConvertU32ToFloat4(t.frame_color);
    e["frame_color"] = {int(c.x * 255.0f + 0.5f), int(c.y * 255.0f + 0.5f), int(c.z * 255.0f + 0.5f)};
    if (t.strip_max.x > t.strip_min.x)
      e["strip"] = {t.strip_min.x, t.strip_min.y, t.strip_max.x - t.strip_min.x, t.strip_max.y - t.strip_min.y};
    j["thumbs"].push_back(rect_json(std::move(e), t.min, t.max));
  }
  j["labels"] = nlohmann::json::array();
  const ImVec2 s = state.framebuffer_scale;
  for (const LayoutRecord::Label& l : state.layout.labels) {
    nlohmann::json e = {{"axis", l.axis},       {"index", l.index},           {"text", l.text},
                        {"full", l.full},       {"orientation", l.orientation}, {"shortened", l.shortened}};
    j["labels"].push_back(rect_json(std::move(e), ImVec2(l.min.x * s.x, l.min.y * s.y), ImVec2(l.max.x * s.x, l.max.y * s.y)));
  }
  j["captions"] = nlohmann::json::array();
  for (const LayoutRecord::Caption& c : state.layout.captions) {
    nlohmann::json e = {{"grid", c.grid}, {"tile", c.tile}, {"form", c.form}, {"text", c.text}};
    j["captions"].push_back(rect_json(std::move(e), ImVec2(c.min.x * s.x, c.min.y * s.y), ImVec2(c.max.x * s.x, c.max.y * s.y)));
  }
  j["ticks"] = nlohmann::json::array();
  for (const LayoutRecord::Tick& t : state.layout.ticks)
    j["ticks"].push_back({{"grid", t.grid}, {"tile", t.tile}, {"value", t.value}, {"step", t.step}, {"text", t.text}});
  j["bars"] = nlohmann::json::array();
  for (const LayoutRecord::Bar& b : state.layout.bars)
    j["bars"].push_back({{"grid", b.grid}, {"tile", b.tile}, {"lo", b.lo}, {"hi", b.hi}, {"title", b.title}});
  j["widgets"] = nlohmann::json::object();
  for (const LayoutRecord::Widget& w : state.layout.widgets)
    j["widgets"][w.name] = rect_json(w.text.empty() ? nlohmann::json::object() : nlohmann::json{{"text", w.text}}, w.min, w.max);
  j["shape_changes"] = state.shapes.shape_changes;
  j["setting_changes"] = state.shapes.setting_changes;
  add_screen_json(j, state.layout, s);
  j["controls"] = nlohmann::json::array();
  auto px = [s](ImVec2 p) { return ImVec2(p.x * s.x, p.y * s.y); };
  for (const ControlRecord& c : RecordedControls()) {
    j["controls"].push_back(rect_json({{"window", c.window},
                                       {"id", c.id},
                                       {"typed", c.typed},
                                       {"full", rect_json(nlohmann::json::object(), px(c.full_min), px(c.full_max))},
                                       {"scroll_x", c.scroll_x},
                                       {"scroll_y", c.scroll_y}},
                                      px(c.min), px(c.max)));
    if (c.has_grab) j["controls"].back()["grab"] = rect_json(nlohmann::json::object(), px(c.grab_min), px(c.grab_max));
  }
  j["training"] = TrainingLayoutJson(state);
  j["checkpoint_current"] = state.layout.checkpoint_current;
  // The model the views draw ("" the synthetic one) and whether the screen has settled: no model
  // loading, the newest settings' result on screen (the Rollout view's too), no lesson step waiting for its run (the lesson walk
  // reads each step once it has).
  j["checkpoint"] = state.checkpoint.is_open() ? state.checkpoint.opened : "";
  j["settled"] = state.checkpoint.loading.empty() && !state.checkpoint.loader->loading() && !state.scene_edited &&
                 state.worker->idle() && state.result_generation >= state.submitted_generation &&
                 !state.lessons.focus_pending && !RolloutBusy(state);
  j["lesson_shown"] = LessonShown(state);
  // A long input's head maps the compute worker has made so far (core/long_heads.h: a layer change or max|mean within
  // its cache makes none).
  j["long_maps_made"] = state.worker->long_maps_made();
  j["checkpoint_error"] = state.checkpoint.error;
  j["checkpoint_picker_refused"] = state.checkpoint.picker_refusal.has_value();  // the browser's folder picker
  j["presenting"] = state.presenting;
  j["scene"] = scene_to_json(state.scene);  // the scene itself (a link's round trip is checked against it)
  j["earlier_frames"] = nlohmann::json::array();
  for (const AppState::EarlierFrame& f : state.earlier_frames) {
    nlohmann::json texts = nlohmann::json::array();
    for (const auto& [window, text] : f.texts) texts.push_back({{"window", window}, {"text", text}});
    j["earlier_frames"].push_back({{"frame", f.frame}, {"checkpoint_current", f.checkpoint_current}, {"texts", std::move(texts)}});
  }
  if (sweep) {
    j["screens"] = nlohmann::json::array();
    for (const LayoutSweep::Screen& screen : sweep->screens()) {
      nlohmann::json e = {{"name", screen.name},     {"view", screen.view},
                          {"lesson", screen.lesson}, {"lesson_step", screen.lesson_step},
                          {"error", screen.error}};
      add_screen_json(e, screen.layout, s);
      e["heads"] = nlohmann::json::array();  // the heatmaps' rectangles (already in framebuffer pixels)
      for (const LayoutRecord::Head& h : screen.layout.heads)
        e["heads"].push_back(rect_json({{"head", h.head}, {"kv_group", h.kv_group}, {"tokens", h.tokens}}, h.min, h.max));
      // The key and query labels and the grids' captions (gui_labels checks them on every screen).
      e["labels"] = nlohmann::json::array();
      for (const LayoutRecord::Label& l : screen.layout.labels)
        e["labels"].push_back({{"axis", l.axis}, {"index", l.index}, {"text", l.text}, {"full", l.full},
                               {"orientation", l.orientation}, {"shortened", l.shortened}});
      e["captions"] = nlohmann::json::array();
      for (const LayoutRecord::Caption& c : screen.layout.captions)
        e["captions"].push_back({{"grid", c.grid}, {"tile", c.tile}, {"form", c.form}, {"text", c.text}});
      j["screens"].push_back(std::move(e));
    }
  }
  write_file_atomic(path, j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

LayoutSweep::LayoutSweep() {
  plan_.push_back({"start", [](AppState&) {}});
  for (const View view : all_views)  // the menu bar's view tabs
    plan_.push_back({std::string("view ") + to_string(view), [view](AppState& state) {
                       state.show_getting_started = false;  // a first start's, over the view (its own screen below)
                       SwitchView(state, view);
                     }});
  // The windows the menus open beside a view, one at a time (as the Windows and Classroom menus do).
  plan_.push_back({"window head analysis", [](AppState& state) {
                     SwitchView(state, View::heads);
                     state.show_analysis = true;
                   }});
  plan_.push_back({"window kv-cache calculator", [](AppState& state) {
                     state.show_analysis = false;
                     state.show_kv_cache = true;
                   }});
  plan_.push_back({"window export", [](AppState& state) {
                     state.show_kv_cache = false;
                     state.show_export = true;
                   }});
  plan_.push_back({"window export, the model view", [](AppState& state) {  // its own line (a long input's too)
                     state.exporter.what = 3;
                   }});
  plan_.push_back({"window shapes beside the view", [](AppState& state) {
                     state.exporter.what = 0;
                     state.show_export = false;
                     state.show_shapes_floating = true;
                   }});
  plan_.push_back({"window about", [](AppState& state) {
                     state.show_shapes_floating = false;
                     state.show_about = true;
                   }});
  plan_.push_back({"window keys", [](AppState& state) {
                     state.show_about = false;
                     state.show_keys = true;
                   }});
  plan_.push_back({"window getting started", [](AppState& state) {
                     state.show_keys = false;
                     state.show_getting_started = true;
                   }});
  plan_.push_back({"window training", [](AppState& state) {
                     state.show_getting_started = false;
                     state.show_training = true;
                   }});
  plan_.push_back({"window checkpoint", [](AppState& state) {
                     state.show_training = false;
                     state.show_checkpoint = true;
                   }});
  plan_.push_back({"window model view", [](AppState& state) {
                     state.show_checkpoint = false;
                     state.show_model_view = true;
                   }});
  // The Model view with a set of queries (a row under every thumbnail), then of keys (a column right of each).
  plan_.push_back({"window model view query set", [](AppState& state) {
                     state.scene.view.token_set = TokenSet{TokenSetAxis::queries, {0, 1}, SetReduce::sum};
                     NoteEdit(state, Panel::heads);  // the model view's strips come from the worker
                   }});
  plan_.push_back({"window model view key set", [](AppState& state) {
                     state.scene.view.token_set = TokenSet{TokenSetAxis::keys, {0, 1}, SetReduce::mean};
                     NoteEdit(state, Panel::heads);  // the model view's strips come from the worker
                   }});
  plan_.push_back({"window rollout", [](AppState& state) {
                     state.scene.view.token_set = TokenSet{};
                     NoteEdit(state, Panel::heads);
                     state.show_model_view = false;
                     state.show_rollout = true;
                   }});
  // The Rollout view with every query, then with a set of queries and of keys (token_sets.h).
  plan_.push_back({"window rollout every query", [](AppState& state) { SetRolloutEveryQuery(state, true); }});
  plan_.push_back({"window rollout query set", [](AppState& state) {
                     SetRolloutEveryQuery(state, false);
                     state.scene.view.token_set = TokenSet{TokenSetAxis::queries, {0, 1}, SetReduce::sum};
                   }});
  plan_.push_back({"window rollout key set", [](AppState& state) {
                     state.scene.view.token_set = TokenSet{TokenSetAxis::keys, {0, 1}, SetReduce::mean};
                   }});
  plan_.push_back({"window logit lens", [](AppState& state) {
                     state.scene.view.token_set = TokenSet{};
                     state.show_model_view = state.show_rollout = false;
                     state.show_lens = true;
                   }});
  // The Heads view's "Why does this head attend here?" panel (window_qk.cpp) on head 0's cell (1, 0), as a
  // right-click there opens it: with a checkpoint its bars, without one the sentence that asks for one.
  plan_.push_back({"panel why a head attends", [](AppState& state) {
                     state.show_lens = false;
                     SwitchView(state, View::heads);
                     state.qk.open = true;
                     state.qk.placed = false;
                     state.qk.head = 0;
                     state.qk.query = 1;
                     state.qk.key = 0;
                     state.qk.anchor = ImVec2(-1, -1);
                     NoteEdit(state, Panel::heads);
                   }});
  // A long input (window_heads_long.cpp): the exact cells around the middle of head 0, as the wheel over the
  // heads opens them; nothing else runs one.
  plan_.push_back({"window long input exact cells", [](AppState& state) {
                     state.qk.open = false;
                     if (const LongHeads* l = CurrentLongHeads(state)) {
                       state.heads.long_zoom = long_zoom_around(l->tokens, 0, l->tokens / 2, l->tokens / 2);
                       NoteEdit(state, Panel::heads);
                     }
                   }});
  // Compare A/B (the view's heads kept as A) with a set of queries, and the Convolution view with one: the
  // views that draw no set say so (token_sets.h).
  plan_.push_back({"window compare token set", [](AppState& state) {
                     state.qk.open = false;
                     state.heads.long_zoom.reset();
                     KeepAsA(state);
                     if (state.compare) state.compare->open = true;
                     state.scene.view.token_set = TokenSet{TokenSetAxis::queries, {0, 1}, SetReduce::sum};
                     NoteEdit(state, Panel::heads);
                   }});
  plan_.push_back({"token set conv view", [](AppState& state) {
                     if (state.compare) state.compare->open = false;
                     SwitchView(state, View::conv);
                   }});
  plan_.push_back({"lessons panel", [](AppState& state) {
                     state.scene.view.token_set = TokenSet{};
                     NoteEdit(state, Panel::heads);
                     SwitchView(state, View::heads);
                     state.qk.open = false;
                     state.heads.long_zoom.reset();
                     state.show_rollout = state.show_lens = false;
                     state.show_lessons = true;
                     state.show_input = state.show_model = false;
                   }});
  std::vector<Lesson> lessons;
  try {
    lessons = load_lessons();
  } catch (const InputError&) {
    // No lessons to sweep: the Lessons panel (above) shows why.
  }
  for (const Lesson& lesson : lessons)
    for (int step = 0; step < int(lesson.steps.size()); ++step) {
      const int number = lesson.number;
      plan_.push_back({"lesson " + std::to_string(number) + " step " + std::to_string(step + 1),
                       [number, step](AppState& state) { OpenLesson(state, number, step); }});
    }
  // Presentation mode: every step of every lesson, the view over the banner, as a class sees it.
  for (const Lesson& lesson : lessons)
    for (int step = 0; step < int(lesson.steps.size()); ++step) {
      const int number = lesson.number;
      plan_.push_back({"presentation lesson " + std::to_string(number) + " step " + std::to_string(step + 1),
                       [number, step](AppState& state) {
                         OpenLesson(state, number, step);
                         SetPresenting(state, true);
                       }});
    }
  plan_.push_back({"after presentation", [](AppState& state) { SetPresenting(state, false); }});
}

bool LayoutSweep::after_frame(AppState& state, bool settled) {
  if (done()) return true;
  // A screen has settled when its result is on screen and ImGui has had frames to size the windows
  // that just appeared (auto-fitting windows and tables take two).
  if (++frames_shown_ < 4 || !settled) return false;
  Screen screen;
  screen.name = plan_[next_].name;
  screen.view = state.layout.view;
  screen.error = state.error;
  screen.lesson = state.show_lessons && state.lessons.lesson >= 0 ? state.lessons.lessons[size_t(state.lessons.lesson)].number : 0;
  screen.lesson_step = state.lessons.step + 1;
  screen.layout = state.layout;
  screens_.push_back(std::move(screen));
  if (++next_ < plan_.size()) plan_[next_].show(state);
  frames_shown_ = 0;
  return done();
}

void WriteBenchJson(const std::filesystem::path& path, const BenchTimings& t) {
  const nlohmann::json j = {{"frame_ms", t.frame_ms},
                            {"latency_ms", t.latency_ms},
                            {"compute_ms", t.compute_ms},
                            {"texture_uploads", t.texture_uploads}};
  write_file_atomic(path, j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

void FrameBench::before_submit(AppState& state, bool settled) {
  if (!started_ || waiting_for_ != 0 || int(timings_.latency_ms.size()) >= changes_ || !settled || quiet_frames_ < 5) return;
  if (state.scene.input.source == InputSource::grid) {
    RelposSettings& r = state.scene.relpos;
    r.alpha = r.alpha == 1.0 ? 2.0 : 1.0;
    r.alphas.clear();
    NoteEdit(state, Panel::relpos);
  } else {
    state.scene.model.seed ^= 1;
    NoteEdit(state, Panel::model);
  }
  change_made_ = true;
}

void FrameBench::after_submit(const AppState& state) {
  if (!change_made_) return;
  change_made_ = false;
  waiting_for_ = state.submitted_generation;
  submitted_ = Clock::now();
}

bool FrameBench::after_frame(const AppState& state, double frame_ms, bool settled) {
  if (!started_) {
    started_ = settled;
    return false;
  }
  timings_.frame_ms.push_back(frame_ms);
  ++quiet_frames_;
  if (waiting_for_ != 0 && state.result_generation >= waiting_for_) {
    timings_.latency_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - submitted_).count());
    timings_.compute_ms.push_back(state.result_seconds * 1000.0);
    waiting_for_ = 0;
    quiet_frames_ = 0;
  }
  return int(timings_.latency_ms.size()) >= changes_ && quiet_frames_ >= 5;
}

}  // namespace attnscope::gui
