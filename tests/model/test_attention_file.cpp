// Tests of attentions computed elsewhere (issue 13 item 9) and of a real layer as an Analysis: the
// precomputed fixture is what README's transformers snippet writes, made from the qwen2_gqa fixture.
#include <sys/stat.h>

#include <doctest/doctest.h>

#include "attnscope/analysis/model_layer.h"
#include "attnscope/figure/export.h"
#include "attnscope/io/file_io.h"
#include "attnscope/io/npy.h"
#include "attnscope/model/attention_file.h"
#include "check.h"
#include "model/checkpoint_fixtures.h"
#include "run_cli.h"

using namespace attnscope;
using namespace attnscope::model;
using attnscope::test::contains;
using attnscope::test::error_of;
using attnscope::test::model_fixture;
namespace fs = std::filesystem;

namespace {

const fs::path precomputed = model_fixture("precomputed");

std::string open_error(const fs::path& file, const fs::path& tokens, const fs::path& config = {}) {
  return error_of([&] { (void)open_attentions(file, tokens, config); });
}

}  // namespace

TEST_CASE("attention file: the snippet's .npy and .safetensors open with the config's K/V groups") {
  const auto reference = test::fixture_reference("qwen2_gqa", "attentions");
  for (const char* file : {"attentions.npy", "attentions.safetensors"}) {
    CAPTURE(file);
    const AttentionStack s = open_attentions(precomputed / file, precomputed / "tokens.json", precomputed / "config.json");
    CHECK(s.layers == 2);
    CHECK(s.heads == 4);
    CHECK(s.kv_heads == 2);
    CHECK(s.tokens == 12);
    CHECK(s.causal);
    CHECK(s.groups_from_config);
    CHECK(s.attentions == reference.values);
    CHECK(s.ids == test::fixture_ids("qwen2_gqa"));
    CHECK(s.labels.front() == "The");
  }
  const AttentionStack no_config = open_attentions(precomputed / "attentions.npy", precomputed / "tokens.json");
  CHECK(no_config.kv_heads == 4);
  CHECK_FALSE(no_config.groups_from_config);
}

TEST_CASE("attention file: wrong shapes, scores instead of probabilities and mismatched tokens are refused") {
  const fs::path dir = test::fresh_dir("attention_file");
  const auto a = read_npy(precomputed / "attentions.npy", 4);
  // 3D instead of 4D.
  write_npy(dir / "three.npy", a.data.data(), {8, 12, 12});
  CHECK(contains(open_error(dir / "three.npy", precomputed / "tokens.json"),
                 "has shape [8, 12, 12]; an attention stack is [layers, heads, tokens, tokens]"));
  // Scores, not probabilities.
  std::vector<float> scores = a.data;
  scores[5] = 3.5f;
  write_npy(dir / "scores.npy", scores.data(), {2, 4, 12, 12});
  CHECK(contains(open_error(dir / "scores.npy", precomputed / "tokens.json"), "is not a probability"));
  std::vector<float> half = a.data;
  for (float& v : half) v *= 0.5f;
  write_npy(dir / "half.npy", half.data(), {2, 4, 12, 12});
  CHECK(contains(open_error(dir / "half.npy", precomputed / "tokens.json"), "layer 0, head 0, query 0 sums to 0.5"));
  // Tokens that do not match T.
  write_file_atomic(dir / "tokens.json", R"({"ids": [1, 2, 3]})");
  CHECK(contains(open_error(precomputed / "attentions.npy", dir / "tokens.json"),
                 "\"ids\" must be a list of 12 entries, one per token"));
  write_file_atomic(dir / "tokens.json", R"([1, 2])");
  CHECK(contains(open_error(precomputed / "attentions.npy", dir / "tokens.json"), "must be a JSON object with \"ids\""));
  write_file_atomic(dir / "tokens.json", "{\"ids\": [1,");
  CHECK(contains(open_error(precomputed / "attentions.npy", dir / "tokens.json"), "is not valid JSON"));
  // A config of another model.
  write_file_atomic(dir / "config.json", R"({"num_attention_heads": 8, "num_key_value_heads": 2})");
  CHECK(contains(open_error(precomputed / "attentions.npy", precomputed / "tokens.json", dir / "config.json"),
                 "gives 8 attention heads, but"));
  // A safetensors file of several unnamed tensors, and another extension.
  const std::vector<float> x{1, 0, 0, 1};
  write_file_atomic(dir / "two.safetensors", serialize_safetensors({{"a", {1, 1, 2, 2}, x.data()}, {"b", {1}, x.data()}}));
  CHECK(contains(open_error(dir / "two.safetensors", precomputed / "tokens.json"), "none is named \"attentions\""));
  CHECK(contains(open_error(dir / "tokens.json", precomputed / "tokens.json"), "is .npy or .safetensors"));
  CHECK(contains(open_error(dir / "none.npy", precomputed / "tokens.json"), "no such file"));
}

