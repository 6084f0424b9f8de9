#include "gui/fonts.h"

#include <imgui.h>
#include <imgui_impl_opengl3.h>

#include <cstdio>
#include <vector>

#include "attnscope/figure/font_lookup.h"
#include "attnscope/figure/text_raster.h"
#include "attnscope/text/tokenizer.h"

namespace attnscope::gui {
namespace {

// What the UI itself writes (labels, Greek letters, arrows, math signs, ▾ ●): always in the atlas.
constexpr ImWchar fixed_ranges[] = {
    0x0020, 0x00FF,  // Basic Latin + Latin-1 (·)
    0x0100, 0x017F,  // Latin Extended-A
    0x0370, 0x03FF,  // Greek (α Δ λ δ)
    0x1D00, 0x1DBF,  // Phonetic extensions (ᵀ as in W_Qᵀ)
    0x2000, 0x206F,  // General punctuation (– — … ‖)
    0x2070, 0x209F,  // Super- and subscripts (² ᵀ)
    0x2190, 0x21FF,  // Arrows (→)
    0x2200, 0x22FF,  // Mathematical operators (− √ ≤ ∞ ·)
    0x2300, 0x23FF,  // Miscellaneous technical (⌊ ⌋)
    0x2400, 0x243F,  // Control pictures (␣, a token label's space)
    0x2580, 0x259F,  // Block elements (▁, SentencePiece's space in vocabulary pieces)
    0x25A0, 0x25FF,  // Geometric shapes (▾ ● □)
    0xFFFD, 0xFFFD,  // the replacement character (token labels of bytes that form no character)
    0,
};
// The CJK font also brings its punctuation and full-width forms when any CJK text appears.
constexpr ImWchar cjk_fixed_ranges[] = {
    0x3000, 0x303F,  // CJK symbols and punctuation (。、「」)
    0xFF00, 0xFFEF,  // Half- and full-width forms (，！？)
    0,
};

bool in_ranges(char32_t cp, const ImWchar* ranges) {
  for (; ranges[0]; ranges += 2)
    if (cp >= ranges[0] && cp <= ranges[1]) return true;
  return false;
}

}  // namespace

FontAtlas::FontAtlas() {
  const SystemFonts& fonts = system_fonts();
  if (fonts.latin) {
    latin_path_ = fonts.latin->path;
    latin_index_ = fonts.latin->index;
    latin_family_ = fonts.latin->family;
  }
  if (fonts.cjk) {
    cjk_path_ = fonts.cjk->path;
    cjk_index_ = fonts.cjk->index;
    cjk_family_ = fonts.cjk->family;
  }
  // The window spells glyph-less code points as U+XXXX (display_label), so say that rather than the
  // exporter's "empty boxes".
  if (!fonts.latin) notice_ = fonts.notice;
  else if (!fonts.cjk)
    notice_ = "No CJK font found through fontconfig: Chinese and Japanese characters show as U+XXXX codes "
              "(install fonts-wqy-microhei or fonts-noto-cjk).";
}

void FontAtlas::request_text(std::string_view utf8) {
  // Control characters get no glyph (display_label spells them U+XXXX); U+0000 would end ImGui's
  // zero-terminated glyph ranges and crash the atlas build.
  for (char32_t cp : decode_utf8_lenient(utf8))
    if (cp >= 0x20 && !(cp >= 0x7F && cp <= 0x9F) && cp <= 0xFFFF && !in_ranges(cp, fixed_ranges)) wanted_.insert(cp);
}

bool FontAtlas::rebuild_if_needed(float pixel_size, bool upload) {
  if (pixel_size == built_size_ && wanted_ == built_) return false;
  ImGuiIO& io = ImGui::GetIO();
  io.Fonts->Clear();

  // Latin font: the fixed ranges plus whatever wanted code point is not CJK (é, ß, ü …).
  ImFontGlyphRangesBuilder latin_builder;
  latin_builder.AddRanges(fixed_ranges);
  ImFontGlyphRangesBuilder cjk_builder;
  bool any_cjk = false;
  for (char32_t cp : wanted_) {
    const bool cjk_block = cp >= 0x2E80;  // CJK radicals onwards: ideographs, kana, hangul, forms
    (cjk_block ? cjk_builder : latin_builder).AddChar(ImWchar(cp));
    any_cjk = any_cjk || cjk_block;
  }
  if (any_cjk) cjk_builder.AddRanges(cjk_fixed_ranges);
  ImVector<ImWchar> latin_ranges, cjk_ranges;
  latin_builder.BuildRanges(&latin_ranges);
  cjk_builder.BuildRanges(&cjk_ranges);

  ImFontConfig config;
  config.OversampleH = 2;
  config.OversampleV = 1;
  config.PixelSnapH = true;
  bool loaded = false;
  if (!latin_path_.empty()) {
    config.FontNo = latin_index_;
    loaded = io.Fonts->AddFontFromFileTTF(latin_path_.c_str(), pixel_size, &config, latin_ranges.Data) != nullptr;
  }
  if (!loaded) {
    ImFontConfig fallback;
    fallback.SizePixels = pixel_size;
    io.Fonts->AddFontDefault(&fallback);
  }
  if (!cjk_path_.empty() && any_cjk) {
    ImFontConfig merge;
    merge.MergeMode = true;
    merge.FontNo = cjk_index_;
    merge.OversampleH = 1;
    merge.OversampleV = 1;
    merge.PixelSnapH = true;
    io.Fonts->AddFontFromFileTTF(cjk_path_.c_str(), pixel_size, &merge, cjk_ranges.Data);
  }
  // The ranges must outlive Build(); ImGui copies the glyphs, so they may go afterwards.
  io.Fonts->Build();
  if (upload) {
    ImGui_ImplOpenGL3_DestroyFontsTexture();
    ImGui_ImplOpenGL3_CreateFontsTexture();
  }
  built_ = wanted_;
  built_size_ = pixel_size;
  ++generation_;
  return true;
}

std::string FontAtlas::display_label(std::string_view utf8) const {
  ImFont* font = ImGui::GetFont();
  std::string out;
  for (char32_t cp : decode_utf8_lenient(utf8)) {
    const bool drawable = cp <= 0xFFFF && font && font->FindGlyphNoFallback(ImWchar(cp)) != nullptr;
    if (drawable || cp == ' ') {
      out += encode_utf8(cp);
    } else {
      char code[16];
      std::snprintf(code, sizeof code, "U+%04X", unsigned(cp));
      out += code;
    }
  }
  return out;
}

}  // namespace attnscope::gui
