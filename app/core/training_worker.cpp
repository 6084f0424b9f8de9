// training_worker.cpp — the Training window's runs: the form → settings, one thread per run,
// snapshots coloured by the figure layer.
//
// Sections: the form · probe pictures · a run
#include "core/training_worker.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "attnscope/core/error.h"
#include "attnscope/figure/heatmap_layout.h"
#include "attnscope/io/file_io.h"

namespace attnscope::gui {

// ---- the form ----------------------------------------------------------------------------------

namespace {
constexpr int64_t max_text_file_bytes = int64_t(16) << 20;  // as `attnscope train --text-file`

int ParseInt(const std::string& key, const std::string& value) {
  char* end = nullptr;
  const long v = std::strtol(value.c_str(), &end, 10);
  require(!value.empty() && end && *end == 0 && v >= std::numeric_limits<int>::min() &&
              v <= std::numeric_limits<int>::max(),
          "training setting " + key + " takes a whole number, got '" + value + "'");
  return int(v);
}
}  // namespace

const std::vector<const char*>& training_task_names() {
  static const std::vector<const char*> names = {"induction", "copy", "reverse", "sort", "recall", "text"};
  return names;
}

train::TrainSettings training_settings(const TrainingForm& form) {
  using namespace train;
  TrainSettings s = default_train_settings();
  require(form.task >= 0 && form.task < int(training_task_names().size()), "unknown task");
  s.task.kind = parse_task(training_task_names()[size_t(form.task)]);
  s.task.level = form.words ? TextLevel::words : TextLevel::chars;
  s.task.seq_len = form.seq_len;
  if (s.task.kind == TaskKind::text) {
    require(!form.text_path.empty(), "the text task needs a text file: type the path of a UTF-8 text (Chinese works)");
    s.task.text = read_file(form.text_path, max_text_file_bytes);
    s.task.text_name = "'" + form.text_path + "'";
  }
  s.model.layers = form.layers, s.model.d_model = form.d_model;
  s.model.heads = form.heads, s.model.groups = form.groups;
  s.model.mlp = form.mlp;
  s.model.attention = form.attention;
  if (form.softmax_every > 0) {
    require(train::ModelConfig::softmax_free_kind(form.attention),
            std::string("a hybrid puts a kind without a softmax between its softmax layers: choose linear, retention, "
                        "mamba2, deltanet or gated-deltanet as the attention, got ") +
                train::attention_kind_word(form.attention));
    require(form.softmax_every >= 2 && form.softmax_every <= train::max_layers,
            "softmax every k-th layer needs k from 2 to " + std::to_string(train::max_layers) + ", got " +
                std::to_string(form.softmax_every));
    require(form.layers >= form.softmax_every,
            "softmax every " + std::to_string(form.softmax_every) + " layers needs at least " +
                std::to_string(form.softmax_every) + " layers, got " + std::to_string(form.layers));
    s.model.layer_kinds = train::every_kth_softmax(form.attention, form.softmax_every, form.layers);
  }
  // every head its own keys: from the one latent (MLA), or its own state (without a softmax; a hybrid too)
  if (s.model.mla() || s.model.softmax_free() || s.model.hybrid()) s.model.groups = s.model.heads;
  s.model.kv_lora_rank = form.kv_rank, s.model.rope_head_dim = form.rope_dim;
  s.model.window = form.window;
  s.model.local_layers = form.window > 0 ? train::parse_window_pattern(form.window_pattern, form.layers) : std::vector<bool>{};
  s.batch = form.batch;
  s.steps = form.steps;
  s.optimizer.lr = form.lr;
  s.optimizer.warmup = form.warmup;
  require(form.seed >= 0, "seed must be 0 or more, got " + std::to_string(form.seed));
  s.seed = uint64_t(form.seed);
  require(form.threads >= 0 && form.threads <= 64, "threads must be 0 (all cores) to 64");
  s.threads = form.threads;
  require(form.snapshot_every >= 1 && form.snapshot_every <= 100000,
          "steps between refreshes must be 1 to 100000, got " + std::to_string(form.snapshot_every));
  s.snapshot_every = form.snapshot_every;
  validate_train_settings(s);
  return s;
}

TrainingForm training_form(const train::TrainSettings& s, const TrainingForm& base) {
  TrainingForm f = base;
  const auto& names = training_task_names();
  for (size_t i = 0; i < names.size(); ++i)
    if (train::task_name(s.task.kind) == std::string(names[i])) f.task = int(i);
  f.words = s.task.level == train::TextLevel::words;
  f.layers = s.model.layers, f.d_model = s.model.d_model, f.heads = s.model.heads, f.groups = s.model.groups;
  f.mlp = s.model.mlp;
  f.attention = s.model.attention;
  f.softmax_every = 0;
  for (int k = 2; k <= s.model.layers && s.model.hybrid(); ++k)
    if (train::every_kth_softmax(s.model.attention, k, s.model.layers) == s.model.layer_kinds) f.softmax_every = k;
  if (s.model.hybrid() && f.softmax_every == 0)  // a list the pattern choice cannot say: its first kind, every 2nd
    for (const train::AttentionKind k : s.model.layer_kinds)
      if (train::ModelConfig::softmax_free_kind(k)) f.attention = k, f.softmax_every = 2;
  for (int k = 2; k <= s.model.layers && s.model.hybrid(); ++k)
    if (train::every_kth_softmax(f.attention, k, s.model.layers) == s.model.layer_kinds) f.softmax_every = k;
  f.kv_rank = s.model.kv_lora_rank, f.rope_dim = s.model.rope_head_dim;
  f.window = s.model.window;
  f.window_pattern = train::window_pattern_text(s.model.local_layers, s.model.layers);
  f.seq_len = s.task.seq_len, f.batch = s.batch, f.steps = s.steps;
  f.lr = s.optimizer.lr;
  f.warmup = s.optimizer.warmup;
  f.seed = int(s.seed);
  return f;
}

bool same_training(const TrainingForm& a, const TrainingForm& b) {
  return a.task == b.task && a.text_path == b.text_path && a.words == b.words && a.layers == b.layers &&
         a.d_model == b.d_model && a.heads == b.heads && a.groups == b.groups && a.mlp == b.mlp &&
         a.attention == b.attention && a.kv_rank == b.kv_rank && a.rope_dim == b.rope_dim && a.window == b.window &&
         a.window_pattern == b.window_pattern && a.softmax_every == b.softmax_every &&
         a.seq_len == b.seq_len && a.batch == b.batch && a.steps == b.steps && a.lr == b.lr && a.warmup == b.warmup && a.seed == b.seed &&
         a.threads == b.threads && a.snapshot_every == b.snapshot_every;
}

StepPacer::Clock::time_point StepPacer::due() const {
  if (rate_ <= 0 || !has_last_) return Clock::time_point::min();
  return last_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / rate_));
}

