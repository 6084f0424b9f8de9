// head_ablation.cpp — the checks of a head ablation (forward.h HeadAblation) before a forward pass uses it.
#include <string>

#include "attnscope/core/error.h"
#include "attnscope/model/forward.h"

namespace attnscope::model {

bool HeadAblation::contains(int layer, int head) const {
  for (const HeadRef& r : heads)
    if (r.layer == layer && r.head == head) return true;
  return false;
}

void check_head_ablation(const ModelConfig& c, const HeadAblation& ablation) {
  for (size_t i = 0; i < ablation.heads.size(); ++i) {
    const HeadRef& r = ablation.heads[i];
    const std::string name = "head " + std::to_string(r.head) + " of layer " + std::to_string(r.layer);
    require(r.layer >= 0 && r.layer < c.layers, "cannot switch off " + name + ": the model's layers are 0 to " +
                                                     std::to_string(c.layers - 1));
    require(r.head >= 0 && r.head < c.heads,
            "cannot switch off " + name + ": its heads are 0 to " + std::to_string(c.heads - 1));
    require(!c.trained.active && !c.is_linear_layer(r.layer),
            "cannot switch off " + name + ": it is a linear (mixer) layer without softmax heads; only attention "
            "heads can be switched off");
    for (size_t j = 0; j < i; ++j)
      require(!(ablation.heads[j] == r), name + " is listed twice in the heads to switch off");
  }
}

}  // namespace attnscope::model
