// A real model's tokenizer in the window: the heatmap axes show its readable labels (a character split
// over byte-level tokens shown whole on the token that completes it, "·" on the ones before), hovering
// a cell shows each token's id, vocabulary piece and raw bytes, and a broken tokenizer file is an
// on-screen error naming the file.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gui_run.h"
#include "text/tokenizer_fixtures.h"

namespace attnscope::test {
namespace {

// GPT-2-style byte-level vocabulary: the 256 byte characters (ids = byte values) and the merges that
// make " cat" one token. "我" (E6 88 91) stays three byte tokens.
struct Fixture {
  std::filesystem::path path;
  int cat_id = -1;
};

Fixture write_byte_level_tokenizer() {
  MiniVocab v = byte_level_vocab();
  v.merge("c", "a");
  v.merge("ca", "t");
  v.merge("Ġ", "cat");
  Fixture f;
  f.cat_id = v.vocab["Ġcat"].get<int>();
  const auto dir = attnscope::test::test_tmp() / "gui" / "tokenizer";
  std::filesystem::create_directories(dir);
  f.path = dir / "tokenizer.json";
  std::ofstream(f.path) << byte_level_document(v).dump();
  return f;
}

std::vector<std::string> texts_of(const nlohmann::json& layout) {
  std::vector<std::string> out;
  for (const auto& t : layout["texts"]) out.push_back(t["text"].get<std::string>());
  return out;
}

bool any_contains(const std::vector<std::string>& texts, const std::string& part) {
  for (const std::string& t : texts)
    if (t.find(part) != std::string::npos) return true;
  return false;
}

std::vector<std::string> axis_labels(const nlohmann::json& layout, const std::string& axis) {
  std::vector<std::string> out;
  for (const auto& l : layout["labels"])
    if (l["axis"] == axis) out.push_back(l["text"].get<std::string>());
  return out;
}

}  // namespace

TEST_SUITE("gui_tokenizer") {
  TEST_CASE("tokenizer in the window: byte-level labels, and the hover shows ids, pieces and bytes") {
    const Fixture f = write_byte_level_tokenizer();
    const std::string args = "--heads 1 --text " + shell_quote("我 cat") + " --tokenizer " + shell_quote(f.path.string());
    const WindowRun w = run_window("tokenizer_labels", args);
    CHECK(w.layout["error"] == "");
    // 我 is three byte tokens: the first two show the partial-character mark, the third the character.
    const std::vector<std::string> want = {"·", "·", "我", " cat"};
    CHECK(axis_labels(w.layout, "query") == want);
    CHECK(w.layout["heads"][0]["tokens"] == 4);

    // Hover the cell (query 0, key 3): the first byte of 我 against " cat".
    const auto& head = w.layout["heads"][0];
    const double cell = head["cell"].get<double>();
    const int x = int(head["x"].get<double>() + 3.5 * cell), y = int(head["y"].get<double>() + 0.5 * cell);
    const WindowRun hover = run_window("tokenizer_hover", args + " --frames 4 --pointer " + std::to_string(x) + "," + std::to_string(y));
    const std::vector<std::string> texts = texts_of(hover.layout);
    CHECK(any_contains(texts, "id 230 · piece “æ” · bytes E6"));  // byte 0xE6 is id 230, drawn as æ by GPT-2's table
    CHECK(any_contains(texts, "id " + std::to_string(f.cat_id) + " · piece “Ġcat” · bytes 20 63 61 74"));
  }

  TEST_CASE("tokenizer in the window: the Chinese hover and the tokenizer field are translated") {
    const Fixture f = write_byte_level_tokenizer();
    const std::string args = "--heads 1 --language zh --text " + shell_quote("我 cat") + " --tokenizer " + shell_quote(f.path.string());
    const WindowRun w = run_window("tokenizer_zh", args);
    CHECK(w.layout["untranslated"].empty());
    CHECK(axis_labels(w.layout, "query").size() == 4);
  }

  TEST_CASE("tokenizer in the window: a broken tokenizer file is an on-screen error that names it") {
    const auto dir = attnscope::test::test_tmp() / "gui" / "tokenizer";
    std::filesystem::create_directories(dir);
    const auto bad = dir / "broken.json";
    std::ofstream(bad) << R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a b"]}})";
    const WindowRun w = run_window("tokenizer_broken", "--text " + shell_quote("a cat") + " --tokenizer " + shell_quote(bad.string()));
    const std::string error = w.layout["error"].get<std::string>();
    CHECK(error.find("broken.json") != std::string::npos);
    CHECK(error.find("'b', which is not in the vocabulary") != std::string::npos);
    CHECK(any_contains(texts_of(w.layout), "broken.json"));  // drawn in the window, not only recorded

    const WindowRun missing = run_window("tokenizer_missing", "--text hi --tokenizer " + shell_quote((dir / "nowhere").string()));
    CHECK(missing.layout["error"].get<std::string>().find("nowhere") != std::string::npos);
  }
}

}  // namespace attnscope::test
