#include "loco/fetch/http_get.hpp"

#include <fmt/format.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <charconv>
#include <vector>

#include "loco/core/error.hpp"
#include "loco/fetch/blocking_io.hpp"

namespace loco::fetch {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr std::size_t kChunkBytes = std::size_t{64} << 10;

[[noreturn]] void refuse(const HttpSource& source, const std::string& name,
                         const std::string& why) {
  throw Error(ErrorCategory::format, fmt::format("{}{}: {}", source.url, name, why));
}

[[noreturn]] void broke(const HttpSource& source, const std::string& name, const std::string& why) {
  throw Error(ErrorCategory::network, fmt::format("{}{}: {}", source.url, name, why));
}

// "bytes <first>-<last>/<total>", strictly.
bool content_range_is(std::string_view header, std::uint64_t first, std::uint64_t last,
                      std::uint64_t total) {
  return header == fmt::format("bytes {}-{}/{}", first, last, total);
}

// The response's header against what was asked: returns where its body starts in the file.
std::uint64_t check_header(const HttpSource& source, const std::string& name,
                           const http::response_parser<http::buffer_body>& parser, Want want) {
  const auto& header = parser.get();
  const auto type = header[http::field::content_type];
  if (type.substr(0, 9) == "text/html")
    refuse(source, name, "serves an HTML page, not the file (an error page or a portal?)");
  const auto length = parser.content_length();
  if (header.result() == http::status::partial_content && want.exact && want.offset > 0) {
    const auto range = header[http::field::content_range];
    if (!content_range_is(std::string_view(range.data(), range.size()), want.offset, want.total - 1,
                          want.total))
      refuse(source, name,
             fmt::format("answers the range from byte {} with '{}'", want.offset,
                         std::string_view(range.data(), range.size())));
    if (length && *length != want.total - want.offset)
      refuse(source, name,
             fmt::format("sends {} bytes for a range of {}", *length, want.total - want.offset));
    return want.offset;
  }
  if (header.result() != http::status::ok)
    refuse(source, name,
           fmt::format("answers {} {}", header.result_int(),
                       std::string_view(header.reason().data(), header.reason().size())));
  if (length && (want.exact ? *length != want.total : *length > want.total))
    refuse(source, name,
           fmt::format("is {} bytes, {} {}", *length, want.exact ? "expected" : "at most",
                       want.total));
  return 0;
}

// The minimum-rate rule (HttpGetLimits::min_bytes_per_s): counts a body's bytes per window.
class RateFloor {
 public:
  explicit RateFloor(const HttpGetLimits& limits)
      : window_(limits.rate_window),
        floor_(limits.min_bytes_per_s * static_cast<std::uint64_t>(limits.rate_window.count()) /
               1000),
        start_(Clock::now()) {}

  // `n` more bytes arrived; false when a whole window passed with fewer than the floor's bytes.
  bool received(std::uint64_t n) {
    bytes_ += n;
    const auto now = Clock::now();
    if (now - start_ < window_) return true;
    if (bytes_ < floor_) return false;
    start_ = now;
    bytes_ = 0;
    return true;
  }
  std::uint64_t floor() const { return floor_; }

 private:
  using Clock = std::chrono::steady_clock;
  std::chrono::milliseconds window_;
  std::uint64_t floor_;
  Clock::time_point start_;
  std::uint64_t bytes_ = 0;
};

}  // namespace

