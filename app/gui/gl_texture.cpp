#include "gui/gl_texture.h"

#include <GL/gl.h>

#include <cstring>
#include <utility>

namespace attnscope::gui {
namespace {
uint64_t changes = 0;  // texture_changes() (only the UI thread touches textures)
}  // namespace

uint64_t texture_changes() { return changes; }

GlTexture::~GlTexture() { release(); }

GlTexture::GlTexture(GlTexture&& other) noexcept
    : id_(std::exchange(other.id_, 0u)), width_(other.width_), height_(other.height_),
      uploaded_(std::move(other.uploaded_)) {}

GlTexture& GlTexture::operator=(GlTexture&& other) noexcept {
  if (this != &other) {
    release();
    id_ = std::exchange(other.id_, 0u);
    width_ = other.width_;
    height_ = other.height_;
    uploaded_ = std::move(other.uploaded_);
  }
  return *this;
}

void GlTexture::release() {
  if (id_ != 0) {
    GLuint id = id_;
    glDeleteTextures(1, &id);
    id_ = 0;
    ++changes;
  }
  uploaded_.reset();
  width_ = height_ = 0;
}

bool GlTexture::update(int width, int height, const std::vector<Rgba>& pixels) {
  if (uploaded_ && *uploaded_ == pixels && id_ != 0 && width == width_ && height == height_) return false;
  return update(width, height, std::make_shared<const std::vector<Rgba>>(pixels));
}

bool GlTexture::update(int width, int height, std::shared_ptr<const std::vector<Rgba>> shared) {
  const std::vector<Rgba>& pixels = *shared;
  const bool same_size = id_ != 0 && width == width_ && height == height_;
  if (same_size && uploaded_ &&
      (uploaded_ == shared || (pixels.size() == uploaded_->size() &&
                               std::memcmp(pixels.data(), uploaded_->data(), pixels.size() * sizeof(Rgba)) == 0))) {
    uploaded_ = std::move(shared);  // the same pixels; keep the newer owner so the older can go
    return false;
  }
  if (id_ == 0) {
    GLuint id = 0;
    glGenTextures(1, &id);
    id_ = id;
  }
  glBindTexture(GL_TEXTURE_2D, id_);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
  glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
  static_assert(sizeof(Rgba) == 4, "Rgba must be 4 packed bytes to upload as GL_RGBA");
  if (same_size)
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
  else
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, width, height, 0, GL_RGBA, GL_UNSIGNED_BYTE, pixels.data());
  width_ = width;
  height_ = height;
  uploaded_ = std::move(shared);
  ++changes;
  return true;
}

std::vector<unsigned char> read_back_buffer(int width, int height) {
  std::vector<unsigned char> rows(size_t(width) * size_t(height) * 4);
  glFinish();
  glReadBuffer(GL_BACK);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, rows.data());
  // OpenGL's rows start at the bottom; flip to top-down.
  const size_t stride = size_t(width) * 4;
  std::vector<unsigned char> tmp(stride);
  for (int y = 0; y < height / 2; ++y) {
    unsigned char* a = rows.data() + size_t(y) * stride;
    unsigned char* b = rows.data() + size_t(height - 1 - y) * stride;
    std::memcpy(tmp.data(), a, stride);
    std::memcpy(a, b, stride);
    std::memcpy(b, tmp.data(), stride);
  }
  // The framebuffer's alpha is meaningless for a screenshot; make it opaque.
  for (size_t i = 3; i < rows.size(); i += 4) rows[i] = 255;
  return rows;
}

void gl_finish() { glFinish(); }

}  // namespace attnscope::gui
