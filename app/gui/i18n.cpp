#include "gui/i18n.h"

#include <algorithm>
#include <cfloat>
#include <cstdarg>
#include <cstdio>
#include <string_view>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include <imgui.h>

#include "attnscope/attention/designed_heads.h"
#include "attnscope/core/error.h"
#include "attnscope/figure/text_raster.h"
#include "attnscope/text/tokenizer.h"
#include "core/translations.h"
#include "gui/fonts.h"

namespace attnscope::gui {
namespace {

// One language's words, read once at start and never changed after, so the pointers tr() returns
// stay valid for the whole program.
struct Table {
  bool loaded = false;
  std::string problem;  // why not loaded
  std::unordered_map<std::string_view, const char*> strings;  // views into `file`
  Translations file;
};

Language current_language = Language::en;
std::map<Language, Table> tables;
std::vector<std::string> untranslated;
std::unordered_set<std::string> untranslated_seen;

void NoteUntranslated(const char* key) {
  if (untranslated_seen.insert(key).second) untranslated.emplace_back(key);
}

const Table* CurrentTable() {
  if (current_language == Language::en) return nullptr;
  const auto it = tables.find(current_language);
  return it == tables.end() || !it->second.loaded ? nullptr : &it->second;
}

}  // namespace

void LoadTranslations() {
  for (Language language : {Language::zh}) {  // every language but English, the sources' own
    Table& table = tables[language];
    if (table.loaded || !table.problem.empty()) continue;
    const std::string code = to_string(language);
    try {
      table.file = load_translations(translations_path(code));
      require(table.file.language == code, translations_path(code).string() + " says it is \"" + table.file.language +
                                               "\", not \"" + code + "\"");
      for (const std::string& warning : table.file.warnings) std::fprintf(stderr, "warning: %s\n", warning.c_str());
      for (const auto& [english, translated] : table.file.strings) table.strings.emplace(english, translated.c_str());
      table.loaded = true;
    } catch (const InputError& e) {
      table = Table{};
      table.problem = std::string("The ") + code + " translation could not be read, so its words show in English: " + e.what();
      std::fprintf(stderr, "error: %s\n", table.problem.c_str());
    }
  }
}

void SetUiLanguage(Language language) { current_language = language; }
Language UiLanguage() { return current_language; }

const std::string& TranslationProblem() {
  static const std::string none;
  if (current_language == Language::en) return none;
  const auto it = tables.find(current_language);
  if (it == tables.end()) {
    static const std::string not_loaded = "The translations were not loaded (LoadTranslations was not called)";
    return not_loaded;
  }
  return it->second.problem;
}

const char* tr(const char* english) {
  const Table* table = CurrentTable();
  if (!table) return english;
  const auto it = table->strings.find(english);
  if (it != table->strings.end()) return it->second;
  NoteUntranslated(english);
  return english;
}

const char* TraceStepName(const TraceStep& step) {
  const Table* table = CurrentTable();
  if (!table) return step.name.c_str();
  const auto it = table->file.trace_steps.find(step.key);
  if (it != table->file.trace_steps.end()) return it->second.name.c_str();
  NoteUntranslated(("trace_steps." + step.key).c_str());
  return step.name.c_str();
}

const char* TraceStepFormula(const TraceStep& step) {
  const Table* table = CurrentTable();
  if (!table) return step.formula.c_str();
  const auto it = table->file.trace_steps.find(step.key);
  // Formulas without words ("S = Q·Kᵀ / √d_k") read the same in every language.
  return it != table->file.trace_steps.end() && !it->second.formula.empty() ? it->second.formula.c_str()
                                                                             : step.formula.c_str();
}

const std::vector<std::string>& UntranslatedKeys() { return untranslated; }

std::string WindowTitle(const char* english, const char* id) { return std::string(tr(english)) + "###" + id; }

std::string trcount(int n, const char* one, const char* many) { return n == 1 ? std::string(tr(one)) : trf(many, n); }

std::string trf(const char* english_format, ...) {
  const char* format = tr(english_format);
  va_list args;
  va_start(args, english_format);
  va_list copy;
  va_copy(copy, args);
  const int n = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  std::string out;
  if (n > 0) {
    out.resize(size_t(n) + 1);
    std::vsnprintf(out.data(), out.size(), format, args);
    out.resize(size_t(n));
  }
  va_end(args);
  return out;
}

namespace {

bool IsCjk(char32_t cp) { return cp >= 0x2E80; }
// Punctuation that must stay at the end of the line before it.
bool NoLineStart(char32_t cp) {
  static const std::u32string closing = U"，。、；：？！）」』”’》〉】…,.;:?!)";
  return closing.find(cp) != std::u32string::npos;
}

}  // namespace

namespace {

// The lines WrappedText draws for `text` at `width` (byte ranges of the cleaned UTF-8 in `utf8`).
std::vector<std::pair<size_t, size_t>> WrapLines(const std::string& text, float width, std::string& utf8) {
  ImFont* font = ImGui::GetFont();
  const float size = ImGui::GetFontSize();
  // Code points with their byte offsets.
  const std::u32string cps = decode_utf8_lenient(text);
  std::vector<size_t> offset;
  offset.reserve(cps.size() + 1);
  size_t at = 0;
  for (char32_t cp : cps) {
    offset.push_back(at);
    at += encode_utf8(cp).size();
  }
  offset.push_back(at);
  utf8.clear();
  for (char32_t cp : cps) utf8 += encode_utf8(cp);
  auto measure = [&](size_t a, size_t b) {
    return font->CalcTextSizeA(size, FLT_MAX, 0.0f, utf8.data() + offset[a], utf8.data() + offset[b]).x;
  };
  std::vector<std::pair<size_t, size_t>> lines;
  size_t start = 0;
  while (start < cps.size()) {
    size_t end = start, last_break = 0;  // last_break: a break before this index is allowed (0: none yet)
    bool newline = false;
    while (end < cps.size()) {
      const char32_t cp = cps[end];
      if (cp == U'\n') {
        newline = true;
        break;
      }
      if (end > start) {
        const char32_t prev = cps[end - 1];
        if (prev == U' ' || ((IsCjk(cp) || IsCjk(prev)) && cp != U' ' && !NoLineStart(cp))) last_break = end;
      }
      if (measure(start, end + 1) > width && end > start) break;
      ++end;
    }
    size_t cut = end;
    if (!newline && end < cps.size() && last_break > start) cut = last_break;
    size_t shown_end = cut;
    while (shown_end > start && cps[shown_end - 1] == U' ') --shown_end;
    lines.emplace_back(offset[start], offset[shown_end]);
    start = cut;
    if (newline) ++start;
    while (start < cps.size() && cps[start] == U' ') ++start;
  }
  return lines;
}

}  // namespace

void WrappedText(const std::string& text) {
  const float width = std::max(ImGui::GetContentRegionAvail().x, ImGui::GetFontSize() * 4);
  std::string utf8;
  for (const auto& [from, to] : WrapLines(text, width, utf8)) ImGui::TextUnformatted(utf8.data() + from, utf8.data() + to);
}

float WrappedTextHeight(const std::string& text, float width) {
  std::string utf8;
  const size_t lines = WrapLines(text, std::max(width, ImGui::GetFontSize() * 4), utf8).size();
  return lines == 0 ? 0.0f : float(lines) * ImGui::GetTextLineHeightWithSpacing() - ImGui::GetStyle().ItemSpacing.y;
}

std::vector<size_t> SoftLineBreaks(const std::string& text, float width) {
  ImFont* font = ImGui::GetFont();
  const float scale = ImGui::GetFontSize() / font->FontSize;
  const std::u32string cps = decode_utf8_lenient(text);
  std::vector<size_t> offset;  // byte offset of each code point
  offset.reserve(cps.size());
  size_t at = 0;
  for (char32_t cp : cps) {
    offset.push_back(at);
    at += encode_utf8(cp).size();
  }
  if (at != text.size()) return {};  // not UTF-8 (the engine refuses it with a message): no breaks
  auto advance = [&](char32_t cp) { return cp > 0xFFFF ? font->FallbackAdvanceX * scale : font->GetCharAdvance(ImWchar(cp)) * scale; };
  std::vector<size_t> breaks;
  size_t start = 0, last_break = 0;  // last_break: a break before this index is allowed (0: none yet)
  float line = 0;                    // width of cps[start, e)
  for (size_t e = 0; e < cps.size(); ++e) {
    const char32_t cp = cps[e];
    if (cp == U'\n') {
      start = e + 1, last_break = 0, line = 0;
      continue;
    }
    if (e > start) {
      const char32_t prev = cps[e - 1];
      if ((prev == U' ' && cp != U' ') || ((IsCjk(cp) || IsCjk(prev)) && cp != U' ' && !NoLineStart(cp))) last_break = e;
    }
    line += advance(cp);
    if (cp == U' ' || line <= width || e == start) continue;  // spaces overhang
    const size_t cut = last_break > start ? last_break : e;
    breaks.push_back(offset[cut]);
    start = cut, last_break = 0, line = 0;
    for (size_t i = cut; i <= e; ++i) line += advance(cps[i]);
  }
  return breaks;
}

void RequestUiGlyphs(FontAtlas& fonts) {
  fonts.request_text("Language · 语言 中文");  // the language menu names itself in both languages
  for (const auto& [language, table] : tables) {
    for (const auto& [english, translated] : table.file.strings) fonts.request_text(translated);
    for (const auto& [key, step] : table.file.trace_steps) fonts.request_text(step.name + step.formula);
  }
  // The designed patterns' labels (analysis table), short names (head captions) and descriptions (tooltips).
  for (DesignedPattern p : all_designed_patterns()) {
    fonts.request_text(designed_pattern_label(p).zh);
    fonts.request_text(designed_pattern_caption(p).zh);
    fonts.request_text(designed_pattern_description(p).zh);
  }
}


}  // namespace attnscope::gui
