#pragma once
// The TLS side of fetch/http_get.hpp: a client context that verifies the server's certificate
// (against the system's CA store or a given CA file) and a handshake, with a deadline, that sends
// the host as SNI and checks the certificate names it.

#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <chrono>
#include <string>

namespace loco::fetch {

using TlsStream = boost::asio::ssl::stream<boost::beast::tcp_stream>;

// A TLS client context (TLS 1.2 or later) that trusts the CA certificates of `ca_file` (PEM), or
// the system's store when it is empty. Throws Error(config) for a CA file that cannot be loaded.
boost::asio::ssl::context tls_client_context(const std::string& ca_file);

// The handshake of `stream` (already connected) with `host` within `timeout`. On a failure
// returns its error and sets `why` to what went wrong, the certificate's fault when it was one
// ("certificate verify failed: self-signed certificate").
boost::beast::error_code tls_handshake_within(boost::asio::io_context& io, TlsStream& stream,
                                              const std::string& host,
                                              std::chrono::milliseconds timeout, std::string& why);

}  // namespace loco::fetch
