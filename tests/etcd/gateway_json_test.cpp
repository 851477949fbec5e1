// etcd's JSON gateway bodies: answers captured from etcd 3.4.23 (Debian 12) decode; answers that
// lie about sizes, ranges or shapes are Error(format) before anything is allocated from them.

#include "loco/etcd/gateway_json.hpp"

#include <gtest/gtest.h>

#include <string>

#include "loco/core/error.hpp"

namespace loco::etcd {
namespace {

using replica::delete_key;
using replica::one_key;
using replica::prefix_end;

const std::string kHeader =
    R"("header":{"cluster_id":"15118495548433857066","member_id":"13668033151171901709",)"
    R"("revision":"5","raft_term":"2"})";

const Range kFoo = one_key("foo");
const Range kPrefixA{"a", "b", 0, true};

void expect_format_error(const auto& decode, const std::string& body) {
  try {
    decode(body);
    ADD_FAILURE() << "accepted: " << body;
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::format) << body << ": " << e.what();
  }
}

TEST(GatewayJson, DecodesEtcdsOwnAnswers) {
  const RangeResult found = decode_range(
      "{" + kHeader +
          R"(,"kvs":[{"key":"Zm9v","create_revision":"2","mod_revision":"3","version":"2",)"
          R"("value":"YmFy","lease":"7"}],"count":"1"})",
      kFoo, {});
  EXPECT_EQ(found.revision, 5);
  ASSERT_EQ(found.kvs.size(), 1u);
  EXPECT_EQ(found.kvs[0].key, "foo");
  EXPECT_EQ(found.kvs[0].value, "bar");
  EXPECT_EQ(found.kvs[0].create_revision, 2);
  EXPECT_EQ(found.kvs[0].mod_revision, 3);
  EXPECT_EQ(found.kvs[0].lease, 7);
  EXPECT_TRUE(decode_range("{" + kHeader + "}", kFoo, {}).kvs.empty());  // defaults left out

  const Txn txn{.compare = {}, .success = {Put{"a1", "", 0}}, .failure = {one_key("a1")}};
  const TxnResult put = decode_txn(
      "{" + kHeader +
          R"(,"succeeded":true,"responses":[{"response_put":{"header":{"revision":"5"}}}]})",
      txn, {});
  EXPECT_TRUE(put.succeeded);
  EXPECT_TRUE(put.ranges.empty());
  const TxnResult read = decode_txn(
      "{" + kHeader +
          R"(,"responses":[{"response_range":{"header":{"revision":"5"},"kvs":[{"key":"YTE=",)"
          R"("create_revision":"5","mod_revision":"5","version":"1"}],"count":"1"}}]})",
      txn, {});
  EXPECT_FALSE(read.succeeded);
  ASSERT_EQ(read.ranges.size(), 1u);
  ASSERT_EQ(read.ranges[0].size(), 1u);
  EXPECT_EQ(read.ranges[0][0].value, "");  // an empty value is left out

  const Lease lease =
      decode_lease_grant("{" + kHeader + R"(,"ID":"4111120316572614408","TTL":"2"})", {});
  EXPECT_EQ(lease.id, 4111120316572614408);
  EXPECT_EQ(lease.ttl_s, 2);
  EXPECT_EQ(decode_keepalive(R"({"result":{)" + kHeader + R"(,"ID":"9","TTL":"5"}})" + "\n", {}),
            5);
  EXPECT_EQ(decode_keepalive(R"({"result":{)" + kHeader + R"(,"ID":"9"}})", {}), 0);  // gone
  const GatewayError error = decode_error(
      R"({"error":"etcdserver: requested lease not found","message":"etcdserver: requested lease not found","code":5})",
      {});
  EXPECT_EQ(error.code, 5);
}

TEST(GatewayJson, EncodesKeysAndValuesAsBase64AndCountsAsStrings) {
  EXPECT_EQ(encode_range(kFoo), R"({"key":"Zm9v","range_end":"","limit":"0"})");
  EXPECT_EQ(
      encode_range(kPrefixA),
      R"({"key":"YQ==","range_end":"Yg==","limit":"0","sort_target":"CREATE","sort_order":"ASCEND"})");
  EXPECT_EQ(encode_txn({.compare = {{"k", Compare::Target::mod_revision, 9}},
                        .success = {Put{"k", std::string("\0\xff", 2), 3}},
                        .failure = {delete_key("k")}}),
            R"({"compare":[{"key":"aw==","target":"MOD","result":"EQUAL","mod_revision":"9"}],)"
            R"("success":[{"request_put":{"key":"aw==","value":"AP8=","lease":"3"}}],)"
            R"("failure":[{"request_delete_range":{"key":"aw==","range_end":""}}]})");
  EXPECT_EQ(prefix_end("/run/"), "/run0");
  EXPECT_EQ(prefix_end(std::string("a\xff", 2)), "b");
  EXPECT_EQ(prefix_end("\xff"), std::string(1, '\0'));
}

TEST(GatewayJson, RefusesAnswersThatLie) {
  const GatewayLimits limits{
      .max_body_bytes = 4096, .max_kvs = 2, .max_key_bytes = 8, .max_value_bytes = 6};
  const auto range = [&](const std::string& body) { return decode_range(body, kPrefixA, limits); };
  const auto kv = [](const std::string& fields) {
    return "{" + kHeader + R"(,"kvs":[{)" + fields + R"(}],"count":"1"})";
  };
  const std::string good = R"("key":"YTE=","create_revision":"5","mod_revision":"5")";
  EXPECT_NO_THROW(range(kv(good)));
  for (const std::string& body : {
           std::string("[]"),                               // not an object
           std::string("{}"),                               // no header
           std::string(R"({"header":{"revision":5}})"),     // a number, not a string
           std::string(R"({"header":{"revision":"-5"}})"),  // negative
           std::string(R"({"header":{"revision":"5x"}})"),  // trailing text
           std::string(R"({"header":{"revision":"99999999999999999999"}})"),  // over int64
           "{" + kHeader + R"(,"kvs":{}})",                                   // kvs not an array
           "{" + kHeader + R"(,"kvs":[1]})",                                  // a key not an object
           "{" + kHeader + R"(,"kvs":[{},{},{}]})",                           // over max_kvs
           kv(R"("key":"Yg==","create_revision":"5","mod_revision":"5")"),    // "b": outside [a, b)
           kv(R"("key":"YTE=","create_revision":"0","mod_revision":"5")"),    // no create revision
           kv(R"("key":"YTE=","create_revision":"6","mod_revision":"5")"),    // modified before
                                                                              // created
           kv(good + R"(,"value":"YWFhYWFhYQ==")"),                           // 7 bytes, over 6
           kv(good + R"(,"value":")" + std::string(3000, 'Q') + "\""),  // far over, unallocated
           kv(good + R"(,"value":"YWF")"),                              // not whole base64
           kv(good + R"(,"value":"YW!=")"),                             // not base64
           kv(good + R"(,"value":7)"),                                  // not a string
           kv(good) + R"(,"count":"0")",                                // trailing text
           "{" + kHeader + R"(,"count":"x"})", std::string(5000, ' '),  // over max_body_bytes
       })
    expect_format_error(range, body);
  // A limit asked for is a limit kept.
  expect_format_error(
      [&](const std::string& body) {
        return decode_range(body, Range{"a", "b", 1, true}, limits);
      },
      "{" + kHeader + R"(,"kvs":[{)" + good + "},{" + good + R"(}],"count":"2"})");
}

