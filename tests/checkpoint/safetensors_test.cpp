#include "loco/checkpoint/safetensors.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "../support/temp_dir.hpp"
#include "loco/core/error.hpp"

namespace loco::checkpoint {
namespace {

using ::testing::HasSubstr;

std::vector<float> ramp(std::size_t n, float scale) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = scale * (static_cast<float>(i) - 3.5f);
  return v;
}

std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// A safetensors file with the given header and `data_bytes` zero bytes of data.
std::string raw_file(const std::string& header, std::size_t data_bytes) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + std::string(data_bytes, '\0');
}

Error read_error(const std::filesystem::path& path) {
  try {
    SafetensorsFile::read(path);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "read accepted " << path;
  return Error(ErrorCategory::invalid_argument, "none");
}

class SafetensorsTest : public ::testing::Test {
 protected:
  SafetensorsTest()
      : wte_(ramp(6 * 4, 0.25f)), bias_(ramp(4, -1.0f)), scalar_({42.5f}), path_(dir_ / "ck.st") {}

  std::vector<TensorRef> tensors() const {
    return {{"wte", {6, 4}, wte_},
            {"h.0.bias", {4}, bias_},
            {"step", {}, scalar_},
            {"empty", {0, 3}, {}}};
  }
  const Metadata metadata_ = {{"step", "120"},
                              {"cursor", "loco-cursor/1 shard=0/1 ..."},
                              {"config", "{\"n_layer\": 2}\n\"quoted\" caf\xc3\xa9"}};

  test::TempDir dir_;
  std::vector<float> wte_;
  std::vector<float> bias_;
  std::vector<float> scalar_;
  std::filesystem::path path_;
};

TEST_F(SafetensorsTest, RoundTripsTensorsAndMetadata) {
  write_safetensors(path_, tensors(), metadata_);
  const SafetensorsFile file = SafetensorsFile::read(path_);
  EXPECT_EQ(file.metadata(), metadata_);  // the digest entry is not handed back
  EXPECT_TRUE(file.has_digest());
  EXPECT_EQ(file.names(), (std::vector<std::string>{"wte", "h.0.bias", "step", "empty"}));
  for (const TensorRef& t : tensors()) {
    const auto& read = file.tensor(t.name);
    EXPECT_EQ(read.shape, t.shape) << t.name;
    EXPECT_TRUE(std::equal(read.data.begin(), read.data.end(), t.data.begin(), t.data.end()))
        << t.name;
  }
  std::vector<float> copy(4);
  file.copy_to("h.0.bias", copy);
  EXPECT_EQ(copy, bias_);
  EXPECT_TRUE(file.contains("wte"));
  EXPECT_FALSE(file.contains("nope"));
  EXPECT_THROW(file.tensor("nope"), Error);
  std::vector<float> wrong_size(5);
  EXPECT_THROW(file.copy_to("h.0.bias", wrong_size), Error);
}

TEST_F(SafetensorsTest, LayoutIsSafetensors) {
  write_safetensors(path_, tensors(), metadata_);
  const std::string bytes = read_bytes(path_);
  std::uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i)
    header_size = (header_size << 8) | static_cast<unsigned char>(bytes[i]);
  EXPECT_EQ((8 + header_size) % 8, 0u) << "data starts 8-byte aligned";
  const std::size_t data_bytes = (wte_.size() + bias_.size() + scalar_.size()) * 4;
  EXPECT_EQ(bytes.size(), 8 + header_size + data_bytes);
  const std::string header = bytes.substr(8, header_size);
  EXPECT_THAT(header,
              HasSubstr("\"wte\":{\"dtype\":\"F32\",\"shape\":[6,4],\"data_offsets\":[0,96]}"));
  EXPECT_THAT(header, HasSubstr("\"loco.blake2b\":\""));
  float first = 0;
  std::memcpy(&first, bytes.data() + 8 + header_size, 4);
  EXPECT_EQ(first, wte_[0]);
}

TEST_F(SafetensorsTest, WriteReplacesAtomicallyAndLeavesNoTemporaryFiles) {
  write_safetensors(path_, tensors(), {{"step", "1"}});
  write_safetensors(path_, tensors(), {{"step", "2"}});
  EXPECT_EQ(SafetensorsFile::read(path_).metadata().at("step"), "2");
  int files = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir_.path())) {
    ++files;
  }
  EXPECT_EQ(files, 1);
}

TEST_F(SafetensorsTest, WriteRefusesBadInput) {
  const std::vector<float> three(3);
  auto category = [&](std::vector<TensorRef> list, const Metadata& m) {
    try {
      write_safetensors(path_, list, m);
    } catch (const Error& e) {
      return e.category();
    }
    return ErrorCategory::resource;  // "did not throw"
  };
  EXPECT_EQ(category({{"a", {2, 2}, three}}, {}), ErrorCategory::invalid_argument);
  EXPECT_EQ(category({{"a", {3}, three}, {"a", {3}, three}}, {}), ErrorCategory::invalid_argument);
  EXPECT_EQ(category({{"", {3}, three}}, {}), ErrorCategory::invalid_argument);
  EXPECT_EQ(category({{"__metadata__", {3}, three}}, {}), ErrorCategory::invalid_argument);
  EXPECT_EQ(category({{"a", {-3}, three}}, {}), ErrorCategory::invalid_argument);
  EXPECT_EQ(category({{"a", {3}, three}}, {{"loco.blake2b", "x"}}),
            ErrorCategory::invalid_argument);
  EXPECT_EQ(category({{"a\xff", {3}, three}}, {}), ErrorCategory::invalid_argument);
  EXPECT_FALSE(std::filesystem::exists(path_));
  const std::vector<TensorRef> ok = {{"a", {3}, three}};
  try {
    write_safetensors(dir_ / "missing-dir" / "x.st", ok, {});
    ADD_FAILURE() << "wrote into a missing directory";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::io);
  }
}

