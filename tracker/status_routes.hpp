#pragma once
// What the status server answers, from the request's method and target alone (no socket, so tests
// call it directly): GET or HEAD of / (the status page), /status (JSON), /metrics (Prometheus) and
// /model.safetensors (the newest custody copy's model, model_download.hpp: 404 while there is
// none, 503 with Retry-After and the client's place in line while every download place is taken);
// 404 for any other path, 405 for any other method.

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/string_body.hpp>

#include "tracker/model_download.hpp"
#include "tracker/status_renderer.hpp"

namespace loco::tracker {

using HttpResponse = boost::beast::http::response<boost::beast::http::string_body>;

struct Reply {
  // For a download, its header only (with the model's length): the body is download.model().
  HttpResponse response;
  ModelGate::Lease download;  // a place among the downloads, held until the body is written
};

// The reply to a request that was read whole, from a client at `address` (net::source_of). A
// status or model source that throws gives 500 (logged). Without `models`, /model.safetensors is
// 404. HEAD of the model takes no place.
Reply respond(const boost::beast::http::request_header<>& request, StatusRenderer& renderer,
              ModelGate* models = nullptr, const std::string& address = "");

// A short plain-text response for a request that could not be read (400, 413, 431).
HttpResponse error_response(boost::beast::http::status code, unsigned version);

}  // namespace loco::tracker