void apply_training_setting(TrainingForm& form, const std::string& key_value) {
  const size_t eq = key_value.find('=');
  require(eq != std::string::npos, "a training setting is key=value, got '" + key_value + "'");
  const std::string key = key_value.substr(0, eq), value = key_value.substr(eq + 1);
  if (key == "task") {
    const auto& names = training_task_names();
    for (size_t i = 0; i < names.size(); ++i)
      if (value == names[i]) {
        form.task = int(i);
        return;
      }
    train::parse_task(value);  // throws, listing the valid names
  } else if (key == "text") {
    form.text_path = value;
  } else if (key == "level") {
    form.words = train::parse_text_level(value) == train::TextLevel::words;
  } else if (key == "attention") {
    form.attention = train::parse_attention_kind(value);  // throws, naming every kind
  } else if (key == "window_pattern") {
    // local/global: the settings themselves are separated by commas
    std::string pattern = value;
    std::replace(pattern.begin(), pattern.end(), '/', ',');
    train::parse_window_pattern(pattern, 1);  // throws, saying what is valid
    form.window_pattern = pattern;
  } else if (key == "lr") {
    char* end = nullptr;
    const float v = std::strtof(value.c_str(), &end);
    require(!value.empty() && end && *end == 0, "training setting lr takes a number, got '" + value + "'");
    form.lr = v;  // NaN and ≤ 0 pass here: training_settings refuses them with the engine's message
  } else {
    int* field = key == "layers"           ? &form.layers
                 : key == "d_model"        ? &form.d_model
                 : key == "heads"          ? &form.heads
                 : key == "groups"         ? &form.groups
                 : key == "seq_len"        ? &form.seq_len
                 : key == "batch"          ? &form.batch
                 : key == "steps"          ? &form.steps
                 : key == "warmup"         ? &form.warmup
                 : key == "seed"           ? &form.seed
                 : key == "threads"        ? &form.threads
                 : key == "snapshot_every" ? &form.snapshot_every
                 : key == "speed"          ? &form.speed
                 : key == "kv_rank"        ? &form.kv_rank
                 : key == "rope_dim"       ? &form.rope_dim
                 : key == "window"         ? &form.window
                 : key == "softmax_every"  ? &form.softmax_every
                                           : nullptr;
    if (key == "mlp") {
      form.mlp = ParseInt(key, value) != 0;
      return;
    }
    require(field != nullptr, "unknown training setting '" + key +
                                  "': use task, text, level, layers, d_model, heads, groups, mlp, attention, kv_rank, "
                                  "rope_dim, window, window_pattern, softmax_every, seq_len, batch, steps, lr, warmup, "
                                  "seed, threads, snapshot_every or speed");
    *field = ParseInt(key, value);
    require(key != "speed" || (form.speed >= 0 && form.speed <= max_training_speed),
            "training setting speed is steps per second, 0 (no limit) to " + std::to_string(max_training_speed) +
                ", got " + value);
  }
}

