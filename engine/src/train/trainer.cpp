// trainer.cpp — the training loop: sample a batch, forward, backward, AdamW; probes for snapshots.
#include "attnscope/train/trainer.h"

#include <algorithm>
#include <cmath>
#include <mutex>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "attnscope/core/error.h"
#include "attnscope/train/checkpoint.h"
#include "core/parallel.h"
#include "train/team.h"

namespace attnscope::train {

namespace {

constexpr uint64_t data_stream = 0xDA7A'5EED'0000'0001ull;  // data draws apart from the weights' draws
constexpr uint64_t eval_seed = 0xE7A1'5EED'0000'0002ull;    // accuracy(): one fixed set for every run

ModelConfig model_for(const TrainSettings& s, const Task& task) {
  ModelConfig c = s.model;
  c.vocab_size = task.vocab_size();
  c.max_positions = std::max(c.max_positions, s.task.seq_len);
  return c;
}

OptimizerSettings optimizer_for(const TrainSettings& s) {
  OptimizerSettings o = s.optimizer;
  o.total_steps = s.steps;
  return o;
}

// A training step allocates and frees the same few buffers of 100 KB to a few MB every time (Eigen's
// packing blocks for the larger products, the attention backward's per-head scratch). glibc serves
// those from fresh mmap'ed pages, or trims its heap after the free, so every step paid ~2,700 page
// faults (measured on the L4 d256 model, B 8: a few percent of the step). Keeping them in the heap
// makes the next step reuse the same pages: blocks under 32 MB from the heap, the heap trimmed only
// above 64 MB free (larger blocks, a checkpoint's tensors, are still mapped and returned on free).
// Process-wide, set once when the first trainer is made.
void keep_step_buffers_mapped() {
#ifdef __GLIBC__
  static std::once_flag once;
  std::call_once(once, [] {
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 64 << 20);
  });
#endif
}

}  // namespace

TrainSettings default_train_settings() {
  TrainSettings s;
  s.task.kind = TaskKind::induction;
  s.task.seq_len = 64;
  s.task.symbols = 32;
  s.model.layers = 2;
  s.model.d_model = 64;
  s.model.heads = 4;
  s.model.groups = 2;
  s.model.mlp = false;
  s.batch = 16;
  s.steps = 1000;
  s.optimizer.lr = 3e-3f;
  s.optimizer.warmup = 50;
  return s;
}

void validate_train_settings(const TrainSettings& s) {
  require(s.steps >= 1 && s.steps <= 10'000'000, "steps must be 1 to 10000000, got " + std::to_string(s.steps));
  require(s.batch >= 1 && s.batch <= 1024, "the batch must be 1 to 1024 sequences, got " + std::to_string(s.batch));
  require(s.task.seq_len >= 4 && s.task.seq_len <= max_seq_len, "the sequence length must be 4 to " +
                                                                    std::to_string(max_seq_len) + ", got " +
                                                                    std::to_string(s.task.seq_len));
  require(s.threads >= 0 && s.threads <= 256, "threads must be 0 (all cores) to 256, got " + std::to_string(s.threads));
  require(s.snapshot_every >= 1, "snapshot_every must be at least 1");
  ModelConfig probe = s.model;
  if (probe.vocab_size < 2) probe.vocab_size = 2;  // the task decides it; the rest is checked here
  validate_model_config(probe);
  validate_optimizer_settings(optimizer_for(s));
}

std::vector<TrainSettings> group_variants(const TrainSettings& s) {
  std::vector<int> groups = {s.model.heads};
  if (s.model.groups > 1 && s.model.groups < s.model.heads) groups.push_back(s.model.groups);
  else if (s.model.heads >= 4) groups.push_back(s.model.heads / 2);
  if (s.model.heads > 1) groups.push_back(1);
  std::vector<TrainSettings> out;
  for (int g : groups) {
    TrainSettings v = s;
    v.model.groups = g;
    out.push_back(v);
  }
  return out;
}

namespace {
// Values one layer caches per token: K and V of G heads, or MLA's latent and rotary key.
// Without a softmax nothing grows with the tokens: 0 per token (the fixed state: state_bytes).
// A hybrid counts its softmax layers only.
int64_t kv_values_per_layer(const ModelConfig& c, int l) {
  if (c.layer_softmax_free(l)) return 0;
  return c.mla() ? int64_t(c.kv_lora_rank) + c.rope_head_dim : int64_t(2) * c.kv_heads() * c.head_dim();
}
}  // namespace

