// `attnscope train --layer-kinds` (issue 39 item 4): a hybrid trained a few steps is saved with its layer kinds
// (attnscope_linear, layer_types) and reopens with `compute --checkpoint`, its softmax layers as probabilities
// and the others as their signed matrices M; a bad list exits 2 naming what is valid and leaves nothing behind.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <numeric>
#include <string>

#include "attnscope/io/file_io.h"
#include "attnscope/io/npy.h"
#include "check.h"
#include "run_cli.h"

using namespace attnscope;
using namespace attnscope::test;
namespace fs = std::filesystem;

TEST_CASE("train cli: --layer-kinds trains a hybrid that compute --checkpoint reopens, each layer as its kind") {
  const fs::path out = fresh_dir("cli_train_hybrid") / "run";
  const CliRun r = run_cli("train --layers 4 --d-model 32 --heads 4 --seq-len 16 --batch 4 --steps 3 "
                           "--layer-kinds gated-deltanet,grouped --out " + shell_quote(out.string()));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  // d 8: two softmax layers cache 2 · 4 · 8 floats per token each; two Gated DeltaNet layers keep 4 · 8 · 8 floats
  CHECK(contains(r.out, "model: Gated DeltaNet + softmax (layers 1, 3) "
                        "[gated-deltanet,grouped,gated-deltanet,grouped] L=4 d_model=32 H=4 G=4 head_dim=8"));
  CHECK(contains(r.out, "KV cache " + std::to_string(2 * 2 * 4 * 8 * 4) + " bytes/token"));
  CHECK(contains(r.out, "a fixed state of " + std::to_string(2 * 4 * 8 * 8 * 4) + " bytes"));
  const auto cfg = nlohmann::json::parse(read_file(out / "config.json", 1 << 20));
  CHECK(cfg["model_type"] == "attnscope_linear");
  CHECK(cfg["attention_kind"] == "hybrid");
  CHECK(cfg["layer_types"] == nlohmann::json({"gated-deltanet", "grouped", "gated-deltanet", "grouped"}));

  const fs::path maps = fresh_dir("cli_train_hybrid_compute");
  const CliRun c = run_cli("compute --checkpoint " + shell_quote(out.string()) + " --ids 1,2,3,4,1,2,3 --out " +
                           shell_quote(maps.string()));
  INFO(c.err);
  REQUIRE(c.exit_code == 0);
  const auto model = nlohmann::json::parse(read_file(maps / "model.json", 1 << 20));
  const auto& layers = model.at("layer_maps");
  REQUIRE(layers.size() == 4);
  const NpyArray att = read_npy(maps / "attentions.npy", 4);
  const int T = 7, H = 4;
  for (int l = 0; l < 4; ++l) {
    CAPTURE(l);
    if (l % 2 == 0) {
      CHECK(layers[size_t(l)].at("type") == "Gated DeltaNet");
      CHECK(layers[size_t(l)].at("file") == "linear_maps.npy");
    } else {  // a softmax layer: every row of every head sums to 1
      CHECK(layers[size_t(l)].at("type") == "attention");
      CHECK(layers[size_t(l)].at("file") == "attentions.npy");
      for (int h = 0; h < H; ++h)
        for (int i = 0; i < T; ++i) {
          const float* row = att.data.data() + ((size_t(l) * H + size_t(h)) * T + size_t(i)) * T;
          CHECK(std::accumulate(row, row + T, 0.0) == doctest::Approx(1.0).epsilon(1e-5));
        }
    }
  }
  CHECK(read_npy(maps / "linear_maps.npy", 4).shape == std::vector<int64_t>{2, H, T, T});
}

TEST_CASE("train cli: a bad --layer-kinds exits 2 saying what is valid, and leaves nothing behind") {
  const fs::path root = fresh_dir("cli_train_hybrid_bad");
  const struct {
    std::string flags, says;
  } cases[] = {
      {"--layer-kinds gated-deltanet,softmax", "\"softmax\""},  // an unknown word: every valid one named
      {"--layer-kinds gated-deltanet,softmax", "grouped | mla | linear"},
      {"--layer-kinds grouped", "not a hybrid"},
      {"--layer-kinds mamba2", "not a hybrid"},
      {"--layer-kinds mla,deltanet", "MLA"},
      {"--layer-kinds deltanet,grouped --attention deltanet", "leave --attention out"},
      {"--layer-kinds deltanet,grouped --window 4", "window"},
      {"--layers 1 --layer-kinds deltanet,grouped", "not a hybrid"},
  };
  int i = 0;
  for (const auto& k : cases) {
    CAPTURE(k.flags);
    const fs::path out = root / ("run" + std::to_string(i++));
    const CliRun r = run_cli("train --d-model 32 --seq-len 16 --steps 2 " + k.flags + " --out " + shell_quote(out.string()));
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, k.says));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_FALSE(fs::exists(out));
  }
}
