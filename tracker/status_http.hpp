#pragma once
// The tracker's HTTP status server, on its own port: GET / (the status page), /status (JSON),
// /metrics (Prometheus), /model.safetensors (the run's model) and /dataset/<name> (the dataset's
// files, dataset_files.hpp); status_routes.hpp says what each
// answers.
//
// It faces the public internet, so everything a client can make it hold is bounded: request
// headers (431 past the limit), no request body (413), the time to send a request or take a
// response, the requests per keep-alive connection, and the number of open connections, in all
// and from one address (an IPv6 /64; a connection past its address's cap is closed at once, and one
// past the total cap closes the oldest of the address holding the most, so clients holding
// connections open cannot take the page from everyone else), and so is the work it asks of
// the tracker (the status is rendered at most once per status_max_age; the model file is shared
// by every download, and written to a few clients at once, each above a floor rate:
// model_download.hpp). It runs on the tracker's
// io_context, which must be run by one thread: handlers never block, and log a failure once rather
// than throw.

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <unordered_set>

#include "tracker/status_routes.hpp"

namespace loco::tracker {

struct StatusHttpLimits {
  std::size_t max_connections = 64;
  std::size_t max_connections_per_address = 8;  // a browser opens at most 6 per host
  std::uint32_t max_header_bytes = 8 * 1024;
  // To read one request (from its first byte or, on a kept-alive connection, from the last
  // response) and to write one response.
  std::chrono::milliseconds io_timeout = std::chrono::seconds(10);
  unsigned max_requests_per_connection = 100;
  // /status and /metrics are rendered at most once per this, however often they are asked for.
  std::chrono::milliseconds status_max_age = std::chrono::seconds(1);
  // The model file's places and floor rate (model_download.hpp); the floor rate and grace apply to
  // the dataset's files too, of which at most max_dataset_downloads are written at once.
  DownloadLimits download{};
  std::size_t max_dataset_downloads = 16;
};

class StatusHttpServer : public std::enable_shared_from_this<StatusHttpServer> {
 public:
  // Binds and listens on `endpoint` (port 0: any); throws Error(io) when it cannot. Without a
  // `model` source, /model.safetensors is 404; without a `dataset`, /dataset/ is.
  static std::shared_ptr<StatusHttpServer> create(
      boost::asio::io_context& io, const boost::asio::ip::tcp::endpoint& endpoint,
      StatusSource status, StatusHttpLimits limits = {}, ModelSource model = {},
      std::shared_ptr<const DatasetFiles> dataset = nullptr);
  ~StatusHttpServer();
  StatusHttpServer(const StatusHttpServer&) = delete;
  StatusHttpServer& operator=(const StatusHttpServer&) = delete;

  // Starts accepting. Call once.
  void start();
  // Stops accepting and closes every open connection; the io_context then finishes their
  // handlers. Call from the io_context's thread. Harmless twice.
  void stop();

  boost::asio::ip::tcp::endpoint local_endpoint() const { return endpoint_; }
  // Open connections, for tests and the log.
  std::size_t connections() const { return sessions_.size(); }

 private:
  class Session;

  StatusHttpServer(boost::asio::io_context& io, const boost::asio::ip::tcp::endpoint& endpoint,
                   StatusSource status, StatusHttpLimits limits, ModelSource model,
                   std::shared_ptr<const DatasetFiles> dataset);
  void accept();
  void on_accept(const boost::system::error_code& error, boost::asio::ip::tcp::socket socket);
  // Every connection is taken: closes the oldest of the addresses holding the most (a model
  // download last), so that a new client is served. Holding the page then costs an attacker a new
  // connection per visitor, an address with few connections loses one only when every address
  // holds as few, and a flood from many addresses does not end the downloads under way.
  void evict_a_session();

  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer retry_timer_;  // after a failed accept (e.g. out of descriptors)
  boost::asio::ip::tcp::endpoint endpoint_;
  StatusHttpLimits limits_;
  StatusRenderer renderer_;
  ModelGate models_;
  DatasetServe dataset_;  // its downloads' places outlive no session: sessions_ end first
  std::unordered_set<Session*> sessions_;          // each removes itself when it ends
  std::map<std::string, std::size_t> per_source_;  // open connections by net::source_of
  std::uint64_t next_serial_ = 0;                  // of the next session
  bool at_cap_logged_ = false;  // a full server (or source) is logged once, not per connection
  bool stopped_ = false;
};

}  // namespace loco::tracker
