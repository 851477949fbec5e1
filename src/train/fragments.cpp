#include "loco/train/fragments.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "loco/core/error.hpp"

namespace loco::train {
namespace {

// The name up to its first all-digit dot-separated component, or "".
std::string_view layer_key(std::string_view name) {
  std::size_t begin = 0;
  while (begin < name.size()) {
    const std::size_t end = std::min(name.find('.', begin), name.size());
    const std::string_view part = name.substr(begin, end - begin);
    if (!part.empty() && std::ranges::all_of(part, [](char c) { return c >= '0' && c <= '9'; }))
      return name.substr(0, end);
    begin = end + 1;
  }
  return {};
}

}  // namespace

FragmentLayout parse_fragment_layout(std::string_view name) {
  if (name == "sequential") return FragmentLayout::sequential;
  if (name == "strided") return FragmentLayout::strided;
  throw Error(ErrorCategory::config,
              fmt::format("strategy.layout must be 'sequential' or 'strided', not '{}'", name));
}

std::vector<std::size_t> tensor_layers(const ArenaLayout& layout) {
  std::vector<std::size_t> layers;
  std::string_view previous;
  for (const TensorInfo& t : layout.tensors()) {
    const std::string_view key = layer_key(t.name);
    if (layers.empty()) {
      layers.push_back(0);
    } else {
      layers.push_back(layers.back() + (key == previous ? 0 : 1));
    }
    previous = key;
  }
  return layers;
}

std::vector<Fragment> make_fragments(const ArenaLayout& layout, std::size_t count,
                                     FragmentLayout how) {
  const std::vector<std::size_t> layers = tensor_layers(layout);
  const std::size_t units = layers.empty() ? 0 : layers.back() + 1;
  if (count < 1 || count > units) {
    throw Error(ErrorCategory::config,
                fmt::format("strategy.fragments must be in [1, {}] (the model's layers), not {}",
                            units, count));
  }
  auto owner = [&](std::size_t layer) {
    return how == FragmentLayout::sequential ? layer * count / units : layer % count;
  };
  std::vector<Fragment> fragments(count);
  std::size_t first = 0;  // a run of tensors with the same owner becomes one range
  for (std::size_t t = 1; t <= layers.size(); ++t) {
    if (t < layers.size() && owner(layers[t]) == owner(layers[first])) continue;
    Fragment& f = fragments[owner(layers[first])];
    f.ranges.push_back(layout.range(first, t));
    f.floats += f.ranges.back().size;
    first = t;
  }
  return fragments;
}

FragmentSchedule::FragmentSchedule(std::uint64_t inner_steps, std::size_t fragments,
                                   std::uint64_t tau)
    : h_(inner_steps), p_(fragments), tau_(tau) {
  if (p_ < 1 || p_ > h_) {
    throw Error(
        ErrorCategory::config,
        fmt::format("strategy.fragments ({}) must be in [1, strategy.diloco-h = {}]", p_, h_));
  }
  if (tau_ * p_ >= h_) {
    throw Error(
        ErrorCategory::config,
        fmt::format("strategy.tau ({}) must be below strategy.diloco-h / strategy.fragments "
                    "= {}/{}: one fragment in flight at a time",
                    tau_, h_, p_));
  }
}

std::uint64_t FragmentSchedule::offset(std::size_t p) const {
  return h_ * (p + 1) / p_;
}

bool FragmentSchedule::at(std::uint64_t first, std::uint64_t step) const {
  return step >= first && (step - first) % h_ == 0;
}

bool FragmentSchedule::sends(std::size_t p, std::uint64_t step) const {
  return at(offset(p), step);
}

bool FragmentSchedule::lands(std::size_t p, std::uint64_t step) const {
  return at(offset(p) + tau_, step);
}

bool FragmentSchedule::in_flight(std::uint64_t step) const {
  for (std::size_t p = 0; p < p_; ++p)
    if (step >= offset(p) && (step - offset(p)) % h_ < tau_) return true;
  return false;
}

}  // namespace loco::train
