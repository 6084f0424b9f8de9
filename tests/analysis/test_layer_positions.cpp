// How a checkpoint's layer puts positions in (model_layer.h layer_positions), read from the fixtures'
// configs: GPT-2 learns absolute positions, SmolLM3's fourth layer is NoPE, Gemma 3's local layers have
// their own RoPE base, and DeepSeek turns only its rotary part, on interleaved pairs, with its YaRN.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <set>

#include "attnscope/analysis/model_layer.h"
#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"
#include "attnscope/model/config.h"
#include "../model/checkpoint_fixtures.h"

using namespace attnscope;

namespace {

model::ModelConfig config_of(const std::string& fixture) {
  const std::filesystem::path file = test::model_fixture(fixture) / "config.json";
  return model::parse_model_config(read_file(file, 1 << 20), file.string());
}

}  // namespace

TEST_CASE("layer positions: learned, NoPE, per-layer RoPE bases and DeepSeek's rotary part, as each config says") {
  CHECK(layer_positions(config_of("gpt2_prefix_f32"), 0).scheme == PositionScheme::absolute);

  const model::ModelConfig smol = config_of("smollm3_nope_bf16");  // no_rope_layers [1, 1, 1, 0]
  for (int l = 0; l < 3; ++l) {
    const LayerPositions p = layer_positions(smol, l);
    CHECK(p.scheme == PositionScheme::rope);
    CHECK(p.rope.base == 5000000.0);
    CHECK(p.rotated_dim == smol.head_dim);
  }
  CHECK(layer_positions(smol, 3).scheme == PositionScheme::nope);

  const model::ModelConfig gemma = config_of("gemma3_local_global_bf16");  // pattern 3: local, local, global
  CHECK(layer_positions(gemma, 0).rope.base == 10000.0);
  CHECK(layer_positions(gemma, 2).rope.base == 1000000.0);

  const model::ModelConfig ds = config_of("deepseek_v2_mla_moe_bf16");
  const LayerPositions p = layer_positions(ds, 1);
  CHECK(p.scheme == PositionScheme::rope);
  CHECK(p.rotated_dim == 8);  // qk_rope_head_dim
  CHECK(p.rope.layout == RopeLayout::interleaved);
  CHECK(p.rope.scaling == RopeScaling::yarn);
  CHECK(p.rope.factor == 4.0);
  CHECK(p.rope.original_context == 16.0);
  // The frequencies the view draws are the ones the forward pass turns the rotary part by.
  const std::vector<double> inv = rope_scaled_inv_freq(p.rope, p.rotated_dim);
  const std::vector<float> forward = ds.mla.inv_freq(ds.rope_theta);
  REQUIRE(inv.size() == forward.size());
  for (size_t i = 0; i < inv.size(); ++i) CHECK(inv[i] == doctest::Approx(forward[i]).epsilon(1e-6));
  CHECK(rope_attention_factor(p.rope) == doctest::Approx(ds.mla.attention_factor).epsilon(1e-12));

  CHECK_THROWS_AS(layer_positions(ds, 2), InputError);
}

