// fuzz_entries.h — one entry point per fuzz target, shared by the libFuzzer executables
// (fuzz_main.cpp, built by scripts/fuzz.sh with clang) and by the normal test suite, which replays
// the committed corpus and every regression input through the same functions
// (tests/test_fuzz_corpus.cpp). Each entry must return normally for ANY bytes: user mistakes are
// InputError (caught here); anything else — a crash, a sanitizer report, another exception —
// is a bug.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "attnscope/text/embeddings.h"
#include "attnscope/core/error.h"
#include "attnscope/relpos/grids.h"
#include "attnscope/io/npy.h"
#include "attnscope/io/safetensors.h"
#include "attnscope/model/config.h"
#include "attnscope/core/parse_lists.h"
#include "attnscope/scene/scene_json.h"
#include "attnscope/text/tokenizer.h"
#include "core/scene_options.h"

namespace attnscope::fuzz {

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

inline void npy(const uint8_t* data, size_t size) {
  try {
    const NpyArray a = parse_npy(as_text(data, size), "fuzz.npy");
    int64_t count = 1;
    for (int64_t d : a.shape) count *= d;
    if (size_t(count) != a.data.size()) __builtin_trap();  // the parser's own promise
  } catch (const InputError&) {
  }
}

inline void scene_json(const uint8_t* data, size_t size) {
  try {
    const auto j = nlohmann::json::parse(as_text(data, size));
    std::vector<std::string> warnings;
    const Scene s = scene_from_json(j, &warnings);
    // What was read must write and read back identically.
    if (scene_to_json(scene_from_json(scene_to_json(s))) != scene_to_json(s)) __builtin_trap();
  } catch (const nlohmann::json::exception&) {
  } catch (const InputError&) {
  }
}

inline void tokenizer(const uint8_t* data, size_t size) {
  try {
    const auto tokens = tokenize(as_text(data, size));
    size_t last_end = 0;
    for (const Token& t : tokens) {
      if (t.byte_begin < last_end || t.byte_end <= t.byte_begin || t.byte_end > size) __builtin_trap();
      last_end = t.byte_end;
    }
    if (!tokens.empty() && tokens.size() <= 64) (void)embed_tokens(tokens, 8, 1);
  } catch (const InputError&) {
  }
}

inline void lists(const uint8_t* data, size_t size) {
  const std::string_view text = as_text(data, size);
  try {
    (void)parse_number_list(text, "--alphas");
  } catch (const InputError&) {
  }
  for (int dims : {1, 2}) try {
      (void)parse_delta_list(text, dims);
    } catch (const InputError&) {
    }
  try {
    (void)parse_grid_size(text);
  } catch (const InputError&) {
  }
}

inline void image(const uint8_t* data, size_t size) {
  try {
    (void)decode_image_grid(as_text(data, size), "fuzz.png", 64, 64, size % 2 == 0);
  } catch (const InputError&) {
  }
}

// The command line: NUL-separated arguments parsed by the flags every command shares, then turned
// into a Scene. Subcommands are not registered, so nothing runs and nothing is written.
inline void cli(const uint8_t* data, size_t size) {
  std::vector<std::string> args{"attnscope"};
  std::string current;
  for (size_t i = 0; i < size && args.size() < 64; ++i) {
    if (data[i] == 0) {
      args.push_back(current);
      current.clear();
    } else {
      current += char(data[i]);
    }
  }
  if (!current.empty()) args.push_back(current);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  CLI::App app;
  cli::SceneOptions options;
  cli::add_scene_options(app, options, cli::flags_all);
  try {
    app.parse(int(argv.size()), argv.data());
    (void)cli::build_scene(options);
  } catch (const CLI::Error&) {
  } catch (const InputError&) {
  }
}

// A safetensors file's first bytes: the header is parsed and validated against the given length.
// Whatever passes must describe tensors that tile the data area exactly.
inline void safetensors(const uint8_t* data, size_t size) {
  try {
    const SafetensorsHeader h = parse_safetensors_header(as_text(data, size), size, "fuzz.safetensors");
    uint64_t at = 0;
    for (const SafetensorsTensor& t : h.tensors) {
      if (t.begin != at || t.end < t.begin) __builtin_trap();
      if (uint64_t(t.count()) * uint64_t(element_bytes(t.dtype)) != t.end - t.begin) __builtin_trap();
      at = t.end;
    }
    if (h.data_start + at != size) __builtin_trap();
    // Converting what the header promises must stay inside the bytes.
    std::vector<float> out;
    for (const SafetensorsTensor& t : h.tensors)
      if (converts_to_float32(t.dtype) && t.count() <= (1 << 16)) {
        out.resize(size_t(t.count()));
        convert_to_float32(data + h.data_start + t.begin, t.dtype, t.count(), out.data());
      }
  } catch (const InputError&) {
  }
}

// config.json text: accepted configs must describe a buildable network.
inline void model_config(const uint8_t* data, size_t size) {
  try {
    const model::ModelConfig c = model::parse_model_config(as_text(data, size), "fuzz/config.json");
    if (c.heads < 1 || c.kv_heads < 1 || c.heads % c.kv_heads != 0 || c.head_dim < 1 || c.layers < 1 ||
        c.vocab < 1 || c.parameter_count() <= 0)
      __builtin_trap();
  } catch (const InputError&) {
  }
  try {
    const model::HeadCounts h = model::parse_head_counts(as_text(data, size), "fuzz/config.json");
    if (h.heads < 1 || h.kv_heads < 1 || h.heads % h.kv_heads != 0) __builtin_trap();
  } catch (const InputError&) {
  }
}

// ---- the table of targets ------------------------------------------------------------------------
// Every target, by name: the fuzz executable picks one at start (ATTNSCOPE_FUZZ_TARGET), scripts/fuzz.sh
// runs each in turn, and the normal suite replays each one's corpus. A new target is one line here.
using Entry = void (*)(const uint8_t*, size_t);
struct Target {
  const char* name;
  Entry entry;
  int min_corpus;  // committed seed inputs it must have
};
inline constexpr Target targets[] = {
    {"npy", npy, 4},       {"scene_json", scene_json, 3}, {"tokenizer", tokenizer, 3},
    {"lists", lists, 4},   {"image", image, 2},           {"cli", cli, 3},
    {"safetensors", safetensors, 4}, {"model_config", model_config, 4},
};

}  // namespace attnscope::fuzz
