// vocab_tokenizer.h — the vocabulary of a model trained by `attnscope train` as a Tokenizer.
//
// `attnscope train` saves vocab.json = {"task": …, "level": …, "tokens": [piece of id 0, piece of id 1, …]}
// beside the checkpoint (train/checkpoint.h). Its level says how text splits into those pieces:
//   chars    one token per character (spaces and newlines too): "ab a" → a, b, ␣, a
//   words    SPEC's words, punctuation marks and CJK ideographs (tokenizer.h); whitespace separates
//   symbols  the built-in tasks' symbol names ("A" … "Z", "a" … "z", "s52", …, "|"), separated by
//            whitespace; a run of one-character symbols may be typed without spaces ("ABCABC")
// Text holding a piece the vocabulary lacks is refused, naming the pieces (training mapped rare text to
// "<unk>", but a typed piece the model never saw is the user's to change). No special tokens are added.
#pragma once
#include <memory>
#include <string>
#include <string_view>

#include "attnscope/text/tokenizer_interface.h"

namespace attnscope {

// True when `json_text` is attnscope's vocab.json (an object with a "tokens" array), not GPT-2's.
bool is_train_vocab(std::string_view json_text);

// The tokenizer of an attnscope vocab.json. `source` names the file in messages. Throws InputError for
// JSON that is not such a file, an unknown level, an empty or non-string token, or a duplicate token.
std::shared_ptr<const Tokenizer> train_vocab_tokenizer(std::string_view json_text, const std::string& source);

}  // namespace attnscope
