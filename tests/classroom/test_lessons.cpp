// Lessons and sample sentences: all nine lessons load, every step analyses, each lesson shows what
// its text claims; the loader refuses broken files (the assets folder rule: tests/io/test_assets.cpp).
#include <doctest/doctest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "attnscope/analysis/analysis.h"
#include "attnscope/io/assets.h"
#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"
#include "attnscope/classroom/lessons.h"
#include "attnscope/figure/color_scale.h"
#include "run_cli.h"
#include "analysis_helpers.h"

using namespace attnscope;
using namespace attnscope::test;
namespace fs = std::filesystem;

namespace {

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / double(v.size());
}

// A copy of the shipped assets in a fresh folder, to break one file at a time.
fs::path copy_of_assets(const std::string& name) {
  const fs::path dir = fresh_dir(name);
  fs::copy(assets_dir(), dir, fs::copy_options::recursive);
  return dir;
}

}  // namespace

TEST_CASE("lessons: all load in order, in both languages, and every step analyses") {
  const std::vector<Lesson> lessons = load_lessons();
  REQUIRE(lessons.size() >= 5);
  for (size_t k = 0; k < lessons.size(); ++k) {
    const Lesson& l = lessons[k];
    CAPTURE(l.id);
    CHECK(l.number == int(k) + 1);
    for (Language lang : {Language::en, Language::zh}) {
      CHECK(l.title.text(lang).size() >= 6);
      CHECK(l.explanation.text(lang).size() >= 200);  // a few sentences
    }
    REQUIRE_FALSE(l.steps.empty());
    for (const LessonStep& step : l.steps) {
      CHECK_FALSE(step.caption.en.empty());
      CHECK_FALSE(step.caption.zh.empty());
      const Analysis a = analyse(step.scene);
      CHECK((a.attention || a.relpos));
      // the step's colour scale fits its maps (the window refuses the fixed 0–1 scale for signed ones)
      if (a.attention) CHECK_NOTHROW(validate_color_scale(color_scale_of(step.scene.view), true, signed_maps(*a.attention)));
    }
    CHECK_NOTHROW(analyse(l.scene));
  }
}

TEST_CASE("lesson 1: one head and eight heads have the same parameter count, eight maps instead of one") {
  const Lesson l = load_lessons()[0];
  const Analysis one = analyse(l.steps[0].scene), many = analyse(l.steps[1].scene);
  CHECK(one.attention->shape.heads == 1);
  CHECK(many.attention->shape.heads == 8);
  CHECK(one.attention->shape.d_model == many.attention->shape.d_model);
  CHECK(one.attention->trace.params.total() == many.attention->trace.params.total());
  const int64_t c = one.attention->shape.d_model;
  CHECK(one.attention->trace.params.total() == 4 * c * c);  // the 16,384 of the text for C = 64
  CHECK(many.attention->result.probs.size() == 8);
  // The designed step: four heads with four different patterns.
  const Analysis designed = analyse(l.steps[2].scene);
  REQUIRE(stats_of(designed).js_divergence.rows() == 4);
  for (int a = 0; a < 4; ++a)
    for (int b = a + 1; b < 4; ++b) CHECK(stats_of(designed).js_divergence(a, b) > 0.3);
}

TEST_CASE("lesson 2: removing the 1/sqrt(d_k) scale saturates the softmax") {
  const Lesson l = load_lessons()[1];
  REQUIRE(l.steps.size() == 2);
  CHECK(l.steps[0].scene.model.scale_scores);
  CHECK_FALSE(l.steps[1].scene.model.scale_scores);
  const Analysis scaled = analyse(l.steps[0].scene), raw = analyse(l.steps[1].scene);
  CHECK(scaled.attention->shape.head_dim() == 64);
  const auto& es = stats_of(scaled).normalised_entropy;
  const auto& er = stats_of(raw).normalised_entropy;
  for (size_t h = 0; h < es.size(); ++h) CHECK(er[h] < es[h]);
  CHECK(mean(er) < 0.5 * mean(es));
  // Saturation: the largest weight of a row grows from a share to most of the row.
  auto mean_row_max = [](const Analysis& a) {
    double sum = 0, rows = 0;
    for (const Mat& p : a.attention->result.probs)
      for (Eigen::Index i = 0; i < p.rows(); ++i) sum += p.row(i).maxCoeff(), rows += 1;
    return sum / rows;
  };
  CHECK(mean_row_max(scaled) < 0.4);
  CHECK(mean_row_max(raw) > 0.75);
}

