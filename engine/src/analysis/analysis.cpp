// analysis.cpp — Scene → Analysis: the one place where settings become numbers.
#include "attnscope/analysis/analysis.h"

#include "attnscope/attention/designed_heads.h"
#include "attnscope/text/embeddings.h"
#include "attnscope/core/error.h"
#include "attnscope/core/limits.h"
#include "attnscope/io/npy.h"
#include "attnscope/scene/scene_rules.h"

namespace attnscope {
void prepare_input(const InputSettings& input, int d_model, uint64_t seed, std::vector<Token>& tokens,
                   std::vector<std::string>& labels, Mat& x) {
  tokens.clear();
  labels.clear();
  if (input.source == InputSource::tensor) {
    require(!input.tensor_path.empty(), "no input tensor file given (X.npy, float32 [T, C])");
    x = read_npy_matrix(input.tensor_path);
    require(x.rows() <= limits::max_tokens, "'" + input.tensor_path + "' has " + std::to_string(x.rows()) +
                                                " rows (tokens); the limit is " + std::to_string(limits::max_tokens));
    require(x.allFinite(), "'" + input.tensor_path + "' contains NaN or infinite values");
    for (Eigen::Index t = 0; t < x.rows(); ++t) labels.push_back(std::to_string(t));
    return;
  }
  require(input.source == InputSource::text, "grouped attention needs a sentence or a tensor as input");
  require(input.text.size() <= size_t(limits::max_text_bytes),
          "the text is " + std::to_string(input.text.size()) + " bytes; the limit is " +
              std::to_string(limits::max_text_bytes));
  tokens = tokenize(input.text);
  require(!tokens.empty(), "the text is empty: type a sentence (words, characters or punctuation)");
  require(tokens.size() <= size_t(limits::max_tokens), "the text has " + std::to_string(tokens.size()) +
                                                           " tokens; the limit is " +
                                                           std::to_string(limits::max_tokens));
  for (const Token& t : tokens) labels.push_back(t.text);
  x = embed_tokens(tokens, d_model, seed);
}

AttentionWeights weights_for(const ModelSettings& model, const AttentionShape& shape) {
  switch (model.weights) {
    case WeightSource::converted: {
      // One MHA weight set per (C, H, seed); MQA/GQA pool its K/V heads, so kinds compare fairly.
      const AttentionWeights mha = random_weights({shape.d_model, shape.heads, shape.heads}, model.seed);
      return shape.groups == shape.heads ? mha : convert_mha_to_grouped(mha, shape.heads, shape.groups);
    }
    case WeightSource::independent: return random_weights(shape, model.seed);
    case WeightSource::loaded:
      require(!model.weights_dir.empty(), "weight source 'loaded' needs a weights folder");
      return load_weights(model.weights_dir, shape);
    case WeightSource::designed: {
      // One designed MHA (a head per pattern, d_k = 64); MQA/GQA pool its K/V heads like `converted`.
      const std::vector<DesignedPattern> patterns = parse_designed_patterns(model.designed);
      require(shape.heads == int(patterns.size()),
              "designed weights have one head per pattern: " + std::to_string(patterns.size()) + " patterns but " +
                  std::to_string(shape.heads) + " heads" +
                  (model.kind == AttentionKind::single ? " (kind single has one head: give one pattern)" : ""));
      require(shape.d_model == designed_d_model(shape.heads),
              "designed weights need d_model = 64 × heads = " + std::to_string(designed_d_model(shape.heads)) +
                  ", got " + std::to_string(shape.d_model));
      validate_shape(shape);
      const AttentionWeights mha = designed_weights(patterns);
      return shape.groups == shape.heads ? mha : convert_mha_to_grouped(mha, shape.heads, shape.groups);
    }
  }
  throw InputError("unknown weight source");
}

HeadStats attention_statistics(const AttentionAnalysis& att, const ModelSettings& model,
                               const std::atomic<bool>* cancel, Tensor3* mha_probs) {
  check_cancel(cancel);
  HeadStats stats = head_stats(att.result.probs, model.causal, cancel);
  // Drift from MHA: the same query heads before their K/V were pooled into G < H groups.
  const bool pooled = model.weights == WeightSource::converted || model.weights == WeightSource::designed;
  if (pooled && att.shape.groups < att.shape.heads) {
    const AttentionShape base_shape{att.shape.d_model, att.shape.heads, att.shape.heads};
    check_cancel(cancel);
    Tensor3 base = grouped_attention(att.x, weights_for(model, base_shape), base_shape,
                                     AttentionOptions{model.causal, model.scale_scores, cancel})
                       .probs;
    check_cancel(cancel);
    stats.drift_from_mha = head_drift(att.result.probs, base, cancel);
    if (mha_probs) *mha_probs = std::move(base);
  }
  return stats;
}

AnalysisRequest request_for(const Scene& scene) {
  AnalysisRequest r;
  const View view = scene.view.view;
  if (scene.input.source == InputSource::grid) {
    r.attention = false;
    r.relpos = true;
    r.conv = view == View::conv;
  } else {
    r.relpos = view == View::relpos1d || scene.relpos.mixed;
  }
  return r;
}

namespace {

// Grouped attention on a sentence or tensor (SPEC "Grouped attention"). `m` is normalised; a tensor
// input brings its own width C, written back to m.d_model.
std::shared_ptr<const AttentionAnalysis> analyse_attention(const Scene& scene, ModelSettings& m,
                                                           const std::atomic<bool>* cancel) {
  auto att = std::make_shared<AttentionAnalysis>();
  const bool designed = m.weights == WeightSource::designed;
  require(!designed || scene.input.source == InputSource::text,
          "designed heads need a sentence as input: they read the positions and token features of the designed "
          "embedding, which a tensor file does not have");
  if (scene.input.source == InputSource::tensor) {
    prepare_input(scene.input, m.d_model, m.seed, att->tokens, att->labels, att->x);
    m.d_model = int(att->x.cols());
  }
  att->shape = {m.d_model, m.heads, m.groups};
  validate_shape(att->shape);
  if (scene.input.source == InputSource::text) {
    prepare_input(scene.input, m.d_model, m.seed, att->tokens, att->labels, att->x);
    if (designed) att->x = designed_embedding(att->tokens, m.d_model, m.seed);
  }
  check_cancel(cancel);
  att->weights = weights_for(m, att->shape);
  check_cancel(cancel);
  att->result = grouped_attention(att->x, att->weights, att->shape, AttentionOptions{m.causal, m.scale_scores, cancel});
  att->trace = shape_trace(att->shape, int(att->x.rows()), m.causal, att->weights.bq.size() > 0);
  return att;
}

// The tokens and their vectors of a sentence (or the rows of a tensor), for purely positional heads:
// no attention weights are made, so any relpos head count works.
AttentionAnalysis tokens_only(const Scene& scene) {
  const int d_model = scene.model.d_model;
  require(d_model >= 1 && d_model <= limits::max_d_model,
          "d_model must be between 1 and " + std::to_string(limits::max_d_model) + ", got " + std::to_string(d_model));
  AttentionAnalysis tokens;
  prepare_input(scene.input, d_model, scene.model.seed, tokens.tokens, tokens.labels, tokens.x);
  return tokens;
}

}  // namespace

Analysis analyse(const Scene& scene, const AnalysisRequest& request, const std::atomic<bool>* cancel) {
  Analysis a;
  a.scene = normalise_scene(scene);
  a.request = request;
  ModelSettings& m = a.scene.model;
  if (m.weights == WeightSource::designed)
    require(!m.designed.empty(), "weight source 'designed' needs a list of patterns, one per head (previous, next, "
                                 "self, first, punct, local, repeat, broad)");
  if (scene.input.source == InputSource::grid) {
    // Relative-position attention (analysis_relpos.cpp) and convolution as attention, on the grid.
    if (request.relpos) a.relpos = std::make_shared<const RelposAnalysis>(analyse_relpos(a.scene, nullptr, cancel));
    if (request.conv) a.conv = std::make_shared<const ConvAnalysis>(analyse_conv(a.scene, cancel));
  } else {
    // Mixed mode adds positional scores to the content scores, so it needs the attention.
    if (request.attention || (request.relpos && scene.relpos.mixed)) a.attention = analyse_attention(a.scene, m, cancel);
    if (request.relpos) {
      if (a.attention) {
        a.relpos = std::make_shared<const RelposAnalysis>(analyse_relpos(a.scene, a.attention.get(), cancel));
      } else {
        const AttentionAnalysis tokens = tokens_only(a.scene);
        a.relpos = std::make_shared<const RelposAnalysis>(analyse_relpos(a.scene, &tokens, cancel));
      }
    }
  }
  check_cancel(cancel);
  return a;
}

Analysis analyse(const Scene& scene, const std::atomic<bool>* cancel) { return analyse(scene, request_for(scene), cancel); }

}  // namespace attnscope
