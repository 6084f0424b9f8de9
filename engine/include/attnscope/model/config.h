// config.h — a checkpoint's config.json, read into the few numbers and switches the forward pass needs.
//
// Families (SPEC "Real checkpoints"):
//   gpt2   model_type gpt2: learned positions, LayerNorm(layer_norm_epsilon), gelu_new MLP, Conv1D
//          weights, output tied to wte unless tie_word_embeddings is false
//   llama  model_type llama, mistral, qwen2, qwen3, phi3: RMSNorm(rms_norm_eps), rotate-half
//          RoPE(rope_theta), num_key_value_heads, optional head_dim, SwiGLU MLP, tie_word_embeddings;
//          qwen3 adds an RMSNorm over each head of q and of k before RoPE (qk_norm); phi3 stores q/k/v
//          and gate/up as fused tensors, split at load (model.cpp), so the pass is Llama's;
//          smollm3: the same with a per-layer NoPE list (no_rope_layers[i] == 1: layer i uses RoPE);
//          gemma2, gemma3_text: (1 + w) RMSNorms, four norms per block, embedding × √hidden_size,
//          GeGLU (gelu tanh), query_pre_attn_scalar, soft-capping (Gemma 2), q/k norms (Gemma 3),
//          sliding-window layers interleaved with global ones, local/global RoPE bases (Gemma 3)
// The differences live in this struct (norm, positions, mlp), not in two forward passes.
// Anything outside these conventions is refused with a message that names the key and says what is
// supported: another model_type, a rope_scaling, an activation other than the family's own, …
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attnscope::model {

enum class Family { gpt2, llama };
enum class NormKind { layernorm, rmsnorm };        // LayerNorm (weight + bias) or RMSNorm (weight)
enum class PositionKind { learned, rotary };       // wpe added to the input, or RoPE on q and k
enum class MlpKind { gelu_new, swiglu, geglu };    // down(gelu_new(up x)), down(silu(gate x) ⊙ up x) or
                                                   // down(gelu_tanh(gate x) ⊙ up x) (Gemma)

struct ModelConfig {
  std::string model_type;  // gpt2 | llama | mistral | qwen2 | qwen3 | phi3 | smollm3 | gemma2 | gemma3_text
  Family family = Family::llama;
  NormKind norm = NormKind::rmsnorm;
  PositionKind positions = PositionKind::rotary;
  MlpKind mlp = MlpKind::swiglu;

  int layers = 0;         // L
  int d_model = 0;        // C
  int heads = 0;          // H
  int kv_heads = 0;       // G, divides H
  int head_dim = 0;       // D (C / H unless config.json says otherwise)
  int ffn_dim = 0;        // F
  int vocab = 0;          // V
  int max_positions = 0;  // the longest input the model was built for
  double norm_eps = 1e-5;
  double rope_theta = 10000.0;      // rotary only
  bool tied_embeddings = true;      // logits use the token embedding table (no lm_head.weight)
  int sliding_window = 0;           // > 0: the window of the sliding-window layers (layer_window)
  bool qkv_bias = false;            // q/k/v projections have biases (gpt2, qwen2, llama attention_bias)
  bool o_bias = false;              // the output projection has a bias (gpt2, llama attention_bias)
  bool mlp_bias = false;            // the MLP projections have biases (gpt2)
  bool qk_norm = false;             // RMSNorm(norm_eps) over each head's D values of q and of k, after the
                                    // projection and before RoPE, weights q_norm/k_norm [D] (qwen3)
  bool sandwich_norms = false;      // Gemma: post_attention_layernorm on the attention output, and
                                    // pre_/post_feedforward_layernorm around the MLP
  bool norm_plus_one = false;       // Gemma: RMSNorms scale by (1 + w); the 1 is added to w at load
  double attn_scale = 0;            // the score scale: 1/√D, Gemma query_pre_attn_scalar^(−1/2)
  double attn_softcap = 0;          // > 0: scores s → tanh(s/cap)·cap before the mask (Gemma 2)
  double final_softcap = 0;         // > 0: logits z → tanh(z/cap)·cap (Gemma 2)
  double embedding_scale = 1;       // x₀ = E[ids]·scale (Gemma: √hidden_size in the embedding's dtype)
  std::vector<int> layer_window;    // [L], 0 = global; W > 0: query i sees keys i − W < j ≤ i
  std::vector<double> layer_rope_theta;  // [L] RoPE base per layer, 0 = no RoPE in that layer (NoPE;
                                         // every layer of a learned-position family)
  bool nope_layer(int layer) const {  // a rotary model's layer without RoPE (SmolLM3)
    return positions == PositionKind::rotary && layer_rope_theta[size_t(layer)] == 0;
  }

  int64_t parameter_count() const;  // from the shapes (biases included when the family has them)
};

// Reads config.json's text. `name` (the path) goes into messages. Throws InputError naming the key
// for a missing or wrong field, an unsupported model_type or feature.
ModelConfig parse_model_config(std::string_view json_text, const std::string& name);

// model_type values parse_model_config accepts, for messages: "gpt2, llama, mistral, qwen2, …".
const char* supported_model_types();

// Just (H, G) from a config.json of ANY decoder (num_attention_heads / n_head, num_key_value_heads;
// or the heads / kv_heads of `compute --checkpoint`'s model.json),
// for drawing the kv groups of attentions computed elsewhere; G = H when the file has no
// num_key_value_heads. Throws InputError when it holds neither head count.
struct HeadCounts {
  int heads = 0, kv_heads = 0;
};
HeadCounts parse_head_counts(std::string_view json_text, const std::string& name);

}  // namespace attnscope::model
