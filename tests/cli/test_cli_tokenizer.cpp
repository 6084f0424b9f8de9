// `--tokenizer`: a model's tokenizer for the sentence, end to end through the command line and the
// scene (ids and labels in tokens.json, embeddings from the labels, bad files exit 2).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "attnscope/io/file_io.h"
#include "attnscope/io/npy.h"
#include "attnscope/analysis/analysis.h"
#include "attnscope/scene/scene_json.h"
#include "attnscope/text/embeddings.h"
#include "check.h"
#include "run_cli.h"
#include "text/tokenizer_fixtures.h"

using namespace attnscope;
using namespace attnscope::test;
namespace fs = std::filesystem;

namespace {

// GPT-2-style files: the byte table plus merges for "the", so 我 stays three byte tokens.
fs::path write_tokenizer_folder(const std::string& name) {
  const fs::path dir = fresh_dir(name);
  MiniVocab v = byte_level_vocab();
  v.merge("Ġ", "t");
  v.merge("h", "e");
  v.merge("Ġt", "he");
  write_file_atomic(dir / "vocab.json", v.vocab.dump());
  write_file_atomic(dir / "merges.txt", "#version: 0.2\nĠ t\nh e\nĠt he\n");
  return dir;
}

}  // namespace

TEST_CASE("cli tokenizer: compute --tokenizer writes the tokenizer's ids and labels to tokens.json") {
  const fs::path tok = write_tokenizer_folder("cli_tokenizer_files");
  const fs::path out = fresh_dir("cli_tokenizer") / "out";
  const std::string text = "a the 我";
  const CliRun r = run_cli("compute --tokenizer " + shell_quote(tok.string()) + " --text '" + text +
                           "' --heads 2 --d-model 16 --out " + shell_quote(out.string()));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  // GPT-2's pattern gives "a", " the", " 我"; " the" is merged, " 我" is a space and three bytes.
  const std::vector<int32_t> ids = load_tokenizer(tok)->encode_ids(text, true);
  REQUIRE(ids.size() == 6);
  const auto tokens = nlohmann::json::parse(read_file(out / "tokens.json", 1 << 20));
  REQUIRE(tokens.size() == ids.size());
  std::vector<std::string> labels, pieces;
  for (size_t i = 0; i < ids.size(); ++i) {
    CHECK(tokens[i]["id"] == ids[i]);
    CHECK(tokens[i]["special"] == false);
    labels.push_back(tokens[i]["label"]);
    pieces.push_back(tokens[i]["piece"]);
  }
  CHECK(labels == std::vector<std::string>{"a", " the", "␣", "·", "·", "我"});
  CHECK(pieces == std::vector<std::string>{"a", "Ġthe", "Ġ", "æ", "Ī", "ĳ"});
  CHECK(tokens[3]["bytes"] == "e6");
  CHECK(tokens[5]["bytes"] == "91");
  CHECK(read_npy(out / "probs.npy").shape == std::vector<int64_t>{2, 6, 6});
}

TEST_CASE("cli tokenizer: the scene keeps the tokenizer, and embeddings follow SPEC from the labels") {
  const fs::path tok = write_tokenizer_folder("scene_tokenizer_files");
  Scene s;
  s.input.text = "the the";
  s.input.tokenizer_path = tok.string();
  s.model.d_model = 16;
  s.model.heads = s.model.groups = 2;
  CHECK(scene_from_json(scene_to_json(s)).input.tokenizer_path == tok.string());
  const Analysis a = analyse(s);
  const AttentionAnalysis& att = *a.attention;
  REQUIRE(att.labels == std::vector<std::string>{"t", "he", " the"});  // only " the" has its merges
  CHECK(att.encoding.ids == load_tokenizer(tok)->encode_ids("the the", true));
  // X = token vector of the lower-cased label + sinusoidal position, as for SPEC's words.
  const Mat pe = sinusoidal_positions(3, 16);
  for (int t = 0; t < 3; ++t) {
    Mat expected = token_embedding(att.labels[size_t(t)], 16, s.model.seed).transpose();
    expected += pe.row(t);
    check_close(Mat(att.x.row(t)), expected, 1e-6, "x row " + std::to_string(t));
  }
  // Without a tokenizer the scene is SPEC's, unchanged: two words with no ids.
  s.input.tokenizer_path.clear();
  const Analysis words = analyse(s);
  CHECK(words.attention->labels == std::vector<std::string>{"the", "the"});
  CHECK(words.attention->encoding.ids == std::vector<int32_t>(2, kNoTokenId));
  // relpos reads the same flag.
  const fs::path out = fresh_dir("cli_tokenizer_relpos") / "out";
  const CliRun r = run_cli("relpos --tokenizer " + shell_quote(tok.string()) + " --text 'the the' --out " +
                           shell_quote(out.string()));
  INFO(r.err);
  CHECK(r.exit_code == 0);
}

TEST_CASE("cli tokenizer: a bad tokenizer exits 2 with one line naming the file, and writes nothing") {
  const fs::path dir = fresh_dir("cli_tokenizer_bad");
  fs::create_directories(dir / "broken");
  write_file_atomic(dir / "broken" / "tokenizer.json", "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": [\"a b\"]}}");
  write_file_atomic(dir / "wordpiece.json", "{\"model\": {\"type\": \"WordPiece\", \"vocab\": {\"a\": 0}}}");
  struct Bad { std::string args; std::string message; };
  const Bad cases[] = {
      {"--text hi --tokenizer " + shell_quote((dir / "none").string()), "no such file or folder"},
      {"--text hi --tokenizer " + shell_quote((dir / "broken").string()), "tokenizer.json': model: merge 0 ('a' + 'b') names 'b'"},
      {"--text hi --tokenizer " + shell_quote((dir / "wordpiece.json").string()), "'WordPiece' is not supported"},
      {"--input x.npy --tokenizer " + shell_quote(dir.string()), "an --input tensor has no text"},
      {"--text \"$(printf 'ok \\377')\" --tokenizer " + shell_quote(write_tokenizer_folder("cli_tok_utf8").string()),
       "invalid UTF-8 at byte 3"},
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
}
