#include "loco/net/bundle_listener.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>

#include "loco/core/assert.hpp"

namespace loco::net {
namespace {

using boost::asio::ip::tcp;

}  // namespace

struct BundleListener::Private {};

std::shared_ptr<BundleListener> BundleListener::create(boost::asio::io_context& io,
                                                       const tcp::endpoint& endpoint,
                                                       BundleListenerConfig config,
                                                       OnBundle on_bundle) {
  LOCO_ASSERT(config.setup.identity != nullptr, "a listener needs an identity");
  validate(config.limits);
  tcp::acceptor acceptor(io);
  boost::system::error_code error;
  acceptor.open(endpoint.protocol(), error);
  if (!error) acceptor.set_option(tcp::acceptor::reuse_address(true), error);
  if (!error) acceptor.bind(endpoint, error);
  if (!error) acceptor.listen(tcp::acceptor::max_listen_connections, error);
  if (error)
    throw Error(ErrorCategory::io,
                fmt::format("listening on {}: {}", fmt::streamed(endpoint), error.message()));
  return std::make_shared<BundleListener>(Private{}, std::move(acceptor), std::move(config),
                                          std::move(on_bundle));
}

BundleListener::BundleListener(Private, tcp::acceptor acceptor, BundleListenerConfig config,
                               OnBundle on_bundle)
    : acceptor_(std::move(acceptor)),
      config_(std::move(config)),
      on_bundle_(std::move(on_bundle)),
      budget_(std::make_shared<SourceBudget>(config_.limits)),
      refusal_timer_(acceptor_.get_executor()),
      backoff_timer_(acceptor_.get_executor()) {
  config_.setup.config.handshake_timeout = config_.limits.handshake_timeout;
}

void BundleListener::start() {
  accept_next();
}

void BundleListener::stop() {
  stopped_ = true;
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  backoff_timer_.cancel();
  // Taken out first: a stream still in its handshake ends at once and calls back into us.
  const auto pending = std::move(pending_);
  pending_.clear();
  groups_.clear();
  for (const auto& [id, stream] : pending) stream.connection->close_without_waiting();
  refusal_timer_.cancel();
  for (const std::string& line : refusals_.flush(steady_now())) spdlog::warn("{}", line);
}

void BundleListener::accept_next() {
  acceptor_.async_accept(
      [self = shared_from_this()](const boost::system::error_code& error, tcp::socket socket) {
        if (self->stopped_) return;
        if (!error) {
          self->on_accepted(std::move(socket));
          self->accept_next();
          return;
        }
        // Out of file descriptors (or another failure that accepting again at once would repeat):
        // wait, rather than spin and log at full speed.
        self->note_refusal("any address", fmt::format("accept failed ({})", error.message()),
                           fmt::format("accepting a stream: {}; trying again in {} ms",
                                       error.message(), kAcceptBackoff.count() / 1'000'000));
        self->backoff_timer_.expires_after(kAcceptBackoff);
        self->backoff_timer_.async_wait([self](const boost::system::error_code& waited) {
          if (!waited && !self->stopped_) self->accept_next();
        });
      });
}

void BundleListener::on_accepted(tcp::socket socket) {
  boost::system::error_code gone;
  const tcp::endpoint remote = socket.remote_endpoint(gone);
  if (gone) return;  // already closed by its peer
  const std::string label = fmt::format("{}", fmt::streamed(remote));
  const std::string source = source_of(remote.address());
  std::optional<std::string> cap = budget_->over_cap(StreamPhase::handshake, {source});
  if (cap && budget_->pending_from(source) < config_.limits.max_pending_per_source) {
    evict_a_handshake();  // the table is full, not this source's share of it
    cap = budget_->over_cap(StreamPhase::handshake, {source});
  }
  if (cap) {
    note_refusal(source, "over a cap at accept",
                 fmt::format("refusing a stream from {}: already {}", label, *cap));
    return;  // the socket closes here, before any byte is read
  }
  const StreamId id = next_id_++;
  auto slot = std::make_shared<StreamSlot>(budget_, source);
  const std::weak_ptr<BundleListener> weak = weak_from_this();
  auto route = std::make_shared<StreamRoute>();
  route->before_adoption = ConnectionHandlers{
      .on_established =
          [weak, id] {
            if (auto self = weak.lock()) self->on_established(id);
          },
      .on_chunk =
          [weak, id](const secure::ChannelEvent& chunk) {
            if (auto self = weak.lock()) self->on_hello(id, chunk);
          },
      .on_closed =
          [weak, id, slot](const Error* error) {
            slot->release();  // the connection has ended: its place is free
            auto self = weak.lock();
            if (!self || !self->pending_.contains(id)) return;  // not a failure: we closed it
            if (error != nullptr)
              self->note_refusal(
                  slot->source(),
                  fmt::format("failed before its bundle ({})", to_string(error->category())),
                  fmt::format("closing a stream before its bundle was complete: {} [{}]",
                              error->what(), to_string(error->category())));
            self->close_group_of(id);
          },
  };
  const ChannelSetup& setup = config_.setup;
  auto channel = std::make_unique<secure::SecureChannel>(
      secure::Role::responder, *setup.identity, setup.config, setup.accept, label, steady_now(),
      secure::fresh_ephemeral_seed());
  PendingStream& stream = pending_[id];
  stream.route = route;
  stream.slot = slot;
  stream.connection =
      Connection::create(std::move(socket), std::move(channel), route_handlers(route),
                         config_.link ? config_.link->make_pacer(id) : nullptr);
  // Until its bundle is complete a stream may send only its hello: nothing larger is buffered.
  // Its failures (a flood of bad handshakes) are summarised with the refusals, not logged each.
  stream.connection->limit_incoming(kStreamHelloBytes, kStreamHelloBytes);
  stream.connection->set_quiet(true);
  stream.connection->set_send_window(config_.send_window_bytes);
  stream.deadline = std::make_unique<boost::asio::steady_timer>(acceptor_.get_executor());
  stream.deadline->expires_after(config_.limits.bundle_timeout);
  stream.deadline->async_wait([weak, id](const boost::system::error_code& error) {
    auto self = weak.lock();
    if (error || !self || !self->pending_.contains(id)) return;
    const PendingStream& late = self->pending_.at(id);
    self->note_refusal(late.slot->source(), "bundle not complete in time",
                       fmt::format("closing {}: its stream bundle was not complete within {} ms",
                                   late.connection->peer_name(),
                                   std::chrono::duration_cast<std::chrono::milliseconds>(
                                       self->config_.limits.bundle_timeout)
                                       .count()));
    self->close_group_of(id);
  });
  stream.connection->start();
}

void BundleListener::evict_a_handshake() {
  std::map<std::string, std::size_t> held;
  for (const auto& [id, stream] : pending_)
    if (stream.slot->phase() == StreamPhase::handshake) ++held[stream.slot->source()];
  const auto most = std::max_element(
      held.begin(), held.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  if (most == held.end()) return;
  const std::string source = most->first;      // copied: closing the stream may end its entry
  for (const auto& [id, stream] : pending_) {  // in order of arrival: the oldest first
    if (stream.slot->phase() != StreamPhase::handshake || stream.slot->source() != source) continue;
    note_refusal(source, "evicted from a full handshake table",
                 fmt::format("closing {}, the oldest handshake of the {} from {}: every handshake "
                             "slot is taken",
                             stream.connection->peer_name(), most->second, source));
    stream.slot->release();  // at once, not when the connection has ended
    close_group_of(id);
    return;
  }
}

void BundleListener::on_established(StreamId id) {
  const auto found = pending_.find(id);
  if (found == pending_.end()) return;
  StreamSlot& slot = *found->second.slot;
  if (auto cap = budget_->over_cap(StreamPhase::waiting, {slot.source()})) {
    note_refusal(slot.source(), "over a cap after the handshake",
                 fmt::format("refusing a stream from {}: already {}",
                             found->second.connection->peer_name(), *cap));
    close_group_of(id, fmt::format("it is full (already {})", *cap));
    return;
  }
  slot.move_to(StreamPhase::waiting);
}

void BundleListener::on_hello(StreamId id, const secure::ChannelEvent& chunk) {
  const auto found = pending_.find(id);
  if (found == pending_.end()) return;
  PendingStream& stream = found->second;
  const std::string& name = stream.connection->peer_name();
  if (stream.group) {
    refuse(id, Error(ErrorCategory::protocol,
                     fmt::format("{} sent data before its stream bundle was complete", name)));
    return;
  }
  if (chunk.message_type != kStreamHelloType || chunk.offset != 0 || !chunk.last_chunk()) {
    refuse(id, Error(ErrorCategory::protocol,
                     fmt::format("{} did not open its stream with a hello in one frame", name)));
    return;
  }
  StreamHello hello;
  try {
    hello = decode_stream_hello(chunk.data, name);
  } catch (const Error& e) {
    refuse(id, e);
    return;
  }
  if (hello.count > config_.max_streams) {
    refuse(id, Error(ErrorCategory::protocol,
                     fmt::format("{} asked for {} streams; this peer accepts at most {}", name,
                                 hello.count, config_.max_streams)));
    return;
  }
  const GroupKey key{stream.connection->peer_identity().bytes, hello.bundle_id};
  auto [it, created] = groups_.try_emplace(key);
  PendingGroup& group = it->second;
  if (created) {
    group.shape = hello;
    group.slots.assign(hello.count, kNoStream);
  }
  stream.group = key;  // from here on, a refusal closes the whole group
  if (!created &&
      (hello.count != group.shape.count || hello.unit_bytes != group.shape.unit_bytes)) {
    refuse(id, Error(ErrorCategory::protocol,
                     fmt::format("{} sent a stream of a bundle of {} streams of {}-byte units, but "
                                 "announced {} streams of {}-byte units before",
                                 name, hello.count, hello.unit_bytes, group.shape.count,
                                 group.shape.unit_bytes)));
    return;
  }
  if (group.slots[hello.index] != kNoStream) {
    refuse(id, Error(ErrorCategory::protocol,
                     fmt::format("{} sent stream {} of its bundle twice", name, hello.index)));
    return;
  }
  group.slots[hello.index] = id;
  if (++group.filled == group.shape.count) adopt(key);
}

void BundleListener::refuse(StreamId id, const Error& error) {
  note_refusal(
      pending_.at(id).slot->source(), "broke the protocol",
      fmt::format("refusing a stream: {} [{}]", error.what(), to_string(error.category())));
  close_group_of(id);
}

void BundleListener::note_refusal(const std::string& source, std::string_view reason,
                                  const std::string& line) {
  if (!refusals_.add(steady_now(), source, reason)) return;
  spdlog::warn("{}", line);  // the first of its period; the rest are summarised at its end
  refusal_timer_.expires_at(to_steady(refusals_.poll_timeout()));
  refusal_timer_.async_wait([weak = weak_from_this()](const boost::system::error_code& error) {
    if (auto self = weak.lock(); self && !error) self->flush_refusals();
  });
}

void BundleListener::flush_refusals() {
  for (const std::string& line : refusals_.take_summary(steady_now())) spdlog::warn("{}", line);
}

void BundleListener::close_group_of(StreamId id, const std::optional<std::string>& tell) {
  const auto found = pending_.find(id);
  if (found == pending_.end()) return;
  std::vector<StreamId> members{id};
  if (found->second.group) {
    if (const auto group = groups_.find(*found->second.group); group != groups_.end()) {
      for (const StreamId member : group->second.slots)
        if (member != kNoStream && member != id) members.push_back(member);
      groups_.erase(group);
    }
  }
  for (const StreamId member : members) {
    const auto it = pending_.find(member);
    if (it == pending_.end()) continue;
    const std::shared_ptr<Connection> connection = it->second.connection;
    pending_.erase(it);  // first: closing may end the connection and call back into us
    if (tell && connection->established()) {
      auto record = std::make_shared<std::vector<std::byte>>(encode_stream_refusal(*tell));
      connection->send(kStreamRefusalType, *record, [record] {});
    }
    connection->close_without_waiting();  // its place is free once our close frame is out
  }
}

void BundleListener::adopt(const GroupKey& key) {
  const auto found = groups_.find(key);
  std::vector<std::string> sources;
  for (const StreamId id : found->second.slots) sources.push_back(pending_.at(id).slot->source());
  if (auto cap = budget_->over_cap(StreamPhase::admitted, sources)) {
    const StreamId first = found->second.slots.front();
    note_refusal(sources.front(), "over a cap at admission",
                 fmt::format("refusing the bundle of {}: already {}",
                             pending_.at(first).connection->peer_name(), *cap));
    close_group_of(first, fmt::format("it is full (already {})", *cap));
    return;
  }
  const PendingGroup group = std::move(found->second);
  groups_.erase(found);
  std::vector<std::shared_ptr<Connection>> connections;
  std::vector<std::shared_ptr<StreamRoute>> routes;
  std::vector<std::shared_ptr<StreamSlot>> slots;
  for (const StreamId id : group.slots) {
    auto node = pending_.extract(id);  // its deadline timer is cancelled with it
    node.mapped().connection->limit_incoming(config_.setup.config.max_frame_bytes,
                                             config_.setup.config.max_message_bytes);
    node.mapped().connection->set_quiet(false);  // from here on its bundle's failure is logged
    connections.push_back(std::move(node.mapped().connection));
    routes.push_back(std::move(node.mapped().route));
    node.mapped().slot->move_to(StreamPhase::admitted);
    slots.push_back(std::move(node.mapped().slot));
  }
  auto bundle = StreamBundle::adopt(std::move(connections), std::move(routes), group.shape,
                                    config_.setup.config.max_message_bytes);
  BundleHandlers handlers = on_bundle_(bundle, sources.front());
  // The bundle's places are given back when it ends, or at the latest when it is destroyed
  // (which closes its streams without a callback) together with these handlers.
  handlers.on_closed = [slots, inner = std::move(handlers.on_closed)](const Error* error) {
    for (const auto& slot : slots) slot->release();
    if (inner) inner(error);
  };
  bundle->start_responder(std::move(handlers));
}

}  // namespace loco::net
