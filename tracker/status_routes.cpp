#include "tracker/status_routes.hpp"

#include <fmt/format.h>
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

HttpResponse text(http::status code, unsigned version, std::string body) {
  return make_response(code, version, "text/plain; charset=utf-8", std::move(body));
}

// The model file's header: its body, the model's bytes, is written from the lease.
HttpResponse file_header(unsigned version, const ModelDownload& model) {
  HttpResponse file = make_response(http::status::ok, version, "application/octet-stream", {});
  file.set(http::field::content_disposition, "attachment; filename=\"" + model.filename + "\"");
  if (!model.file_hash.empty()) file.set(http::field::etag, "\"" + model.file_hash + "\"");
  file.content_length(model.bytes.size());
  return file;
}

HttpResponse busy(unsigned version, const ModelGate::Answer& answer, const DownloadLimits& limits) {
  const auto hold = std::chrono::ceil<std::chrono::seconds>(limits.hold).count();
  std::string why =
      answer.already
          ? "your address is downloading the model now: one download at a time per address\n"
      : answer.position > 0
          ? fmt::format(
                "the model is being downloaded by {} clients, the most at once: you are "
                "number {} in line; ask again within {} s to keep your place\n",
                answer.downloads, answer.position, hold)
          : fmt::format(
                "the model is being downloaded by {} clients, the most at once, and the "
                "line is full: try again later\n",
                answer.downloads);
  HttpResponse refusal = text(http::status::service_unavailable, version, std::move(why));
  refusal.set(http::field::retry_after,
              std::to_string(std::chrono::ceil<std::chrono::seconds>(answer.retry_after).count()));
  return refusal;
}

Reply model(unsigned version, ModelGate* models, const std::string& address, bool head) {
  const auto none = [version] {
    return Reply{.response = text(http::status::not_found, version,
                                  "no model yet: the tracker holds no custody copy of the run's "
                                  "state\n"),
                 .download = {}};
  };
  if (models == nullptr) return none();
  if (head) {
    const auto held = models->peek();
    return held ? Reply{.response = file_header(version, *held), .download = {}} : none();
  }
  ModelGate::Answer answer = models->take(address, ModelGate::Clock::now());
  if (answer.lease) {
    HttpResponse header = file_header(version, answer.lease.model());
    return Reply{.response = std::move(header), .download = std::move(answer.lease)};
  }
  if (answer.retry_after > ModelGate::Clock::duration::zero())
    return Reply{.response = busy(version, answer, models->limits()), .download = {}};
  return none();
}

// A file of the dataset: its header (the body is written from reply.file), or why not.
Reply dataset_file(const http::request_header<>& request, std::string_view name,
                   DatasetServe* dataset, bool head) {
  const unsigned version = request.version();
  const ServedFile* file =
      dataset != nullptr && dataset->files != nullptr ? dataset->files->find(name) : nullptr;
  if (file == nullptr)
    return Reply{.response = text(http::status::not_found, version,
                                  dataset != nullptr && dataset->files != nullptr
                                      ? "not a file of this tracker's dataset\n"
                                      : "this tracker serves no dataset\n"),
                 .download = {}};
  const auto range_header = request[http::field::range];
  const RangeAsk ask =
      parse_range(std::string_view(range_header.data(), range_header.size()), file->bytes);
  if (ask.kind == RangeAsk::Kind::unsatisfiable) {
    HttpResponse refusal = error_response(http::status::range_not_satisfiable, version);
    refusal.set(http::field::content_range, fmt::format("bytes */{}", file->bytes));
    return Reply{.response = std::move(refusal), .download = {}};
  }
  const std::uint64_t first = ask.kind == RangeAsk::Kind::part ? ask.first : 0;
  const std::uint64_t end = ask.kind == RangeAsk::Kind::part ? ask.end : file->bytes;
  if (!head && dataset->active >= dataset->max_downloads) {
    HttpResponse busy = text(http::status::service_unavailable, version,
                             fmt::format("{} dataset downloads under way, the most at once: try "
                                         "again in a few seconds\n",
                                         dataset->active));
    busy.set(http::field::retry_after, "5");
    return Reply{.response = std::move(busy), .download = {}};
  }
  HttpResponse header = make_response(
      ask.kind == RangeAsk::Kind::part ? http::status::partial_content : http::status::ok, version,
      file->text ? "text/plain; charset=utf-8" : "application/octet-stream", {});
  header.set(http::field::accept_ranges, "bytes");
  if (ask.kind == RangeAsk::Kind::part)
    header.set(http::field::content_range,
               fmt::format("bytes {}-{}/{}", first, end - 1, file->bytes));
  header.content_length(end - first);
  if (head) return Reply{.response = std::move(header), .download = {}};
  return Reply{
      .response = std::move(header),
      .download = {},
      .file = FileBody{
          .path = file->path, .first = first, .end = end, .place = FilePlace(&dataset->active)}};
}

Reply route(std::string_view path, unsigned version, StatusRenderer& renderer, ModelGate* models,
            const std::string& address, bool head) {
  if (path == "/") {
    HttpResponse page = make_response(http::status::ok, version, "text/html; charset=utf-8",
                                      std::string(kStatusPageHtml));
    page.set("Content-Security-Policy", kPagePolicy);
    return Reply{.response = std::move(page), .download = {}};
  }
  if (path != "/status" && path != "/metrics" && path != "/model.safetensors") {
    return Reply{
        .response = text(
            http::status::not_found, version,
            "not found: try /, /status, /metrics, /model.safetensors or /dataset/manifest.txt\n"),
        .download = {}};
  }
  try {
    if (path == "/model.safetensors") return model(version, models, address, head);
    if (path == "/status")
      return Reply{
          .response = make_response(http::status::ok, version, "application/json", renderer.json()),
          .download = {}};
    return Reply{.response = make_response(http::status::ok, version, kMetricsContentType,
                                           renderer.metrics()),
                 .download = {}};
  } catch (const std::exception& e) {
    spdlog::error("status server: reading the tracker's status for {} failed: {}", path, e.what());
    return Reply{.response = error_response(http::status::internal_server_error, version),
                 .download = {}};
  }
}

}  // namespace

Reply respond(const http::request_header<>& request, StatusRenderer& renderer, ModelGate* models,
              const std::string& address, DatasetServe* dataset) {
  const unsigned version = request.version();
  if (request.method() != http::verb::get && request.method() != http::verb::head) {
    HttpResponse refusal = error_response(http::status::method_not_allowed, version);
    refusal.set(http::field::allow, "GET, HEAD");
    return Reply{.response = std::move(refusal), .download = {}};
  }
  const bool head = request.method() == http::verb::head;
  const std::string_view target(request.target().data(), request.target().size());
  constexpr std::string_view kDataset = "/dataset/";
  if (target.starts_with(kDataset)) {
    Reply reply = dataset_file(request, target.substr(kDataset.size()), dataset, head);
    if (head) reply.response.body().clear();
    return reply;
  }
  Reply reply = route(target.substr(0, target.find('?')), version, renderer, models, address, head);
  // The Content-Length a GET would have had stays: make_response set it before.
  if (head) reply.response.body().clear();
  return reply;
}

HttpResponse error_response(http::status code, unsigned version) {
  return make_response(code, version, "text/plain; charset=utf-8",
                       std::string(http::obsolete_reason(code)) + "\n");
}

}  // namespace loco::tracker
