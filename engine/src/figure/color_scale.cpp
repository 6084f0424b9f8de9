// color_scale.cpp — ranges per scale mode (color_scale.h).
#include "attnscope/figure/color_scale.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "attnscope/core/error.h"
#include "attnscope/core/parse_lists.h"
#include "attnscope/figure/heatmap_layout.h"

namespace attnscope {

ColorScale color_scale_of(const ViewSettings& view) {
  return {view.scale, {float(view.locked_lo), float(view.locked_hi)}};
}

std::vector<ValueRange> scale_ranges(const ColorScale& scale, const std::vector<ValueRange>& own) {
  std::vector<ValueRange> out(own.size());
  switch (scale.mode) {
    case ScaleMode::shared: {
      if (own.empty()) return out;
      ValueRange all = own.front();
      for (const ValueRange& r : own) all = {std::min(all.lo, r.lo), std::max(all.hi, r.hi)};
      std::fill(out.begin(), out.end(), all);
      break;
    }
    case ScaleMode::per_head: out = own; break;
    case ScaleMode::fixed: std::fill(out.begin(), out.end(), ValueRange{0.0f, 1.0f}); break;
    case ScaleMode::locked: std::fill(out.begin(), out.end(), scale.locked); break;
  }
  return out;
}

void validate_color_scale(const ColorScale& scale, bool probabilities, bool signed_map) {
  require(scale.mode != ScaleMode::fixed || !signed_map,
          "the fixed 0-1 scale is for probabilities; differential attention's map A = P1 - lambda*P2 is signed, as are the "
          "matrices of heads without a softmax (their negative weights would all look like 0): use shared or per-head (a range symmetric about 0 on the diverging "
          "colormap) or locked");
  require(scale.mode != ScaleMode::fixed || probabilities,
          "the fixed 0-1 scale is for probabilities; these values are not (valid here: shared, per-head, locked)");
  if (scale.mode == ScaleMode::locked)
    require(std::isfinite(scale.locked.lo) && std::isfinite(scale.locked.hi) && scale.locked.lo < scale.locked.hi,
            "a locked scale needs a range LO,HI of two finite numbers with LO < HI, got " + range_text(scale.locked));
}

ValueRange lockable_range(ValueRange shown) {
  if (std::isfinite(shown.lo) && std::isfinite(shown.hi) && shown.lo < shown.hi) return shown;
  const float lo = std::isfinite(shown.lo) ? std::min(shown.lo, 0.0f) : 0.0f;
  const float hi = std::isfinite(shown.hi) ? std::max(shown.hi, 1.0f) : 1.0f;
  return {lo, std::max(hi, lo + 1.0f)};
}

ValueRange parse_scale_range(const std::string& text) {
  const std::string valid = "two numbers LO,HI with LO < HI, e.g. 0,0.5";
  std::vector<double> v;
  try {
    v = parse_number_list(text, "--scale-range");
  } catch (const InputError& e) {
    throw InputError(std::string(e.what()) + " (valid: " + valid + ")");
  }
  require(v.size() == 2, "--scale-range '" + text + "': give " + valid);
  const ValueRange r{float(v[0]), float(v[1])};
  require(std::isfinite(r.lo) && std::isfinite(r.hi) && r.lo < r.hi, "--scale-range '" + text + "': give " + valid);
  return r;
}

std::string range_text(ValueRange range) {
  char buf[64];
  if (!(range.hi > range.lo) || !std::isfinite(range.lo) || !std::isfinite(range.hi)) {  // as given (a refusal names it)
    std::snprintf(buf, sizeof buf, "%.3g–%.3g", double(range.lo), double(range.hi));
    return buf;
  }
  // Round numbers, as the colour bars have them: the ends to a tenth of the bar's tick step, without
  // trailing zeros. A probability range from 1.05e-41 reads "0–1", not "1.05e-41–1".
  const float step = tick_step(nice_ticks(range, 5)) / 10;
  auto end = [step](float v) {
    std::string s = format_tick(v, step);
    if (s.find('.') != std::string::npos && s.find_first_of("eE") == std::string::npos) {
      s.erase(s.find_last_not_of('0') + 1);
      if (s.back() == '.') s.pop_back();
    }
    return s == "-0" ? std::string("0") : s;
  };
  return end(range.lo) + "–" + end(range.hi);
}

}  // namespace attnscope
