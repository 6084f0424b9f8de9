// cmd_train.cpp — `attnscope train`: train a small Llama-layout transformer and save it as a checkpoint.
//
//   attnscope train [--task induction|copy|reverse|sort|recall|text [--text-file F --text-level chars|words]]
//                   [--layers L] [--d-model C] [--heads H] [--groups G] [--mlp | --no-mlp] [--ffn F]
//                   [--attention grouped|mla [--kv-rank R] [--q-rank R] [--rope-dim D]
//                               |linear|retention|mamba2|deltanet|gated-deltanet]
//                   [--layer-kinds KIND,KIND,… (a hybrid: e.g. gated-deltanet,grouped, repeated over the layers)]
//                   [--window W [--window-pattern local,global]]
//                   [--steps N] [--batch B] [--seq-len T] [--symbols S] [--lr LR] [--warmup W]
//                   [--min-lr-ratio R] [--weight-decay WD] [--clip N] [--seed S] [--threads N]
//                   [--print-every N] --out DIR
// Prints progress (loss, learning rate, the best induction score of each layer — L0, L1, … counted from 0
// as everywhere in attnscope — steps/s), then the accuracy on 256 held-out examples (Trainer::accuracy) and
// the memory a token costs at T (KV cache per token, or the fixed state ÷ T), and at the end
// writes DIR/config.json, DIR/model.safetensors (Llama names, F32), DIR/loss.csv (step,loss) and
// DIR/vocab.json. Every setting is checked, and the output folder tested, before the first step;
// a failed run leaves no file behind.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"
#include "attnscope/train/checkpoint.h"
#include "attnscope/train/trainer.h"
#include "cli/commands.h"

