#include "loco/fetch/http_get.hpp"

#include <fmt/format.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/error.hpp>
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
#include "tls_connect.hpp"

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

HttpSource parse_http_source(std::string_view url, std::string_view ca_file) {
  const auto fail = [&](const char* why) {
    throw Error(ErrorCategory::config, fmt::format("data source '{}': {}", url, why));
  };
  HttpSource s;
  s.tls = url.starts_with("https://");
  if (!s.tls && !url.starts_with("http://")) fail("not an http:// or https:// URL");
  if (s.tls) s.ca_file = std::string(ca_file);
  const std::string_view rest = url.substr(s.tls ? 8 : 7);
  const std::size_t slash = rest.find('/');
  const std::string_view authority = rest.substr(0, slash);
  s.url = std::string(url);
  s.path = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  if (!s.path.ends_with('/')) s.path += '/';
  if (!s.url.ends_with('/')) s.url += '/';
  const std::size_t colon = authority.rfind(':');
  s.host = std::string(authority.substr(0, colon));
  s.port = colon == std::string_view::npos ? (s.tls ? "443" : "80")
                                           : std::string(authority.substr(colon + 1));
  unsigned port = 0;
  const auto [end, ec] = std::from_chars(s.port.data(), s.port.data() + s.port.size(), port);
  if (s.host.empty() || ec != std::errc{} || end != s.port.data() + s.port.size() || port == 0 ||
      port > 65535)
    fail("needs http[s]://host[:port][/path]");
  if (s.path.find_first_of("?#%") != std::string::npos || s.path.find("/../") != std::string::npos)
    fail("its path may not hold '?', '#', '%' or '..'");
  return s;
}

namespace {

// The request and its response over a connected `stream` (TCP or TLS): every check of http_get.
template <class Stream>
void exchange(asio::io_context& io, Stream& stream, const HttpSource& source,
              const std::string& name, Want want, const BodySink& sink,
              const HttpGetLimits& limits) {
  beast::error_code ec;
  const auto step = [&](const char* what) {
    if (ec) broke(source, name, fmt::format("{}: {}", what, ec.message()));
  };
  auto& tcp_layer = beast::get_lowest_layer(stream);
  http::request<http::empty_body> request{http::verb::get, source.path + name, 11};
  request.set(http::field::host, source.host);
  request.set(http::field::user_agent, "loco-peer");
  if (want.offset > 0) request.set(http::field::range, fmt::format("bytes={}-", want.offset));
  tcp_layer.expires_after(limits.io_timeout);
  ec = run_one(io, [&](auto done) { http::async_write(stream, request, done); });
  step("sending the request");

  beast::flat_buffer buffer;
  http::response_parser<http::buffer_body> parser;
  parser.header_limit(limits.max_header_bytes);
  parser.body_limit(want.total);  // no body past the whole file, chunked or not
  tcp_layer.expires_after(limits.io_timeout);
  ec = run_one(io, [&](auto done) { http::async_read_header(stream, buffer, parser, done); });
  if (ec == http::error::header_limit) refuse(source, name, "sends a header over the limit");
  // Beast refuses a Content-Length over the body limit as it reads the header.
  if (ec == http::error::body_limit)
    refuse(source, name, fmt::format("announces more than the file's {} bytes", want.total));
  step("reading the response");
  const std::uint64_t from = check_header(source, name, parser, want);
  const std::uint64_t most = want.total - from;
  std::uint64_t got = 0;
  RateFloor rate(limits);

  std::vector<char> chunk(kChunkBytes);
  while (!parser.is_done()) {
    parser.get().body().data = chunk.data();
    parser.get().body().size = chunk.size();
    tcp_layer.expires_after(limits.io_timeout);
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
    // stream_truncated: a TLS connection closed without its close_notify, mid-body.
    if (ec == http::error::partial_message || ec == http::error::end_of_stream ||
        ec == asio::ssl::error::stream_truncated)
      broke(source, name, fmt::format("the body ended after {} of {} bytes", got, most));
    step("reading the body");
  }
  if (want.exact && got != most)
    broke(source, name, fmt::format("the body ended after {} of {} bytes", got, most));
  // No TLS close_notify: the body is whole and checked by length; the connection just ends.
  beast::error_code ignored;
  tcp_layer.socket().shutdown(tcp::socket::shutdown_both, ignored);
}

}  // namespace

void http_get(const HttpSource& source, const std::string& name, Want want, const BodySink& sink,
              const HttpGetLimits& limits) {
  asio::io_context io;
  const char* failed = "";
  const auto connect = [&](beast::tcp_stream& stream) {
    const beast::error_code ec =
        connect_within(io, stream, source.host, source.port, limits.io_timeout, failed);
    if (ec) broke(source, name, fmt::format("{}: {}", failed, ec.message()));
  };
  if (!source.tls) {
    beast::tcp_stream stream(io);
    connect(stream);
    exchange(io, stream, source, name, want, sink, limits);
    return;
  }
  asio::ssl::context context = tls_client_context(source.ca_file);
  TlsStream stream(io, context);
  connect(beast::get_lowest_layer(stream));
  std::string why;
  const beast::error_code ec =
      tls_handshake_within(io, stream, source.host, limits.io_timeout, why);
  if (ec) broke(source, name, fmt::format("{}: {}", why, ec.message()));
  exchange(io, stream, source, name, want, sink, limits);
}

}  // namespace loco::fetch
