#include "tracker/status_routes.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

#include "sample_status.hpp"
#include "tracker/status_metrics.hpp"

namespace loco::tracker {
namespace {

namespace http = boost::beast::http;

HttpResponse ask(http::verb method, std::string_view target, StatusRenderer& renderer) {
  http::request_header<> request;
  request.method(method);
  request.target(boost::beast::string_view(target.data(), target.size()));
  request.version(11);
  return respond(request, renderer);
}

HttpResponse ask(http::verb method, std::string_view target) {
  StatusRenderer renderer([] { return test::sample_status(); }, {});
  return ask(method, target, renderer);
}

HttpResponse get(std::string_view target) {
  return ask(http::verb::get, target);
}

TEST(StatusRoutes, ServesThePageTheStatusAndTheMetrics) {
  const HttpResponse page = get("/");
  EXPECT_EQ(page.result(), http::status::ok);
  EXPECT_EQ(page[http::field::content_type], "text/html; charset=utf-8");
  EXPECT_NE(page.body().find("<svg id=\"loss-chart\""), std::string::npos);
  EXPECT_NE(page["Content-Security-Policy"].find("connect-src 'self'"), std::string_view::npos);

  const HttpResponse status = get("/status?pretty=1");  // a query string is ignored
  EXPECT_EQ(status.result(), http::status::ok);
  EXPECT_EQ(status[http::field::content_type], "application/json");
  EXPECT_TRUE(status.body().starts_with(R"({"run_id":"gpt-small-demo")")) << status.body();

  const HttpResponse metrics = get("/metrics");
  EXPECT_EQ(metrics.result(), http::status::ok);
  EXPECT_EQ(metrics[http::field::content_type], kMetricsContentType);
  EXPECT_NE(metrics.body().find("loco_tracker_members 3\n"), std::string::npos);

  for (const auto* response : {&page, &status, &metrics}) {
    EXPECT_EQ((*response)[http::field::cache_control], "no-store");
    EXPECT_EQ((*response)[http::field::content_length], std::to_string(response->body().size()));
  }
}

TEST(StatusRoutes, HeadGivesTheLengthWithoutTheBody) {
  const HttpResponse full = get("/status");
  const HttpResponse head = ask(http::verb::head, "/status");
  EXPECT_EQ(head.result(), http::status::ok);
  EXPECT_TRUE(head.body().empty());
  EXPECT_EQ(head[http::field::content_length], std::to_string(full.body().size()));
}

TEST(StatusRoutes, UnknownPathsAndMethodsAreRefused) {
  EXPECT_EQ(get("/status/").result(), http::status::not_found);
  EXPECT_EQ(get("/index.html").result(), http::status::not_found);
  EXPECT_EQ(get("").result(), http::status::not_found);
  for (const auto method : {http::verb::post, http::verb::put, http::verb::delete_,
                            http::verb::options, http::verb::connect}) {
    const HttpResponse refusal = ask(method, "/status");
    EXPECT_EQ(refusal.result(), http::status::method_not_allowed) << method;
    EXPECT_EQ(refusal[http::field::allow], "GET, HEAD");
  }
}

TEST(StatusRoutes, TheStatusIsReadOnlyForTheRoutesThatShowIt) {
  int calls = 0;
  StatusRenderer counting(
      [&] {
        ++calls;
        return proto::TrackerStatus{};
      },
      {});
  ask(http::verb::get, "/", counting);
  ask(http::verb::get, "/nothing", counting);
  ask(http::verb::post, "/status", counting);
  EXPECT_EQ(calls, 0);
  ask(http::verb::get, "/status", counting);
  ask(http::verb::get, "/metrics", counting);
  EXPECT_EQ(calls, 2);
}

TEST(StatusRoutes, AFailingStatusGives500) {
  StatusRenderer failing([]() -> proto::TrackerStatus { throw std::runtime_error("core gone"); },
                         {});
  EXPECT_EQ(ask(http::verb::get, "/metrics", failing).result(),
            http::status::internal_server_error);
}

}  // namespace
}  // namespace loco::tracker