int64_t kv_cache_bytes_per_token(const ModelConfig& c) {
  int64_t values = 0;
  for (int l = 0; l < c.layers; ++l) values += kv_values_per_layer(c, l);
  return values * int64_t(sizeof(float));
}

double kv_cache_bytes_per_token_at(const ModelConfig& c, int context) {
  double bytes = 0;
  for (int l = 0; l < c.layers; ++l) {
    const int w = c.window_of(l);
    const double share = w > 0 && context > 0 ? double(std::min(w, context)) / double(context) : 1.0;
    bytes += double(kv_values_per_layer(c, l) * int64_t(sizeof(float))) * share;
  }
  return bytes;
}

int64_t state_bytes(const ModelConfig& c) {
  const int64_t d = c.head_dim();
  int64_t values = 0;
  for (int l = 0; l < c.layers; ++l)  // S [d, d] per head; linear attention's normaliser z [d] beside it
    if (c.layer_softmax_free(l)) values += c.heads * (d * d + (c.kind_of(l) == AttentionKind::linear ? d : 0));
  return values * int64_t(sizeof(float));
}

double memory_bytes_per_token_at(const ModelConfig& c, int context) {
  return kv_cache_bytes_per_token_at(c, context) + double(state_bytes(c)) / double(std::max(context, 1));
}

const char* attention_kind_name(const ModelConfig& c) {
  if (c.hybrid()) return "hybrid";
  if (c.softmax_free()) {
    for (const AttentionKindEntry& e : attention_kinds())
      if (e.kind == c.attention) return e.title;
  }
  if (c.mla()) return "MLA";
  if (c.groups == c.heads) return "MHA";
  return c.groups == 1 ? "MQA" : "GQA";
}

std::string hybrid_title(const ModelConfig& c) {
  if (!c.hybrid()) return attention_kind_name(c);
  std::string kinds, softmax_layers;
  for (int l = 0; l < c.layers; ++l) {
    const AttentionKind k = c.kind_of(l);
    if (k == AttentionKind::grouped) {
      softmax_layers += (softmax_layers.empty() ? "" : ", ") + std::to_string(l);
      continue;
    }
    for (const AttentionKindEntry& e : attention_kinds())
      if (e.kind == k && kinds.find(e.title) == std::string::npos) kinds += std::string(e.title) + " + ";
  }
  return kinds + "softmax (layer" + (softmax_layers.find(',') != std::string::npos ? "s " : " ") + softmax_layers + ")";
}

std::vector<TrainSettings> attention_variants(const TrainSettings& s, bool window_run) {
  TrainSettings base = s;
  base.model.attention = AttentionKind::grouped;
  base.model.window = 0;
  base.model.local_layers.clear();
  std::vector<TrainSettings> out = group_variants(base);
  // the window run: the middle grouped run (GQA) when there are three, else the first (MHA)
  TrainSettings windowed = out.size() >= 3 ? out[1] : out[0];
  TrainSettings mla = base;
  mla.model.attention = AttentionKind::mla;
  mla.model.groups = mla.model.heads;  // every head its own keys, made from the one latent
  out.push_back(mla);
  if (window_run) {
    // with the settings' window and pattern, or a quarter of the sequence on every layer
    TrainSettings& w = windowed;
    w.model.window = s.model.window > 0 ? s.model.window : std::max(1, s.task.seq_len / 4);
    w.model.local_layers = s.model.window > 0 ? s.model.local_layers : std::vector<bool>{};
    out.push_back(w);
  }
  return out;
}

std::vector<TrainSettings> no_softmax_variants(const TrainSettings& s) {
  std::vector<TrainSettings> out;
  for (AttentionKind kind : {AttentionKind::grouped, AttentionKind::linear, AttentionKind::retention,
                             AttentionKind::mamba2, AttentionKind::gated_deltanet}) {
    TrainSettings v = s;
    v.model.attention = kind;
    v.model.groups = v.model.heads;  // MHA; without a softmax every head keeps its own state
    v.model.window = 0;
    v.model.local_layers.clear();
    v.model.layer_kinds.clear();
    out.push_back(v);
  }
  if (s.model.layers >= 2) {  // Qwen3-Next's idea at this size: Gated DeltaNet with a softmax layer every 2nd
    TrainSettings v = out.back();
    v.model.layer_kinds = every_kth_softmax(AttentionKind::gated_deltanet, 2, v.model.layers);
    out.push_back(v);
  }
  return out;
}

