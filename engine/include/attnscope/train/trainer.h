// trainer.h — training a small Llama-layout transformer on a built-in task, step by step.
//
// Built to run on a worker thread (the command line runs it on the main thread):
//
//   Trainer trainer(settings);                    // validates (InputError), builds task, model, AdamW
//   while (!trainer.finished()) {
//     check_cancel(&cancel);                      // or trainer.run(&cancel, on_snapshot)
//     trainer.step();                             // one AdamW step on a fresh batch → its loss
//     if (trainer.steps_done() % 25 == 0) publish(trainer.snapshot());
//   }
//   trainer.save(dir);                            // config.json, model.safetensors, vocab.json, loss.csv
//
// A Trainer is not shared between threads: the worker owns it and hands out TrainSnapshot values
// (plain data, copied) for the window to draw. One seed gives the same loss curve bit for bit for a
// given thread count: data, initialisation and every reduction are ordered (ops.h). Threads split
// the batch (data parallel, one fork/join per step); `threads` sets how many.
// Snapshots show every layer's heads on a fixed probe sequence and an induction score per head
// (tasks.h), measured on a repeated random sequence, for every task.
#pragma once
#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "attnscope/core/rng.h"
#include "attnscope/core/types.h"
#include "attnscope/train/model.h"
#include "attnscope/train/optimizer.h"
#include "attnscope/train/tasks.h"

