// test_cli_rollout.cpp — `compute --checkpoint … --rollout [--flow]` and `export --what rollout`: the files hold
// rollout.h's numbers on the same forward pass with the shapes --help states, the exported CSV is the figure's
// numbers, and bad values exit 2 with a message naming them and leave no file.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "attnscope/analysis/rollout.h"
#include "attnscope/figure/rollout_figure.h"
#include "attnscope/io/file_io.h"
#include "attnscope/io/npy.h"
#include "attnscope/model/forward.h"
#include "attnscope/pipeline/model_input.h"
#include "attnscope/pipeline/pipeline.h"
#include "check.h"
#include "csv_close.h"
#include "model/checkpoint_fixtures.h"
#include "run_cli.h"
#include "test_paths.h"

using namespace attnscope;
using namespace attnscope::test;
namespace fs = std::filesystem;

namespace {

double max_diff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return INFINITY;
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, double(std::abs(a[i] - b[i])));
  return d;
}

const char* const fixture = "gpt2_prefix_f32";

struct Direct {
  model::AttentionStack stack;
  Rollout rollout;
};

Direct direct(const std::string& name) {
  const auto m = model::open(model_fixture(name));
  const std::vector<int32_t> ids = fixture_ids(name);
  Direct d;
  d.stack = attention_stack(model::forward(*m, ids), model_tokens_from_ids(m->dir, ids), name, m->config.layer_window);
  d.rollout = attention_rollout(d.stack);
  return d;
}

std::string args_of(const std::string& name) {
  return "--checkpoint " + quoted(model_fixture(name)) + " --ids " + ids_arg(fixture_ids(name));
}

}  // namespace

TEST_CASE("cli rollout: compute --rollout --flow writes rollout.h's numbers in the shapes of --help") {
  const fs::path out = fresh_dir("cli_rollout_compute");
  const CliRun r = run_cli("compute " + args_of(fixture) + " --rollout --flow --out " + quoted(out));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const Direct d = direct(fixture);
  const int L = d.stack.layers, T = d.stack.tokens;
  const NpyArray rollout = read_npy(out / "rollout.npy", 3);
  CHECK(rollout.shape == std::vector<int64_t>{L, T, T});
  CHECK(max_diff(rollout.data, d.rollout.joint) <= 1e-6);
  const NpyArray mean = read_npy(out / "rollout_mean.npy", 3);
  CHECK(mean.shape == std::vector<int64_t>{L, T, T});
  CHECK(max_diff(mean.data, d.rollout.means) <= 1e-6);
  const AttentionFlow flow = attention_flow(d.rollout);  // every layer, every position
  const NpyArray f = read_npy(out / "flow.npy", 3);
  CHECK(f.shape == std::vector<int64_t>{L, T, T});
  CHECK(max_diff(f.data, flow.flow) <= 1e-5);
  const NpyArray share = read_npy(out / "flow_share.npy", 3);
  CHECK(max_diff(share.data, flow.share) <= 1e-5);

  // --position: the flow into that position alone, [L, 1, T].
  const fs::path one = fresh_dir("cli_rollout_compute_one");
  REQUIRE(run_cli("compute " + args_of(fixture) + " --rollout --flow --position 3 --out " + quoted(one)).exit_code == 0);
  FlowOptions at3;
  at3.position = 3;
  const NpyArray f3 = read_npy(one / "flow.npy", 3);
  CHECK(f3.shape == std::vector<int64_t>{L, 1, T});
  CHECK(max_diff(f3.data, attention_flow(d.rollout, at3).flow) <= 1e-5);
  // Without --rollout none of these files.
  const fs::path none = fresh_dir("cli_rollout_compute_none");
  REQUIRE(run_cli("compute " + args_of(fixture) + " --out " + quoted(none)).exit_code == 0);
  CHECK_FALSE(fs::exists(none / "rollout.npy"));
  CHECK_FALSE(fs::exists(none / "flow.npy"));
}

TEST_CASE("cli rollout: export --what rollout CSV is the figure's numbers; PNG and SVG are written") {
  const fs::path out = fresh_dir("cli_rollout_export");
  const CliRun r = run_cli("export " + args_of(fixture) + " --what rollout --flow --position 4 --format csv --out " +
                           quoted(out / "rollout.csv"));
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const Direct d = direct(fixture);
  FlowOptions at4;
  at4.position = 4;
  const AttentionFlow flow = attention_flow(d.rollout, at4);
  const RolloutFigureInput in{&d.stack, &d.rollout, &flow, 4};
  CHECK(csv_difference(read_file(out / "rollout.csv", 1 << 24), export_csv(rollout_array(in)), 1e-5) == "");
  const ExportArray a = rollout_array(in);
  CHECK(a.shape == std::vector<int64_t>{3, d.stack.layers, d.stack.tokens});
  for (const char* format : {"png", "svg"}) {
    const fs::path file = out / (std::string("rollout.") + format);
    const CliRun f = run_cli("export " + args_of(fixture) + " --what rollout --format " + format + " --out " + quoted(file));
    CHECK_MESSAGE(f.exit_code == 0, f.err);
    CHECK(fs::file_size(file) > 1000);
  }
}

