// bench_train.cpp — training speed against PyTorch eager on the same shapes, and time to induction heads.
//
//   bench_train [--no-torch] [--threads N]
// 1. Steps per second of attnscope's Trainer for the default induction model (L = 2, d_model 64, H 4,
//    G 2, attention-only, batch 16, T = 64) and an L = 4, d_model 256, H 8, G 2 SwiGLU model (batch 8,
//    T = 64); then bench/compare_train_torch.py on the same shapes, batch and threads, run as a
//    subprocess in the same run — once as is, once with OMP_WAIT_POLICY=PASSIVE (PyTorch's OpenMP
//    threads spin between ops by default, which costs it dearly on a loaded machine; the better of
//    the two is the figure compared against).
// 2. Seconds (and steps) until some head of layer 2 of the default run scores above 0.5 (snapshots
//    every 10 steps, counted in the time).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include "attnscope/train/trainer.h"

using namespace attnscope::train;

namespace {

struct Shape {
  const char* name;
  int layers, d_model, heads, groups;
  bool mlp;
  int batch, seq_len, steps;
};

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

TrainSettings settings_for(const Shape& s, int threads) {
  TrainSettings t = default_train_settings();
  t.model.layers = s.layers, t.model.d_model = s.d_model, t.model.heads = s.heads, t.model.groups = s.groups;
  t.model.mlp = s.mlp;
  t.batch = s.batch, t.task.seq_len = s.seq_len, t.threads = threads;
  t.steps = 100000;  // the schedule only; the bench stops after its own count
  return t;
}

double attnscope_steps_per_second(const Shape& s, int threads) {
  Trainer trainer(settings_for(s, threads));
  for (int i = 0; i < 3; ++i) trainer.step();  // warm-up: first-touch of every buffer
  const double t0 = now_seconds();
  for (int i = 0; i < s.steps; ++i) trainer.step();
  return s.steps / (now_seconds() - t0);
}

// steps/s from compare_train_torch.py, or a negative number when it could not run.
double torch_steps_per_second(const Shape& s, int threads, bool passive) {
  char cmd[1024];
  std::snprintf(cmd, sizeof cmd,
                "%s/usr/bin/python3 %s/bench/compare_train_torch.py --layers %d --d-model %d --heads %d "
                "--groups %d %s --batch %d --seq-len %d --vocab 32 --threads %d --steps %d --json 2>/dev/null",
                passive ? "OMP_WAIT_POLICY=PASSIVE " : "", ATTNSCOPE_SOURCE_DIR, s.layers, s.d_model, s.heads,
                s.groups, s.mlp ? "--mlp" : "", s.batch, s.seq_len, threads, s.steps);
  FILE* p = popen(cmd, "r");
  if (!p) return -1;
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  if (pclose(p) != 0) return -1;
  try {
    return nlohmann::json::parse(out).at("steps_per_second").get<double>();
  } catch (...) {
    return -1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool torch = true;
  int threads = 2;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--no-torch")) torch = false;
    else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) threads = std::atoi(argv[++i]);
  }
  const Shape shapes[] = {{"default induction: L2 C64 H4 G2 attention-only, B16 T64", 2, 64, 4, 2, false, 16, 64, 60},
                          {"L4 C256 H8 G2 SwiGLU 1024, B8 T64", 4, 256, 8, 2, true, 8, 64, 8}};
  std::printf("training steps per second, %d threads (the machine may be loaded: compare within a run)\n", threads);
  std::printf("%-58s %10s %10s %14s %8s\n", "model", "attnscope", "PyTorch", "PyTorch passive", "ratio");
  for (const Shape& s : shapes) {
    const double ours = attnscope_steps_per_second(s, threads);
    const double theirs = torch ? torch_steps_per_second(s, threads, false) : -1;
    const double theirs_passive = torch ? torch_steps_per_second(s, threads, true) : -1;
    const double best = std::max(theirs, theirs_passive);
    std::printf("%-58s %10.2f %10.2f %14.2f %7.2fx\n", s.name, ours, theirs, theirs_passive,
                best > 0 ? ours / best : 0.0);
    std::fflush(stdout);
  }

  // Time to induction heads: the default run, snapshots every 10 steps.
  TrainSettings d = default_train_settings();
  d.threads = threads;
  Trainer trainer(d);
  const double t0 = now_seconds();
  int step = -1;
  while (!trainer.finished()) {
    trainer.step();
    if (trainer.steps_done() % 10 == 0 && best_induction_score(trainer.snapshot(), 1) > 0.5f) {
      step = trainer.steps_done();
      break;
    }
  }
  if (step > 0)
    std::printf("default run: a layer-2 head scores above 0.5 at step %d, after %.2f s (target: 60 s)\n", step,
                now_seconds() - t0);
  else
    std::printf("default run: no layer-2 head above 0.5 in %d steps (%.2f s)\n", d.steps, now_seconds() - t0);
  return 0;
}
