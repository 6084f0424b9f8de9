// What each lesson step's caption claims, checked against what the step computes (issue 40, item 5):
// one test per lesson, from the engine's own analysis of the step's scene, for the claims that
// test_lessons.cpp, test_lesson_checkpoint.cpp and test_lesson_training.cpp do not already check.
// A caption whose claim is not what the picture shows fails here.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "analysis_helpers.h"
#include "attnscope/analysis/analysis.h"
#include "attnscope/attention/designed_heads.h"
#include "attnscope/attention/grouped_attention.h"
#include "attnscope/attention/kv_cache.h"
#include "attnscope/attention/weights.h"
#include "attnscope/attention/positions.h"
#include "attnscope/classroom/lessons.h"
#include "attnscope/train/trainer.h"
#include "check.h"
#include "core/pictures.h"

using namespace attnscope;
using namespace attnscope::test;

namespace {

const Lesson& lesson(int number) {
  static const std::vector<Lesson> lessons = load_lessons();
  const auto it = std::find_if(lessons.begin(), lessons.end(), [&](const Lesson& l) { return l.number == number; });
  REQUIRE(it != lessons.end());
  return *it;
}

Eigen::Index argmax_of_row(const Mat& p, Eigen::Index i) {
  Eigen::Index arg = 0;
  p.row(i).maxCoeff(&arg);
  return arg;
}

bool is_punctuation(const std::string& label) {
  return !label.empty() && std::all_of(label.begin(), label.end(), [](unsigned char c) { return std::ispunct(c); });
}

// Does head p show designed pattern `name` on these labels: the key each row's argmax lands on.
// Rows with no such key (row 0 for "previous", the last for "next", rows before the first punctuation)
// are skipped; returns the rows checked.
int check_designed_pattern(const Mat& p, const std::string& name, const std::vector<std::string>& labels, bool causal) {
  const Eigen::Index T = p.rows();
  int checked = 0;
  for (Eigen::Index i = 0; i < T; ++i) {
    CAPTURE(name);
    CAPTURE(i);
    const Eigen::Index arg = argmax_of_row(p, i);
    if (name == "previous" && i >= 1) {
      CHECK(arg == i - 1);
      ++checked;
    } else if (name == "next" && i + 1 < T) {
      CHECK(arg == i + 1);
      ++checked;
    } else if (name == "self") {
      CHECK(arg == i);
      ++checked;
    } else if (name == "first") {
      CHECK(arg == 0);
      ++checked;
    } else if (name == "punct") {
      bool seen = false;
      for (Eigen::Index j = 0; j < T && (!causal || j <= i); ++j) seen |= is_punctuation(labels[size_t(j)]);
      if (!seen) continue;
      CHECK(is_punctuation(labels[size_t(arg)]));
      ++checked;
    }
  }
  return checked;
}

// The designed heads of a step show the patterns they are named after.
void check_designed_heads(const Analysis& a) {
  const std::vector<std::string>& designed = a.scene.model.designed;
  REQUIRE(designed.size() == a.attention->result.probs.size());
  for (size_t h = 0; h < designed.size(); ++h) {
    CAPTURE(h);
    const std::string& n = designed[h];
    if (n != "previous" && n != "next" && n != "self" && n != "first" && n != "punct") continue;  // no single key
    CHECK(check_designed_pattern(a.attention->result.probs[h], designed[h], a.attention->labels, a.scene.model.causal) > 0);
  }
}

double max_abs_difference(const Mat& a, const Mat& b) { return double((a - b).cwiseAbs().maxCoeff()); }

}  // namespace

