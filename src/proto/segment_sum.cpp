#include "loco/proto/segment_sum.hpp"

#include <algorithm>

#include "loco/core/assert.hpp"

namespace loco::proto {

SegmentSum::SegmentSum(std::size_t members, std::size_t chunks, std::size_t trim,
                       std::vector<float> weights, BufferPool<float>* buffers,
                       const compress::Codec* codec)
    : members_(members),
      trim_(trim),
      weights_(std::move(weights)),
      buffers_(buffers),
      waiting_(chunks, std::vector<std::shared_ptr<std::vector<float>>>(members)),
      parts_in_(chunks, 0),
      next_(members, 0),
      hashes_(members),
      codec_(codec) {}

std::shared_ptr<std::vector<float>> SegmentSum::buffer(std::size_t size) {
  return buffers_ != nullptr ? buffers_->take(size) : std::make_shared<std::vector<float>>(size);
}

bool SegmentSum::add(std::size_t m, std::span<const std::byte> encoded,
                     std::shared_ptr<std::vector<float>> values, std::size_t expected) {
  const std::size_t k = next_[m]++;
  LOCO_ASSERT(k < chunks(), "a segment's chunks come in order, each once");
  hashes_[m].add_bytes(encoded);
  waiting_[k][m] = std::move(values);
  return ++parts_in_[k] == expected;
}

bool SegmentSum::add_encoded(std::size_t m, std::span<const std::byte> encoded,
                             const Digest& digest, std::size_t expected) {
  const std::size_t k = next_[m]++;
  LOCO_ASSERT(k < chunks(), "a segment's chunks come in order, each once");
  hashes_[m].add(digest);
  encoded_member_ = m;
  encoded_.resize(chunks());
  encoded_[k] = encoded;
  return ++parts_in_[k] == expected;
}

void SegmentSum::mean(std::size_t k, std::span<float> out) {
  const std::size_t n = members_;
  const std::size_t size = out.size();
  const bool kept_encoded = k < encoded_.size() && !encoded_[k].empty();
  if (kept_encoded) {
    decoded_.resize(size);
    codec_->decode(encoded_[k], decoded_);
    encoded_[k] = {};
  }
  const auto contribution = [&](std::size_t m) -> const float* {
    return kept_encoded && m == encoded_member_ ? decoded_.data() : waiting_[k][m]->data();
  };
  if (trim_ == 0 && weights_.empty()) {
    sum_.assign(size, 0.0f);
    for (std::size_t m = 0; m < n; ++m) {
      const float* x = contribution(m);
      for (std::size_t i = 0; i < size; ++i) sum_[i] = sum_[i] + x[i];
    }
    for (std::size_t i = 0; i < size; ++i) out[i] = sum_[i] / static_cast<float>(n);
  } else if (weights_.empty()) {
    // Every value is finite (the receiver checked), so the order is total.
    const auto kept = static_cast<float>(n - 2 * trim_);
    column_.resize(n);
    for (std::size_t i = 0; i < size; ++i) {
      for (std::size_t m = 0; m < n; ++m) column_[m] = contribution(m)[i];
      std::sort(column_.begin(), column_.end());
      float sum = 0;
      for (std::size_t j = trim_; j < n - trim_; ++j) sum = sum + column_[j];
      out[i] = sum / kept;
    }
  } else {
    order_.resize(n);
    for (std::size_t i = 0; i < size; ++i) {
      for (std::size_t m = 0; m < n; ++m) order_[m] = m;
      const auto value = [&](std::size_t m) { return contribution(m)[i]; };
      if (trim_ > 0)
        std::sort(order_.begin(), order_.end(), [&](std::size_t a, std::size_t b) {
          return value(a) != value(b) ? value(a) < value(b) : a < b;
        });
      float sum = 0, weight = 0;
      for (std::size_t j = trim_; j < n - trim_; ++j) {
        sum = sum + weights_[order_[j]] * value(order_[j]);
        weight = weight + weights_[order_[j]];
      }
      out[i] = sum / weight;
    }
  }
  for (std::shared_ptr<std::vector<float>>& part : waiting_[k]) part.reset();  // back to the pool
}

Digest SegmentSum::digest_of(std::size_t m) const {
  return hashes_[m].finish();
}

}  // namespace loco::proto
