// i18n.h — the window's own words in English and 中文: a table of UI strings and a tiny lookup.
//
// Every label, window title, button, tooltip and message of the window is written in English in the
// source and passed through tr(): in Chinese it returns the table's translation (the English text
// when the table has none, so an untranslated string still reads). The language is AppState's
// `language`, persisted with the other preferences; run_window calls SetUiLanguage each frame.
//
// ImGui identifies widgets by their label: windows use "translated title###stable id" (WindowTitle)
// so that switching the language keeps their place and size.
#pragma once
#include <string>
#include <vector>

#include "attnscope/core/language.h"

namespace attnscope::gui {

class FontAtlas;

void SetUiLanguage(Language language);
Language UiLanguage();

// `english` in the current language. The pointer stays valid for the whole program.
const char* tr(const char* english);
// Marks an English key that is translated later with tr() (choices kept in tables, returned names), so that
// the i18n test's scan of the sources finds it. Returns its argument.
constexpr const char* TrKey(const char* english) { return english; }
// tr(english) + "###" + id: a window title that keeps its ImGui identity across languages.
std::string WindowTitle(const char* english, const char* id);
// printf-style formatting of a translated format string.
std::string trf(const char* english_format, ...);

// Text wrapped to the available width at spaces and also between CJK characters (ImGui's own
// wrapping breaks only at spaces, which leaves Chinese lines ragged or overflowing). Closing
// punctuation (，。）…) never starts a line.
void WrappedText(const std::string& text);

// Every Chinese string of the table, added to the font atlas's wish list so that each of its glyphs
// is baked before the first frame that shows it.
void RequestUiGlyphs(FontAtlas& fonts);

// The table's English keys (tests: every key has a Chinese translation that is not the English).
std::vector<std::pair<std::string, std::string>> UiStringTable();

}  // namespace attnscope::gui
