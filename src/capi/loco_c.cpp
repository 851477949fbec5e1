// The C API (loco/loco.h) over host::TrainerPeer: argument checks, and every exception turned
// into a status and a message at this boundary.

#include <cmath>
#include <cstring>
#include <exception>
#include <filesystem>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "loco/core/error.hpp"
#include "loco/host/trainer_peer.hpp"
#include "loco/loco.h"
#include "loco/secure/identity.hpp"
#include "loco/train/genesis_file.hpp"
#include "loco/train/strategy_kinds.hpp"
#include "loco/version.hpp"

struct loco_peer {
  std::unique_ptr<loco::host::TrainerPeer> peer;
  std::string error;
  std::vector<std::string> data_files;  // loco_peer_data_files'
};

namespace {

using Phase = loco::host::TrainerPeer::Phase;

thread_local std::string t_error;
thread_local std::string t_lines;  // loco_write_genesis's config lines

loco_status status_of(loco::ErrorCategory category) {
  using C = loco::ErrorCategory;
  switch (category) {
    case C::invalid_argument: return LOCO_ERR_INVALID_ARGUMENT;
    case C::config: return LOCO_ERR_CONFIG;
    case C::io: return LOCO_ERR_IO;
    case C::format: return LOCO_ERR_FORMAT;
    case C::crypto: return LOCO_ERR_CRYPTO;
    case C::protocol: return LOCO_ERR_PROTOCOL;
    case C::network: return LOCO_ERR_NETWORK;
    case C::resource: return LOCO_ERR_RESOURCE;
  }
  return LOCO_ERR_INTERNAL;
}

// Records a failure on this thread and, when there is one, on the handle.
loco_status fail(loco_peer* peer, loco_status status, std::string message) {
  t_error = std::move(message);
  if (peer != nullptr) peer->error = t_error;
  return status;
}

// Runs `call`, turning whatever it throws into a status and a message; no exception leaves.
template <typename F>
loco_status guarded(loco_peer* peer, F&& call) noexcept {
  try {
    return call();
  } catch (const loco::Error& e) {
    return fail(peer, status_of(e.category()), e.message());
  } catch (const std::bad_alloc&) {
    return fail(peer, LOCO_ERR_RESOURCE, "out of memory");
  } catch (const std::exception& e) {
    return fail(peer, LOCO_ERR_INTERNAL, std::string("internal error: ") + e.what());
  } catch (...) {
    return fail(peer, LOCO_ERR_INTERNAL, "internal error: an unknown exception");
  }
}

loco_status null_argument(loco_peer* peer, const char* function, const char* argument) {
  return fail(peer, LOCO_ERR_INVALID_ARGUMENT,
              std::string(function) + ": " + argument + " is null");
}

// The handle's peer, or a status for a null or closed handle.
loco_status check_peer(const loco_peer* peer, const char* function) {
  if (peer == nullptr) return null_argument(nullptr, function, "peer");
  return LOCO_OK;
}

// LOCO_ERR_STATE unless `peer` is in `phase` (the call order of loco.h).
loco_status check_phase(loco_peer* peer, Phase phase, const char* function) {
  const Phase now = peer->peer->phase();
  if (now == phase) return LOCO_OK;
  const char* why = now == Phase::left     ? "this peer has left the run"
                    : now == Phase::failed ? "its join failed: close it and open a new peer"
                    : now == Phase::joined ? "this peer has joined already (bind before join)"
                                           : "join the run first";
  return fail(peer, LOCO_ERR_STATE, std::string(function) + ": " + why);
}

// The checks of a bind call, then `bind(shape as a span)`.
template <typename Bind>
loco_status bind_checked(loco_peer* peer, const char* name, const size_t* shape, size_t rank,
                         const char* function, Bind&& bind) {
  if (const loco_status s = check_peer(peer, function); s != LOCO_OK) return s;
  if (name == nullptr) return null_argument(peer, function, "name");
  if (shape == nullptr && rank > 0) return null_argument(peer, function, "shape");
  if (const loco_status s = check_phase(peer, Phase::open, function); s != LOCO_OK) return s;
  return guarded(peer, [&] {
    bind(std::span<const std::size_t>(shape, rank));
    return LOCO_OK;
  });
}

void copy_hash(const loco::Digest& digest, std::uint8_t* out) {
  std::memcpy(out, digest.data(), LOCO_HASH_BYTES);
}

// A round's outcome, times and traffic into `result` (may be null).
void fill_result(const loco_peer* peer, const loco::train::RoundResult& r,
                 loco_round_result* result) {
  if (result == nullptr) return;
  result->kind = static_cast<loco_round_kind>(r.kind);
  result->round = peer->peer->state_round();
  result->members = r.members;
  copy_hash(r.state, result->state_hash);
  const loco::host::RoundTimes& t = peer->peer->last_times();
  result->times = loco_round_times{.gather_s = t.gather_s,
                                   .delta_s = t.diloco.delta_s,
                                   .exchange_s = t.diloco.exchange_s,
                                   .hash_s = t.diloco.hash_s,
                                   .outer_s = t.diloco.outer_s,
                                   .write_back_s = t.write_back_s};
  result->bytes_sent = peer->peer->traffic().sent.load();
  result->bytes_received = peer->peer->traffic().received.load();
  result->step = peer->peer->state_step();
}

// LOCO_ERR_STATE unless the run is a Streaming DiLoCo run.
loco_status check_streaming(const loco_peer* peer, const char* function) {
  if (const loco_status s = check_peer(peer, function); s != LOCO_OK) return s;
  if (peer->peer->streaming() != nullptr) return LOCO_OK;
  return fail(
      const_cast<loco_peer*>(peer), LOCO_ERR_STATE,  // for its error message only
      std::string(function) + ": the run is not a Streaming DiLoCo run ([strategy] kind = \"" +
          std::string(loco::train::strategy_name(loco::train::StrategyKind::streaming)) + "\")");
}

}  // namespace