// ---- probe pictures ----------------------------------------------------------------------------

bool probe_layer_signed(const train::TrainSnapshot& snapshot, int layer) {
  if (snapshot.layer_kinds.empty())
    return train::ModelConfig::softmax_free_kind(train::parse_attention_kind(snapshot.attention));
  const std::vector<train::AttentionKind> kinds = train::parse_layer_kinds(snapshot.layer_kinds, snapshot.layers);
  return layer >= 0 && layer < int(kinds.size()) && train::ModelConfig::softmax_free_kind(kinds[size_t(layer)]);
}

bool probe_signed(const train::TrainSnapshot& snapshot) {
  for (int l = 0; l < std::max(snapshot.layers, 1); ++l)
    if (probe_layer_signed(snapshot, l)) return true;
  return false;
}

ValueRange probe_range(const train::TrainSnapshot& snapshot) {
  if (!probe_signed(snapshot)) return ValueRange{0.0f, 1.0f};
  float m = 0;  // symmetric about 0, as the Heads view draws signed matrices
  for (size_t l = 0; l < snapshot.probe_probs.size(); ++l) {
    if (!probe_layer_signed(snapshot, int(l))) continue;  // a hybrid's softmax layers keep 0 … 1
    for (const Mat& probs : snapshot.probe_probs[l])
      if (probs.size() && probs.allFinite()) m = std::max(m, probs.cwiseAbs().maxCoeff());
  }
  m = m > 0 ? m : 1.0f;
  return ValueRange{-m, m};
}

std::vector<std::vector<Picture>> probe_pictures(const train::TrainSnapshot& snapshot) {
  // One figure panel per head with the Heads view's conventions: probabilities on 0 … 1 through
  // viridis, the cells a causal query cannot see (key > query, or outside its layer's window) masked;
  // without a softmax each head's signed M on the diverging colormap, white at 0, symmetric about it.
  // A hybrid's layers each as their kind: its softmax layers' probabilities, the others' signed M.
  std::vector<std::vector<Picture>> out(snapshot.probe_probs.size());
  const ValueRange signed_range = probe_range(snapshot);
  for (size_t l = 0; l < snapshot.probe_probs.size(); ++l) {
    FigureSpec figure;
    if (probe_layer_signed(snapshot, int(l)))
      figure.colorbars.push_back({signed_range, Colormap::diverging, "M", true});
    else
      figure.colorbars.push_back({ValueRange{0.0f, 1.0f}, Colormap::viridis, "probability", true});
    figure.panels.resize(1);
    PanelSpec& panel = figure.panels[0];
    const int window = l < snapshot.layer_windows.size() ? snapshot.layer_windows[l] : 0;
    for (const Mat& probs : snapshot.probe_probs[l]) {  // probs [T, T]
      const int T = int(probs.rows());
      panel.rows = panel.cols = T;
      panel.values.assign(size_t(T) * size_t(T), std::numeric_limits<float>::quiet_NaN());
      for (int q = 0; q < T; ++q)
        for (int k = window > 0 ? std::max(0, q - window + 1) : 0; k <= q; ++k)
          panel.values[size_t(q) * size_t(T) + size_t(k)] = probs(q, k);
      Picture p;
      p.width = p.height = T;
      p.range = figure.colorbars[0].range;
      p.pixels = panel_colors(figure, 0);
      out[l].push_back(std::move(p));
    }
  }
  return out;
}

// ---- a run -------------------------------------------------------------------------------------

TrainingRun::TrainingRun(train::TrainSettings settings, std::string label, std::function<void()> on_update)
    : settings_(settings), label_(std::move(label)), on_update_(std::move(on_update)), trainer_(settings),
      in_pieces_(!threads_available()) {
  publish();  // step 0: the untrained heads
  thread_.emplace([this](bool wait) { return work(wait); });
}

TrainingRun::~TrainingRun() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    cancel_ = true;
  }
  wake_.notify_all();
  thread_.reset();  // joins the thread
}

void TrainingRun::start() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (finished_ || failed_) return;
    running_ = true;
  }
  wake_.notify_all();
}

void TrainingRun::pause() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    running_ = false;
    steps_asked_ = 0;
    pacer_.forget();
  }
  wake_.notify_all();  // a worker waiting for its next step's time gives up waiting
}

void TrainingRun::step_once() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (finished_ || failed_) return;
    running_ = false;
    ++steps_asked_;
  }
  wake_.notify_all();
}

