// The logit lens and the direct logit attribution on the command line (issue 38 item 2): `compute --checkpoint
// --lens` writes lens.h's numbers from one forward, `export --what lens|attribution` writes core/lens_export's
// figures and CSV (the bytes the window's Save buttons write), a layer without softmax heads is named as one part,
// and bad values exit 2 with one "error:" line and no file.
#include <doctest/doctest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "attnscope/io/file_io.h"
#include "attnscope/io/npy.h"
#include "attnscope/model/lens.h"
#include "attnscope/pipeline/pipeline.h"
#include "check.h"
#include "core/lens_export.h"
#include "model/checkpoint_fixtures.h"
#include "run_cli.h"

using namespace attnscope;
using namespace attnscope::test;
namespace fs = std::filesystem;

namespace {

nlohmann::json read_json(const fs::path& p) { return nlohmann::json::parse(read_file(p, 1 << 24)); }

void check_refused(const std::string& args, const std::string& message, const fs::path& out) {
  CAPTURE(args);
  const CliRun r = run_cli(args);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "error: "));
  CHECK(contains(r.err, message));
  CHECK(count_files(out) == 0);
}

std::string checkpoint_args(const std::string& name) {
  return "--checkpoint " + quoted(model_fixture(name)) + " --ids " + ids_arg(fixture_ids(name));
}

// The pipeline's result for the fixture with both lens steps, as the commands run it.
pipeline::Result lens_result(const std::string& name, int32_t token = -1, int top_k = 5) {
  pipeline::Request r;
  r.model = model::open(model_fixture(name));
  r.input.form = pipeline::TokenInput::Form::ids;
  r.input.ids = fixture_ids(name);
  r.layer = -1;
  r.steps = {pipeline::Step::logit_lens, pipeline::Step::logit_attribution};
  r.lens_top_k = top_k;
  r.attribute_token = token;
  return pipeline::run(r);
}

}  // namespace

TEST_CASE("cli lens: compute --lens writes lens.h's lens and attribution of the forward") {
  const std::string name = "gpt2_prefix_f32";
  const fs::path out = fresh_dir("cli_lens_compute");
  const CliRun run = run_cli("compute " + checkpoint_args(name) + " --lens --lens-top-k 3 --attribute-position 2 --out " +
                             quoted(out));
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const auto m = model::open(model_fixture(name));
  const auto ids = fixture_ids(name);
  const model::ForwardResult f = model::forward(*m, ids, model::lens_forward_options());
  const model::LogitLens lens = model::logit_lens(*m, f, 3);
  const model::LogitAttribution a = model::direct_logit_attribution(*m, f);
  const int L = lens.layers, T = lens.tokens;
  const NpyArray kl = read_npy(out / "lens_kl.npy");
  CHECK(kl.shape == std::vector<int64_t>{L, T});
  const NpyArray rank = read_npy(out / "lens_rank.npy");
  const NpyArray probs = read_npy(out / "lens_top_probs.npy");
  CHECK(probs.shape == std::vector<int64_t>{L, T, 3});
  for (int l = 0; l < L; ++l)
    for (int t = 0; t < T; ++t) {
      CHECK(kl.data[size_t(l * T + t)] == lens.kl(l, t));
      CHECK(int(rank.data[size_t(l * T + t)]) == lens.final_rank(l, t));
      for (int k = 0; k < 3; ++k)
        CHECK(probs.data[size_t((l * T + t) * 3 + k)] == lens.top[size_t(l)][size_t(t)][size_t(k)].probability);
    }
  for (int t = 0; t < T; ++t) CHECK(int(rank.data[size_t((L - 1) * T + t)]) == 1);  // the last layer is the model
  const auto lj = read_json(out / "lens.json");
  CHECK(lj["final_top"].get<std::vector<int32_t>>() == lens.final_top);
  CHECK(lj["top"][0][0][0]["id"] == lens.top[0][0][0].id);
  const NpyArray values = read_npy(out / "attribution.npy");
  CHECK(values.shape == std::vector<int64_t>{int64_t(a.parts.size()), T});
  for (size_t p = 0; p < a.parts.size(); ++p)
    for (int t = 0; t < T; ++t) CHECK(values.data[p * size_t(T) + size_t(t)] == a.values(int(p), t));
  const auto aj = read_json(out / "attribution.json");
  CHECK(aj["position"] == 2);
  CHECK(aj["target"].get<std::vector<int32_t>>() == a.target);
  CHECK(aj["parts"].size() == a.parts.size());
  CHECK(aj["parts"][0]["label"] == "embedding");
  CHECK(contains(run.out, "attribution of"));
  CHECK(contains(run.out, "at position 2"));
}

