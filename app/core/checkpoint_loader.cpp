#include "core/checkpoint_loader.h"

#include <exception>
#include <new>

#include "attnscope/core/error.h"
#include "attnscope/pipeline/pipeline.h"

namespace attnscope::gui {

CheckpointLoader::CheckpointLoader(std::function<void()> on_result)
    : on_result_(std::move(on_result)), thread_([this](bool wait) { return work(wait); }) {}

CheckpointLoader::~CheckpointLoader() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
    pending_.reset();
    cancel_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

uint64_t CheckpointLoader::open(const std::filesystem::path& dir, std::optional<std::string> input) {
  uint64_t generation = 0;
  {
    std::lock_guard lock(mutex_);
    generation = next_generation_++;
    if (running_) cancel_ = true;  // an older folder is no longer wanted
    // Absolute (the recent list must work from another folder; a bare "config.json" has a folder), and
    // without a trailing separator (so that the folder has a name).
    std::error_code error;
    std::filesystem::path path = std::filesystem::absolute(dir, error);
    if (error) path = dir;
    path = path.lexically_normal();
    if (!path.has_filename() && path.has_parent_path()) path = path.parent_path();
    pending_ = Pending{generation, std::move(path), std::move(input)};
    result_.reset();
  }
  wake_.notify_all();
  return generation;
}

void CheckpointLoader::cancel() {
  {
    std::lock_guard lock(mutex_);
    pending_.reset();
    if (running_) cancel_ = true;
    ++next_generation_;  // a result of the cancelled open is dropped (see run)
    result_.reset();
  }
  wake_.notify_all();
}

std::optional<CheckpointResult> CheckpointLoader::take_result() {
  std::lock_guard lock(mutex_);
  std::optional<CheckpointResult> out = std::move(result_);
  result_.reset();
  return out;
}

bool CheckpointLoader::loading() const {
  std::lock_guard lock(mutex_);
  return running_ || pending_.has_value();
}

void CheckpointLoader::wait_until_idle() {
  if (!thread_.threaded()) {
    while (loading()) thread_.pump();
    return;
  }
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [this] { return !running_ && !pending_; });
}

// One opening (worker_thread.h: wait = false answers at once when nothing is pending).
Work CheckpointLoader::work(bool wait) {
  {
    uint64_t generation = 0;
    std::filesystem::path dir;
    std::optional<std::string> input;
    {
      std::unique_lock lock(mutex_);
      if (wait) wake_.wait(lock, [this] { return stop_ || pending_.has_value(); });
      if (stop_) return Work::stop;
      if (!pending_) return Work::none;
      generation = pending_->generation;
      dir = std::move(pending_->path);
      input = std::move(pending_->input);
      pending_.reset();
      running_ = true;
      cancel_ = false;
      progress_ = 0;
    }
    CheckpointResult result;
    result.generation = generation;
    result.dir = pipeline::source_dir(dir);  // named by an error too
    bool cancelled = false;
    const auto progress = [this](double fraction) { progress_ = fraction; };
    try {
      // The engine's opening (pipeline.h open_source): the model or the attentions, and the folder's tokenizer
      // loaded once, so the first forward pass does not wait for it.
      pipeline::Opened opened = pipeline::open_source(dir, progress, &cancel_, std::move(input));
      result.model = std::move(opened.model);
      result.attentions = std::move(opened.attentions);
      result.tokenizer = std::move(opened.tokenizer);
      result.tokenizer_error = std::move(opened.tokenizer_error);
      result.input = std::move(opened.input);
      result.input_problem = std::move(opened.input_problem);
      result.default_input = std::move(opened.default_input);
    } catch (const Cancelled&) {
      cancelled = true;
    } catch (const InputError& e) {
      result.error = e.what();
    } catch (const std::bad_alloc&) {
      result.error = result.dir.string() + ": not enough memory for this checkpoint's float32 weights (or these attentions)";
    } catch (const std::exception& e) {
      result.error = result.dir.string() + ": internal error: " + e.what();
    }
    bool delivered = false;
    {
      std::lock_guard lock(mutex_);
      // Only the newest open() is answered: a cancelled or superseded one leaves no result.
      if (!cancelled && generation + 1 == next_generation_ && !pending_) {
        result_ = std::move(result);
        delivered = true;
      }
      running_ = false;
    }
    idle_.notify_all();
    if (delivered && on_result_) on_result_();
  }
  return Work::did_some;
}

}  // namespace attnscope::gui
