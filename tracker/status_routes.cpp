#include "tracker/status_routes.hpp"

#include <spdlog/spdlog.h>

#include <exception>
#include <string_view>

#include "status_page_html.hpp"  // generated from status_page.html at build time
#include "tracker/status_metrics.hpp"

namespace loco::tracker {
namespace http = boost::beast::http;
namespace {

// The page runs only its own inline script and style and talks only to this server.
constexpr const char* kPagePolicy =
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'";

HttpResponse make_response(http::status code, unsigned version, const char* content_type,
                           std::string body) {
  HttpResponse response{code, version};
  response.set(http::field::server, "loco-tracker");
  response.set(http::field::content_type, content_type);
  response.set(http::field::cache_control, "no-store");
  response.set("X-Content-Type-Options", "nosniff");
  response.body() = std::move(body);
  response.prepare_payload();
  return response;
}

HttpResponse route(std::string_view path, unsigned version, StatusRenderer& renderer) {
  if (path == "/") {
    HttpResponse page = make_response(http::status::ok, version, "text/html; charset=utf-8",
                                      std::string(kStatusPageHtml));
    page.set("Content-Security-Policy", kPagePolicy);
    return page;
  }
  if (path != "/status" && path != "/metrics") {
    return make_response(http::status::not_found, version, "text/plain; charset=utf-8",
                         "not found: try /, /status or /metrics\n");
  }
  try {
    if (path == "/status") {
      return make_response(http::status::ok, version, "application/json", renderer.json());
    }
    return make_response(http::status::ok, version, kMetricsContentType, renderer.metrics());
  } catch (const std::exception& e) {
    spdlog::error("status server: reading the tracker's status for {} failed: {}", path, e.what());
    return error_response(http::status::internal_server_error, version);
  }
}

}  // namespace

HttpResponse respond(const http::request_header<>& request, StatusRenderer& renderer) {
  const unsigned version = request.version();
  if (request.method() != http::verb::get && request.method() != http::verb::head) {
    HttpResponse refusal = error_response(http::status::method_not_allowed, version);
    refusal.set(http::field::allow, "GET, HEAD");
    return refusal;
  }
  const std::string_view target(request.target().data(), request.target().size());
  HttpResponse response = route(target.substr(0, target.find('?')), version, renderer);
  if (request.method() == http::verb::head) {
    const std::size_t length = response.body().size();
    response.body().clear();
    response.content_length(length);  // the length a GET would have had
  }
  return response;
}

HttpResponse error_response(http::status code, unsigned version) {
  return make_response(code, version, "text/plain; charset=utf-8",
                       std::string(http::obsolete_reason(code)) + "\n");
}

}  // namespace loco::tracker