TEST_CASE("lesson 1 claims: d_k of each step, and the designed heads are previous token, self, first token, punctuation") {
  const Lesson& l = lesson(1);
  REQUIRE(l.steps.size() == 3);
  const Analysis one = analyse(l.steps[0].scene), many = analyse(l.steps[1].scene), designed = analyse(l.steps[2].scene);
  // "d_k = C = 64"
  CHECK(one.attention->shape.head_dim() == 64);
  CHECK(one.attention->shape.d_model == 64);
  // "d_k = 64/8 = 8, eight maps"
  CHECK(many.attention->shape.head_dim() == 8);
  // "(these heads have d_k = 64 each, so C = 256)"
  CHECK(designed.attention->shape.head_dim() == 64);
  CHECK(designed.attention->shape.d_model == 256);
  // "previous token, self, first token, punctuation", in that order, each drawn as named.
  CHECK(designed.scene.model.designed == std::vector<std::string>{"previous", "self", "first", "punct"});
  check_designed_heads(designed);
}

TEST_CASE("lesson 2 claims: the unscaled scores are √d_k = 8 times the scaled ones, on one fixed colour scale") {
  const Lesson& l = lesson(2);
  const Analysis scaled = analyse(l.steps[0].scene), raw = analyse(l.steps[1].scene);
  const double root = std::sqrt(double(scaled.attention->shape.head_dim()));
  CHECK(root == 8);  // "Scores divided by √d_k = 8"
  // "the scores are 8 times larger": the same weights, the same tokens, no division.
  REQUIRE(raw.attention->result.scores.size() == scaled.attention->result.scores.size());
  for (size_t h = 0; h < raw.attention->result.scores.size(); ++h) {
    const Mat& s = scaled.attention->result.scores[h];
    const Mat& r = raw.attention->result.scores[h];
    CHECK(max_abs_difference(r, s * float(root)) <= 1e-4 * double(r.cwiseAbs().maxCoeff()));
  }
  // "soft rows spread over several keys": the scaled rows need more keys to hold 90 % of their weight.
  auto keys_for_90 = [](const Analysis& a) {
    double keys = 0, rows = 0;
    for (const Mat& p : a.attention->result.probs)
      for (Eigen::Index i = 0; i < p.rows(); ++i) {
        std::vector<float> row(p.row(i).data(), p.row(i).data() + p.cols());
        for (Eigen::Index j = 0; j < p.cols(); ++j) row[size_t(j)] = p(i, j);
        std::sort(row.rbegin(), row.rend());
        double mass = 0;
        int n = 0;
        while (mass < 0.9 && n < int(row.size())) mass += row[size_t(n++)];
        keys += n, rows += 1;
      }
    return keys / rows;
  };
  CHECK(keys_for_90(scaled) >= 3);
  CHECK(keys_for_90(raw) < 0.5 * keys_for_90(scaled));
  // The two pictures compare: both steps are drawn on the same colour range (issue 40: the shared scale
  // moved from 0.7 to 1.0 between them).
  const gui::Pictures a = gui::make_pictures(scaled, l.steps[0].scene.view), b = gui::make_pictures(raw, l.steps[1].scene.view);
  CHECK(a.heads_range.lo == b.heads_range.lo);
  CHECK(a.heads_range.hi == b.heads_range.hi);
}

TEST_CASE("lesson 3 claims: without the mask every token sees the whole sentence") {
  const Lesson& l = lesson(3);
  const Analysis open = analyse(l.steps[0].scene);
  for (const Mat& p : open.attention->result.probs) CHECK(p.minCoeff() > 0.0f);
  check_designed_heads(open);  // the heads the explanation names draw their patterns
}