static_assert(sizeof(loco::Digest) == LOCO_HASH_BYTES);

extern "C" {

const char* loco_version(void) {
  return loco::kVersion;
}

const char* loco_last_error(void) {
  return t_error.c_str();
}

const char* loco_status_name(loco_status status) {
  switch (status) {
    case LOCO_OK: return "LOCO_OK";
    case LOCO_ERR_INVALID_ARGUMENT: return "LOCO_ERR_INVALID_ARGUMENT";
    case LOCO_ERR_CONFIG: return "LOCO_ERR_CONFIG";
    case LOCO_ERR_IO: return "LOCO_ERR_IO";
    case LOCO_ERR_FORMAT: return "LOCO_ERR_FORMAT";
    case LOCO_ERR_CRYPTO: return "LOCO_ERR_CRYPTO";
    case LOCO_ERR_PROTOCOL: return "LOCO_ERR_PROTOCOL";
    case LOCO_ERR_NETWORK: return "LOCO_ERR_NETWORK";
    case LOCO_ERR_RESOURCE: return "LOCO_ERR_RESOURCE";
    case LOCO_ERR_STATE: return "LOCO_ERR_STATE";
    case LOCO_ERR_INTERRUPTED: return "LOCO_ERR_INTERRUPTED";
    case LOCO_ERR_INTERNAL: return "LOCO_ERR_INTERNAL";
    case LOCO_ERR_NOT_READY: return "LOCO_ERR_NOT_READY";
  }
  return "LOCO_ERR_UNKNOWN";
}

loco_status loco_keygen(const char* path, char public_key_hex[65]) {
  return guarded(nullptr, [&] {
    if (path == nullptr) return null_argument(nullptr, "loco_keygen", "path");
    const loco::secure::KeyPair key = loco::secure::KeyPair::generate();
    loco::secure::write_key_file(path, key, /*overwrite=*/false);
    if (public_key_hex != nullptr) {
      const std::string hex = loco::secure::to_hex(key.public_key());
      std::memcpy(public_key_hex, hex.c_str(), hex.size() + 1);
    }
    return LOCO_OK;
  });
}

loco_status loco_write_genesis(const char* path, const loco_tensor* tensors, size_t count,
                               char blake2b_hex[65], const char** config_lines) {
  return guarded(nullptr, [&] {
    if (path == nullptr) return null_argument(nullptr, "loco_write_genesis", "path");
    if (tensors == nullptr && count > 0)
      return null_argument(nullptr, "loco_write_genesis", "tensors");
    std::vector<loco::train::GenesisTensor> model;
    for (size_t i = 0; i < count; ++i) {
      const loco_tensor& t = tensors[i];
      // The dtype's bits, as a C caller may have put any value there (loading it as the enum
      // would be undefined for a value it does not name).
      std::underlying_type_t<loco_dtype> dtype;
      std::memcpy(&dtype, &t.dtype, sizeof dtype);
      if (t.name == nullptr || (t.shape == nullptr && t.rank > 0) ||
          (dtype != LOCO_DTYPE_F32 && dtype != LOCO_DTYPE_BF16))
        return fail(
            nullptr, LOCO_ERR_INVALID_ARGUMENT,
            "loco_write_genesis: tensor " + std::to_string(i) +
                (t.name == nullptr                  ? ": its name is null"
                 : t.shape == nullptr && t.rank > 0 ? ": its shape is null"
                                                    : ": its dtype is neither F32 nor BF16"));
      model.push_back({.name = t.name,
                       .shape = {t.shape, t.rank},
                       .data = t.data,
                       .bf16 = dtype == LOCO_DTYPE_BF16});
    }
    const std::string hash = loco::train::write_genesis(path, model);
    if (blake2b_hex != nullptr) std::memcpy(blake2b_hex, hash.c_str(), hash.size() + 1);
    if (config_lines != nullptr) {
      t_lines = loco::train::genesis_config_lines(path, hash);
      *config_lines = t_lines.c_str();
    }
    return LOCO_OK;
  });
}

loco_status loco_peer_open(const char* config_path, loco_peer** out) {
  if (out != nullptr) *out = nullptr;
  return guarded(nullptr, [&] {
    if (config_path == nullptr) return null_argument(nullptr, "loco_peer_open", "config_path");
    if (out == nullptr) return null_argument(nullptr, "loco_peer_open", "out");
    auto handle = std::make_unique<loco_peer>();
    handle->peer = loco::host::TrainerPeer::open(config_path);
    *out = handle.release();
    return LOCO_OK;
  });
}

void loco_peer_close(loco_peer* peer) {
  if (peer == nullptr) return;
  guarded(peer, [&] {
    peer->peer.reset();  // leaves the run if still in it
    return LOCO_OK;
  });
  delete peer;
}

const char* loco_peer_last_error(const loco_peer* peer) {
  return peer == nullptr ? "" : peer->error.c_str();
}

loco_status loco_peer_tensor_count(const loco_peer* peer, size_t* count) {
  if (const loco_status s = check_peer(peer, "loco_peer_tensor_count"); s != LOCO_OK) return s;
  if (count == nullptr)
    return null_argument(const_cast<loco_peer*>(peer), "loco_peer_tensor_count", "count");
  *count = peer->peer->layout().tensor_count();
  return LOCO_OK;
}

loco_status loco_peer_tensor_info(const loco_peer* peer, size_t index, const char** name,
                                  const size_t** shape, size_t* rank) {
  if (const loco_status s = check_peer(peer, "loco_peer_tensor_info"); s != LOCO_OK) return s;
  auto* mutable_peer = const_cast<loco_peer*>(peer);  // for its error message only
  if (name == nullptr || shape == nullptr || rank == nullptr)
    return null_argument(mutable_peer, "loco_peer_tensor_info", "name, shape or rank");
  const loco::ArenaLayout& layout = peer->peer->layout();
  if (index >= layout.tensor_count())
    return fail(mutable_peer, LOCO_ERR_INVALID_ARGUMENT,
                "loco_peer_tensor_info: index " + std::to_string(index) + " past the model's " +
                    std::to_string(layout.tensor_count()) + " tensors");
  const loco::TensorInfo& info = layout.tensor(index);
  *name = info.name.c_str();
  *shape = info.shape.data();
  *rank = info.shape.size();
  return LOCO_OK;
}

loco_status loco_peer_inner_steps(const loco_peer* peer, uint64_t* steps) {
  if (const loco_status s = check_peer(peer, "loco_peer_inner_steps"); s != LOCO_OK) return s;
  if (steps == nullptr)
    return null_argument(const_cast<loco_peer*>(peer), "loco_peer_inner_steps", "steps");
  *steps = peer->peer->inner_steps();
  return LOCO_OK;
}

loco_status loco_peer_strategy(const loco_peer* peer, const char** kind) {
  if (const loco_status s = check_peer(peer, "loco_peer_strategy"); s != LOCO_OK) return s;
  if (kind == nullptr)
    return null_argument(const_cast<loco_peer*>(peer), "loco_peer_strategy", "kind");
  *kind = peer->peer->strategy().c_str();
  return LOCO_OK;
}

loco_status loco_peer_bind(loco_peer* peer, const char* name, const size_t* shape, size_t rank,
                           float* data) {
  return bind_checked(peer, name, shape, rank, "loco_peer_bind",
                      [&](const auto& dims) { peer->peer->bind(name, dims, data); });
}

loco_status loco_peer_bind_bf16(loco_peer* peer, const char* name, const size_t* shape, size_t rank,
                                uint16_t* data) {
  return bind_checked(peer, name, shape, rank, "loco_peer_bind_bf16",
                      [&](const auto& dims) { peer->peer->bind_bf16(name, dims, data); });
}

loco_status loco_peer_join(loco_peer* peer, double timeout_s, loco_join_info* info) {
  if (const loco_status s = check_peer(peer, "loco_peer_join"); s != LOCO_OK) return s;
  if (!(timeout_s > 0) || !std::isfinite(timeout_s))
    return fail(peer, LOCO_ERR_INVALID_ARGUMENT,
                "loco_peer_join: timeout_s must be a positive number of seconds");
  if (const loco_status s = check_phase(peer, Phase::open, "loco_peer_join"); s != LOCO_OK)
    return s;
  return guarded(peer, [&] {
    const auto joined = peer->peer->join(
        std::chrono::duration_cast<loco::Duration>(std::chrono::duration<double>(timeout_s)));
    if (!joined) return fail(peer, LOCO_ERR_INTERRUPTED, "loco_peer_join: interrupted");
    if (info != nullptr)
      *info = loco_join_info{.fetched = joined->fetched ? 1 : 0,
                             .round = joined->round,
                             .shard_index = joined->shard_index,
                             .shard_count = joined->shard_count,
                             .step = peer->peer->state_step()};
    return LOCO_OK;
  });
}

loco_status loco_peer_data_files(loco_peer* peer, double timeout_s, size_t* count) {
  if (const loco_status s = check_peer(peer, "loco_peer_data_files"); s != LOCO_OK) return s;
  if (count == nullptr || !(timeout_s > 0) || !std::isfinite(timeout_s))
    return fail(peer, LOCO_ERR_INVALID_ARGUMENT,
                "loco_peer_data_files: count must not be null and timeout_s must be a positive "
                "number of seconds");
  if (const loco_status s = check_phase(peer, Phase::joined, "loco_peer_data_files"); s != LOCO_OK)
    return s;
  return guarded(peer, [&] {
    const auto files = peer->peer->data_files(
        std::chrono::duration_cast<loco::Duration>(std::chrono::duration<double>(timeout_s)));
    if (!files) return fail(peer, LOCO_ERR_INTERRUPTED, "loco_peer_data_files: interrupted");
    peer->data_files.clear();
    for (const std::filesystem::path& file : *files) peer->data_files.push_back(file.string());
    *count = peer->data_files.size();
    return LOCO_OK;
  });
}

loco_status loco_peer_data_shard(loco_peer* peer, loco_data_shard* shard) {
  if (const loco_status s = check_peer(peer, "loco_peer_data_shard"); s != LOCO_OK) return s;
  if (shard == nullptr)
    return fail(peer, LOCO_ERR_INVALID_ARGUMENT, "loco_peer_data_shard: shard must not be null");
  if (const loco_status s = check_phase(peer, Phase::joined, "loco_peer_data_shard"); s != LOCO_OK)
    return s;
  return guarded(peer, [&] {
    const loco::host::TrainerPeer::DataShard now = peer->peer->data_shard();
    *shard = loco_data_shard{.index = now.index, .count = now.count, .changes = now.changes};
    return LOCO_OK;
  });
}

const char* loco_peer_data_path(const loco_peer* peer, size_t k) {
  if (peer == nullptr || k >= peer->data_files.size()) return nullptr;
  return peer->data_files[k].c_str();
}

loco_status loco_peer_round(loco_peer* peer, float loss, loco_round_result* result) {
  if (const loco_status s = check_peer(peer, "loco_peer_round"); s != LOCO_OK) return s;
  if (const loco_status s = check_phase(peer, Phase::joined, "loco_peer_round"); s != LOCO_OK)
    return s;
  if (peer->peer->overlapped())
    return fail(peer, LOCO_ERR_STATE,
                "loco_peer_round: this peer overlaps its rounds (loco_peer_round_start, "
                "loco_peer_round_land)");
  return guarded(peer, [&] {
    fill_result(peer, peer->peer->round(loss), result);
    return LOCO_OK;
  });
}

loco_status loco_peer_overlap(loco_peer* peer) {
  if (const loco_status s = check_peer(peer, "loco_peer_overlap"); s != LOCO_OK) return s;
  if (const loco_status s = check_phase(peer, Phase::open, "loco_peer_overlap"); s != LOCO_OK)
    return s;
  return guarded(peer, [&] {
    peer->peer->overlap();
    return LOCO_OK;
  });
}

loco_status loco_peer_round_start(loco_peer* peer, float loss, int* started) {
  if (const loco_status s = check_peer(peer, "loco_peer_round_start"); s != LOCO_OK) return s;
  if (const loco_status s = check_phase(peer, Phase::joined, "loco_peer_round_start"); s != LOCO_OK)
    return s;
  if (!peer->peer->overlapped())
    return fail(peer, LOCO_ERR_STATE,
                "loco_peer_round_start: call loco_peer_overlap before join for overlapped rounds");
  if (peer->peer->round_pending())
    return fail(peer, LOCO_ERR_STATE,
                "loco_peer_round_start: land the round in flight first (loco_peer_round_land)");
  return guarded(peer, [&] {
    const bool mean = peer->peer->round_start(loss);
    if (started != nullptr) *started = mean ? 1 : 0;
    return LOCO_OK;
  });
}

loco_status loco_peer_round_ready(const loco_peer* peer, int* ready) {
  if (const loco_status s = check_peer(peer, "loco_peer_round_ready"); s != LOCO_OK) return s;
  if (ready == nullptr)
    return null_argument(const_cast<loco_peer*>(peer), "loco_peer_round_ready", "ready");
  *ready = peer->peer->landable() ? 1 : 0;
  return LOCO_OK;
}

loco_status loco_peer_round_land(loco_peer* peer, loco_round_result* result) {
  if (const loco_status s = check_peer(peer, "loco_peer_round_land"); s != LOCO_OK) return s;
  if (const loco_status s = check_phase(peer, Phase::joined, "loco_peer_round_land"); s != LOCO_OK)
    return s;
  if (!peer->peer->round_pending())
    return fail(peer, LOCO_ERR_STATE, "loco_peer_round_land: no round started");
  return guarded(peer, [&] {
    fill_result(peer, peer->peer->round_land(), result);
    return LOCO_OK;
  });
}

loco_status loco_peer_streaming(const loco_peer* peer, loco_streaming_info* info) {
  if (const loco_status s = check_streaming(peer, "loco_peer_streaming"); s != LOCO_OK) return s;
  if (info == nullptr)
    return null_argument(const_cast<loco_peer*>(peer), "loco_peer_streaming", "info");
  const loco::train::StreamingConfig& c = peer->peer->streaming()->config();
  *info = loco_streaming_info{.fragments = c.fragments,
                              .inner_steps = c.inner_steps,
                              .tau = c.tau,
                              .alpha = c.alpha,
                              .eager = c.eager != loco::train::Eager::none ? 1 : 0};
  return LOCO_OK;
}

loco_status loco_peer_fragment_tensor_count(const loco_peer* peer, size_t fragment, size_t* count) {
  const char* function = "loco_peer_fragment_tensor_count";
  if (const loco_status s = check_streaming(peer, function); s != LOCO_OK) return s;
  auto* mutable_peer = const_cast<loco_peer*>(peer);  // for its error message only
  if (count == nullptr) return null_argument(mutable_peer, function, "count");
  return guarded(mutable_peer, [&] {
    *count = peer->peer->fragment_tensors(fragment).size();
    return LOCO_OK;
  });
}

loco_status loco_peer_fragment_tensor(const loco_peer* peer, size_t fragment, size_t index,
                                      const char** name) {
  const char* function = "loco_peer_fragment_tensor";
  if (const loco_status s = check_streaming(peer, function); s != LOCO_OK) return s;
  auto* mutable_peer = const_cast<loco_peer*>(peer);
  if (name == nullptr) return null_argument(mutable_peer, function, "name");
  return guarded(mutable_peer, [&] {
    const std::vector<std::size_t>& tensors = peer->peer->fragment_tensors(fragment);
    if (index >= tensors.size())
      return fail(mutable_peer, LOCO_ERR_INVALID_ARGUMENT,
                  std::string(function) + ": index " + std::to_string(index) + " past fragment " +
                      std::to_string(fragment) + "'s " + std::to_string(tensors.size()) +
                      " tensors");
    *name = peer->peer->layout().tensor(tensors[index]).name.c_str();
    return LOCO_OK;
  });
}

loco_status loco_peer_fragment_of(const loco_peer* peer, const char* name, size_t* fragment) {
  const char* function = "loco_peer_fragment_of";
  if (const loco_status s = check_streaming(peer, function); s != LOCO_OK) return s;
  auto* mutable_peer = const_cast<loco_peer*>(peer);
  if (name == nullptr || fragment == nullptr)
    return null_argument(mutable_peer, function, "name or fragment");
  const auto index = peer->peer->layout().find(name);
  if (!index)
    return fail(mutable_peer, LOCO_ERR_INVALID_ARGUMENT,
                std::string(function) + ": the run's model has no tensor " + name);
  return guarded(mutable_peer, [&] {
    *fragment = peer->peer->fragment_of(*index);
    return LOCO_OK;
  });
}

loco_status loco_peer_fragment_next(const loco_peer* peer, size_t* fragment) {
  if (const loco_status s = check_streaming(peer, "loco_peer_fragment_next"); s != LOCO_OK)
    return s;
  if (fragment == nullptr)
    return null_argument(const_cast<loco_peer*>(peer), "loco_peer_fragment_next", "fragment");
  *fragment = peer->peer->next_fragment();
  return LOCO_OK;
}

loco_status loco_peer_fragment_due(const loco_peer* peer, uint64_t step, loco_due* due) {
  if (const loco_status s = check_streaming(peer, "loco_peer_fragment_due"); s != LOCO_OK) return s;
  if (due == nullptr)
    return null_argument(const_cast<loco_peer*>(peer), "loco_peer_fragment_due", "due");
  using Due = loco::host::TrainerPeer::Due;
  const Due d = peer->peer->fragment_due(step);
  *due = d == Due::start ? LOCO_DUE_START : d == Due::land ? LOCO_DUE_LAND : LOCO_DUE_NOTHING;
  return LOCO_OK;
}

loco_status loco_peer_fragment_start(loco_peer* peer, uint64_t step, float loss, size_t* fragment) {
  const char* function = "loco_peer_fragment_start";
  if (const loco_status s = check_streaming(peer, function); s != LOCO_OK) return s;
  if (const loco_status s = check_phase(peer, Phase::joined, function); s != LOCO_OK) return s;
  if (peer->peer->fragment_pending())
    return fail(peer, LOCO_ERR_STATE,
                std::string(function) + ": fragment " +
                    std::to_string(peer->peer->next_fragment()) +
                    "'s round is started; land it first (loco_peer_fragment_land)");
  return guarded(peer, [&] {
    const std::size_t p = peer->peer->fragment_start(step, loss);
    if (fragment != nullptr) *fragment = p;
    return LOCO_OK;
  });
}

loco_status loco_peer_fragment_ready(const loco_peer* peer, int* ready) {
  if (const loco_status s = check_streaming(peer, "loco_peer_fragment_ready"); s != LOCO_OK)
    return s;
  if (ready == nullptr)
    return null_argument(const_cast<loco_peer*>(peer), "loco_peer_fragment_ready", "ready");
  *ready = peer->peer->fragment_ready() ? 1 : 0;
  return LOCO_OK;
}

loco_status loco_peer_fragment_land(loco_peer* peer, int wait, loco_round_result* result) {
  const char* function = "loco_peer_fragment_land";
  if (const loco_status s = check_streaming(peer, function); s != LOCO_OK) return s;
  if (const loco_status s = check_phase(peer, Phase::joined, function); s != LOCO_OK) return s;
  if (!peer->peer->fragment_pending())
    return fail(peer, LOCO_ERR_STATE,
                std::string(function) + ": no fragment round started (loco_peer_fragment_start)");
  if (wait == 0 && !peer->peer->fragment_ready())
    return fail(peer, LOCO_ERR_NOT_READY,
                std::string(function) + ": fragment " +
                    std::to_string(peer->peer->next_fragment()) +
                    "'s round has not ended yet; land it later (loco_peer_fragment_ready) or wait");
  return guarded(peer, [&] {
    fill_result(peer, peer->peer->fragment_land(), result);
    return LOCO_OK;
  });
}

loco_status loco_peer_state_hash(const loco_peer* peer, uint8_t hash[LOCO_HASH_BYTES],
                                 uint64_t* round) {
  if (const loco_status s = check_peer(peer, "loco_peer_state_hash"); s != LOCO_OK) return s;
  if (hash == nullptr)
    return null_argument(const_cast<loco_peer*>(peer), "loco_peer_state_hash", "hash");
  copy_hash(peer->peer->state_hash(), hash);
  if (round != nullptr) *round = peer->peer->state_round();
  return LOCO_OK;
}

loco_status loco_peer_save(loco_peer* peer, const char* path) {
  if (const loco_status s = check_peer(peer, "loco_peer_save"); s != LOCO_OK) return s;
  if (path == nullptr) return null_argument(peer, "loco_peer_save", "path");
  const Phase now = peer->peer->phase();
  if (now != Phase::joined && now != Phase::left)
    return check_phase(peer, Phase::joined, "loco_peer_save");
  return guarded(peer, [&] {
    peer->peer->save(path);
    return LOCO_OK;
  });
}

loco_status loco_peer_load(loco_peer* peer, const char* path) {
  if (const loco_status s = check_peer(peer, "loco_peer_load"); s != LOCO_OK) return s;
  if (path == nullptr) return null_argument(peer, "loco_peer_load", "path");
  if (const loco_status s = check_phase(peer, Phase::open, "loco_peer_load"); s != LOCO_OK)
    return s;
  return guarded(peer, [&] {
    peer->peer->load(path);
    return LOCO_OK;
  });
}

loco_status loco_peer_leave(loco_peer* peer, const char* reason) {
  if (const loco_status s = check_peer(peer, "loco_peer_leave"); s != LOCO_OK) return s;
  return guarded(peer, [&] {
    peer->peer->leave(reason != nullptr ? reason : "left");
    return LOCO_OK;
  });
}

void loco_peer_interrupt(loco_peer* peer) {
  if (peer != nullptr) peer->peer->interrupt();
}

}  // extern "C"
