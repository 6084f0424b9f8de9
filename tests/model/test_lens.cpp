// Tests of model/lens.h: the logit lens against the model's own logits and against the PyTorch references of
// tests/fixtures/lens/ (make_lens_fixtures.py: the same model cut after each layer), the direct logit
// attribution's parts summing to the attributed logit on every checkpoint fixture, and head ablation against
// the reference forward with the layer's o_proj zeroed (or its heads replaced by their mean through the bias).
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <set>

#include "attnscope/core/error.h"
#include "attnscope/io/safetensors.h"
#include "attnscope/model/lens.h"
#include "check.h"
#include "model/checkpoint_fixtures.h"
#include "test_paths.h"

using namespace attnscope;
using namespace attnscope::model;
using attnscope::test::check_flat;
using attnscope::test::contains;
using attnscope::test::error_of;
using attnscope::test::fixture_ids;
using attnscope::test::model_fixture;

namespace {

// The fixtures make_lens_fixtures.py writes references for (one per family kind of issue 38).
const std::vector<std::string> lens_fixtures{"mistral_mha_f32",          "qwen2_gqa",
                                             "deepseek_v2_mla_moe_bf16", "gemma3_local_global_bf16",
                                             "qwen3_moe_30b_a3b_bf16",   "gemma2_softcap_f32",
                                             "gpt2_prefix_f32"};

std::filesystem::path lens_file(const std::string& name) {
  return std::filesystem::path(ATTNSCOPE_SOURCE_DIR) / "tests" / "fixtures" / "lens" / (name + ".safetensors");
}

// A tensor of tests/fixtures/lens/<name>.safetensors, empty when absent.
std::vector<float> lens_reference(const std::string& name, const std::string& tensor) {
  const SafetensorsFile f(lens_file(name));
  const SafetensorsTensor* t = f.header().find(tensor);
  std::vector<float> values;
  if (!t) return values;
  values.resize(size_t(t->count()));
  f.read_float32(*t, values.data(), false);
  return values;
}

// Every checkpoint folder of tests/fixtures/models (precomputed/ is not a checkpoint).
std::vector<std::string> every_checkpoint() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(model_fixture("")))
    if (entry.is_directory() && std::filesystem::exists(entry.path() / "config.json") &&
        std::filesystem::exists(entry.path() / "ids.json"))
      names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST_CASE("logit lens: the last layer's lens is the model's own logits on every checkpoint fixture") {
  for (const std::string& name : every_checkpoint()) {
    INFO(name);
    const auto model = model::open(model_fixture(name));
    const auto ids = fixture_ids(name);
    const ForwardResult r = forward(*model, ids, lens_forward_options());
    REQUIRE(int(r.trace.residual.size()) == r.layers);
    const Mat last = lens_logits(*model, r.trace.residual.back());
    check_flat(last.data(), std::vector<float>(r.logits.data(), r.logits.data() + r.logits.size()), 1e-5, true,
               name + " last layer's lens");
    const LogitLens lens = logit_lens(*model, r, 3);
    for (int t = 0; t < r.tokens; ++t) {
      CHECK(lens.final_rank(r.layers - 1, t) == 1);
      CHECK(lens.kl(r.layers - 1, t) < 1e-5);
      CHECK(lens.top.back()[size_t(t)][0].id == r.top[size_t(t)][0].id);
    }
  }
}

TEST_CASE("logit lens: the taps change nothing in the forward pass") {
  for (const std::string& name : std::vector<std::string>{"gpt2_prefix_f32", "deepseek_v2_mla_moe_bf16", "qwen3_next_f32"}) {
    INFO(name);
    const auto model = model::open(model_fixture(name));
    const auto ids = fixture_ids(name);
    const ForwardResult plain = forward(*model, ids), tapped = forward(*model, ids, lens_forward_options());
    CHECK(plain.attentions == tapped.attentions);
    CHECK(plain.logits == tapped.logits);
    CHECK(plain.trace.residual.empty());
  }
}

