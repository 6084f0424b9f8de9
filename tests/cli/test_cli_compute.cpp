// `attnscope compute` end to end: the files it writes, and bad inputs that must exit 2 and write nothing.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "attnscope/analysis/analysis.h"
#include "attnscope/io/file_io.h"
#include "attnscope/io/npy.h"
#include "check.h"
#include "run_cli.h"

using namespace attnscope;
using namespace attnscope::test;
namespace fs = std::filesystem;

TEST_CASE("cli compute: writes every tensor with the documented shapes, equal to the engine's") {
  const fs::path out = fresh_dir("cli_compute") / "out";
  const CliRun r = run_cli("compute --text 'The cat sat on the mat.' --kind gqa --heads 4 --groups 2 --d-model 32 "
                           "--causal --seed 9 --out " + shell_quote(out.string()));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("wrote 8 files") != std::string::npos);
  // T = 7 tokens, H = 4, G = 2, d_k = 8
  CHECK(read_npy(out / "probs.npy").shape == std::vector<int64_t>{4, 7, 7});
  CHECK(read_npy(out / "scores.npy").shape == std::vector<int64_t>{4, 7, 7});
  CHECK(read_npy(out / "output.npy").shape == std::vector<int64_t>{7, 32});
  CHECK(read_npy(out / "q.npy").shape == std::vector<int64_t>{4, 7, 8});
  CHECK(read_npy(out / "k.npy").shape == std::vector<int64_t>{2, 7, 8});
  CHECK(read_npy(out / "v.npy").shape == std::vector<int64_t>{2, 7, 8});

  Scene s;
  s.input.text = "The cat sat on the mat.";
  s.model.kind = AttentionKind::gqa;
  s.model.heads = 4, s.model.groups = 2, s.model.d_model = 32, s.model.causal = true, s.model.seed = 9;
  const Analysis a = analyse(s);
  const NpyArray probs = read_npy(out / "probs.npy");
  for (int h = 0; h < 4; ++h)
    for (int i = 0; i < 7; ++i)
      for (int j = 0; j < 7; ++j) CHECK(probs.data[size_t((h * 7 + i) * 7 + j)] == a.attention->result.probs[h](i, j));
  check_close(read_npy_matrix(out / "output.npy"), a.attention->result.output, 0, "output.npy");

  const auto trace = nlohmann::json::parse(read_file(out / "trace.json", 1 << 20));
  CHECK(trace["settings"]["groups"] == 2);
  CHECK(trace["parameters"]["wk"] == 32 * 2 * 8);
  CHECK(trace["kv_cache_bytes_per_token_per_layer"]["fp16"] == 2 * 2 * 8 * 2);
  bool found = false;
  for (const auto& step : trace["steps"]) found |= step["text"] == "split heads: [T, H, d_k] = [7, 4, 8]";
  CHECK(found);
  const auto tokens = nlohmann::json::parse(read_file(out / "tokens.json", 1 << 20));
  CHECK(tokens.size() == 7);
  CHECK(tokens[6]["text"] == ".");
}

TEST_CASE("cli compute: --input X.npy and --weights DIR reproduce the engine with loaded tensors") {
  const fs::path dir = fresh_dir("cli_compute_npy");
  const AttentionShape shape{12, 3, 1};
  const AttentionWeights w = random_weights(shape, 77);
  fs::create_directories(dir / "w");
  write_npy(dir / "w" / "wq.npy", w.wq);
  write_npy(dir / "w" / "wk.npy", w.wk);
  write_npy(dir / "w" / "wv.npy", w.wv);
  write_npy(dir / "w" / "wo.npy", w.wo);
  Mat x(5, 12);
  for (int i = 0; i < x.size(); ++i) x.data()[i] = float(i % 7) * 0.3f - 1.0f;
  write_npy(dir / "x.npy", x);
  const CliRun r = run_cli("compute --input " + shell_quote((dir / "x.npy").string()) + " --kind mqa --heads 3 --weights " +
                           shell_quote((dir / "w").string()) + " --out " + shell_quote((dir / "out").string()));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const AttentionResult expected = grouped_attention(x, w, shape, {});
  check_close(read_npy_matrix(dir / "out" / "output.npy"), expected.output, 0, "output");
  CHECK_FALSE(fs::exists(dir / "out" / "tokens.json"));
}

TEST_CASE("cli compute: bad input exits 2 with one clear line and writes nothing") {
  const fs::path dir = fresh_dir("cli_compute_bad");
  write_file_atomic(dir / "broken.npy", "\x93NUMPY garbage");
  write_file_atomic(dir / "bad_utf8.txt", "x");
  struct Bad { std::string args; const char* message; };
  const Bad cases[] = {
      {"--text 'a b' --heads 3", "heads must divide d_model"},
      {"--text 'a b' --kind gqa --heads 8 --groups 3", "groups must divide heads"},
      {"--text 'a b' --kind mqa --groups 2", "--kind mqa means one kv group"},
      {"--text 'a b' --kind mha --heads 8 --groups 4", "--kind mha means groups = heads"},
      {"--text 'a b' --kind single --heads 4", "--kind single means one head"},
      {"--text 'a b' --kind moe", "unknown attention kind 'moe'"},
      {"--text 'a b' --d-model 0", "d_model must be between 1 and"},
      {"--text 'a b' --heads -2", "heads must be between 1 and"},
      {"--text ''", "the text is empty"},
      {"--text '   '", "the text is empty"},
      {"--text \"$(printf 'ok \\377')\"", "invalid UTF-8 at byte 3"},
      {"--text \"$(printf 'w %.0s' $(seq 1 2100))\"", "tokens; the limit is 2048"},
      {"--input " + shell_quote((dir / "broken.npy").string()), "is not a valid .npy file"},
      {"--input " + shell_quote((dir / "none.npy").string()), "no such file"},
      {"--text hi --weights " + shell_quote((dir / "nowhere").string()), "does not exist"},
      {"--text hi --input x.npy", "exclusive"},
      {"--text hi --bogus 1", "bogus"},
  };
  for (const Bad& b : cases) {
    const fs::path out = dir / "out";
    fs::remove_all(out);
    const CliRun r = run_cli("compute " + b.args + " --out " + shell_quote(out.string()));
    CAPTURE(b.args);
    CAPTURE(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(b.message) != std::string::npos);
    CHECK(r.err.rfind("error: ", 0) == 0);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_FALSE(fs::exists(out));
  }
  // An --out that is an existing file is refused.
  const CliRun r = run_cli("compute --text hi --out " + shell_quote((dir / "broken.npy").string()));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("is a file, not a folder") != std::string::npos);
}
