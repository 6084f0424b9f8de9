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
};

}  // namespace attnscope::fuzz
