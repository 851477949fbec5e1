#pragma once
// One HTTP/1.1 GET of a file from a dataset's source (a mirror, the tracker's HTTP server), its
// body streamed to the caller a chunk at a time, with a Range to resume a partial file. http://
// over Boost.Beast's TCP stream, https:// over its TLS stream (OpenSSL): the server's certificate
// must chain to a trusted CA (the system's store, or the source's ca_file) and name the URL's host,
// which is also sent as SNI. The same checks run on both paths.
//
// The server is not trusted: its headers are capped (header_limit), a body larger than the caller
// expects is refused before a byte of it is taken (Content-Length) or as soon as it passes the
// expectation (chunked), an HTML page is refused (a portal or an error page served as 200), and
// each read and write has a deadline. The caller checks the bytes themselves (the manifest's
// BLAKE2b).

#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

namespace loco::fetch {

// A source's base URL, e.g. "https://mirror.example/datasets/wiki/": files are fetched from its
// path followed by their name.
struct HttpSource {
  std::string url;  // as given, for the log
  std::string host;
  std::string port;
  std::string path;  // starts and ends with '/'
  bool tls = false;  // https://
  // https://: a PEM file of the CA certificates the server's must chain to (a mirror with its own
  // CA); empty: the system's store (Debian's ca-certificates).
  std::string ca_file;
};

// Throws Error(config) for anything but http[s]://host[:port][/path]. The port defaults to 80 or
// 443; `ca_file` is kept for an https:// source.
HttpSource parse_http_source(std::string_view url, std::string_view ca_file = {});

struct HttpGetLimits {
  std::chrono::milliseconds io_timeout = std::chrono::seconds(30);  // per read or write
  std::uint32_t max_header_bytes = 16 * 1024;
  // The minimum rate of a body: fewer than min_bytes_per_s × rate_window bytes in any window of
  // rate_window is a source cut off as too slow. A source that trickles (a byte every 29 s) meets
  // every read's deadline; this rule is what ends it. 0: no minimum.
  std::uint64_t min_bytes_per_s = 4096;
  std::chrono::milliseconds rate_window = std::chrono::seconds(30);
};

// The body's bytes as they arrive, in order, with the file offset of the first (`at` is 0 at the
// first chunk when the server ignored the Range and sends the whole file).
using BodySink = std::function<void(std::uint64_t at, std::span<const char>)>;

// The bytes asked for: [offset, total) of a file of `total` bytes (a Range when offset > 0), or,
// when `exact` is false, a file of at most `total` bytes (offset 0: a manifest, whose size is
// not known before it is read).
struct Want {
  std::uint64_t offset = 0;
  std::uint64_t total = 0;
  bool exact = true;
};

// GETs `name` from `source`. A 206 must cover exactly the range asked for; a 200 must be the whole
// file (the caller then starts over). Throws Error(network) for a connection that fails, times out,
// ends early (a truncated body) or is slower than limits.min_bytes_per_s, or a TLS handshake that
// fails (a certificate not trusted or not for the host: the message says why), Error(format) for a
// status other than 200/206, a wrong length or range, or an HTML page: each message says which.
void http_get(const HttpSource& source, const std::string& name, Want want, const BodySink& sink,
              const HttpGetLimits& limits = {});

}  // namespace loco::fetch
