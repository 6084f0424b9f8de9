// model_input.cpp — text or ids → the checkpoint's tokens → one layer of the forward pass.
#include "attnscope/pipeline/model_input.h"

#include <algorithm>

#include "attnscope/analysis/head_patterns.h"
#include "attnscope/analysis/model_layer.h"
#include "attnscope/core/error.h"

namespace attnscope {

std::vector<int32_t> parse_token_ids(const std::string& text, const std::string& what) {
  std::vector<int32_t> ids;
  size_t at = 0;
  const char* separators = ", \t";
  while (at < text.size()) {
    const size_t start = text.find_first_not_of(separators, at);
    if (start == std::string::npos) break;
    size_t end = text.find_first_of(separators, start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    const bool digits = item.size() <= 9 && item.find_first_not_of("0123456789") == std::string::npos;
    require(digits, what + " '" + text + "': '" + item +
                        "' is not a token id (valid: whole numbers >= 0, separated by commas or spaces, e.g. "
                        "15496,995)");
    ids.push_back(int32_t(std::stol(item)));
    at = end;
  }
  require(!ids.empty(), what + " '" + text + "' holds no token id (e.g. 15496,995)");
  return ids;
}

namespace {

void label_tokens(ModelTokens& t) {
  if (t.tokenizer) {
    try {
      t.labels = t.tokenizer->describe(t.ids).labels;
    } catch (const InputError&) {
      t.labels.clear();  // ids beyond the tokenizer's vocabulary: the forward pass names them
    }
  }
  if (t.labels.size() != t.ids.size()) {
    t.labels.clear();
    for (int32_t id : t.ids) t.labels.push_back(std::to_string(id));
  }
}

}  // namespace

ModelTokens tokens_from_text(std::shared_ptr<const Tokenizer> tokenizer, const std::string& text,
                             bool add_special_tokens) {
  ModelTokens t;
  t.tokenizer = std::move(tokenizer);
  t.ids = t.tokenizer->encode_ids(text, add_special_tokens);
  require(!t.ids.empty(),
          "the text gives no tokens" + std::string(add_special_tokens ? "" : " (and the tokenizer adds no special token)"));
  label_tokens(t);
  return t;
}

ModelTokens tokens_from_ids(std::shared_ptr<const Tokenizer> tokenizer, std::vector<int32_t> ids) {
  ModelTokens t;
  t.ids = std::move(ids);
  t.tokenizer = std::move(tokenizer);
  label_tokens(t);
  return t;
}

ModelTokens model_tokens_from_text(const std::filesystem::path& checkpoint, const std::string& text,
                                   bool add_special_tokens) {
  return tokens_from_text(load_tokenizer_cached(checkpoint), text, add_special_tokens);
}

ModelTokens model_tokens_from_ids(const std::filesystem::path& checkpoint, std::vector<int32_t> ids) {
  std::shared_ptr<const Tokenizer> tokenizer;
  try {
    tokenizer = load_tokenizer_cached(checkpoint);
  } catch (const InputError&) {
    tokenizer = nullptr;  // no tokenizer files: the ids label themselves
  }
  return tokens_from_ids(std::move(tokenizer), std::move(ids));
}

ModelTokens model_tokens_from_input(const std::filesystem::path& checkpoint, const std::string& input) {
  const size_t start = input.find_first_not_of(" \t\n");
  if (start != std::string::npos && input.compare(start, 4, "ids:") == 0)
    return model_tokens_from_ids(checkpoint, parse_token_ids(input.substr(start + 4), "ids:"));
  try {
    load_tokenizer_cached(checkpoint);  // cached: model_tokens_from_text reuses it
  } catch (const InputError& e) {
    throw InputError(std::string("this checkpoint has no tokenizer: type token ids instead, e.g. \"ids: 1 2 3\" (") +
                     e.what() + ")");
  }
  return model_tokens_from_text(checkpoint, input, true);
}

std::string ids_input(const std::vector<int32_t>& ids) {
  std::string text = "ids:";
  for (int32_t id : ids) text += " " + std::to_string(id);
  return text;
}

namespace {
// The most tokens the forward pass takes (0: no limit known): the model's positions (a sliding window
// only masks keys, it does not limit the input).
int longest_input(const model::Model& model) { return std::max(model.config.max_positions, 0); }
}  // namespace

std::string default_model_input(const model::Model& model) {
  constexpr int half = 16;
  constexpr uint64_t seed = 1;
  const int positions = longest_input(model) > 0 ? longest_input(model) : 2 * half;
  const std::vector<int32_t> ids = repeated_random_ids(std::clamp(positions / 2, 2, half), model.config.vocab, seed);
  // As text when the model's tokenizer reads it back to the same ids ("B H e L … B H e L …"), else as ids.
  try {
    const std::shared_ptr<const Tokenizer> tokenizer = load_tokenizer_cached(model.dir);
    const std::string text = tokenizer->decode(ids);
    if (tokenizer->encode_ids(text, true) == ids && text.rfind("ids:", 0) != 0) return text;
  } catch (const InputError&) {
    // no tokenizer, or ids it cannot decode: the ids themselves
  }
  return ids_input(ids);
}

std::string model_input_problem(const model::Model& model, const std::string& input) {
  ModelTokens tokens;
  try {
    tokens = model_tokens_from_input(model.dir, input);
  } catch (const InputError& e) {
    return e.what();
  }
  for (int32_t id : tokens.ids)
    if (id < 0 || id >= model.config.vocab)
      return "token id " + std::to_string(id) + " is outside the model's vocabulary (0 to " +
             std::to_string(model.config.vocab - 1) + ")";
  // Dynamic NTK scaling exists for inputs past max_position_embeddings (its base grows with the length, as
  // transformers' dynamic_rope_update does): those are not refused.
  const bool dynamic = model.config.positions == model::PositionKind::rotary &&
                       model.config.rope_scaling.type == model::RopeType::dynamic;
  if (!dynamic && longest_input(model) > 0 && int(tokens.ids.size()) > longest_input(model))
    return std::to_string(tokens.ids.size()) + " tokens are more than the " + std::to_string(longest_input(model)) +
           " this model takes";
  return {};
}

std::string token_label(const ModelTokens& tokens, int32_t id) {
  if (!tokens.tokenizer) return {};
  try {
    return tokens.tokenizer->describe(std::vector<int32_t>{id}).labels.at(0);
  } catch (const InputError&) {
    return {};
  }
}

model::AttentionStack attention_stack(model::ForwardResult&& forward, const ModelTokens& tokens,
                                      const std::string& source, const std::vector<int>& model_windows) {
  model::AttentionStack s;
  s.layers = forward.layers, s.heads = forward.heads, s.kv_heads = forward.kv_heads, s.tokens = forward.tokens;
  s.attentions = std::move(forward.attentions);
  // Qwen3-Next's Gated DeltaNet layers: their signed matrices beside the softmax layers' probabilities.
  bool linear = false;
  for (const model::LayerMaps& m : forward.layer_maps) linear = linear || m.signed_weights;
  if (linear) {
    for (const model::LayerMaps& m : forward.layer_maps) s.layer_kind.push_back(m.signed_weights ? m.kind : "");
    s.linear_maps = std::move(forward.linear_maps);
  }
  s.ids = tokens.ids;
  s.labels = tokens.labels;
  s.causal = true;  // every checkpoint attnscope reads is a causal language model
  s.layer_window = model_windows;
  s.groups_from_config = true;
  s.source = source;
  return s;
}

ModelLayerRun model_layer_run(const model::Model& model, const ModelTokens& tokens, model::ForwardResult&& forward) {
  ModelLayerRun run;
  if (forward.detail) {
    run.analysis = layer_analysis(model, forward, tokens.labels);
    run.layer = forward.detail->layer;
  } else {
    run.layer = -1;
  }
  run.layers = model.config.layers;
  run.next = forward.top;
  for (const auto& top : forward.top) {
    std::vector<std::string> labels;
    for (const model::NextToken& n : top) labels.push_back(token_label(tokens, n.id));
    run.next_labels.push_back(std::move(labels));
  }
  if (forward.head_maps) return run;  // long inputs: no stack (its heads are recomputed on demand)
  run.stack = std::make_shared<const model::AttentionStack>(attention_stack(std::move(forward), tokens, model.name,
                                                                            model.config.layer_window));
  return run;
}

ModelLayerRun run_model_layer(const model::Model& model, const ModelTokens& tokens, int layer,
                              const std::atomic<bool>* cancel) {
  check_layer(layer, model.config.layers);
  model::ForwardOptions options;
  options.detail_layer = layer;
  options.cancel = cancel;
  return model_layer_run(model, tokens, model::forward(model, tokens.ids, options));
}

ModelLayerRun attention_file_layer(std::shared_ptr<const model::AttentionStack> stack, int layer) {
  ModelLayerRun run{layer_analysis(*stack, layer), {}, {}, layer, stack->layers, {}};
  run.stack = std::move(stack);
  return run;
}

}  // namespace attnscope