// The Positions view draws each scaled layer from layer_positions: its frequencies must be the ones the
// forward pass turns q and k by (ModelConfig::layer_rope) and PyTorch's float32 ones (the fixtures'
// rope.inv_freq and rope.attention_factor, written by make_model_fixtures.py for each input length), and
// its bands and factor lists must be what made them.
TEST_CASE("layer positions: every rope type's wavelengths, stretch, bands and attention factor are the forward's") {
  using model::RopeType;
  struct Case {
    const char* fixture;
    RopeType type;
  };
  const Case cases[] = {{"llama32_1b_llama3rope_bf16", RopeType::llama3},
                        {"llama_dynamic_f32", RopeType::dynamic},
                        {"qwen3_yarn_bf16", RopeType::yarn},
                        {"qwen2_yarn_notrunc_f16", RopeType::yarn},
                        {"phi35_longrope_bf16", RopeType::longrope},
                        {"phi4mini_partial_longrope_bf16", RopeType::longrope},
                        {"gemma3_linear_global_bf16", RopeType::linear}};
  std::set<std::string> seen;  // what the inputs reached: both longrope lists, dynamic on both sides of P
  for (const Case& c : cases) {
    CAPTURE(c.fixture);
    const model::ModelConfig config = config_of(c.fixture);
    std::vector<std::pair<std::string, size_t>> inputs{{"", test::fixture_ids(c.fixture).size()}};
    const auto more = test::fixture_more_ids(c.fixture);
    for (size_t n = 0; n < more.size(); ++n) inputs.emplace_back("more." + std::to_string(n) + ".", more[n].size());
    for (const auto& input : inputs) {
      const std::string& prefix = input.first;
      const int T = int(input.second);
      CAPTURE(T);
      const auto inv = test::fixture_reference(c.fixture, prefix + "rope.inv_freq");
      const auto factor = test::fixture_reference(c.fixture, prefix + "rope.attention_factor");
      for (int l = 0; l < config.layers; ++l) {
        CAPTURE(l);
        const LayerPositions p = layer_positions(config, l, T);
        REQUIRE(p.scheme == PositionScheme::rope);
        const bool scaled = config.layer_rope_scaled.empty() || config.layer_rope_scaled[size_t(l)];
        CHECK(p.rope_type == (scaled ? c.type : RopeType::plain));
        CHECK(p.tokens == T);
        CHECK(p.head_dim == config.head_dim);
        const int half = p.rotated_dim / 2;
        CHECK(p.rotated_dim == config.rotated_dim());
        const model::RopeFrequencies f = config.layer_rope(l, T);
        REQUIRE(p.theta_scaled.size() == size_t(half));
        REQUIRE(f.inv_freq.size() == size_t(half));
        CHECK(p.attention_factor == double(f.attention_factor));
        CHECK(p.attention_factor == doctest::Approx(factor.values[size_t(l)]).epsilon(1e-7));
        const std::vector<float> unscaled = rope_inv_freq_float32(p.rope.base, p.rotated_dim);
        for (int k = 0; k < half; ++k) {
          CAPTURE(k);
          CHECK(p.theta_scaled[size_t(k)] == double(f.inv_freq[size_t(k)]));  // exactly the forward's
          CHECK(p.theta_scaled[size_t(k)] == doctest::Approx(inv.values[size_t(l * half + k)]).epsilon(2.5e-7));
          CHECK(p.theta[size_t(k)] == double(unscaled[size_t(k)]));
          CHECK(p.wavelength[size_t(k)] == doctest::Approx(2 * std::numbers::pi / unscaled[size_t(k)]));
          CHECK(p.wavelength_scaled[size_t(k)] == doctest::Approx(2 * std::numbers::pi / f.inv_freq[size_t(k)]));
          CHECK(p.stretch[size_t(k)] == doctest::Approx(p.wavelength_scaled[size_t(k)] / p.wavelength[size_t(k)]));
        }
        if (!scaled) {
          CHECK(p.band.empty());
          for (double s : p.stretch) CHECK(s == 1.0);
          continue;
        }
        const double F = config.rope_scaling.factor;
        CHECK(p.factor == F);
        switch (c.type) {
          case RopeType::linear:
          case RopeType::llama3:
          case RopeType::yarn: {
            REQUIRE(p.band.size() == size_t(half));
            std::set<RopeBand> bands;
            for (int k = 0; k < half; ++k) {
              CAPTURE(k);
              bands.insert(p.band[size_t(k)]);
              const double s = p.stretch[size_t(k)];
              if (p.band[size_t(k)] == RopeBand::kept) CHECK(s == doctest::Approx(1.0).epsilon(1e-6));
              if (p.band[size_t(k)] == RopeBand::scaled) CHECK(s == doctest::Approx(F).epsilon(1e-6));
              if (p.band[size_t(k)] == RopeBand::blended) CHECK((s > 1.0 + 1e-6 && s < F - 1e-6));
              if (k > 0) CHECK(int(p.band[size_t(k)]) >= int(p.band[size_t(k - 1)]));  // fast pairs first
              if (c.type == RopeType::llama3) {  // by wavelength against L/high_freq_factor and L/low_freq_factor
                CHECK(p.high_freq_wavelength == doctest::Approx(config.rope_scaling.original_max / config.rope_scaling.high_freq_factor));
                CHECK(p.low_freq_wavelength == doctest::Approx(config.rope_scaling.original_max / config.rope_scaling.low_freq_factor));
                const double w = p.wavelength[size_t(k)];
                CHECK((p.band[size_t(k)] == RopeBand::kept) == (w < p.high_freq_wavelength));
                CHECK((p.band[size_t(k)] == RopeBand::scaled) == (w > p.low_freq_wavelength));
              }
              if (c.type == RopeType::yarn) {  // by k against the correction range
                CHECK((p.band[size_t(k)] == RopeBand::kept) == (k <= p.correction_low));
                CHECK((p.band[size_t(k)] == RopeBand::scaled) == (k >= p.correction_high));
              }
            }
            // The fixtures were shrunk so that each band holds pairs: all three for llama3 and YaRN.
            CHECK(bands.size() == (c.type == RopeType::linear ? 1u : 3u));
            break;
          }
          case RopeType::dynamic:
            CHECK(p.band.empty());
            if (T <= config.rope_scaling.max_positions) {
              seen.insert("dynamic within");
              CHECK(p.dynamic_base == p.rope.base);
              for (double s : p.stretch) CHECK(s == 1.0);
            } else {
              seen.insert("dynamic beyond");
              CHECK(p.dynamic_base > p.rope.base);
              // θ'_k = dynamic_base^(−2k/d): the slowest pair stretches most, pair 0 not at all
              for (int k = 0; k < half; ++k)
                CHECK(p.theta_scaled[size_t(k)] ==
                      doctest::Approx(std::pow(p.dynamic_base, -2.0 * k / p.rotated_dim)).epsilon(1e-5));
              CHECK(p.stretch.front() == 1.0);
              CHECK(p.stretch.back() == *std::max_element(p.stretch.begin(), p.stretch.end()));
            }
            break;
          case RopeType::longrope: {
            CHECK(p.band.empty());
            CHECK(p.long_factors == (T > config.rope_scaling.original_max));
            seen.insert(p.long_factors ? "long" : "short");
            const std::vector<double>& used = p.long_factors ? config.rope_scaling.long_factor : config.rope_scaling.short_factor;
            CHECK(p.unused_factors == (p.long_factors ? config.rope_scaling.short_factor : config.rope_scaling.long_factor));
            for (int k = 0; k < half; ++k) CHECK(p.stretch[size_t(k)] == doctest::Approx(used[size_t(k)]).epsilon(1e-6));
            break;
          }
          case RopeType::plain: break;
        }
      }
    }
  }
  CHECK(seen == std::set<std::string>{"dynamic within", "dynamic beyond", "long", "short"});
  CHECK_THROWS_AS(layer_positions(config_of("llama_dynamic_f32"), 0, 0), InputError);
}
