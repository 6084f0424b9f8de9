// Designed heads: every pattern's claim measured on many English and Chinese sentences, the designed
// embedding, the position kernels, MHA → GQA/MQA blending, scenes and the command line.
//
// Sections: sentences · embedding and kernels · pattern claims · GQA blending · scene and CLI
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "attnscope/analysis/analysis.h"
#include "attnscope/attention/designed_heads.h"
#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"
#include "attnscope/classroom/lessons.h"
#include "attnscope/io/npy.h"
#include "attnscope/core/rng.h"
#include "attnscope/scene/scene_json.h"
#include "check.h"
#include "run_cli.h"
#include "analysis_helpers.h"

using namespace attnscope;
using namespace attnscope::test;
namespace fs = std::filesystem;

// ---- sentences ----------------------------------------------------------------------------------
namespace {

// The sample sentences plus generated ones: English words (with repeats and punctuation, or none)
// and Chinese characters (with and without ，。！), 1 to 60 tokens, from a fixed seed.
std::vector<std::string> many_sentences() {
  std::vector<std::string> out;
  for (const SampleSentence& s : load_sample_sentences()) out.push_back(s.text);
  const char* words[] = {"the", "cat", "dog", "sat", "on", "mat", "because", "it", "was", "tired", "a", "bird",
                         "sang", "and", "then", "flew", "away", "The", "sun", "rose", "over", "hills", "we",
                         "saw", "attention", "heads", "look", "at", "tokens", "again"};
  const char* marks[] = {",", ".", "!", "?", ";", ":"};
  const char* hanzi[] = {"我", "喜", "欢", "打", "篮", "球", "小", "猫", "坐", "在", "垫", "子", "上", "因",
                         "为", "它", "累", "了", "今", "天", "气", "很", "好", "们", "去", "公", "园"};
  const char* zh_marks[] = {"，", "。", "！", "？", "、"};
  Rng rng(2024);
  auto pick = [&](int n) { return int(rng.next_u64() % uint64_t(n)); };
  for (int k = 0; k < 120; ++k) {
    const int length = 1 + pick(60);
    const bool with_punct = k % 3 != 0;
    std::string s;
    if (k % 2 == 0) {
      for (int t = 0; t < length; ++t) {
        if (with_punct && t > 0 && pick(5) == 0) s += marks[pick(6)];
        else s += std::string(s.empty() ? "" : " ") + words[pick(30)];
      }
    } else {
      for (int t = 0; t < length; ++t) s += (with_punct && t > 0 && pick(5) == 0) ? zh_marks[pick(5)] : hanzi[pick(27)];
    }
    out.push_back(s);
  }
  return out;
}

Analysis analyse_designed(const std::string& text, const std::vector<std::string>& patterns, bool causal = false,
                          AttentionKind kind = AttentionKind::mha, int groups = 0) {
  Scene s;
  s.input.text = text;
  s.model.weights = WeightSource::designed;
  s.model.designed = patterns;
  s.model.kind = kind;
  s.model.groups = groups;
  s.model.causal = causal;
  return analyse(s);
}

// The lower-cased texts of the tokens, as the designed embedding keys them.
std::vector<std::string> token_keys(const AttentionAnalysis& att) {
  std::vector<std::string> keys;
  for (const Token& t : att.tokens) keys.push_back(lower_ascii(t.text));
  return keys;
}

int row_argmax(const Mat& p, int i) {
  Eigen::Index j = 0;
  p.row(i).maxCoeff(&j);
  return int(j);
}

// Counts rows that satisfy a claim, over every sentence.
struct Tally {
  int rows = 0, hits = 0;
  void add(bool ok) { rows += 1, hits += ok; }
  double share() const { return rows ? double(hits) / rows : 0; }
};

}  // namespace

// ---- embedding and kernels ----------------------------------------------------------------------

