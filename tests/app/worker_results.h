// worker_results.h — how the worker tests (tests/app/) read a ComputeWorker's answer.
#pragma once
#include <doctest/doctest.h>

#include <optional>
#include <utility>

#include "core/compute_worker.h"

namespace attnscope::test {

// The newest result after the worker went idle: for a checkpoint, the one with its head statistics.
inline gui::ComputeResult settled(gui::ComputeWorker& worker, const gui::ModelSource& source) {
  worker.submit(Scene{}, source);
  worker.wait_until_idle();
  std::optional<gui::ComputeResult> r = worker.take_result();
  REQUIRE(r.has_value());
  return std::move(*r);
}

}  // namespace attnscope::test
