// `export --what qk-attribution --format png|svg`: the Heads view's "why" bar chart (figure/qk_figure.h) from the
// command line — the same bytes as render_qk_figure of the pipeline's attribution of that cell, the sum line
// equal to the CSV's total, the Chinese words with --language zh, twice the size at --scale 2, and the refusals
// (.npy, a scale outside 1–4) exit 2 leaving no file.
#include <doctest/doctest.h>

#include <regex>

#include "attnscope/figure/qk_figure.h"
#include "attnscope/io/file_io.h"
#include "attnscope/pipeline/pipeline.h"
#include "check.h"
#include "model/checkpoint_fixtures.h"
#include "run_cli.h"

using namespace attnscope;
using namespace attnscope::test;
namespace fs = std::filesystem;

TEST_CASE("cli qk-attribution --format png|svg: the bar chart of the cell, as the engine draws it") {
  const fs::path out = fresh_dir("cli_qk_figure");
  const std::string name = "gpt2_prefix_f32";
  const auto ids = fixture_ids(name);
  const int T = int(ids.size()), layer = 1, head = 0, query = T - 1, key = T - 3;
  const std::string cell = " --what qk-attribution --layer " + std::to_string(layer) + " --head " + std::to_string(head) +
                           " --query " + std::to_string(query) + " --key " + std::to_string(key);
  const std::string base = "export --checkpoint " + quoted(model_fixture(name)) + " --ids " + ids_arg(ids) + cell;
  for (const char* format : {"png", "svg"}) {
    CAPTURE(format);
    const fs::path file = out / (std::string("why.") + format);
    const CliRun r = run_cli(base + " --format " + format + " --out " + quoted(file));
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    // the engine's own figure of the same cell
    pipeline::Request q;
    q.model = model::open(model_fixture(name));
    q.input.form = pipeline::TokenInput::Form::ids;
    q.input.ids = ids;
    q.layer = layer;
    q.head = head;
    q.query = query;
    q.key = key;
    q.steps = {pipeline::Step::qk_attribution};
    const pipeline::Result result = pipeline::run(q);
    REQUIRE(result.qk_attribution);
    ExportRequest request;
    request.format = std::string(format) == "png" ? ExportFormat::png : ExportFormat::svg;
    const std::string expected = render_qk_figure(QkFigureInput{result.qk_attribution.get(), result.tokens->labels}, request).bytes;
    CHECK(read_file(file, 1 << 26) == expected);
  }
  // the sum line is the CSV's total
  REQUIRE(run_cli(base + " --format csv --out " + quoted(out / "why.csv")).exit_code == 0);
  const std::string csv = read_file(out / "why.csv", 1 << 24);
  const std::string last = csv.substr(csv.rfind("total,"));
  const double total = std::stod(last.substr(last.rfind(',') + 1));
  const std::string svg = read_file(out / "why.svg", 1 << 24);
  std::smatch m;
  REQUIRE(std::regex_search(svg, m, std::regex("parts sum to ([-0-9.e+]+) \\(score ([-0-9.e+]+)\\)")));
  CHECK(std::stod(m[1]) == doctest::Approx(total).epsilon(1e-6));
  CHECK(std::abs(std::stod(m[1]) - std::stod(m[2])) <= 1e-4 * std::max(1e-2, std::abs(std::stod(m[2]))));
  // Chinese words, and twice the size at --scale 2
  REQUIRE(run_cli(base + " --format svg --language zh --out " + quoted(out / "zh.svg")).exit_code == 0);
  CHECK(contains(read_file(out / "zh.svg", 1 << 24), "各部分之和"));
  REQUIRE(run_cli(base + " --format svg --scale 2 --out " + quoted(out / "x2.svg")).exit_code == 0);
  const auto width = [](const std::string& s) {
    std::smatch w;
    REQUIRE(std::regex_search(s, w, std::regex("width=\"(\\d+)\"")));
    return std::stoi(w[1]);
  };
  CHECK(width(read_file(out / "x2.svg", 1 << 24)) > width(svg) * 3 / 2);
}

TEST_CASE("cli qk-attribution --format: .npy and a scale outside 1-4 exit 2 and write nothing") {
  const fs::path none = fresh_dir("cli_qk_figure_refused");
  const auto ids = fixture_ids("gpt2_prefix_f32");
  const std::string base = "export --checkpoint " + quoted(model_fixture("gpt2_prefix_f32")) + " --ids " + ids_arg(ids) +
                           " --what qk-attribution --layer 1 --head 0 --query 3 --key 1";
  for (const std::pair<std::string, std::string>& refusal : std::vector<std::pair<std::string, std::string>>{
           {" --format npy --out " + quoted(none / "a.npy"), "or its bar chart as --format png or svg, not npy"},
           {" --format png --scale 5 --out " + quoted(none / "a.png"), "--scale must be between 1 and 4"},
           {" --format gif --out " + quoted(none / "a.gif"), "gif"},
           {" --format svg --out " + quoted(none / "a.png"), "svg"}}) {
    const std::string line = base + refusal.first;
    CAPTURE(line);
    const CliRun r = run_cli(line);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, refusal.second));
    CHECK(count_files(none) == 0);
  }
}