TEST_CASE("model layer: an attentions file's layer exports its heads with the model's K/V groups") {
  const AttentionStack s = open_attentions(precomputed / "attentions.npy", precomputed / "tokens.json", precomputed / "config.json");
  const Analysis a = layer_analysis(s, 1);
  CHECK(a.scene.model.kind == AttentionKind::gqa);
  CHECK(a.scene.model.causal);
  ExportRequest r;
  r.format = ExportFormat::npy;
  const ExportArray arr = export_array(a, r);
  CHECK(arr.shape == std::vector<int64_t>{4, 12, 12});
  CHECK(std::equal(arr.values.begin(), arr.values.end(), s.attentions.begin() + 4 * 144));
  CHECK(arr.block_names[2] == "head 2 (kv group 1)");
  CHECK(arr.row_labels.front() == "The");
  CHECK(contains(export_caption(a, r), "attentions.npy · layer 1 of 2 · GQA · H=4 · G=2 · causal"));
  r.scores = true;
  CHECK(contains(error_of([&] { (void)export_array(a, r); }), "leave out --scores"));
  CHECK(contains(error_of([&] { (void)layer_analysis(s, 2); }), "layer 2 does not exist: this model has 2 layers (0-1)"));
  // Its shape trace knows only the probabilities: H, G and T, no projections.
  const Trace& t = a.attention->trace;
  CHECK_FALSE(t.projections_known);
  CHECK(t.shape.heads == 4);
  CHECK(t.shape.groups == 2);
  CHECK(t.shape.tokens == 12);
  REQUIRE_FALSE(t.steps.empty());
  CHECK(t.steps.back().key == "softmax");
  CHECK(t.steps.back().shape == std::vector<int64_t>{4, 12, 12});
  for (const TraceStep& step : t.steps) CHECK(step.key.rfind("project", 0) != 0);
}