namespace attnscope::train {

class WorkerTeam;  // train/team.h (private)

struct TrainSettings {
  TaskSettings task;            // kind, seq_len (T), symbols, text, level
  ModelConfig model;            // layers, d_model, heads, groups, mlp; vocab_size comes from the task
  OptimizerSettings optimizer;  // lr, warmup, …; total_steps is set from `steps`
  int batch = 16;               // sequences per step
  int steps = 1000;             // optimizer steps in all
  uint64_t seed = 1;            // weights and data
  int threads = 0;              // OpenMP threads for this trainer's work; 0 = the default (all cores)
  int snapshot_every = 25;      // run(): steps between snapshots
};

// The defaults of `attnscope train --task induction` (README "Training"): L = 2, d_model = 64,
// H = 4, G = 2, attention-only, T = 64, batch 16, 32 symbols.
TrainSettings default_train_settings();

// Throws InputError naming the setting and what is valid (also everything the task, model and
// optimizer validate).
void validate_train_settings(const TrainSettings& s);

// The same settings with G = H (MHA), G = the given groups when strictly between, and G = 1 (MQA):
// what "Compare MHA / GQA / MQA" trains side by side. Same seed, so the same data in the same order.
std::vector<TrainSettings> group_variants(const TrainSettings& s);

// KV-cache bytes per token of a model in float32, summed over the L layers: per layer
//   grouped attention: 2 (K and V) · G · head_dim · 4;   MLA: (kv_lora_rank + rope_head_dim) · 4
// (the latent c_KV and the shared rotary key k_pe, DeepSeek-V2 §2.1).
int64_t kv_cache_bytes_per_token(const ModelConfig& c);
// The same at a context of `context` tokens with sliding windows counted: a layer with window W keeps
// min(W, context) tokens (a rolling cache), so its share per token of context is scaled by
// min(W, context) / context. Equal to kv_cache_bytes_per_token without a window.
double kv_cache_bytes_per_token_at(const ModelConfig& c, int context);

// What "Compare MHA / GQA / MQA / MLA" trains: the settings' model as MHA (G = H), GQA (the given G when
// strictly between, else H/2), MQA (G = 1) and MLA (kv_lora_rank and rope_head_dim as set), all without
// a window; then, with `window_run`, the GQA model (MHA when H has no middle divisor) again with the
// settings' window and pattern (or a window of T/4 on every layer when none is set). Same seed, so the same data in the same order.
std::vector<TrainSettings> attention_variants(const TrainSettings& s, bool window_run);
// What "Compare without a softmax" trains: the settings' model as MHA (G = H, softmax), then linear attention,
// retention, Mamba-2 and Gated DeltaNet (every head its own state), then (with 2 layers or more) the hybrid
// Gated DeltaNet + softmax every 2nd layer (every_kth_softmax), all without a window; everything else
// (sizes, task, steps, learning rate, seed, so the data too) equal.
std::vector<TrainSettings> no_softmax_variants(const TrainSettings& s);
// Without a softmax a model keeps no KV cache (0 bytes per token above) but a state of a fixed size:
// L · H · d·d floats (linear attention adds its normaliser, d per head); 0 for the softmax kinds. A hybrid
// counts each of its layers as its kind does: the cache of its softmax layers, the state of the others.
int64_t state_bytes(const ModelConfig& c);
// What one token of a sequence of `context` tokens costs in memory, over all layers, in float32: the KV
// cache per token (kv_cache_bytes_per_token_at) with a softmax, the fixed state ÷ context without one
// (state_bytes / context). The x of "Compare without a softmax"'s loss-against-memory plot.
double memory_bytes_per_token_at(const ModelConfig& c, int context);
// "MHA", "GQA", "MQA" or "MLA" for a model (grouping_name's words; "MHA" for one head); without a softmax
// the kind's title ("linear attention", "retention", "Mamba-2", "DeltaNet", "Gated DeltaNet"); "hybrid" for a
// model whose layers mix them (hybrid_title says which).
const char* attention_kind_name(const ModelConfig& c);
// A hybrid in words: "Gated DeltaNet + softmax (layers 1, 3)" — the kinds' titles and the softmax layers
// numbered from 0. attention_kind_name's word for a model of one kind.
std::string hybrid_title(const ModelConfig& c);

struct InductionPoint {
  int step = 0;
  std::vector<std::vector<float>> scores;  // [L][H]
};

// What the window shows; plain data, safe to copy to another thread.
struct TrainSnapshot {
  int step = 0;                  // steps done
  int total_steps = 0;
  bool finished = false;
  std::vector<float> losses;     // the loss of every step done, [step]
  float learning_rate = 0;       // of the next step
  float grad_norm = 0;           // of the last step, before clipping
  double steps_per_second = 0;   // over the steps since the previous snapshot
  std::vector<int32_t> probe_ids;          // [T_probe]
  std::vector<std::string> probe_tokens;   // their text
  std::vector<Tensor3> probe_probs;        // [L] of [H] of [T_probe, T_probe]: every head on the probe
  int induction_n = 0;                     // half length of the induction probe
  std::vector<std::vector<float>> induction;      // [L][H] now
  std::vector<InductionPoint> induction_history;  // one point per snapshot taken so far
  int64_t kv_cache_bytes_per_token = 0;
  double kv_cache_bytes_per_token_at_T = 0;  // with windows counted, at the task's sequence length
  int64_t parameters = 0;
  int layers = 0, heads = 0, groups = 0;     // groups: the K/V heads (MLA: H, one latent shared by all)
  bool mla = false;
  std::string attention = "grouped";         // the kind's word (attention_kinds()); without a softmax the
                                             // probe_probs are each head's signed matrix M, not probabilities
  std::vector<int> layer_windows;            // [L] each layer's sliding window (0: none)
  std::string layer_kinds;                   // a hybrid's kinds, layer_kinds_text ("gated-deltanet,grouped");
                                             // empty when every layer is `attention`
};

// Largest induction score among the heads of `layer` (0-based) in a snapshot.
float best_induction_score(const TrainSnapshot& s, int layer);

class Trainer {
 public:
  explicit Trainer(TrainSettings settings);
  ~Trainer();
  Trainer(Trainer&&) noexcept;
  Trainer& operator=(Trainer&&) noexcept;

