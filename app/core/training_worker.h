// training_worker.h — training runs on worker threads for the Training window (engine train/trainer.h).
//
//   UI thread                               worker thread (one per run)
//   TrainingForm ──training_settings()──►   Trainer (built on the UI thread: bad settings throw there,
//                                           before any thread starts)
//   start() / pause() / step_once()  ──►    steps while running (or one step when asked), and every
//                                           `snapshot_every` steps publishes a TrainingView:
//   view() ◄── copy of the newest ─────     the snapshot plus the probe heads coloured by the figure
//                                           layer (the Heads view's colours)
//   save(dir) ──►                           writes the checkpoint between steps; save_result() says how
//   ~TrainingRun / stop()                   cancels between steps and joins
// "Compare MHA / GQA / MQA / MLA" is the runs of attention_variants(settings) (and a windowed GQA run
// when a window is set): each on its own thread with one OpenMP thread, so they share the cores evenly
// and each stays deterministic.
// No ImGui, GLFW or GL here: the tests drive runs directly.
//
// Sections: the form · a run
#pragma once
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <optional>
#include <vector>

#include "attnscope/train/trainer.h"
#include "core/worker_thread.h"
#include "core/pictures.h"

namespace attnscope::gui {

// ---- the form ----------------------------------------------------------------------------------

// What the Training window's fields hold, as typed; training_settings() checks and converts.
struct TrainingForm {
  int task = 0;             // index into training_task_names()
  std::string text_path;    // the text task's UTF-8 file
  bool words = false;       // text task: words instead of characters
  int layers = 2, d_model = 64, heads = 4, groups = 2;
  bool mlp = false;
  // What Start trains: grouped (G as set), MLA or a kind without a softmax (G then unused: G = H)
  train::AttentionKind attention = train::AttentionKind::grouped;
  int kv_rank = 16;         // MLA: the latent's width r_kv (the comparison's MLA run uses it too)
  int rope_dim = 8;         // MLA: the decoupled rotary part d_rope
  int window = 0;           // sliding window W (0: none); the comparison adds a windowed GQA run when set
  std::string window_pattern = "all";  // which layers use it: all, or local/global repeated (local,global)
  // A hybrid: a grouped softmax layer every softmax_every-th layer, `attention` (a kind without a softmax) in the
  // others (train::every_kth_softmax; Qwen3-Next has one every 4th). 0: every layer is `attention`.
  int softmax_every = 0;
  int seq_len = 64;
  int batch = 16;
  // 1500 steps at lr 5e-3 after 300 warm-up steps: the settings under which Compare MHA / GQA / MQA
  // sees all three runs learn for every seed measured (README "The Training window"; at train's 1000
  // steps, 3e-3 and 50 warm-up steps MHA can stay on its plateau, and with 50 warm-up steps at 5e-3
  // seed 2's MQA and seed 4's MHA do).
  int steps = 1500;
  float lr = 5e-3f;
  int warmup = 300;         // steps of linear learning-rate warm-up
  int seed = 1;
  int threads = 0;          // OpenMP threads of a single run (0: all cores)
  int snapshot_every = 10;  // steps between refreshes of the curve, the heads and the scores
  // Steps per second a running run may take at most, 0 = as fast as it can: a class watches the phase
  // change in slow motion. Not a training setting (the curve is the same at any speed), so changing it
  // never resets a run, and same_training() ignores it.
  int speed = 0;
};

// "induction", "copy", "reverse", "sort", "recall", "text" — the order of TrainingForm::task (text last).
const std::vector<const char*>& training_task_names();

// The engine's settings for the form: reads the text file (io/file_io.h) for the text task and
// validates everything (InputError saying which setting and what is valid).
train::TrainSettings training_settings(const TrainingForm& form);

// The form that gives these settings (a lesson step's); threads and the refresh interval are kept from `base`.
TrainingForm training_form(const train::TrainSettings& settings, const TrainingForm& base);
bool same_training(const TrainingForm& a, const TrainingForm& b);  // every field equal but the speed

constexpr int max_training_speed = 200;  // steps per second of the speed control (0: no limit)

// Paces a running run's steps: with a rate of r steps per second, a step starts no sooner than 1/r
// after the previous one started (the step's own time counts: a step slower than 1/r is not delayed).
// Plain values and a given clock: the tests drive it with made-up times.
class StepPacer {
 public:
  using Clock = std::chrono::steady_clock;
  void set_rate(int steps_per_second) { rate_ = std::max(0, steps_per_second); }
  int rate() const { return rate_; }
  // When the next step may start (now or earlier: at once).
  Clock::time_point due() const;
  void started(Clock::time_point at) { last_ = at, has_last_ = true; }
  void forget() { has_last_ = false; }  // after a pause: the first step of a new Start goes at once

