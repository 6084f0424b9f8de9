// error.h — the one error type for user mistakes.
//
// Everything a user can get wrong (sizes, files, text, slider values) raises InputError with a
// message that says what was wrong, where, and what would be valid. The CLI prints it and exits 2;
// the GUI shows it in the window that caused it. Programmer mistakes are asserts, never this.
#pragma once
#include <atomic>
#include <exception>
#include <stdexcept>
#include <string>

namespace attnscope {

struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Throws InputError(message) when `ok` is false. Reads as a sentence at the call site:
//   require(heads > 0, "heads must be at least 1, got " + std::to_string(heads));
inline void require(bool ok, const std::string& message) {
  if (!ok) throw InputError(message);
}

// Raised at a checkpoint of a long computation when a newer request superseded it (the window's
// worker sets the flag; the command-line tools pass none). Not a user mistake: nothing to report.
struct Cancelled : std::exception {
  const char* what() const noexcept override { return "superseded by a newer scene"; }
};

// Throws Cancelled when *cancel is set (a null flag never cancels).
inline void check_cancel(const std::atomic<bool>* cancel) {
  if (cancel && cancel->load(std::memory_order_relaxed)) throw Cancelled();
}

}  // namespace attnscope
