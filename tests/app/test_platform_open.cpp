// test_platform_open.cpp — the folder-picking seam (app/core/platform_open.h) as the desktop sees it, and
// the sizes the browser's Checkpoint window says (its limit, a refused folder's total).
#include <doctest/doctest.h>

#include <cstdint>

#include "core/platform_open.h"

using namespace attnscope::gui;

TEST_CASE("platform open: the desktop types its folders; the browser's limit is half of 4 GiB and tests can lower it") {
  CHECK_FALSE(folders_are_picked());
  pick_checkpoint_folder();  // nothing to open on the desktop, and nothing breaks
  CHECK(folder_copy().name.empty());
  const uint64_t gib = uint64_t(1) << 30;
  CHECK(picked_folder_limit() == 2 * gib);
  // GPT-2 small's float32 weights (124,439,808 parameters × 4 bytes) fit under it.
  CHECK(uint64_t(124439808) * 4 < picked_folder_limit());
  set_picked_folder_limit(20000);
  CHECK(picked_folder_limit() == 20000);
  set_picked_folder_limit(0);  // back to the page's own
  CHECK(picked_folder_limit() == 2 * gib);
}

TEST_CASE("platform open: sizes in the units the window says them") {
  CHECK(byte_size_text(0) == "0 bytes");
  CHECK(byte_size_text(1023) == "1023 bytes");
  CHECK(byte_size_text(20000) == "19.5 KiB");
  CHECK(byte_size_text(497764352.0) == "474.7 MiB");
  CHECK(byte_size_text(2150.0 * (1 << 20)) == "2.10 GiB");
  CHECK(byte_size_text(double(uint64_t(2) << 30)) == "2.00 GiB");
}
