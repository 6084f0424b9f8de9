// color_scale.h — the colour range of every heatmap of a figure under a scale mode (scene.h ScaleMode).
// The window's pictures and every exported figure take their ranges from scale_ranges, so a cell has
// the same colour on screen and on paper whichever mode is chosen.
//
//   own ranges of the panels (auto_range / symmetric_range of each) ──scale_ranges(mode)──► range per panel
#pragma once
#include <string>
#include <vector>

#include "attnscope/figure/colormap.h"
#include "attnscope/scene/scene.h"

namespace attnscope {

struct ColorScale {
  ScaleMode mode = ScaleMode::shared;
  ValueRange locked{0.0f, 1.0f};  // the range of ScaleMode::locked
  bool operator==(const ColorScale&) const = default;
};

// The scale a scene's view asks for (its mode and locked range).
ColorScale color_scale_of(const ViewSettings& view);

// The range of each of the panels whose own ranges are `own` ([panels]):
//   shared → the union of all of them · per_head → each its own · fixed → {0, 1} · locked → scale.locked.
std::vector<ValueRange> scale_ranges(const ColorScale& scale, const std::vector<ValueRange>& own);

// Throws InputError naming what is valid: fixed for values that are not probabilities (scores, the
// convolution's images), or a locked range whose ends are not finite or not lo < hi.
// signed_map: the values are differential attention's A = P₁ − λ·P₂, which is signed (from −λ to 1): they are
// drawn on the diverging map over a range symmetric about 0 (shared, per head) or the locked one, and
// fixed 0–1 is refused (it would paint every negative weight as 0, hiding what the map subtracts).
void validate_color_scale(const ColorScale& scale, bool probabilities, bool signed_map = false);

// The range "lock" freezes, from the range on screen: as it is when it has a spread; a range without
// one (a single token: every probability 1) widened to take in 0 and 1, so that a locked range always
// has lo < hi.
ValueRange lockable_range(ValueRange shown);

// "LO,HI" (two finite numbers, LO < HI) → the range. Throws InputError saying what a valid one is.
ValueRange parse_scale_range(const std::string& text);

// A range as its colour bar's title writes it: "0.02–0.61", "0–1" (round numbers as the bar's ticks, to a
// tenth of their step; en dash). A range that is no range (LO ≥ HI, not finite) is written as given.
std::string range_text(ValueRange range);

}  // namespace attnscope
