#include "tls_connect.hpp"

#include <fmt/format.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>

#include "loco/core/error.hpp"
#include "loco/fetch/blocking_io.hpp"

namespace loco::fetch {
namespace ssl = boost::asio::ssl;

ssl::context tls_client_context(const std::string& ca_file) {
  ssl::context context(ssl::context::tls_client);
  context.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                      ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  boost::system::error_code ec;
  if (ca_file.empty())
    context.set_default_verify_paths(ec);
  else
    context.load_verify_file(ca_file, ec);
  if (ec)
    throw Error(
        ErrorCategory::config,
        fmt::format("the CA certificates {}: {}",
                    ca_file.empty() ? "of the system's store" : "of " + ca_file, ec.message()));
  context.set_verify_mode(ssl::verify_peer);
  return context;
}

boost::beast::error_code tls_handshake_within(boost::asio::io_context& io, TlsStream& stream,
                                              const std::string& host,
                                              std::chrono::milliseconds timeout, std::string& why) {
  // SNI names a host, never an address (RFC 6066); the certificate is checked against either.
  boost::system::error_code not_address;
  boost::asio::ip::make_address(host, not_address);
  if (not_address && !SSL_set_tlsext_host_name(stream.native_handle(), host.c_str())) {
    why = "setting the TLS server name";
    return {static_cast<int>(::ERR_get_error()), boost::asio::error::get_ssl_category()};
  }
  // OpenSSL's reason for a certificate it refuses ("self-signed certificate", "hostname
  // mismatch"): the handshake's own error says only "certificate verify failed".
  std::string refused;
  stream.set_verify_callback([&refused, &host, check = ssl::host_name_verification(host)](
                                 bool preverified, ssl::verify_context& context) mutable {
    const bool ok = check(preverified, context);
    if (ok || !refused.empty()) return ok;
    // A chain OpenSSL accepted and the host check refused leaves no error in the context.
    const int error = X509_STORE_CTX_get_error(context.native_handle());
    refused = error == X509_V_OK ? fmt::format("not a certificate for {}", host)
                                 : X509_verify_cert_error_string(error);
    return ok;
  });
  boost::beast::get_lowest_layer(stream).expires_after(timeout);
  const boost::beast::error_code ec =
      run_one(io, [&](auto done) { stream.async_handshake(ssl::stream_base::client, done); });
  // The callback holds `refused`, which this frame owns: a renegotiation checks without it.
  stream.set_verify_callback(ssl::host_name_verification(host));
  if (ec)
    why = refused.empty() ? "the TLS handshake"
                          : fmt::format(
                                "the TLS handshake: the certificate is refused ({}; "
                                "a mirror with its own CA: --peer.data-ca-file)",
                                refused);
  return ec;
}

}  // namespace loco::fetch
