#include "loco/core/arena.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <new>
#include <unordered_set>

#include "loco/core/assert.hpp"
#include "loco/core/error.hpp"

namespace loco {
namespace {

std::size_t checked_mul(std::size_t a, std::size_t b, const std::string& what) {
  if (a != 0 && b > std::numeric_limits<std::size_t>::max() / a) {
    throw Error(ErrorCategory::invalid_argument, what + " is too large (size overflows)");
  }
  return a * b;
}

std::size_t round_up(std::size_t n, std::size_t multiple) {
  return (n + multiple - 1) / multiple * multiple;
}

// From this size up, an arena is an anonymous mapping: the kernel hands out zero pages on first
// touch, so neither the allocation nor a zeroing writes memory. Smaller arenas (a tiny model's,
// the tests') stay on the heap, where a syscall per arena would cost more than the memset.
constexpr std::size_t kMappedBytes = std::size_t{1} << 20;

}  // namespace

ArenaLayout::ArenaLayout(std::vector<TensorSpec> specs) {
  std::unordered_set<std::string> names;
  tensors_.reserve(specs.size());
  // Tensors are capped well below size_t so that offset arithmetic elsewhere cannot overflow.
  constexpr std::size_t kMaxFloats = std::size_t{1} << 40;
  for (auto& spec : specs) {
    if (spec.name.empty()) {
      throw Error(ErrorCategory::invalid_argument, "a tensor in the arena layout has no name");
    }
    if (!names.insert(spec.name).second) {
      throw Error(ErrorCategory::invalid_argument,
                  "tensor name '" + spec.name + "' appears twice in the arena layout");
    }
    std::size_t numel = 1;
    for (std::size_t dim : spec.shape) {
      if (dim == 0) {
        throw Error(ErrorCategory::invalid_argument,
                    "tensor '" + spec.name + "' has a zero dimension");
      }
      numel = checked_mul(numel, dim, "tensor '" + spec.name + "'");
    }
    if (numel > kMaxFloats || size_ > kMaxFloats) {
      throw Error(ErrorCategory::invalid_argument,
                  "tensor '" + spec.name + "' does not fit in an arena (limit 2^40 floats)");
    }
    tensors_.push_back(TensorInfo{std::move(spec.name), std::move(spec.shape), size_, numel});
    size_ = round_up(size_ + numel, kAlignFloats);
  }
}

const TensorInfo& ArenaLayout::tensor(std::size_t index) const {
  LOCO_ASSERT(index < tensors_.size(), "tensor index out of range");
  return tensors_[index];
}

std::optional<std::size_t> ArenaLayout::find(std::string_view name) const {
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    if (tensors_[i].name == name) return i;
  }
  return std::nullopt;
}

std::size_t ArenaLayout::index_of(std::string_view name) const {
  if (auto index = find(name)) return *index;
  throw Error(ErrorCategory::invalid_argument,
              "no tensor named '" + std::string(name) + "' in the arena layout");
}

std::size_t ArenaLayout::parameter_count() const {
  std::size_t total = 0;
  for (const auto& t : tensors_) total += t.numel;
  return total;
}

ArenaRange ArenaLayout::range(std::size_t first, std::size_t end) const {
  if (first >= end || end > tensors_.size()) {
    throw Error(ErrorCategory::invalid_argument,
                "tensor range [" + std::to_string(first) + ", " + std::to_string(end) +
                    ") is empty or beyond the " + std::to_string(tensors_.size()) +
                    " tensors of the layout");
  }
  const std::size_t begin_offset = tensors_[first].offset;
  const std::size_t end_offset = end == tensors_.size() ? size_ : tensors_[end].offset;
  return ArenaRange{first, end, begin_offset, end_offset - begin_offset};
}

bool ArenaLayout::operator==(const ArenaLayout& other) const {
  if (size_ != other.size_ || tensors_.size() != other.tensors_.size()) return false;
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    const auto& a = tensors_[i];
    const auto& b = other.tensors_[i];
    if (a.name != b.name || a.shape != b.shape || a.offset != b.offset) return false;
  }
  return true;
}

void Arena::ZeroedFree::operator()(float* p) const {
  if (mapped)
    ::munmap(p, bytes);
  else
    ::operator delete[](p, std::align_val_t{ArenaLayout::kAlignBytes});
}

Arena::Arena(std::shared_ptr<const ArenaLayout> layout) : layout_(std::move(layout)) {
  LOCO_ASSERT(layout_ != nullptr, "an arena needs a layout");
  // Allocate at least one block so data() is never null, even for an empty layout.
  const std::size_t bytes = std::max(layout_->size(), ArenaLayout::kAlignFloats) * sizeof(float);
  if (bytes >= kMappedBytes) {
    // Page-aligned, so 64-byte aligned.
    void* pages =
        ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pages == MAP_FAILED) throw std::bad_alloc();
    data_ = Memory(static_cast<float*>(pages), ZeroedFree{bytes, true});
    return;
  }
  auto* raw =
      static_cast<float*>(::operator new[](bytes, std::align_val_t{ArenaLayout::kAlignBytes}));
  std::memset(raw, 0, bytes);
  data_ = Memory(raw, ZeroedFree{bytes, false});
}

Arena::Arena(const Arena& other) : Arena(other.layout_) {
  copy_from(other);
}

Arena& Arena::operator=(const Arena& other) {
  if (this != &other) {
    Arena copy(other);
    *this = std::move(copy);
  }
  return *this;
}

std::span<float> Arena::range(const ArenaRange& r) {
  LOCO_ASSERT(r.offset + r.size <= layout_->size(), "arena range out of bounds");
  return data().subspan(r.offset, r.size);
}

std::span<const float> Arena::range(const ArenaRange& r) const {
  LOCO_ASSERT(r.offset + r.size <= layout_->size(), "arena range out of bounds");
  return data().subspan(r.offset, r.size);
}

std::span<float> Arena::tensor(std::size_t index) {
  const TensorInfo& t = layout_->tensor(index);
  return data().subspan(t.offset, t.numel);
}

std::span<const float> Arena::tensor(std::size_t index) const {
  const TensorInfo& t = layout_->tensor(index);
  return data().subspan(t.offset, t.numel);
}

void Arena::fill(float value) {
  for (std::size_t i = 0; i < layout_->tensor_count(); ++i) {
    std::ranges::fill(tensor(i), value);
  }
}

void Arena::zero() {
  const ZeroedFree& memory = data_.get_deleter();
  // Dropping a private anonymous mapping's pages makes them read as zero again.
  if (memory.mapped && ::madvise(data_.get(), memory.bytes, MADV_DONTNEED) == 0) return;
  std::memset(data_.get(), 0, memory.bytes);
}

void Arena::zero_resident() {
  const ZeroedFree& memory = data_.get_deleter();
#ifdef MADV_POPULATE_WRITE
  // Linux 5.14 on: the kernel faults the zeroed pages in at once, without a write from here.
  if (memory.mapped && ::madvise(data_.get(), memory.bytes, MADV_DONTNEED) == 0 &&
      ::madvise(data_.get(), memory.bytes, MADV_POPULATE_WRITE) == 0)
    return;
#endif
  std::memset(data_.get(), 0, memory.bytes);
}

void Arena::copy_from(const Arena& other) {
  if (!(other.layout() == *layout_)) {
    throw Error(ErrorCategory::invalid_argument, "cannot copy between arenas of different layouts");
  }
  if (other.data_.get() != data_.get()) {
    std::memcpy(data_.get(), other.data_.get(), layout_->size() * sizeof(float));
  }
}

}  // namespace loco
