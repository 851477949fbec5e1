// make_codec(): spec string -> codec. Each stage's parameters are read and range-checked here,
// so the codec constructors can assume valid values.

#include <algorithm>

#include "codecs.hpp"
#include "loco/compress/codec.hpp"
#include "loco/compress/spec.hpp"
#include "loco/core/error.hpp"

namespace loco::compress {
namespace {

const std::vector<std::string>& codec_names() {
  static const std::vector<std::string> names = {"fp32",  "fp16", "bf16", "int8",
                                                 "uint8", "fp4",  "int4", "int2",
                                                 "sign",  "topk", "demo", "chunktopk"};
  return names;
}

std::string list(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::size_t read_block(StageParams& params, const std::string& codec, std::uint64_t fallback) {
  const std::uint64_t block = params.get_uint("block", fallback, 8, detail::kMaxBlockSize);
  if (block % 8 != 0) {
    throw Error(ErrorCategory::config, "codec '" + codec + "': block=" + std::to_string(block) +
                                           " is invalid; expected a multiple of 8");
  }
  return block;
}

bool read_stochastic(StageParams& params) {
  return params.get_choice("round", "nearest", {"nearest", "stochastic"}) == "stochastic";
}

std::unique_ptr<Codec> make_stage(const StageSpec& stage) {
  StageParams params(stage);
  std::unique_ptr<Codec> codec;
  const std::string& name = stage.name;
  if (name == "fp32") {
    codec = detail::make_fp32();
  } else if (name == "fp16") {
    codec = detail::make_fp16();
  } else if (name == "bf16") {
    codec = detail::make_bf16();
  } else if (name == "int8") {
    const std::size_t block = read_block(params, name, 256);
    codec = detail::make_int8(block, read_stochastic(params));
  } else if (name == "int2") {
    const std::size_t block = read_block(params, name, 64);
    codec = detail::make_int2(block, read_stochastic(params));
  } else if (name == "int4" || name == "fp4") {
    const std::size_t block = read_block(params, name, 64);
    const bool stochastic = read_stochastic(params);
    codec =
        name == "int4" ? detail::make_int4(block, stochastic) : detail::make_fp4(block, stochastic);
  } else if (name == "sign") {
    codec = detail::make_sign(read_block(params, name, 256));
  } else if (name == "uint8") {
    codec = detail::make_uint8(params.get_float("k", 3.0f, 0.5f, 64.0f));
  } else if (name == "topk") {
    const float fraction = params.get_float("fraction", 0.01f, 1e-6f, 1.0f);
    const std::string values = params.get_choice("values", "fp16", detail::value_codec_names());
    codec = detail::make_topk(fraction, values);
  } else if (name == "demo") {
    const std::size_t chunk = params.get_uint("chunk", 64, 1, 128);
    const std::size_t topk = params.get_uint("topk", 32, 1, 128 * 128);
    codec = detail::make_demo(chunk, topk,
                              params.get_choice("values", "fp32", detail::value_codec_names()));
  } else if (name == "chunktopk") {
    const std::size_t chunk = params.get_uint("chunk", 4096, 1, 65536);
    const std::size_t topk = params.get_uint("topk", 64, 1, 65536);
    codec = detail::make_chunk_topk(
        chunk, topk, params.get_choice("values", "int2", detail::value_codec_names()));
  } else {
    throw Error(ErrorCategory::config,
                "unknown codec '" + name + "'; valid codecs: " + list(codec_names()) +
                    ", optionally followed by '+zstd' (e.g. 'int8:block=256+zstd:level=3')");
  }
  params.finish();
  return codec;
}

}  // namespace

std::unique_ptr<Codec> make_codec(std::string_view spec) {
  const auto stages = parse_codec_spec(spec);
  const bool zstd_last = stages.size() == 2 && stages[1].name == "zstd";
  if (stages.size() > 2 || (stages.size() == 2 && !zstd_last) || stages[0].name == "zstd") {
    throw Error(ErrorCategory::config,
                "codec spec '" + std::string(spec) +
                    "': expected one codec, optionally followed by '+zstd' as the last stage");
  }
  auto codec = make_stage(stages[0]);
  if (zstd_last) {
    StageParams params(stages[1]);
    const int level = static_cast<int>(params.get_uint("level", 3, 1, 19));
    params.finish();
    codec = detail::make_zstd(level, std::move(codec));
  }
  return codec;
}

namespace detail {

const std::vector<std::string>& value_codec_names() {
  static const std::vector<std::string> names = {"fp32", "fp16", "bf16", "int8",
                                                 "int4", "int2", "fp4",  "sign"};
  return names;
}

std::unique_ptr<Codec> make_value_codec(const std::string& name, std::size_t block) {
  if (name == "fp32") return make_fp32();
  if (name == "fp16") return make_fp16();
  if (name == "bf16") return make_bf16();
  if (name == "int8") return make_int8(block, false);
  if (name == "int4") return make_int4(block, false);
  if (name == "int2") return make_int2(block, false);
  if (name == "fp4") return make_fp4(block, false);
  if (name == "sign") return make_sign(block);
  throw Error(ErrorCategory::config,
              "codec values=" + name + " is invalid; expected one of " + list(value_codec_names()));
}

}  // namespace detail
}  // namespace loco::compress
