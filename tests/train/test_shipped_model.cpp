// The model attnscope ships in assets/models/induction (made by its own trainer, assets/models/README.md):
// it opens through model::open like any Hugging Face checkpoint, is small, and has a real induction
// head in layer 2 on a repeated random sequence (and none in layer 1, which cannot form one alone).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

#include "attnscope/io/assets.h"
#include "attnscope/model/forward.h"
#include "attnscope/model/model.h"
#include "attnscope/train/tasks.h"

using namespace attnscope;

TEST_CASE("shipped model: assets/models/induction has a layer-2 induction head above 0.5 on the probe") {
  const std::filesystem::path dir = assets_dir() / "models" / "induction";
  uintmax_t bytes = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) bytes += e.file_size();
  CHECK(bytes < 2u * 1024u * 1024u);
  const std::shared_ptr<const model::Model> m = model::open(dir);
  // The probe the trainer measures induction on: a random half of n tokens from the task's 32 symbols, repeated.
  train::TaskSettings ts;
  ts.kind = train::TaskKind::induction;
  const train::Task task(ts);
  const int n = 32;
  const std::vector<int32_t> ids = task.induction_probe(n);
  REQUIRE(ids.size() == size_t(2 * n));
  const model::ForwardResult r = model::forward(*m, ids);
  REQUIRE(r.layers == 2);
  const int H = r.heads, T = r.tokens;
  std::vector<float> best(2, 0.0f);
  for (int l = 0; l < 2; ++l) {
    const std::vector<float> scores = train::induction_scores(r.attentions.data() + size_t(l) * H * T * T, H, T, n);
    best[size_t(l)] = *std::max_element(scores.begin(), scores.end());
  }
  INFO("best induction score: layer 1 " << best[0] << ", layer 2 " << best[1]);
  CHECK(best[1] > 0.5f);
  CHECK(best[0] < 0.3f);
  // And it predicts the second copy: the most probable next token is the one the first copy had.
  int right = 0;
  for (int i = n; i + 1 < T; ++i) right += r.top[size_t(i)][0].id == ids[size_t(i + 1)] ? 1 : 0;
  CHECK(right >= (T - n - 1) * 9 / 10);
}