 private:
  int rate_ = 0;
  Clock::time_point last_{};
  bool has_last_ = false;
};

// Sets one field from "key=value" (scripted runs: --train-settings). Keys: task, text, level
// (chars|words), layers, d_model, heads, groups, mlp (0|1), seq_len, batch, steps, lr, warmup, seed, threads,
// snapshot_every, speed. InputError for an unknown key or a value that is not a number.
void apply_training_setting(TrainingForm& form, const std::string& key_value);

// ---- a run -------------------------------------------------------------------------------------

// What the window draws of a run: the newest snapshot and its probe heads as pictures.
struct TrainingView {
  train::TrainSnapshot snapshot;
  std::vector<std::vector<Picture>> heads;  // [L][H] probe heatmaps, T_probe × T_probe, masked above the diagonal
  ValueRange range;                         // the shared colour range (probabilities: 0 … 1)
  uint64_t generation = 0;                  // grows with every published snapshot
};

enum class RunState { paused, running, finished, failed };

class TrainingRun {
 public:
  // Builds the Trainer (throws InputError for bad settings) and starts its thread, paused.
  // `label` names the run ("MHA (G = 4)"); on_update is called on the worker thread after each
  // published snapshot and save (e.g. glfwPostEmptyEvent).
  TrainingRun(train::TrainSettings settings, std::string label, std::function<void()> on_update);
  ~TrainingRun();  // cancels between steps and joins
  TrainingRun(const TrainingRun&) = delete;
  TrainingRun& operator=(const TrainingRun&) = delete;

  void start();      // train until finished (or paused)
  void pause();      // stop after the current step
  void step_once();  // one more step, then paused
  // At most this many steps per second while running (0: no limit); takes effect at the next step,
  // also for a run waiting for its turn. Single steps (step_once) are never held back.
  void set_speed(int steps_per_second);
  int speed() const;
  // Writes the checkpoint folder between steps (paused or not); save_result() then says what happened.
  void save(const std::string& dir);

  RunState state() const;
  bool busy() const;  // running, or a step or a save asked for and not yet done
  std::string error() const;  // why the run failed (diverged)
  // "" while no save finished; else the folder written or why not. save_ok() says which.
  std::string save_result() const;
  bool save_ok() const;
  std::shared_ptr<const TrainingView> view() const;  // the newest (never null after construction)
  const std::string& label() const { return label_; }
  const train::TrainSettings& settings() const { return settings_; }

 private:
  Work work(bool wait);  // worker_thread.h
  void publish();  // worker thread: snapshot → view

  const train::TrainSettings settings_;
  const std::string label_;
  std::function<void()> on_update_;
  train::Trainer trainer_;  // the worker's own once the thread runs
  const bool in_pieces_;    // pumped: a step is done a piece a call (Trainer::advance)
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool running_ = false, cancel_ = false;
  int steps_asked_ = 0;
  std::string save_dir_;  // a save asked for
  bool save_pending_ = false;
  std::string save_result_, error_;
  bool save_ok_ = false, failed_ = false, finished_ = false;
  bool working_ = false;  // the worker is in a step or a save
  StepPacer pacer_;
  uint64_t speed_changes_ = 0;  // wakes a worker waiting for its next step's time
  std::shared_ptr<const TrainingView> view_;
  uint64_t generation_ = 0;
  std::optional<WorkerThread> thread_;  // made once step 0 is published
};

// The probe heads of a snapshot as pictures: every head coloured by the figure layer (panel_colors,
// viridis, 0 … 1, masked cells above the diagonal), as the Heads view colours a causal head.
std::vector<std::vector<Picture>> probe_pictures(const train::TrainSnapshot& snapshot);
// True for a run with a layer without a softmax: its probe matrices are signed (drawn on the diverging colormap).
bool probe_signed(const train::TrainSnapshot& snapshot);
// True when layer l of the run has no softmax (a hybrid's layers differ: its softmax layers draw probabilities).
bool probe_layer_signed(const train::TrainSnapshot& snapshot, int layer);
// The colour range of the probe pictures: 0 … 1, or ±max|M| over the layers without a softmax.
ValueRange probe_range(const train::TrainSnapshot& snapshot);

}  // namespace attnscope::gui
