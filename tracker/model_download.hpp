#pragma once
// The model the status page links to (GET /model.safetensors): the newest custody copy's model
// file, as `loco-tracker export` writes it (model_export.hpp), built by its source once per copy.
// A response holds a copy of the file until it is written (at most
// StatusHttpLimits::download_timeout), so ModelGate hands the file out at most once per interval:
// at most download_timeout / interval + 1 copies are in memory at once, however many ask.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace loco::tracker {

struct ModelDownload {
  std::uint64_t round = 0;
  std::string filename;  // what the browser saves it as: "<run id>-round-<N>.safetensors"
  std::string bytes;
};

// The newest model, or null when the tracker holds no custody copy. Called on the server's thread.
using ModelSource = std::function<std::shared_ptr<const ModelDownload>()>;

class ModelGate {
 public:
  using Clock = std::chrono::steady_clock;

  ModelGate(ModelSource source, Clock::duration interval)
      : source_(std::move(source)), interval_(interval) {}

  struct Answer {
    std::shared_ptr<const ModelDownload> model;  // null: there is none, or not now
    Clock::duration retry_after{};               // not now: the next one may go after this
  };
  // Throws what the source throws.
  Answer take(Clock::time_point now);

 private:
  ModelSource source_;
  Clock::duration interval_;
  std::optional<Clock::time_point> last_;  // the last one handed out
};

}  // namespace loco::tracker