TEST_CASE("model layer: a checkpoint layer carries the forward pass's maps, scores and q/k/v") {
  const auto m = model::open(model_fixture("qwen2_gqa"));
  ForwardOptions options;
  options.detail_layer = 1;
  const auto ids = test::fixture_ids("qwen2_gqa");
  const ForwardResult f = forward(*m, ids, options);
  const std::vector<std::string> labels(ids.size(), "t");
  const Analysis a = layer_analysis(*m, f, labels);
  const AttentionAnalysis& att = *a.attention;
  CHECK(att.shape.head_dim() == m->config.head_dim);
  REQUIRE(att.result.probs.size() == 4);
  test::check_close(att.result.probs[3], f.attention(1, 3), 0, "probs");
  CHECK(att.result.scores.size() == 4);
  CHECK(att.result.k.size() == 2);
  ExportRequest r;
  CHECK(contains(export_caption(a, r), "qwen2_gqa · layer 1 of 2 · GQA · H=4 · G=2 · causal · probabilities"));
  // Its shape trace is the checkpoint's: C, H, G, d_k from the config, T from the pass, RoPE, q/k/v biases.
  const model::ModelConfig& c = m->config;
  const Trace& t = att.trace;
  CHECK(t.projections_known);
  CHECK(t.shape.d_model == c.d_model);
  CHECK(t.shape.heads == c.heads);
  CHECK(t.shape.groups == c.kv_heads);
  CHECK(t.shape.head_dim == c.head_dim);
  CHECK(t.shape.tokens == int64_t(ids.size()));
  CHECK(t.steps.front().shape == std::vector<int64_t>{int64_t(ids.size()), c.d_model});
  CHECK(std::any_of(t.steps.begin(), t.steps.end(), [](const TraceStep& s) { return s.key == "rope"; }));
  CHECK(t.params.wk == int64_t(c.d_model) * c.kv_heads * c.head_dim);
  CHECK(t.kv_bytes_per_token_fp32 == 2ll * c.kv_heads * c.head_dim * 4);
  const Analysis pooled = layer_analysis(*convert_kv_heads(*m, 1), forward(*convert_kv_heads(*m, 1), ids, options), labels);
  CHECK(pooled.scene.model.kind == AttentionKind::mqa);
  CHECK(contains(pooled.attention->source_note, "K/V pooled from 2 heads"));
  CHECK(pooled.attention->trace.shape.groups == 1);
  CHECK(contains(error_of([&] { (void)layer_analysis(*m, forward(*m, ids), labels); }), "kept no layer's detail"));
}

TEST_CASE("attention file: which files a path names (a file, a folder, a checkpoint beside attentions)") {
  const fs::path dir = test::fresh_dir("attention_files_found");
  // The snippet's folder: attentions.npy, tokens.json, config.json; found from the folder and from any file in it.
  for (const char* f : {"attentions.npy", "tokens.json", "config.json"}) fs::copy_file(precomputed / f, dir / f);
  for (const fs::path& path : {dir, dir / "tokens.json", dir / "attentions.npy"}) {
    CAPTURE(path);
    const std::optional<AttentionFiles> found = find_attention_files(path);
    REQUIRE(found.has_value());
    CHECK(found->attentions == dir / "attentions.npy");
    CHECK(found->tokens == dir / "tokens.json");
    CHECK(found->config == dir / "config.json");
  }
  // Any .npy file, and a safetensors file named attentions*, is an attentions file wherever it is.
  fs::copy_file(precomputed / "attentions.npy", dir / "layer_stack.npy");
  CHECK(find_attention_files(dir / "layer_stack.npy")->attentions == dir / "layer_stack.npy");
  fs::copy_file(precomputed / "attentions.safetensors", dir / "attentions_70b.safetensors");
  CHECK(find_attention_files(dir / "attentions_70b.safetensors")->attentions == dir / "attentions_70b.safetensors");
  // Without config.json, `compute --checkpoint`'s model.json gives the groups; with neither, none.
  fs::remove(dir / "config.json");
  CHECK(find_attention_files(dir)->config.empty());
  write_file_atomic(dir / "model.json", R"({"name": "m", "layers": 2, "heads": 4, "kv_heads": 2})");
  CHECK(find_attention_files(dir)->config == dir / "model.json");
  const AttentionStack s = open_attentions(*find_attention_files(dir));
  CHECK(s.kv_heads == 2);
  CHECK(s.groups_from_config);
  // A checkpoint folder stays a checkpoint, even with attentions written into it; other files are not attentions.
  CHECK_FALSE(find_attention_files(model_fixture("qwen2_gqa")).has_value());
  CHECK_FALSE(find_attention_files(model_fixture("qwen2_gqa") / "config.json").has_value());
  write_file_atomic(dir / "model.safetensors", "not read");
  CHECK_FALSE(find_attention_files(dir).has_value());
  CHECK(find_attention_files(dir / "attentions.npy").has_value());  // named directly, it is the file
  CHECK_FALSE(find_attention_files(dir / "missing_folder").has_value());
}

