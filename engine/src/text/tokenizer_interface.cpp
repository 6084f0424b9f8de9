// tokenizer_interface.cpp — the SPEC word tokenizer behind the interface, the file loader and its cache.
#include "attnscope/text/tokenizer_interface.h"

#include <mutex>

#include "attnscope/core/error.h"
#include "attnscope/core/limits.h"
#include "attnscope/io/file_io.h"
#include "attnscope/text/tokenizer.h"
#include "attnscope/text/vocab_tokenizer.h"

namespace attnscope {
namespace fs = std::filesystem;

Encoding Tokenizer::encode(std::string_view text, bool add_special_tokens) const {
  return describe(encode_ids(text, add_special_tokens));
}

namespace {

// SPEC "Tokens": no vocabulary, so ids are kNoTokenId and a token's label, piece and bytes are its text.
class WordTokenizer final : public Tokenizer {
 public:
  TokenizerKind kind() const override { return TokenizerKind::words; }
  std::string description() const override { return "words (SPEC: words, CJK ideographs, punctuation)"; }
  bool has_vocabulary() const override { return false; }
  int32_t vocab_size() const override { return 0; }
  std::vector<int32_t> encode_ids(std::string_view text, bool) const override {
    return std::vector<int32_t>(tokenize(text).size(), kNoTokenId);
  }
  Encoding encode(std::string_view text, bool) const override {
    Encoding e;
    for (Token& t : tokenize(text)) {
      e.ids.push_back(kNoTokenId);
      e.pieces.push_back(t.text);
      e.bytes.push_back(t.text);
      e.labels.push_back(std::move(t.text));
      e.special.push_back(0);
    }
    return e;
  }
  Encoding describe(std::span<const int32_t>) const override {
    throw InputError("the word tokenizer has no vocabulary, so there are no token ids to describe; load a "
                     "tokenizer file for ids");
  }
  std::string decode(std::span<const int32_t>, bool) const override {
    throw InputError("the word tokenizer has no vocabulary, so there are no token ids to decode; load a "
                     "tokenizer file for ids");
  }
};

// (Built by append: GCC 12 warns wrongly about "'" + std::string, its bug 105329.)
std::string quoted(const fs::path& p) { return std::string("'").append(p.string()).append("'"); }

std::string read_tokenizer_file(const fs::path& p) { return read_file(p, limits::max_vocab_file_bytes); }

// tokenizer.json, with tokenizer_config.json when it lies beside it.
std::shared_ptr<const Tokenizer> load_tokenizer_json(const fs::path& file) {
  const std::string text = read_tokenizer_file(file);
  const fs::path config = file.parent_path() / "tokenizer_config.json";
  std::error_code ec;
  if (fs::is_regular_file(config, ec)) return tokenizer_from_json(text, quoted(file), read_tokenizer_file(config), quoted(config));
  return tokenizer_from_json(text, quoted(file));
}

// A vocab.json: GPT-2's (with its merges beside it), or the one `attnscope train` writes (vocab_tokenizer.h).
std::shared_ptr<const Tokenizer> load_gpt2(const fs::path& vocab) {
  const fs::path folder = vocab.parent_path();
  std::error_code ec;
  for (const char* name : {"merges.txt", "vocab.bpe"}) {
    const fs::path merges = folder / name;
    if (fs::is_regular_file(merges, ec))
      return tokenizer_from_gpt2_files(read_tokenizer_file(vocab), read_tokenizer_file(merges), quoted(vocab), quoted(merges));
  }
  if (const std::string text = read_tokenizer_file(vocab); is_train_vocab(text)) return train_vocab_tokenizer(text, quoted(vocab));
  throw InputError(quoted(vocab) + ": a GPT-2 vocabulary needs its merges beside it: no merges.txt (or vocab.bpe) in " +
                   quoted(folder.empty() ? fs::path(".") : folder));
}

}  // namespace

std::shared_ptr<const Tokenizer> word_tokenizer() {
  static const auto tokenizer = std::make_shared<const WordTokenizer>();
  return tokenizer;
}

std::shared_ptr<const Tokenizer> load_tokenizer(const fs::path& path) {
  std::error_code ec;
  require(fs::exists(path, ec), "cannot read tokenizer " + quoted(path) + ": no such file or folder");
  if (fs::is_directory(path, ec)) {
    if (fs::is_regular_file(path / "tokenizer.json", ec)) return load_tokenizer_json(path / "tokenizer.json");
    if (fs::is_regular_file(path / "vocab.json", ec) && fs::is_regular_file(path / "merges.txt", ec))
      return load_gpt2(path / "vocab.json");
    if (fs::is_regular_file(path / "vocab.json", ec)) {
      const std::string text = read_tokenizer_file(path / "vocab.json");
      if (is_train_vocab(text)) return train_vocab_tokenizer(text, quoted(path / "vocab.json"));
    }
    throw InputError("the folder " + quoted(path) +
                     " has no tokenizer.json, no vocab.json + merges.txt and no vocab.json of attnscope train: give a "
                     "model's folder or one of those files");
  }
  const std::string name = path.filename().string();
  if (name == "vocab.json" || name == "encoder.json") return load_gpt2(path);
  if (path.extension() == ".json") return load_tokenizer_json(path);
  throw InputError("cannot tell what tokenizer " + quoted(path) +
                   " is: give a tokenizer.json, a vocab.json (with merges.txt beside it) or a model folder");
}

std::shared_ptr<const Tokenizer> load_tokenizer_cached(const fs::path& path) {
  // The key: the path and, for every file the loader may read, its size and modification time, so an
  // edited or replaced file is read again.
  auto stamp = [](const fs::path& p) {
    std::error_code ec;
    if (!fs::is_regular_file(p, ec)) return std::string("-");
    const auto size = fs::file_size(p, ec);
    const auto time = static_cast<long long>(fs::last_write_time(p, ec).time_since_epoch().count());  // libc++: __int128
    return std::to_string(size).append("@").append(std::to_string(time));
  };
  std::error_code ec;
  std::string key = fs::absolute(path, ec).lexically_normal().string();
  key.append("|").append(stamp(path));
  const fs::path folder = fs::is_directory(path, ec) ? path : path.parent_path();
  for (const char* name : {"tokenizer.json", "tokenizer_config.json", "vocab.json", "merges.txt", "vocab.bpe"})
    key.append("|").append(stamp(folder / name));

  static std::mutex mutex;
  static std::vector<std::pair<std::string, std::shared_ptr<const Tokenizer>>> cache;  // newest last
  {
    std::lock_guard lock(mutex);
    for (const auto& [k, t] : cache)
      if (k == key) return t;
  }
  auto tokenizer = load_tokenizer(path);  // outside the lock: loading takes up to a second
  std::lock_guard lock(mutex);
  cache.emplace_back(key, tokenizer);
  if (cache.size() > 4) cache.erase(cache.begin());  // a few vocabularies of 10–30 MB in memory at most
  return tokenizer;
}

}  // namespace attnscope