TEST_CASE("lesson 3: the causal mask zeroes the upper triangle and sends the next-token head to itself") {
  const Lesson l = load_lessons()[2];
  const Analysis open = analyse(l.steps[0].scene), masked = analyse(l.steps[1].scene);
  CHECK_FALSE(open.scene.model.causal);
  CHECK(masked.scene.model.causal);
  const auto& p = masked.attention->result.probs;
  for (const Mat& head : p)
    for (Eigen::Index i = 0; i < head.rows(); ++i)
      for (Eigen::Index j = i + 1; j < head.cols(); ++j) REQUIRE(head(i, j) == 0);
  REQUIRE(masked.scene.model.designed[1] == "next");
  for (Eigen::Index i = 0; i < p[1].rows(); ++i) {
    Eigen::Index arg = 0;
    p[1].row(i).maxCoeff(&arg);
    CHECK(arg == i);
  }
}

TEST_CASE("lesson 4: MHA → GQA → MQA moves the heads further from their MHA maps, and the cache shrinks") {
  const Lesson l = load_lessons()[3];
  REQUIRE(l.steps.size() == 3);
  const Analysis mha = analyse(l.steps[0].scene), gqa = analyse(l.steps[1].scene), mqa = analyse(l.steps[2].scene);
  CHECK(mha.attention->shape.groups == 4);
  CHECK(gqa.attention->shape.groups == 2);
  CHECK(mqa.attention->shape.groups == 1);
  CHECK(stats_of(mha).drift_from_mha.empty());
  REQUIRE(stats_of(gqa).drift_from_mha.size() == 4);
  for (int h = 0; h < 4; ++h) {
    CHECK(stats_of(gqa).drift_from_mha[h] > 0.01);
    CHECK(stats_of(mqa).drift_from_mha[h] >= stats_of(gqa).drift_from_mha[h] - 1e-9);
  }
  CHECK(mqa.attention->trace.kv_bytes_per_token_fp16 * 4 == mha.attention->trace.kv_bytes_per_token_fp16);
  // The calculator beside it: Llama-2-70B with the numbers the explanation quotes.
  REQUIRE(l.kv_cache.has_value());
  const KvCacheReport r = kv_cache_report(l.kv_cache->input);
  CHECK(r.mha.gib == doctest::Approx(160));
  CHECK(r.gqa.gib == doctest::Approx(20));
  CHECK(r.mqa.gib == doctest::Approx(2.5));
  CHECK_FALSE(r.mha.fits);
  CHECK(r.gqa.fits);
  CHECK(l.explanation.en.find("160 GiB") != std::string::npos);
  CHECK(l.explanation.zh.find("160 GiB") != std::string::npos);
}

TEST_CASE("lesson 5: the attention-made convolution approaches the real one as alpha grows") {
  const Lesson l = load_lessons()[4];
  REQUIRE(l.steps.size() == 4);
  CHECK(l.scene.input.source == InputSource::grid);
  const Analysis wide = analyse(l.steps[0].scene), sharp = analyse(l.steps[1].scene);
  REQUIRE(wide.relpos);
  REQUIRE(sharp.relpos);
  CHECK(sharp.relpos->probs_query.maxCoeff() > wide.relpos->probs_query.maxCoeff());
  const Analysis blurred = analyse(l.steps[2].scene), exact = analyse(l.steps[3].scene);
  REQUIRE(blurred.conv);
  REQUIRE(exact.conv);
  CHECK(exact.conv->alpha > blurred.conv->alpha);
  CHECK(exact.conv->max_abs_interior < 0.01 * blurred.conv->max_abs_interior);
}

