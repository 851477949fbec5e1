#include "loco/proto/all_gather.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "loco/core/assert.hpp"
#include "loco/core/byte_io.hpp"
#include "loco/core/error.hpp"
#include "loco/proto/message_type.hpp"

namespace loco::proto {

std::size_t max_all_gather_part_bytes() {
  return info(MessageType::all_gather_part).max_bytes - AllGatherConfig::kHeaderBytes;
}

std::pair<std::uint64_t, std::uint32_t> all_gather_part_id(std::span<const std::byte> body) {
  ByteReader r = open_message(body, MessageType::all_gather_part);
  const std::uint64_t round = r.u64();
  return {round, r.u32()};
}

AllGather::AllGather(AllGatherConfig config, std::span<const std::byte> own)
    : config_(std::move(config)),
      parts_(config_.members.size()),
      have_(config_.members.size(), false) {
  LOCO_ASSERT(!config_.members.empty() && config_.self < config_.members.size(),
              "an all-gather needs its members and this member's place");
  LOCO_ASSERT(config_.max_part_bytes <= max_all_gather_part_bytes(),
              "an all-gather part limit above the message limit");
  parts_[config_.self].assign(own.begin(), own.end());
}

// 1. This member's part goes to every other member, and counts as received here.
void AllGather::start() {
  if (parts_[config_.self].size() > config_.max_part_bytes) {
    fail(fmt::format("this member's own part of {} bytes is above the limit of {}",
                     parts_[config_.self].size(), config_.max_part_bytes),
         {});
    return;
  }
  have_[config_.self] = true;
  ++received_;
  const std::vector<std::byte>& own = parts_[config_.self];
  ByteWriter w =
      start_message(MessageType::all_gather_part, AllGatherConfig::kHeaderBytes + own.size());
  w.u64(config_.round);
  w.u32(config_.attempt);
  w.u32(static_cast<std::uint32_t>(config_.self));
  w.u32(static_cast<std::uint32_t>(own.size()));
  w.bytes(own);
  const std::vector<std::byte> body = w.finish();
  for (std::size_t j = 0; j < config_.members.size(); ++j) {
    if (j == config_.self) continue;
    out_.push_back(Transmit{.to = config_.members[j], .body = body});
    bytes_sent_ += body.size();
  }
}

void AllGather::on_message(const PeerKey& from, std::span<const std::byte> body) {
  if (finished()) return;
  try {
    receive(from, body);
  } catch (const Error& e) {
    fail(e.message(), from);
  }
}

// 2. Another member's part, checked before anything is kept.
void AllGather::receive(const PeerKey& from, std::span<const std::byte> body) {
  ByteReader r = open_message(body, MessageType::all_gather_part);
  const std::uint64_t round = r.u64();
  const std::uint32_t attempt = r.u32();
  const std::uint32_t index = r.u32();
  const std::uint32_t size = r.u32();
  if (round != config_.round || attempt != config_.attempt)
    r.fail(fmt::format("it is for round {} attempt {}, this is round {} attempt {}", round, attempt,
                       config_.round, config_.attempt));
  if (index >= config_.members.size() || config_.members[index] != from)
    r.fail(fmt::format("it claims member index {} of {}, which is not its sender {}", index,
                       config_.members.size(), secure::short_id(from)));
  if (have_[index]) r.fail(fmt::format("a second part from member {}", index));
  if (size > config_.max_part_bytes)
    r.fail(fmt::format("a part of {} bytes, above the limit of {}", size, config_.max_part_bytes));
  if (size != r.remaining())
    r.fail(fmt::format("it declares {} bytes and carries {}", size, r.remaining()));
  const std::span<const std::byte> part = r.rest();
  parts_[index].assign(part.begin(), part.end());
  have_[index] = true;
  ++received_;  // 3. done() once every member's part is in
}

void AllGather::handle_timeout(TimePoint now) {
  if (finished() || now < config_.deadline) return;
  AllGatherFailure failure;
  for (std::size_t j = 0; j < have_.size(); ++j)
    if (!have_[j]) failure.missing.push_back(j);
  failure.suspect = config_.members[failure.missing.front()];
  failure.reason =
      fmt::format("the deadline passed with {} of {} parts missing (first: member {}, {})",
                  failure.missing.size(), config_.members.size(), failure.missing.front(),
                  secure::short_id(*failure.suspect));
  failure_ = std::move(failure);
  out_.clear();
}

std::optional<AllGather::Transmit> AllGather::poll_transmit() {
  if (out_.empty()) return std::nullopt;
  Transmit t = std::move(out_.front());
  out_.pop_front();
  return t;
}

bool AllGather::needs_link_to(const PeerKey& peer) const {
  const auto it = std::find(config_.members.begin(), config_.members.end(), peer);
  return it != config_.members.end() &&
         !have_[static_cast<std::size_t>(it - config_.members.begin())];
}

void AllGather::fail(std::string reason, std::optional<PeerKey> suspect) {
  if (failure_) return;
  failure_ = AllGatherFailure{.reason = std::move(reason), .suspect = suspect, .missing = {}};
  out_.clear();
}

}  // namespace loco::proto