float best_induction_score(const TrainSnapshot& s, int layer) {
  if (layer < 0 || layer >= int(s.induction.size())) return 0.0f;
  float best = 0.0f;
  for (float v : s.induction[layer]) best = std::max(best, v);
  return best;
}

Trainer::Trainer(TrainSettings settings)
    : s_((validate_train_settings(settings), std::move(settings))),
      task_(s_.task),
      model_(model_for(s_, task_)),
      optimizer_(optimizer_for(s_), model_.arena_size()),
      data_rng_(s_.seed ^ data_stream) {
  s_.model = model_.config();
  s_.optimizer = optimizer_.settings();
  model_.init_weights(s_.seed);
  keep_step_buffers_mapped();
  const int T = s_.task.seq_len;
#ifdef _OPENMP
  const int threads = s_.threads > 0 ? s_.threads : omp_get_max_threads();
#else
  const int threads = 1;
#endif
  chunks_ = std::max(1, std::min(threads, s_.batch));
  team_ = std::make_unique<WorkerTeam>(chunks_);
  for (int c = 0; c <= chunks_; ++c) chunk_begin_.push_back(int(int64_t(s_.batch) * c / chunks_));
  for (int c = 0; c < chunks_; ++c) {
    chunk_acts_.push_back(model_.make_activations(chunk_begin_[c + 1] - chunk_begin_[c], T));
    if (c > 0) chunk_grads_.emplace_back(model_.arena_size());
  }
  ids_.resize(size_t(s_.batch) * T);
  targets_.resize(ids_.size());
  // Probes: the induction task shows its induction probe; other tasks show an example of their own.
  const int n = T / 2;
  induction_ids_ = task_.induction_probe(n);
  probe_ids_ = task_.kind() == TaskKind::induction ? induction_ids_ : task_.probe();
  probe_acts_ = model_.make_activations(1, int(std::max(probe_ids_.size(), induction_ids_.size())));
  last_snapshot_time_ = std::chrono::steady_clock::now();
}

Trainer::~Trainer() = default;
Trainer::Trainer(Trainer&&) noexcept = default;
Trainer& Trainer::operator=(Trainer&&) noexcept = default;

void Trainer::begin_step() {
  task_.sample(data_rng_, s_.batch, ids_.data(), targets_.data());
  chunk_loss_.assign(size_t(chunks_), 0.0f);
  chunk_scored_.assign(size_t(chunks_), 0);
  clear_ = !grads_zero_;
  grads_zero_ = false;
}

float Trainer::step() {
  if (piece_ > 0) {  // finish the step advance() began
    while (!advance()) {
    }
    return losses_.back();
  }
  const int T = s_.task.seq_len;
  begin_step();
  // 1. Each chunk of the batch: forward and backward on one thread, gradients into its own arena (all
  //    zero: the previous step's optimizer left them so).
  team_->run([&](int c) {
    const size_t row0 = size_t(chunk_begin_[c]) * T, rows = size_t(chunk_begin_[c + 1] - chunk_begin_[c]) * T;
    for (size_t i = row0; i < row0 + rows; ++i) chunk_scored_[c] += targets_[i] >= 0;
    float* grads = c == 0 ? model_.grads() : chunk_grads_[c - 1].data();
    if (clear_) std::fill(grads, grads + model_.arena_size(), 0.0f);
    chunk_loss_[c] = model_.forward(chunk_acts_[c], ids_.data() + row0, targets_.data() + row0);
    model_.backward(chunk_acts_[c], grads);
  });
  return finish_step();
}

int Trainer::pieces_per_step() const { return chunks_ * (2 * s_.model.layers + 2) + 1; }