TEST_CASE("designed embedding: position, feature and identity channels as documented") {
  const std::vector<Token> tokens = tokenize("The cat sat, the cat.");  // The cat sat , the cat .
  const Mat x = designed_embedding(tokens, 128, 42);
  REQUIRE(x.rows() == 7);
  REQUIRE(x.cols() == 128);
  for (int p = 0; p < 7; ++p)
    for (int f = 0; f < designed_frequencies; ++f) {
      const double angle = std::acos(-1.0) * p / std::ldexp(1.0, f);
      CHECK(x(p, 2 * f) == doctest::Approx(std::cos(angle)).epsilon(1e-6));
      CHECK(x(p, 2 * f + 1) == doctest::Approx(std::sin(angle)).epsilon(1e-6));
    }
  const float first[] = {1, 0, 0, 0, 0, 0, 0}, punct[] = {0, 0, 0, 1, 0, 0, 1}, first_occ[] = {1, 1, 1, 1, 0, 0, 1};
  for (int p = 0; p < 7; ++p) {
    CAPTURE(p);
    CHECK(x(p, designed_channel_constant) == 1);
    CHECK(x(p, designed_channel_first) == first[p]);
    CHECK(x(p, designed_channel_punct) == punct[p]);
    CHECK(x(p, designed_channel_first_occurrence) == first_occ[p]);
    for (int c = designed_channel_identity; c < 128; ++c) CHECK(std::abs(x(p, c)) == 1);
  }
  // Same lower-cased word → same identity, in this sentence and in another one.
  CHECK(x.row(0).tail(100) == x.row(4).tail(100));
  CHECK(x.row(1).tail(100) == x.row(5).tail(100));
  CHECK(x.row(1).tail(100) != x.row(2).tail(100));
  const Mat other = designed_embedding(tokenize("a cat"), 128, 42);
  CHECK(other.row(1).tail(100) == x.row(1).tail(100));
  CHECK(designed_embedding(tokens, 128, 43).row(1).tail(100) != x.row(1).tail(100));  // the seed matters

  CHECK_THROWS_WITH_AS(designed_embedding(tokens, 32, 1), doctest::Contains("needs d_model between 64"), InputError);
  CHECK_THROWS_AS(designed_embedding({}, 64, 1), InputError);
}

TEST_CASE("designed kernels: zero at the peak, one at ±1, and every other offset up to ±2048 farther") {
  CHECK(designed_kernel_sharp(0) == 0);
  CHECK(designed_kernel_window(0) == 0);
  CHECK(designed_kernel_sharp(1) == doctest::Approx(1));
  CHECK(designed_kernel_sharp(-1) == doctest::Approx(1));
  CHECK(designed_kernel_window(1) == doctest::Approx(1));
  for (int d = 2; d <= 2049; ++d) {
    CAPTURE(d);
    REQUIRE(designed_kernel_sharp(d) > 1.5);
    REQUIRE(designed_kernel_window(d) > 3);
    // The window grows at least as fast as nearer offsets: the local head fades with distance.
    REQUIRE(designed_kernel_window(d) >= designed_kernel_window(2));
  }
  // κ_window grows like d² near 0, κ_sharp about like |d|.
  CHECK(designed_kernel_window(2) > 3 * designed_kernel_window(1));
  CHECK(designed_kernel_sharp(2) < 2.5 * designed_kernel_sharp(1));
}

TEST_CASE("designed patterns: names parse, unknown names list the valid ones, labels in both languages") {
  CHECK(split_designed_list("previous, self,first ,punct") == std::vector<std::string>{"previous", "self", "first", "punct"});
  for (DesignedPattern p : all_designed_patterns()) {
    CHECK(parse_designed_pattern(to_string(p)) == p);
    CHECK_FALSE(designed_pattern_label(p).en.empty());
    CHECK_FALSE(designed_pattern_label(p).zh.empty());
    CHECK_FALSE(designed_pattern_description(p).zh.empty());
    // The caption's short name: the CLI name in English, at most three characters in Chinese.
    CHECK(designed_pattern_caption(p).en == to_string(p));
    CHECK_FALSE(designed_pattern_caption(p).zh.empty());
    CHECK(designed_pattern_caption(p).zh.size() <= 9);  // UTF-8: three CJK characters
  }
  CHECK_THROWS_WITH_AS(split_designed_list("previous,sink"),
                       doctest::Contains("pattern 2: unknown designed pattern 'sink' (valid: previous, next, self, "
                                         "first, punct, local, repeat, broad)"),
                       InputError);
  CHECK_THROWS_WITH_AS(split_designed_list("previous,,self"), doctest::Contains("pattern 2 is empty"), InputError);
  CHECK_THROWS_WITH_AS(parse_designed_patterns({}), doctest::Contains("at least one pattern"), InputError);
  CHECK_THROWS_WITH_AS(parse_designed_patterns(std::vector<std::string>(65, "self")),
                       doctest::Contains("limit is 64 heads"), InputError);
}

