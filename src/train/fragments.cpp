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

__extension__ typedef unsigned __int128 Wide;  // GCC's and Clang's, exact where 64 bits overflow

// Balanced: P runs of whole tensors in order, cut k (1 ≤ k < P) at the tensor boundary whose
// floats before it are nearest k/P of all (the first such), each run at least one tensor.
std::vector<Fragment> balanced_fragments(const ArenaLayout& layout, std::size_t count) {
  const std::size_t tensors = layout.tensor_count();
  if (count < 1 || count > tensors) {
    throw Error(ErrorCategory::config,
                fmt::format("strategy.fragments must be in [1, {}] (the model's tensors), not {}",
                            tensors, count));
  }
  std::vector<std::uint64_t> before(tensors + 1, 0);  // floats of tensors [0, t)
  for (std::size_t t = 0; t < tensors; ++t) before[t + 1] = before[t] + layout.tensor(t).numel;
  // |before[t]·P − k·total|, in 128 bits: P and the floats are the run's, any size.
  const auto distance = [&](std::size_t t, std::size_t k) {
    const Wide at = static_cast<Wide>(before[t]) * count;
    const Wide target = static_cast<Wide>(before[tensors]) * k;
    return at > target ? at - target : target - at;
  };
  std::vector<Fragment> fragments(count);
  std::size_t first = 0;
  for (std::size_t k = 1; k <= count; ++k) {
    std::size_t end = tensors;  // the last run takes the rest
    if (k < count) {
      end = first + 1;
      while (end + 1 <= tensors - (count - k) && distance(end + 1, k) < distance(end, k)) ++end;
    }
    fragments[k - 1].ranges.push_back(layout.range(first, end));
    fragments[k - 1].floats = fragments[k - 1].ranges.back().size;
    first = end;
  }
  return fragments;
}

}  // namespace

FragmentLayout parse_fragment_layout(std::string_view name) {
  if (name == "sequential") return FragmentLayout::sequential;
  if (name == "strided") return FragmentLayout::strided;
  if (name == "balanced") return FragmentLayout::balanced;
  throw Error(
      ErrorCategory::config,
      fmt::format("strategy.layout must be 'sequential', 'strided' or 'balanced', not '{}'", name));
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
  if (how == FragmentLayout::balanced) return balanced_fragments(layout, count);
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
