// test_worker_thread.cpp — the thread seam (app/core/worker_thread.h): a worker's work() on a thread of
// its own, or pumped by the frame (the browser build); and the workers themselves pumped: the cases named
// "pumped: …" also run in the ctest entry tests_pumped, with ATTNSCOPE_THREADS=0, where every worker of
// the window is pumped as in the browser.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "attnscope/core/error.h"
#include "core/checkpoint_loader.h"
#include "core/compute_worker.h"
#include "core/training_worker.h"
#include "core/worker_thread.h"
#include "model/checkpoint_fixtures.h"

using namespace attnscope;
using namespace attnscope::gui;
using namespace attnscope::test;
using namespace std::chrono_literals;

namespace {

// Pumps until `done` holds, or fails after 60 s.
template <class Done>
void pump_until(Done done) {
  const auto until = std::chrono::steady_clock::now() + 60s;
  while (!done()) {
    REQUIRE(std::chrono::steady_clock::now() < until);
    pump_workers(25ms);
    std::this_thread::sleep_for(1ms);
  }
}

}  // namespace

TEST_CASE("worker thread: pumped, work runs only in pump_workers, on the calling thread, until it has none") {
  int calls = 0, left = 5;
  std::thread::id where;
  {
    WorkerThread w(
        [&](bool wait) {
          CHECK_FALSE(wait);
          ++calls;
          where = std::this_thread::get_id();
          return left-- > 0 ? Work::did_some : Work::none;
        },
        false);
    CHECK_FALSE(w.threaded());
    CHECK(calls == 0);  // nothing before the frame pumps
    CHECK(pump_workers(1000ms));
    CHECK(calls == 6);  // five pieces, then the answer that there is none
    CHECK(where == std::this_thread::get_id());
    CHECK_FALSE(pump_workers(1000ms));
  }
  calls = 0;
  CHECK_FALSE(pump_workers(10ms));  // a destroyed worker is never pumped again
  CHECK(calls == 0);
}

TEST_CASE("worker thread: pump_workers stops at its budget while a worker always has work") {
  WorkerThread w(
      [](bool) {
        std::this_thread::sleep_for(2ms);
        return Work::did_some;
      },
      false);
  const auto start = std::chrono::steady_clock::now();
  CHECK(pump_workers(20ms));
  const auto took = std::chrono::steady_clock::now() - start;
  CHECK(took >= 10ms);         // it kept on while pieces fitted (2 ms each, 20 ms to fill)
  CHECK(took < 20ms + 500ms);  // one piece past the budget at most (a loaded machine's slack)
}

TEST_CASE("worker thread: pump_workers starts no round that would end past its budget") {
  // Pieces of 15 ms in a 20 ms budget: the first runs (work goes on), a second would end at 30 ms.
  int calls = 0;
  WorkerThread w(
      [&](bool) {
        ++calls;
        std::this_thread::sleep_for(15ms);
        return Work::did_some;
      },
      false);
  CHECK(pump_workers(20ms));
  CHECK(calls == 1);
}

TEST_CASE("worker thread: pump_workers goes on with rounds that fit its budget") {
  int calls = 0;
  WorkerThread w(
      [&](bool) {
        ++calls;
        std::this_thread::sleep_for(1ms);
        return Work::did_some;
      },
      false);
  CHECK(pump_workers(100ms));
  CHECK(calls > 1);
}

TEST_CASE("worker thread: threaded, work runs on its own thread with wait = true until it stops") {
  std::atomic<int> calls{0};
  std::atomic<bool> stop{false};
  std::thread::id where;
  std::mutex m;
  {
    WorkerThread w(
        [&](bool wait) {
          CHECK(wait);
          {
            std::lock_guard lock(m);
            where = std::this_thread::get_id();
          }
          ++calls;
          if (stop) return Work::stop;
          std::this_thread::sleep_for(1ms);
          return Work::did_some;
        },
        true);
    CHECK(w.threaded());
    CHECK_FALSE(pump_workers(10ms));  // a threaded worker is not pumped
    while (calls < 3) std::this_thread::sleep_for(1ms);
    stop = true;
  }  // joins
  std::lock_guard lock(m);
  CHECK(where != std::this_thread::get_id());
}