TEST_CASE("logit lens: every layer's distribution, KL and rank match the PyTorch model cut after that layer") {
  for (const std::string& name : lens_fixtures) {
    INFO(name);
    const auto model = model::open(model_fixture(name));
    const auto ids = fixture_ids(name);
    const ForwardResult r = forward(*model, ids, lens_forward_options());
    const int L = r.layers, T = r.tokens, V = r.vocab;
    const std::vector<float> ref = lens_reference(name, "lens.logits"), kl = lens_reference(name, "lens.kl"),
                             rank = lens_reference(name, "lens.rank");
    REQUIRE(ref.size() == size_t(int64_t(L) * T * V));
    const LogitLens lens = logit_lens(*model, r, 5);
    for (int l = 0; l < L; ++l) {
      const Mat logits = lens_logits(*model, r.trace.residual[size_t(l)]);
      const std::vector<float> layer(ref.begin() + int64_t(l) * T * V, ref.begin() + int64_t(l + 1) * T * V);
      check_flat(logits.data(), layer, 1e-4, true, name + " layer " + std::to_string(l) + " lens logits");
      for (int t = 0; t < T; ++t) {
        // the top token's probability against the reference's softmax
        const float* row = layer.data() + int64_t(t) * V;
        double max = row[0], sum = 0;
        for (int j = 0; j < V; ++j) max = std::max(max, double(row[j]));
        for (int j = 0; j < V; ++j) sum += std::exp(double(row[j]) - max);
        const NextToken top = lens.top[size_t(l)][size_t(t)][0];
        CHECK(std::abs(double(top.probability) - std::exp(double(row[top.id]) - max) / sum) < 1e-5);
        CHECK(double(row[top.id]) >= max - 1e-4 * std::max(1.0, std::abs(max)));
        CHECK(std::abs(double(lens.kl(l, t)) - kl[size_t(int64_t(l) * T + t)]) < 1e-4);
        CHECK(lens.final_rank(l, t) == int(rank[size_t(int64_t(l) * T + t)]));
      }
    }
  }
}

TEST_CASE("direct logit attribution: the parts sum to the chosen token's logit on every checkpoint fixture") {
  for (const std::string& name : every_checkpoint()) {
    INFO(name);
    const auto model = model::open(model_fixture(name));
    const ModelConfig& c = model->config;
    const auto ids = fixture_ids(name);
    const ForwardResult r = forward(*model, ids, lens_forward_options());
    const int T = r.tokens;
    // the model's top-1 (the default) and a fixed other token: the ids shifted by one (the input's next tokens)
    std::vector<int32_t> next(ids.begin() + 1, ids.end());
    next.push_back(ids.front());
    for (const bool chosen : {false, true}) {
      const LogitAttribution a = direct_logit_attribution(*model, r, chosen ? std::span<const int32_t>(next)
                                                                           : std::span<const int32_t>());
      REQUIRE(int(a.logit.size()) == T);
      REQUIRE(a.values.rows() == int64_t(a.parts.size()));
      CHECK(a.before_softcap == (c.final_softcap > 0));
      for (int t = 0; t < T; ++t) {
        const int32_t v = a.target[size_t(t)];
        CHECK(v == (chosen ? next[size_t(t)] : r.top[size_t(t)][0].id));
        // the attributed logit is the model's, before its soft-cap
        const double capped = c.final_softcap > 0 ? std::tanh(a.logit[size_t(t)] / c.final_softcap) * c.final_softcap
                                                  : a.logit[size_t(t)];
        CHECK(std::abs(capped - r.logits(t, v)) <= 1e-5 * std::max(1.0, std::abs(double(r.logits(t, v)))));
        double sum = 0;
        for (int64_t p = 0; p < a.values.rows(); ++p) sum += a.values(p, t);
        INFO("position " << t << ": parts sum to " << sum << ", logit " << a.logit[size_t(t)]);
        CHECK(std::abs(sum - a.logit[size_t(t)]) <= 1e-4 * std::max(1.0, std::abs(double(a.logit[size_t(t)]))));
      }
    }
    // one part per softmax head, one per linear (mixer) layer, one MLP per layer; positions only for GPT-2
    const LogitAttribution a = direct_logit_attribution(*model, r);
    int heads = 0, mixers = 0, mlps = 0, positions = 0;
    for (const LogitPart& p : a.parts) {
      heads += p.kind == PartKind::head, mixers += p.kind == PartKind::mixer, mlps += p.kind == PartKind::mlp;
      positions += p.kind == PartKind::positions;
    }
    int linear = 0;
    for (int l = 0; l < c.layers; ++l) linear += c.trained.active || c.is_linear_layer(l);
    CHECK(heads == (c.layers - linear) * c.heads);
    CHECK(mixers == linear);
    CHECK(mlps == c.layers);
    CHECK(positions == (c.positions == PositionKind::learned));
    if (c.layers > linear) {
      int l = 0;  // the first softmax layer
      while (c.is_linear_layer(l)) ++l;
      CHECK(a.head_part(l, c.heads - 1) >= 0);
      CHECK(part_label(a.parts[size_t(a.head_part(l, c.heads - 1))]) ==
            "L" + std::to_string(l) + "H" + std::to_string(c.heads - 1));
    }
  }
}

