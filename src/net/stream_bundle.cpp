#include "loco/net/stream_bundle.hpp"

#include <fmt/format.h>
#include <sodium.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/ip/tcp.hpp>

#include "loco/core/assert.hpp"
#include "loco/core/byte_io.hpp"
#include "loco/core/rng.hpp"
#include "loco/core/sodium_init.hpp"
#include "loco/net/stripe_layout.hpp"

namespace loco::net {
namespace {

using boost::asio::ip::tcp;

std::uint64_t pacer_seed(const BundleId& id, std::uint32_t index) {
  return mix64(load_le<std::uint64_t>(id.data()) ^ mix64(index));
}

}  // namespace

ConnectionHandlers route_handlers(const std::shared_ptr<StreamRoute>& route) {
  // Each handler looks the route up at call time: adoption may happen inside one of them.
  return ConnectionHandlers{
      .on_established =
          [route] {
            if (!route->adopted) {
              if (route->before_adoption.on_established) route->before_adoption.on_established();
            } else if (auto bundle = route->bundle.lock()) {
              bundle->on_stream_established(route->index);
            }
          },
      .on_chunk =
          [route](const secure::ChannelEvent& chunk) {
            if (!route->adopted) {
              if (route->before_adoption.on_chunk) route->before_adoption.on_chunk(chunk);
            } else if (auto bundle = route->bundle.lock()) {
              bundle->on_stream_chunk(route->index, chunk);
            }
          },
      .on_closed =
          [route](const Error* error) {
            if (!route->adopted) {
              if (route->before_adoption.on_closed) route->before_adoption.on_closed(error);
            } else if (auto bundle = route->bundle.lock()) {
              bundle->on_stream_closed(route->index, error);
            }
          },
  };
}

struct StreamBundle::Private {};

StreamBundle::StreamBundle(Private, const StreamHello& shape, std::uint64_t max_message_bytes,
                           std::string peer_name)
    : shape_(shape),
      peer_name_(std::move(peer_name)),
      streams_(shape.count),
      assembler_(shape.count, shape.unit_bytes, max_message_bytes) {}

StreamBundle::~StreamBundle() {
  for (Stream& stream : streams_)
    if (stream.connection != nullptr && !stream.ended) stream.connection->close();
}

std::shared_ptr<StreamBundle> StreamBundle::connect(boost::asio::io_context& io,
                                                    const tcp::endpoint& peer,
                                                    const BundleConfig& config, ChannelSetup setup,
                                                    BundleHandlers handlers,
                                                    std::shared_ptr<LinkShaper> link) {
  validate_bundle_shape(config.streams, config.unit_bytes);
  LOCO_ASSERT(setup.identity != nullptr, "a bundle needs an identity");
  ensure_sodium_initialized();
  StreamHello shape{.index = 0, .count = config.streams, .unit_bytes = config.unit_bytes};
  randombytes_buf(shape.bundle_id.data(), shape.bundle_id.size());
  auto bundle = std::make_shared<StreamBundle>(Private{}, shape, setup.config.max_message_bytes,
                                               setup.peer_label);
  bundle->initiator_ = true;
  bundle->handlers_ = std::move(handlers);
  auto shared_setup = std::make_shared<const ChannelSetup>(std::move(setup));
  for (std::uint32_t i = 0; i < config.streams; ++i) {
    auto socket = std::make_shared<tcp::socket>(io);
    socket->async_connect(peer, [bundle, i, socket, shared_setup,
                                 link](const boost::system::error_code& error) {
      if (bundle->finished_ || bundle->closing_) {
        bundle->streams_[i].ended = true;  // closed before this stream was connected
        bundle->maybe_finish();
        return;
      }
      if (error) {
        const std::string stream = bundle->shape_.count == 1 ? "" : fmt::format(" stream {}", i);
        bundle->fail(
            Error(ErrorCategory::network, fmt::format("connecting{} to {}: {}", stream,
                                                      shared_setup->peer_label, error.message())));
        return;
      }
      bundle->on_tcp_connected(i, std::move(*socket), *shared_setup, link.get());
    });
  }
  return bundle;
}

void StreamBundle::on_tcp_connected(std::uint32_t index, tcp::socket socket,
                                    const ChannelSetup& setup, LinkShaper* link) {
  if (progress_ == Progress::connecting) progress_ = Progress::handshaking;
  auto route = std::make_shared<StreamRoute>();
  route->index = index;
  route->adopted = true;
  route->bundle = weak_from_this();
  StreamHello hello = shape_;
  hello.index = index;
  route->hello = encode_stream_hello(hello);
  const std::string label =
      shape_.count == 1 ? setup.peer_label
                        : fmt::format("{} (stream {}/{})", setup.peer_label, index, shape_.count);
  auto channel = std::make_unique<secure::SecureChannel>(
      secure::Role::initiator, *setup.identity, setup.config, setup.accept, label, steady_now(),
      secure::fresh_ephemeral_seed());
  Stream& stream = streams_[index];
  stream.route = route;
  stream.connection = Connection::create(
      std::move(socket), std::move(channel), route_handlers(route),
      link != nullptr ? link->make_pacer(pacer_seed(shape_.bundle_id, index)) : nullptr);
  stream.connection->start();
}

std::shared_ptr<StreamBundle> StreamBundle::adopt(std::vector<std::shared_ptr<Connection>> streams,
                                                  std::vector<std::shared_ptr<StreamRoute>> routes,
                                                  const StreamHello& shape,
                                                  std::uint64_t max_message_bytes) {
  LOCO_ASSERT(streams.size() == shape.count && routes.size() == shape.count,
              "a bundle adopts exactly its streams");
  auto bundle = std::make_shared<StreamBundle>(Private{}, shape, max_message_bytes,
                                               streams.front()->peer_name());
  for (std::uint32_t i = 0; i < shape.count; ++i) {
    Stream& stream = bundle->streams_[i];
    stream.connection = std::move(streams[i]);
    stream.route = std::move(routes[i]);
    stream.route->index = i;
    stream.route->bundle = bundle;
    stream.route->adopted = true;
  }
  return bundle;
}

void StreamBundle::start_responder(BundleHandlers handlers) {
  handlers_ = std::move(handlers);
  for (std::uint32_t i = 0; i < shape_.count; ++i) {
    Stream& stream = streams_[i];
    StreamHello welcome = shape_;
    welcome.index = i;
    stream.route->hello = encode_stream_hello(welcome);
    stream.welcomed = true;
    stream.connection->send(kStreamHelloType, stream.route->hello);
  }
  ready_ = true;
  if (handlers_.on_ready) handlers_.on_ready();
}

const secure::PublicKey& StreamBundle::peer_identity() const {
  LOCO_ASSERT(ready_, "the peer's identity is known once the bundle is ready");
  return streams_.front().connection->peer_identity();
}

void StreamBundle::on_stream_established(std::uint32_t index) {
  progress_ = Progress::authenticated;
  Stream& stream = streams_[index];
  // Every stream must be the same peer: the accept hook may admit several identities.
  for (const Stream& other : streams_) {
    if (&other == &stream || other.connection == nullptr || !other.connection->established())
      continue;
    if (other.connection->peer_identity() != stream.connection->peer_identity()) {
      fail(
          Error(ErrorCategory::protocol,
                fmt::format("{} answered on stream {}, but {} on another stream",
                            stream.connection->peer_name(), index, other.connection->peer_name())));
      return;
    }
  }
  if (index == 0) peer_name_ = stream.connection->peer_name();
  stream.connection->send(kStreamHelloType, stream.route->hello);
}

void StreamBundle::on_stream_chunk(std::uint32_t index, const secure::ChannelEvent& chunk) {
  if (finished_) return;
  Stream& stream = streams_[index];
  if (!stream.welcomed) {
    on_welcome(index, chunk);
    return;
  }
  std::span<const BundleChunk> pieces;
  try {
    pieces = assembler_.handle_chunk(index, chunk);
  } catch (const Error& e) {
    fail(Error(e.category(), fmt::format("{} {}", peer_name_, e.message())));
    return;
  }
  bool completed = false;
  for (const BundleChunk& piece : pieces) {
    if (finished_) return;
    if (handlers_.on_chunk) handlers_.on_chunk(piece);
    completed = completed || piece.completes_message;
  }
  if (finished_) return;
  if (assembler_.ahead(index)) {
    stream.paused = true;
    stream.connection->pause_reading();
  }
  if (completed) resume_streams_caught_up();
}

void StreamBundle::on_welcome(std::uint32_t index, const secure::ChannelEvent& chunk) {
  Stream& stream = streams_[index];
  if (chunk.message_type == kStreamRefusalType && chunk.offset == 0 && chunk.last_chunk()) {
    const std::string& name = stream.connection->peer_name();
    try {
      fail(Error(ErrorCategory::network, fmt::format("{} refused the connection: {}", name,
                                                     decode_stream_refusal(chunk.data, name))));
    } catch (const Error& e) {
      fail(e);
    }
    return;
  }
  if (chunk.message_type != kStreamHelloType || chunk.offset != 0 || !chunk.last_chunk() ||
      chunk.data.size() != kStreamHelloBytes ||
      !std::equal(chunk.data.begin(), chunk.data.end(), stream.route->hello.begin())) {
    fail(Error(ErrorCategory::protocol,
               fmt::format("{} did not answer stream {}'s hello with the same record",
                           stream.connection->peer_name(), index)));
    return;
  }
  stream.welcomed = true;
  for (const Stream& other : streams_)
    if (!other.welcomed) return;
  ready_ = true;
  if (handlers_.on_ready) handlers_.on_ready();
}

void StreamBundle::resume_streams_caught_up() {
  for (std::uint32_t i = 0; i < shape_.count; ++i) {
    Stream& stream = streams_[i];
    if (stream.paused && !assembler_.ahead(i)) {
      stream.paused = false;
      stream.connection->resume_reading();
    }
  }
}

bool StreamBundle::send(std::uint16_t type, std::span<const std::byte> bytes,
                        std::function<void()> on_sent) {
  return queue(type, bytes, std::move(on_sent), false);
}

bool StreamBundle::send_ahead(std::uint16_t type, std::span<const std::byte> bytes,
                              std::function<void()> on_sent) {
  return queue(type, bytes, std::move(on_sent), shape_.count == 1);
}

bool StreamBundle::queue(std::uint16_t type, std::span<const std::byte> bytes,
                         std::function<void()> on_sent, bool ahead) {
  LOCO_ASSERT(ready_ || finished_ || closing_, "send() before on_ready");
  if (finished_ || closing_) return false;
  // The header is shared by the stripes and lives until the last stream has taken its stripe.
  struct Outgoing {
    std::array<std::byte, kStripeHeaderBytes> header;
    std::uint32_t stripes_left;
    std::function<void()> on_sent;
  };
  auto outgoing = std::make_shared<Outgoing>(
      Outgoing{encode_stripe_header(bytes.size()), shape_.count, std::move(on_sent)});
  const StripeLayout layout(bytes.size(), shape_.unit_bytes, shape_.count);
  for (std::uint32_t i = 0; i < shape_.count; ++i) {
    std::vector<std::span<const std::byte>> parts{outgoing->header};
    layout.append_stripe(i, bytes, parts);
    auto taken = [outgoing] {
      if (--outgoing->stripes_left == 0 && outgoing->on_sent) outgoing->on_sent();
    };
    Connection& stream = *streams_[i].connection;
    if (ahead) {
      stream.send_ahead(type, std::move(parts), std::move(taken));
    } else {
      stream.send(type, std::move(parts), std::move(taken));
    }
  }
  return true;
}

Connection::ReadCounters StreamBundle::read_counters() const {
  Connection::ReadCounters sum;
  for (const Stream& stream : streams_) {
    if (stream.connection == nullptr) continue;
    const Connection::ReadCounters& c = stream.connection->read_counters();
    sum.reads += c.reads;
    sum.bytes += c.bytes;
    sum.last = std::max(sum.last, c.last);
  }
  return sum;
}

std::size_t StreamBundle::queued_bytes() const {
  std::size_t sum = 0;
  for (const Stream& stream : streams_)
    if (stream.connection != nullptr) sum += stream.connection->queued_bytes();
  return sum;
}

void StreamBundle::limit_incoming(std::uint32_t max_frame_bytes, std::uint64_t max_message_bytes) {
  assembler_.set_max_message_bytes(max_message_bytes);
  for (Stream& stream : streams_)
    if (stream.connection != nullptr)
      stream.connection->limit_incoming(max_frame_bytes, max_message_bytes);
}

void StreamBundle::close() {
  if (closing_ || finished_) return;
  closing_ = true;
  for (Stream& stream : streams_)
    if (stream.connection != nullptr && !stream.ended) stream.connection->close();
}

void StreamBundle::on_stream_closed(std::uint32_t index, const Error* error) {
  streams_[index].ended = true;
  if (finished_) return;
  if (error != nullptr) {  // the connection has logged it
    cut_by_peer_ =
        streams_[index].connection != nullptr && streams_[index].connection->cut_by_peer();
    close();
    finish(error);
    return;
  }
  if (!ready_ && !closing_) {
    fail(Error(ErrorCategory::network,
               fmt::format("{} closed stream {} before the bundle was set up", peer_name_, index)));
    return;
  }
  close();  // the peer is closing the bundle: answer on every stream
  maybe_finish();
}

void StreamBundle::maybe_finish() {
  if (finished_) return;
  for (const Stream& stream : streams_)
    if (!stream.ended) return;
  if (!assembler_.idle()) {
    const Error incomplete(
        ErrorCategory::protocol,
        fmt::format("{} closed the bundle with a message half sent", peer_name_));
    finish(&incomplete);
    return;
  }
  finish(nullptr);
}

void StreamBundle::fail(const Error& error) {
  if (finished_) return;
  spdlog::warn("stream bundle with {} closed: {} [{}]", peer_name_, error.what(),
               to_string(error.category()));
  close();
  finish(&error);
}

void StreamBundle::finish(const Error* error) {
  finished_ = true;
  if (handlers_.on_closed) handlers_.on_closed(error);
}

}  // namespace loco::net
