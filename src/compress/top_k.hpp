#pragma once
// Top-k selection shared by the topk and demo codecs (internal header).

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <span>
#include <utility>
#include <vector>

namespace loco::compress::detail {

// The k largest |values| (ties to the lower index), as ascending indices in out[0..k).
//
// Small k (DeMo's 32 per chunk): one scan keeps the best k so far in a min-heap whose top is the
// worst kept; a later value replaces it only when strictly larger (an equal one has a higher
// index, so it loses the tie), and few values get past the comparison with the top.
// Large k (topk's fraction of a tensor), where heap updates would be many and scattered: find
// the k-th largest magnitude t with nth_element on a copy, then take in index order every value
// above t and the first ones equal to t. Both give the set sorted by (|value| desc, index asc).
template <typename Index>
void select_top_k(std::span<const float> values, std::size_t k,
                  std::vector<std::pair<float, Index>>& heap, Index* out) {
  if (k == 0) return;
  if (k > 256) {
    std::vector<float> magnitude(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) magnitude[i] = std::fabs(values[i]);
    const auto kth = magnitude.begin() + static_cast<std::ptrdiff_t>(k - 1);
    std::nth_element(magnitude.begin(), kth, magnitude.end(), std::greater<float>());
    const float threshold = *kth;
    std::size_t ties_left = k;
    for (float v : values) ties_left -= std::fabs(v) > threshold;
    std::size_t taken = 0;
    for (std::size_t i = 0; i < values.size() && taken < k; ++i) {
      const float m = std::fabs(values[i]);
      if (m > threshold || (m == threshold && ties_left > 0)) {
        if (m == threshold) --ties_left;
        out[taken++] = static_cast<Index>(i);
      }
    }
    return;
  }
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
