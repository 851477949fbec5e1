#pragma once
// What the status server answers, from the request's method and target alone (no socket, so tests
// call it directly): GET or HEAD of / (the status page), /status (JSON) and /metrics (Prometheus);
// 404 for any other path, 405 for any other method.

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/string_body.hpp>

#include "tracker/status_renderer.hpp"

namespace loco::tracker {

using HttpResponse = boost::beast::http::response<boost::beast::http::string_body>;

// The response to a request that was read whole. A status source that throws gives 500 (logged).
HttpResponse respond(const boost::beast::http::request_header<>& request, StatusRenderer& renderer);

// A short plain-text response for a request that could not be read (400, 413, 431).
HttpResponse error_response(boost::beast::http::status code, unsigned version);

}  // namespace loco::tracker
