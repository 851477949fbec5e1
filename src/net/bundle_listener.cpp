#include "loco/net/bundle_listener.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <spdlog/spdlog.h>

#include "loco/core/assert.hpp"

namespace loco::net {
namespace {

using boost::asio::ip::tcp;

TimePoint now() {
  return from_steady(std::chrono::steady_clock::now());
}

std::string remote_label(const tcp::socket& socket) {
  boost::system::error_code error;
  const tcp::endpoint remote = socket.remote_endpoint(error);
  return error ? std::string("an unknown address") : fmt::format("{}", fmt::streamed(remote));
}

}  // namespace

struct BundleListener::Private {};

std::shared_ptr<BundleListener> BundleListener::create(boost::asio::io_context& io,
                                                       const tcp::endpoint& endpoint,
                                                       BundleListenerConfig config,
                                                       OnBundle on_bundle) {
  LOCO_ASSERT(config.setup.identity != nullptr, "a listener needs an identity");
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
      on_bundle_(std::move(on_bundle)) {}

void BundleListener::start() {
  accept_next();
}

void BundleListener::stop() {
  stopped_ = true;
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  for (auto& [id, stream] : pending_) stream.connection->close();
  pending_.clear();
  groups_.clear();
}

void BundleListener::accept_next() {
  acceptor_.async_accept(
      [self = shared_from_this()](const boost::system::error_code& error, tcp::socket socket) {
        if (self->stopped_) return;
        if (error) {
          spdlog::warn("accepting a stream: {}", error.message());
        } else {
          self->on_accepted(std::move(socket));
        }
        self->accept_next();
      });
}

void BundleListener::on_accepted(tcp::socket socket) {
  const std::string label = remote_label(socket);
  if (pending_.size() >= kMaxPendingStreams) {
    spdlog::warn("refusing a stream from {}: {} streams are already waiting for their bundles",
                 label, kMaxPendingStreams);
    return;  // the socket closes here
  }
  const StreamId id = next_id_++;
  const std::weak_ptr<BundleListener> weak = weak_from_this();
  auto route = std::make_shared<StreamRoute>();
  route->before_adoption = ConnectionHandlers{
      .on_established = {},
      .on_chunk =
          [weak, id](const secure::ChannelEvent& chunk) {
            if (auto self = weak.lock()) self->on_hello(id, chunk);
          },
      .on_closed =
          [weak, id](const Error*) {
            if (auto self = weak.lock(); self && self->pending_.contains(id))
              self->close_group_of(id);
          },
  };
  const ChannelSetup& setup = config_.setup;
  auto channel = std::make_unique<secure::SecureChannel>(secure::Role::responder, *setup.identity,
                                                         setup.config, setup.accept, label, now(),
                                                         secure::fresh_ephemeral_seed());
  PendingStream& stream = pending_[id];
  stream.route = route;
  stream.connection =
      Connection::create(std::move(socket), std::move(channel), route_handlers(route),
                         config_.link ? config_.link->make_pacer(id) : nullptr);
  stream.deadline = std::make_unique<boost::asio::steady_timer>(acceptor_.get_executor());
  stream.deadline->expires_after(config_.setup_timeout);
  stream.deadline->async_wait([weak, id](const boost::system::error_code& error) {
    auto self = weak.lock();
    if (error || !self || !self->pending_.contains(id)) return;
    const PendingStream& late = self->pending_.at(id);
    spdlog::warn(
        "closing {}: its stream bundle was not complete within {} ms", late.connection->peer_name(),
        std::chrono::duration_cast<std::chrono::milliseconds>(self->config_.setup_timeout).count());
    self->close_group_of(id);
  });
  stream.connection->start();
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
  spdlog::warn("refusing a stream: {} [{}]", error.what(), to_string(error.category()));
  close_group_of(id);
}

void BundleListener::close_group_of(StreamId id) {
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
    pending_.erase(it);  // first: close() may end the connection and call back into us
    connection->close();
  }
}

void BundleListener::adopt(const GroupKey& key) {
  const auto found = groups_.find(key);
  const PendingGroup group = std::move(found->second);
  groups_.erase(found);
  std::vector<std::shared_ptr<Connection>> connections;
  std::vector<std::shared_ptr<StreamRoute>> routes;
  for (const StreamId id : group.slots) {
    auto node = pending_.extract(id);  // its deadline timer is cancelled with it
    connections.push_back(std::move(node.mapped().connection));
    routes.push_back(std::move(node.mapped().route));
  }
  auto bundle = StreamBundle::adopt(std::move(connections), std::move(routes), group.shape,
                                    config_.setup.config.max_message_bytes);
  bundle->start_responder(on_bundle_(bundle));
}

}  // namespace loco::net
