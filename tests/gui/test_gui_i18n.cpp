// The window's string table (app/gui/i18n.cpp) against the window's sources: every English key the
// sources pass to tr(), trf(), TrKey() or WindowTitle() as a literal has a Chinese entry, so a new
// English label without its Chinese fails here instead of showing English in the 中文 UI.
// The table is read as source text (the GUI's code is not linked into the tests).
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace attnscope::test {
namespace {

const std::filesystem::path gui_dir = std::filesystem::path(ATTNSCOPE_SOURCE_DIR) / "app" / "gui";

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// Skips whitespace and // comments.
size_t skip_blank(const std::string& s, size_t at) {
  for (;;) {
    while (at < s.size() && is_space(s[at])) ++at;
    if (s.compare(at, 2, "//") != 0) return at;
    at = s.find('\n', at);
    if (at == std::string::npos) return s.size();
  }
}

// Adjacent C++ string literals starting at `at` (a '"'), concatenated and unescaped; `at` moves past them.
// Returns false when `at` does not start a literal.
bool read_literals(const std::string& s, size_t& at, std::string& out) {
  out.clear();
  size_t p = skip_blank(s, at);
  if (p >= s.size() || s[p] != '"') return false;
  while (p < s.size() && s[p] == '"') {
    ++p;
    while (p < s.size() && s[p] != '"') {
      if (s[p] == '\\' && p + 1 < s.size()) {
        const char e = s[++p];
        out += e == 'n' ? '\n' : e == 't' ? '\t' : e;  // \" \\ \' stand for themselves
      } else {
        out += s[p];
      }
      ++p;
    }
    at = ++p;  // past the closing quote
    p = skip_blank(s, p);
  }
  return true;
}

struct Use {
  std::string key, where;
};

// Every literal first argument of tr( / trf( / TrKey( / WindowTitle( in `text`.
std::vector<Use> literal_keys(const std::string& text, const std::string& file) {
  std::vector<Use> uses;
  for (const std::string fn : {"tr(", "trf(", "TrKey(", "WindowTitle("}) {
    for (size_t at = text.find(fn); at != std::string::npos; at = text.find(fn, at + 1)) {
      if (at > 0 && (std::isalnum(static_cast<unsigned char>(text[at - 1])) || text[at - 1] == '_')) continue;  // e.g. str(
      size_t p = at + fn.size();
      std::string key;
      if (!read_literals(text, p, key)) continue;  // a variable: its keys are marked with TrKey where they are defined
      const auto line = 1 + std::count(text.begin(), text.begin() + long(at), '\n');
      uses.push_back({key, file + ":" + std::to_string(line)});
    }
  }
  return uses;
}

// The table of i18n.cpp: English key → Chinese.
std::map<std::string, std::string> string_table(std::vector<std::string>& duplicates) {
  const std::string text = read_text(gui_dir / "i18n.cpp");
  const std::string start = "constexpr Entry table[] = {";
  size_t at = text.find(start);
  REQUIRE_MESSAGE(at != std::string::npos, "app/gui/i18n.cpp has no `" << start << "`");
  at += start.size();
  std::map<std::string, std::string> table;
  for (;;) {
    at = skip_blank(text, at);
    REQUIRE(at < text.size());
    if (text[at] == '}') break;  // the end of the table
    REQUIRE_MESSAGE(text[at] == '{', "unexpected text in the table: " << text.substr(at, 60));
    ++at;
    std::string en, zh;
    REQUIRE_MESSAGE(read_literals(text, at, en), "an entry without an English literal: " << text.substr(at, 60));
    at = skip_blank(text, at);
    REQUIRE_MESSAGE(text[at] == ',', "entry \"" << en << "\": expected a comma");
    ++at;
    REQUIRE_MESSAGE(read_literals(text, at, zh), "entry \"" << en << "\" has no Chinese literal");
    at = skip_blank(text, at);
    REQUIRE_MESSAGE(text[at] == '}', "entry \"" << en << "\": expected }");
    at = skip_blank(text, at + 1);
    if (text[at] == ',') ++at;
    if (!table.emplace(en, zh).second) duplicates.push_back(en);
  }
  return table;
}

// printf conversions in order ("%d", "%.1f", "%lld", "%s"); "%%" is not one.
std::vector<std::string> conversions(const std::string& format) {
  static const std::regex conversion(R"(%[-+ #0]*[0-9]*(\.[0-9]+)?(hh|h|ll|l|z|j|t|L)?[diouxXeEfFgGaAcsp%])");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(format.begin(), format.end(), conversion); it != std::sregex_iterator(); ++it)
    if (it->str() != "%%") out.push_back(it->str());
  return out;
}

}  // namespace

TEST_SUITE("gui_chinese") {
  TEST_CASE("i18n table: every tr()/trf()/TrKey()/WindowTitle() literal in app/gui has a Chinese entry") {
    std::vector<std::string> duplicates;
    const std::map<std::string, std::string> table = string_table(duplicates);
    CHECK_MESSAGE(duplicates.empty(), "keys listed twice in the table: " << duplicates.size() << ", first \""
                                                                         << (duplicates.empty() ? "" : duplicates[0]) << "\"");
    std::vector<Use> uses;
    for (const auto& entry : std::filesystem::directory_iterator(gui_dir)) {
      const std::string name = entry.path().filename().string();
      const std::string ext = entry.path().extension().string();
      if ((ext != ".cpp" && ext != ".h") || name.rfind("i18n.", 0) == 0) continue;
      for (Use& u : literal_keys(read_text(entry.path()), name)) uses.push_back(std::move(u));
    }
    // The scan finds the window's labels (a broken scan would pass vacuously).
    REQUIRE(uses.size() > 200);
    REQUIRE(table.size() > 200);
    int missing = 0;
    for (const Use& u : uses) {
      const auto it = table.find(u.key);
      if (it == table.end()) {
        ++missing;
        FAIL_CHECK(u.where << ": \"" << u.key << "\" has no entry in app/gui/i18n.cpp's table");
      } else if (it->second.empty()) {
        FAIL_CHECK(u.where << ": \"" << u.key << "\" has an empty Chinese entry");
      }
    }
    CHECK(missing == 0);
  }

  TEST_CASE("i18n table: each Chinese format string has the English one's conversions in the same order") {
    std::vector<std::string> duplicates;
    for (const auto& [en, zh] : string_table(duplicates)) {
      INFO("entry \"" << en << "\" → \"" << zh << "\"");
      CHECK(conversions(zh) == conversions(en));
    }
  }

  TEST_CASE("i18n table: an entry that is not a pure formula or name has some Chinese in it") {
    // Keys with an English word of four or more letters (outside printf conversions) must translate it.
    std::vector<std::string> duplicates;
    const std::regex word("[A-Za-z]{4,}");
    const std::regex technical("softmax|Ctrl|KiB|MiB|GiB|float32|PyTorch|Linear|Ainslie|npy|attnscope|JPEG|MHSA|d_model|d_head");
    for (const auto& [en, zh] : string_table(duplicates)) {
      const std::string words = std::regex_replace(en, technical, "");
      if (!std::regex_search(words, word)) continue;
      bool cjk = false;
      for (unsigned char c : zh) cjk = cjk || c >= 0xE3;  // UTF-8 lead bytes of U+3000 and above (CJK, fullwidth)
      CHECK_MESSAGE(cjk, "entry \"" << en << "\" → \"" << zh << "\" has no Chinese");
    }
  }
}

}  // namespace attnscope::test
