#include "loco/train/local_async_group.hpp"

#include <algorithm>

#include "loco/core/assert.hpp"

namespace loco::train {

class LocalAsyncGroup::Member final : public AsyncOuterGroup {
 public:
  Member(LocalAsyncGroup& group, std::size_t index) : group_(group), index_(index) {}
  std::size_t members() const override { return group_.size_; }
  Handle start_round(std::size_t, std::span<const float> delta, Landing landing) override {
    const Handle handle = next_++;  // every member starts rounds in the same order
    landings_.emplace(handle, std::move(landing));
    group_.deposit(index_, handle, group_.codec_->encode(delta, {.seed = handle}), delta.size());
    return handle;
  }
  RoundResult finish_round(Handle handle) override {
    const Landing landing = std::move(landings_.at(handle));
    landings_.erase(handle);
    group_.collect(handle, mean_);
    landing.tentative(mean_);
    landing.install();
    return RoundResult{.kind = RoundResult::Kind::committed, .members = group_.size_};
  }

 private:
  LocalAsyncGroup& group_;
  std::size_t index_;
  Handle next_ = 0;
  std::map<Handle, Landing> landings_;  // of the rounds started and not finished
  std::vector<float> mean_;
};

LocalAsyncGroup::LocalAsyncGroup(std::size_t members, std::string_view codec)
    : size_(members), codec_(compress::make_codec(codec)), bytes_(members, 0) {
  LOCO_ASSERT(members >= 1, "a group has at least one member");
  for (std::size_t i = 0; i < members; ++i) members_.push_back(std::make_unique<Member>(*this, i));
}

LocalAsyncGroup::~LocalAsyncGroup() = default;

AsyncOuterGroup& LocalAsyncGroup::member(std::size_t index) {
  return *members_.at(index);
}

std::uint64_t LocalAsyncGroup::bytes_handed_over(std::size_t member) const {
  const std::lock_guard lock(mutex_);
  return bytes_.at(member);
}

std::uint64_t LocalAsyncGroup::largest_message() const {
  const std::lock_guard lock(mutex_);
  return largest_;
}

void LocalAsyncGroup::deposit(std::size_t index, AsyncOuterGroup::Handle handle,
                              std::vector<std::byte> message, std::size_t floats) {
  const std::lock_guard lock(mutex_);
  bytes_[index] += message.size();
  largest_ = std::max<std::uint64_t>(largest_, message.size());
  Round& round = rounds_[handle];
  round.messages.resize(size_);
  round.floats = floats;
  LOCO_ASSERT(round.messages[index].empty(), "a member started the same round twice");
  round.messages[index] = std::move(message);
  if (++round.arrived == size_) arrived_.notify_all();
}

// Decoding happens under the lock: simple, and the messages cannot move meanwhile. The sum runs in
// member order from zero, then divides by M, as ThreadGroup does, so fp32 gives DiLoCo's bits.
void LocalAsyncGroup::collect(AsyncOuterGroup::Handle handle, std::vector<float>& mean) {
  std::unique_lock lock(mutex_);
  arrived_.wait(lock, [&] {
    const auto it = rounds_.find(handle);
    return it != rounds_.end() && it->second.arrived == size_;
  });
  Round& round = rounds_.at(handle);
  mean.assign(round.floats, 0.0f);
  for (const auto& message : round.messages) codec_->decode_accumulate(message, mean);
  const auto m = static_cast<float>(size_);
  for (float& v : mean) v = v / m;
  if (++round.finished == size_) rounds_.erase(handle);
}

}  // namespace loco::train
