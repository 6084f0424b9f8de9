// i18n.h — the window's own words in English and other languages, and a tiny lookup.
//
// Every label, window title, button, tooltip and message of the window is written in English in the
// source and passed through tr(): in another language it returns that language's translation from
// assets/i18n/<code>.json (core/translations.h), read once at start by LoadTranslations — the
// English text when the file has none, so an untranslated string still reads. A missing or broken
// file leaves that language's words in English and says so on screen (TranslationProblem). The
// language is AppState's `language`, persisted with the other preferences; run_window calls
// SetUiLanguage each frame.
//
// ImGui identifies widgets by their label: windows use "translated title###stable id" (WindowTitle)
// so that switching the language keeps their place and size.
#pragma once
#include <string>
#include <vector>

#include "attnscope/attention/trace.h"
#include "attnscope/core/language.h"

namespace attnscope::gui {

class FontAtlas;

// Reads the translation file of every language but English (assets/i18n/<code>.json). Call once at
// start, before the first tr(); a failure is kept per language for TranslationProblem and printed
// on stderr, never thrown.
void LoadTranslations();
void SetUiLanguage(Language language);
Language UiLanguage();
// Why the current language's words show in English ("" when its file was read), one sentence.
const std::string& TranslationProblem();

// `english` in the current language. The pointer stays valid for the whole program.
const char* tr(const char* english);
// Marks an English key that is translated later with tr() (choices kept in tables, returned names), so that
// the i18n test's scan of the sources finds it. Returns its argument.
constexpr const char* TrKey(const char* english) { return english; }
// tr(english) + "###" + id: a window title that keeps its ImGui identity across languages.
std::string WindowTitle(const char* english, const char* id);
// printf-style formatting of a translated format string.
std::string trf(const char* english_format, ...);
// A count in words: tr(one) when n is 1 ("1 token"), else trf(many, n) ("%d tokens"). Pass both keys
// through TrKey so that the i18n test finds them.
std::string trcount(int n, const char* one, const char* many);
// An engine shape-trace step's name and formula in the current language, by the step's stable key.
const char* TraceStepName(const TraceStep& step);
const char* TraceStepFormula(const TraceStep& step);

// Text wrapped to the available width at spaces and also between CJK characters (ImGui's own
// wrapping breaks only at spaces, which leaves Chinese lines ragged or overflowing). Closing
// punctuation (，。）…) never starts a line.
void WrappedText(const std::string& text);
// The height WrappedText(text) takes in a region `width` wide (one text item a line).
float WrappedTextHeight(const std::string& text, float width);
// Where `text` (valid UTF-8) breaks to fit `width` pixels by WrappedText's rules, keeping every
// character (spaces stay at the end of the line they follow, so a line may overhang by its spaces): the
// byte offsets at which a new line starts, hard '\n' not counted. For an editable box that wraps.
std::vector<size_t> SoftLineBreaks(const std::string& text, float width);

// Every translated string, added to the font atlas's wish list so that each of its glyphs is baked
// before the first frame that shows it.
void RequestUiGlyphs(FontAtlas& fonts);

// Keys looked up in a language other than English that its file does not translate, in the order
// first met (the layout JSON lists them, so the GUI tests catch a string drawn untranslated).
const std::vector<std::string>& UntranslatedKeys();

}  // namespace attnscope::gui
