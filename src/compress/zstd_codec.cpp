// zstd as a final stage over any codec's message:
//   header | mode (u8: 0 = stored, 1 = zstd frame) | inner size (u64) | payload
// The payload is the inner message, compressed when that makes it smaller, otherwise stored, so
// a message is never more than 21 bytes larger than the inner codec's own.

#include <zstd.h>

#include "codecs.hpp"
#include "kernels.hpp"
#include "wire.hpp"

namespace loco::compress::detail {
namespace {

constexpr std::uint8_t kStored = 0;
constexpr std::uint8_t kCompressed = 1;
constexpr std::size_t kStageHeader = kHeaderBytes + 1 + 8;

class ZstdCodec final : public Codec {
 public:
  ZstdCodec(int level, std::unique_ptr<Codec> inner) : level_(level), inner_(std::move(inner)) {}

  std::string spec() const override {
    return inner_->spec() + "+zstd:level=" + std::to_string(level_);
  }
  std::size_t max_encoded_size(std::size_t count) const override {
    return kStageHeader + inner_->max_encoded_size(count);
  }

  std::vector<std::byte> encode(std::span<const float> values,
                                const EncodeOptions& options) const override {
    const std::vector<std::byte> inner = inner_->encode(values, options);
    wire::Writer w(kStageHeader + inner.size());
    w.header(CodecId::zstd, values.size());
    std::vector<std::byte> packed(ZSTD_compressBound(inner.size()));
    const std::size_t size =
        ZSTD_compress(packed.data(), packed.size(), inner.data(), inner.size(), level_);
    if (ZSTD_isError(size)) {
      throw Error(ErrorCategory::resource,
                  std::string("zstd encode failed: ") + ZSTD_getErrorName(size));
    }
    const bool pays = size < inner.size();
    w.u8(pays ? kCompressed : kStored);
    w.u64(inner.size());
    if (pays) {
      w.raw(packed.data(), size);
    } else {
      w.raw(inner.data(), inner.size());
    }
    return w.finish();
  }

  void decode(std::span<const std::byte> message, std::span<float> out) const override {
    std::vector<std::byte> buffer;
    inner_->decode(unpack(message, out.size(), buffer), out);
  }
  void decode_accumulate(std::span<const std::byte> message, std::span<float> sum) const override {
    std::vector<std::byte> buffer;
    inner_->decode_accumulate(unpack(message, sum.size(), buffer), sum);
  }

 private:
  // The inner message: a view into `message` when stored, else decompressed into `buffer`.
  std::span<const std::byte> unpack(std::span<const std::byte> message, std::size_t count,
                                    std::vector<std::byte>& buffer) const {
    wire::Reader r(message, "zstd");
    r.header(CodecId::zstd, count);
    const std::uint8_t mode = r.u8();
    const std::uint64_t inner_size = r.u64();
    // The bound comes from the count the receiver expects, never from the message alone.
    if (inner_size > inner_->max_encoded_size(count)) {
      r.fail("declares an inner message of " + std::to_string(inner_size) +
             " bytes, more than the inner codec can produce for " + std::to_string(count) +
             " values");
    }
    if (mode == kStored) {
      r.expect_remaining(inner_size);
      return r.rest();
    }
    if (mode != kCompressed) r.fail("unknown mode " + std::to_string(mode));
    const std::span<const std::byte> frame = r.rest();
    const unsigned long long declared = ZSTD_getFrameContentSize(frame.data(), frame.size());
    if (declared != inner_size) r.fail("the zstd frame does not declare the inner size");
    buffer.resize(inner_size);
    const std::size_t got =
        ZSTD_decompress(buffer.data(), buffer.size(), frame.data(), frame.size());
    if (ZSTD_isError(got) || got != inner_size) r.fail("the zstd frame is corrupt");
    return buffer;
  }

  int level_;
  std::unique_ptr<Codec> inner_;
};

}  // namespace

std::unique_ptr<Codec> make_zstd(int level, std::unique_ptr<Codec> inner) {
  return std::make_unique<ZstdCodec>(level, std::move(inner));
}

}  // namespace loco::compress::detail