TEST_CASE("designed weights: nn.Linear shapes, d_k = 64, identity V and O, no biases") {
  const AttentionWeights w = designed_weights({DesignedPattern::previous, DesignedPattern::repeat, DesignedPattern::broad});
  const AttentionShape shape{192, 3, 3};
  validate_weights(w, shape);
  CHECK(w.wv == Mat::Identity(192, 192));
  CHECK(w.wo == Mat::Identity(192, 192));
  CHECK(w.bq.size() == 0);
  CHECK(w.wk.middleRows(128, 64).isZero());  // broad: all-zero keys
  // Every head reads the same query map.
  CHECK(w.wq.middleRows(0, 64) == w.wq.middleRows(64, 64));
  CHECK(w.wq.middleRows(0, 64) == w.wq.middleRows(128, 64));
}

// ---- pattern claims -----------------------------------------------------------------------------

TEST_CASE("designed heads: each pattern's claim holds on many English and Chinese sentences") {
  const std::vector<std::string> patterns = {"previous", "next", "self", "first", "punct", "local", "repeat", "broad"};
  Tally previous, next, self, first, punct_rows, punct_none, local, repeat_earlier, repeat_new, broad;
  int sentences = 0, zh_sentences = 0, with_repeats = 0;
  for (const std::string& text : many_sentences()) {
    const Analysis a = analyse_designed(text, patterns);
    const AttentionAnalysis& att = *a.attention;
    const auto& probs = att.result.probs;
    const int t_count = int(att.x.rows());
    ++sentences;
    zh_sentences += att.tokens[0].kind == TokenKind::cjk;
    const std::vector<std::string> keys = token_keys(att);
    bool has_punct = false;
    for (const Token& t : att.tokens) has_punct |= t.kind == TokenKind::punctuation;

    for (int i = 0; i < t_count; ++i) {
      if (i >= 1) previous.add(row_argmax(probs[0], i) == i - 1);
      if (i + 1 < t_count) next.add(row_argmax(probs[1], i) == i + 1);
      self.add(row_argmax(probs[2], i) == i);
      first.add(probs[3](i, 0) >= 0.5f);
      const int pj = row_argmax(probs[4], i);
      if (has_punct) punct_rows.add(att.tokens[size_t(pj)].kind == TokenKind::punctuation);
      else punct_none.add(pj == 0);
      double window = 0;
      for (int j = std::max(0, i - 2); j <= std::min(t_count - 1, i + 2); ++j) window += probs[5](i, j);
      local.add(window >= 0.9);
      double earlier = 0;
      bool has_earlier = false;
      for (int j = 0; j < i; ++j)
        if (keys[size_t(j)] == keys[size_t(i)]) has_earlier = true, earlier += probs[6](i, j);
      if (has_earlier) repeat_earlier.add(earlier > 0.5);
      else repeat_new.add(row_argmax(probs[6], i) == i);
      with_repeats += has_earlier && i == t_count - 1;
    }
    if (t_count >= 2) broad.add(head_stats(att.result.probs, false).normalised_entropy[7] >= 0.99);
  }
  MESSAGE("sentences " << sentences << " (Chinese " << zh_sentences << "), rows: previous " << previous.share()
                       << ", next " << next.share() << ", self " << self.share() << ", first " << first.share()
                       << ", punct " << punct_rows.share() << "/" << punct_none.share() << ", local " << local.share()
                       << ", repeat " << repeat_earlier.share() << " of " << repeat_earlier.rows << "/"
                       << repeat_new.share() << ", broad " << broad.share());
  CHECK(sentences >= 100);
  CHECK(zh_sentences >= 50);
  CHECK(repeat_earlier.rows >= 200);  // the generated sentences repeat words often enough to test it
  CHECK(punct_none.rows >= 100);
  // The thresholds, then what the construction actually guarantees.
  CHECK(previous.share() >= 0.95);
  CHECK(previous.share() == 1.0);
  CHECK(next.share() == 1.0);
  CHECK(self.share() == 1.0);
  CHECK(first.share() == 1.0);
  CHECK(punct_rows.share() == 1.0);
  CHECK(punct_none.share() == 1.0);
  CHECK(local.share() == 1.0);
  CHECK(repeat_earlier.share() == 1.0);
  CHECK(repeat_new.share() == 1.0);
  CHECK(broad.share() == 1.0);
}

