#pragma once
// A fuzz target may define loco_fuzz_seeds() to hand the drivers valid inputs (an encoded
// message, a real handshake transcript): mutations of valid inputs reach far deeper than random
// bytes. The smoke driver mutates them; scripts/fuzz.sh writes them out as libFuzzer's corpus.

#include <cstdint>
#include <vector>

std::vector<std::vector<std::uint8_t>> loco_fuzz_seeds();
