// The Checkpoint window on the dense families and multimodal containers (make_dense_fixtures.py): a
// container shows its text tower's family and says its vision tower is not drawn, with the number of
// tensors skipped, in English and Chinese; Pythia and OLMo 2 show their own family names.
#include <filesystem>
#include <string>
#include <vector>

#include "attnscope/model/model.h"
#include "gui_run.h"
#include "test_paths.h"

namespace attnscope::test {
namespace {

namespace fs = std::filesystem;

fs::path dense_fixture(const std::string& name) { return fs::path(ATTNSCOPE_SOURCE_DIR) / "tests/fixtures/models" / name; }

}  // namespace

TEST_SUITE("gui_dense") {
  TEST_CASE("checkpoint window: a multimodal container shows its text tower and says the vision tower is not drawn") {
    const std::string name = "gemma3_4b_container_bf16";
    const auto m = model::open(dense_fixture(name));
    REQUIRE(m->skipped_tensors == 5);
    const WindowRun w = run_window("dense_gemma3", "--checkpoint " + shell_quote(dense_fixture(name).string()) +
                                                       " --text " + shell_quote("ids: 5 17 42 9 33 60 5 17 42"));
    const std::vector<std::string> texts = texts_of(w, "###checkpoint");
    INFO(joined(texts));
    CHECK(shows(texts, name));
    CHECK(shows(texts, "gemma3 → gemma3_text (Gemma)"));
    CHECK(shows(texts, "vision tower"));
    CHECK(shows(texts, "not drawn: 5 tensors skipped"));
    CHECK(shows(texts, std::to_string(m->config.layers)));
    // The Heads view draws the text tower's heads.
    CHECK(int(w.layout.at("heads").size()) == m->config.heads);
    // In Chinese too.
    const WindowRun zh = run_window("dense_gemma3_zh", "--language zh --checkpoint " +
                                                           shell_quote(dense_fixture(name).string()) + " --text " +
                                                           shell_quote("ids: 5 17 42 9 33 60 5 17 42"));
    const std::vector<std::string> zh_texts = texts_of(zh, "###checkpoint");
    INFO(joined(zh_texts));
    CHECK(shows(zh_texts, "视觉塔"));
    CHECK(shows(zh_texts, "未绘制：跳过 5 个张量"));
  }

  TEST_CASE("checkpoint window: Pythia and OLMo 2 show their families; a text-only model has no vision row") {
    for (const auto& entry : std::vector<std::pair<std::string, std::string>>{
             {"pythia160m_parallel_f16", "gpt_neox (GPT-NeoX)"}, {"olmo2_postnorm_f32", "olmo2 (OLMo 2)"}}) {
      const std::string name = entry.first;  // no structured binding: clang's CAPTURE cannot name one
      CAPTURE(name);
      const WindowRun w = run_window("dense_" + name, "--checkpoint " + shell_quote(dense_fixture(name).string()) +
                                                          " --text " + shell_quote("ids: 5 17 42 9 33 60"));
      const std::vector<std::string> texts = texts_of(w, "###checkpoint");
      INFO(joined(texts));
      CHECK(shows(texts, entry.second));
      CHECK_FALSE(shows(texts, "vision tower"));
    }
  }
}

}  // namespace attnscope::test
