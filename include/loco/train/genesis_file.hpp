#pragma once
// A run's model as a genesis file (docs/FORMATS.md, "The genesis file"): a safetensors file whose
// tensors, in data order, are the run's model (names, shapes, order) and whose values are its
// initial parameters. A run config names it with its content hash ([model] kind = "external",
// genesis = PATH, genesis-blake2b = HEX): the hash is one of the run's settings, so the tracker
// refuses a peer of another file by that setting's name, and every reader checks the file's bytes
// against it before anything else. loco's own models write theirs (loco-train --write-genesis),
// a trainer's from its module (loco_write_genesis, loco.write_genesis).
//
// The file is external input (an organiser's, a peer's copy): its hash is checked first, then
// every size by the safetensors reader (checkpoint/safetensors.hpp) before anything is allocated
// from it; F32 and BF16 tensors (and F16, F64) become the fp32 shared state.

#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "loco/core/arena.hpp"

namespace loco::train {

// Tensors a genesis file may hold: more would only be a way to make each reader lay out millions
// of 64-byte-aligned slots (a large language model has a few thousand).
inline constexpr std::size_t kMaxGenesisTensors = 1 << 16;

// A genesis file read: the model's layout and its initial parameters in it.
struct Genesis {
  std::shared_ptr<const ArenaLayout> layout;
  Arena params;
};

// Reads `path` and checks that its BLAKE2b-256 is `blake2b_hex`. Throws Error(io) when it cannot
// be read; Error(config) naming model.genesis-blake2b when the bytes hash to another value;
// Error(format) naming the file when it is not a safetensors file, holds no tensor or more than
// kMaxGenesisTensors, or a tensor with no elements. Costs twice the file's size in memory beside
// the arena, for the call: its bytes (those hashed are those parsed) and the reader's fp32 copy.
Genesis read_genesis(const std::filesystem::path& path, const std::string& blake2b_hex);

// A tensor of a model as its trainer holds it: row-major, contiguous, fp32 or bf16.
struct GenesisTensor {
  std::string_view name;
  std::span<const std::size_t> shape;
  const void* data = nullptr;  // numel fp32s, or numel bf16s (std::uint16_t) when `bf16`
  bool bf16 = false;
};

// Writes `tensors` (in this order, as fp32: a bf16 tensor widened exactly) to `path` atomically
// as a genesis file and returns its BLAKE2b-256 in hex. Deterministic: the same tensors give the
// same bytes. Throws Error(invalid_argument) naming the tensor for no data, a rank over 8 (the
// safetensors reader's), a zero or overflowing dimension, a bad or repeated name, no tensor or
// more than kMaxGenesisTensors; Error(io) when the file cannot be written.
std::string write_genesis(const std::filesystem::path& path,
                          std::span<const GenesisTensor> tensors);

// The lines of a run config that name the genesis file `path` of hash `blake2b_hex`: by its file
// name, as a run config beside it reads it (a relative path is from the config's folder).
std::string genesis_config_lines(const std::filesystem::path& path, const std::string& blake2b_hex);

}  // namespace loco::train
