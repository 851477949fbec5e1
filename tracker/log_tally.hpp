#pragma once
// Log lines about peers, bounded per peer: a net::RefusalTally on the tracker's io_context. The
// first lines of a period about a peer go to the log in full, the rest are counted and summarised
// when the period ends, so no peer can make the tracker write more than a few lines per period
// about it, however fast it sends. Threads: the io_context's.

#include <spdlog/common.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <string>
#include <string_view>

#include "loco/net/refusal_tally.hpp"

namespace loco::tracker {

class LogTally {
 public:
  LogTally(boost::asio::io_context& io, net::RefusalTally tally, spdlog::level::level_enum level);

  // Logs `text` when it is among the first of its period about `source`; counts it under `kind`.
  void add(const std::string& source, std::string_view kind, const std::string& text);
  // Logs what is counted now and stops the timer (the service stops).
  void flush();

 private:
  void arm();

  boost::asio::steady_timer timer_;
  net::RefusalTally tally_;
  spdlog::level::level_enum level_;
  bool armed_ = false;
  bool stopped_ = false;
};

}  // namespace loco::tracker