TEST_CASE("cli lens: a Mamba-2 hybrid's layers without softmax heads are one part each, said in words") {
  const std::string name = "granite_hybrid_f32";
  const fs::path out = fresh_dir("cli_lens_hybrid");
  const CliRun run = run_cli("compute " + checkpoint_args(name) + " --lens --out " + quoted(out));
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(contains(run.out, "without softmax heads count as one part each"));
  const auto aj = read_json(out / "attribution.json");
  REQUIRE(aj.contains("notes"));
  CHECK(contains(aj["notes"][0].get<std::string>(), "(Mamba-2) has no softmax heads"));
}

TEST_CASE("cli lens: export --what lens and attribution write lens_export's CSV and figures") {
  const std::string name = "qwen2_gqa";
  const fs::path dir = fresh_dir("cli_lens_export");
  const pipeline::Result expected = lens_result(name, 7);
  const fs::path csv = dir / "lens.csv";
  CliRun r = run_cli("export " + checkpoint_args(name) + " --what lens --format csv --out " + quoted(csv));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(read_file(csv, 1 << 24) == lens_csv(expected));
  const fs::path att = dir / "attribution.csv";
  r = run_cli("export " + checkpoint_args(name) + " --what attribution --attribute-token 7 --attribute-position 1 "
              "--format csv --out " + quoted(att));
  REQUIRE(r.exit_code == 0);
  const std::string text = read_file(att, 1 << 24);
  CHECK(text == attribution_csv(expected, 1));
  CHECK(contains(text, "position,input_token,target_id,target_token,part,kind,layer,head,value\n"));
  CHECK(contains(text, "L0H0,head,0,0,"));
  for (const char* what : {"lens", "attribution"})
    for (const char* format : {"png", "svg"}) {
      const fs::path file = dir / (std::string(what) + "." + format);
      r = run_cli("export " + checkpoint_args(name) + " --what " + what + " --format " + format + " --out " + quoted(file));
      CAPTURE(what);
      CAPTURE(format);
      REQUIRE(r.exit_code == 0);
      CHECK(fs::file_size(file) > 1000);
      if (std::string(format) == "svg") CHECK(contains(read_file(file, 1 << 24), "cell-text"));
    }
}

TEST_CASE("cli lens: bad values exit 2 with a clear message and no file") {
  const std::string name = "llama_gqa_bf16_sharded";  // with a tokenizer
  const fs::path out = fresh_dir("cli_lens_bad");
  const std::string base = "compute " + checkpoint_args(name) + " --out " + quoted(out / "o");
  check_refused(base + " --lens --lens-top-k 0", "--lens-top-k must be between 1 and 100", out);
  check_refused(base + " --lens --attribute-token 64", "--attribute-token 64 is outside the vocabulary (ids 0 to 63)", out);
  check_refused(base + " --lens --attribute-token 'the cat sat'", "tokens of this tokenizer", out);
  check_refused(base + " --lens --attribute-position 99", "--attribute-position 99 is past the input's 12 tokens", out);
  check_refused(base + " --attribute-position 1", "go with --lens", out);
  check_refused("compute --text 'the cat' --lens --out " + quoted(out / "o"), "--lens needs --checkpoint", out);
  const std::string exp = "export " + checkpoint_args(name) + " --what lens";
  check_refused(exp + " --format npy --out " + quoted(out / "x.npy"), "exports as png, svg or csv", out);
  check_refused(exp + " --layer 0 --format png --out " + quoted(out / "x.png"), "leave out --layer", out);
  check_refused("export --what attribution --text 'the cat' --format png --out " + quoted(out / "x.png"),
                "need a checkpoint's forward pass", out);
  check_refused("export " + checkpoint_args(name) + " --what heads --layer 0 --attribute-token 3 --format png --out " +
                    quoted(out / "x.png"),
                "go with --what lens or --what attribution", out);
}