TEST_CASE("attention file: progress per layer ends at 1, and a set cancel flag stops the opening") {
  std::vector<double> seen;
  const AttentionStack s = open_attentions(precomputed / "attentions.npy", precomputed / "tokens.json", {},
                                           [&](double f) { seen.push_back(f); });
  REQUIRE(int(seen.size()) == s.layers);
  for (size_t i = 1; i < seen.size(); ++i) CHECK(seen[i] > seen[i - 1]);
  CHECK(seen.front() > 0);
  CHECK(seen.back() == 1.0);
  const std::atomic<bool> cancel{true};
  CHECK_THROWS_AS(open_attentions(precomputed / "attentions.npy", precomputed / "tokens.json", {}, {}, &cancel), Cancelled);
}

TEST_CASE("attention file: tokens.json ids are token ids (0 to 2^31 - 1), labels strings") {
  std::vector<int32_t> ids;
  std::vector<std::string> labels;
  parse_attention_tokens(R"({"ids": [0, 7, 2147483647]})", 3, "t.json", ids, labels);
  CHECK(ids == std::vector<int32_t>{0, 7, 2147483647});
  CHECK(labels == std::vector<std::string>{"0", "7", "2147483647"});
  parse_attention_tokens(R"({"labels": ["a", "我"]})", 2, "t.json", ids, labels);
  CHECK(ids.empty());
  CHECK(labels == std::vector<std::string>{"a", "我"});
  for (const char* bad : {R"({"ids": [-1, 2]})", R"({"ids": [2147483648, 2]})", R"({"ids": [18446744073709551615, 2]})",
                          R"({"ids": [1.5, 2]})"})
    CHECK(contains(error_of([&] { parse_attention_tokens(bad, 2, "t.json", ids, labels); }),
                   "'t.json': \"ids\" must hold token ids, whole numbers from 0 to 2147483647"));
  CHECK(contains(error_of([&] { parse_attention_tokens(R"({"labels": ["a", 3]})", 2, "t.json", ids, labels); }),
                 "\"labels\" must hold strings, got 3"));
  CHECK(contains(error_of([&] { parse_attention_tokens("{\"labels\": [\"\xff\"]}", 1, "t.json", ids, labels); }),
                 "is not valid JSON"));
}

TEST_CASE("attention file: a dimension of 0 or an absurd layer or head count is refused, not drawn") {
  const fs::path dir = test::fresh_dir("attention_file_dims");
  const std::vector<float> one{1.0f};
  struct Case {
    std::vector<int64_t> shape;
  };
  for (const Case& c : {Case{{2, 2, 0, 0}}, Case{{2, 0, 3, 3}}, Case{{0, 2, 3, 3}}, Case{{1, 8192, 1, 1}}}) {
    CAPTURE(c.shape);
    std::vector<float> values(size_t(c.shape[0] * c.shape[1] * c.shape[2] * c.shape[3]), 1.0f);
    write_file_atomic(dir / "attentions.safetensors",
                      serialize_safetensors({{"attentions", c.shape, values.empty() ? one.data() : values.data()}}));
    write_file_atomic(dir / "tokens.json", "{\"labels\": [" + std::string(c.shape[2] >= 1 ? "\"a\"" : "") + "]}");
    CHECK(contains(open_error(dir / "attentions.safetensors", dir / "tokens.json"),
                   "an attention stack is [layers, heads, tokens, tokens], each at least 1, with at most 4096"));
  }
}

TEST_CASE("attention file: a pipe named attentions.npy is an attentions file, refused as a pipe") {
  const fs::path dir = test::fresh_dir("attention_file_fifo");
  const fs::path fifo = dir / "attentions.npy";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  const std::optional<AttentionFiles> found = find_attention_files(fifo);
  REQUIRE(found.has_value());
  CHECK(contains(open_error(found->attentions, found->tokens), "named pipe (FIFO), not a regular file"));
}
