// `attnscope train` end to end: the checkpoint folder and progress lines; bad settings exit 2 with one
// "error: …" line and leave no file behind; the text task on a Chinese file.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attnscope/io/file_io.h"
#include "check.h"
#include "run_cli.h"

using namespace attnscope;
using namespace attnscope::test;
namespace fs = std::filesystem;

namespace {
// Small and quick: 2 layers, d_model 32, T = 16, batch 4.
const std::string quick = "--d-model 32 --seq-len 16 --batch 4 ";
}  // namespace

TEST_CASE("train cli: writes config.json, model.safetensors, loss.csv and vocab.json, printing progress") {
  const fs::path out = fresh_dir("cli_train") / "run";  // created by the command
  const CliRun r = run_cli("train --task induction --layers 2 --heads 4 --groups 2 " + quick +
                           "--steps 20 --seed 3 --print-every 10 --out " + shell_quote(out.string()));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  CHECK(contains(r.out, "step 10/20  loss "));
  CHECK(contains(r.out, "step 20/20  loss "));
  // Layers from 0, as the Heads view, the Checkpoint window and every lesson count them.
  CHECK(contains(r.out, "induction L0 "));
  CHECK(contains(r.out, " L1 "));
  CHECK_FALSE(contains(r.out, " L2 "));
  CHECK(contains(r.out, "KV cache 256 bytes/token"));  // 2 · L 2 · G 2 · head_dim 8 · 4 bytes
  const auto cfg = nlohmann::json::parse(read_file(out / "config.json", 1 << 20));
  CHECK(cfg["model_type"] == "llama");
  CHECK(cfg["num_key_value_heads"] == 2);
  CHECK(fs::file_size(out / "model.safetensors") > 10000);
  const std::string csv = read_file(out / "loss.csv", 1 << 20);
  CHECK(csv.rfind("step,loss\n1,", 0) == 0);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 21);
  CHECK(contains(csv, "\n20,"));
  CHECK(count_files(out) == 4);

  // The same seed again: the same loss curve, byte for byte.
  const fs::path again = fresh_dir("cli_train_again");
  REQUIRE(run_cli("train " + quick + "--steps 20 --seed 3 --out " + shell_quote(again.string())).exit_code == 0);
  CHECK(read_file(again / "loss.csv", 1 << 20) == csv);
}

TEST_CASE("train cli: --attention mla writes a deepseek_v2 checkpoint; --window a mistral or qwen2 one") {
  const fs::path out = fresh_dir("cli_train_mla") / "run";
  const CliRun r = run_cli("train " + quick + "--attention mla --kv-rank 8 --rope-dim 4 --steps 3 --out " +
                           shell_quote(out.string()));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "model: MLA r_kv=8 r_q=0 d_rope=4"));
  CHECK(contains(r.out, "KV cache 96 bytes/token"));  // L 2 · (r_kv 8 + d_rope 4) · 4 bytes
  const auto cfg = nlohmann::json::parse(read_file(out / "config.json", 1 << 20));
  CHECK(cfg["model_type"] == "deepseek_v2");
  CHECK(cfg["kv_lora_rank"] == 8);
  CHECK(cfg["qk_rope_head_dim"] == 4);
  CHECK(cfg["q_lora_rank"].is_null());
  const fs::path win = fresh_dir("cli_train_window") / "run";
  REQUIRE(run_cli("train " + quick + "--window 4 --window-pattern local,global --steps 3 --out " +
                  shell_quote(win.string())).exit_code == 0);
  const auto wcfg = nlohmann::json::parse(read_file(win / "config.json", 1 << 20));
  CHECK(wcfg["model_type"] == "qwen2");
  CHECK(wcfg["sliding_window"] == 4);
  CHECK(wcfg["layer_types"] == nlohmann::json::array({"sliding_attention", "full_attention"}));
}

TEST_CASE("train cli: --attention linear | retention | mamba2 | deltanet | gated-deltanet write their kind and gates") {
  // quick: L 2, d_model 32, H 4 → d 8; the state per head d·d floats (linear: + its normaliser d)
  const struct {
    const char* kind;
    const char* title;
    long long state_bytes;
    std::vector<std::string> gates;
  } kinds[] = {{"linear", "linear attention", 2 * 4 * (64 + 8) * 4, {}},
               {"retention", "retention", 2 * 4 * 64 * 4, {}},
               {"mamba2", "Mamba-2", 2 * 4 * 64 * 4, {"dt_proj.weight", "dt_bias", "A_log", "D"}},
               {"deltanet", "DeltaNet", 2 * 4 * 64 * 4, {"b_proj.weight"}},
               {"gated-deltanet", "Gated DeltaNet", 2 * 4 * 64 * 4, {"b_proj.weight", "a_proj.weight", "dt_bias", "A_log"}}};
  for (const auto& k : kinds) {
    INFO(k.kind);
    const fs::path out = fresh_dir(std::string("cli_train_") + k.kind) / "run";
    const CliRun r = run_cli("train " + quick + "--attention " + k.kind + " --steps 3 --out " + shell_quote(out.string()));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.out, std::string("model: ") + k.title + " L=2 d_model=32 H=4 G=4 head_dim=8"));
    CHECK(contains(r.out, "no KV cache: a fixed state of " + std::to_string(k.state_bytes) + " bytes"));
    const auto cfg = nlohmann::json::parse(read_file(out / "config.json", 1 << 20));
    CHECK(cfg["model_type"] == "attnscope_linear");
    CHECK(cfg["attention_kind"] == k.kind);
    const std::string st = read_file(out / "model.safetensors", 1 << 24);
    for (int l = 0; l < 2; ++l)
      for (const std::string& g : k.gates)
        CHECK(contains(st, "\"model.layers." + std::to_string(l) + ".self_attn." + g + "\""));
  }
}

