#include "loco/replica/commit_log.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <limits>

#include "loco/checkpoint/json.hpp"
#include "loco/core/error.hpp"

namespace loco::replica {
namespace {

using checkpoint::JsonValue;

// An entry is well under this; a longer value is refused before it is parsed.
constexpr std::size_t kMaxEntryBytes = 1024;

[[noreturn]] void malformed(std::string_view what) {
  throw Error(ErrorCategory::format, fmt::format("a commit log entry: {}", what));
}

std::uint64_t field(const JsonValue& entry, std::string_view key, std::uint64_t max) {
  const JsonValue* value = entry.find(key);
  if (value == nullptr || !value->is_integer() || value->integer() < 0 ||
      static_cast<std::uint64_t>(value->integer()) > max)
    malformed(fmt::format("'{}' is missing or not a count up to {}", key, max));
  return static_cast<std::uint64_t>(value->integer());
}

Digest digest(const JsonValue& entry, std::string_view key) {
  const JsonValue* value = entry.find(key);
  if (value == nullptr || !value->is_string() || value->string().size() != 2 * Digest{}.size())
    malformed(fmt::format("'{}' is missing or not 64 hex digits", key));
  Digest out{};
  const std::string& hex = value->string();
  for (std::size_t i = 0; i < out.size(); ++i) {
    const char* first = hex.data() + 2 * i;
    const auto [end, ec] = std::from_chars(first, first + 2, out[i], 16);
    if (ec != std::errc{} || end != first + 2)
      malformed(fmt::format("'{}' is not 64 hex digits", key));
  }
  return out;
}

Digest members_hash(const std::vector<proto::PeerKey>& members) {
  Blake2b hasher;
  for (const proto::PeerKey& key : members) hasher.update(std::as_bytes(std::span(key.bytes)));
  return hasher.finish();
}

}  // namespace

std::string commit_log_prefix(const std::string& prefix) {
  return prefix + "rounds/";
}

std::string commit_log_key(const std::string& prefix, std::uint64_t round) {
  return fmt::format("{}{:020}", commit_log_prefix(prefix), round);
}

std::string encode_commit_entry(const CommitLogEntry& e) {
  return fmt::format(
      R"({{"round":{},"state":"{}","group":{},"epoch":{},"members":{},"members_hash":"{}",)"
      R"("unix_ms":{}}})",
      e.round, to_hex(e.state_hash), e.group_size, e.epoch, e.members, to_hex(e.members_hash),
      e.unix_ms);
}

CommitLogEntry decode_commit_entry(std::string_view value) {
  if (value.size() > kMaxEntryBytes)
    malformed(fmt::format("{} bytes, over the {} an entry takes", value.size(), kMaxEntryBytes));
  JsonValue entry(JsonValue::Object{});
  try {
    entry = checkpoint::parse_json(value, {.max_bytes = kMaxEntryBytes, .max_depth = 1});
  } catch (const Error& e) {
    malformed(e.message());
  }
  if (!entry.is_object()) malformed("not a JSON object");
  // The JSON reader holds int64: a field past it is refused, as no run reaches it.
  constexpr auto kCount = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  constexpr auto kU32 = std::uint64_t{std::numeric_limits<std::uint32_t>::max()};
  return CommitLogEntry{.round = field(entry, "round", kCount),
                        .state_hash = digest(entry, "state"),
                        .group_size = static_cast<std::uint32_t>(field(entry, "group", kU32)),
                        .epoch = field(entry, "epoch", kCount),
                        .members = static_cast<std::uint32_t>(field(entry, "members", kU32)),
                        .members_hash = digest(entry, "members_hash"),
                        .unix_ms = field(entry, "unix_ms", kCount)};
}

std::vector<CommitLogEntry> new_commits(const proto::TrackerSnapshot& state,
                                        std::uint64_t logged_through) {
  std::vector<CommitLogEntry> entries;
  if (state.committed_round <= logged_through) return entries;
  const CommitLogEntry common{.round = 0,
                              .state_hash = {},
                              .group_size = 0,
                              .epoch = state.epoch,
                              .members = static_cast<std::uint32_t>(state.members.size()),
                              .members_hash = members_hash(state.members),
                              .unix_ms = 0};
  for (const proto::RoundRecord& r : state.history) {
    if (r.round <= logged_through || r.round > state.committed_round) continue;
    CommitLogEntry& e = entries.emplace_back(common);
    e.round = r.round;
    e.state_hash = r.state_hash;
    e.group_size = r.group_size;
    e.unix_ms = r.unix_ms;
  }
  if (entries.empty() || entries.back().round != state.committed_round) {
    // Settled on a state no group committed here (a restart that found the run further on).
    CommitLogEntry& e = entries.emplace_back(common);
    e.round = state.committed_round;
    e.state_hash = state.committed_hash;
  }
  return entries;
}

}  // namespace loco::replica