// The exhaustive checks run on bytes in memory (parse() shares read()'s decoder) to stay fast.
ErrorCategory parse_error(const std::string& bytes) {
  try {
    SafetensorsFile::parse(std::as_bytes(std::span(bytes.data(), bytes.size())), "bytes");
  } catch (const Error& e) {
    return e.category();
  }
  return ErrorCategory::resource;  // "accepted"
}

TEST_F(SafetensorsTest, RefusesEveryTruncation) {
  write_safetensors(path_, tensors(), metadata_);
  const std::string bytes = read_bytes(path_);
  for (std::size_t size = 0; size < bytes.size(); ++size) {
    ASSERT_EQ(parse_error(bytes.substr(0, size)), ErrorCategory::format) << "size " << size;
  }
  write_bytes(path_, bytes.substr(0, bytes.size() - 1));
  EXPECT_EQ(read_error(path_).category(), ErrorCategory::format);
}

TEST_F(SafetensorsTest, RefusesAnySingleBitFlip) {
  // Every byte of the file matters: the length, the header (by its structure or the digest over
  // the metadata and the tensor table) and the data (by the digest). The one exception is the
  // digest's key: renamed, the file reads as one without a digest, with its data unchanged.
  write_safetensors(path_, tensors(), metadata_);
  const std::string bytes = read_bytes(path_);
  const std::size_t key = bytes.find(std::string(kDigestKey));
  ASSERT_NE(key, std::string::npos);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (i >= key && i < key + kDigestKey.size()) continue;
    for (int bit = 0; bit < 8; ++bit) {
      std::string copy = bytes;
      copy[i] = static_cast<char>(copy[i] ^ (1 << bit));
      ASSERT_EQ(parse_error(copy), ErrorCategory::format) << "byte " << i << " bit " << bit;
    }
  }
}

TEST_F(SafetensorsTest, NamesTheProblemInMalformedHeaders) {
  const std::string digest = "\"__metadata__\":{\"loco.blake2b\":\"" + std::string(64, '0') + "\"}";
  const struct {
    std::string header;
    std::size_t data;
    const char* message;
  } cases[] = {
      {"{" + digest + ",\"a\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[0,8]}}", 8,
       "tensor 'a' of dtype I64; loco reads only F32, F16, BF16 and F64"},
      {"{\"a\":{\"dtype\":[\"F32\"],\"shape\":[1],\"data_offsets\":[0,4]}}", 4,
       "of dtype (not a string)"},
      {"{\"a\":{\"dtype\":\"F16\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8,
       "do not span its shape × 2 bytes"},
      {"{" + digest + ",\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8,
       "do not span its shape"},
      {"{" + digest +
           ",\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
           "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
       12, "overlapping or leaving a gap"},
      {"{" + digest + ",\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8,
       "overlapping or leaving a gap"},
      {"{" + digest + ",\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 8,
       "tensors cover 4"},
      {"{" + digest + ",\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}," +
           "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
       8, "twice"},
      {"{" + digest + ",\"a\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4,
       "bad dimension"},
      {"{" + digest +
           ",\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],"
           "\"data_offsets\":[0,4]}}",
       4, "too big"},
      {"{" + digest + ",\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"x\":1}}", 4,
       "exactly dtype, shape and data_offsets"},
      {"{\"__metadata__\":{\"loco.blake2b\":\"00\"}}", 0, "malformed 'loco.blake2b' digest"},
      {"{\"a\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[0,4]}}", 8, "tensors cover 4"},
      {"{" + digest + "}", 0, "does not match its digest"},
      {"{\"__metadata__\":{\"k\":1}}", 0, "not a string"},
      {"[]", 0, "not a JSON object"},
      {"{\"a\":1.5}", 0, "malformed header"},
  };
  for (const auto& c : cases) {
    write_bytes(path_, raw_file(c.header, c.data));
    const Error e = read_error(path_);
    EXPECT_EQ(e.category(), ErrorCategory::format) << c.header;
    EXPECT_THAT(e.what(), HasSubstr(c.message)) << c.header;
    EXPECT_THAT(e.what(), HasSubstr("ck.st")) << c.header;
  }
}

TEST_F(SafetensorsTest, RefusesImpossibleHeaderLengthsBeforeAllocating) {
  std::string huge(8, '\xff');  // 2^64 − 1
  write_bytes(path_, huge + "{}");
  EXPECT_THAT(read_error(path_).what(), HasSubstr("declares a 18446744073709551615-byte header"));
  write_bytes(path_, "\x05");
  EXPECT_THAT(read_error(path_).what(), HasSubstr("too short"));
  EXPECT_EQ(read_error(dir_ / "missing.st").category(), ErrorCategory::io);
}

TEST_F(SafetensorsTest, ParseFromMemoryEqualsRead) {
  write_safetensors(path_, tensors(), metadata_);
  const std::string bytes = read_bytes(path_);
  const SafetensorsFile file =
      SafetensorsFile::parse(std::as_bytes(std::span(bytes.data(), bytes.size())), "in-memory");
  EXPECT_EQ(file.metadata(), metadata_);
  EXPECT_EQ(file.tensor("wte").data[5], wte_[5]);
}

}  // namespace
}  // namespace loco::checkpoint