TEST_CASE("lesson 4 claims: four clean patterns, groups 0–1 and 2–3 that blend and halve the cache, one blend for MQA") {
  const Lesson& l = lesson(4);
  const Analysis mha = analyse(l.steps[0].scene), gqa = analyse(l.steps[1].scene), mqa = analyse(l.steps[2].scene);
  // "MHA: four heads, four K/V heads, four clean patterns."
  CHECK(mha.attention->shape.heads == 4);
  CHECK(mha.attention->shape.groups == 4);
  check_designed_heads(mha);
  // "GQA with 2 groups: heads 0–1 and 2–3 share K/V … the cache halves."
  CHECK(kv_group_of_head(0, 4, 2) == 0);
  CHECK(kv_group_of_head(1, 4, 2) == 0);
  CHECK(kv_group_of_head(2, 4, 2) == 1);
  CHECK(kv_group_of_head(3, 4, 2) == 1);
  CHECK(gqa.attention->trace.kv_bytes_per_token_fp16 * 2 == mha.attention->trace.kv_bytes_per_token_fp16);
  // "… and blend": the previous-token head of the first group now also looks at i + 1 (the explanation's
  // band over i − 1, i and i + 1), far more than its MHA map did.
  REQUIRE(l.scene.model.designed[0] == "previous");
  REQUIRE(l.scene.model.designed[1] == "next");
  auto next_mass = [](const Mat& p) {
    double m = 0;
    for (Eigen::Index i = 0; i + 1 < p.rows(); ++i) m += p(i, i + 1);
    return m / double(p.rows() - 1);
  };
  CHECK(next_mass(gqa.attention->result.probs[0]) > 0.2);
  CHECK(next_mass(gqa.attention->result.probs[0]) > 5 * next_mass(mha.attention->result.probs[0]));
  // Heads of one group draw nearly the same map; heads of different groups do not.
  const auto& g = gqa.attention->result.probs;
  CHECK(max_abs_difference(g[0], g[1]) < 0.5 * max_abs_difference(g[0], g[2]));
  // "MQA: one K/V head for all; one blended pattern, a quarter of the cache."
  CHECK(mqa.attention->trace.kv_bytes_per_token_fp16 * 4 == mha.attention->trace.kv_bytes_per_token_fp16);
  const auto& q = mqa.attention->result.probs;
  for (size_t h = 1; h < q.size(); ++h) CHECK(max_abs_difference(q[0], q[h]) < 0.1);
}

TEST_CASE("lesson 5 claims: nine heads around the nine offsets of a 3×3 kernel, wide at α = 0.3, one cell at α = 5") {
  const Lesson& l = lesson(5);
  const Analysis wide = analyse(l.steps[0].scene), sharp = analyse(l.steps[1].scene);
  REQUIRE(wide.relpos->heads.size() == 9);
  CHECK(wide.relpos->heads[0].alpha == doctest::Approx(0.3));
  CHECK(sharp.relpos->heads[0].alpha == doctest::Approx(5.0));
  std::set<std::pair<int, int>> offsets;
  for (size_t h = 0; h < 9; ++h) offsets.insert({int(wide.relpos->heads[h].delta[0]), int(wide.relpos->heads[h].delta[1])});
  CHECK(offsets.size() == 9);  // the nine offsets of a 3×3 kernel
  for (const auto& [dr, dc] : offsets) CHECK((std::abs(dr) <= 1 && std::abs(dc) <= 1));
  // Each head's brightest key is the query's cell moved by its offset; at α = 0.3 the window is wide
  // (its brightest cell holds a small share), at α = 5 almost one cell.
  for (const Analysis* a : {&wide, &sharp}) {
    const RelposAnalysis& r = *a->relpos;
    for (size_t h = 0; h < 9; ++h) {
      CAPTURE(h);
      Eigen::Index arg = 0;
      const float top = r.probs_query.row(Eigen::Index(h)).maxCoeff(&arg);
      CHECK(int(arg) / r.cols == r.query_row + int(r.heads[h].delta[0]));
      CHECK(int(arg) % r.cols == r.query_col + int(r.heads[h].delta[1]));
      if (a == &wide) CHECK(top < 0.5f);
      else CHECK(top > 0.9f);
    }
  }
}

