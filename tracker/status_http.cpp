#include "tracker/status_http.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <boost/asio/write.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <fstream>
#include <optional>
#include <vector>

#include "loco/core/assert.hpp"
#include "loco/core/error.hpp"
#include "loco/net/source_budget.hpp"

namespace loco::tracker {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr auto kAcceptRetryDelay = std::chrono::milliseconds(100);
constexpr unsigned kHttp11 = 11;  // HTTP/1.1 in Beast's numbering, to answer unreadable requests
constexpr std::size_t kChunkBytes = std::size_t{64} << 10;  // of the model, per write
using Clock = std::chrono::steady_clock;

// The response owed to a request that could not be read, or nothing when the connection just
// ends (closed by the client, timed out, reset).
std::optional<http::status> refusal_for(const beast::error_code& error) {
  static const auto& parse_errors = http::make_error_code(http::error::end_of_stream).category();
  if (error.category() != parse_errors) return std::nullopt;  // a socket error or the timeout
  switch (static_cast<http::error>(error.value())) {
    case http::error::end_of_stream:
    case http::error::partial_message: return std::nullopt;
    case http::error::header_limit:
    case http::error::buffer_overflow: return http::status::request_header_fields_too_large;
    case http::error::body_limit:
    case http::error::unexpected_body: return http::status::payload_too_large;
    default: return http::status::bad_request;
  }
}

}  // namespace

