// Scene JSON: round trip, tolerance of old and unknown keys, typed errors; list parsers.
#include <doctest/doctest.h>

#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"
#include "attnscope/core/parse_lists.h"
#include "attnscope/scene/scene_json.h"
#include "run_cli.h"

using namespace attnscope;

TEST_CASE("scene json: every setting, each set to a non-default value, round-trips") {
  Scene s;
  s.input.source = InputSource::grid;
  s.input.text = "我喜欢打篮球";
  s.input.tensor_path = "x.npy";
  s.input.tokenizer_path = "models/qwen3/";
  s.input.grid = {"checkerboard", "photo.png", 12, 20, 99};
  s.model.kind = AttentionKind::gqa;
  s.model.d_model = 128, s.model.heads = 16, s.model.groups = 4;
  s.model.causal = true, s.model.scale_scores = false;
  s.model.seed = 1234567890123ull;
  s.model.weights = WeightSource::independent;
  s.model.weights_dir = "w/";
  s.model.designed = {"previous", "first"};
  s.model.kv_rank = 24, s.model.q_rank = 32, s.model.rope_dim = 4, s.model.differential = true;
  s.model.linear_normalize = false, s.model.decay = 0.9;
  s.model.window = 5, s.model.sinks = 2, s.model.sink_logits = true, s.model.positions = PositionScheme::rope;
  s.model.rope_base = 500000, s.model.rope_layout = RopeLayout::interleaved, s.model.rope_scaling = RopeScaling::yarn;
  s.model.rope_factor = 8, s.model.rope_original_context = 64;
  s.relpos.heads = 3;
  s.relpos.alpha = 2.5;
  s.relpos.alphas = {0.5, 1, 2};
  s.relpos.deltas = {{-1, 0}, {0.5, 1}, {2, -2}};
  s.relpos.delta_preset = "random";
  s.relpos.delta_seed = 77;
  s.relpos.pad_keys = true;
  s.relpos.query_row = 4, s.relpos.query_col = 5, s.relpos.query_index = 6;
  s.relpos.mixed = true;
  s.relpos.lambda = 0.25;
  s.conv = {"custom", {0, 1, 0, 1, -4, 1, 0, 1, 0}, 20};
  s.view = {View::conv, "magma", true, ScaleMode::locked, 0.1, 0.7, 3};
  s.view.token_set.axis = TokenSetAxis::keys, s.view.token_set.tokens = {1, 3}, s.view.token_set.reduce = SetReduce::mean;

  // Every value written differs from the default scene's: no field was left at its default.
  const nlohmann::json written = scene_to_json(s), defaults = scene_to_json(Scene{});
  int leaves = 0;
  // items() by name, not structured bindings: INFO's lambda cannot capture one in clang 14.
  for (const auto& s_item : defaults.items()) {
    const std::string section = s_item.key();
    const nlohmann::json& object = s_item.value();
    if (!object.is_object()) continue;
    for (const auto& k_item : object.items()) {
      const std::string key = k_item.key();
      const nlohmann::json& value = k_item.value();
      if (value.is_object()) {
        for (const auto& l_item : value.items()) {
          const std::string sub = l_item.key();
          const nlohmann::json& leaf = l_item.value();
          INFO(section << "." << key << "." << sub);
          CHECK(written[section][key][sub] != leaf);
          ++leaves;
        }
      } else {
        INFO(section << "." << key);
        CHECK(written[section][key] != value);
        ++leaves;
      }
    }
  }
  CHECK(leaves == 59);  // the fields of scene.h: a new one needs a line above
  const Scene back = scene_from_json(nlohmann::json::parse(written.dump()));
  CHECK(back == s);
  CHECK(back.input.text == "我喜欢打篮球");

  const auto path = attnscope::test::fresh_dir("scene_json") / "s.json";
  save_scene(path, s);
  CHECK(load_scene(path) == s);
}

TEST_CASE("scene json: missing keys keep defaults, unknown keys are reported, newer formats warned") {
  std::vector<std::string> warnings;
  const Scene s = scene_from_json(nlohmann::json::parse(R"({"attnscope_scene": 99, "model": {"heads": 4, "colour": 1},
                                                             "extra": true})"),
                                  &warnings);
  CHECK(s.model.heads == 4);
  CHECK(s.model.d_model == Scene{}.model.d_model);
  CHECK(s.input.text == Scene{}.input.text);
  REQUIRE(warnings.size() == 3);
  CHECK(warnings[0].find("newer attnscope") != std::string::npos);
  CHECK(warnings[1].find("model.colour") != std::string::npos);
  CHECK(warnings[2].find("'extra'") != std::string::npos);
}

