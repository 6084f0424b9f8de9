#include "core/picture_change.h"

#include <cstring>

namespace attnscope::gui {

void PictureChange::add(const void* data, std::size_t bytes) {
  if (bytes == 0) return;
  const auto* p = static_cast<const unsigned char*>(data);
  // While the frame equals the last one so far, last_ already holds these bytes: compare only.
  if (!differs_ && at_ + bytes <= last_.size() && std::memcmp(last_.data() + at_, p, bytes) == 0) {
    at_ += bytes;
    return;
  }
  differs_ = true;  // from here on last_ becomes this frame
  if (last_.size() < at_ + bytes) last_.resize(at_ + bytes);
  std::memcpy(last_.data() + at_, p, bytes);
  at_ += bytes;
}

bool PictureChange::finish() {
  const bool changed = differs_ || at_ != last_.size() || !known_;
  last_.resize(at_);
  at_ = 0;
  differs_ = false;
  known_ = true;
  return changed;
}

}  // namespace attnscope::gui
