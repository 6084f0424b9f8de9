// `compute --checkpoint DIR --text …` on a model made by `attnscope train`: the text goes through the
// run's vocab.json (vocab_tokenizer.h), in characters or words; a piece it never saw exits 2 naming it.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "attnscope/io/file_io.h"
#include "check.h"
#include "run_cli.h"

using namespace attnscope;
using namespace attnscope::test;
namespace fs = std::filesystem;

TEST_CASE("train vocab cli: compute --text reads a train-made model's characters and words") {
  const fs::path d = fresh_dir("test_cli_train_vocab");
  write_file_atomic(d / "text.txt", "the cat sat on the mat. the dog sat on the log.\n");
  for (const std::string level : {"chars", "words"}) {
    CAPTURE(level);
    const fs::path run = d / ("run_" + level);
    const CliRun train = run_cli("train --task text --text-level " + level + " --text-file " +
                                 shell_quote((d / "text.txt").string()) + " --seq-len 8 --batch 4 --d-model 32 --steps 3 --out " +
                                 shell_quote(run.string()));
    REQUIRE_MESSAGE(train.exit_code == 0, train.err);
    const fs::path out = d / ("out_" + level);
    const CliRun r = run_cli("compute --checkpoint " + shell_quote(run.string()) + " --text " + shell_quote("the cat sat.") +
                             " --out " + shell_quote(out.string()));
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
    const auto tokens = nlohmann::json::parse(read_file(out / "tokens.json", 1 << 20));
    const auto vocab = nlohmann::json::parse(read_file(run / "vocab.json", 1 << 20)).at("tokens");
    const std::vector<std::string> expected =
        level == "chars" ? std::vector<std::string>{"t", "h", "e", "␣", "c", "a", "t", "␣", "s", "a", "t", "."}
                         : std::vector<std::string>{"the", "cat", "sat", "."};
    CHECK(tokens.at("labels").get<std::vector<std::string>>() == expected);
    // Each id is the piece's place in vocab.json, and the next tokens are labelled by their pieces.
    for (size_t i = 0; i < expected.size(); ++i) {
      const std::string piece = vocab.at(tokens.at("ids").at(i).get<size_t>()).get<std::string>();
      CHECK(piece == (expected[i] == "␣" ? " " : expected[i]));
    }
    CHECK(tokens.at("next").back().at(0).contains("label"));

    const CliRun bad = run_cli("compute --checkpoint " + shell_quote(run.string()) + " --text " + shell_quote("the zebra") +
                               " --out " + shell_quote((d / "bad").string()));
    CHECK(bad.exit_code == 2);
    CHECK(contains(bad.err, level == "chars" ? "has no 'z', 'b', 'r'" : "has no 'zebra'"));
    CHECK_FALSE(fs::exists(d / "bad"));
  }
}
