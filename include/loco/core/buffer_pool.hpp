#pragma once
// Large buffers reused from round to round instead of allocated afresh. A round hands vectors the
// size of the model between the compute thread and the network thread (the update, the mean, the
// state it serves); allocated anew each round, every one of their pages is faulted in and zeroed
// by the kernel again, which at 85M parameters cost seconds a round (docs/SCALE.md, peer-scale).
//
// take() gives a buffer of `size` elements, reusing one that came back if there is one; the
// shared_ptr's last owner gives it back, from any thread (the pool's mutex orders that owner's last
// reads before the next taker's writes). The pool keeps at most `spares` buffers; it may die
// before its buffers do.

#include <memory>
#include <mutex>
#include <vector>

namespace loco {

template <typename T>
class BufferPool {
 public:
  explicit BufferPool(std::size_t spares = 1) : shared_(std::make_shared<Shared>()) {
    shared_->spares = spares;
  }

  // Contents unspecified when reused (whatever the last owner left): the taker overwrites them.
  // How many buffers take() had to make because none had come back (the rest were reused).
  std::size_t made() const {
    const std::lock_guard lock(shared_->mutex);
    return shared_->made;
  }

  std::shared_ptr<std::vector<T>> take(std::size_t size) {
    std::vector<T> buffer;
    {
      const std::lock_guard lock(shared_->mutex);
      if (!shared_->free.empty()) {
        buffer = std::move(shared_->free.back());
        shared_->free.pop_back();
      } else {
        ++shared_->made;
      }
    }
    buffer.resize(size);
    auto* owned = new std::vector<T>(std::move(buffer));
    return std::shared_ptr<std::vector<T>>(
        owned, [weak = std::weak_ptr<Shared>(shared_)](std::vector<T>* returned) {
          if (const auto pool = weak.lock()) {
            const std::lock_guard lock(pool->mutex);
            if (pool->free.size() < pool->spares) pool->free.push_back(std::move(*returned));
          }
          delete returned;
        });
  }

 private:
  struct Shared {
    std::mutex mutex;
    std::size_t spares = 0;
    std::size_t made = 0;
    std::vector<std::vector<T>> free;
  };
  std::shared_ptr<Shared> shared_;
};

}  // namespace loco
