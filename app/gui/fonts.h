// fonts.h — ImGui's font atlas from the fonts fontconfig finds (engine font_lookup.h): a Latin UI
// font with a CJK font merged in for the ideographs the current text uses.
//
// The atlas is rebuilt between frames when the UI scale changes or new text brings code points it
// lacks, so any Chinese sentence draws with real glyphs without baking all 20 000 ideographs. A code
// point no installed font has is shown as "U+XXXX" (display_label), never as an empty box.
#pragma once
#include <set>
#include <string>
#include <string_view>

namespace attnscope::gui {

class FontAtlas {
 public:
  // Looks up the system fonts (once per process). Call before the first frame.
  FontAtlas();

  // Adds the code points of `utf8` to the atlas's wish list (cheap when they are there already).
  void request_text(std::string_view utf8);
  // Rebuilds ImGui's atlas (and its GL texture when `upload`) if the size or the wish list changed.
  // Call between frames: before ImGui::NewFrame. Returns true when it rebuilt.
  bool rebuild_if_needed(float pixel_size, bool upload);

  // `utf8` with every code point the atlas cannot draw replaced by "U+XXXX".
  std::string display_label(std::string_view utf8) const;
  // Empty, or one sentence saying which font is missing and what to install.
  const std::string& notice() const { return notice_; }
  bool has_cjk_font() const { return !cjk_path_.empty(); }
  const std::string& latin_family() const { return latin_family_; }
  // Increases at every rebuild: labels made with display_label are stale when it changes.
  int generation() const { return generation_; }
  const std::string& cjk_family() const { return cjk_family_; }

 private:
  std::string latin_path_, cjk_path_, latin_family_, cjk_family_;
  int latin_index_ = 0, cjk_index_ = 0;
  std::string notice_;
  std::set<char32_t> wanted_;  // code points beyond the fixed ranges, from the text seen so far
  std::set<char32_t> built_;   // the wanted_ of the current atlas
  float built_size_ = 0.0f;
  int generation_ = 0;
};

}  // namespace attnscope::gui
