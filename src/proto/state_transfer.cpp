#include "loco/proto/state_transfer.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "loco/core/byte_io.hpp"
#include "loco/core/error.hpp"
#include "loco/proto/tracker_messages.hpp"

namespace loco::proto {
namespace {

std::string short_hash(const Digest& d) {
  return to_hex(d).substr(0, 12);
}

}  // namespace

// --- messages ---

std::vector<std::byte> encode_state_request(std::uint64_t round, const Digest& hash) {
  ByteWriter w = start_message(MessageType::state_request);
  w.u64(round);
  w.bytes(hash);
  return w.finish();
}

std::vector<std::byte> encode_manifest(const StateManifest& m) {
  ByteWriter w = start_message(MessageType::state_manifest);
  w.u64(m.round);
  w.u64(m.total_bytes);
  w.u32(m.chunk_bytes);
  w.u32(static_cast<std::uint32_t>(m.chunk_hashes.size()));
  for (const Digest& d : m.chunk_hashes) w.bytes(d);
  return w.finish();
}

StateManifest decode_manifest(std::span<const std::byte> body) {
  ByteReader r = open_message(body, MessageType::state_manifest);
  StateManifest m;
  m.round = r.u64();
  m.total_bytes = r.u64();
  m.chunk_bytes = r.u32();
  if (m.total_bytes > kMaxStateBytes) r.fail(fmt::format("a state of {} bytes", m.total_bytes));
  if (m.chunk_bytes == 0) r.fail("chunks of 0 bytes");
  const std::uint64_t chunks = (m.total_bytes + m.chunk_bytes - 1) / m.chunk_bytes;
  const std::size_t n = r.count(kMaxStateBytes / 4096, 32);
  if (n != chunks)
    r.fail(fmt::format("{} chunk hashes for {} bytes in chunks of {}", n, m.total_bytes,
                       m.chunk_bytes));
  m.chunk_hashes.resize(n);
  for (Digest& d : m.chunk_hashes) r.bytes(d);
  r.expect_end();
  return m;
}

std::vector<std::byte> encode_chunk_request(std::uint64_t round, std::uint64_t index) {
  ByteWriter w = start_message(MessageType::chunk_request);
  w.u64(round);
  w.u64(index);
  return w.finish();
}

// --- fetcher ---

StateFetcher::StateFetcher(FetchConfig config, TimePoint now) : config_(std::move(config)) {
  for (const PeerKey& d : config_.donors) {
    donors_[d].last_heard = now;
    out_.push_back(PeerTransmit{.to = d,
                                .type = MessageType::state_request,
                                .body = encode_state_request(config_.round, config_.state_hash)});
  }
  if (donors_.empty()) failure_ = "no donor to fetch the state from";
}

void StateFetcher::on_message(TimePoint now, const PeerKey& from, MessageType type,
                              std::span<const std::byte> body) {
  if (failure_ || done() || !donors_.contains(from)) return;
  try {
    handle(now, from, type, body);
  } catch (const Error& e) {
    drop(from, e.message(), true);
  }
  request_more(now);
}

void StateFetcher::handle(TimePoint now, const PeerKey& from, MessageType type,
                          std::span<const std::byte> body) {
  donors_.at(from).last_heard = now;
  switch (type) {
    case MessageType::state_manifest: accept_manifest(from, decode_manifest(body)); return;
    case MessageType::state_refusal: {
      ByteReader r = open_message(body, type);
      if (r.u64() != config_.round) return;  // answers an earlier fetch
      refused(now, from, read_text(r, kMaxTextBytes));
      return;
    }
    case MessageType::state_chunk: {
      ByteReader r = open_message(body, type);
      const std::uint64_t round = r.u64();
      const std::uint64_t index = r.u64();
      if (round != config_.round) return;  // answers an earlier fetch
      accept_chunk(now, from, index, r.rest());
      return;
    }
    default:
      throw Error(ErrorCategory::protocol,
                  fmt::format("sent a {} during a state transfer", info(type).name));
  }
}

void StateFetcher::accept_manifest(const PeerKey& from, StateManifest manifest) {
  Donor& donor = donors_.at(from);
  // Another round's manifest, or this one's again, answers an earlier fetch from this peer.
  if (donor.ready || manifest.round != config_.round) return;
  if (manifest.state_hash() != config_.state_hash)
    throw Error(ErrorCategory::protocol,
                fmt::format("its manifest of round {} has state {}, not {}", manifest.round,
                            short_hash(manifest.state_hash()), short_hash(config_.state_hash)));
  donor.ready = true;
  if (manifest_) return;  // every matching manifest is the same: the first one sets things up
  buffer_.resize(manifest.total_bytes);
  have_.assign(manifest.chunk_count(), false);
  for (std::uint64_t i = 0; i < manifest.chunk_count(); ++i) wanted_.push_back(i);
  manifest_ = std::move(manifest);
}

void StateFetcher::refused(TimePoint now, const PeerKey& from, const std::string& reason) {
  Donor& donor = donors_.at(from);
  if (donor.ready || donor.reasked || config_.reask_after == Duration::zero()) {
    drop(from, "it does not serve that state: " + reason, false);
    return;
  }
  donor.reasked = true;
  donor.reask_at = now + config_.reask_after;
}

void StateFetcher::accept_chunk(TimePoint /*now*/, const PeerKey& from, std::uint64_t index,
                                std::span<const std::byte> bytes) {
  Donor& donor = donors_.at(from);
  if (donor.abandoned.erase(index) > 0) return;  // another donor's copy came first
  if (!donor.in_flight.contains(index))
    throw Error(ErrorCategory::protocol,
                fmt::format("sent chunk {}, which it was not asked for", index));
  // Still in flight while checked: a bad chunk goes back to the others with the rest (drop()).
  if (bytes.size() != manifest_->chunk_size(index) ||
      blake2b(bytes) != manifest_->chunk_hashes[index])
    throw Error(ErrorCategory::protocol,
                fmt::format("sent chunk {} that does not match the manifest", index));
  for (auto& [key, d] : donors_)
    if (d.in_flight.erase(index) > 0 && &d != &donor) d.abandoned.insert(index);
  asked_at_.erase(index);
  std::copy(bytes.begin(), bytes.end(),
            buffer_.begin() + static_cast<std::ptrdiff_t>(index * manifest_->chunk_bytes));
  have_[index] = true;
  served_by_.insert(from);
  ++received_;
  bytes_received_ += bytes.size();
}

void StateFetcher::on_donor_lost(TimePoint now, const PeerKey& donor) {
  if (!donors_.contains(donor) || failure_ || done()) return;
  drop(donor, "its connection was lost", false);
  request_more(now);
}

void StateFetcher::on_timer(TimePoint now) {
  if (failure_ || done()) return;
  for (auto& [key, d] : donors_) {
    if (d.reask_at > now) continue;
    d.reask_at = kNever;
    d.last_heard = now;
    out_.push_back(PeerTransmit{.to = key,
                                .type = MessageType::state_request,
                                .body = encode_state_request(config_.round, config_.state_hash)});
  }
  std::vector<PeerKey> silent;
  for (const auto& [key, d] : donors_)
    if (now >= d.last_heard + config_.patience) silent.push_back(key);
  for (const PeerKey& k : silent)
    drop(k,
         fmt::format("it sent nothing for {} s",
                     std::chrono::duration<double>(config_.patience).count()),
         false);
  request_more(now);
}

TimePoint StateFetcher::poll_timeout() const {
  if (failure_ || done()) return kNever;
  TimePoint next = kNever;
  for (const auto& [key, d] : donors_)
    next = std::min({next, d.last_heard + config_.patience, d.reask_at});
  if (wanted_.empty() && a_donor_is_idle())
    for (const auto& [index, asked] : asked_at_)
      if (holders(index) == 1) next = std::min(next, asked + config_.duplicate_after);
  return next;
}

void StateFetcher::drop(const PeerKey& donor, const std::string& why, bool bad) {
  const auto it = donors_.find(donor);
  if (it == donors_.end()) return;
  const std::set<std::uint64_t> in_flight = std::move(it->second.in_flight);
  donors_.erase(it);
  for (const std::uint64_t index : in_flight) {
    if (holders(index) > 0) continue;  // still asked of another donor
    asked_at_.erase(index);
    wanted_.push_front(index);
  }
  if (bad) bad_[donor] = why;
  if (donors_.empty())
    failure_ = fmt::format("no donor left (the last: {} {})", secure::short_id(donor), why);
}

// Keeps `window` chunks in flight at every donor whose manifest matched.
void StateFetcher::request_more(TimePoint now) {
  if (failure_ || !manifest_) return;
  for (auto& [key, donor] : donors_) {
    while (donor.ready && donor.in_flight.size() < config_.window && !wanted_.empty()) {
      const std::uint64_t index = wanted_.front();
      wanted_.pop_front();
      asked_at_[index] = now;
      ask_for_chunk(key, donor, index);
    }
  }
  duplicate_held_chunks(now);
}

void StateFetcher::ask_for_chunk(const PeerKey& key, Donor& donor, std::uint64_t index) {
  donor.in_flight.insert(index);
  out_.push_back(PeerTransmit{.to = key,
                              .type = MessageType::chunk_request,
                              .body = encode_chunk_request(config_.round, index)});
}

// Nothing left to ask for: each idle donor takes one chunk held at a single other donor for
// duplicate_after, so a chunk is asked of two donors at most and only once it is late.
void StateFetcher::duplicate_held_chunks(TimePoint now) {
  if (!wanted_.empty()) return;
  for (auto& [key, donor] : donors_) {
    if (!idle(donor)) continue;
    for (const auto& [index, asked] : asked_at_) {
      if (now < asked + config_.duplicate_after || holders(index) != 1) continue;
      ask_for_chunk(key, donor, index);
      break;
    }
  }
}

std::size_t StateFetcher::holders(std::uint64_t index) const {
  std::size_t n = 0;
  for (const auto& [key, d] : donors_) n += d.in_flight.contains(index) ? 1 : 0;
  return n;
}

// Ready, asked for nothing, and not still owed more late copies than a window.
bool StateFetcher::idle(const Donor& d) const {
  return d.ready && d.in_flight.empty() && d.abandoned.size() < config_.window;
}

bool StateFetcher::a_donor_is_idle() const {
  return std::any_of(donors_.begin(), donors_.end(),
                     [&](const auto& entry) { return idle(entry.second); });
}

std::optional<PeerTransmit> StateFetcher::poll_transmit() {
  if (out_.empty()) return std::nullopt;
  PeerTransmit t = std::move(out_.front());
  out_.pop_front();
  return t;
}

// --- server ---

void StateServer::serve(StateManifest manifest, StateBytes state) {
  manifest_ = std::move(manifest);
  state_ = std::move(state);
  share_ = kStatesPerRequester * (encode_manifest(*manifest_).size() + manifest_->total_bytes);
  sent_to_.clear();
}

void StateServer::clear() {
  manifest_.reset();
  state_ = StateBytes();
  sent_to_.clear();
}

void StateServer::on_message(const PeerKey& from, MessageType type,
                             std::span<const std::byte> body) {
  ByteReader r = open_message(body, type);
  const std::uint64_t round = r.u64();
  const auto refuse = [&](const std::string& reason) {
    ByteWriter w = start_message(MessageType::state_refusal);
    w.u64(round);
    write_text(w, reason, kMaxTextBytes);
    out_.push_back(
        PeerTransmit{.to = from, .type = MessageType::state_refusal, .body = w.finish()});
  };
  if (!manifest_ || manifest_->round != round) {
    refuse(manifest_ ? fmt::format("this peer holds round {}", manifest_->round)
                     : "this peer holds no committed state yet");
    return;
  }
  const std::string share_spent = fmt::format(
      "this peer has sent you round {}'s state {} times over already", round, kStatesPerRequester);
  if (type == MessageType::state_request) {
    Digest hash{};
    r.bytes(hash);
    r.expect_end();
    if (hash != manifest_->state_hash()) {
      refuse("this peer holds another state of that round");
      return;
    }
    std::vector<std::byte> manifest = encode_manifest(*manifest_);
    if (!within_share(from, manifest.size())) {
      refuse(share_spent);
      return;
    }
    out_.push_back(
        PeerTransmit{.to = from, .type = MessageType::state_manifest, .body = std::move(manifest)});
    return;
  }
  if (type != MessageType::chunk_request)
    r.fail(fmt::format("a {} is not a state request", info(type).name));
  const std::uint64_t index = r.u64();
  r.expect_end();
  if (index >= manifest_->chunk_count())
    r.fail(fmt::format("chunk {} of {}", index, manifest_->chunk_count()));
  const std::uint64_t size = manifest_->chunk_size(index);
  if (!within_share(from, size)) {
    refuse(share_spent);
    return;
  }
  ByteWriter w(size + 32);
  w.u8(info(MessageType::state_chunk).version);
  w.u64(round);
  w.u64(index);
  state_.read(index * manifest_->chunk_bytes, std::span(w.extend(size), size));
  bytes_served_ += size;
  out_.push_back(PeerTransmit{.to = from, .type = MessageType::state_chunk, .body = w.finish()});
}

bool StateServer::within_share(const PeerKey& to, std::uint64_t bytes) {
  std::uint64_t& sent = sent_to_[to];
  if (sent + bytes > share_) return false;
  sent += bytes;
  return true;
}

std::optional<PeerTransmit> StateServer::poll_transmit() {
  if (out_.empty()) return std::nullopt;
  PeerTransmit t = std::move(out_.front());
  out_.pop_front();
  return t;
}

}  // namespace loco::proto
