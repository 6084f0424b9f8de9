// model_input.h — a real model's input and one of its layers: the pieces the request pipeline
// (pipeline.h) is made of, shared through it by the command line (compute/export --checkpoint) and the
// window's worker (the Checkpoint window), so both turn the same text into the same ids, labels, Heads
// panels and next tokens.
//
//   text ──checkpoint's tokenizer──► ids, labels ──model::forward(detail_layer N)──► ModelLayerRun
//   ids  ─────────────────────────► ids, labels (the tokenizer's when the folder has one, else "15496")
#pragma once
#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "attnscope/analysis/analysis.h"
#include "attnscope/model/attention_file.h"
#include "attnscope/model/forward.h"
#include "attnscope/model/model.h"
#include "attnscope/text/tokenizer_interface.h"

namespace attnscope {

struct ModelTokens {
  std::vector<int32_t> ids;
  std::vector<std::string> labels;             // one per id
  std::shared_ptr<const Tokenizer> tokenizer;  // null when the folder has no tokenizer files
};

// "15496,995" or "15496 995" → ids. `what` names the input in the message ("--ids", "ids:").
std::vector<int32_t> parse_token_ids(const std::string& text, const std::string& what);

// `text` through the checkpoint folder's own tokenizer (special tokens as its files say, unless
// add_special_tokens is false). Throws InputError when the folder has no usable tokenizer.
ModelTokens model_tokens_from_text(const std::filesystem::path& checkpoint, const std::string& text,
                                   bool add_special_tokens);
// Ids as given, labelled by the folder's tokenizer when it has one (else by their numbers).
ModelTokens model_tokens_from_ids(const std::filesystem::path& checkpoint, std::vector<int32_t> ids);

// The same with the tokenizer already loaded (the pipeline loads it once per request): `text` through
// `tokenizer`, or `ids` labelled by `tokenizer` (null: by their numbers).
ModelTokens tokens_from_text(std::shared_ptr<const Tokenizer> tokenizer, const std::string& text,
                             bool add_special_tokens);
ModelTokens tokens_from_ids(std::shared_ptr<const Tokenizer> tokenizer, std::vector<int32_t> ids);

// The window's input box: "ids: 1 2 3" gives ids; other text goes through the tokenizer (a folder
// without one says to type ids).
ModelTokens model_tokens_from_input(const std::filesystem::path& checkpoint, const std::string& input);

// The Input window's text for `ids`: "ids: 3 17 5 …" (lesson 6's repeated sequences, a model's default input).
std::string ids_input(const std::vector<int32_t>& ids);

// What a model opens on when the text on screen is not in its vocabulary (or it has no tokenizer): a
// random half repeated (head_patterns.h: repeated_random_ids) in its own ids, so that its induction heads
// show at once. 16 + 16 tokens, fewer when the model was built for shorter inputs; as text when its
// tokenizer reads that text back to the same ids, else as "ids: …".
std::string default_model_input(const model::Model& model);

// Why `input` cannot go into `model` ("" when it can): the message model_tokens_from_input throws.
std::string model_input_problem(const model::Model& model, const std::string& input);

// Readable text of one next token ("" without a tokenizer or beyond its vocabulary).
std::string token_label(const ModelTokens& tokens, int32_t id);

// Every layer's attentions of a forward pass as a stack (the model view's and `export --what model`'s
// input): the probabilities moved out of `forward`, with the tokens' ids and labels; causal, groups from
// the model's config, and its per-layer sliding windows (config.layer_window) so figures mask them.
model::AttentionStack attention_stack(model::ForwardResult&& forward, const ModelTokens& tokens,
                                      const std::string& source, const std::vector<int>& model_windows);

// One layer of a forward pass, as the Heads view and export draw it, with every position's top-5 and
// every layer's attentions (the model view); or one layer of an attentions file (no top-5).
struct ModelLayerRun {
  Analysis analysis;
  std::vector<std::vector<model::NextToken>> next;  // [T][≤5], most probable first
  std::vector<std::vector<std::string>> next_labels;  // [T][≤5] token_label of each
  int layer = 0, layers = 0;
  std::shared_ptr<const model::AttentionStack> stack;  // [L, H, T, T] of the same pass
};
// Throws InputError (bad layer, ids, too long) and Cancelled when *cancel becomes true between layers.
// One forward pass; pipeline.h's run() is the same pass inside a request.
ModelLayerRun run_model_layer(const model::Model& model, const ModelTokens& tokens, int layer,
                              const std::atomic<bool>* cancel = nullptr);

// The run of a finished forward pass of `tokens`: its detail layer's analysis (an empty Analysis and layer
// −1 when the pass kept no detail layer), every position's top-5 with labels, and the stack its
// attentions are moved into.
ModelLayerRun model_layer_run(const model::Model& model, const ModelTokens& tokens, model::ForwardResult&& forward);

// One layer of attentions computed elsewhere (model::open_attentions): probabilities only, no next
// tokens (the file holds no logits). Throws InputError for a layer outside [0, L).
ModelLayerRun attention_file_layer(std::shared_ptr<const model::AttentionStack> stack, int layer);

}  // namespace attnscope