TEST_CASE("scene json: wrong types and malformed files name the key or the position") {
  using nlohmann::json;
  CHECK_THROWS_WITH_AS(scene_from_json(json::parse(R"({"model": {"heads": "eight"}})")),
                       doctest::Contains("'model.heads' must be a whole number"), InputError);
  CHECK_THROWS_WITH_AS(scene_from_json(json::parse(R"({"model": {"kind": "moe"}})")),
                       doctest::Contains("valid: single, mha, mqa, gqa"), InputError);
  CHECK_THROWS_WITH_AS(scene_from_json(json::parse(R"({"view": {"view": "spiral"}})")),
                       doctest::Contains("valid: heads, shapes, positions, relpos1d, relpos2d, conv"), InputError);
  CHECK_THROWS_WITH_AS(scene_from_json(json::parse(R"({"relpos": {"deltas": [[1]]}})")),
                       doctest::Contains("relpos.deltas"), InputError);
  CHECK_THROWS_WITH_AS(scene_from_json(json::parse(R"({"model": {"seed": -1}})")),
                       doctest::Contains("non-negative"), InputError);
  CHECK_THROWS_WITH_AS(scene_from_json(json::parse(R"({"model": {"heads": 1e99}})")),
                       doctest::Contains("whole number"), InputError);
  CHECK_THROWS_WITH_AS(scene_from_json(json::parse("[1, 2]")), doctest::Contains("JSON object"), InputError);
  const auto dir = attnscope::test::fresh_dir("scene_bad");
  write_file_atomic(dir / "bad.json", R"({"model": {"heads": 4)");
  CHECK_THROWS_WITH_AS(load_scene(dir / "bad.json"), doctest::Contains("is not valid JSON"), InputError);
  CHECK_THROWS_WITH_AS(load_scene(dir / "none.json"), doctest::Contains("no such file"), InputError);
}

TEST_CASE("parse lists: numbers, deltas and grid sizes, with errors that point at the item") {
  CHECK(parse_number_list("0.5, 1,2e1", "--alphas") == std::vector<double>{0.5, 1, 20});
  CHECK_THROWS_WITH_AS(parse_number_list("1,,2", "--alphas"), doctest::Contains("--alphas item 2 is empty"), InputError);
  CHECK_THROWS_WITH_AS(parse_number_list("1,abc", "--alphas"), doctest::Contains("'abc' is not a number"), InputError);
  CHECK_THROWS_WITH_AS(parse_number_list("nan", "--alphas"), doctest::Contains("not a finite number"), InputError);
  CHECK_THROWS_WITH_AS(parse_number_list("inf", "--alphas"), doctest::Contains("not a finite number"), InputError);
  CHECK_THROWS_WITH_AS(parse_number_list("1e999", "--alphas"), doctest::Contains("not a finite number"), InputError);
  CHECK_THROWS_AS(parse_number_list("", "--alphas"), InputError);
  const auto d2 = parse_delta_list("-1,0; 0,1", 2);
  REQUIRE(d2.size() == 2);
  CHECK(d2[0] == std::array<double, 2>{-1, 0});
  CHECK(d2[1] == std::array<double, 2>{0, 1});
  const auto d1 = parse_delta_list("-1;0;1", 1);
  CHECK(d1[0] == std::array<double, 2>{0, -1});
  CHECK_THROWS_WITH_AS(parse_delta_list("1,2,3", 2), doctest::Contains("delta 1 '1,2,3' must have 2 numbers"), InputError);
  CHECK_THROWS_WITH_AS(parse_delta_list("0,1;x,1", 2), doctest::Contains("delta item 2 'x' is not a number"), InputError);
  CHECK(parse_grid_size("16x12") == std::array<int, 2>{16, 12});
  CHECK_THROWS_AS(parse_grid_size("16"), InputError);
  CHECK_THROWS_AS(parse_grid_size("-1x4"), InputError);
  CHECK_THROWS_AS(parse_grid_size("99999999999999x4"), InputError);
}
