// checkpoint_loader.h — opens a checkpoint folder, or attentions computed elsewhere, off the UI thread
// (the Checkpoint window).
//
//   UI thread ──open(path)──► worker thread: pipeline::open_source(path, progress, cancel)
//                               a checkpoint (model::open, and its tokenizer loaded once)
//                               or an attentions file (model::open_attentions)
//                             ──► take_result()
// A newer open() cancels an older one between tensors (between layers of an attentions file);
// progress() is the opening's fraction, readable from any thread each frame. The frame never waits: it
// polls take_result().
#pragma once
#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "attnscope/model/attention_file.h"
#include "attnscope/model/model.h"
#include "attnscope/text/tokenizer_interface.h"
#include "core/worker_thread.h"

namespace attnscope::gui {

struct CheckpointResult {
  uint64_t generation = 0;                   // the open() this answers
  // The checkpoint folder; for attentions the file when it was named directly, else its folder.
  std::filesystem::path dir;
  std::shared_ptr<const model::Model> model;  // a checkpoint; null on error or for an attentions file
  // Attentions computed elsewhere ([L, H, T, T] with tokens.json and config.json): null otherwise.
  std::shared_ptr<const model::AttentionStack> attentions;
  std::string error;                         // the engine's message (names the file and the problem)
  // Why the folder's tokenizer cannot be used ("" when it can): the window then takes ids only.
  std::string tokenizer_error;
  std::shared_ptr<const Tokenizer> tokenizer;  // the folder's tokenizer (null without one, or on error)
  // open(path, input): the input checked against the opened model (pipeline::Opened's).
  std::optional<std::string> input;
  std::string input_problem, default_input;
};

class CheckpointLoader {
 public:
  // on_result is called on the worker thread after each result (e.g. glfwPostEmptyEvent).
  explicit CheckpointLoader(std::function<void()> on_result = {});
  ~CheckpointLoader();
  CheckpointLoader(const CheckpointLoader&) = delete;
  CheckpointLoader& operator=(const CheckpointLoader&) = delete;

  // Starts opening `path`, a checkpoint folder or an attentions file or folder (cancelling an older open
  // still running); returns its generation. With `input` (the sentence on screen), the result says whether
  // it can go into the model, and what the model opens on instead.
  uint64_t open(const std::filesystem::path& path, std::optional<std::string> input = std::nullopt);
  // Cancels whatever is pending or loading; no result follows for it.
  void cancel();
  // The newest finished open not taken yet.
  std::optional<CheckpointResult> take_result();
  bool loading() const;
  double progress() const { return progress_.load(); }  // 0–1 of the current open
  // Blocks until nothing is pending or loading (tests, scripted runs).
  void wait_until_idle();

 private:
  Work work(bool wait);  // worker_thread.h
  std::function<void()> on_result_;
  mutable std::mutex mutex_;
  std::condition_variable wake_, idle_;
  struct Pending {
    uint64_t generation = 0;
    std::filesystem::path path;
    std::optional<std::string> input;
  };
  std::optional<Pending> pending_;
  bool running_ = false, stop_ = false;
  uint64_t next_generation_ = 1;
  std::optional<CheckpointResult> result_;
  std::atomic<bool> cancel_{false};
  std::atomic<double> progress_{0};
  WorkerThread thread_;  // last: its thread starts once everything above exists
};

}  // namespace attnscope::gui
