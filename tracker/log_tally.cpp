#include "log_tally.hpp"

#include <spdlog/spdlog.h>

#include "loco/core/time.hpp"

namespace loco::tracker {

LogTally::LogTally(boost::asio::io_context& io, net::RefusalTally tally,
                   spdlog::level::level_enum level)
    : timer_(io), tally_(std::move(tally)), level_(level) {}

void LogTally::add(const std::string& source, std::string_view kind, const std::string& text) {
  if (tally_.add(steady_now(), source, kind)) spdlog::log(level_, "{}", text);
  arm();
}

void LogTally::flush() {
  stopped_ = true;
  timer_.cancel();
  for (const std::string& line : tally_.flush(steady_now())) spdlog::log(level_, "{}", line);
}

void LogTally::arm() {
  const TimePoint at = tally_.poll_timeout();
  if (armed_ || at == kNever || stopped_) return;
  armed_ = true;
  timer_.expires_at(to_steady(at));
  timer_.async_wait([this](const boost::system::error_code& error) {
    armed_ = false;
    if (error) return;
    for (const std::string& line : tally_.take_summary(steady_now()))
      spdlog::log(level_, "{}", line);
    arm();
  });
}

}  // namespace loco::tracker
