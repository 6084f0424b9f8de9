// bench_train.cpp — training speed against PyTorch eager on the same shapes, and time to induction heads.
//
//   bench_train [--no-torch] [--threads N] [--repeat N]
// 1. Steps per second of attnscope's Trainer for the default induction model (L = 2, d_model 64, H 4,
//    G 2, attention-only, batch 16, T = 64) and an L = 4, d_model 256, H 8, G 2 SwiGLU model (batch 8,
//    T = 64); then bench/compare_train_torch.py on the same shapes, batch and threads, run as a
//    subprocess in the same run, with PyTorch at its best (bench/anchor.py: OMP_WAIT_POLICY=PASSIVE,
//    OpenBLAS choosing its own kernel). Both as steps/s and as a share of the sgemm rate that script
//    measures in the same run (flops of a step as it counts them).
//    With --repeat N each pair is measured N times, one line each, then the medians: on a machine
//    shared with other work a burst of load during either half of one pair moves its ratio by ±30%.
// 2. Seconds (and steps) until some head of layer 2 of the default run scores above 0.5 (snapshots
//    every 10 steps, counted in the time).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

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

// What compare_train_torch.py measured: PyTorch's steps/s, the flops of a step, the run's sgemm rate.
struct TorchFigures {
  double steps_per_second = -1, step_gflop = 0, sgemm_gflops = 0;
  std::string machine;
};

TorchFigures torch_figures(const Shape& s, int threads) {
  char cmd[1024];
  std::snprintf(cmd, sizeof cmd,
                "/usr/bin/python3 %s/bench/compare_train_torch.py --layers %d --d-model %d --heads %d "
                "--groups %d %s --batch %d --seq-len %d --vocab 32 --threads %d --steps %d --json 2>/dev/null",
                ATTNSCOPE_SOURCE_DIR, s.layers, s.d_model, s.heads, s.groups, s.mlp ? "--mlp" : "", s.batch,
                s.seq_len, threads, s.steps);
  TorchFigures f;
  FILE* p = popen(cmd, "r");
  if (!p) return f;
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  if (pclose(p) != 0) return f;
  try {
    const nlohmann::json j = nlohmann::json::parse(out);
    f.steps_per_second = j.at("steps_per_second").get<double>();
    f.step_gflop = j.at("step_gflop").get<double>();
    f.sgemm_gflops = j.at("sgemm_gflops").get<double>();
    f.machine = j.at("machine").get<std::string>();
  } catch (...) {
    f.steps_per_second = -1;
  }
  return f;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  bool torch = true;
  int threads = 2, repeat = 1;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--no-torch")) torch = false;
    else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) threads = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = std::max(1, std::atoi(argv[++i]));
  }
  const Shape shapes[] = {{"default induction: L2 C64 H4 G2 attention-only, B16 T64", 2, 64, 4, 2, false, 16, 64, 60},
                          {"L4 C256 H8 G2 SwiGLU 1024, B8 T64", 4, 256, 8, 2, true, 8, 64, 8}};
  std::printf("training steps per second, %d threads (the machine may be loaded: compare within a run)\n", threads);
  std::printf("%-58s %10s %10s %8s %11s %13s %13s\n", "model", "attnscope", "PyTorch", "ratio", "GFLOP/step",
              "attnscope %", "PyTorch %");
  for (const Shape& s : shapes) {
    std::vector<double> ours_runs, theirs_runs, ratios, our_shares, their_shares;
    for (int run = 0; run < repeat; ++run) {
      const double ours = attnscope_steps_per_second(s, threads);
      const TorchFigures theirs = torch ? torch_figures(s, threads) : TorchFigures{};
      if (theirs.steps_per_second <= 0) {
        std::printf("%-58s %10.2f %10s (PyTorch did not run: /usr/bin/python3 with torch needed)\n", s.name, ours, "-");
        continue;
      }
      // Shares of the sgemm rate measured in the same run (100%: every flop of the step at that rate).
      const auto share = [&](double steps_per_second) {
        return 100.0 * theirs.step_gflop * steps_per_second / theirs.sgemm_gflops;
      };
      std::printf("%-58s %10.2f %10.2f %7.2fx %11.3f %12.0f%% %12.0f%%\n", s.name, ours, theirs.steps_per_second,
                  ours / theirs.steps_per_second, theirs.step_gflop, share(ours), share(theirs.steps_per_second));
      std::printf("  (%s; sgemm 2048^3 %.0f GFLOP/s)\n", theirs.machine.c_str(), theirs.sgemm_gflops);
      std::fflush(stdout);
      ours_runs.push_back(ours), theirs_runs.push_back(theirs.steps_per_second);
      ratios.push_back(ours / theirs.steps_per_second);
      our_shares.push_back(share(ours)), their_shares.push_back(share(theirs.steps_per_second));
    }
    if (ratios.size() > 1)
      std::printf("%-58s %10.2f %10.2f %7.2fx %11s %12.0f%% %12.0f%%\n",
                  ("  median of " + std::to_string(ratios.size()) + " runs").c_str(), median(ours_runs),
                  median(theirs_runs), median(ratios), "", median(our_shares), median(their_shares));
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
