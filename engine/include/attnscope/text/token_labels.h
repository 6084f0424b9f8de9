// token_labels.h — readable labels for tokens (README "Tokenizers", label policy).
//
// A label is what a token adds to the text, made readable for a heatmap axis:
//  1. Bytes are read as UTF-8 across token boundaries. A character whose bytes span several tokens
//     (a Chinese character split into byte-level pieces, <0xE6><0x88><0x91>) is shown whole on the
//     token that completes it; the tokens before it show "·". Their raw bytes stay in Encoding::bytes
//     for a hover. So a label is never mojibake like "æĪĳ".
//  2. Ġ and ▁ become the space they stand for: " cat" keeps its leading space. A token that is only
//     whitespace shows marks instead, since a blank label cannot be read: "␣" per space (any Unicode
//     space), "↵" per newline, "⇥" per tab.
//  3. Newlines and tabs inside other labels show as ↵ and ⇥ too; other control characters as escapes
//     ("\r", "\x1B"). The marks are drawn by DejaVu Sans and WenQuanYi Micro Hei, which attnscope's
//     figures and window use.
//  4. Bytes that cannot form a character (only possible when describing arbitrary ids) show as U+FFFD;
//     a token that adds nothing shows "∅".
//  5. Special tokens show their text: "<s>", "<|im_start|>".
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attnscope {

inline constexpr std::string_view kPartialCharacterMark = "·";
inline constexpr std::string_view kEmptyTokenMark = "∅";

// labels [T] from bytes [T] and special [T] (Encoding's fields).
std::vector<std::string> token_labels(const std::vector<std::string>& bytes, const std::vector<uint8_t>& special);

// Rules 2–3 for one piece of valid UTF-8 text.
std::string visible_label(std::string_view text);

}  // namespace attnscope
