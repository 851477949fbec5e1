#include "loco/compress/spec.hpp"

#include <gtest/gtest.h>

#include "loco/compress/codec.hpp"
#include "loco/core/error.hpp"

namespace loco::compress {
namespace {

std::string config_error(const std::string& spec) {
  try {
    (void)make_codec(spec);
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::config) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "spec '" << spec << "' was accepted";
  return {};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(CodecSpec, ParsesStagesAndParameters) {
  const auto stages = parse_codec_spec("demo:chunk=64,topk=32,values=sign+zstd:level=3");
  ASSERT_EQ(stages.size(), 2u);
  EXPECT_EQ(stages[0].name, "demo");
  ASSERT_EQ(stages[0].params.size(), 3u);
  EXPECT_EQ(stages[0].params[1].first, "topk");
  EXPECT_EQ(stages[0].params[1].second, "32");
  EXPECT_EQ(stages[1].name, "zstd");
  EXPECT_EQ(stages[1].params[0].second, "3");
}

TEST(CodecSpec, BuildsTheDocumentedSpecsWithCanonicalNames) {
  EXPECT_EQ(make_codec("int8:block=256")->spec(), "int8:block=256,round=nearest");
  EXPECT_EQ(make_codec("fp4:block=64")->spec(), "fp4:block=64,round=nearest");
  EXPECT_EQ(make_codec("int8+zstd:level=3")->spec(), "int8:block=256,round=nearest+zstd:level=3");
  EXPECT_EQ(make_codec("bf16")->spec(), "bf16");
  EXPECT_EQ(make_codec("sign:block=32")->spec(), "sign:block=32");
  // A canonical spec builds the same codec again.
  for (const char* spec : {"int8:block=64,round=stochastic", "int4", "fp16", "uint8:k=4"}) {
    const auto codec = make_codec(spec);
    EXPECT_EQ(make_codec(codec->spec())->spec(), codec->spec()) << spec;
  }
}

TEST(CodecSpec, BadSpecsNameTheBadPartAndTheValidChoices) {
  EXPECT_TRUE(contains(config_error("int9"), "unknown codec 'int9'"));
  EXPECT_TRUE(contains(config_error("int9"), "fp4"));  // lists the valid codecs
  EXPECT_TRUE(contains(config_error("int8:blok=64"), "no parameter 'blok'"));
  EXPECT_TRUE(contains(config_error("int8:blok=64"), "valid ones: block, round"));
  EXPECT_TRUE(contains(config_error("int8:block=63"), "multiple of 8"));
  EXPECT_TRUE(contains(config_error("int8:block=abc"), "block=abc"));
  EXPECT_TRUE(contains(config_error("int8:block=4"), "[8, "));
  EXPECT_TRUE(contains(config_error("int8:round=up"), "nearest, stochastic"));
  EXPECT_TRUE(contains(config_error("int8:block"), "not key=value"));
  EXPECT_TRUE(contains(config_error("int8:block=8,block=16"), "given twice"));
  EXPECT_TRUE(contains(config_error("+zstd"), "no codec name"));
  EXPECT_TRUE(contains(config_error("zstd"), "'+zstd' as the last stage"));
  EXPECT_TRUE(contains(config_error("int8+fp16"), "'+zstd' as the last stage"));
  EXPECT_TRUE(contains(config_error("int8+zstd:level=40"), "level=40"));
  EXPECT_TRUE(contains(config_error("topk:values=uint8"), "one of fp32"));
  EXPECT_TRUE(contains(config_error("uint8:k=nan"), "k=nan"));
  EXPECT_TRUE(contains(config_error(""), "no codec name"));
}

}  // namespace
}  // namespace loco::compress