TEST_CASE("direct logit attribution: a head's part is its output, as switching it off removes it, through the frozen norm") {
  // In the last layer, switching head h off changes that layer's attention branch by exactly z_h·W_O,hᵀ (the
  // layers before it are unchanged). That difference, taken from two forward passes, through the final norm
  // with its scale frozen at the unablated x_L (written out here: w_f ⊙ E_v / σ_t, centred for LayerNorm) is
  // the head's part.
  for (const std::string& name : std::vector<std::string>{"qwen2_gqa", "gpt2_prefix_f32", "deepseek_v2_mla_moe_bf16", "mistral_mha_f32"}) {
    INFO(name);
    const auto model = model::open(model_fixture(name));
    const ModelConfig& c = model->config;
    const ModelWeights& w = *model->weights;
    const auto ids = fixture_ids(name);
    const ForwardResult r = forward(*model, ids, lens_forward_options());
    const LogitAttribution a = direct_logit_attribution(*model, r);
    const int last = r.layers - 1;
    for (int h = 0; h < c.heads; ++h) {
      HeadAblation off{AblationMode::zero, {{last, h}}};
      ForwardOptions options = lens_forward_options();
      options.ablation = &off;
      const ForwardResult ablated = forward(*model, ids, options);
      const Mat removed = r.trace.block[size_t(last)] - ablated.trace.block[size_t(last)];
      std::vector<float> e(static_cast<size_t>(c.d_model));
      for (int t = 0; t < r.tokens; ++t) {
        w.output_embedding().row(a.target[size_t(t)], e.data());
        const Eigen::VectorXd x = r.trace.residual.back().row(t).transpose().cast<double>();
        const bool ln = c.norm == NormKind::layernorm;
        const double mean = ln ? x.mean() : 0.0;
        const double sigma = std::sqrt((x.array() - mean).square().mean() + c.norm_eps);
        Eigen::VectorXd dir(c.d_model);
        for (int i = 0; i < c.d_model; ++i) dir[i] = double(w.final_norm_weight[i]) * e[size_t(i)] / sigma;
        if (ln) dir.array() -= dir.mean();
        const double expected = removed.row(t).transpose().cast<double>().dot(dir);
        INFO("head " << h << " position " << t);
        CHECK(std::abs(a.values(a.head_part(last, h), t) - expected) <= 1e-4 * std::max(1.0, std::abs(expected)));
      }
    }
  }
}

TEST_CASE("head ablation: zeroing every head of a layer equals the reference forward without that layer's attention") {
  for (const std::string& name : lens_fixtures) {
    INFO(name);
    const auto model = model::open(model_fixture(name));
    const auto ids = fixture_ids(name);
    const int layer = int(lens_reference(name, "zero.layer").at(0));
    HeadAblation off{AblationMode::zero, {}};
    for (int h = 0; h < model->config.heads; ++h) off.heads.push_back({layer, h});
    const ForwardResult base = forward(*model, ids);
    const AblationEffect e = ablate_heads(*model, ids, base, off);
    check_flat(e.ablated.logits.data(), lens_reference(name, "zero.logits"), 1e-4, true, name + " zeroed logits");
    check_flat(e.ablated.attentions.data(), lens_reference(name, "zero.attentions"), 1e-5, false,
               name + " zeroed attentions");
    CHECK(std::abs(e.loss_after.mean - lens_reference(name, "zero.loss").at(0)) < 1e-4);
    CHECK(std::abs(e.loss_before.mean - lens_reference(name, "base.loss").at(0)) < 1e-4);
    CHECK(e.first_changed_layer == layer);
    // the ablated layer's own attention is unchanged (its output is what changes); later layers move
    for (int l = 0; l <= layer; ++l) CHECK(e.attention_change[size_t(l)] == 0.0f);
    CHECK(e.attention_change.back() > 1e-4);
    double kl = 0;
    for (float k : e.next_token_kl) kl += k;
    CHECK(kl > 1e-4);
  }
}