TEST_CASE("lesson 8: MLA caches 16 + 8 values a token, a window of 4 keeps a band, sinks keep token 0, a sink logit takes mass, differential maps are signed") {
  const Lesson l = load_lessons()[7];
  REQUIRE(l.steps.size() == 6);
  const Analysis mha = analyse(l.steps[0].scene);
  const AttentionAnalysis& a0 = *mha.attention;
  CHECK(a0.shape.heads == 4);
  CHECK(2 * a0.shape.groups * (a0.shape.d_model / a0.shape.heads) == 128);  // the caption's 2 × 4 × 16
  // MLA: the latent and the shared rotary key are all the cache holds.
  const Analysis mla = analyse(l.steps[1].scene);
  CHECK(mla.scene.model.kind == AttentionKind::mla);
  CHECK(mla.attention->result.c_kv.cols() == 16);
  CHECK(mla.attention->result.k_rope.cols() == 8);
  CHECK(mla.attention->result.c_kv.rows() == mla.attention->result.probs[0].rows());
  // Window 4: each row's mass lies on keys i − 3 … i.
  const Analysis win = analyse(l.steps[2].scene);
  const int T = int(win.attention->labels.size());
  REQUIRE(T > 8);
  for (const Mat& p : win.attention->result.probs)
    for (int i = 0; i < T; ++i)
      for (int j = 0; j < T; ++j) {
        const bool visible = j <= i && j > i - 4;
        if (!visible) CHECK(p(i, j) == 0.0f);
        else CHECK(p(i, j) > 0.0f);
      }
  // StreamingLLM: token 0 stays visible to every query besides the window.
  const Analysis sinks = analyse(l.steps[3].scene);
  for (const Mat& p : sinks.attention->result.probs)
    for (int i = 5; i < T; ++i) {  // key 1 is outside the window from query 5 on
      CHECK(p(i, 0) > 0.0f);
      CHECK(p(i, 1) == 0.0f);
    }
  // gpt-oss: a learned sink logit per head takes part of every row.
  const Analysis logits = analyse(l.steps[4].scene);
  const Mat& share = logits.attention->result.sink_share;
  REQUIRE(share.rows() == 4);
  REQUIRE(share.cols() == T);
  CHECK(share.minCoeff() > 0.0f);
  CHECK(share.maxCoeff() < 1.0f);
  for (int h = 0; h < 4; ++h)
    for (int i = 0; i < T; ++i) CHECK(logits.attention->result.probs[size_t(h)].row(i).sum() + share(h, i) == doctest::Approx(1.0).epsilon(1e-5));
  // Differential attention: signed maps A = P₁ − λ·P₂, λ from its initial 0.2 in layer 0.
  const Analysis diff = analyse(l.steps[5].scene);
  const AttentionResult& d = diff.attention->result;
  REQUIRE(d.probs_1.size() == 4);
  CHECK(std::abs(d.lambda - 0.2) < 0.1);
  float lowest = 0;
  for (const Mat& a : d.probs) lowest = std::min(lowest, a.minCoeff());
  CHECK(lowest < 0.0f);
}

TEST_CASE("lesson 9: without positions equal words score alike; RoPE tells them apart; ALiBi's slopes are the paper's") {
  const Lesson l = load_lessons()[8];
  REQUIRE(l.steps.size() == 6);
  // "The dog saw the cat and the cat saw the dog.": the two "dog" are tokens 1 and 10.
  const Analysis nope = analyse(l.steps[0].scene);
  const AttentionAnalysis& a = *nope.attention;
  REQUIRE(a.labels.size() >= 11);
  REQUIRE(a.labels[1] == "dog");
  REQUIRE(a.labels[10] == "dog");
  for (const Mat& s : a.result.scores) CHECK(s(10, 1) == doctest::Approx(s(10, 10)).epsilon(1e-6));
  const Analysis rope = analyse(l.steps[1].scene);
  bool differs = false;
  for (const Mat& s : rope.attention->result.scores) differs |= std::abs(s(10, 1) - s(10, 10)) > 1e-3f;
  CHECK(differs);
  for (size_t k = 2; k <= 4; ++k) CHECK(l.steps[k].scene.view.view == View::positions);
  CHECK(l.steps[3].scene.model.rope_base == 100);
  CHECK(l.steps[4].scene.model.rope_scaling == RopeScaling::yarn);
  const Analysis alibi = analyse(l.steps[5].scene);
  const std::vector<double>& m = alibi.attention->result.alibi_slopes;
  REQUIRE(m.size() == 8);
  CHECK(m[0] == 0.5);  // 2^(−8·1/8): head 0 is the steepest, as the caption says
  CHECK(m[7] == doctest::Approx(1.0 / 256));
  // Head 0 looks nearby: its mean attention distance is the smallest of the eight.
  auto mean_distance = [&](int h) {
    const Mat& p = alibi.attention->result.probs[size_t(h)];
    double d = 0;
    for (int i = 0; i < p.rows(); ++i)
      for (int j = 0; j <= i; ++j) d += double(p(i, j)) * (i - j);
    return d / double(p.rows());
  };
  for (int h = 1; h < 8; ++h) CHECK(mean_distance(0) < mean_distance(h));
}

