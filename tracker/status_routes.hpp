#pragma once
// What the status server answers, from the request's method and target alone (no socket, so tests
// call it directly): GET or HEAD of / (the status page), /status (JSON), /metrics (Prometheus),
// /dataset/<name> (the dataset's files, dataset_files.hpp) and /model.safetensors (the newest
// custody copy's model, model_download.hpp: 404 while there is none, 503 with Retry-After and the
// client's place in line while every download place is taken); 404 for any other path, 405 for any
// other method.

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <utility>

#include "tracker/dataset_files.hpp"
#include "tracker/model_download.hpp"
#include "tracker/status_renderer.hpp"

namespace loco::tracker {

using HttpResponse = boost::beast::http::response<boost::beast::http::string_body>;

// The dataset's files and the downloads of them under way (at most max_downloads at once).
struct DatasetServe {
  std::shared_ptr<const DatasetFiles> files;
  std::size_t max_downloads = 16;
  std::size_t active = 0;
};

// A place among a DatasetServe's downloads, given back when dropped. The DatasetServe outlives it.
class FilePlace {
 public:
  FilePlace() = default;
  explicit FilePlace(std::size_t* active) : active_(active) { ++*active_; }
  FilePlace(FilePlace&& other) noexcept : active_(std::exchange(other.active_, nullptr)) {}
  FilePlace& operator=(FilePlace&& other) noexcept {
    if (this != &other) {
      reset();
      active_ = std::exchange(other.active_, nullptr);
    }
    return *this;
  }
  FilePlace(const FilePlace&) = delete;
  FilePlace& operator=(const FilePlace&) = delete;
  ~FilePlace() { reset(); }
  void reset() {
    if (active_ != nullptr) --*std::exchange(active_, nullptr);
  }

 private:
  std::size_t* active_ = nullptr;
};

// Bytes [first, end) of a file, written after the response's header.
struct FileBody {
  std::filesystem::path path;
  std::uint64_t first = 0;
  std::uint64_t end = 0;
  FilePlace place;
};

struct Reply {
  // For a download, its header only (with the model's length): the body is download.model().
  HttpResponse response;
  ModelGate::Lease download;       // a place among the downloads, held until the body is written
  std::optional<FileBody> file{};  // a dataset file's bytes, the header's body
};

// The reply to a request that was read whole, from a client at `address` (net::source_of). A
// status or model source that throws gives 500 (logged). Without `models`, /model.safetensors is
// 404. HEAD of the model takes no place. /dataset/<name>: a file of `dataset` (dataset_files.hpp;
// 404 without one or for a name its manifest does not list, 206 for a Range, 416 for a Range past
// the end, 503 with Retry-After while max_downloads are under way).
Reply respond(const boost::beast::http::request_header<>& request, StatusRenderer& renderer,
              ModelGate* models = nullptr, const std::string& address = "",
              DatasetServe* dataset = nullptr);

// A short plain-text response for a request that could not be read (400, 413, 431).
HttpResponse error_response(boost::beast::http::status code, unsigned version);

}  // namespace loco::tracker
