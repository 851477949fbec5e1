#pragma once
// Flat parameter memory (llm.c style): one contiguous, 64-byte-aligned fp32 buffer and a table
// of named tensors laid out in it. Parameters, gradients, optimizer moments and outer state are
// separate Arenas that share one ArenaLayout, so tensor i sits at the same offset in each, a
// fragment is a range of tensors, and hashes, codecs and collectives take one span.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace loco {

struct TensorSpec {
  std::string name;
  std::vector<std::size_t> shape;  // row-major, outermost dimension first
};

struct TensorInfo {
  std::string name;
  std::vector<std::size_t> shape;
  std::size_t offset = 0;  // in floats from the start of the arena; a multiple of kAlignFloats
  std::size_t numel = 0;   // product of shape (1 for a scalar)
};

// A contiguous range of floats covering whole tensors [first_tensor, end_tensor).
struct ArenaRange {
  std::size_t first_tensor = 0;
  std::size_t end_tensor = 0;
  std::size_t offset = 0;  // floats
  std::size_t size = 0;    // floats, including alignment padding between the tensors
};

class ArenaLayout {
 public:
  static constexpr std::size_t kAlignBytes = 64;
  static constexpr std::size_t kAlignFloats = kAlignBytes / sizeof(float);

  // Lays the tensors out in the given order, each starting on a 64-byte boundary. Throws
  // Error(invalid_argument) for an empty or duplicate name, a zero dimension, or a size that
  // overflows.
  explicit ArenaLayout(std::vector<TensorSpec> specs);

  std::size_t size() const { return size_; }  // floats, including padding
  std::size_t tensor_count() const { return tensors_.size(); }
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo& tensor(std::size_t index) const;
  std::optional<std::size_t> find(std::string_view name) const;
  std::size_t index_of(std::string_view name) const;  // throws Error if unknown
  std::size_t parameter_count() const;                // sum of numel, without padding

  // The floats spanned by tensors [first, end). Throws Error if the range is empty or out of
  // bounds.
  ArenaRange range(std::size_t first, std::size_t end) const;

  bool operator==(const ArenaLayout& other) const;

 private:
  std::vector<TensorInfo> tensors_;
  std::size_t size_ = 0;
};

class Arena {
 public:
  // Allocates layout->size() floats, all zero (padding stays zero as long as callers write
  // through tensor views only). A large arena takes its pages from the system untouched: they are
  // zero and cost no memory and no time until first written, so a peer holding a 1B-parameter
  // model's gradient, moments and outer momentum does not clear gigabytes before it joins.
  explicit Arena(std::shared_ptr<const ArenaLayout> layout);
  Arena(const Arena& other);
  Arena& operator=(const Arena& other);
  Arena(Arena&&) noexcept = default;
  Arena& operator=(Arena&&) noexcept = default;
  ~Arena() = default;

  const ArenaLayout& layout() const { return *layout_; }
  const std::shared_ptr<const ArenaLayout>& shared_layout() const { return layout_; }

  std::span<float> data() { return {data_.get(), layout_->size()}; }
  std::span<const float> data() const { return {data_.get(), layout_->size()}; }
  std::span<float> range(const ArenaRange& r);
  std::span<const float> range(const ArenaRange& r) const;

  std::span<float> tensor(std::size_t index);
  std::span<const float> tensor(std::size_t index) const;

  // Eigen views of a tensor: arena_maps.hpp.

  void fill(float value);  // every tensor element; padding stays zero
  // Every float zero. A large arena gives its pages back to the system instead of writing them,
  // so zeroing state that is written again later (a fresh momentum) costs neither time nor memory.
  void zero();
  // Every float zero, and every page resident now: for state that a hot loop later writes whole
  // (DiLoCo's outer momentum, at the first round's install). A fresh page's first write is a
  // fault, which on a virtual machine whose host has not backed that memory yet costs ~3 µs a
  // page: ~1 s for the momentum of 85M parameters, taken at start rather than in a round
  // (docs/SCALE.md). A machine short of memory then fails at start, not a round later.
  void zero_resident();
  // Copies the contents of `other`, which must have an equal layout.
  void copy_from(const Arena& other);

 private:
  // Frees what allocate_zeroed() gave: `bytes` mapped pages, or an aligned heap block.
  struct ZeroedFree {
    std::size_t bytes;
    bool mapped;
    void operator()(float* p) const;
  };
  std::shared_ptr<const ArenaLayout> layout_;
  using Memory = std::unique_ptr<float[], ZeroedFree>;
  Memory data_;
};

}  // namespace loco
