#pragma once
// Top-k selection shared by the topk and demo codecs (internal header).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <utility>
#include <vector>

namespace loco::compress::detail {

// The k largest |values| (ties to the lower index), as ascending indices. One scan keeps the
// best k so far in a min-heap whose top is the worst kept; a later value replaces it only when
// strictly larger (an equal one has a higher index, so it loses the tie). With k much smaller
// than the input, few values get past the comparison with the top.
template <typename Index>
void select_top_k(std::span<const float> values, std::size_t k,
                  std::vector<std::pair<float, Index>>& heap, Index* out) {
  if (k == 0) return;
  const auto worse = [](const auto& a, const auto& b) {  // heap order: the worst on top
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  };
  heap.clear();
  for (std::size_t i = 0; i < k; ++i) {
    heap.emplace_back(std::fabs(values[i]), static_cast<Index>(i));
  }
  std::make_heap(heap.begin(), heap.end(), worse);
  for (std::size_t i = k; i < values.size(); ++i) {
    const float m = std::fabs(values[i]);
    if (m > heap.front().first) {
      std::pop_heap(heap.begin(), heap.end(), worse);
      heap.back() = {m, static_cast<Index>(i)};
      std::push_heap(heap.begin(), heap.end(), worse);
    }
  }
  for (std::size_t j = 0; j < k; ++j) out[j] = heap[j].second;
  std::sort(out, out + k);
}

}  // namespace loco::compress::detail