TEST_CASE("lesson 6 claims: with no checkpoint, step 1 names the designed heads it draws") {
  const Lesson& l = lesson(6);
  const ModelSettings& m = l.steps[0].scene.model;
  REQUIRE(m.weights == WeightSource::designed);
  const Analysis a = analyse(l.steps[0].scene);
  CHECK(a.attention->result.probs.size() == m.designed.size());
  for (const std::string& name : m.designed) {
    CAPTURE(name);
    const LocalizedText& caption = designed_pattern_caption(parse_designed_pattern(name));
    CHECK(contains(l.steps[0].caption.en, caption.en));
    CHECK(contains(l.steps[0].caption.zh, caption.zh));
  }
  // Step 3 sends nobody to a layer slider the step does not draw: the head shown large is the layer-0 one.
  for (const LessonStep& step : l.steps) {
    CHECK_FALSE(contains(step.caption.en, "slider"));
    CHECK_FALSE(contains(step.caption.zh, "滑块"));
  }
  CHECK(contains(l.steps[2].caption.en, "in layer 0, and it is the head shown large"));
}

TEST_CASE("lesson 7 claims: the title names every attention the comparison trains") {
  const Lesson& l = lesson(7);
  const std::vector<train::TrainSettings> runs = train::attention_variants(*l.steps[3].training, false);
  REQUIRE(runs.size() == 4);
  for (const train::TrainSettings& run : runs) {
    const int H = run.model.heads, G = run.model.groups;
    const std::string kind = run.model.mla() ? "MLA" : G == H ? "MHA" : G == 1 ? "MQA" : "GQA";
    CAPTURE(kind);
    CHECK(contains(l.title.en, kind));
    CHECK(contains(l.title.zh, kind));
    CHECK(contains(l.steps[3].caption.en, kind));
  }
}

TEST_CASE("lesson 8 claims: differential attention keeps step 1's MHA cache") {
  const Lesson& l = lesson(8);
  const Analysis mha = analyse(l.steps[0].scene), diff = analyse(l.steps[5].scene);
  CHECK(diff.attention->shape.groups == diff.attention->shape.heads);  // every head its own K and V
  CHECK(diff.attention->trace.kv_bytes_per_token_fp16 == mha.attention->trace.kv_bytes_per_token_fp16);
  CHECK(contains(l.steps[5].caption.en, "MHA"));
  CHECK_FALSE(contains(l.steps[5].caption.en, "GQA"));
  CHECK_FALSE(contains(l.steps[5].caption.zh, "GQA"));
  // "2 × 4 × 16 = 128 values a token", as step 1
  const AttentionShape& s = diff.attention->shape;
  CHECK(2 * s.groups * s.head_dim() == 128);
  CHECK(diff.attention->trace.kv_bytes_per_token_fp16 == 128 * 2);
  // The KV panel beside the lesson: DeepSeek-V2's GQA row is not its MHA (issue 40: "GQA (G = 128)").
  REQUIRE(l.kv_cache.has_value());
  const KvCacheReport r = kv_cache_report(l.kv_cache->input);
  CHECK(r.gqa.kv_heads < r.mha.kv_heads);
  CHECK(r.gqa.bytes < r.mha.bytes);
}

TEST_CASE("lesson 9 claims: the outlined cells are the two \"dog\" keys, one colour without positions, two with RoPE") {
  const Lesson& l = lesson(9);
  for (size_t k = 0; k < 2; ++k) {
    CAPTURE(k);
    const LessonStep& step = l.steps[k];
    REQUIRE(step.cells.size() == 4);
    CHECK(contains(step.caption.en, "outlined"));
    CHECK(contains(step.caption.zh, "框出"));
    const Analysis a = analyse(step.scene);
    const std::vector<std::string>& labels = a.attention->labels;
    // Pairs of cells in one row, on the two keys "dog".
    for (size_t c = 0; c < step.cells.size(); c += 2) {
      const auto [q, k1] = step.cells[c];
      const auto [q2, k2] = step.cells[c + 1];
      REQUIRE(q == q2);
      REQUIRE(q < int(labels.size()));
      CHECK(labels[size_t(k1)] == "dog");
      CHECK(labels[size_t(k2)] == "dog");
      CHECK(k1 != k2);
      CHECK(k1 <= q);  // the query sees both (causal)
      CHECK(k2 <= q);
      double largest = 0;
      for (const Mat& p : a.attention->result.probs) {
        const double d = std::abs(double(p(q, k1)) - double(p(q, k2)));
        largest = std::max(largest, d);
        if (k == 0) CHECK(d < 1e-6);  // NoPE: "one colour in each row"
      }
      // RoPE: "the outlined pairs of cells differ" — by a share of the row one can see (2 % of 0–1).
      if (k == 1) CHECK(largest > 0.02);
    }
  }
}