namespace attnscope::cli {
namespace {

namespace fs = std::filesystem;
using namespace attnscope::train;

constexpr int64_t max_text_file_bytes = int64_t(16) << 20;

struct TrainOptions {
  TrainSettings settings = default_train_settings();
  std::string task = "induction", text_file, text_level = "chars", out, attention = "grouped", window_pattern,
      layer_kinds;
  bool mlp = false, no_mlp = false, attention_given = false;
  int print_every = 0;
  bool window_given = false;
};

// The output folder must be creatable and writable before an hour of training is spent.
void check_output_folder(const fs::path& out) {
  std::error_code ec;
  if (fs::exists(out, ec)) {
    require(fs::is_directory(out, ec), "--out '" + out.string() + "' exists and is a file, not a folder");
    require(::access(out.c_str(), W_OK) == 0, "cannot write into --out folder '" + out.string() + "': permission denied");
    return;
  }
  fs::path parent = fs::absolute(out, ec).parent_path();
  while (!parent.empty() && !fs::exists(parent, ec) && parent != parent.parent_path()) parent = parent.parent_path();
  require(fs::is_directory(parent, ec), "cannot create --out folder '" + out.string() + "': '" + parent.string() +
                                            "' is not a folder");
  require(::access(parent.c_str(), W_OK) == 0,
          "cannot create --out folder '" + out.string() + "': '" + parent.string() + "' is not writable");
}

std::string format_scores(const TrainSnapshot& s) {
  std::string text;
  char part[48];
  for (int l = 0; l < int(s.induction.size()); ++l) {
    std::snprintf(part, sizeof part, "%sL%d %.2f", l ? " " : "", l, double(best_induction_score(s, l)));  // layers from 0
    text += part;
  }
  return text;
}

void run(TrainOptions& o) {
  // 1. Settings: flags into TrainSettings, then one validation of everything.
  TrainSettings& s = o.settings;
  require(!(o.mlp && o.no_mlp), "--mlp and --no-mlp are exclusive");
  if (o.mlp) s.model.mlp = true;
  if (o.no_mlp) s.model.mlp = false;
  require(s.model.intermediate_size == 0 || s.model.mlp, "--ffn sets the MLP width: give --mlp too");
  s.task.kind = parse_task(o.task);
  s.task.level = parse_text_level(o.text_level);
  if (s.task.kind == TaskKind::text) {
    require(!o.text_file.empty(), "--task text needs --text-file FILE (UTF-8 text, Chinese included)");
    s.task.text = read_file(o.text_file, max_text_file_bytes);
    s.task.text_name = "'" + o.text_file + "'";
  } else {
    require(o.text_file.empty(), "--text-file is only for --task text");
  }
  {
    const std::vector<AttentionKindEntry>& kinds = attention_kinds();
    const auto entry = std::find_if(kinds.begin(), kinds.end(), [&](const auto& e) { return o.attention == e.name; });
    require(entry != kinds.end(), "--attention must be one of " + attention_kind_words() +
                                      " (grouped: MHA/GQA/MQA by --groups), got '" + o.attention + "'");
    s.model.attention = entry->kind;
  }
  if (!o.layer_kinds.empty()) {  // a hybrid: each layer's kind, the list repeated over the layers
    require(!o.attention_given, "--layer-kinds names every layer's kind: leave --attention out");
    s.model.layer_kinds = parse_layer_kinds(o.layer_kinds, s.model.layers);
  }
  if (s.model.mla() || s.model.softmax_free() || s.model.hybrid()) s.model.groups = s.model.heads;
  require(o.window_pattern.empty() || s.model.window > 0, "--window-pattern needs --window W");
  if (s.model.window > 0) s.model.local_layers = parse_window_pattern(o.window_pattern, s.model.layers);
  require(!o.window_given || s.model.window >= 1,
          "--window must be 1 or more tokens, got " + std::to_string(s.model.window) + " (leave it out for no window)");
  {  // an MLA model with a window could train but not be saved: refused before the first step
    ModelConfig probe = s.model;
    probe.vocab_size = std::max(probe.vocab_size, 2);
    validate_model_config(probe);
    if (const std::string refusal = checkpoint_refusal(probe); !refusal.empty()) throw InputError(refusal);
  }
  require(o.print_every >= 0, "--print-every must be 0 (automatic) or more");
  check_output_folder(o.out);
  Trainer trainer(s);  // validates the rest: sizes, groups, steps, learning rate, the text

  const ModelConfig& c = trainer.model().config();
  std::printf("task %s: %d tokens per sequence, vocabulary %d, batch %d, %d steps\n", task_name(s.task.kind),
              s.task.seq_len, c.vocab_size, s.batch, s.steps);
  std::string kind = c.mla() ? "MLA r_kv=" + std::to_string(c.kv_lora_rank) + " r_q=" + std::to_string(c.q_lora_rank) +
                                   " d_rope=" + std::to_string(c.rope_head_dim)
                             : hybrid_title(c);
  if (c.hybrid()) kind += " [" + layer_kinds_text(c.layer_kinds) + "]";
  if (c.window > 0) kind += " window=" + std::to_string(c.window) + " on " + window_pattern_text(c.local_layers, c.layers);
  std::printf("model: %s L=%d d_model=%d H=%d G=%d head_dim=%d %s, %zu parameters, %s %lld bytes%s\n",
              kind.c_str(), c.layers, c.d_model, c.heads, c.kv_heads(), c.head_dim(),
              c.mlp ? ("SwiGLU MLP " + std::to_string(c.ffn())).c_str() : "attention-only", [&] {
                size_t n = 0;
                for (const ParamView& v : trainer.model().params()) n += v.size;
                return n;
              }(),
              c.softmax_free() ? "no KV cache: a fixed state of" : "KV cache",
              (long long)(c.softmax_free() ? state_bytes(c) : kv_cache_bytes_per_token(c)),
              c.softmax_free() ? "" : "/token");
  if (c.hybrid())
    std::printf("hybrid: the layers without a softmax keep a fixed state of %lld bytes beside the softmax layers' "
                "cache\n", (long long)state_bytes(c));
  std::fflush(stdout);

  // 2. Train, printing progress.
  const int every = o.print_every > 0 ? o.print_every : std::max(1, s.steps / 20);
  const auto start = std::chrono::steady_clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  double loss_sum = 0;
  int loss_count = 0;
  while (!trainer.finished()) {
    loss_sum += trainer.step();
    ++loss_count;
    if (trainer.steps_done() % every == 0 || trainer.finished()) {
      const TrainSnapshot snap = trainer.snapshot();
      std::printf("step %*d/%d  loss %.4f  lr %.2e  induction %s  %.1f steps/s\n", int(std::to_string(s.steps).size()),
                  snap.step, s.steps, loss_sum / loss_count, double(snap.learning_rate), format_scores(snap).c_str(),
                  snap.step / std::max(seconds(), 1e-9));
      std::fflush(stdout);
      loss_sum = 0, loss_count = 0;
    }
  }

  // 3. Accuracy on held-out examples and the memory per token, then save.
  const float accuracy = trainer.accuracy(256);
  std::printf("accuracy %.4f on 256 held-out sequences (arg-max next token at the scored positions); "
              "state or KV cache %.1f bytes per token at T = %d\n",
              double(accuracy), memory_bytes_per_token_at(c, s.task.seq_len), s.task.seq_len);
  trainer.save(o.out);
  const fs::path out(o.out);
  std::printf("trained %d steps in %.1f s; wrote %s, %s, %s and %s\n", s.steps, seconds(),
              (out / "config.json").c_str(), (out / "model.safetensors").c_str(), (out / "loss.csv").c_str(),
              (out / "vocab.json").c_str());
}

void add_train_command(CLI::App& root) {
  auto o = std::make_shared<TrainOptions>();
  TrainSettings& s = o->settings;
  CLI::App* cmd = root.add_subcommand(
      "train", "Train a small Llama-layout transformer on a built-in task; save it as a Hugging Face checkpoint");
  cmd->add_option("--task", o->task, "induction (default) | copy | reverse | sort | recall (key-value pairs, then queries) | text");
  cmd->add_option("--text-file", o->text_file, "UTF-8 text for --task text (Chinese works)");
  cmd->add_option("--text-level", o->text_level, "Tokens of --task text: chars (default) | words");
  cmd->add_option("--layers", s.model.layers, "Layers L, 1 to 4 (default 2)");
  cmd->add_option("--d-model", s.model.d_model, "Width d_model, up to 256, divisible by H (default 64)");
  cmd->add_option("--heads", s.model.heads, "Query heads H, up to 16 (default 4)");
  cmd->add_option("--groups", s.model.groups, "Key/value heads G, dividing H: G = H is MHA, G = 1 MQA (default 2)");
  cmd->add_flag("--mlp", o->mlp, "A SwiGLU MLP in every block");
  cmd->add_flag("--no-mlp", o->no_mlp, "Attention-only blocks (the default)");
  cmd->add_option("--ffn", s.model.intermediate_size, "MLP width (default 4 x d_model)");
  cmd->add_option("--attention", o->attention,
                  "grouped (default: MHA/GQA/MQA by --groups) | mla (DeepSeek-V2 multi-head latent attention) | "
                  "without a softmax: linear | retention | mamba2 | deltanet | gated-deltanet")
      ->each([o](const std::string&) { o->attention_given = true; });
  cmd->add_option("--layer-kinds", o->layer_kinds,
                  "A hybrid: each layer's kind, repeated over the layers, e.g. gated-deltanet,grouped (softmax every "
                  "2nd layer, as Qwen3-Next every 4th); mixes grouped with kinds without a softmax (G = H)");
  cmd->add_option("--kv-rank", s.model.kv_lora_rank, "MLA latent width kv_lora_rank, 1 to d_model (default 16)");
  cmd->add_option("--q-rank", s.model.q_lora_rank, "MLA query latent q_lora_rank, 0 = q_proj (default 0)");
  cmd->add_option("--rope-dim", s.model.rope_head_dim, "MLA rotary part qk_rope_head_dim, even (default 8)");
  cmd->add_option("--window", s.model.window, "Sliding window W: query i sees keys i-W < j <= i (default: none)")
      ->each([o](const std::string&) { o->window_given = true; });
  cmd->add_option("--window-pattern", o->window_pattern,
                  "Layers using --window: all (default) or local/global repeated, e.g. local,global");
  cmd->add_option("--steps", s.steps, "Optimizer steps (default 1000)");
  cmd->add_option("--batch", s.batch, "Sequences per step (default 16)");
  cmd->add_option("--seq-len", s.task.seq_len, "Tokens per sequence T (default 64; even for induction)");
  cmd->add_option("--symbols", s.task.symbols, "Distinct random tokens of the synthetic tasks (default 32)");
  cmd->add_option("--lr", s.optimizer.lr, "Peak learning rate (default 3e-3)");
  cmd->add_option("--warmup", s.optimizer.warmup, "Warm-up steps (default 50)");
  cmd->add_option("--min-lr-ratio", s.optimizer.min_lr_ratio, "Final learning rate / peak (default 0.1)");
  cmd->add_option("--weight-decay", s.optimizer.weight_decay, "AdamW weight decay (default 0.01)");
  cmd->add_option("--clip", s.optimizer.clip, "Largest gradient norm, 0 = off (default 1)");
  cmd->add_option("--seed", s.seed, "Seed of the weights and the data (default 1)");
  cmd->add_option("--threads", s.threads, "Threads, 0 = all cores (default 0)");
  cmd->add_option("--print-every", o->print_every, "Steps between progress lines (default steps/20)");
  cmd->add_option("--out", o->out, "Checkpoint folder to write")->required();
  cmd->callback([o] { run(*o); });
}

CommandRegistrar registrar(add_train_command);

}  // namespace
}  // namespace attnscope::cli
