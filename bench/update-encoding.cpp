// bench/run.sh update-encoding [VALUES]: what a member of the direct exchange does to its update
// once a round before it sends (proto/encoded_update.hpp): encode and hash it in units (int8,
// blocks of 256, units of 65,536 values; each unit hashed as it is encoded), then sign every
// unit's digest (proto/unit_evidence.hpp), on one thread and on two. VALUES defaults to the 85M GPT
// of peer-scale (85,350,912). Best of three. Last line: "update-encoding: values=... units=...
// encode_s_1t=... sign_s_1t=... encode_s_2t=... sign_s_2t=..."

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_timer.hpp"
#include "loco/compress/codec.hpp"
#include "loco/core/rng.hpp"
#include "loco/proto/all_reduce.hpp"
#include "loco/proto/encoded_update.hpp"

int main(int argc, char** argv) {
  const std::size_t values = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 85'350'912;
  std::vector<float> update(values);
  loco::Rng rng(1);
  for (float& v : update) v = 1e-3f * rng.normal();
  const auto codec = loco::compress::make_codec("int8:block=256");
  const std::size_t unit = loco::proto::direct_chunk_values(values, std::size_t{1} << 16);
  const loco::secure::KeyPair key = loco::secure::KeyPair::generate();
  const loco::proto::PeerKey member = key.public_key();

  double encode_s[2] = {}, sign_s[2] = {};
  std::size_t units = 0;
  for (const int threads : {1, 2}) {
    encode_s[threads - 1] = loco::bench::best_seconds(3, [&] {
      const loco::proto::EncodedUpdate e(*codec, update, unit, 7, member, threads);
      units = e.units();
      loco::bench::keep(e);
    });
    loco::proto::EncodedUpdate encoded(*codec, update, unit, 7, member, threads);
    sign_s[threads - 1] = loco::bench::best_seconds(3, [&] {
      encoded.sign(key, "bench run", 7, threads);
      loco::bench::keep(encoded.signature(0));
    });
    std::printf("%d thread(s): encode and hash %.3f s, sign %zu units %.3f s\n", threads,
                encode_s[threads - 1], units, sign_s[threads - 1]);
  }
  std::printf(
      "update-encoding: values=%zu units=%zu encode_s_1t=%.3f sign_s_1t=%.3f encode_s_2t=%.3f "
      "sign_s_2t=%.3f\n",
      values, units, encode_s[0], sign_s[0], encode_s[1], sign_s[1]);
}
