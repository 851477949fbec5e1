#include "loco/train/demo_components.hpp"

#include <fmt/format.h>

#include <cmath>

#include "loco/core/error.hpp"
#include "loco/train/tensor_messages.hpp"

namespace loco::train {

std::string DemoConfig::codec_spec() const {
  return fmt::format("demo:chunk={},topk={},values={}", chunk, topk, values);
}

void DemoConfig::validate() const {
  auto fail = [](const std::string& what) { throw Error(ErrorCategory::config, what); };
  if (chunk < 1 || chunk > 128) fail("strategy.demo-chunk must be in [1, 128]");
  if (topk < 1) fail("strategy.demo-topk must be at least 1");
  if (!(beta >= 0.0f && beta < 1.0f)) fail("strategy.demo-beta must be in [0, 1)");
  if (!(weight_decay >= 0.0f)) fail("optim.weight-decay must be non-negative");
  compress::make_codec(codec_spec());  // names a bad strategy.demo-values
}

DemoComponents::DemoComponents(std::shared_ptr<const ArenaLayout> layout, const DemoConfig& config)
    : layout_(std::move(layout)),
      config_(config),
      codec_(compress::make_codec(config.codec_spec())),
      sum_(layout_),
      scratch_(layout_) {}

std::vector<std::byte> DemoComponents::contribute(Arena& momentum, const Arena& grads, float lr,
                                                  Arena& sent) const {
  return encode_tensor_messages(kVersion, *layout_, [&](std::size_t t) {
    const std::span<float> delta = momentum.tensor(t);
    const std::span<const float> g = grads.tensor(t);
    for (std::size_t i = 0; i < delta.size(); ++i) delta[i] = config_.beta * delta[i] + lr * g[i];
    std::vector<std::byte> message =
        codec_->encode(delta, {.seed = 0, .shape = layout_->tensor(t).shape});
    codec_->decode(message, sent.tensor(t));
    return message;
  });
}

void DemoComponents::forget(Arena& momentum, const Arena& sent) {
  const std::span<float> delta = momentum.data();
  const std::span<const float> s = sent.data();
  for (std::size_t i = 0; i < delta.size(); ++i) delta[i] = delta[i] - s[i];
}

void DemoComponents::decode(std::span<const std::byte> message, Arena& out) const {
  decode_tensor_messages(message, "DeMo components", kVersion, *codec_, out);
}

// Each part decodes into scratch_, is checked, then added to sum_ in member order: the same
// additions on every member, so the same bits.
std::size_t DemoComponents::direction(std::span<const std::vector<std::byte>> parts, Arena& out) {
  sum_.fill(0.0f);
  std::size_t taken = 0;
  for (const std::vector<std::byte>& part : parts) {
    try {
      decode(part, scratch_);
    } catch (const Error&) {
      continue;
    }
    const std::span<const float> decoded = scratch_.data();
    bool finite = true;
    for (const float v : decoded) finite = finite && std::isfinite(v);
    if (!finite) continue;
    const std::span<float> sum = sum_.data();
    for (std::size_t i = 0; i < sum.size(); ++i) sum[i] = sum[i] + decoded[i];
    ++taken;
  }
  const std::span<const float> sum = sum_.data();
  const std::span<float> dir = out.data();
  const float m = static_cast<float>(std::max<std::size_t>(taken, 1));
  for (std::size_t i = 0; i < dir.size(); ++i) {
    const float mean = sum[i] / m;
    dir[i] = mean > 0.0f ? 1.0f : (mean < 0.0f ? -1.0f : 0.0f);
  }
  return taken;
}

void apply_demo_update(Arena& params, const Arena& direction, float lr, float weight_decay) {
  const ArenaLayout& layout = params.layout();
  for (std::size_t t = 0; t < layout.tensor_count(); ++t) {
    const float keep = layout.tensor(t).shape.size() >= 2 ? 1.0f - lr * weight_decay : 1.0f;
    const std::span<float> p = params.tensor(t);
    const std::span<const float> d = direction.tensor(t);
    for (std::size_t i = 0; i < p.size(); ++i) p[i] = p[i] * keep - lr * d[i];
  }
}

}  // namespace loco::train