TEST_CASE("designed heads: the two sample sentences show every pattern at full strength") {
  // "The cat sat on the mat because it was tired." and "我喜欢打篮球" (no punctuation, no repeat).
  const Analysis en = analyse_designed("The cat sat on the mat because it was tired.", {"previous", "first", "punct", "repeat"});
  const auto& p = en.attention->result.probs;
  for (int i = 1; i < 11; ++i) CHECK(p[0](i, i - 1) > 0.999f);
  for (int i = 0; i < 11; ++i) CHECK(p[1](i, 0) > 0.99f);
  for (int i = 0; i < 11; ++i) CHECK(p[2](i, 10) > 0.99f);  // the full stop
  CHECK(p[3](4, 0) > 0.99f);                                // "the" → "The"
  const Analysis zh = analyse_designed("我喜欢打篮球", {"next", "punct", "local", "broad"});
  const auto& q = zh.attention->result.probs;
  for (int i = 0; i < 5; ++i) CHECK(q[0](i, i + 1) > 0.999f);
  for (int i = 0; i < 6; ++i) CHECK(q[1](i, 0) > 0.95f);  // no punctuation: the first token (logit 5 vs 0)
  for (int i = 0; i < 6; ++i) check_close(q[3].row(i), Mat::Constant(1, 6, 1.0f / 6), 1e-6, "broad row");
}

TEST_CASE("designed heads: positional patterns hold at the token limit, and under a causal mask") {
  std::string text;
  for (int k = 0; k < 2048; ++k) text += (k ? " w" : "w") + std::to_string(k % 97);
  const Analysis a = analyse_designed(text, {"previous", "next", "local"});
  const auto& p = a.attention->result.probs;
  for (int i = 0; i < 2048; ++i) {
    if (i >= 1) REQUIRE(row_argmax(p[0], i) == i - 1);
    if (i < 2047) REQUIRE(row_argmax(p[1], i) == i + 1);
    double window = 0;
    for (int j = std::max(0, i - 2); j <= std::min(2047, i + 2); ++j) window += p[2](i, j);
    REQUIRE(window >= 0.9);
  }

  const Analysis c = analyse_designed("The cat sat on the mat because it was tired.", {"previous", "next", "broad"}, true);
  const auto& q = c.attention->result.probs;
  for (int i = 0; i < 11; ++i) {
    if (i >= 1) CHECK(row_argmax(q[0], i) == i - 1);
    CHECK(row_argmax(q[1], i) == i);  // the next token is masked: the nearest allowed key is the token itself
    for (int j = 0; j <= i; ++j) CHECK(q[2](i, j) == doctest::Approx(1.0 / (i + 1)));
  }
  CHECK(stats_of(c).normalised_entropy[2] == doctest::Approx(1.0));
}

// ---- GQA blending -------------------------------------------------------------------------------

TEST_CASE("designed heads: GQA/MQA pool the designed MHA exactly as convert_mha_to_grouped does") {
  const std::vector<std::string> names = {"previous", "next", "first", "punct"};
  const Analysis a = analyse_designed("The cat sat on the mat because it was tired.", names, false, AttentionKind::gqa, 2);
  const AttentionWeights expected = convert_mha_to_grouped(designed_weights(parse_designed_patterns(names)), 4, 2);
  check_close(a.attention->weights.wk, expected.wk, 0, "W_K");
  check_close(a.attention->weights.wv, expected.wv, 0, "W_V");
  check_close(a.attention->weights.wq, expected.wq, 0, "W_Q");
  CHECK(a.attention->shape.groups == 2);
  CHECK(a.scene.model.d_model == 256);
  // G = H: the conversion is the identity, and there is no drift to report.
  const Analysis mha = analyse_designed("The cat sat on the mat because it was tired.", names);
  CHECK(stats_of(mha).drift_from_mha.empty());
  CHECK(mha_probs_of(mha).empty());
  check_close3(mha_probs_of(a), mha.attention->result.probs, 0, "the MHA base");
}

