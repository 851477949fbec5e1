#include "loco/net/tracker_link.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <spdlog/spdlog.h>

#include "loco/core/assert.hpp"
#include "loco/proto/message_type.hpp"

namespace loco::net {
namespace {

// The tracker sends one message at a time on one stream: at most one view (2 MiB) is partial.
constexpr std::uint64_t kMaxBufferedBytes = std::uint64_t{4} << 20;

// What the tracker may send a peer, and how large.
std::optional<std::uint64_t> tracker_message_limit(std::uint16_t type) {
  const auto info = proto::message_info(type);
  if (!info || info->route != proto::Route::tracker_to_peer) return std::nullopt;
  return info->max_bytes;
}

}  // namespace

struct TrackerLink::Private {};

std::shared_ptr<TrackerLink> TrackerLink::create(
    boost::asio::io_context& io, std::vector<boost::asio::ip::tcp::endpoint> trackers,
    ChannelSetup setup, proto::TrackerClient& client, OnEvent on_event) {
  return std::make_shared<TrackerLink>(Private{}, io, std::move(trackers), std::move(setup), client,
                                       std::move(on_event));
}

TrackerLink::TrackerLink(Private, boost::asio::io_context& io,
                         std::vector<boost::asio::ip::tcp::endpoint> trackers, ChannelSetup setup,
                         proto::TrackerClient& client, OnEvent on_event)
    : io_(io),
      trackers_(std::move(trackers)),
      setup_(std::move(setup)),
      client_(client),
      on_event_(std::move(on_event)),
      assembler_(tracker_message_limit, kMaxBufferedBytes),
      timer_(io),
      reconnect_(io),
      addresses_(trackers_.size()) {
  LOCO_ASSERT(!trackers_.empty(), "a tracker link needs an address");
}

void TrackerLink::start() {
  connect();
}

void TrackerLink::stop() {
  stopped_ = true;
  reconnect_.cancel();
  timer_.cancel();
  flush();
  if (bundle_) bundle_->close();
}

void TrackerLink::connect() {
  const std::weak_ptr<TrackerLink> weak = shared_from_this();
  assembler_ = MessageAssembler(tracker_message_limit, kMaxBufferedBytes);
  bundle_ = StreamBundle::connect(io_, trackers_[addresses_.current()], BundleConfig{}, setup_,
                                  BundleHandlers{
                                      .on_ready =
                                          [weak] {
                                            if (auto self = weak.lock()) self->on_ready();
                                          },
                                      .on_chunk =
                                          [weak](const BundleChunk& piece) {
                                            if (auto self = weak.lock()) self->on_piece(piece);
                                          },
                                      .on_closed =
                                          [weak](const Error* error) {
                                            if (auto self = weak.lock()) self->on_closed(error);
                                          },
                                  });
}

void TrackerLink::on_ready() {
  addresses_.connected();
  client_.on_connected(steady_now());
  drive();
}

void TrackerLink::on_piece(const BundleChunk& piece) {
  auto whole = assembler_.add(piece);  // throws for an oversized message: the bundle fails
  if (!whole) return;
  client_.on_message(steady_now(), whole->type, whole->bytes);
  drive();
}

void TrackerLink::on_closed(const Error* error) {
  const std::string why = error != nullptr ? error->what() : "the tracker closed the connection";
  using Progress = StreamBundle::Progress;
  const Progress progress = bundle_ != nullptr ? bundle_->progress() : Progress::connecting;
  // An attempt that failed before the connection was up: the client judges whether to give up
  // (tracker_client.hpp), and its owner may stop this link before it reconnects. A refusal after
  // the handshake (a full tracker) is told too, as a tracker that lives, and retried.
  if (bundle_ != nullptr && !bundle_->ready()) {
    using Failure = proto::ConnectFailure;
    const bool crypto = error != nullptr && error->category() == ErrorCategory::crypto;
    const Failure failure = progress == Progress::connecting      ? Failure::unreachable
                            : progress == Progress::authenticated ? Failure::turned_away
                            : crypto                              ? Failure::not_pinned
                            : bundle_->cut_by_peer()              ? Failure::cut_in_handshake
                                                                  : Failure::unanswered;
    client_.on_connect_failed(steady_now(), failure, error != nullptr ? error->message() : why);
    drive();
  }
  drop(why);
}

// Forgets the connection (dropping the bundle closes its sockets at once, which a frozen tracker
// needs: it would never answer a close frame) and, unless stopped, connects again later.
void TrackerLink::drop(const std::string& why) {
  bundle_.reset();
  client_.on_disconnect(steady_now());
  timer_.cancel();
  if (!stopped_) reconnect_later(why);
}

void TrackerLink::reconnect_later(const std::string& why) {
  // The next replica at once (almost); the same pause as one tracker's after a whole pass.
  const Duration wait = addresses_.next();
  spdlog::warn("tracker: {}; reconnecting to {} in {:.1f} s", why,
               fmt::streamed(trackers_[addresses_.current()]),
               std::chrono::duration<double>(wait).count());
  reconnect_.expires_after(std::chrono::duration_cast<std::chrono::steady_clock::duration>(wait));
  reconnect_.async_wait([weak = weak_from_this()](const boost::system::error_code& error) {
    auto self = weak.lock();
    if (error || !self || self->stopped_) return;
    self->connect();
  });
}

void TrackerLink::flush() {
  while (auto out = client_.poll_transmit()) {
    if (!connected()) continue;  // the client re-sends what matters when it joins again
    auto body = std::make_shared<std::vector<std::byte>>(std::move(out->body));
    bundle_->send(static_cast<std::uint16_t>(out->type), *body, [body] {});
  }
}

void TrackerLink::drive() {
  while (auto event = client_.poll_event()) {
    using Kind = proto::ClientEvent::Kind;
    on_event_(*event);
    if ((event->kind == Kind::tracker_lost || event->kind == Kind::tracker_error) && bundle_) {
      drop(event->text);
      return;
    }
  }
  flush();
  arm_timer();
}

void TrackerLink::arm_timer() {
  const TimePoint deadline = client_.poll_timeout();
  if (deadline == kNever || stopped_) return;
  timer_.expires_at(to_steady(deadline));
  timer_.async_wait([weak = weak_from_this()](const boost::system::error_code& error) {
    auto self = weak.lock();
    if (error || !self || self->stopped_) return;
    self->client_.on_timer(steady_now());
    self->drive();
  });
}

}  // namespace loco::net
