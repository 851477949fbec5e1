// bench/run.sh codecs: encode and decode throughput (GB/s of fp32 input) of each codec on 64 MiB
// of Gaussian data, single thread, next to memcpy of the same buffer; compressed bytes per
// parameter; relative L2 error. Last line:
// "codecs: int8_enc_vs_memcpy=... int8_dec_vs_memcpy=... fp4_enc_vs_memcpy=... demo_enc_mb_s=...
//  int8_bytes_per_param=..."

#include <omp.h>

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "bench_timer.hpp"
#include "loco/compress/codec.hpp"
#include "loco/core/rng.hpp"

namespace {

struct Result {
  double enc_s = 0, dec_s = 0, bytes_per_param = 0, rel_l2 = 0;
};

}  // namespace

int main(int argc, char** argv) {
  // Optional arguments: run only the codecs whose spec starts with one of them (for profiling).
  const std::vector<std::string> only(argv + 1, argv + argc);
  omp_set_num_threads(1);
  Eigen::setNbThreads(1);
  constexpr std::size_t kRows = 4096, kCols = 4096, kN = kRows * kCols;  // 64 MiB of fp32
  const std::size_t shape[] = {kRows, kCols};
  std::vector<float> x(kN), out(kN), copy(kN);
  loco::Rng rng(1);
  for (auto& v : x) v = rng.normal();
  const double gb = static_cast<double>(kN * sizeof(float)) / 1e9;

  constexpr int kRepeats = 5;
  const double memcpy_s = loco::bench::best_seconds(kRepeats, [&] {
    std::memcpy(copy.data(), x.data(), kN * sizeof(float));
    loco::bench::keep(copy);
  });
  std::printf("%-36s %8s %8s %10s %10s\n", "codec (64 MiB fp32, 1 thread)", "enc GB/s", "dec GB/s",
              "bytes/par", "rel L2");
  std::printf("%-36s %8.2f %8.2f\n", "memcpy", gb / memcpy_s, gb / memcpy_s);

  const char* const specs[] = {
      "fp32",
      "fp16",
      "bf16",
      "int8:block=256",
      "int8:block=256,round=stochastic",
      "uint8:k=3",
      "fp4:block=64",
      "int4:block=64",
      "sign:block=256",
      "topk:fraction=0.01,values=fp16",
      "demo:chunk=64,topk=32,values=sign",
      "demo:chunk=64,topk=32,values=fp16",
      "int8:block=256+zstd:level=1",
  };
  std::map<std::string, Result> results;
  for (const char* spec : specs) {
    if (!only.empty() && std::none_of(only.begin(), only.end(), [&](const std::string& o) {
          return std::string(spec).starts_with(o);
        })) {
      continue;
    }
    const auto codec = loco::compress::make_codec(spec);
    const bool slow =
        std::string(spec).starts_with("topk") || std::string(spec).starts_with("demo");
    const int repeats = slow ? 2 : kRepeats;
    std::vector<std::byte> message;
    Result r;
    r.enc_s = loco::bench::best_seconds(repeats, [&] {
      message = codec->encode(x, {.seed = 1, .shape = shape});
      loco::bench::keep(message);
    });
    r.dec_s = loco::bench::best_seconds(repeats, [&] {
      codec->decode(message, out);
      loco::bench::keep(out);
    });
    double err = 0.0, norm = 0.0;
    for (std::size_t i = 0; i < kN; ++i) {
      err += (double(x[i]) - out[i]) * (double(x[i]) - out[i]);
      norm += double(x[i]) * x[i];
    }
    r.bytes_per_param = static_cast<double>(message.size()) / kN;
    r.rel_l2 = std::sqrt(err / norm);
    std::printf("%-36s %8.2f %8.2f %10.4f %10.4f\n", spec, gb / r.enc_s, gb / r.dec_s,
                r.bytes_per_param, r.rel_l2);
    results[spec] = r;
  }
  if (!only.empty()) return 0;
  const Result& int8 = results["int8:block=256"];
  const Result& fp4 = results["fp4:block=64"];
  const Result& demo = results["demo:chunk=64,topk=32,values=sign"];
  std::printf(
      "codecs: int8_enc_vs_memcpy=%.3f int8_dec_vs_memcpy=%.3f fp4_enc_vs_memcpy=%.3f "
      "fp4_dec_vs_memcpy=%.3f demo_enc_mb_s=%.0f int8_bytes_per_param=%.4f memcpy_gb_s=%.2f\n",
      memcpy_s / int8.enc_s, memcpy_s / int8.dec_s, memcpy_s / fp4.enc_s, memcpy_s / fp4.dec_s,
      gb * 1e3 / demo.enc_s, int8.bytes_per_param, gb / memcpy_s);
}