TEST_CASE("designed heads: sharing K/V blends the patterns of a group by a measured amount") {
  const std::string text = "The cat sat on the mat because it was tired.";
  const Analysis mha = analyse_designed(text, {"previous", "self"});
  const Analysis mqa = analyse_designed(text, {"previous", "self"}, false, AttentionKind::mqa);
  const auto& before = mha.attention->result.probs;
  const auto& after = mqa.attention->result.probs;
  // Both query heads now see the mean of the two key maps: half on i − 1, half on i.
  for (int h = 0; h < 2; ++h)
    for (int i = 1; i < 11; ++i) {
      CAPTURE(h);
      CAPTURE(i);
      CHECK(after[h](i, i - 1) == doctest::Approx(0.5).epsilon(0.01));
      CHECK(after[h](i, i) == doctest::Approx(0.5).epsilon(0.01));
    }
  // The pooled map differs from both originals, measured by the JS divergence; drift is that number.
  const std::vector<double>& drift = stats_of(mqa).drift_from_mha;
  REQUIRE(drift.size() == 2);
  for (int h = 0; h < 2; ++h) {
    CHECK(drift[h] == doctest::Approx(mean_js_divergence(after[h], before[h])));
    CHECK(mean_js_divergence(after[0], before[h]) > 0.15);
  }
  // Each row i ≥ 1 moved from one-hot to (½, ½): JS = ½·ln(4/3) + ¼·ln(2/3) + ¼·ln 2; row 0 did not move.
  const double one_row = 0.5 * std::log(4.0 / 3) + 0.25 * std::log(2.0 / 3) + 0.25 * std::log(2.0);
  CHECK(drift[0] == doctest::Approx(one_row * 10 / 11).epsilon(0.01));
  CHECK(drift[1] == doctest::Approx(one_row * 10 / 11).epsilon(0.01));
  // The two pooled heads are now the same map; before, they were far apart.
  CHECK(stats_of(mqa).js_divergence(0, 1) < 1e-6);
  CHECK(stats_of(mha).js_divergence(0, 1) > 0.6);

  // GQA with two groups: only heads that share a group blend.
  const Analysis gqa = analyse_designed(text, {"previous", "next", "self", "self"}, false, AttentionKind::gqa, 2);
  const auto& g = stats_of(gqa).drift_from_mha;
  REQUIRE(g.size() == 4);
  CHECK(g[0] > 0.1);
  CHECK(g[1] > 0.1);
  CHECK(g[2] == doctest::Approx(0).epsilon(1e-6));  // self + self: nothing to blend
  CHECK(g[3] == doctest::Approx(0).epsilon(1e-6));
  const auto& gp = gqa.attention->result.probs;
  for (int i = 1; i < 10; ++i)  // previous + next → a band over i − 1, i, i + 1
    for (int d = -1; d <= 1; ++d) CHECK(gp[0](i, i + d) == doctest::Approx(1.0 / 3).epsilon(0.02));
}

// ---- scene and CLI ------------------------------------------------------------------------------

