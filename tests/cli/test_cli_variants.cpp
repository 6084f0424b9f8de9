// `compute` and `export` with MLA (--kind mla --kv-rank --q-rank --rope-dim) and differential attention
// (--differential): the files written, equal to the engine's, and bad values that exit 2 writing nothing.
#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "attnscope/analysis/analysis.h"
#include "attnscope/io/file_io.h"
#include "attnscope/io/npy.h"
#include "check.h"
#include "run_cli.h"

using namespace attnscope;
using namespace attnscope::test;
namespace fs = std::filesystem;

TEST_CASE("cli compute: --kind mla writes the latent c_kv.npy and the MLA shapes, equal to the engine's") {
  const fs::path out = fresh_dir("cli_variants_mla") / "out";
  const CliRun r = run_cli("compute --text 'The cat sat on the mat.' --kind mla --heads 4 --d-model 32 --kv-rank 10 "
                           "--q-rank 12 --rope-dim 4 --causal --seed 9 --out " + shell_quote(out.string()));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "wrote 10 files"));
  // The rotary part's profile: d_R / 2 = 2 pairs at the default base.
  const auto positions = nlohmann::json::parse(read_file(out / "positions.json", 1 << 22));
  CHECK(positions["head_dim"] == 4);
  // T = 7, H = 4, d_N = d_v = 8, d_R = 4, r_kv = 10
  CHECK(read_npy(out / "c_kv.npy").shape == std::vector<int64_t>{7, 10});
  CHECK(read_npy(out / "q.npy").shape == std::vector<int64_t>{4, 7, 12});
  CHECK(read_npy(out / "k.npy").shape == std::vector<int64_t>{4, 7, 12});
  CHECK(read_npy(out / "v.npy").shape == std::vector<int64_t>{4, 7, 8});
  CHECK(read_npy(out / "probs.npy").shape == std::vector<int64_t>{4, 7, 7});
  Scene s;
  s.input.text = "The cat sat on the mat.";
  s.model.kind = AttentionKind::mla;
  s.model.heads = 4, s.model.d_model = 32, s.model.kv_rank = 10, s.model.q_rank = 12, s.model.rope_dim = 4;
  s.model.causal = true, s.model.seed = 9;
  const Analysis a = analyse(s);
  check_close(read_npy_matrix(out / "c_kv.npy"), a.attention->result.c_kv, 0, "c_kv.npy");
  check_close(read_npy_matrix(out / "output.npy"), a.attention->result.output, 0, "output.npy");
  const auto trace = nlohmann::json::parse(read_file(out / "trace.json", 1 << 20));
  CHECK(trace["settings"]["kind"] == "mla");
  CHECK(trace["variant"]["kv_rank"] == 10);
  CHECK(trace["variant"]["cache_values_per_token"] == 14);
  CHECK(trace["kv_cache_bytes_per_token_per_layer"]["fp32"] == 14 * 4);
  bool found = false;
  for (const auto& step : trace["steps"]) found |= step["text"] == "compress K, V to the latent (cached): [T, r_kv] = [7, 10]";
  CHECK(found);
}

TEST_CASE("cli compute: --differential writes the signed map and both softmax maps") {
  const fs::path out = fresh_dir("cli_variants_diff") / "out";
  const CliRun r = run_cli("compute --text 'The cat sat on the mat.' --kind gqa --heads 4 --groups 2 --d-model 32 "
                           "--differential --causal --out " + shell_quote(out.string()));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "wrote 10 files"));
  CHECK(read_npy(out / "probs.npy").shape == std::vector<int64_t>{4, 7, 7});
  CHECK(read_npy(out / "probs_1.npy").shape == std::vector<int64_t>{4, 7, 7});
  CHECK(read_npy(out / "scores.npy").shape == std::vector<int64_t>{8, 7, 7});
  CHECK(read_npy(out / "q.npy").shape == std::vector<int64_t>{8, 7, 4});
  CHECK(read_npy(out / "k.npy").shape == std::vector<int64_t>{4, 7, 4});
  CHECK(read_npy(out / "v.npy").shape == std::vector<int64_t>{2, 7, 8});
  const NpyArray probs = read_npy(out / "probs.npy");
  CHECK(*std::min_element(probs.data.begin(), probs.data.end()) < 0);  // signed
  const auto trace = nlohmann::json::parse(read_file(out / "trace.json", 1 << 20));
  CHECK(trace["variant"]["name"] == "differential");
  CHECK(double(trace["variant"]["lambda_init"]) == doctest::Approx(0.2));
}

TEST_CASE("cli export: a differential figure is written; fixed 0-1 and --scores are refused with the reason") {
  const fs::path dir = fresh_dir("cli_variants_export");
  const std::string base = "export --what heads --text 'The cat sat on the mat.' --heads 4 --d-model 32 --differential ";
  const CliRun ok = run_cli(base + "--format png --out " + shell_quote((dir / "diff.png").string()));
  INFO(ok.err);
  CHECK(ok.exit_code == 0);
  CHECK(fs::exists(dir / "diff.png"));
  const CliRun mla = run_cli("export --what heads --text 'The cat sat.' --kind mla --kv-rank 8 --format svg --out " +
                             shell_quote((dir / "mla.svg").string()));
  INFO(mla.err);
  CHECK(mla.exit_code == 0);
  CHECK(contains(read_file(dir / "mla.svg", 1 << 24), "r_kv=8"));
  const CliRun fixed = run_cli(base + "--format png --scale-mode fixed --out " + shell_quote((dir / "fixed.png").string()));
  CHECK(fixed.exit_code == 2);
  CHECK(contains(fixed.err, "is signed"));
  CHECK_FALSE(fs::exists(dir / "fixed.png"));
  const CliRun scores = run_cli(base + "--format png --scores --out " + shell_quote((dir / "scores.png").string()));
  CHECK(scores.exit_code == 2);
  CHECK(contains(scores.err, "two score maps per head"));
}

TEST_CASE("cli compute: bad MLA and differential values exit 2 with what is valid, writing nothing") {
  const fs::path dir = fresh_dir("cli_variants_bad");
  struct Bad {
    std::string args, message;
  };
  const Bad cases[] = {
      {"--kind mla --kv-rank 65", "kv_rank) must be between 1 and the width d_model = 64"},
      {"--kind mla --kv-rank 0", "kv_rank) must be between 1 and the width"},
      {"--kind mla --q-rank 100", "q_rank) must be 0 (no query compression) or between 1"},
      {"--kind mla --rope-dim 3", "rope_dim) must be an even number from 0 to the head width d_model/heads = 8"},
      {"--kind mla --rope-dim 10", "rope_dim) must be an even number from 0 to the head width"},
      {"--kind mla --differential", "--differential works with --kind single, mha, mqa or gqa, not mla"},
      {"--kv-rank 8", "--kv-rank applies to multi-head latent attention: add --kind mla"},
      {"--kind gqa --rope-dim 4", "--rope-dim applies to multi-head latent attention"},
      {"--kind mla --designed previous,next", "cannot use designed heads"},
      {"--differential --heads 4 --d-model 12", "d_model / heads must be even"},
  };
  for (const Bad& b : cases) {
    const fs::path out = dir / "out";
    fs::remove_all(out);
    const CliRun r = run_cli("compute --text 'a b c' " + b.args + " --out " + shell_quote(out.string()));
    CAPTURE(b.args);
    CAPTURE(r.err);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, b.message));
    CHECK_FALSE(fs::exists(out));
  }
}