TEST_CASE("lesson 9 claims: base 100 turns faster and falls off sooner; YaRN slows the slow pairs by 4 and scales the scores") {
  const Lesson& l = lesson(9);
  const Analysis rope = analyse(l.steps[2].scene), base100 = analyse(l.steps[3].scene), yarn = analyse(l.steps[4].scene);
  const PositionsProfile& p10k = rope.attention->positions;
  const PositionsProfile& p100 = base100.attention->positions;
  const PositionsProfile& py = yarn.attention->positions;
  REQUIRE(p10k.scheme == PositionScheme::rope);
  REQUIRE(p100.theta_scaled.size() == p10k.theta_scaled.size());
  // "Base 100: every pair turns faster" (pair 0 turns at 1 radian a token in both)
  for (size_t k = 1; k < p100.theta_scaled.size(); ++k) CHECK(p100.theta_scaled[k] > p10k.theta_scaled[k]);
  // "… and the score falls off with distance sooner": the first distance at which the score is half its
  // value at distance 0.
  auto half_distance = [](const DistanceCurve& c) {
    for (size_t d = 0; d < c.value.size(); ++d)
      if (c.value[d] < 0.5 * c.value[0]) return int(d);
    return int(c.value.size());
  };
  CHECK(half_distance(p100.decay) < half_distance(p10k.decay));
  // "YaRN, factor 4: the slow pairs (wavelengths beyond the trained context) turn 4 times slower, the fastest
  // keeps its speed, the few between blend the two, and the attention factor makes every score larger."
  const double context = py.rope.original_context;
  int slow = 0;
  std::string ratios;
  for (size_t k = 0; k < py.theta.size(); ++k) {
    CAPTURE(k);
    const double ratio = py.theta_scaled[k] / py.theta[k];
    ratios += std::to_string(ratio).substr(0, 5) + " ";
    if (py.wavelength[k] > context) {
      CHECK(ratio == doctest::Approx(0.25));
      ++slow;
    }
    if (k > 0) CHECK(ratio <= py.theta_scaled[k - 1] / py.theta[k - 1] + 1e-12);  // faster pairs keep more of their speed
  }
  MESSAGE("YaRN speed ratios by pair: " << ratios);
  CHECK(slow > 0);
  CHECK(py.theta_scaled[0] == doctest::Approx(py.theta[0]));  // the fastest pair keeps its speed
  CHECK(py.attention_factor > 1);
}

namespace {

// "0.16": the value written with two decimals, as a caption gives it.
std::string two_decimals(double v) {
  char s[32];
  std::snprintf(s, sizeof s, "%.2f", v);
  return s;
}

// The mean over heads and rows (from row 1: row 0 has one key) of each row's largest weight.
double mean_row_max(const std::vector<Mat>& maps) {
  double sum = 0;
  int n = 0;
  for (const Mat& m : maps)
    for (Eigen::Index i = 1; i < m.rows(); ++i, ++n) sum += m.row(i).maxCoeff();
  return sum / n;
}

}  // namespace

