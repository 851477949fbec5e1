#include "loco/proto/round_mean.hpp"

#include <algorithm>

#include "loco/core/assert.hpp"

namespace loco::proto {
namespace {

// The fp32 backing's pieces for for_each_chunk: small enough to stay in cache while the caller
// works on them.
constexpr std::size_t kFp32Piece = std::size_t{1} << 14;

}  // namespace

RoundMean::RoundMean(std::shared_ptr<const std::vector<float>> values)
    : owned_(std::move(values)), fp32_(*owned_), values_(fp32_.size()) {}

RoundMean::RoundMean(std::span<const float> values) : fp32_(values), values_(values.size()) {}

std::optional<std::span<const float>> RoundMean::fp32() const {
  if (codec_) return std::nullopt;
  return fp32_;
}

RoundMean::RoundMean(std::vector<std::vector<std::byte>> chunks, std::size_t values,
                     std::size_t chunk_values, std::shared_ptr<const compress::Codec> codec)
    : chunks_(std::move(chunks)),
      values_(values),
      chunk_values_(chunk_values),
      codec_(std::move(codec)) {
  LOCO_ASSERT(chunk_values_ > 0 && chunks_.size() == (values_ + chunk_values_ - 1) / chunk_values_,
              "an encoded mean is one message per chunk");
}

std::size_t RoundMean::bytes() const {
  if (!codec_) return fp32_.size_bytes();
  std::size_t total = 0;
  for (const auto& c : chunks_) total += c.size();
  return total;
}

std::size_t RoundMean::chunk_size(std::size_t k) const {
  return std::min(chunk_values_, values_ - k * chunk_values_);
}

void RoundMean::for_each_chunk(
    const std::function<void(std::size_t first, std::span<const float>)>& fn) const {
  if (!codec_) {
    for (std::size_t at = 0; at < fp32_.size(); at += kFp32Piece)
      fn(at, fp32_.subspan(at, std::min(kFp32Piece, fp32_.size() - at)));
    return;
  }
  std::vector<float> scratch(std::min(chunk_values_, values_));
  for (std::size_t k = 0; k < chunks_.size(); ++k) {
    const std::span<float> values = std::span(scratch).first(chunk_size(k));
    codec_->decode(chunks_[k], values);
    fn(k * chunk_values_, values);
  }
}

void RoundMean::decode(std::size_t first, std::span<float> out) const {
  LOCO_ASSERT(first <= values_ && out.size() <= values_ - first, "a range past the mean's end");
  if (!codec_) {
    const std::span<const float> from = fp32_.subspan(first, out.size());
    std::copy(from.begin(), from.end(), out.begin());
    return;
  }
  thread_local std::vector<float> scratch;  // a chunk the range covers in part
  for (std::size_t done = 0; done < out.size();) {
    const std::size_t at = first + done;
    const std::size_t k = at / chunk_values_;
    const std::size_t begin = k * chunk_values_;
    const std::size_t size = chunk_size(k);
    const std::size_t count = std::min(out.size() - done, begin + size - at);
    const std::span<float> to = out.subspan(done, count);
    if (count == size) {
      codec_->decode(chunks_[k], to);
    } else {
      scratch.resize(size);
      codec_->decode(chunks_[k], scratch);
      std::copy_n(scratch.begin() + static_cast<std::ptrdiff_t>(at - begin), count, to.begin());
    }
    done += count;
  }
}

std::vector<float> RoundMean::values() const {
  std::vector<float> out(values_);
  decode(0, out);
  return out;
}

}  // namespace loco::proto