// One HTTP connection: read a request, write its response, repeat while keep-alive allows; then a
// graceful close. One operation is outstanding at a time; handlers hold the session alive.
class StatusHttpServer::Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, std::string source, std::shared_ptr<StatusHttpServer> server)
      : stream_(std::move(socket)),
        source_(std::move(source)),
        server_(std::move(server)),
        buffer_(2 * server_->limits_.max_header_bytes),  // a header and the next one's start
        serial_(server_->next_serial_++) {
    beast::error_code ignored;
    client_ = fmt::format("{}", fmt::streamed(stream_.socket().remote_endpoint(ignored)));
    server_->sessions_.insert(this);
    ++server_->per_source_[source_];
  }
  ~Session() { leave_counts(); }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void start() { read_request(); }

  // Ends the session: its pending operation completes with an error and drops the last owner. Its
  // place is free at once.
  void close() {
    leave_counts();
    beast::error_code ignored;
    stream_.socket().close(ignored);
  }

  const std::string& source() const { return source_; }
  std::uint64_t serial() const { return serial_; }  // the order of arrival
  bool downloading() const { return static_cast<bool>(download_) || file_.has_value(); }

 private:
  void leave_counts() {
    if (!server_->sessions_.erase(this)) return;  // already left
    if (--server_->per_source_[source_] == 0) server_->per_source_.erase(source_);
  }

  void read_request() {
    parser_.emplace();
    parser_->header_limit(server_->limits_.max_header_bytes);
    parser_->body_limit(0);  // requests carry no body here
    stream_.expires_after(server_->limits_.io_timeout);
    begin_operation();
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](const beast::error_code& error, std::size_t) {
                       self->end_operation();
                       self->on_request(error);
                     });
  }

  void on_request(const beast::error_code& error) {
    if (!error) {
      ++requests_;
      const auto& request = parser_->get();
      Reply reply =
          respond(request, server_->renderer_, &server_->models_, source_, &server_->dataset_);
      response_ = std::move(reply.response);
      download_ = std::move(reply.download);
      file_ = std::move(reply.file);
      const bool keep_alive =
          request.keep_alive() && requests_ < server_->limits_.max_requests_per_connection;
      write_response(keep_alive);
      return;
    }
    const auto refusal = refusal_for(error);
    if (error != http::error::end_of_stream && error != asio::error::operation_aborted)
      spdlog::debug("status server: request from {}: {}", client_, error.message());
    if (!refusal) return;  // the socket closes as the session ends
    response_ = error_response(*refusal, kHttp11);
    write_response(/*keep_alive=*/false);
  }

  void write_response(bool keep_alive) {
    response_.keep_alive(keep_alive);
    stream_.expires_after(server_->limits_.io_timeout);
    body_start_ = Clock::now();
    begin_operation();
    http::async_write(
        stream_, response_,
        [self = shared_from_this(), keep_alive](const beast::error_code& error, std::size_t) {
          self->end_operation();
          if (error) {
            spdlog::debug("status server: response to {}: {}", self->client_, error.message());
          } else if (self->download_) {
            self->write_body(keep_alive);
          } else if (self->file_) {
            self->open_file(keep_alive);
          } else {
            self->next(keep_alive);
          }
        });
  }

  // The model's bytes after its header, a chunk at a time, each with a deadline: the download must
  // average the floor rate from its start (after the grace) and no chunk may take longer than the
  // grace. Below that it is cut off, and its place goes to the next client in line.
  void write_body(bool keep_alive) {
    const std::string& bytes = download_.model().bytes;
    if (sent_ == bytes.size()) {
      download_.reset();
      sent_ = 0;
      next(keep_alive);
      return;
    }
    const std::size_t n = std::min(kChunkBytes, bytes.size() - sent_);
    expire_at_floor(sent_ + n);
    begin_operation();
    asio::async_write(
        stream_, asio::buffer(bytes.data() + sent_, n),
        [self = shared_from_this(), keep_alive, n](const beast::error_code& error, std::size_t) {
          self->end_operation();
          if (error) return self->cut_off(error);
          self->sent_ += n;
          self->write_body(keep_alive);
        });
  }

  // A body's deadline for its first `bytes`: the floor rate's average from its start (after the
  // grace), and at most the grace from now.
  void expire_at_floor(std::uint64_t bytes) {
    const DownloadLimits& limits = server_->models_.limits();
    const auto average =
        body_start_ + limits.grace +
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
            static_cast<double>(bytes) / static_cast<double>(limits.floor_bytes_per_second)));
    stream_.expires_at(std::min<Clock::time_point>(average, Clock::now() + limits.grace));
  }

  void open_file(bool keep_alive) {
    file_stream_.open(file_->path, std::ios::binary);
    file_stream_.seekg(static_cast<std::streamoff>(file_->first));
    if (!file_stream_) {
      spdlog::warn("status server: cannot read the dataset file {}", file_->path.string());
      file_.reset();  // the session ends: the client sees a short body
      return;
    }
    sent_ = 0;
    write_file_body(keep_alive);
  }

  // A dataset file's bytes after its header, a chunk at a time, at the model's floor rate.
  void write_file_body(bool keep_alive) {
    const std::uint64_t length = file_->end - file_->first;
    if (sent_ == length) {
      file_stream_.close();
      file_.reset();
      sent_ = 0;
      next(keep_alive);
      return;
    }
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(kChunkBytes, length - sent_));
    file_chunk_.resize(kChunkBytes);
    file_stream_.read(file_chunk_.data(), static_cast<std::streamsize>(n));
    if (static_cast<std::size_t>(file_stream_.gcount()) != n) {
      spdlog::warn("status server: the dataset file {} ended early (changed on disk?)",
                   file_->path.string());
      file_.reset();
      return;
    }
    expire_at_floor(sent_ + n);
    begin_operation();
    asio::async_write(
        stream_, asio::buffer(file_chunk_.data(), n),
        [self = shared_from_this(), keep_alive, n](const beast::error_code& error, std::size_t) {
          self->end_operation();
          if (error) {
            spdlog::debug("status server: dataset download to {} ended at {} bytes: {}",
                          self->client_, self->sent_, error.message());
            self->file_.reset();
            return;
          }
          self->sent_ += n;
          self->write_file_body(keep_alive);
        });
  }

  void cut_off(const beast::error_code& error) {
    const std::size_t size = download_.model().bytes.size();
    if (error == beast::error::timeout) {
      const std::chrono::duration<double> took = Clock::now() - body_start_;
      spdlog::info(
          "status server: cut off the model download to {}: {} of {} bytes in {:.1f} s, below "
          "{} bytes a second",
          client_, sent_, size, took.count(), server_->models_.limits().floor_bytes_per_second);
    } else {
      spdlog::debug("status server: model download to {} ended at {} of {} bytes: {}", client_,
                    sent_, size, error.message());
    }
    download_.reset();  // the place is free at once; the session ends with this handler
  }

  void next(bool keep_alive) {
    if (keep_alive) {
      read_request();
    } else {
      close_gracefully();
    }
  }

  // Closing a socket with unread bytes resets the connection, which can destroy the response
  // before the client reads it (a refused request may still be arriving). So: shut down our
  // side, then read and drop whatever comes until the client closes or the timeout ends it.
  void close_gracefully() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.expires_after(server_->limits_.io_timeout);
    drain();
  }
  void drain() {
    begin_operation();
    stream_.async_read_some(
        asio::buffer(drain_buffer_),
        [self = shared_from_this()](const beast::error_code& error, std::size_t) {
          self->end_operation();
          if (!error) self->drain();
        });
  }

  void begin_operation() {
    LOCO_ASSERT(!operation_pending_, "one operation at a time on a status connection");
    operation_pending_ = true;
  }
  void end_operation() { operation_pending_ = false; }

  beast::tcp_stream stream_;
  std::string source_;  // net::source_of its address: its entry in per_source_
  std::shared_ptr<StatusHttpServer> server_;  // outlives its sessions
  std::string client_;                        // the client's address, for the log
  beast::flat_buffer buffer_;
  std::uint64_t serial_;
  std::optional<http::request_parser<http::empty_body>> parser_;  // a fresh one per request
  HttpResponse response_;
  ModelGate::Lease download_;     // while the model's bytes are written: dropped before server_
  std::optional<FileBody> file_;  // while a dataset file's bytes are written: its place
  std::ifstream file_stream_;
  std::vector<char> file_chunk_;
  std::uint64_t sent_ = 0;  // of the model's or the file's bytes
  Clock::time_point body_start_;
  std::array<char, 1024> drain_buffer_{};
  unsigned requests_ = 0;
  bool operation_pending_ = false;
};