TEST_CASE("cli rollout: --query-set, --key-set and --every-query hold the sums of rollout.h's rows, columns and matrices") {
  const fs::path out = fresh_dir("cli_rollout_sets");
  const Direct d = direct(fixture);
  const int L = d.stack.layers, T = d.stack.tokens, last = T - 1;
  REQUIRE(T > 4);
  auto exported = [&](const std::string& flags) {
    const fs::path file = out / "r.npy";
    const CliRun r = run_cli("export " + args_of(fixture) + " --what rollout " + flags + " --format npy --out " + quoted(file));
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    return read_npy(file, 3);
  };
  // The panels' matrices: 0 the head mean Ā_l, 1 the rollout Ã_l.
  auto matrix = [&](int panel, int l) -> Mat { return panel == 0 ? Mat(d.rollout.mean(l)) : Mat(d.rollout.rollout(l)); };
  // A set of queries, mean: row l of each panel is the mean of rows 1 and 3 of layer l.
  const NpyArray queries = exported("--query-set 1,3 --set-reduce mean");
  REQUIRE(queries.shape == std::vector<int64_t>{2, L, T});
  double worst = 0;
  for (int p = 0; p < 2; ++p)
    for (int l = 0; l < L; ++l)
      for (int j = 0; j < T; ++j) {
        const double want = (double(matrix(p, l)(1, j)) + double(matrix(p, l)(3, j))) / 2;
        worst = std::max(worst, std::abs(double(queries.data[(size_t(p) * L + l) * T + j]) - want));
      }
  CHECK(worst <= 1e-6);
  // A set of keys, sum: one more column, the last query's share of keys 0 and 2 together.
  const NpyArray keys = exported("--key-set 0,2");
  REQUIRE(keys.shape == std::vector<int64_t>{2, L, T + 1});
  worst = 0;
  for (int p = 0; p < 2; ++p)
    for (int l = 0; l < L; ++l) {
      for (int j = 0; j < T; ++j)
        worst = std::max(worst, std::abs(double(keys.data[(size_t(p) * L + l) * (T + 1) + j] - matrix(p, l)(last, j))));
      const double want = double(matrix(p, l)(last, 0)) + double(matrix(p, l)(last, 2));
      worst = std::max(worst, std::abs(double(keys.data[(size_t(p) * L + l) * (T + 1) + T]) - want));
    }
  CHECK(worst <= 1e-6);
  // Every query of layer 1: the whole matrices; with a set of queries one more row, their sum.
  REQUIRE(L > 1);
  const NpyArray every = exported("--every-query --layer 1 --query-set 0,4");
  REQUIRE(every.shape == std::vector<int64_t>{2, T + 1, T});
  worst = 0;
  for (int p = 0; p < 2; ++p)
    for (int j = 0; j < T; ++j) {
      for (int i = 0; i < T; ++i)
        worst = std::max(worst, std::abs(double(every.data[(size_t(p) * (T + 1) + i) * T + j] - matrix(p, 1)(i, j))));
      const double want = double(matrix(p, 1)(0, j)) + double(matrix(p, 1)(4, j));
      worst = std::max(worst, std::abs(double(every.data[(size_t(p) * (T + 1) + T) * T + j]) - want));
    }
  CHECK(worst <= 1e-6);
  // Without --layer, every query is of the last layer.
  const NpyArray last_layer = exported("--every-query");
  REQUIRE(last_layer.shape == std::vector<int64_t>{2, T, T});
  CHECK(last_layer.data[size_t(T) * T + size_t(last) * T] == doctest::Approx(matrix(1, L - 1)(last, 0)).epsilon(1e-6));
  // The CSV names the set in each panel's title and the key set's column.
  const fs::path csv = out / "keys.csv";
  REQUIRE(run_cli("export " + args_of(fixture) + " --what rollout --query-set 1,3 --format csv --out " + quoted(csv)).exit_code == 0);
  CHECK(contains(read_file(csv, 1 << 24), "rollout · Σ of 2 queries (1, 3)"));
  const fs::path kcsv = out / "k.csv";
  REQUIRE(run_cli("export " + args_of(fixture) + " --what rollout --key-set 0,2 --set-reduce mean --format csv --out " + quoted(kcsv))
              .exit_code == 0);
  CHECK(contains(csv_lines(read_file(kcsv, 1 << 24)).at(0), "mean of 2 keys"));
}

