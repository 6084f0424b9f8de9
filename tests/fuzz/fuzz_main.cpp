// fuzz_main.cpp — the libFuzzer executable for one target, chosen at compile time by
// ATTNSCOPE_FUZZ_TARGET (npy, scene_json, tokenizer, tokenizer_json, lists,
// image, cli). Built by scripts/fuzz.sh.
#include "fuzz_entries.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  attnscope::fuzz::ATTNSCOPE_FUZZ_TARGET(data, size);
  return 0;
}