TEST_CASE("train cli: the text task learns a Chinese file by characters") {
  const fs::path dir = fresh_dir("cli_train_text");
  write_file_atomic(dir / "poem.txt", "床前明月光，疑是地上霜。举头望明月，低头思故乡。\n");
  const CliRun r = run_cli("train --task text --text-file " + shell_quote((dir / "poem.txt").string()) +
                           " --seq-len 8 --batch 4 --d-model 32 --steps 5 --mlp --out " +
                           shell_quote((dir / "out").string()));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto vocab = nlohmann::json::parse(read_file(dir / "out" / "vocab.json", 1 << 20));
  CHECK(vocab["task"] == "text");
  CHECK(vocab["level"] == "chars");
  CHECK(vocab["tokens"][0] == "明");  // three times, the most frequent character
  const auto cfg = nlohmann::json::parse(read_file(dir / "out" / "config.json", 1 << 20));
  CHECK(cfg["intermediate_size"] == 128);  // --mlp: 4 · d_model
  CHECK(cfg["vocab_size"] == vocab["tokens"].size());
}

TEST_CASE("train cli: bad settings exit 2 with one error line and leave nothing behind") {
  const fs::path fx = fresh_dir("cli_train_bad");
  write_file_atomic(fx / "empty.txt", "");
  write_file_atomic(fx / "latin1.txt", "caf\xe9 au lait");
  write_file_atomic(fx / "short.txt", "abc");
  write_file_atomic(fx / "a_file", "x");
  auto f = [&](const char* name) { return shell_quote((fx / name).string()); };
  struct Case {
    std::string args, message;
  };
  const std::vector<Case> cases = {
      {"--heads 4 --groups 3", "groups (3) must divide heads (4)"},
      {"--d-model 30 --heads 4", "d_model (30) must be divisible by heads (4)"},
      {"--heads 32 --groups 1", "heads must be 1 to 16"},
      {"--layers 9", "layers must be 1 to 4"},
      {"--d-model 512", "d_model must be 2 to 256"},
      {"--steps 0", "steps must be 1"},
      {"--steps -5", "steps must be 1"},
      {"--lr 0", "learning rate must be a number above 0"},
      {"--lr -0.01", "learning rate must be a number above 0"},
      {"--lr nan", "learning rate must be a number above 0"},
      {"--lr inf", "learning rate must be a number above 0"},
      {"--batch 0", "batch must be 1 to 1024"},
      {"--seq-len 7", "must be even"},
      {"--seq-len 100000", "sequence length must be 4 to 512"},
      {"--warmup -1", "warm-up steps must be 0 or more"},
      {"--task parity", "unknown task 'parity'"},
      {"--task text", "--task text needs --text-file"},
      {"--text-file " + f("short.txt"), "--text-file is only for --task text"},
      {"--task text --text-file " + f("empty.txt"), "is empty"},
      {"--task text --text-file " + f("latin1.txt"), "latin1.txt': invalid UTF-8 at byte 4"},
      {"--task text --text-file " + f("short.txt") + " --seq-len 8", "needs at least 9"},
      {"--task text --text-file " + f("missing.txt"), "no such file"},
      {"--task text --text-file " + f("short.txt") + " --text-level bytes", "unknown text level 'bytes'"},
      {"--mlp --no-mlp", "--mlp and --no-mlp are exclusive"},
      {"--ffn 64", "--ffn sets the MLP width: give --mlp too"},
      {"--mlp --ffn -3", "the MLP width must be 1 or more"},
      {"--steps abc", "steps"},
      {"--attention latent", "--attention must be one of grouped | mla | linear | retention | mamba2 | deltanet | "
                             "gated-deltanet (grouped: MHA/GQA/MQA by --groups), got 'latent'"},
      {"--attention mamba2 --window 4", "a sliding window is for softmax attention; mamba2 attention keeps a state"},
      {"--attention mla --kv-rank 80", "kv_lora_rank (the latent width) must be 1 to d_model (64)"},
      {"--attention mla --rope-dim 3", "rope_head_dim (the rotary part of each head) must be even"},
      {"--window 0", "--window must be 1 or more tokens, got 0"},
      {"--window -4", "--window must be 1 or more tokens, got -4"},
      {"--window-pattern local,global", "--window-pattern needs --window W"},
      {"--window 4 --window-pattern local,wide", "has \"wide\""},
      {"--attention mla --window 4", "DeepSeek-V2's checkpoint format has no sliding window"},
  };
  for (const Case& c : cases) {
    const fs::path out = fx / "out";
    // the defaults otherwise: every case fails before the first step
    const CliRun run = run_cli("train " + c.args + " --out " + shell_quote(out.string()));
    INFO(c.args << " → " << run.err);
    CHECK(run.exit_code == 2);
    CHECK(run.err.rfind("error: ", 0) == 0);
    CHECK(std::count(run.err.begin(), run.err.end(), '\n') == 1);
    CHECK(contains(run.err, c.message));
    CHECK(!fs::exists(out));
  }
  // unusable output folders: an existing file, a path under a file
  for (const std::string& out : {(fx / "a_file").string(), (fx / "a_file" / "sub").string()}) {
    const CliRun run = run_cli("train " + quick + "--steps 2 --out " + shell_quote(out));
    INFO(out << " → " << run.err);
    CHECK(run.exit_code == 2);
    CHECK(run.err.rfind("error: ", 0) == 0);
    CHECK(contains(run.err, "--out"));
  }
  CHECK(read_file(fx / "a_file", 16) == "x");
}