TEST_CASE("lesson 10 claims: rows of probabilities, flat linear rows, retention's decays, signed Mamba-2, state against cache") {
  const Lesson& l = lesson(10);
  REQUIRE(l.steps.size() == 8);
  const Analysis soft = analyse(l.steps[0].scene), linear = analyse(l.steps[1].scene),
                 retention = analyse(l.steps[2].scene), mamba = analyse(l.steps[3].scene),
                 gated = analyse(l.steps[4].scene), shapes = analyse(l.steps[5].scene);
  // step 1: distributions; 2 × 4 × 16 = 128 values a token
  CHECK_FALSE(soft.attention->linear);
  for (const Mat& p : soft.attention->result.probs) {
    CHECK(p.minCoeff() >= 0);
    for (Eigen::Index i = 0; i < p.rows(); ++i) CHECK(p.row(i).sum() == doctest::Approx(1).epsilon(1e-5));
  }
  const AttentionShape& s = soft.attention->shape;
  CHECK(2 * s.groups * s.head_dim() == 128);
  CHECK(soft.attention->trace.kv_bytes_per_token_fp32 == 128 * 4);
  // step 2: rows still sum to 1, but flat: the mean row maximum, linear's against softmax's
  REQUIRE(linear.attention->linear);
  CHECK(linear.attention->linear_spec.kind == LinearLayerKind::linear);
  for (const Mat& m : linear.attention->result.probs) {
    CHECK(m.minCoeff() >= 0);
    for (Eigen::Index i = 0; i < m.rows(); ++i) CHECK(m.row(i).sum() == doctest::Approx(1).epsilon(1e-4));
  }
  const double flat = mean_row_max(linear.attention->result.probs), sharp = mean_row_max(soft.attention->result.probs);
  CAPTURE(flat);
  CAPTURE(sharp);
  CHECK(contains(l.steps[1].caption.en, "averages " + two_decimals(flat) + " here, against " + two_decimals(sharp)));
  CHECK(contains(l.steps[1].caption.zh, two_decimals(flat) + "，而 softmax 是 " + two_decimals(sharp)));
  // step 3: signed; head 0's γ = 0.5 forgets (every weight more than 5 back under a tenth of its row's
  // largest magnitude), head 3's γ = 0.97 still weighs the first token
  const int H = retention.attention->shape.heads;
  REQUIRE(H == 4);
  CHECK(retention.attention->result.probs[0].minCoeff() < 0);
  CHECK(linear_decay_schedule(0, H) == 0.5);
  CHECK(two_decimals(linear_decay_schedule(3, H)) == "0.97");
  const Mat& fast = retention.attention->result.probs[0];
  for (Eigen::Index i = 6; i < fast.rows(); ++i)
    CHECK(fast.row(i).head(i - 5).cwiseAbs().maxCoeff() < 0.1 * fast.row(i).head(i + 1).cwiseAbs().maxCoeff());
  const Mat& slow = retention.attention->result.probs[3];
  const Eigen::Index last = slow.rows() - 1;
  CHECK(std::abs(slow(last, 0)) > 0.1 * slow.row(last).cwiseAbs().maxCoeff());
  // step 4: about half of Mamba-2's weights below the diagonal are negative
  int negative = 0, below = 0;
  for (const Mat& m : mamba.attention->result.probs)
    for (Eigen::Index i = 1; i < m.rows(); ++i)
      for (Eigen::Index j = 0; j < i; ++j, ++below) negative += m(i, j) < 0;
  CAPTURE(negative);
  CAPTURE(below);
  CHECK(negative > 0.4 * below);
  CHECK(negative < 0.6 * below);
  // step 5: Gated DeltaNet's matrix is signed too
  CHECK(gated.attention->linear_spec.kind == LinearLayerKind::gated_deltanet);
  CHECK(gated.attention->result.probs[0].minCoeff() < 0);
  // step 6: a state of 4 × 16 × 16 = 1024 values at any length; MHA's 128 a token, so the state is the
  // smaller from 8 tokens on; this sentence's tokens at 128 each
  CHECK(l.steps[5].scene.view.view == View::shapes);
  const Trace& t = shapes.attention->trace;
  CHECK(t.state_bytes_fp32 == 1024 * 4);
  CHECK(t.kv_bytes_per_token_fp32 == 0);
  CHECK(1024 / 128 == 8);
  const int64_t T = shapes.attention->x.rows();
  CHECK(contains(l.steps[5].caption.en, "this sentence's " + std::to_string(T) + " tokens would cache " + std::to_string(T * 128)));
  CHECK(contains(l.steps[5].caption.zh, std::to_string(T) + " 个词元需要缓存 " + std::to_string(T * 128)));
  // step 7: the calculator's Qwen3-Next at its full context
  REQUIRE(l.kv_cache.has_value());
  const KvCacheReport r = kv_cache_report(l.kv_cache->input);
  REQUIRE(r.layer_types.size() == 2);
  const KvLayerTypeRow& states = r.layer_types[0].group.kind == LayerKind::linear ? r.layer_types[0] : r.layer_types[1];
  const KvLayerTypeRow& cached = &states == &r.layer_types[0] ? r.layer_types[1] : r.layer_types[0];
  CHECK(states.group.kind == LayerKind::linear);
  CHECK(cached.group.kind == LayerKind::full);
  CHECK(states.group.layers == 36);
  CHECK(cached.group.layers == 12);
  CHECK(l.kv_cache->input.seq == 262144);
  const double gib = double(int64_t(1) << 30);
  CHECK(two_decimals(double(states.bytes) / gib) == "0.04");
  CHECK(double(cached.bytes) / gib == 6.0);
  CHECK(r.gqa.gib == 24.0);
  for (const std::string& said : {std::string("0.04 GiB"), std::string("6 GiB"), std::string("24 GiB")}) {
    CHECK(contains(l.steps[6].caption.en, said));
    CHECK(contains(l.steps[6].caption.zh, said));
  }
  // step 8: the recall task; Compare without a softmax trains the five kinds it names, MHA at 1 KiB a token,
  // the others 8 KiB of state (linear attention 8.5 KiB), 256 B a token at T = 32; then the hybrid (Gated
  // DeltaNet, softmax in layer 1): 512 B a token cached beside 4 KiB of state, 640 B a token
  const LessonStep& recall = l.steps[7];
  REQUIRE(recall.training.has_value());
  CHECK(recall.training->task.kind == train::TaskKind::recall);
  CHECK(recall.training->task.seq_len == 32);
  const std::vector<train::TrainSettings> runs = train::no_softmax_variants(*recall.training);
  REQUIRE(runs.size() == 6);
  const int context = recall.training->task.seq_len;
  CHECK(train::memory_bytes_per_token_at(runs[0].model, context) == 1024);
  CHECK(train::state_bytes(runs[0].model) == 0);
  const train::ModelConfig& hybrid = runs[5].model;
  REQUIRE(hybrid.hybrid());
  CHECK(train::kv_cache_bytes_per_token(hybrid) == 512);
  CHECK(train::state_bytes(hybrid) == 4096);
  CHECK(train::memory_bytes_per_token_at(hybrid, context) == 640);
  for (const std::string& said : {std::string("hybrid"), std::string("512 B"), std::string("4 KiB"), std::string("640 B")})
    CHECK(contains(recall.caption.en, said));
  for (const std::string& said : {std::string("512 B"), std::string("4 KiB"), std::string("640 B")})
    CHECK(contains(recall.caption.zh, said));
  for (size_t k = 1; k < 5; ++k) {
    CAPTURE(k);
    for (const train::AttentionKindEntry& e : train::attention_kinds())
      if (e.kind == runs[k].model.attention) CHECK(contains(recall.caption.en, e.title));
    const bool linear_attention = runs[k].model.attention == train::AttentionKind::linear;
    CHECK(train::state_bytes(runs[k].model) == (linear_attention ? 8704 : 8192));  // 8.5 KiB, 8 KiB
    if (!linear_attention) CHECK(train::memory_bytes_per_token_at(runs[k].model, context) == 256);
  }
}
