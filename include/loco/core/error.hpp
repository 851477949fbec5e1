#pragma once
// The one error type of loco. Library code throws loco::Error for anything the caller can act on
// (a bad config value, a corrupt file, a peer that misbehaved); broken invariants use
// LOCO_ASSERT (assert.hpp) instead. See docs/ERRORS.md.

#include <stdexcept>
#include <string>
#include <string_view>

namespace loco {

enum class ErrorCategory {
  invalid_argument,  // a caller passed a value outside the documented range
  config,            // a config file or command-line option is wrong
  io,                // the operating system refused a file or socket operation
  format,            // bytes from outside (file, message) are malformed
  crypto,            // authentication or decryption failed
  protocol,          // a peer or the tracker broke the protocol
  network,           // a connection failed, timed out or was closed
  resource,          // a limit was reached (size cap, memory budget)
};

std::string_view to_string(ErrorCategory category) noexcept;

class Error : public std::runtime_error {
 public:
  // `message` says what went wrong and, where there is one, what the user can do about it.
  Error(ErrorCategory category, const std::string& message);

  ErrorCategory category() const noexcept { return category_; }
  // The message without the category in front (what() has both), for adding context:
  // Error(e.category(), "--option: " + e.message()).
  const std::string& message() const noexcept { return message_; }

 private:
  ErrorCategory category_;
  std::string message_;
};

}  // namespace loco
