// Shape trace, parameter counts and KV-cache bytes (SPEC "Parameter counts").
#include <doctest/doctest.h>

#include <set>

#include "attnscope/attention/trace.h"

using namespace attnscope;

TEST_CASE("trace: steps carry the live numbers, e.g. split heads [T, H, d_k] = [6, 8, 64]") {
  const Trace t = shape_trace({512, 8, 2}, 6, true, false);
  std::vector<std::string> lines;
  for (const auto& s : t.steps) lines.push_back(s.text());
  auto has = [&](const std::string& line) { return std::find(lines.begin(), lines.end(), line) != lines.end(); };
  CHECK(has("input: [T, C] = [6, 512]"));
  CHECK(has("project Q: [T, H·d_k] = [6, 512]"));
  CHECK(has("project K: [T, G·d_k] = [6, 128]"));
  CHECK(has("split heads: [T, H, d_k] = [6, 8, 64]"));
  CHECK(has("split kv heads: [G, T, d_k] = [2, 6, 64]"));
  CHECK(has("share kv: [H, T, d_k] = [8, 6, 64]"));
  CHECK(has("causal mask: [H, T, T] = [8, 6, 6]"));
  CHECK(has("softmax: [H, T, T] = [8, 6, 6]"));
  CHECK(has("output: [T, C] = [6, 512]"));
  CHECK(t.steps.front().name == "input");
  CHECK(t.steps.back().name == "output");
  const Trace mha = shape_trace({512, 8, 8}, 6, false, false);
  for (const auto& s : mha.steps) {
    CHECK(s.name != "share kv");
    CHECK(s.name != "causal mask");
  }
}

TEST_CASE("trace: parameter counts and KV-cache bytes follow the formulas") {
  // C = 512, H = 8, G = 2, d_k = 64
  const Trace t = shape_trace({512, 8, 2}, 10, false, true);
  CHECK(t.params.wq == 512 * 8 * 64);
  CHECK(t.params.wk == 512 * 2 * 64);
  CHECK(t.params.wv == 512 * 2 * 64);
  CHECK(t.params.wo == 512 * 8 * 64);
  CHECK(t.params.biases == 8 * 64 + 2 * 2 * 64 + 512);
  CHECK(t.kv_bytes_per_token_fp32 == 2 * 2 * 64 * 4);
  CHECK(t.kv_bytes_per_token_fp16 == 2 * 2 * 64 * 2);
  // MQA keeps 1/H of MHA's KV cache.
  CHECK(shape_trace({512, 8, 8}, 1, false, false).kv_bytes_per_token_fp32 ==
        8 * shape_trace({512, 8, 1}, 1, false, false).kv_bytes_per_token_fp32);
}

TEST_CASE("trace: every step has its own stable key, the same for the same step in any shape") {
  // The window translates and compares steps by key; the names are English text that may be reworded.
  const Trace gqa = shape_trace({64, 4, 2}, 6, true, true);
  std::set<std::string> keys;
  for (const auto& s : gqa.steps) {
    CHECK_MESSAGE(!s.key.empty(), "step \"" << s.name << "\" has no key");
    CHECK_MESSAGE(keys.insert(s.key).second, "key \"" << s.key << "\" is used twice");
    CHECK(s.key.find(' ') == std::string::npos);
  }
  for (const auto& s : shape_trace({512, 8, 8}, 9, false, false).steps) {
    CHECK_MESSAGE(keys.count(s.key), "MHA step \"" << s.key << "\" is missing from the GQA trace");
    for (const auto& g : gqa.steps)
      if (g.key == s.key) CHECK(g.name == s.name);
  }
}

TEST_CASE("trace: a real model's layer keeps its own C, d_k, biases and RoPE") {
  // C = 96 is not H·d_k = 4·16 (a config's head_dim), q/k/v biases without an output bias, rotary positions.
  const Trace t = shape_trace(TraceShape{7, 96, 4, 2, 16, true, false, true, true});
  std::vector<std::string> lines;
  for (const auto& s : t.steps) lines.push_back(s.text());
  auto has = [&](const std::string& line) { return std::find(lines.begin(), lines.end(), line) != lines.end(); };
  CHECK(has("input: [T, C] = [7, 96]"));
  CHECK(has("project Q: [T, H·d_k] = [7, 64]"));
  CHECK(has("project K: [T, G·d_k] = [7, 32]"));
  CHECK(has("rotate Q, K (RoPE): [H, T, d_k] = [4, 7, 16]"));
  CHECK(has("output: [T, C] = [7, 96]"));
  CHECK(t.params.wq == 96 * 4 * 16);
  CHECK(t.params.wk == 96 * 2 * 16);
  CHECK(t.params.biases == 4 * 16 + 2 * 2 * 16);  // no output bias
  CHECK(t.kv_bytes_per_token_fp32 == 2 * 2 * 16 * 4);
  CHECK(t.shape.d_model == 96);
  // The seeded layer's trace is the same function with d_k = C/H and no RoPE.
  const Trace seeded = shape_trace({512, 8, 2}, 6, true, true);
  CHECK(seeded.shape.head_dim == 64);
  for (const auto& s : seeded.steps) CHECK(s.key != "rope");
}
