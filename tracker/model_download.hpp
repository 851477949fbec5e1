#pragma once
// The model the status page links to (GET /model.safetensors): the newest custody copy's model
// file, as `loco-tracker export` writes it (model_export.hpp), built by its source once per copy.
//
// Every response shares that one file (no copy per client), so what a download costs is a place
// among DownloadLimits::max_downloads, not memory: a download keeps the file it began with, so at
// most max_downloads + 1 files are in memory when newer copies arrive meanwhile. ModelGate hands
// out the places: one at a time per address (net::source_of: an IPv4 address, an IPv6 /64), and
// when all are taken, in the order addresses first asked: an address that asks while every place is
// taken gets a place in line (at most max_waiting addresses wait) and keeps it while it asks again
// within `hold`; a freed place goes to the first in line. So a client asking often gains nothing
// over one asking every few seconds, and one that reads slowly holds its place only while it reads
// at the floor rate (status_http.cpp cuts it off below; docs/TRACKER.md).

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>

namespace loco::tracker {

struct ModelDownload {
  std::uint64_t round = 0;
  std::string filename;  // what the browser saves it as: "<run id>-round-<N>.safetensors"
  std::string bytes;
  // BLAKE2b-256 of `bytes`, hex (`b2sum -l 256`): its ETag, so that a copy fetched from anywhere
  // else can be checked against HEAD /model.safetensors. Empty: none given.
  std::string file_hash{};
};

// The newest model, or null when the tracker holds no custody copy. Called on the server's thread.
using ModelSource = std::function<std::shared_ptr<const ModelDownload>()>;

struct DownloadLimits {
  std::size_t max_downloads = 4;  // written at once, one per address
  std::size_t max_waiting = 256;  // addresses in line for a place
  // An address in line must ask again within this to keep its place (Retry-After says a third).
  std::chrono::milliseconds hold = std::chrono::seconds(15);
  // A download is cut off when it falls below this average rate from its start (after `grace`),
  // or when no byte of it goes out for `grace`.
  std::uint64_t floor_bytes_per_second = std::uint64_t{32} << 10;  // 256 kbit/s
  std::chrono::milliseconds grace = std::chrono::seconds(10);
};

// Throws Error(config) naming the limit that is out of range.
void validate(const DownloadLimits& limits);

class ModelGate {
 public:
  using Clock = std::chrono::steady_clock;

  // A place: the model to write, given back when the lease is dropped. The gate outlives it.
  class Lease {
   public:
    Lease() = default;
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&& other) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease();

    explicit operator bool() const { return model_ != nullptr; }
    const ModelDownload& model() const { return *model_; }
    void reset();

   private:
    friend class ModelGate;
    Lease(ModelGate* gate, std::string address, std::shared_ptr<const ModelDownload> model)
        : gate_(gate), address_(std::move(address)), model_(std::move(model)) {}

    ModelGate* gate_ = nullptr;
    std::string address_;
    std::shared_ptr<const ModelDownload> model_;
  };

  struct Answer {
    Lease lease;  // a place; empty: there is no model, or no place now
    // No place now (zero: there is no model): ask again after this.
    Clock::duration retry_after{};
    std::size_t position = 0;   // in line, from 1; 0: not in line
    bool already = false;       // this address is downloading it now
    std::size_t downloads = 0;  // under way, for the refusal's text
  };

  ModelGate(ModelSource source, DownloadLimits limits);

  // Throws what the source throws.
  Answer take(const std::string& address, Clock::time_point now);
  // The model without a place (for HEAD), or null.
  std::shared_ptr<const ModelDownload> peek() const { return source_ ? source_() : nullptr; }

  std::size_t downloading() const { return active_.size(); }
  std::size_t waiting() const { return line_.size(); }
  const DownloadLimits& limits() const { return limits_; }

 private:
  struct Waiter {
    std::string address;
    Clock::time_point asked;
  };
  Answer refuse(std::size_t position, bool already) const;

  ModelSource source_;
  DownloadLimits limits_;
  std::set<std::string> active_;  // addresses downloading now: at most max_downloads
  std::deque<Waiter> line_;       // in order of their first ask: at most max_waiting
};

}  // namespace loco::tracker
