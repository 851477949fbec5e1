#include "tracker/status_routes.hpp"

#include <gtest/gtest.h>

#include <memory>
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
  return respond(request, renderer).response;
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

// The model link: 404 until there is a copy, then the file's header with a place among the
// downloads (the body is written from the lease); 503 with the client's place in line while every
// place is taken; HEAD gives the length and takes no place.
TEST(StatusRoutes, TheModelIsADownloadWithAPlaceOrAPlaceInLine) {
  StatusRenderer renderer([] { return test::sample_status(); }, {});
  http::request_header<> request;
  request.method(http::verb::get);
  request.target("/model.safetensors");
  request.version(11);
  EXPECT_EQ(respond(request, renderer).response.result(), http::status::not_found) << "no source";

  std::shared_ptr<const ModelDownload> held;
  ModelGate gate([&] { return held; },
                 DownloadLimits{.max_downloads = 1, .hold = std::chrono::seconds(30)});
  const Reply none = respond(request, renderer, &gate, "10.0.0.1");
  EXPECT_EQ(none.response.result(), http::status::not_found);
  EXPECT_NE(none.response.body().find("no custody copy"), std::string::npos);
  EXPECT_FALSE(none.download);

  held = std::make_shared<const ModelDownload>(ModelDownload{.round = 60,
                                                             .filename = "run-round-60.safetensors",
                                                             .bytes = "file bytes",
                                                             .file_hash = "f17e"});
  Reply file = respond(request, renderer, &gate, "10.0.0.1");
  EXPECT_EQ(file.response.result(), http::status::ok);
  EXPECT_EQ(file.response.body(), "") << "written from the lease";
  EXPECT_EQ(file.response[http::field::content_length], "10");
  EXPECT_EQ(file.response[http::field::content_type], "application/octet-stream");
  EXPECT_EQ(file.response[http::field::content_disposition],
            "attachment; filename=\"run-round-60.safetensors\"");
  EXPECT_EQ(file.response[http::field::etag], "\"f17e\"");
  ASSERT_TRUE(file.download);
  EXPECT_EQ(file.download.model().bytes, "file bytes");

  const Reply again = respond(request, renderer, &gate, "10.0.0.1");
  EXPECT_EQ(again.response.result(), http::status::service_unavailable);
  EXPECT_NE(again.response.body().find("one download at a time per address"), std::string::npos);
  const Reply busy = respond(request, renderer, &gate, "10.0.0.2");
  EXPECT_EQ(busy.response.result(), http::status::service_unavailable);
  EXPECT_EQ(busy.response[http::field::retry_after], "10");
  EXPECT_NE(busy.response.body().find("number 1 in line; ask again within 30 s"), std::string::npos)
      << busy.response.body();
  EXPECT_FALSE(busy.download);

  request.method(http::verb::head);
  const Reply head = respond(request, renderer, &gate, "10.0.0.3");
  EXPECT_EQ(head.response.result(), http::status::ok);
  EXPECT_EQ(head.response[http::field::content_length], "10");
  EXPECT_EQ(head.response[http::field::etag], "\"f17e\"");
  EXPECT_FALSE(head.download) << "HEAD takes no place";

  request.method(http::verb::get);
  file.download.reset();
  EXPECT_EQ(respond(request, renderer, &gate, "10.0.0.3").response.result(),
            http::status::service_unavailable)
      << "the freed place is 10.0.0.2's, first in line";
  EXPECT_TRUE(respond(request, renderer, &gate, "10.0.0.2").download);
}

}  // namespace
}  // namespace loco::tracker
