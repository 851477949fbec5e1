// The tracker's dataset files (tracker/dataset_files.hpp) and a peer's HTTP client against them
// and against servers that lie (loco/fetch/http_get.hpp): ranges, names outside the manifest,
// HTML, wrong lengths, truncated bodies.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <fstream>
#include <thread>

#include "../support/temp_dir.hpp"
#include "loco/core/error.hpp"
#include "loco/core/hash.hpp"
#include "loco/data/dataset_manifest.hpp"
#include "loco/fetch/http_get.hpp"
#include "sample_status.hpp"
#include "tracker/status_routes.hpp"

namespace loco::tracker {
namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using ::testing::HasSubstr;

// A byte-level dataset of one 1000-token train shard and one 100-token validation shard.
void write_dataset(const std::filesystem::path& folder) {
  data::DatasetManifest m;
  m.shard_tokens = 1000;
  const auto shard = [&](const char* name, std::uint64_t tokens) {
    std::string bytes(tokens * 2, '\0');
    for (std::size_t i = 0; i < bytes.size(); i += 2) bytes[i] = static_cast<char>(i % 251);
    std::ofstream(folder / name, std::ios::binary) << bytes;
    return data::DatasetFile{.name = name,
                             .tokens = tokens,
                             .bytes = bytes.size(),
                             .blake2b = blake2b(std::as_bytes(std::span(bytes)))};
  };
  m.train.push_back(shard("train-00000.bin", 1000));
  m.validation.push_back(shard("val-00000.bin", 100));
  std::ofstream(folder / "manifest.txt", std::ios::binary) << data::encode_manifest(m);
}

struct Served {
  Served() {
    write_dataset(dir.path());
    std::ofstream(dir / "secret.txt") << "not the dataset's";
    dataset.files = DatasetFiles::open(dir.path());
  }
  Reply ask(std::string_view target, std::string_view range = "", bool head = false) {
    http::request_header<> request;
    request.method(head ? http::verb::head : http::verb::get);
    request.target(boost::beast::string_view(target.data(), target.size()));
    request.version(11);
    if (!range.empty()) request.set(http::field::range, std::string(range));
    return respond(request, renderer, nullptr, "", &dataset);
  }
  test::TempDir dir;
  DatasetServe dataset;
  StatusRenderer renderer{[] { return test::sample_status(); }, {}};
};

TEST(DatasetServe, ServesOnlyTheManifestsFilesWithRanges) {
  Served s;
  Reply whole = s.ask("/dataset/train-00000.bin");
  EXPECT_EQ(whole.response.result(), http::status::ok);
  EXPECT_EQ(whole.response[http::field::content_length], "2000");
  ASSERT_TRUE(whole.file.has_value());
  EXPECT_EQ(whole.file->first, 0u);
  EXPECT_EQ(whole.file->end, 2000u);
  EXPECT_EQ(s.dataset.active, 1u);  // a place, held while the body is written
  whole.file.reset();
  EXPECT_EQ(s.dataset.active, 0u);

  const Reply part = s.ask("/dataset/train-00000.bin", "bytes=1500-");
  EXPECT_EQ(part.response.result(), http::status::partial_content);
  EXPECT_EQ(part.response[http::field::content_range], "bytes 1500-1999/2000");
  EXPECT_EQ(part.response[http::field::content_length], "500");
  EXPECT_EQ(s.ask("/dataset/manifest.txt").response[http::field::content_type],
            "text/plain; charset=utf-8");

  // Names outside the manifest, however spelt, are not found.
  for (const char* target : {"/dataset/secret.txt", "/dataset/../dataset/manifest.txt",
                             "/dataset/%2e%2e/secret.txt", "/dataset/", "/dataset//etc/passwd"})
    EXPECT_EQ(s.ask(target).response.result(), http::status::not_found) << target;
  EXPECT_EQ(s.ask("/dataset/train-00000.bin", "bytes=2000-").response.result(),
            http::status::range_not_satisfiable);
  // A HEAD takes no place.
  EXPECT_FALSE(s.ask("/dataset/train-00000.bin", "", true).file.has_value());
}

TEST(DatasetServe, BusyPastItsDownloadsAndNoDatasetIsNotFound) {
  Served s;
  s.dataset.max_downloads = 1;
  const Reply first = s.ask("/dataset/val-00000.bin");
  const Reply second = s.ask("/dataset/val-00000.bin");
  EXPECT_EQ(second.response.result(), http::status::service_unavailable);
  EXPECT_EQ(second.response[http::field::retry_after], "5");
  DatasetServe none;
  http::request_header<> request;
  request.method(http::verb::get);
  request.target("/dataset/manifest.txt");
  request.version(11);
  EXPECT_EQ(respond(request, s.renderer, nullptr, "", &none).response.result(),
            http::status::not_found);
}

TEST(DatasetServe, RangeHeadersMalformedOrNotServedMeanTheWholeFile) {
  using Kind = RangeAsk::Kind;
  EXPECT_EQ(parse_range("bytes=10-", 100).kind, Kind::part);
  EXPECT_EQ(parse_range("bytes=10-19", 100).end, 20u);
  EXPECT_EQ(parse_range("bytes=10-18446744073709551615", 100).end, 100u);
  EXPECT_EQ(parse_range("bytes=100-", 100).kind, Kind::unsatisfiable);
  for (const char* bad :
       {"", "bytes=", "bytes=-5", "bytes=5", "bytes=a-", "bytes=5-3", "bytes=1-2,4-5", "items=1-",
        "bytes= 1-", "bytes=+1-", "bytes=99999999999999999999999-"})
    EXPECT_EQ(parse_range(bad, 100).kind, Kind::whole) << bad;
}

TEST(DatasetServe, AManifestNamingAMissingOrResizedFileIsRefusedAtStart) {
  test::TempDir dir;
  write_dataset(dir.path());
  std::ofstream(dir / "val-00000.bin", std::ios::binary | std::ios::app) << "x";
  EXPECT_THROW(DatasetFiles::open(dir.path()), Error);
  std::filesystem::remove(dir / "val-00000.bin");
  EXPECT_THROW(DatasetFiles::open(dir.path()), Error);
}

// One connection answered with `reply`, whatever it asks; with `trickle`, then a byte every
// `trickle` until the client hangs up.
class CannedServer {
 public:
  explicit CannedServer(std::string reply,
                        std::chrono::milliseconds trickle = std::chrono::milliseconds(0)) {
    thread_ = std::thread([this, reply = std::move(reply), trickle] {
      asio::ip::tcp::socket socket(io_);
      acceptor_.accept(socket);
      asio::streambuf request;
      asio::read_until(socket, request, "\r\n\r\n");
      asio::write(socket, asio::buffer(reply));
      boost::system::error_code ec;
      while (trickle.count() > 0 && !ec) {
        std::this_thread::sleep_for(trickle);
        asio::write(socket, asio::buffer("x", 1), ec);
      }
      socket.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
    });
  }
  ~CannedServer() { thread_.join(); }
  fetch::HttpSource source() const {
    return fetch::parse_http_source(
        "http://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port()) + "/d/");
  }

 private:
  asio::io_context io_;
  asio::ip::tcp::acceptor acceptor_{io_, {asio::ip::make_address("127.0.0.1"), 0}};
  std::thread thread_;
};

// What http_get of 10 bytes from `offset` makes of `reply`: the bytes, or the error's message.
std::string get_from(const std::string& reply, std::uint64_t offset = 0) {
  CannedServer server(reply);
  std::string body;
  try {
    fetch::http_get(server.source(), "f.bin", fetch::Want{.offset = offset, .total = 10},
                    [&](std::uint64_t at, std::span<const char> bytes) {
                      body += std::to_string(at) + ":" + std::string(bytes.data(), bytes.size());
                    });
  } catch (const Error& e) {
    return e.message();
  }
  return body;
}

TEST(HttpGet, TakesOnlyTheBytesAskedForAndNamesWhatIsWrong) {
  EXPECT_EQ(get_from("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789"), "0:0123456789");
  EXPECT_EQ(get_from("HTTP/1.1 206 Partial\r\nContent-Range: bytes 4-9/10\r\nContent-Length: "
                     "6\r\n\r\n456789",
                     4),
            "4:456789");
  // A server ignoring the Range sends the whole file: it starts at 0.
  EXPECT_EQ(get_from("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789", 4), "0:0123456789");
  EXPECT_THAT(get_from("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: "
                       "10\r\n\r\n<html></ht"),
              HasSubstr("serves an HTML page"));
  EXPECT_THAT(get_from("HTTP/1.1 200 OK\r\nContent-Length: 999999\r\n\r\n0123456789"),
              HasSubstr("f.bin: "));
  EXPECT_THAT(get_from("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n012345678"),
              HasSubstr("is 9 bytes, expected 10"));
  EXPECT_THAT(get_from("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n01234"),
              HasSubstr("ended after 5 of 10 bytes"));
  EXPECT_THAT(get_from("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n"
                       "0123456789abcdef\r\n0\r\n\r\n"),
              HasSubstr("more than"));
  EXPECT_THAT(get_from("HTTP/1.1 206 Partial\r\nContent-Range: bytes 0-9/10\r\nContent-Length: "
                       "10\r\n\r\n0123456789",
                       4),
              HasSubstr("answers the range from byte 4 with 'bytes 0-9/10'"));
  EXPECT_THAT(get_from("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"),
              HasSubstr("answers 404"));
  EXPECT_THAT(get_from("HTTP/1.1 200 OK\r\nX: " + std::string(20000, 'x') + "\r\n\r\n"),
              HasSubstr("header over the limit"));
  EXPECT_THAT(get_from("garbage\r\n\r\n"), HasSubstr("f.bin: reading the response"));
}

TEST(HttpGet, ASourceThatTricklesIsCutOffByTheMinimumRate) {
  // A byte every 20 ms meets every read's deadline; 1,000 bytes a second in each 300 ms does not.
  CannedServer server("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n",
                      std::chrono::milliseconds(20));
  const fetch::HttpGetLimits limits{.io_timeout = std::chrono::seconds(5),
                                    .min_bytes_per_s = 1000,
                                    .rate_window = std::chrono::milliseconds(300)};
  std::uint64_t got = 0;
  try {
    fetch::http_get(
        server.source(), "f.bin", fetch::Want{.offset = 0, .total = 100000},
        [&](std::uint64_t, std::span<const char> bytes) { got += bytes.size(); }, limits);
    ADD_FAILURE() << "a trickle of " << got << " bytes was taken whole";
  } catch (const Error& e) {
    EXPECT_EQ(e.category(), ErrorCategory::network);
    EXPECT_THAT(e.message(), HasSubstr("f.bin: slower than the minimum rate: fewer than 300 bytes "
                                       "in 300 ms"));
  }
  EXPECT_LT(got, 100000u);
}

TEST(HttpGet, SourcesAreHttpOrHttpsUrlsOnly) {
  EXPECT_EQ(fetch::parse_http_source("http://m.example:8080/data").path, "/data/");
  EXPECT_EQ(fetch::parse_http_source("http://m.example").port, "80");
  EXPECT_FALSE(fetch::parse_http_source("http://m.example", "ca.pem").tls);
  EXPECT_EQ(fetch::parse_http_source("http://m.example", "ca.pem").ca_file, "");
  const fetch::HttpSource tls = fetch::parse_http_source("https://m.example/d", "ca.pem");
  EXPECT_TRUE(tls.tls);
  EXPECT_EQ(tls.port, "443");
  EXPECT_EQ(tls.path, "/d/");
  EXPECT_EQ(tls.ca_file, "ca.pem");
  for (const char* bad :
       {"ftp://m/", "http://", "https://", "http://:80/", "http://m:0/", "https://m:99999/",
        "http://m:8x/", "http://m/a?b", "https://m/../x/", "m.example/data", "httpss://m/"})
    EXPECT_THROW(fetch::parse_http_source(bad), Error) << bad;
}

}  // namespace
}  // namespace loco::tracker
