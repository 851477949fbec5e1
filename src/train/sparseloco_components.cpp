#include "loco/train/sparseloco_components.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "loco/core/error.hpp"
#include "loco/core/sum_of_squares.hpp"
#include "loco/train/tensor_messages.hpp"

namespace loco::train {

std::string SparseLoCoConfig::codec_spec() const {
  const std::string spec =
      fmt::format("chunktopk:chunk={},topk={},values=int{}", chunk, topk, bits);
  return zstd == 0 ? spec : fmt::format("{}+zstd:level={}", spec, zstd);
}

void SparseLoCoConfig::validate() const {
  auto fail = [](const std::string& what) { throw Error(ErrorCategory::config, what); };
  if (inner_steps < 1) fail("strategy.diloco-h (SparseLoCo's H) must be at least 1");
  if (chunk < 1 || chunk > 65536) fail("strategy.sparseloco-chunk must be in [1, 65536]");
  if (topk < 1 || topk > chunk)
    fail(fmt::format("strategy.sparseloco-topk must be in [1, sparseloco-chunk = {}]", chunk));
  if (topk % 8 != 0)
    fail("strategy.sparseloco-topk must be a multiple of 8 (the values' blocks: a scale a chunk)");
  if (bits != 2 && bits != 4 && bits != 8) fail("strategy.sparseloco-bits must be 2, 4 or 8");
  if (!(beta >= 0.0f && beta < 1.0f)) fail("strategy.sparseloco-beta must be in [0, 1)");
  if (!(outer_lr > 0.0f && std::isfinite(outer_lr)))
    fail("strategy.sparseloco-outer-lr must be positive and finite");
  if (!(clip == 0.0f || (clip >= 1.0f && std::isfinite(clip))))
    fail("strategy.sparseloco-clip must be 0 (no clipping) or at least 1");
  if (zstd > 19) fail("strategy.sparseloco-zstd must be 0 (none) or a zstd level in [1, 19]");
}

SparseLoCoComponents::SparseLoCoComponents(std::shared_ptr<const ArenaLayout> layout,
                                           const SparseLoCoConfig& config)
    : layout_(std::move(layout)),
      config_(config),
      codec_(compress::make_codec(config.codec_spec())),
      sum_(layout_),
      scratch_(layout_) {}

std::vector<std::byte> SparseLoCoComponents::contribute(Arena& error, const Arena& theta,
                                                        const Arena& local, Arena& sent) const {
  return encode_tensor_messages(kVersion, *layout_, [&](std::size_t t) {
    const std::span<float> e = error.tensor(t);
    const std::span<const float> old_params = theta.tensor(t);
    const std::span<const float> new_params = local.tensor(t);
    for (std::size_t i = 0; i < e.size(); ++i)
      e[i] = config_.beta * e[i] + (old_params[i] - new_params[i]);
    std::vector<std::byte> message = codec_->encode(e);
    codec_->decode(message, sent.tensor(t));
    return message;
  });
}

void SparseLoCoComponents::forget(Arena& error, const Arena& sent) {
  const std::span<float> e = error.data();
  const std::span<const float> s = sent.data();
  for (std::size_t i = 0; i < e.size(); ++i) e[i] = e[i] - s[i];
}

void SparseLoCoComponents::decode(std::span<const std::byte> message, Arena& out) const {
  decode_tensor_messages(message, "SparseLoCo update", kVersion, *codec_, out);
}

double SparseLoCoComponents::norm_of(std::span<const std::byte> part) {
  try {
    decode(part, scratch_);
  } catch (const Error&) {
    return -1.0;
  }
  const double squares = sum_of_squares(scratch_.data());  // not finite if a value is not
  return std::isfinite(squares) ? std::sqrt(squares) : -1.0;
}

// Norms first (every member the same bits: sum_of_squares is), then each taken part decoded
// again and added to sum_ in member order, scaled where it is over the bound.
std::size_t SparseLoCoComponents::aggregate(std::span<const std::vector<std::byte>> parts,
                                            Arena& out) {
  std::vector<double> norms;
  for (const std::vector<std::byte>& part : parts) norms.push_back(norm_of(part));
  std::vector<double> taken_norms;
  for (const double n : norms)
    if (n >= 0.0) taken_norms.push_back(n);
  clipped_ = 0;
  sum_.fill(0.0f);
  if (!taken_norms.empty()) {
    const auto lower_median = taken_norms.begin() + (taken_norms.size() - 1) / 2;
    std::nth_element(taken_norms.begin(), lower_median, taken_norms.end());
    const double bound = static_cast<double>(config_.clip) * *lower_median;
    for (std::size_t j = 0; j < parts.size(); ++j) {
      if (norms[j] < 0.0) continue;
      decode(parts[j], scratch_);
      const bool clip = config_.clip > 0.0f && norms[j] > bound;
      clipped_ += clip ? 1 : 0;
      const float scale = clip ? static_cast<float>(bound / norms[j]) : 1.0f;
      const std::span<const float> decoded = scratch_.data();
      const std::span<float> sum = sum_.data();
      for (std::size_t i = 0; i < sum.size(); ++i) sum[i] = sum[i] + scale * decoded[i];
    }
  }
  const std::span<const float> sum = sum_.data();
  const std::span<float> mean = out.data();
  const float m = static_cast<float>(std::max<std::size_t>(taken_norms.size(), 1));
  for (std::size_t i = 0; i < mean.size(); ++i) mean[i] = sum[i] / m;
  return taken_norms.size();
}

void apply_sparseloco_update(Arena& theta, const Arena& mean, float outer_lr) {
  const std::span<float> p = theta.data();
  const std::span<const float> u = mean.data();
  for (std::size_t i = 0; i < p.size(); ++i) p[i] = p[i] - outer_lr * u[i];
}

}  // namespace loco::train
