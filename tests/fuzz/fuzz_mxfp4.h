// fuzz_mxfp4.h — the mxfp4 fuzz target (fuzz_entries.h lists it), in a header of its own that needs only
// the engine's safetensors and MXFP4 readers, so it can also be built alone with clang's sanitizers
// (a driver calling attnscope::fuzz::mxfp4 from LLVMFuzzerTestOneInput, compiled with
// engine/src/model/mxfp4.cpp, packed_matrix.cpp, engine/src/io/safetensors.cpp and mapped_file.cpp under
// -fsanitize=fuzzer,address,undefined) when the whole of scripts/fuzz.sh's build is too long to wait for.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "attnscope/core/error.h"
#include "attnscope/io/safetensors.h"
#include "attnscope/model/mxfp4.h"

namespace attnscope::fuzz {

// An MXFP4 weight in a safetensors file (gpt-oss's experts, model/mxfp4.h): tensors "w_blocks" and
// "w_scales" read as the experts of a weight of the shape the scales claim (E, rows, 32 · groups). What
// is accepted widens to finite values equal to the plain definition, row by row and in the product.
inline void mxfp4(const uint8_t* data, size_t size) {
  try {
    const SafetensorsHeader h = parse_safetensors_header(std::string_view(reinterpret_cast<const char*>(data), size), size, "fuzz.safetensors");
    const SafetensorsTensor* blocks = h.find("w_blocks");
    const SafetensorsTensor* scales = h.find("w_scales");
    if (!blocks || !scales) return;
    int64_t experts = 1, rows = 1, cols = model::mxfp4_block;
    if (scales->shape.size() == 3) experts = scales->shape[0], rows = scales->shape[1], cols = scales->shape[2] * model::mxfp4_block;
    const auto matrices = model::mxfp4_experts("fuzz.safetensors", "w", *blocks, data + h.data_start + blocks->begin,
                                               *scales, data + h.data_start + scales->begin, experts, rows, cols, nullptr);
    if (int64_t(matrices.size()) != experts) __builtin_trap();
    std::vector<float> wide, x, out;
    for (const model::Mxfp4Matrix& m : matrices) {
      if (m.rows() != rows || m.cols() != cols) __builtin_trap();
      if (rows * cols > (1 << 16)) continue;
      wide.resize(size_t(rows * cols));
      m.widen_rows(0, rows, wide.data());
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) {
          const float v = wide[size_t(r * cols + c)];
          if (!std::isfinite(v) || v != m(r, c)) __builtin_trap();
        }
      x.assign(size_t(2 * cols), 1e-30f);
      out.resize(size_t(2 * rows));
      model::mxfp4_linear(out.data(), x.data(), m, nullptr, 2);
      for (float v : out)
        if (!std::isfinite(v)) __builtin_trap();
    }
  } catch (const InputError&) {
  }
}

}  // namespace attnscope::fuzz
