#include "loco/link/settings.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "loco/core/error.hpp"

namespace loco::link {

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
  if (!(settings.loss >= 0 && settings.loss <= kMaxLoss)) {
    fail(fmt::format("loss {} is outside 0 to {}", settings.loss, kMaxLoss));
  }
  if (settings.stream_window && *settings.stream_window < kMinStreamWindow) {
    fail(
        fmt::format("stream window {} bytes is below the minimum of {} bytes (64KiB, one paced "
                    "piece); raise link.stream-window or leave it unset for no window",
                    *settings.stream_window, kMinStreamWindow));
  }
  for (const auto& at : {settings.faults.drop_at, settings.faults.stall_at}) {
    if (at && (*at < Duration{0} || *at > kMaxFaultTime)) {
      fail("fault time " + format_duration(*at) + " is outside 0 to " +
           format_duration(kMaxFaultTime));
    }
  }
}

Duration retransmit_timeout(const LinkSettings& settings) {
  return std::max<Duration>(kMinRetransmitTimeout, 2 * settings.latency + 4 * settings.jitter);
}

std::string describe(const LinkSettings& settings) {
  std::string text = "upload " + format_bandwidth(settings.upload) + ", download " +
                     format_bandwidth(settings.download) + ", latency " +
                     format_duration(settings.latency);
  if (settings.jitter > Duration{0}) text += " +/- " + format_duration(settings.jitter);
  if (settings.loss > 0) text += fmt::format(", loss {:g}", settings.loss);
  if (settings.stream_window) {
    text += fmt::format(", stream window {} bytes", *settings.stream_window);
  }
  const LinkFaults& f = settings.faults;
  if (f.drop_after_bytes) text += fmt::format(", drop after {} bytes", *f.drop_after_bytes);
  if (f.drop_at) text += ", drop at " + format_duration(*f.drop_at);
  if (f.stall_at) text += ", stall at " + format_duration(*f.stall_at);
  return text;
}

}  // namespace loco::link
