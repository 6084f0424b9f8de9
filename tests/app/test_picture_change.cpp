// test_picture_change.cpp — the browser's "draw a frame only when its picture changed"
// (app/core/picture_change.h): any byte of any input changes it, the same bytes never do.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/picture_change.h"

using attnscope::gui::PictureChange;

namespace {
// One frame of parts, as the window feeds a frame's inputs; returns finish().
bool frame(PictureChange& c, const std::vector<std::string>& parts) {
  for (const std::string& p : parts) c.add(p.data(), p.size());
  return c.finish();
}
}  // namespace

TEST_CASE("picture change: the first frame draws, the same bytes again do not, any changed byte does") {
  PictureChange c;
  const std::vector<std::string> a = {"size 1280x720", std::string(4000, 'v'), "idx", "cmds"};
  CHECK(frame(c, a));
  CHECK_FALSE(frame(c, a));
  CHECK_FALSE(frame(c, a));
  // Every byte of every part, one at a time: each change is seen, and going back is a change too.
  for (size_t part = 0; part < a.size(); ++part) {
    for (size_t at = 0; at < a[part].size(); at += (a[part].size() > 64 ? 397 : 1)) {
      std::vector<std::string> b = a;
      b[part][at] = char(b[part][at] ^ 1);
      CHECK_MESSAGE(frame(c, b), "part ", part, " byte ", at);
      CHECK_FALSE(frame(c, b));
      CHECK(frame(c, a));
    }
  }
  CHECK_FALSE(frame(c, a));
}

TEST_CASE("picture change: a frame with more or fewer bytes, or the same bytes split differently") {
  PictureChange c;
  CHECK(frame(c, {"abc", "def"}));
  CHECK_FALSE(frame(c, {"abcd", "ef"}));  // the same bytes in the same order: the same picture
  CHECK(frame(c, {"abc", "defg"}));       // one byte more at the end
  CHECK(frame(c, {"abc", "def"}));        // one byte fewer
  CHECK_FALSE(frame(c, {"abc", "def", ""}));  // an empty part adds nothing
  CHECK(frame(c, {}));                    // nothing at all differs from something
  CHECK_FALSE(frame(c, {}));
  CHECK(frame(c, {"x"}));
  // A difference early on and the same tail: the tail is kept as this frame's, so the next frame compares right.
  CHECK(frame(c, {"y", std::string(100, 't')}));
  CHECK_FALSE(frame(c, {"y", std::string(100, 't')}));
  CHECK(frame(c, {"y", std::string(99, 't') + "u"}));
}

TEST_CASE("picture change: an empty first frame draws; add_value takes a value's bytes") {
  PictureChange e;
  CHECK(e.finish());
  CHECK_FALSE(e.finish());
  PictureChange c;
  const int32_t size[2] = {1280, 720};
  c.add_value(size);
  CHECK(c.finish());
  c.add_value(size);
  CHECK_FALSE(c.finish());
  const int32_t other[2] = {1280, 721};
  c.add_value(other);
  CHECK(c.finish());
  c.add_value(other);
  CHECK_FALSE(c.finish());
}
