// head_ablation_list.h — the heads to switch off as the command line and the window's --ablate give them:
// "1.0,1.3" (LAYER.HEAD, numbered from 0 as everywhere) and a mode, "zero" or "mean" (model/forward.h
// HeadAblation). `compute`/`export --checkpoint --ablate` and the window's --ablate read them here.
#pragma once
#include <string>

#include "attnscope/model/forward.h"
#include "attnscope/model/model.h"

namespace attnscope {

// InputError naming the item at fault and the layers and heads `m` has (check_head_ablation's refusals: a
// head outside the model, a linear/mixer layer without softmax heads, a head listed twice).
model::HeadAblation parse_head_ablation(const std::string& list, const std::string& mode, const model::Model& m);

}  // namespace attnscope