  // One optimizer step on a fresh batch; returns its loss (before the update). Throws InputError
  // when the loss stops being finite ("training diverged … lower the learning rate").
  float step();
  // The same step in pieces, for a caller that must not wait for a whole step (the browser's frame,
  // app/core/training_worker.cpp): each call does one piece — about one layer's forward or backward of
  // one chunk of the batch (Model::forward_layer …), then the loss and AdamW — and returns true when
  // the piece ended a step (its loss is losses().back()). The steps are step()'s, bit for bit: the same
  // data, the same operations in the same order. Throws as step() does (the step is then dropped:
  // the next call begins a new one). step() in the middle of a step finishes that step.
  bool advance();
  bool mid_step() const { return piece_ > 0; }
  int pieces_per_step() const;
  bool finished() const { return int(losses_.size()) >= s_.steps; }
  int steps_done() const { return int(losses_.size()); }

  // Steps until finished; between steps checks `cancel` (throws Cancelled) and every
  // snapshot_every steps, and at the end, calls on_snapshot.
  void run(const std::atomic<bool>* cancel = nullptr,
           const std::function<void(const TrainSnapshot&)>& on_snapshot = {});

  // Runs the probes through the current weights (two forward passes at B = 1: cheap).
  TrainSnapshot snapshot();
  // Induction scores [L][H] on the induction probe now.
  std::vector<std::vector<float>> induction_scores_now();

  // Accuracy of the model now on `sequences` fresh examples of the task, drawn from a fixed seed apart
  // from the training data and the same for every run: the share of the scored positions whose most
  // likely next token (the arg-max of the logits; the lower id on a tie) is the target. Recall: the share
  // of queries answered with their key's value. NAN when the examples score no position.
  float accuracy(int sequences = 256);

  // Saves the checkpoint folder with loss.csv (checkpoint.h).
  void save(const std::filesystem::path& dir) const;

  const TrainSettings& settings() const { return s_; }
  const Model& model() const { return model_; }
  Model& model() { return model_; }
  const Task& task() const { return task_; }
  const std::vector<float>& losses() const { return losses_; }

 private:
  TrainSettings s_;
  Task task_;
  Model model_;
  AdamW optimizer_;
  Rng data_rng_;
  // The batch is split into `chunks` runs of consecutive sequences, one per thread, each a whole
  // single-threaded forward and backward into its own gradient arena; the gradients are then summed
  // in chunk order inside AdamW's first pass (AdamW::step_summed). One fork/join per step instead of one per matrix product: on two cores shared
  // with other work this is what keeps the second thread from waiting on the first.
  int chunks_ = 1;
  std::unique_ptr<WorkerTeam> team_;    // chunks_ threads, the caller's included
  std::vector<int> chunk_begin_;        // [chunks + 1] first sequence of each chunk
  std::vector<Activations> chunk_acts_; // [chunks]
  std::vector<FloatArena> chunk_grads_; // [chunks − 1]; chunk 0 uses the model's own arena
  // The optimizer leaves every gradient arena zero after its update, so a step does not clear them
  // before the backward; false only after a step stopped half-way (an exception), then they are cleared.
  bool grads_zero_ = true;
  // The step under way: the next piece (advance(); 0 = none begun), whether its chunks clear their
  // arenas first, and each chunk's loss and scored positions.
  int piece_ = 0;
  bool clear_ = false;
  std::vector<float> chunk_loss_;
  std::vector<int> chunk_scored_;
  void begin_step();              // samples the batch
  void run_chunk_piece(int c, int k);  // piece k of chunk c (k < 2L + 2)
  float finish_step();            // the batch's loss, AdamW
  Activations probe_acts_;
  std::vector<int32_t> ids_, targets_, probe_ids_, induction_ids_;
  std::vector<float> losses_;
  float last_grad_norm_ = 0;
  std::vector<InductionPoint> history_;
  std::chrono::steady_clock::time_point last_snapshot_time_;
  int last_snapshot_step_ = 0;
};

}  // namespace attnscope::train