TEST_CASE("cli rollout: bad values exit 2 with the reason and leave no file") {
  const fs::path out = fresh_dir("cli_rollout_bad");
  struct Bad {
    std::string args, message;
  };
  const int T = int(fixture_ids(fixture).size());
  for (const Bad& b : std::vector<Bad>{
           {"compute " + args_of(fixture) + " --flow --out " + quoted(out / "x"), "--flow goes with --rollout"},
           {"compute " + args_of(fixture) + " --rollout --position 2 --out " + quoted(out / "x"), "add --flow"},
           {"compute " + args_of(fixture) + " --rollout --flow --position 99 --out " + quoted(out / "x"),
            "position 99 does not exist"},
           {"export " + args_of(fixture) + " --what rollout --position " + std::to_string(T) + " --format csv --out " +
                quoted(out / "r.csv"),
            "--position " + std::to_string(T) + " does not exist"},
           {"export " + args_of(fixture) + " --what rollout --layer 1 --format png --out " + quoted(out / "r.png"),
            "leave out --layer"},
           {"export --text \"the cat\" --what rollout --format png --out " + quoted(out / "r.png"), "needs a model's layers"},
           {"export " + args_of(fixture) + " --what heads --layer 0 --flow --format png --out " + quoted(out / "r.png"),
            "go with --what rollout"},
           {"export " + args_of(fixture) + " --what rollout --scale-mode per-head --format png --out " + quoted(out / "r.png"),
            "one colour bar"},
           {"export " + args_of(fixture) + " --what rollout --query-set 1," + std::to_string(T) + " --format csv --out " +
                quoted(out / "r.csv"),
            "--query-set: token " + std::to_string(T) + " is outside this input"},
           {"export " + args_of(fixture) + " --what rollout --query-set 1,2 --flow --format csv --out " + quoted(out / "r.csv"),
            "leave it out with --every-query or --query-set"},
           {"export " + args_of(fixture) + " --what rollout --every-query --position 1 --format csv --out " + quoted(out / "r.csv"),
            "leave out --position"},
           {"export " + args_of(fixture) + " --what rollout --every-query --layer 99 --format csv --out " + quoted(out / "r.csv"),
            "--layer 99 does not exist"},
       }) {
    CAPTURE(b.args);
    const CliRun r = run_cli(b.args);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, b.message));
    CHECK(count_files(out) == 0);
  }
}

TEST_CASE("cli rollout: the flow above the limit is refused by name; the rollout of a windowed model keeps its mask") {
  const fs::path out = fresh_dir("cli_rollout_limit");
  std::string ids;
  for (int i = 0; i <= pipeline::flow_max_tokens; ++i) ids += (ids.empty() ? "" : ",") + std::to_string(1 + i % 30);
  // The shipped induction model takes 256 positions (the GPT-2 fixture 32).
  const fs::path induction = fs::path(ATTNSCOPE_SOURCE_DIR) / "assets" / "models" / "induction";
  const CliRun r = run_cli("compute --checkpoint " + quoted(induction) + " --ids " + ids +
                           " --rollout --flow --position 0 --out " + quoted(out / "x"));
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "limited to " + std::to_string(pipeline::flow_max_tokens) + " tokens"));
  CHECK(count_files(out) == 0);
  // gemma2 (sliding window 5): the exported CSV's attention block is 0 exactly where the window masks.
  const std::string gemma = "gemma2_softcap_f32";
  REQUIRE(run_cli("export " + args_of(gemma) + " --what rollout --format csv --out " + quoted(out / "g.csv")).exit_code == 0);
  const Direct d = direct(gemma);
  const int T = d.stack.tokens;
  const RolloutFigureInput in{&d.stack, &d.rollout, nullptr, T - 1};
  const ExportArray a = rollout_array(in);
  int masked = 0;
  for (int l = 0; l < d.stack.layers; ++l)
    for (int j = 0; j < T; ++j)
      if (rollout_key_masked(d.stack, l, T - 1, j)) {
        CHECK(a.values[size_t(l) * size_t(T) + size_t(j)] == 0.0f);
        ++masked;
      }
  CHECK(masked > 0);
  CHECK(csv_difference(read_file(out / "g.csv", 1 << 24), export_csv(a), 1e-5) == "");
}
