// head_ablation_list.cpp — "1.0,1.3" as the heads a forward pass switches off (head_ablation_list.h).
#include "core/head_ablation_list.h"

#include <algorithm>
#include <string>

#include "attnscope/core/error.h"

namespace attnscope {

model::HeadAblation parse_head_ablation(const std::string& list, const std::string& mode, const model::Model& m) {
  model::HeadAblation a;
  require(mode == "zero" || mode == "mean", "--ablate-mode must be zero or mean, got \"" + mode + "\"");
  a.mode = mode == "mean" ? model::AblationMode::mean : model::AblationMode::zero;
  const std::string valid = "give LAYER.HEAD pairs from 0, e.g. 1.0,1.3 (this model: layers 0 to " +
                            std::to_string(m.config.layers - 1) + ", heads 0 to " + std::to_string(m.config.heads - 1) + ")";
  size_t start = 0;
  while (start <= list.size()) {
    const size_t end = std::min(list.find(',', start), list.size());
    const std::string item = list.substr(start, end - start);
    const size_t dot = item.find('.');
    int layer = -1, head = -1;
    size_t used_l = 0, used_h = 0;
    try {
      if (dot != std::string::npos && dot > 0 && dot + 1 < item.size()) {
        layer = std::stoi(item.substr(0, dot), &used_l);
        head = std::stoi(item.substr(dot + 1), &used_h);
      }
    } catch (const std::exception&) {
      used_l = 0;
    }
    require(dot != std::string::npos && used_l == dot && used_h == item.size() - dot - 1 && item[0] != '-' &&
                item[dot + 1] != '-' && item[0] != '+' && item[dot + 1] != '+',
            "--ablate: \"" + item + "\" is not LAYER.HEAD; " + valid);
    a.heads.push_back({layer, head});
    start = end + 1;
  }
  try {
    model::check_head_ablation(m.config, a);
  } catch (const InputError& e) {
    throw InputError(std::string("--ablate: ") + e.what() + " (" + valid + ")");
  }
  return a;
}

}  // namespace attnscope