TEST_CASE("lessons: the loader names the file and the key of every mistake") {
  const fs::path assets = copy_of_assets("lessons_bad");
  const fs::path file = assets / "lessons" / "03_causal_mask.json";
  const nlohmann::json good = nlohmann::json::parse(read_file(file, 1 << 20));
  auto broken = [&](auto change) {
    nlohmann::json j = good;
    change(j);
    write_file_atomic(file, j.dump(2));
    return file;
  };
  const std::vector<ModelPreset> presets = load_model_presets(assets / "models.json");
  CHECK_THROWS_WITH_AS(load_lesson(broken([](auto& j) { j["colour"] = 1; }), presets),
                       doctest::Contains("unknown key 'colour'"), InputError);
  CHECK_THROWS_WITH_AS(load_lesson(broken([](auto& j) { j["title"].erase("zh"); }), presets),
                       doctest::Contains("\"title\" needs a non-empty \"zh\" text"), InputError);
  CHECK_THROWS_WITH_AS(load_lesson(broken([](auto& j) { j["scene"]["model"]["hedas"] = 4; }), presets),
                       doctest::Contains("ignored unknown scene key 'model.hedas'"), InputError);
  CHECK_THROWS_WITH_AS(load_lesson(broken([](auto& j) { j["steps"][1]["changes"] = {{"model", {{"kind", "moe"}}}}; }), presets),
                       doctest::Contains("step 2: unknown attention kind 'moe'"), InputError);
  CHECK_THROWS_WITH_AS(load_lesson(broken([](auto& j) { j["steps"] = nlohmann::json::array(); }), presets),
                       doctest::Contains("\"steps\" must be a list of 1 to 32 steps"), InputError);
  CHECK_THROWS_WITH_AS(load_lesson(broken([](auto& j) { j["kv_cache"] = {{"model", "gpt5"}, {"seq", 10}}; }), presets),
                       doctest::Contains("kv_cache: unknown model 'gpt5'"), InputError);
  CHECK_THROWS_WITH_AS(load_lesson(broken([](auto& j) { j["attnscope_lesson"] = 2; }), presets),
                       doctest::Contains("lesson format version"), InputError);
  CHECK_THROWS_WITH_AS(load_lesson(broken([](auto& j) { j["steps"][0]["cells"] = {{1, 2, 3}}; }), presets),
                       doctest::Contains("step 1: \"cells\" must be a list of 1 to 16 [query, key] pairs"), InputError);
  CHECK_THROWS_WITH_AS(load_lesson(broken([](auto& j) { j["steps"][0]["cells"] = {{1, -2}}; }), presets),
                       doctest::Contains("pairs of token indices from 0"), InputError);
  CHECK(load_lesson(broken([](auto& j) { j["steps"][0]["cells"] = {{3, 1}}; }), presets).steps[0].cells ==
        std::vector<std::array<int, 2>>{{3, 1}});
  write_file_atomic(file, "{\"number\": 3,");
  CHECK_THROWS_WITH_AS(load_lesson(file, presets), doctest::Contains("is not valid JSON"), InputError);
  // Numbering: two lessons with number 3.
  broken([](auto& j) { j["number"] = 2; });
  CHECK_THROWS_WITH_AS(load_lessons(assets), doctest::Contains("numbers must run 1"), InputError);
}

TEST_CASE("sample sentences: both languages, including the two the issue names") {
  const std::vector<SampleSentence> sentences = load_sample_sentences();
  int en = 0, zh = 0;
  bool cat = false, basketball = false;
  for (const SampleSentence& s : sentences) {
    en += s.language == Language::en;
    zh += s.language == Language::zh;
    cat |= s.text == "The cat sat on the mat because it was tired.";
    basketball |= s.text == "我喜欢打篮球";
  }
  CHECK(en >= 4);
  CHECK(zh >= 4);
  CHECK(cat);
  CHECK(basketball);

  const fs::path dir = fresh_dir("sentences_bad");
  write_file_atomic(dir / "a.json", R"({"sentences": [{"lang": "fr", "text": "bonjour"}]})");
  CHECK_THROWS_WITH_AS(load_sample_sentences(dir / "a.json"), doctest::Contains("sentence 1: unknown language 'fr'"),
                       InputError);
  write_file_atomic(dir / "b.json", R"({"sentences": [{"lang": "en", "text": "  "}]})");
  CHECK_THROWS_WITH_AS(load_sample_sentences(dir / "b.json"), doctest::Contains("no tokens"), InputError);
  CHECK(parse_language("zh") == Language::zh);
  CHECK_THROWS_WITH_AS(parse_language("de"), doctest::Contains("valid: en, zh"), InputError);
}