void TrainingRun::set_speed(int steps_per_second) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (pacer_.rate() == steps_per_second) return;
    pacer_.set_rate(steps_per_second);
    ++speed_changes_;
  }
  wake_.notify_all();
}

int TrainingRun::speed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return pacer_.rate();
}

void TrainingRun::save(const std::string& dir) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    save_dir_ = dir;
    save_pending_ = true;
    save_result_.clear();
  }
  wake_.notify_all();
}

RunState TrainingRun::state() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (failed_) return RunState::failed;
  if (finished_) return RunState::finished;
  return running_ ? RunState::running : RunState::paused;
}

bool TrainingRun::busy() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return working_ || save_pending_ || (!finished_ && !failed_ && (running_ || steps_asked_ > 0));
}

std::string TrainingRun::error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

std::string TrainingRun::save_result() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return save_result_;
}

bool TrainingRun::save_ok() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return save_ok_;
}

std::shared_ptr<const TrainingView> TrainingRun::view() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return view_;
}

void TrainingRun::publish() {
  auto view = std::make_shared<TrainingView>();
  view->snapshot = trainer_.snapshot();
  view->heads = probe_pictures(view->snapshot);
  view->range = probe_range(view->snapshot);
  std::lock_guard<std::mutex> lock(mutex_);
  view->generation = ++generation_;
  view_ = std::move(view);
}

// One step or one save (worker_thread.h: wait = false answers at once when there is nothing to do now,
// e.g. the next step's time has not come).
// Pumped (the browser's frame, worker_thread.h), a call does one piece of a step (Trainer::advance), so
// that a frame's budget is kept even when a whole step is longer; the step goes on at the next call,
// before anything else (a save or a pause waits for it, as they wait for step() on a thread).
Work TrainingRun::work(bool wait) {
  const bool continuing = trainer_.mid_step();
  if (continuing) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (cancel_) return Work::stop;
  }
  {
    std::string save_dir;
    bool saving = false;
    if (!continuing) {
      std::unique_lock<std::mutex> lock(mutex_);
      const auto asked = [&] {
        return cancel_ || save_pending_ || (!finished_ && !failed_ && (running_ || steps_asked_ > 0));
      };
      if (wait) wake_.wait(lock, asked);
      if (cancel_) return Work::stop;
      if (!asked()) return Work::none;
      if (save_pending_) {
        save_dir = save_dir_, saving = true;
      } else if (steps_asked_ > 0) {
        --steps_asked_;
      } else {  // running: at the speed asked for
        const StepPacer::Clock::time_point due = pacer_.due();
        if (StepPacer::Clock::now() < due) {
          if (!wait) return Work::none;
          const uint64_t changes = speed_changes_;
          wake_.wait_until(lock, due, [&] {
            return cancel_ || save_pending_ || steps_asked_ > 0 || !running_ || speed_changes_ != changes;
          });
          return Work::none;  // and decide again: the time may have come, or something else happened
        }
        pacer_.started(StepPacer::Clock::now());
      }
      working_ = true;  // busy() until this step's snapshot is out
    }
    if (saving) {
      // Between steps, so the checkpoint is one consistent set of weights.
      std::string result;
      bool ok = false;
      try {
        if (save_dir.empty()) throw InputError("no folder to save to: type the folder's path");
        trainer_.save(save_dir);
        result = save_dir, ok = true;
      } catch (const InputError& e) {
        result = e.what();
      }
      {
        std::lock_guard<std::mutex> lock(mutex_);
        save_result_ = result, save_ok_ = ok, save_pending_ = false, working_ = false;
      }
      if (on_update_) on_update_();
      return Work::did_some;
    }
    std::string failure;
    try {
      if (!in_pieces_) {
        trainer_.step();
      } else if (!trainer_.advance()) {
        return Work::did_some;  // the step goes on at the next call (working_ stays set)
      }
    } catch (const InputError& e) {  // diverged: the message says to lower the learning rate
      failure = e.what();
    }
    const bool done = trainer_.finished();
    bool stepped_alone = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stepped_alone = !running_;
    }
    // Snapshots every few steps, after a single step (the user wants to see it), at the end and on
    // failure — published before the state changes, so whoever sees the run idle sees its last view.
    const bool show = !failure.empty() || stepped_alone || done || trainer_.steps_done() % settings_.snapshot_every == 0;
    if (show) publish();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!failure.empty()) error_ = failure, failed_ = true, running_ = false, steps_asked_ = 0;
      if (done) finished_ = true, running_ = false;
      working_ = false;
    }
    if (show && on_update_) on_update_();  // the window redraws when there is something new to draw
  }
  return Work::did_some;
}

}  // namespace attnscope::gui
