// test_translations.cpp — the reader of the window's translation files (app/core/translations.h):
// what it refuses with a message naming the file, and what it skips with a warning.
#include <doctest/doctest.h>

#include <filesystem>

#include "check.h"
#include "core/translations.h"
#include "test_tmp.h"

using namespace attnscope;
using attnscope::test::contains;
using attnscope::test::error_of;

TEST_CASE("translations: printf conversions are listed in order, %% is none") {
  CHECK(printf_conversions("T = %d tokens · %.1f%% · %lld · %s") == std::vector<std::string>{"%d", "%.1f", "%lld", "%s"});
  CHECK(printf_conversions("no conversion, 100%%").empty());
  CHECK(printf_conversions("%-8.3f|%+d|% d|%#x|%zu|%hhd|%Lg|%*d").size() == 8);
  // A dangling '%' counts, so a translation that adds one never matches its English.
  CHECK(printf_conversions("50%") == std::vector<std::string>{"%"});
}

TEST_CASE("translations: a file's strings and trace steps are read") {
  const Translations t = parse_translations(R"({"language": "xx", "name": "Xx",
      "strings": {"File": "Fichier", "result in %.0f ms": "résultat en %.0f ms"},
      "trace_steps": {"softmax": {"name": "softmax", "formula": "P = softmax(S) sur les clés"}, "input": {"name": "entrée"}}})",
                                            "xx.json");
  CHECK(t.language == "xx");
  CHECK(t.name == "Xx");
  CHECK(t.strings.at("File") == "Fichier");
  CHECK(t.strings.at("result in %.0f ms") == "résultat en %.0f ms");
  CHECK(t.trace_steps.at("softmax").formula == "P = softmax(S) sur les clés");
  CHECK(t.trace_steps.at("input").formula.empty());
  CHECK(t.warnings.empty());
}

TEST_CASE("translations: an entry with other conversions, an empty one or a repeated key is skipped with a warning") {
  const Translations t = parse_translations(R"({"language": "xx",
      "strings": {"%d heads": "%s têtes", "File": "", "Open": "Ouvrir", "Open": "Ouvrir…", "Save": "Sauver"}})",
                                            "xx.json");
  CHECK(t.strings.count("%d heads") == 0);
  CHECK(t.strings.count("File") == 0);
  CHECK(t.strings.at("Save") == "Sauver");
  REQUIRE(t.warnings.size() == 3);
  CHECK(contains(t.warnings[0], "xx.json: strings \"%d heads\": the translation's printf conversions differ"));
  CHECK(contains(t.warnings[1], "\"File\" has an empty translation"));
  CHECK(contains(t.warnings[2], "strings \"Open\" is listed twice"));
}

TEST_CASE("translations: a file that is not a translation file is refused, naming it and the problem") {
  auto error = [](const std::string& text) { return error_of([&] { (void)parse_translations(text, "zz.json"); }); };
  CHECK(contains(error(""), "zz.json is not valid JSON"));
  CHECK(contains(error("{\"language\": \"zz\", \"strings\": {"), "zz.json is not valid JSON"));
  CHECK(contains(error("[1, 2]"), "zz.json: a translation file is a JSON object"));
  CHECK(contains(error("{\"strings\": {}}"), "\"language\" is missing"));
  CHECK(contains(error("{\"language\": 7, \"strings\": {}}"), "\"language\" must be a string"));
  CHECK(contains(error("{\"language\": \"zz\"}"), "\"strings\" is missing or not an object"));
  CHECK(contains(error("{\"language\": \"zz\", \"strings\": {\"File\": 3}}"), "strings \"File\" must map to a string"));
  CHECK(contains(error("{\"language\": \"zz\", \"strings\": {}, \"trace_steps\": []}"), "\"trace_steps\" must be an object"));
  CHECK(contains(error("{\"language\": \"zz\", \"strings\": {}, \"trace_steps\": {\"input\": \"in\"}}"),
                 "trace_steps \"input\" must be an object"));
}

TEST_CASE("translations: a missing file is refused with its path") {
  const auto path = attnscope::test::test_tmp() / "no_such_dir" / "zh.json";
  CHECK(contains(error_of([&] { (void)load_translations(path); }), path.string()));
}

TEST_CASE("translations: the shipped Chinese file is found in the assets folder and reads cleanly") {
  const Translations zh = load_translations(translations_path("zh"));
  CHECK(zh.language == "zh");
  CHECK(zh.strings.size() > 200);
  CHECK(zh.warnings.empty());
}