TEST_CASE("worker thread: run_off_frame's future gives the job's value or its exception") {
  CHECK(run_off_frame([] { return 6 * 7; }).get() == 42);
  auto failed = run_off_frame([]() -> int { throw InputError("no"); });
  CHECK_THROWS_AS(failed.get(), InputError);
}

TEST_CASE("pumped: the compute worker's heatmaps and head statistics come through the frame's pumping") {
  ComputeWorker worker([] {}, 3600s);
  Scene scene;
  scene.model.heads = 4;
  scene.input.text = "The cat sat on the mat.";
  const uint64_t generation = worker.submit(scene);
  pump_until([&] { return !worker.busy(); });
  std::optional<ComputeResult> first = worker.take_result();
  REQUIRE(first);
  CHECK(first->generation == generation);
  REQUIRE(first->analysis);
  CHECK(first->pictures->heads.size() == 4);
  worker.presented(generation);  // the statistics follow the heatmaps on screen
  pump_until([&] { return worker.idle(); });
  std::optional<ComputeResult> second = worker.take_result();
  REQUIRE(second);
  CHECK(second->generation == generation);
  CHECK(second->stats);
}

TEST_CASE("pumped: the checkpoint loader opens a fixture through the frame's pumping") {
  CheckpointLoader loader([] {});
  loader.open(model_fixture("llama_gqa_bf16_sharded"));
  pump_until([&] { return !loader.loading(); });
  std::optional<CheckpointResult> r = loader.take_result();
  REQUIRE(r);
  CHECK(r->error == "");
  CHECK(r->model);
}

TEST_CASE("pumped: a step is cut into pieces across pumps, and the loss curve is the thread's bit for bit") {
  TrainingForm f;
  f.d_model = 32, f.seq_len = 16, f.batch = 4, f.steps = 6, f.threads = 1, f.snapshot_every = 1, f.layers = 2;
  const train::TrainSettings settings = training_settings(f);
  train::Trainer reference(settings);  // step() on this thread: what a run on its own thread does
  for (int i = 0; i < f.steps; ++i) reference.step();
  TrainingRun run(settings, "run", [] {});
  run.start();
  if (threads_available()) {  // the desktop: the run has its thread, steps whole
    const auto until = std::chrono::steady_clock::now() + 60s;
    while (run.state() != RunState::finished) {
      REQUIRE(std::chrono::steady_clock::now() < until);
      std::this_thread::sleep_for(1ms);
    }
  } else {
    // A zero budget is one pass a pump: one piece, so a step takes exactly pieces_per_step() pumps,
    // and the window sees no step finish before its last piece.
    const int per_step = train::Trainer(settings).pieces_per_step();
    CHECK(per_step == 2 * f.layers + 2 + 1);
    for (int step = 1; step <= f.steps; ++step) {
      for (int piece = 1; piece < per_step; ++piece) {
        CHECK(pump_workers(0ms));
        CHECK(run.view()->snapshot.step == step - 1);
        CHECK(run.busy());
      }
      CHECK(pump_workers(0ms));
      CHECK(run.view()->snapshot.step == step);
    }
    CHECK(run.state() == RunState::finished);
  }
  const std::vector<float>& losses = run.view()->snapshot.losses;
  REQUIRE(losses.size() == reference.losses().size());
  CHECK(std::memcmp(losses.data(), reference.losses().data(), losses.size() * sizeof(float)) == 0);
}

TEST_CASE("pumped: a training run steps through the frame's pumping, each pump within its budget") {
  TrainingForm f;
  f.d_model = 32, f.seq_len = 16, f.batch = 4, f.steps = 30, f.threads = 1, f.snapshot_every = 10;
  TrainingRun run(training_settings(f), "run", [] {});
  run.start();
  pump_until([&] { return run.state() == RunState::finished; });
  CHECK(run.view()->snapshot.step == 30);
}