// Chunk c's forward and backward of step() as 2L + 2 pieces: the embedding and layer 0, layers 1 … L − 1,
// the logits and the loss; their backward, layers L − 1 … 1, layer 0 and the embedding.
void Trainer::run_chunk_piece(int c, int k) {
  const int T = s_.task.seq_len, L = s_.model.layers;
  const size_t row0 = size_t(chunk_begin_[c]) * T, rows = size_t(chunk_begin_[c + 1] - chunk_begin_[c]) * T;
  float* grads = c == 0 ? model_.grads() : chunk_grads_[c - 1].data();
  Activations& acts = chunk_acts_[c];
  const detail::SingleThreadScope serial(true);  // as a chunk runs in step() (team.h)
  if (k == 0) {
    for (size_t i = row0; i < row0 + rows; ++i) chunk_scored_[c] += targets_[i] >= 0;
    if (clear_) std::fill(grads, grads + model_.arena_size(), 0.0f);
    model_.forward_begin(acts, ids_.data() + row0, targets_.data() + row0);
    model_.forward_layer(acts, 0);
  } else if (k < L) {
    model_.forward_layer(acts, k);
  } else if (k == L) {
    chunk_loss_[c] = model_.forward_end(acts, true);
  } else if (k == L + 1) {
    model_.backward_begin(acts, grads);
  } else {
    const int l = 2 * L + 1 - k;  // k = L + 2 … 2L + 1: layers L − 1 … 0
    model_.backward_layer(acts, l, grads);
    if (l == 0) model_.backward_end(acts, grads);
  }
}

bool Trainer::advance() {
  const int per_chunk = 2 * s_.model.layers + 2;
  try {
    if (piece_ == 0) begin_step();
    if (piece_ < chunks_ * per_chunk) {
      run_chunk_piece(piece_ / per_chunk, piece_ % per_chunk);
      ++piece_;
      return false;
    }
    piece_ = 0;
    finish_step();
    return true;
  } catch (...) {
    piece_ = 0;  // grads_zero_ is false: the next step clears the arenas
    throw;
  }
}

float Trainer::finish_step() {
  // 2. The batch's mean loss: chunk means weighted by their scored positions, in order.
  int scored = 0;
  for (int n : chunk_scored_) scored += n;
  double loss_sum = 0;
  for (int c = 0; c < chunks_; ++c) loss_sum += double(chunk_loss_[c]) * chunk_scored_[c];
  const float loss = scored ? float(loss_sum / scored) : 0.0f;
  if (!std::isfinite(loss))
    throw InputError("training diverged at step " + std::to_string(losses_.size() + 1) +
                     " (the loss is no longer a finite number): lower the learning rate");
  // 3. AdamW (clipping, schedule) on the batch's gradient, the chunks' gradients weighted by their scored
  //    positions and summed in chunk order inside the optimizer's first pass; one slice per thread.
  std::vector<float*> arenas = {model_.grads()};
  std::vector<float> share(chunks_, 1.0f);
  for (int c = 1; c < chunks_; ++c) arenas.push_back(chunk_grads_[c - 1].data());
  if (chunks_ > 1)
    for (int c = 0; c < chunks_; ++c) share[c] = scored ? float(chunk_scored_[c]) / float(scored) : 0.0f;
  last_grad_norm_ = optimizer_.step_summed(model_.weights(), arenas, share, model_.params(), team_.get());
  grads_zero_ = true;
  losses_.push_back(loss);
  return loss;
}

void Trainer::run(const std::atomic<bool>* cancel, const std::function<void(const TrainSnapshot&)>& on_snapshot) {
  while (!finished()) {
    check_cancel(cancel);
    step();
    if (on_snapshot && (steps_done() % s_.snapshot_every == 0 || finished())) on_snapshot(snapshot());
  }
}

namespace {
// Probabilities of every head of every layer for one sequence, from activations at B = 1.
//   probs[l] [1, H, Tcap, Tcap] laid out for the activations' T; the sequence is the first T tokens
std::vector<Tensor3> heads_of(const Activations& a, int L, int H, int T) {
  std::vector<Tensor3> out(L, Tensor3(H));
  for (int l = 0; l < L; ++l)
    for (int h = 0; h < H; ++h)
      out[l][h] = Eigen::Map<const Mat>(a.probs[l] + size_t(h) * a.T * a.T, a.T, a.T).topLeftCorner(T, T);
  return out;
}
}  // namespace

std::vector<std::vector<float>> Trainer::induction_scores_now() {
  const detail::SingleThreadScope serial(true);  // B = 1 and T ≤ 512: too small to split
  const int L = model_.config().layers, H = model_.config().heads, T = int(induction_ids_.size());
  // The probe activations are sized for the longer probe; causal attention makes a shorter
  // sequence padded at the end give the same probabilities on its own positions.
  std::vector<int32_t> ids(probe_acts_.T, 0);
  std::copy(induction_ids_.begin(), induction_ids_.end(), ids.begin());
  model_.forward(probe_acts_, ids.data(), nullptr);
  std::vector<std::vector<float>> scores(L);
  const std::vector<Tensor3> heads = heads_of(probe_acts_, L, H, T);
  for (int l = 0; l < L; ++l) {
    std::vector<float> flat(size_t(H) * T * T);
    for (int h = 0; h < H; ++h) Eigen::Map<Mat>(flat.data() + size_t(h) * T * T, T, T) = heads[l][h];
    scores[l] = induction_scores(flat.data(), H, T, T / 2);
  }
  return scores;
}