std::shared_ptr<StatusHttpServer> StatusHttpServer::create(
    asio::io_context& io, const tcp::endpoint& endpoint, StatusSource status,
    StatusHttpLimits limits, ModelSource model, std::shared_ptr<const DatasetFiles> dataset) {
  return std::shared_ptr<StatusHttpServer>(new StatusHttpServer(
      io, endpoint, std::move(status), limits, std::move(model), std::move(dataset)));
}

StatusHttpServer::StatusHttpServer(asio::io_context& io, const tcp::endpoint& endpoint,
                                   StatusSource status, StatusHttpLimits limits, ModelSource model,
                                   std::shared_ptr<const DatasetFiles> dataset)
    : acceptor_(io),
      retry_timer_(io),
      limits_(limits),
      renderer_(std::move(status), limits.status_max_age),
      models_(std::move(model), limits.download),
      dataset_{.files = std::move(dataset), .max_downloads = limits.max_dataset_downloads} {
  boost::system::error_code error;
  acceptor_.open(endpoint.protocol(), error);
  if (!error) acceptor_.set_option(tcp::acceptor::reuse_address(true), error);
  if (!error) acceptor_.bind(endpoint, error);
  if (!error) acceptor_.listen(tcp::acceptor::max_listen_connections, error);
  if (!error) endpoint_ = acceptor_.local_endpoint(error);
  if (error)
    throw Error(ErrorCategory::io, fmt::format("status server: listening on {}: {}",
                                               fmt::streamed(endpoint), error.message()));
}

StatusHttpServer::~StatusHttpServer() = default;

void StatusHttpServer::start() {
  accept();
}

void StatusHttpServer::stop() {
  stopped_ = true;
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  retry_timer_.cancel();
  // Each leaves sessions_ as it is closed, and ends later.
  for (Session* session : std::vector<Session*>(sessions_.begin(), sessions_.end()))
    session->close();
}

void StatusHttpServer::evict_a_session() {
  std::size_t most = 0;
  for (const auto& [source, count] : per_source_) most = std::max(most, count);
  // Among the addresses holding the most (all of them, when a flood comes from many addresses
  // with one connection each), a download goes last: it holds a place others wait for, and a
  // slow one is cut off anyway. Then the oldest.
  const auto rank = [](const Session* s) { return std::pair(s->downloading(), s->serial()); };
  Session* victim = nullptr;
  for (Session* session : sessions_)
    if (per_source_.at(session->source()) == most && (!victim || rank(session) < rank(victim)))
      victim = session;
  if (victim == nullptr) return;
  spdlog::debug("status server: {} connections open: closing the oldest of the {} from {}",
                sessions_.size(), most, victim->source());
  victim->close();
}

void StatusHttpServer::accept() {
  acceptor_.async_accept(
      [self = shared_from_this()](const boost::system::error_code& error, tcp::socket socket) {
        self->on_accept(error, std::move(socket));
      });
}

void StatusHttpServer::on_accept(const boost::system::error_code& error, tcp::socket socket) {
  if (stopped_) return;
  if (error) {
    // Out of descriptors, say: retrying at once would spin, so wait a little.
    spdlog::warn("status server: accepting a connection: {}", error.message());
    retry_timer_.expires_after(kAcceptRetryDelay);
    retry_timer_.async_wait([self = shared_from_this()](const boost::system::error_code&) {
      if (!self->stopped_) self->accept();
    });
    return;
  }
  boost::system::error_code ignored;
  const tcp::endpoint remote = socket.remote_endpoint(ignored);
  std::string source = net::source_of(remote.address());
  const auto from_source = per_source_.find(source);
  const bool source_full = from_source != per_source_.end() &&
                           from_source->second >= limits_.max_connections_per_address;
  if (sessions_.size() >= limits_.max_connections && !source_full) evict_a_session();
  if (sessions_.size() >= limits_.max_connections || source_full) {
    if (!at_cap_logged_)
      spdlog::warn(
          "status server: {} connections open, {} from {}, the most allowed: closing new ones",
          sessions_.size(), source_full ? from_source->second : 0, source);
    at_cap_logged_ = true;
    socket.close(ignored);
  } else {
    at_cap_logged_ = false;
    std::make_shared<Session>(std::move(socket), std::move(source), shared_from_this())->start();
  }
  accept();
}

}  // namespace loco::tracker
