#include "loco/net/link_settings.hpp"

#include <fmt/format.h>

#include "loco/core/error.hpp"

namespace loco::net {

void validate(const LinkSettings& settings) {
  const auto fail = [](const std::string& message) {
    throw Error(ErrorCategory::config, "link settings: " + message);
  };
  for (const BitRate rate : {settings.upload, settings.download}) {
    if (rate != kUnlimited && (rate < kMinBitRate || rate > kMaxBitRate)) {
      fail(fmt::format("bandwidth {} bit/s is outside 1kbit to 1000Gbit", rate));
    }
  }
  if (settings.latency < Duration{0} || settings.latency > kMaxLatency) {
    fail("latency " + format_duration(settings.latency) + " is outside 0 to " +
         format_duration(kMaxLatency));
  }
  if (settings.jitter < Duration{0} || settings.jitter > settings.latency) {
    fail("jitter " + format_duration(settings.jitter) + " must be between 0 and the latency (" +
         format_duration(settings.latency) +
         "): a chunk cannot arrive before it was sent; raise link.latency or lower link.jitter");
  }
  for (const auto& at : {settings.faults.drop_at, settings.faults.stall_at}) {
    if (at && (*at < Duration{0} || *at > kMaxFaultTime)) {
      fail("fault time " + format_duration(*at) + " is outside 0 to " +
           format_duration(kMaxFaultTime));
    }
  }
}

}  // namespace loco::net
