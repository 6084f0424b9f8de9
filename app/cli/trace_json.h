// trace_json.h — trace.json, the steps of one attention layer with their shapes, its parameters and its
// cache or state: `compute` writes it for the seeded layer and, with --checkpoint --layer N, for a real
// model's layer N (the Shapes view's trace of that layer).
#pragma once
#include <nlohmann/json.hpp>

#include "attnscope/analysis/analysis.h"
#include "core/translations.h"

namespace attnscope::cli {

// Step names and formulas in `words`' language (English where it has none). A checkpoint's layer
// (AttentionAnalysis::source_note set) gives its model and layer instead of the seeded layer's settings.
nlohmann::json trace_json(const Analysis& a, const Translations& words);

}  // namespace attnscope::cli
