#!/usr/bin/env python3
"""The browser build's Chinese font: a subset of Debian's WenQuanYi Micro Hei (fonts-wqy-microhei)
made with fontTools' subsetter (python3-fonttools) at build time.

Covered: every character of the interface's translations, the lessons and the sample sentences
(assets/), the 3,755 characters of GB 2312 level 1 (the common ones: decoded from their GB 2312 codes,
no list kept here), CJK punctuation and full-width forms. Characters outside it are drawn as U+XXXX,
as the desktop draws characters no installed font has.

usage: make_fonts.py ASSETS_DIR FONT.ttc OUT.ttf
"""
import pathlib
import sys

from fontTools import subset


def characters(assets: pathlib.Path) -> set:
    chars = set()
    for path in sorted(assets.rglob("*.json")):
        chars.update(path.read_text(encoding="utf-8"))
    for high in range(0xB0, 0xD8):  # GB 2312 level 1: rows 16-55
        for low in range(0xA1, 0xFF):
            try:
                chars.add(bytes([high, low]).decode("gb2312"))
            except UnicodeDecodeError:
                pass  # row 55 ends at 0xF9
    chars.update(chr(c) for c in range(0x3000, 0x3040))  # CJK symbols and punctuation
    chars.update(chr(c) for c in range(0xFF00, 0xFFF0))  # half- and full-width forms
    return {c for c in chars if ord(c) >= 0x2E80}  # Latin and symbols come from the Latin font


def main() -> int:
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    assets, font, out = pathlib.Path(sys.argv[1]), sys.argv[2], pathlib.Path(sys.argv[3])
    options = subset.Options()
    options.font_number = 0
    options.layout_features = ["*"]
    options.hinting = False  # stb_truetype does not hint; smaller
    loaded = subset.load_font(font, options)
    subsetter = subset.Subsetter(options)
    subsetter.populate(text="".join(sorted(characters(assets))))
    subsetter.subset(loaded)
    tmp = out.with_suffix(".tmp")
    subset.save_font(loaded, str(tmp), options)
    tmp.replace(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