TEST_CASE("head ablation: mean ablation equals the reference forward with the heads' means in the bias") {
  int checked = 0;
  for (const std::string& name : lens_fixtures) {
    const std::vector<float> heads = lens_reference(name, "mean.heads");
    if (heads.empty()) continue;  // the generator writes it for the families whose reference reads an o_proj bias
    INFO(name);
    ++checked;
    const auto model = model::open(model_fixture(name));
    const auto ids = fixture_ids(name);
    const int layer = int(lens_reference(name, "mean.layer").at(0));
    HeadAblation mean{AblationMode::mean, {}};
    for (float h : heads) mean.heads.push_back({layer, int(h)});
    const AblationEffect e = ablate_heads(*model, ids, forward(*model, ids), mean);
    check_flat(e.ablated.logits.data(), lens_reference(name, "mean.logits"), 1e-4, true, name + " mean-ablated logits");
    check_flat(e.ablated.attentions.data(), lens_reference(name, "mean.attentions"), 1e-5, false,
               name + " mean-ablated attentions");
    CHECK(std::abs(e.loss_after.mean - lens_reference(name, "mean.loss").at(0)) < 1e-4);
    // mean ablation is not zero ablation
    HeadAblation zero = mean;
    zero.mode = AblationMode::zero;
    const ForwardResult z = forward(*model, ids, [&] { ForwardOptions o; o.ablation = &zero; return o; }());
    CHECK((z.logits - e.ablated.logits).cwiseAbs().maxCoeff() > 1e-4);
  }
  CHECK(checked >= 3);
}

TEST_CASE("head ablation: no heads changes nothing; bad heads are refused with a clear message") {
  const auto model = model::open(model_fixture("qwen2_gqa"));
  const auto ids = fixture_ids("qwen2_gqa");
  const ForwardResult base = forward(*model, ids);
  const AblationEffect none = ablate_heads(*model, ids, base, HeadAblation{});
  CHECK(none.ablated.logits == base.logits);
  CHECK(none.ablated.attentions == base.attentions);
  CHECK(none.loss_after.mean == none.loss_before.mean);
  const auto refusal = [&](HeadAblation a) { return error_of([&] { (void)ablate_heads(*model, ids, base, a); }); };
  CHECK(contains(refusal({AblationMode::zero, {{2, 0}}}), "cannot switch off head 0 of layer 2: the model's layers are 0 to 1"));
  CHECK(contains(refusal({AblationMode::zero, {{0, 4}}}), "its heads are 0 to 3"));
  CHECK(contains(refusal({AblationMode::mean, {{0, 1}, {0, 1}}}), "head 1 of layer 0 is listed twice"));
  // a Mamba-2 / Gated DeltaNet layer has no softmax heads to switch off
  for (const std::string& name : std::vector<std::string>{"granite_hybrid_f32", "qwen3_next_f32"}) {
    const auto hybrid = model::open(model_fixture(name));
    int linear = 0;
    while (!hybrid->config.is_linear_layer(linear)) ++linear;
    const std::string message = error_of([&] {
      HeadAblation a{AblationMode::zero, {{linear, 0}}};
      (void)check_head_ablation(hybrid->config, a);
    });
    CHECK(contains(message, "linear (mixer) layer"));
  }
  // the analyses say which taps they need; a wrong target list is refused
  CHECK(contains(error_of([&] { (void)logit_lens(*model, base); }), "ForwardTaps::residual"));
  const ForwardResult tapped = forward(*model, ids, lens_forward_options());
  const std::vector<int32_t> short_targets{1, 2};
  CHECK(contains(error_of([&] { (void)direct_logit_attribution(*model, tapped, short_targets); }),
                 "give one per position"));
  std::vector<int32_t> bad(ids.size(), 0);
  bad[3] = 64;
  CHECK(contains(error_of([&] { (void)direct_logit_attribution(*model, tapped, bad); }),
                 "target token id 64 at position 3 is outside the vocabulary (0 to 63)"));
}
