// gl_texture.h — one RGBA8 OpenGL texture with nearest filtering, for heatmaps drawn with
// ImGui::Image: a heatmap cell stays a crisp square at any zoom, and thousands of cells cost one
// quad instead of thousands of widgets.
#pragma once
#include <imgui.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "attnscope/figure/colormap.h"

namespace attnscope::gui {

class GlTexture {
 public:
  GlTexture() = default;
  ~GlTexture();
  GlTexture(GlTexture&& other) noexcept;
  GlTexture& operator=(GlTexture&& other) noexcept;
  GlTexture(const GlTexture&) = delete;
  GlTexture& operator=(const GlTexture&) = delete;

  // Uploads `pixels` [height, width] row-major unless they equal the last upload. Returns true when
  // it uploaded (so callers and the benchmark can see that only changed textures are re-sent).
  // The texture keeps a reference to the pixels it holds (no copy): they must not change.
  bool update(int width, int height, std::shared_ptr<const std::vector<Rgba>> pixels);
  bool update(int width, int height, const std::vector<Rgba>& pixels);  // copies (small textures)
  // Lets go of the pixels kept for the comparison (the texture stays as it is).
  void forget_pixels() { uploaded_.reset(); }
  ImTextureID id() const { return reinterpret_cast<ImTextureID>(static_cast<intptr_t>(id_)); }
  bool valid() const { return id_ != 0; }
  int width() const { return width_; }
  int height() const { return height_; }

 private:
  void release();
  unsigned id_ = 0;
  int width_ = 0, height_ = 0;
  std::shared_ptr<const std::vector<Rgba>> uploaded_;  // what the texture holds
};

// How many times this window's GlTextures have changed a texture's pixels or freed one (a picture drawn with
// the same count and the same draw lists is the same picture: window_main.cpp, core/picture_change.h).
uint64_t texture_changes();

// Reads the back buffer [height, width] as RGBA rows from the top (y down, like a PNG).
std::vector<unsigned char> read_back_buffer(int width, int height);

// Waits until the GPU has finished every command (timing in benchmarks).
void gl_finish();

}  // namespace attnscope::gui
