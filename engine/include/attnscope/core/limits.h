// limits.h — the documented limits every entry point enforces (README "Limits").
#pragma once
#include <cstdint>

namespace attnscope::limits {

inline constexpr int max_tokens = 2048;        // T
inline constexpr int max_d_model = 4096;       // C
inline constexpr int max_heads = 64;           // H
// H·T² bounds the [H, T, T] score and probability tensors: 2^26 floats = 256 MiB each.
inline constexpr int64_t max_attention_cells = int64_t(1) << 26;
inline constexpr int max_grid_side = 64;       // rows and cols of a 2D grid
inline constexpr int64_t max_file_bytes = int64_t(1) << 30;   // any input file (.npy, image, scene)
inline constexpr int64_t max_image_bytes = int64_t(64) << 20; // an image file
inline constexpr int64_t max_text_bytes = 1 << 20;            // input text
// A tokenizer file (tokenizer.json, vocab.json, merges.txt, tokenizer_config.json). The largest real
// ones are about 35 MB (Gemma's 256k-token tokenizer.json); Qwen's is 11 MB.
inline constexpr int64_t max_vocab_file_bytes = int64_t(64) << 20;
// Token ids are 0 … max_vocab_tokens − 1 (real vocabularies have at most about 260k).
inline constexpr int64_t max_vocab_tokens = int64_t(1) << 22;

}  // namespace attnscope::limits
