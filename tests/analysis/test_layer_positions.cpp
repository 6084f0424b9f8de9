// How a checkpoint's layer puts positions in (model_layer.h layer_positions), read from the fixtures'
// configs: GPT-2 learns absolute positions, SmolLM3's fourth layer is NoPE, Gemma 3's local layers have
// their own RoPE base, and DeepSeek turns only its rotary part, on interleaved pairs, with its YaRN.
#include <doctest/doctest.h>

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
