#pragma once
// Constructors of the individual codecs (internal header); make_codec() in codec_factory.cpp
// reads a spec and calls these. Parameters are already range-checked here.

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "loco/compress/codec.hpp"

namespace loco::compress::detail {

inline constexpr std::size_t kMaxBlockSize = std::size_t{1} << 24;  // values per scale

std::unique_ptr<Codec> make_fp32();
std::unique_ptr<Codec> make_fp16();
std::unique_ptr<Codec> make_bf16();
std::unique_ptr<Codec> make_int8(std::size_t block, bool stochastic);
std::unique_ptr<Codec> make_int4(std::size_t block, bool stochastic);
std::unique_ptr<Codec> make_int2(std::size_t block, bool stochastic);
std::unique_ptr<Codec> make_fp4(std::size_t block, bool stochastic);
std::unique_ptr<Codec> make_sign(std::size_t block);
std::unique_ptr<Codec> make_uint8(float k_sigma);
std::unique_ptr<Codec> make_topk(double fraction, const std::string& values);
std::unique_ptr<Codec> make_demo(std::size_t chunk, std::size_t topk, const std::string& values);
std::unique_ptr<Codec> make_chunk_topk(std::size_t chunk, std::size_t topk,
                                       const std::string& values);
std::unique_ptr<Codec> make_zstd(int level, std::unique_ptr<Codec> inner);

// The codecs that can carry the values of a sparse codec (topk, demo, chunktopk), by name; block
// codecs get `block` values per scale.
const std::vector<std::string>& value_codec_names();
std::unique_ptr<Codec> make_value_codec(const std::string& name, std::size_t block);

}  // namespace loco::compress::detail
