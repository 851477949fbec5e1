#include "loco/core/error.hpp"

namespace loco {

std::string_view to_string(ErrorCategory category) noexcept {
  switch (category) {
    case ErrorCategory::invalid_argument: return "invalid argument";
    case ErrorCategory::config: return "config";
    case ErrorCategory::io: return "io";
    case ErrorCategory::format: return "format";
    case ErrorCategory::crypto: return "crypto";
    case ErrorCategory::protocol: return "protocol";
    case ErrorCategory::network: return "network";
    case ErrorCategory::resource: return "resource";
  }
  return "unknown";
}

Error::Error(ErrorCategory category, const std::string& message)
    : std::runtime_error(std::string(to_string(category)) + " error: " + message),
      category_(category),
      message_(message) {}

}  // namespace loco