TrainSnapshot Trainer::snapshot() {
  const auto now = std::chrono::steady_clock::now();
  TrainSnapshot snap;
  snap.step = steps_done();
  snap.total_steps = s_.steps;
  snap.finished = finished();
  snap.losses = losses_;
  snap.learning_rate = learning_rate(optimizer_.settings(), std::min(steps_done(), s_.steps - 1));
  snap.grad_norm = last_grad_norm_;
  const double seconds = std::chrono::duration<double>(now - last_snapshot_time_).count();
  if (snap.step > last_snapshot_step_ && seconds > 0) snap.steps_per_second = (snap.step - last_snapshot_step_) / seconds;
  last_snapshot_time_ = now;
  last_snapshot_step_ = snap.step;

  const ModelConfig& c = model_.config();
  snap.induction_n = int(induction_ids_.size()) / 2;
  snap.induction = induction_scores_now();
  if (history_.empty() || history_.back().step != snap.step) history_.push_back({snap.step, snap.induction});
  snap.induction_history = history_;

  const detail::SingleThreadScope serial(true);
  std::vector<int32_t> ids(probe_acts_.T, 0);
  std::copy(probe_ids_.begin(), probe_ids_.end(), ids.begin());
  model_.forward(probe_acts_, ids.data(), nullptr);
  snap.probe_ids = probe_ids_;
  for (int32_t id : probe_ids_) snap.probe_tokens.push_back(task_.vocab()[id]);
  snap.probe_probs = heads_of(probe_acts_, c.layers, c.heads, int(probe_ids_.size()));
  snap.kv_cache_bytes_per_token = kv_cache_bytes_per_token(c);
  snap.kv_cache_bytes_per_token_at_T = kv_cache_bytes_per_token_at(c, s_.task.seq_len);
  snap.parameters = 0;
  for (const ParamView& v : model_.params()) snap.parameters += int64_t(v.size);
  snap.layers = c.layers, snap.heads = c.heads, snap.groups = c.kv_heads(), snap.mla = c.mla();
  snap.attention = attention_kind_word(c.attention);
  snap.layer_kinds = c.hybrid() ? layer_kinds_text(c.layer_kinds) : "";
  for (int l = 0; l < c.layers; ++l) snap.layer_windows.push_back(c.window_of(l));
  return snap;
}

float Trainer::accuracy(int sequences) {
  require(sequences >= 1, "accuracy needs at least 1 sequence, got " + std::to_string(sequences));
  const int T = s_.task.seq_len, V = model_.config().vocab_size, per = std::min(sequences, 32);
  Rng rng(eval_seed);
  Activations acts = model_.make_activations(per, T);
  std::vector<int32_t> ids(size_t(per) * T), targets(ids.size());
  int64_t scored = 0, right = 0;
  for (int done = 0; done < sequences; done += per) {
    const int B = std::min(per, sequences - done);
    task_.sample(rng, per, ids.data(), targets.data());  // a whole batch drawn, its first B used
    std::fill(targets.begin() + ptrdiff_t(B) * T, targets.end(), -1);
    model_.forward(acts, ids.data(), targets.data());
    for (size_t i = 0; i < size_t(B) * T; ++i) {
      if (targets[i] < 0) continue;
      const float* row = acts.logits + i * size_t(V);
      ++scored;
      right += int32_t(std::max_element(row, row + V) - row) == targets[i];
    }
  }
  return scored ? float(double(right) / double(scored)) : NAN;
}

void Trainer::save(const std::filesystem::path& dir) const {
  CheckpointExtras extras;
  extras.vocab = task_.vocab();
  extras.task = task_name(task_.kind());
  extras.level = task_.kind() == TaskKind::text ? text_level_name(s_.task.level) : "symbols";
  extras.losses = losses_;
  save_checkpoint(model_, dir, extras);
}

}  // namespace attnscope::train