HttpSource parse_http_source(std::string_view url) {
  const auto fail = [&](const char* why) {
    throw Error(ErrorCategory::config, fmt::format("data source '{}': {}", url, why));
  };
  if (url.starts_with("https://"))
    fail(
        "HTTPS is not supported yet: give an http:// mirror (every byte is checked against the "
        "manifest's BLAKE2b, so plain HTTP cannot feed a peer wrong data)");
  if (!url.starts_with("http://")) fail("not an http:// URL");
  const std::string_view rest = url.substr(7);
  const std::size_t slash = rest.find('/');
  const std::string_view authority = rest.substr(0, slash);
  HttpSource s;
  s.url = std::string(url);
  s.path = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  if (!s.path.ends_with('/')) s.path += '/';
  if (!s.url.ends_with('/')) s.url += '/';
  const std::size_t colon = authority.rfind(':');
  s.host = std::string(authority.substr(0, colon));
  s.port = colon == std::string_view::npos ? "80" : std::string(authority.substr(colon + 1));
  unsigned port = 0;
  const auto [end, ec] = std::from_chars(s.port.data(), s.port.data() + s.port.size(), port);
  if (s.host.empty() || ec != std::errc{} || end != s.port.data() + s.port.size() || port == 0 ||
      port > 65535)
    fail("needs http://host[:port][/path]");
  if (s.path.find_first_of("?#%") != std::string::npos || s.path.find("/../") != std::string::npos)
    fail("its path may not hold '?', '#', '%' or '..'");
  return s;
}

void http_get(const HttpSource& source, const std::string& name, Want want, const BodySink& sink,
              const HttpGetLimits& limits) {
  asio::io_context io;
  beast::error_code ec;
  const auto step = [&](const char* what) {
    if (ec) broke(source, name, fmt::format("{}: {}", what, ec.message()));
  };
  beast::tcp_stream stream(io);
  const char* failed = "";
  ec = connect_within(io, stream, source.host, source.port, limits.io_timeout, failed);
  step(failed);

  http::request<http::empty_body> request{http::verb::get, source.path + name, 11};
  request.set(http::field::host, source.host);
  request.set(http::field::user_agent, "loco-peer");
  if (want.offset > 0) request.set(http::field::range, fmt::format("bytes={}-", want.offset));
  stream.expires_after(limits.io_timeout);
  ec = run_one(io, [&](auto done) { http::async_write(stream, request, done); });
  step("sending the request");

  beast::flat_buffer buffer;
  http::response_parser<http::buffer_body> parser;
  parser.header_limit(limits.max_header_bytes);
  parser.body_limit(want.total);  // no body past the whole file, chunked or not
  stream.expires_after(limits.io_timeout);
  ec = run_one(io, [&](auto done) { http::async_read_header(stream, buffer, parser, done); });
  if (ec == http::error::header_limit) refuse(source, name, "sends a header over the limit");
  step("reading the response");
  const std::uint64_t from = check_header(source, name, parser, want);
  const std::uint64_t most = want.total - from;
  std::uint64_t got = 0;
  RateFloor rate(limits);

  std::vector<char> chunk(kChunkBytes);
  while (!parser.is_done()) {
    parser.get().body().data = chunk.data();
    parser.get().body().size = chunk.size();
    stream.expires_after(limits.io_timeout);
    // read_some: the bytes as they come (a sink that sees them, a rate that counts them), not
    // once the chunk is full.
    ec = run_one(io, [&](auto done) { http::async_read_some(stream, buffer, parser, done); });
    // The bytes that came before an error are kept: a resumed download starts after them.
    const std::size_t n = chunk.size() - parser.get().body().size;
    if (got + n > most)
      refuse(source, name, fmt::format("sends more than the {} bytes asked for", most));
    got += n;
    if (n > 0) sink(from + got - n, std::span<const char>(chunk.data(), n));
    if (!rate.received(n))
      broke(source, name,
            fmt::format("slower than the minimum rate: fewer than {} bytes in {} ms (after {} of "
                        "{} bytes)",
                        rate.floor(), limits.rate_window.count(), got, most));
    if (ec == http::error::need_buffer) ec = {};
    if (ec == http::error::body_limit)
      refuse(source, name, fmt::format("sends more than the file's {} bytes", want.total));
    if (ec == http::error::partial_message || ec == http::error::end_of_stream)
      broke(source, name, fmt::format("the body ended after {} of {} bytes", got, most));
    step("reading the body");
  }
  if (want.exact && got != most)
    broke(source, name, fmt::format("the body ended after {} of {} bytes", got, most));
  beast::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
}

}  // namespace loco::fetch
