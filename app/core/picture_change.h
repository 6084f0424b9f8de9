// picture_change.h — whether a frame would draw the picture already on screen.
//
// In the browser each frame the page draws into costs the browser a composite of the whole canvas (without a
// GPU, SwiftShader in the browser's GPU process: about 40 ms of a core a frame, docs/web.md "Frames while
// training"), and a frame that draws nothing leaves the last picture on screen. So the window (window_main.cpp)
// feeds this, each frame, everything the picture is made of — the framebuffer's size, the clear colour, the
// textures' upload count, and every draw list's vertices, indices and commands — and draws only when
// finish() says it changed. Compared byte for byte with the last frame's bytes, not hashed: "unchanged"
// means the same bytes, so a frame left undrawn is exactly the picture it would have drawn.
//
//   PictureChange change;
//   change.add(&size, sizeof size); change.add(vertices, bytes); ...
//   if (change.finish()) draw();
#pragma once
#include <cstddef>
#include <type_traits>
#include <vector>

namespace attnscope::gui {

class PictureChange {
 public:
  // This frame's next bytes (in the same order every frame).
  void add(const void* data, std::size_t bytes);
  template <class T>
  void add_value(const T& value) {
    static_assert(std::is_trivially_copyable_v<T> &&
                      (std::is_arithmetic_v<T> || std::has_unique_object_representations_v<T>),
                  "add_value takes values without padding bytes (add a struct's fields one by one)");
    add(&value, sizeof value);
  }
  // True when this frame's bytes differ from the last finished frame's (always for the first frame); then
  // starts the next frame.
  bool finish();

 private:
  std::vector<unsigned char> last_;  // the last finished frame's bytes; rewritten from the first difference
  std::size_t at_ = 0;               // bytes of this frame so far
  bool differs_ = false;             // this frame's bytes so far differ from last_'s
  bool known_ = false;               // last_ holds a finished frame (not before the first)
};

}  // namespace attnscope::gui
