// HTTPS mirrors (loco/fetch/http_get.hpp) against a real TLS server on loopback
// (tests/support/https_mirror.py, Python's http.server wrapped in ssl) whose self-signed
// certificate the test makes with `openssl req`: a mirror trusted through a CA file is fetched
// from; one the system's store does not trust, or whose certificate names another host, is
// refused with an error naming the mirror and why; the size checks of plain HTTP hold over TLS.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "../support/child_process.hpp"
#include "../support/temp_dir.hpp"
#include "loco/core/error.hpp"
#include "loco/fetch/http_get.hpp"

namespace loco::fetch {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;

// A self-signed certificate for `names` (an X.509 subjectAltName: "IP:127.0.0.1") and its key,
// written to dir/<stem>.pem and dir/<stem>.key.
void make_certificate(const fs::path& dir, const std::string& stem, const std::string& names) {
  test::ChildProcess openssl(
      {"/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
       "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj", "/CN=loco test mirror",
       "-addext", "subjectAltName=" + names, "-keyout", (dir / (stem + ".key")).string(), "-out",
       (dir / (stem + ".pem")).string()},
      dir / (stem + ".log"));
  ASSERT_EQ(openssl.wait(), 0) << "openssl req failed: see " << (dir / (stem + ".log"));
}

// The test's HTTPS mirror of `folder`, serving with the certificate dir/<stem>.pem.
struct TlsMirror {
  TlsMirror(const fs::path& folder, const fs::path& dir, const std::string& stem)
      : process({LOCO_SOURCE_DIR "/tests/support/https_mirror.py", folder.string(),
                 (dir / (stem + ".pem")).string(), (dir / (stem + ".key")).string()},
                dir / (stem + "-mirror.log")) {
    const std::string line = process.read_line();
    const auto at = line.find("https://");
    if (at != std::string::npos) url = line.substr(at);
  }
  test::ChildProcess process;
  std::string url;
};

struct TlsFixture {
  TlsFixture() {
    fs::create_directories(dir / "data");
    for (std::size_t i = 0; i < file.size(); ++i) file[i] = static_cast<char>(i * 7 % 251);
    std::ofstream(dir / "data" / "f.bin", std::ios::binary) << file;
    std::ofstream(dir / "data" / "cut-f.bin", std::ios::binary) << file;
    make_certificate(dir.path(), "loopback", "IP:127.0.0.1");
  }
  // GETs `name` from `url` (trusting `ca_file`): its bytes, or "<category>: <message>".
  std::string get(const std::string& url, const std::string& name, const std::string& ca_file,
                  Want want) {
    std::string body;
    try {
      http_get(parse_http_source(url, ca_file), name, want,
               [&](std::uint64_t at, std::span<const char> bytes) {
                 EXPECT_EQ(at, body.size());
                 body.append(bytes.data(), bytes.size());
               });
    } catch (const Error& e) {
      return std::string(to_string(e.category())) + ": " + e.message();
    }
    return body;
  }
  Want whole() const { return Want{.offset = 0, .total = file.size()}; }

  test::TempDir dir;
  std::string file = std::string(300'000, '\0');  // several TLS records and body chunks
};

TEST(HttpsGet, AMirrorTrustedThroughACaFileIsFetchedFrom) {
  TlsFixture f;
  TlsMirror mirror(f.dir / "data", f.dir.path(), "loopback");
  ASSERT_THAT(mirror.url, HasSubstr("https://127.0.0.1:"));
  EXPECT_EQ(f.get(mirror.url, "f.bin", (f.dir / "loopback.pem").string(), f.whole()), f.file);
}

TEST(HttpsGet, AnUntrustedCertificateIsRefusedNamingTheMirror) {
  TlsFixture f;
  TlsMirror mirror(f.dir / "data", f.dir.path(), "loopback");
  // No CA file: the system's store, which does not hold the test's self-signed certificate.
  EXPECT_THAT(f.get(mirror.url, "f.bin", "", f.whole()),
              AllOf(HasSubstr("network: " + mirror.url +
                              "f.bin: the TLS handshake: the "
                              "certificate is refused (self-signed"),
                    HasSubstr("--peer.data-ca-file")));
  // A certificate the CA file trusts, for another host than the URL's.
  make_certificate(f.dir.path(), "elsewhere", "DNS:mirror.example");
  TlsMirror other(f.dir / "data", f.dir.path(), "elsewhere");
  EXPECT_THAT(f.get(other.url, "f.bin", (f.dir / "elsewhere.pem").string(), f.whole()),
              HasSubstr("network: " + other.url +
                        "f.bin: the TLS handshake: the certificate is refused (not a "
                        "certificate for 127.0.0.1"));
}

TEST(HttpsGet, TheSizeChecksHoldOverTls) {
  TlsFixture f;
  TlsMirror mirror(f.dir / "data", f.dir.path(), "loopback");
  const std::string ca = (f.dir / "loopback.pem").string();
  EXPECT_THAT(
      f.get(mirror.url, "f.bin", ca, Want{.offset = 0, .total = 1000, .exact = false}),
      HasSubstr("format: " + mirror.url + "f.bin: announces more than the file's 1000 bytes"));
  EXPECT_THAT(f.get(mirror.url, "cut-f.bin", ca, f.whole()),
              HasSubstr("network: " + mirror.url +
                        "cut-f.bin: the body ended after 150000 of "
                        "300000 bytes"));
  EXPECT_THAT(f.get(mirror.url, "none.bin", ca, f.whole()),
              HasSubstr("none.bin: serves an HTML page"));  // Python's 404 page
}

TEST(HttpsGet, ACaFileThatCannotBeLoadedIsAConfigError) {
  TlsFixture f;
  TlsMirror mirror(f.dir / "data", f.dir.path(), "loopback");
  EXPECT_THAT(f.get(mirror.url, "f.bin", (f.dir / "missing.pem").string(), f.whole()),
              AllOf(HasSubstr("config: "), HasSubstr("missing.pem")));
}

}  // namespace
}  // namespace loco::fetch
