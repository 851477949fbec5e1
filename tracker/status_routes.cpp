#include "tracker/status_routes.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <exception>
#include <string>
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

HttpResponse model(unsigned version, ModelGate* models) {
  const ModelGate::Answer answer =
      models ? models->take(ModelGate::Clock::now()) : ModelGate::Answer{};
  if (answer.model) {
    HttpResponse file =
        make_response(http::status::ok, version, "application/octet-stream", answer.model->bytes);
    file.set(http::field::content_disposition,
             "attachment; filename=\"" + answer.model->filename + "\"");
    return file;
  }
  if (answer.retry_after > ModelGate::Clock::duration::zero()) {
    HttpResponse busy =
        make_response(http::status::service_unavailable, version, "text/plain; charset=utf-8",
                      "the model was just handed out: try again shortly\n");
    busy.set(http::field::retry_after,
             std::to_string(std::chrono::ceil<std::chrono::seconds>(answer.retry_after).count()));
    return busy;
  }
  return make_response(http::status::not_found, version, "text/plain; charset=utf-8",
                       "no model yet: the tracker holds no custody copy of the run's state\n");
}

HttpResponse route(std::string_view path, unsigned version, StatusRenderer& renderer,
                   ModelGate* models) {
  if (path == "/") {
    HttpResponse page = make_response(http::status::ok, version, "text/html; charset=utf-8",
                                      std::string(kStatusPageHtml));
    page.set("Content-Security-Policy", kPagePolicy);
    return page;
  }
  if (path != "/status" && path != "/metrics" && path != "/model.safetensors") {
    return make_response(http::status::not_found, version, "text/plain; charset=utf-8",
                         "not found: try /, /status, /metrics or /model.safetensors\n");
  }
  try {
    if (path == "/model.safetensors") return model(version, models);
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

HttpResponse respond(const http::request_header<>& request, StatusRenderer& renderer,
                     ModelGate* models) {
  const unsigned version = request.version();
  if (request.method() != http::verb::get && request.method() != http::verb::head) {
    HttpResponse refusal = error_response(http::status::method_not_allowed, version);
    refusal.set(http::field::allow, "GET, HEAD");
    return refusal;
  }
  const std::string_view target(request.target().data(), request.target().size());
  HttpResponse response = route(target.substr(0, target.find('?')), version, renderer, models);
  if (request.method() == http::verb::head) {
    const std::size_t length = response.body().size();
    response.body().clear();
    response.content_length(length);  // the length a GET would have had
  }
  return response;
}

bool is_download(const HttpResponse& response) {
  return response.find(http::field::content_disposition) != response.end();
}

HttpResponse error_response(http::status code, unsigned version) {
  return make_response(code, version, "text/plain; charset=utf-8",
                       std::string(http::obsolete_reason(code)) + "\n");
}

}  // namespace loco::tracker
