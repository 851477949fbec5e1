#include "loco/secure/secure_channel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "loco/core/assert.hpp"
#include "loco/core/error.hpp"

namespace loco::secure {

SecureChannel::SecureChannel(Role role, const KeyPair& identity, ChannelConfig config,
                             AcceptIdentity accept, std::string peer_label, TimePoint now,
                             const EphemeralSeed& ephemeral_seed)
    : config_(std::move(config)),
      peer_name_(peer_label),
      handshake_(std::make_unique<Handshake>(role, identity, config_.run_id, std::move(accept),
                                             std::move(peer_label), ephemeral_seed)),
      started_(now),
      in_max_frame_(config_.max_frame_bytes),
      in_max_message_(config_.max_message_bytes),
      last_receive_(now),
      last_transmit_progress_(now) {
  LOCO_ASSERT(config_.max_frame_bytes > 0, "frames must carry at least one byte");
  in_needed_ = handshake_->next_message_size();
  flush_handshake(now);
}

SecureChannel::~SecureChannel() = default;

std::span<std::byte> SecureChannel::read_buffer() {
  if (release_buffer_) {
    std::vector<std::byte>().swap(in_);
    release_buffer_ = false;
  }
  if (phase_ == Phase::header) return std::span(header_bytes_).subspan(in_have_);
  const std::size_t needed = std::max<std::size_t>(in_needed_, 1);  // 1: detects bytes after close
  // The buffer doubles as bytes come in: a peer that announces a large frame and sends a little
  // of it holds a little memory, not the frame's size.
  const std::size_t step = std::clamp(in_have_, kFirstReadBytes, kReadStepBytes);
  const std::size_t end = std::min(needed, in_have_ + step);
  if (in_.size() < end) in_.resize(end);
  return std::span(in_).subspan(in_have_, end - in_have_);
}

void SecureChannel::limit_incoming(std::uint32_t max_frame_bytes, std::uint64_t max_message_bytes) {
  in_max_frame_ = max_frame_bytes;
  in_max_message_ = max_message_bytes;
  if (opener_ != nullptr) opener_->set_max_chunk_bytes(in_max_frame_);
}

void SecureChannel::handle_read(TimePoint now, std::size_t bytes) {
  if (bytes == 0) return;
  if (phase_ == Phase::closed_by_peer) fail_protocol("sent bytes after its close frame");
  LOCO_ASSERT(in_have_ + bytes <= in_needed_, "read past the buffer read_buffer() gave");
  last_receive_ = now;
  in_have_ += bytes;
  if (in_have_ < in_needed_) return;
  in_have_ = 0;
  switch (phase_) {
    case Phase::handshake:
      handshake_->handle_message(
          std::span(reinterpret_cast<const std::uint8_t*>(in_.data()), in_needed_));
      flush_handshake(now);
      break;
    case Phase::header: handle_header(); break;
    case Phase::body: handle_body(); break;
    case Phase::closed_by_peer: break;
  }
}

void SecureChannel::flush_handshake(TimePoint now) {
  while (auto message = handshake_->poll_transmit()) {
    OutFrame& frame = append_frame(message->size(), now);
    std::memcpy(frame.bytes.data(), message->data(), message->size());
  }
  if (handshake_->done()) {
    finish_handshake();
  } else {
    in_needed_ = handshake_->next_message_size();
  }
}

void SecureChannel::finish_handshake() {
  const SessionKeys& keys = handshake_->session_keys();
  sealer_ = std::make_unique<FrameSealer>(keys.send);
  opener_ = std::make_unique<FrameOpener>(keys.receive, in_max_frame_);
  peer_identity_ = handshake_->peer_identity();
  peer_name_ = fmt::format("peer {} at {}", short_id(peer_identity_), peer_name_);
  handshake_.reset();
  phase_ = Phase::header;
  in_needed_ = kFrameHeaderBytes;
  events_.push_back(ChannelEvent{.kind = ChannelEvent::Kind::established, .data = {}});
}

void SecureChannel::handle_header() {
  phase_ = Phase::body;
  in_needed_ = opener_->body_bytes(header_bytes_, peer_name_);
}

void SecureChannel::handle_body() {
  const auto body = std::span(in_).first(in_needed_);
  const FrameHeader header = opener_->open(header_bytes_, body, peer_name_);
  phase_ = Phase::header;
  in_needed_ = kFrameHeaderBytes;
  if (header.kind == FrameKind::close) {
    if (in_message_)
      throw Error(ErrorCategory::network,
                  fmt::format("{} closed in the middle of a message ({} of {} bytes)", peer_name_,
                              in_received_, in_size_));
    phase_ = Phase::closed_by_peer;
    in_needed_ = 0;
    events_.push_back(ChannelEvent{.kind = ChannelEvent::Kind::closed, .data = {}});
    return;
  }
  check_continues_message(header);
  in_size_ = header.message_size;
  in_type_ = header.message_type;
  in_received_ = header.offset + header.chunk_bytes;
  in_message_ = in_received_ < in_size_;
  events_.push_back(ChannelEvent{.kind = ChannelEvent::Kind::chunk,
                                 .message_type = in_type_,
                                 .message_size = in_size_,
                                 .offset = header.offset,
                                 .data = body.first(header.chunk_bytes)});
  if (!in_message_) {
    in_received_ = 0;
    // The event's data points into in_: a buffer larger than the first read goes at the next
    // read_buffer(), once the event has been handled.
    release_buffer_ = in_.capacity() > kFirstReadBytes;
  }
}

// A data frame, authenticated, either starts a message (offset 0, none open) or continues the
// open one exactly where it stopped, with the size and type its first chunk stated.
void SecureChannel::check_continues_message(const FrameHeader& header) {
  if (header.offset == 0 && in_message_)
    fail_protocol("started a new message before finishing the last one");
  if (header.offset != in_received_)
    fail_protocol(
        fmt::format("sent a chunk at offset {} where {} was due", header.offset, in_received_));
  if (in_message_ && (header.message_size != in_size_ || header.message_type != in_type_))
    fail_protocol(fmt::format(
        "changed a message's size or type mid-message (from {} bytes of type {} to {} bytes of "
        "type {})",
        in_size_, in_type_, header.message_size, header.message_type));
  if (header.message_size > in_max_message_)
    throw Error(ErrorCategory::resource,
                fmt::format("{} sent a message of {} bytes, more than the limit of {} bytes "
                            "(max message size)",
                            peer_name_, header.message_size, in_max_message_));
  if (header.message_size > 0 && header.chunk_bytes == 0)
    fail_protocol("sent an empty chunk of a non-empty message");  // would let it stall forever
}

void SecureChannel::handle_eof() {
  if (phase_ == Phase::closed_by_peer) return;
  throw Error(ErrorCategory::network,
              fmt::format("{} cut the connection without a close frame{}", peer_name_,
                          in_message_ ? " in the middle of a message (truncated)" : ""));
}

std::optional<ChannelEvent> SecureChannel::poll_event() {
  if (events_.empty()) return std::nullopt;
  ChannelEvent event = events_.front();
  events_.pop_front();
  return event;
}

void SecureChannel::begin_message(TimePoint now, std::uint16_t type, std::uint64_t size) {
  LOCO_ASSERT(established() && !out_closed_,
              "messages go out only on an open, established channel");
  LOCO_ASSERT(!out_message_, "begin_message() before the last message was fully written");
  if (size > config_.max_message_bytes)
    throw Error(ErrorCategory::resource,
                fmt::format("message of {} bytes for {} exceeds the limit of {} bytes", size,
                            peer_name_, config_.max_message_bytes));
  out_type_ = type;
  out_size_ = size;
  out_written_ = 0;
  out_message_ = true;
  if (pending_bytes_ == 0) last_transmit_progress_ = now;  // the stall clock starts now
  if (size == 0) write_chunk({});
}

std::size_t SecureChannel::chunk_capacity() const {
  if (!out_message_) return 0;
  return static_cast<std::size_t>(
      std::min<std::uint64_t>(config_.max_frame_bytes, out_size_ - out_written_));
}

void SecureChannel::write_chunk(std::span<const std::byte> chunk) {
  LOCO_ASSERT(out_message_, "write_chunk() outside a message");
  LOCO_ASSERT(chunk.size() <= chunk_capacity(), "chunk larger than chunk_capacity()");
  LOCO_ASSERT(!chunk.empty() || out_size_ == 0, "empty chunk of a non-empty message");
  // The stall clock was started by begin_message() or moved by the last handle_transmitted().
  OutFrame& frame = append_frame(sealed_frame_size(chunk.size()), last_transmit_progress_);
  sealer_->seal(FrameHeader{.message_size = out_size_,
                            .offset = out_written_,
                            .chunk_bytes = static_cast<std::uint32_t>(chunk.size()),
                            .message_type = out_type_,
                            .kind = FrameKind::data},
                chunk, std::span(frame.bytes).first(frame.size));
  out_written_ += chunk.size();
  out_message_ = out_written_ < out_size_;
}

void SecureChannel::send_message(TimePoint now, std::uint16_t type,
                                 std::span<const std::byte> bytes) {
  begin_message(now, type, bytes.size());
  while (chunk_capacity() > 0) {
    const std::size_t n = chunk_capacity();
    write_chunk(bytes.first(n));
    bytes = bytes.subspan(n);
  }
}

void SecureChannel::close(TimePoint now) {
  LOCO_ASSERT(established() && !out_message_, "close() in the middle of a message");
  if (out_closed_) return;
  OutFrame& frame = append_frame(sealed_frame_size(0), now);
  sealer_->seal(FrameHeader{.kind = FrameKind::close}, {},
                std::span(frame.bytes).first(frame.size));
  out_closed_ = true;
}

SecureChannel::OutFrame& SecureChannel::append_frame(std::size_t bytes, TimePoint now) {
  if (out_.empty()) last_transmit_progress_ = now;  // the stall clock starts with the queue
  OutFrame frame;
  if (!spare_.empty()) {
    frame = std::move(spare_.back());
    spare_.pop_back();
    // A spare left from one large message (a tracker's full membership view to a newcomer) is not
    // kept for small frames: each connection would hold that memory for as long as it lasts.
    if (frame.bytes.size() > kReadStepBytes && frame.bytes.size() / 8 > bytes) frame.bytes = {};
  }
  if (frame.bytes.size() < bytes) frame.bytes.resize(bytes);
  frame.size = bytes;
  pending_bytes_ += bytes;
  out_.push_back(std::move(frame));
  return out_.back();
}

std::size_t SecureChannel::held_transmit_bytes() const {
  std::size_t held = 0;
  for (const OutFrame& f : out_) held += f.bytes.size();
  for (const OutFrame& f : spare_) held += f.bytes.size();
  return held;
}

std::span<const std::byte> SecureChannel::poll_transmit() const {
  if (out_.empty()) return {};
  return std::span(out_.front().bytes).first(out_.front().size).subspan(front_sent_);
}

void SecureChannel::handle_transmitted(TimePoint now, std::size_t bytes) {
  LOCO_ASSERT(bytes <= poll_transmit().size(), "transmitted more than poll_transmit() gave");
  if (bytes > 0) last_transmit_progress_ = now;
  front_sent_ += bytes;
  pending_bytes_ -= bytes;
  if (!out_.empty() && front_sent_ == out_.front().size) {
    front_sent_ = 0;
    if (spare_.size() < 4) spare_.push_back(std::move(out_.front()));
    out_.pop_front();
    // Spares serve a stream of frames, not the next message after a pause: once nothing is
    // queued, no frame-sized buffer is kept (as on the receive side). A tracker's full view to a
    // newcomer, in 64 KiB frames, otherwise left three spares on its connection for good: 2 GB
    // at 10,000 members (docs/TRACKER.md, "Memory and load").
    if (out_.empty())
      std::erase_if(spare_, [](const OutFrame& f) { return f.bytes.capacity() > kFirstReadBytes; });
  }
}

TimePoint SecureChannel::poll_timeout() const {
  if (!established()) return started_ + config_.handshake_timeout;
  TimePoint deadline = kNever;
  if (phase_ != Phase::closed_by_peer)
    deadline = last_receive_ + (in_message_ || phase_ == Phase::body ? config_.progress_timeout
                                                                     : config_.idle_timeout);
  if (pending_bytes_ > 0)
    deadline = std::min(deadline, last_transmit_progress_ + config_.progress_timeout);
  return deadline;
}

void SecureChannel::handle_timeout(TimePoint now) {
  if (now < poll_timeout()) return;
  const auto seconds = [](Duration d) { return std::chrono::duration<double>(d).count(); };
  if (!established())
    throw Error(ErrorCategory::network,
                fmt::format("handshake with {} did not finish within {} s", peer_name_,
                            seconds(config_.handshake_timeout)));
  if (pending_bytes_ > 0 && now >= last_transmit_progress_ + config_.progress_timeout)
    throw Error(ErrorCategory::network, fmt::format("{} took none of our bytes for {} s",
                                                    peer_name_, seconds(config_.progress_timeout)));
  throw Error(ErrorCategory::network,
              fmt::format("{} sent nothing for {} s{}", peer_name_, seconds(now - last_receive_),
                          in_message_ ? " in the middle of a message" : " (idle)"));
}

const PublicKey& SecureChannel::peer_identity() const {
  LOCO_ASSERT(established(), "the peer's identity is known only after the handshake");
  return peer_identity_;
}

void SecureChannel::fail_protocol(const std::string& what) {
  throw Error(ErrorCategory::protocol, fmt::format("{} {}", peer_name_, what));
}

}  // namespace loco::secure