TEST_CASE("designed heads: scenes round-trip the pattern list and analyse() checks it") {
  Scene s;
  s.model.weights = WeightSource::designed;
  s.model.designed = {"previous", "repeat", "broad"};
  s.model.kind = AttentionKind::mqa;
  const Scene back = scene_from_json(nlohmann::json::parse(scene_to_json(s).dump()));
  CHECK(back.model.weights == WeightSource::designed);
  CHECK(back.model.designed == s.model.designed);
  CHECK(scene_to_json(back) == scene_to_json(s));
  CHECK(parse_weight_source("designed") == WeightSource::designed);
  CHECK(effective_heads(s.model) == 3);
  const Analysis a = analyse(s);
  CHECK(a.scene.model.heads == 3);
  CHECK(a.scene.model.groups == 1);
  CHECK(a.scene.model.d_model == 192);

  Scene bad = s;
  bad.model.designed = {"previous", "sideways"};
  CHECK_THROWS_WITH_AS(analyse(bad), doctest::Contains("unknown designed pattern 'sideways'"), InputError);
  bad.model.designed.clear();
  CHECK_THROWS_WITH_AS(analyse(bad), doctest::Contains("needs a list of patterns"), InputError);
  bad.model.designed = {"previous", "self"};
  bad.model.kind = AttentionKind::single;
  CHECK_THROWS_WITH_AS(analyse(bad), doctest::Contains("kind single has one head"), InputError);
  bad.model.kind = AttentionKind::gqa;
  bad.model.groups = 3;
  CHECK_THROWS_WITH_AS(analyse(bad), doctest::Contains("groups must divide heads"), InputError);
  bad.model.groups = 1;
  bad.input.source = InputSource::tensor;
  bad.input.tensor_path = "x.npy";
  CHECK_THROWS_WITH_AS(analyse(bad), doctest::Contains("designed heads need a sentence"), InputError);
}

TEST_CASE("cli compute --designed: one head per pattern, converted to GQA on request, equal to the engine") {
  const fs::path out = fresh_dir("cli_designed") / "out";
  const CliRun r = run_cli("compute --text 'The cat sat on the mat because it was tired.' --designed "
                           "previous,self,first,punct --kind gqa --groups 2 --out " + shell_quote(out.string()));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(read_npy(out / "probs.npy").shape == std::vector<int64_t>{4, 11, 11});
  CHECK(read_npy(out / "k.npy").shape == std::vector<int64_t>{2, 11, 64});
  CHECK(read_npy(out / "output.npy").shape == std::vector<int64_t>{11, 256});
  const Analysis a =
      analyse_designed("The cat sat on the mat because it was tired.", {"previous", "self", "first", "punct"}, false,
                       AttentionKind::gqa, 2);
  const NpyArray probs = read_npy(out / "probs.npy");
  for (int h = 0; h < 4; ++h)
    for (int i = 0; i < 11; ++i)
      for (int j = 0; j < 11; ++j) REQUIRE(probs.data[size_t((h * 11 + i) * 11 + j)] == a.attention->result.probs[h](i, j));
  const auto trace = nlohmann::json::parse(read_file(out / "trace.json", 1 << 20));
  CHECK(trace["settings"]["weights"] == "designed");
  CHECK(trace["settings"]["heads"] == 4);
  CHECK(trace["settings"]["groups"] == 2);

  // Without --kind: an MHA with one head per pattern.
  const fs::path mha = fresh_dir("cli_designed_mha") / "out";
  REQUIRE(run_cli("compute --text '我喜欢打篮球' --designed next,local,broad --out " + shell_quote(mha.string())).exit_code == 0);
  CHECK(read_npy(mha / "k.npy").shape == std::vector<int64_t>{3, 6, 64});
}

TEST_CASE("cli compute --designed: bad lists and contradicting flags exit 2 and write nothing") {
  const fs::path dir = fresh_dir("cli_designed_bad");
  struct Bad { std::string args; const char* message; };
  const Bad cases[] = {
      {"--text hi --designed previous,sideways", "unknown designed pattern 'sideways' (valid: previous, next, self"},
      {"--text hi --designed previous,,self", "designed pattern 2 is empty"},
      {"--text hi --designed previous,self --heads 3", "--designed lists 2 patterns, one per head, but --heads 3"},
      {"--text hi --designed previous,self --d-model 64", "d_model is 64 x 2 = 128"},
      {"--text hi --designed previous,self --kind single", "--kind single has one head"},
      {"--text hi --designed previous,self,first --kind gqa --groups 2", "groups must divide heads"},
      {"--text hi --designed self --weights w/", "--designed sets the weights itself"},
      {"--input x.npy --designed self", "designed heads need a sentence"},
  };
  for (const Bad& b : cases) {
    const fs::path out = dir / "out";
    const CliRun r = run_cli("compute " + b.args + " --out " + shell_quote(out.string()));
    CAPTURE(b.args);
    CAPTURE(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(b.message) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_FALSE(fs::exists(out));
  }
}
