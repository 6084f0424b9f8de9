// analysis.cpp — Scene → Analysis: the one place where settings become numbers.
#include "attnscope/analysis/analysis.h"

#include <algorithm>
#include <cmath>

#include "attnscope/attention/designed_heads.h"
#include "attnscope/text/embeddings.h"
#include "attnscope/core/error.h"
#include "attnscope/core/limits.h"
#include "attnscope/io/npy.h"
#include "attnscope/scene/scene_rules.h"

namespace attnscope {
namespace {

// A real tokenizer's token as a SPEC Token, for the designed embedding and the views: its label as
// text; punctuation when the label (spaces aside) is only punctuation marks, cjk when it is one
// ideograph, else a word.
TokenKind label_kind(const std::string& label) {
  const std::u32string cps = decode_utf8(label);
  std::u32string core;
  for (char32_t c : cps)
    if (c != U' ') core += c;
  if (core.size() == 1 && is_cjk_ideograph(core[0])) return TokenKind::cjk;
  if (!core.empty() && std::all_of(core.begin(), core.end(), [](char32_t c) { return is_punctuation(c); }))
    return TokenKind::punctuation;
  return TokenKind::word;
}

}  // namespace

void prepare_input(const InputSettings& input, int d_model, uint64_t seed, std::vector<Token>& tokens,
                   std::vector<std::string>& labels, Mat& x, Encoding* encoding, bool sinusoidal) {
  tokens.clear();
  labels.clear();
  if (encoding) *encoding = Encoding{};
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
  if (input.tokenizer_path.empty()) {
    tokens = tokenize(input.text);
    if (encoding) *encoding = word_tokenizer()->encode(input.text);
  } else {
    // The model's own tokenizer, special tokens included, as the model would see the text.
    Encoding e = load_tokenizer_cached(input.tokenizer_path)->encode(input.text, true);
    size_t offset = 0;
    for (size_t t = 0; t < e.size(); ++t) {
      tokens.push_back({e.labels[t], offset, offset + e.bytes[t].size(), label_kind(e.labels[t])});
      offset += e.bytes[t].size();
    }
    if (encoding) *encoding = std::move(e);
  }
  require(!tokens.empty(), "the text is empty: type a sentence (words, characters or punctuation)");
  require(tokens.size() <= size_t(limits::max_tokens), "the text has " + std::to_string(tokens.size()) +
                                                           " tokens; the limit is " +
                                                           std::to_string(limits::max_tokens));
  for (const Token& t : tokens) labels.push_back(t.text);
  x = embed_tokens(tokens, d_model, seed, sinusoidal);
}

bool signed_maps(const AttentionAnalysis& att) { return att.linear || !att.result.probs_1.empty(); }

const char* map_value_word(const AttentionAnalysis& att) {
  if (!att.result.probs_1.empty()) return "differential weight";
  if (!att.linear) return "probability";
  switch (att.linear_spec.kind) {
    case LinearLayerKind::linear: return "linear attention weight";
    case LinearLayerKind::retention: return "retention weight";
    case LinearLayerKind::mamba2: return "Mamba-2 weight";
    case LinearLayerKind::deltanet: return "DeltaNet weight";
    case LinearLayerKind::gated_deltanet: return "Gated DeltaNet weight";
  }
  return "probability";
}

LinearLayerSpec linear_spec_of(const ModelSettings& m) {
  LinearLayerSpec spec;
  switch (m.kind) {
    case AttentionKind::linear: spec.kind = LinearLayerKind::linear; break;
    case AttentionKind::retention: spec.kind = LinearLayerKind::retention; break;
    case AttentionKind::mamba2: spec.kind = LinearLayerKind::mamba2; break;
    case AttentionKind::deltanet: spec.kind = LinearLayerKind::deltanet; break;
    case AttentionKind::gated_deltanet: spec.kind = LinearLayerKind::gated_deltanet; break;
    default: throw InputError(std::string("kind ") + to_string(m.kind) + " has a softmax");
  }
  spec.normalize = m.linear_normalize;
  spec.decay = m.decay;
  spec.scale_q = m.scale_scores;
  return spec;
}

LatentShape latent_shape_of(const ModelSettings& m) {
  return {m.d_model, effective_heads(m), m.kv_rank, m.q_rank, m.rope_dim};
}

LatentRope latent_rope_of(const ModelSettings& m) {
  LatentRope r;
  r.base = m.rope_base;
  r.interleaved = m.rope_layout == RopeLayout::interleaved;
  r.scaling = m.rope_scaling;
  r.factor = m.rope_scaling == RopeScaling::none ? 1 : m.rope_factor;
  r.original_context = m.rope_original_context;
  return r;
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
  // Differential attention's map is signed: its statistics describe where each row's weight goes whatever
  // its sign, |A| normalised per row (head_stats.h, weight_distribution).
  // The same for the explicit matrices of heads without a softmax.
  const bool is_signed = signed_maps(att);
  const Tensor3 magnitudes = is_signed ? weight_distribution(att.result.probs) : Tensor3{};
  HeadStats stats = head_stats(is_signed ? magnitudes : att.result.probs, model.causal || att.linear, cancel,
                               HeadStatsMask{att.window, att.sinks, &att.result.sink_share});
  // Drift from MHA: the same query heads before their K/V were pooled into G < H groups.
  const bool pooled = model.weights == WeightSource::converted || model.weights == WeightSource::designed;
  if (pooled && att.shape.groups < att.shape.heads && !att.linear) {
    const AttentionShape base_shape{att.shape.d_model, att.shape.heads, att.shape.heads};
    check_cancel(cancel);
    AttentionOptions options = att.options;  // the same mask, sinks and positions on the MHA heads
    options.cancel = cancel;
    Tensor3 base = is_signed ? differential_attention(att.x, weights_for(model, base_shape), att.differential, base_shape,
                                                        options).probs
                               : grouped_attention(att.x, weights_for(model, base_shape), base_shape, options).probs;
    check_cancel(cancel);
    stats.drift_from_mha = is_signed ? head_drift(magnitudes, weight_distribution(base), cancel)
                                       : head_drift(att.result.probs, base, cancel);
    if (mha_probs) *mha_probs = std::move(base);
  }
  return stats;
}

RopeParams rope_params(const ModelSettings& m) {
  RopeParams p;
  p.base = m.rope_base;
  p.layout = m.rope_layout;
  p.scaling = m.rope_scaling;
  p.factor = m.rope_factor;
  p.original_context = m.rope_original_context;
  return p;
}

PositionEncoding position_encoding(const ModelSettings& m, const RelposSettings& relpos, int heads, int head_dim) {
  PositionEncoding e;
  e.scheme = m.positions;
  switch (m.positions) {
    case PositionScheme::absolute:
    case PositionScheme::nope: break;
    case PositionScheme::rope: {
      const RopeParams p = rope_params(m);
      validate_rope(p, head_dim);
      e.rope_layout = p.layout;
      e.rope_inv_freq = rope_scaled_inv_freq(p, head_dim);
      e.rope_attention_factor = rope_attention_factor(p);
      break;
    }
    case PositionScheme::alibi: e.alibi_slopes = alibi_slopes(heads); break;
    case PositionScheme::relpos: {
      RelposSettings r = relpos;
      r.heads = heads;
      if (r.deltas.empty() && (r.delta_preset == "conv3x3" || r.delta_preset == "conv5x5")) r.delta_preset = "line";
      const std::string each = "relative positions add one relative-position head to each attention head, so the ";
      require(r.alphas.empty() || int(r.alphas.size()) == heads, each + "alpha list needs " + std::to_string(heads) +
                                                                     " values, got " + std::to_string(r.alphas.size()));
      require(r.deltas.empty() || int(r.deltas.size()) == heads, each + "offset list needs " + std::to_string(heads) +
                                                                     " values, got " + std::to_string(r.deltas.size()));
      require(std::isfinite(r.lambda) && r.lambda >= 0,
              "lambda (the weight of the positional scores) must be a finite number >= 0, got " + std::to_string(r.lambda));
      for (const RelposHead& head : resolve_relpos_heads(r, 1)) {
        e.relpos_alphas.push_back(head.alpha);
        e.relpos_deltas.push_back(head.delta[1]);
      }
      e.relpos_lambda = r.lambda;
      break;
    }
  }
  return e;
}

PositionsProfile positions_profile(const ModelSettings& m, int head_dim, int max_distance) {
  return positions_profile(m.positions, rope_params(m), effective_heads(m), head_dim, max_distance);
}

int positions_profile_distance(const ModelSettings& m, int tokens) {
  return positions_profile_distance(double(m.rope_original_context), tokens);
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

// The rules of the variants after GQA that concern the whole scene (the shapes are checked by the engine).
void check_variant(const Scene& scene, const ModelSettings& m) {
  if (is_linear_kind(m.kind)) {
    const std::string what = std::string("kind ") + to_string(m.kind) + " (attention without a softmax)";
    require(!m.differential, "differential attention subtracts two softmax maps; " + what +
                                 " has none: choose single, mha, mqa or gqa for it");
    require(m.weights != WeightSource::designed,
            "designed heads are softmax heads built for one pattern each; " + what +
                " uses the seeded, converted or loaded Q/K/V/O (valid weight sources: converted, independent, loaded)");
    require(m.window == 0 && m.sinks == 0, what + " has no window or sink tokens: its state forgets through its decay "
                                                  "instead (set the window and sinks to 0)");
    require(!m.sink_logits, what + " has no softmax for a sink logit to join: turn sink logits off");
    require(m.positions == PositionScheme::absolute || m.positions == PositionScheme::nope,
            what + " runs here with absolute positions or none (RoPE, ALiBi and relative positions are for "
                   "softmax heads): choose positions absolute or nope");
    require(!(scene.relpos.mixed && scene.input.source != InputSource::grid),
            "the relative-position mixed mode adds positional scores before a softmax; " + what +
                " has no scores: turn mixed mode off");
    require(std::isfinite(m.decay) && (m.decay == 0 || (m.decay > 0 && m.decay <= 1)),
            "the retention decay gamma must be in (0, 1], or 0 for the per-head schedule from 0.5 to 0.97; got " +
                std::to_string(m.decay));
    return;
  }
  const bool mla = m.kind == AttentionKind::mla;
  require(!(mla && m.differential),
          "differential attention works with the kinds single, mha, mqa and gqa, not mla: it splits each head's query "
          "and key in two halves, while MLA builds its heads from the shared latent");
  if (mla || m.differential) {
    const char* what = mla ? "multi-head latent attention (kind mla)" : "differential attention";
    require(m.weights != WeightSource::loaded,
            std::string(what) + " uses its own seeded weights; a weights folder holds W_Q, W_K, W_V, W_O of ordinary "
                                "attention only (valid weight sources here: converted, independent)");
    require(m.weights != WeightSource::designed,
            std::string(what) + " cannot use designed heads: they are ordinary softmax heads built for one pattern "
                                "each (valid weight sources here: converted, independent)");
    require(!m.sink_logits, std::string(what) + " runs here with the causal mask, a window and sink tokens, but not "
                                                 "with learned sink logits: turn those off (they work with single, mha, "
                                                 "mqa and gqa)");
    require(m.positions == PositionScheme::absolute || m.positions == PositionScheme::nope ||
                (mla && m.positions == PositionScheme::rope),
            std::string(what) + (mla ? " carries positions in its decoupled rotary part (rope_dim, with the RoPE base and "
                                       "scaling): choose positions rope, absolute or nope"
                                     : " runs here with absolute positions or none: RoPE, ALiBi and relative positions "
                                       "work with single, mha, mqa and gqa"));
    require(!(scene.relpos.mixed && scene.input.source != InputSource::grid && m.differential),
            "the relative-position mixed mode adds one head's content scores to each positional head; differential "
            "attention has two score maps per head: turn off mixed mode or differential attention");
  }
}

// The mask, sink logits and positions of the scene's model (SPEC "Variants after GQA"). Throws
// InputError with what is valid.
AttentionOptions attention_options(const Scene& scene, const ModelSettings& m, const AttentionShape& shape, int tokens) {
  require(m.window >= 0, "the sliding window must be at least 1 token (0 = none), got " + std::to_string(m.window));
  require(m.sinks >= 0, "the number of sink tokens must be 0 or more, got " + std::to_string(m.sinks));
  require(m.sinks == 0 || m.window > 0, "sink tokens stay visible beside a sliding window: set a window too");
  require(m.sinks <= tokens, "there are " + std::to_string(m.sinks) + " sink tokens but the input has only " +
                                 std::to_string(tokens) + " tokens: choose at most " + std::to_string(tokens));
  require(!(m.positions == PositionScheme::relpos && scene.relpos.mixed),
          "relative positions already add the positional scores to every head: turn mixed mode off");
  AttentionOptions o;
  o.causal = m.causal;
  o.scale_scores = m.scale_scores;
  o.window = m.window;
  o.sinks = m.sinks;
  if (m.sink_logits) o.sink_logits = seeded_sink_logits(shape.heads, m.seed);
  o.positions = position_encoding(m, scene.relpos, shape.heads, shape.head_dim());
  return o;
}

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
  if (m.kind == AttentionKind::mla) validate_latent_shape(latent_shape_of(m));
  if (m.differential) validate_differential_shape(att->shape);
  if (scene.input.source == InputSource::text) {
    prepare_input(scene.input, m.d_model, m.seed, att->tokens, att->labels, att->x, &att->encoding,
                  m.positions == PositionScheme::absolute);
    if (designed) att->x = designed_embedding(att->tokens, m.d_model, m.seed);
  }
  check_cancel(cancel);
  const int T = int(att->x.rows());
  att->window = m.window;
  att->sinks = m.sinks;
  if (m.kind == AttentionKind::mla) {
    // MLA: its own seeded weights (W_DKV, W_UK, …), H heads each its own K/V expanded from the latent. The
    // window and sink tokens mask its scores; positions enter through its rotary part only.
    ModelSettings masks_only = m;
    masks_only.positions = PositionScheme::nope;
    att->options = attention_options(scene, masks_only, att->shape, T);
    att->latent_shape = latent_shape_of(m);
    if (m.rope_dim > 0) validate_rope(rope_params(m), m.rope_dim);
    att->latent_weights = random_latent_weights(att->latent_shape, m.seed);
    check_cancel(cancel);
    AttentionOptions options = att->options;
    options.cancel = cancel;
    att->result = latent_attention(att->x, att->latent_weights, att->latent_shape, latent_rope_of(m), options);
    const LatentShape& ls = att->latent_shape;
    TraceShape ts{T, ls.d_model, ls.heads, ls.heads, ls.qk_dim(), false, false, ls.rope_dim > 0, m.causal};
    ts.kv_latent = ls.kv_rank, ts.q_latent = ls.q_rank, ts.rope_dim = ls.rope_dim, ts.v_dim = ls.head_dim();
    ts.softmax_scale = m.scale_scores ? 1.0 / std::sqrt(double(ls.qk_dim())) : 1.0;
    ts.window = m.window, ts.sinks = m.sinks;
    att->trace = latent_attention_trace(ts);
    // What every head shares, for the views that draw it (as a checkpoint's MLA layer); a layer without a
    // rotary part leaves them empty, as those views expect a rotary key beside the latent.
    if (ls.rope_dim > 0) {
      att->shared_latent = att->result.c_kv, att->shared_rope_key = att->result.k_rope;
      ModelSettings rotary = m;
      rotary.positions = PositionScheme::rope;
      att->positions = positions_profile(rotary, ls.rope_dim, positions_profile_distance(rotary, T));
    }
    return att;
  }
  att->weights = weights_for(m, att->shape);
  check_cancel(cancel);
  if (is_linear_kind(m.kind)) {
    // Heads without a softmax: the same Q/K/V/O as the scene's MHA, the seeded gates, each head as it runs
    // and as its explicit matrix (linear_layer.h). Causal by nature; no mask, sinks or positions to apply.
    att->options.causal = true;
    att->options.scale_scores = m.scale_scores;
    att->linear = true;
    att->linear_spec = linear_spec_of(m);
    att->linear_gates = random_linear_gates(m.d_model, m.heads, m.seed);
    att->linear_layer = linear_layer(att->x, att->weights, att->linear_gates, att->linear_spec, att->shape, cancel);
    att->result = std::move(att->linear_layer.attention);
    att->linear_layer.attention = AttentionResult{};
    const bool bias = att->weights.bq.size() > 0;
    TraceShape ts{T, m.d_model, m.heads, m.heads, att->shape.head_dim(), bias, bias, false, true};
    ts.linear = to_string(att->linear_spec.kind);
    ts.linear_normalize = att->linear_spec.normalize;
    att->trace = linear_layer_trace(ts);
    return att;
  }
  att->options = attention_options(scene, m, att->shape, T);
  AttentionOptions options = att->options;
  options.cancel = cancel;
  if (m.differential) {
    validate_differential_shape(att->shape);
    att->differential = random_differential_params(att->shape, m.seed);
    att->result = differential_attention(att->x, att->weights, att->differential, att->shape, options);
    const bool bias = att->weights.bq.size() > 0;
    TraceShape ts{T, m.d_model, m.heads, m.groups, att->shape.head_dim(), bias, bias, false, m.causal};
    ts.differential = true, ts.lambda = att->result.lambda, ts.lambda_init = differential_lambda_init(att->differential.layer);
    ts.window = m.window, ts.sinks = m.sinks;
    att->trace = differential_trace(ts);
    return att;
  }
  att->result = grouped_attention(att->x, att->weights, att->shape, options);
  if (m.positions == PositionScheme::rope || m.positions == PositionScheme::alibi)
    att->positions = positions_profile(m, att->shape.head_dim(), positions_profile_distance(m, T));
  const bool bias = att->weights.bq.size() > 0;
  TraceShape traced{att->x.rows(), m.d_model, m.heads, m.groups, att->shape.head_dim(), bias, bias, false, m.causal};
  traced.rotary = traced.rope_angles = m.positions == PositionScheme::rope;
  traced.alibi = m.positions == PositionScheme::alibi;
  traced.relpos = m.positions == PositionScheme::relpos;
  traced.sink_logits = m.sink_logits;
  traced.window = m.window;
  traced.sinks = m.sinks;
  att->trace = shape_trace(traced);
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
  if (scene.input.source != InputSource::grid) check_variant(a.scene, m);
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