TEST(GatewayJson, RefusesTxnAnswersThatDoNotMatchTheRequest) {
  const Txn txn{.compare = {}, .success = {Put{"a1", "v", 0}}, .failure = {one_key("a1")}};
  const auto decode = [&](const std::string& body) { return decode_txn(body, txn, {}); };
  for (const std::string& body : {
           "{" + kHeader + R"(,"succeeded":"true","responses":[{"response_put":{}}]})",
           "{" + kHeader + R"(,"succeeded":true})",  // no response
           "{" + kHeader +
               R"(,"succeeded":true,"responses":[{"response_range":{}}]})",  // wrong kind
           "{" + kHeader +
               R"(,"succeeded":true,"responses":[{"response_put":{}},{"response_put":{}}]})",
           "{" + kHeader + R"(,"succeeded":true,"responses":{"response_put":{}}})",
           "{" + kHeader +
               R"(,"succeeded":true,"responses":[{"response_put":{},"response_range":{}}]})",
           "{" + kHeader +
               R"(,"responses":[{"response_range":{"kvs":[{"key":"YTI=",)"
               R"("create_revision":"5","mod_revision":"5"}]}}]})",  // a key it did not ask for
       })
    expect_format_error(decode, body);
  expect_format_error([](const std::string& body) { return decode_lease_grant(body, {}); },
                      "{" + kHeader + R"(,"TTL":"2"})");
  expect_format_error([](const std::string& body) { return decode_keepalive(body, {}); },
                      R"({"result":{"TTL":-1}})");
  expect_format_error([](const std::string& body) { return decode_error(body, {}); },
                      R"({"error":"x","code":"5"})");
  try {
    decode_keepalive(R"({"error":{"message":"lease not found"}})", {});
    ADD_FAILURE() << "a keepalive's error accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::protocol);
  }
}

}  // namespace
}  // namespace loco::etcd
