// End-to-end tests of `compute --checkpoint` on the dense families and multimodal containers of
// make_dense_fixtures.py: Pythia (gpt_neox), OLMo 2, and the gemma3 / mistral3 / ministral3 containers,
// whose run says that the vision tower was not drawn; a container without a text tower exits 2.
#include <doctest/doctest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "attnscope/io/file_io.h"
#include "attnscope/io/npy.h"
#include "check.h"
#include "model/checkpoint_fixtures.h"
#include "run_cli.h"

using namespace attnscope;
using namespace attnscope::test;
namespace fs = std::filesystem;

TEST_CASE("cli dense: compute --checkpoint runs Pythia, OLMo 2 and the containers' text towers as PyTorch does") {
  struct Case {
    std::string fixture, summary;
    int skipped;  // the container's unread vision tensors (−1: not a container)
  };
  for (const Case& c : {Case{"pythia160m_parallel_f16", "(gpt_neox, 2 layers, 2 heads, 2 kv heads): 20 tokens", -1},
                        Case{"olmo2_postnorm_f32", "(olmo2, 2 layers, 4 heads, 4 kv heads): 20 tokens", -1},
                        Case{"gemma3_4b_container_bf16",
                             "(gemma3_text (gemma3's text tower; vision tower not drawn: 5 tensors skipped), 6 layers", 5},
                        Case{"mistral_small31_container_bf16",
                             "(mistral (mistral3's text tower; vision tower not drawn: 4 tensors skipped), 2 layers", 4},
                        Case{"ministral3_3b_container_bf16",
                             "(ministral3 (ministral3's text tower; vision tower not drawn: 3 tensors skipped)", 3}}) {
    CAPTURE(c.fixture);
    const fs::path out = fresh_dir("cli_dense") / c.fixture;
    const auto ids = fixture_more_ids(c.fixture).at(0);  // 20 tokens: past the windows and Ministral's context 8
    const CliRun r = run_cli("compute --checkpoint " + quoted(model_fixture(c.fixture)) + " --ids " + ids_arg(ids) +
                             " --out " + quoted(out));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(contains(r.out, c.summary));
    const NpyArray att = read_npy(out / "attentions.npy", 4);
    const auto ref = fixture_reference(c.fixture, "more.0.attentions").values;
    REQUIRE(att.data.size() == ref.size());
    double worst = 0;
    for (size_t i = 0; i < ref.size(); ++i) worst = std::max(worst, double(std::abs(att.data[i] - ref[i])));
    CHECK(worst <= 1e-5);
    const auto model = nlohmann::json::parse(read_file(out / "model.json", 1 << 20));
    if (c.skipped >= 0) {
      CHECK(model["vision_tensors_skipped"] == c.skipped);
      CHECK(!model["container"].get<std::string>().empty());
    } else {
      CHECK_FALSE(model.contains("container"));
    }
  }
}

TEST_CASE("cli dense: a container without text_config or without text-tower weights exits 2 naming the problem") {
  const fs::path out = fresh_dir("cli_dense_bad");
  fs::path dir = copy_fixture("mistral_small31_container_bf16", "cli_dense_no_text_config");
  auto j = nlohmann::json::parse(read_file(dir / "config.json", 1 << 20));
  j.erase("text_config");
  write_file_atomic(dir / "config.json", j.dump());
  CliRun r = run_cli("compute --checkpoint " + quoted(dir) + " --ids 1,2 --out " + quoted(out / "x"));
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "error: "));
  CHECK(contains(r.err, "config.json"));
  CHECK(contains(r.err, "no \"text_config\""));
  CHECK(contains(r.err, "mistral or ministral3"));
  dir = copy_fixture("gemma3_4b_container_bf16", "cli_dense_no_tower");
  rewrite_header(dir / "model.safetensors", [](nlohmann::json& h) {
    nlohmann::json renamed;
    for (auto it = h.begin(); it != h.end(); ++it)
      renamed[it.key().rfind("language_model.", 0) == 0 ? "text_model." + it.key().substr(15) : it.key()] = it.value();
    h = renamed;
  });
  r = run_cli("compute --checkpoint " + quoted(dir) + " --ids 1,2 --out " + quoted(out / "x"));
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "model.safetensors"));
  CHECK(contains(r.err, "no text tower"));
  CHECK(count_files(out) == 0);
}
