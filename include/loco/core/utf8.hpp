#pragma once
// UTF-8 checks for text that came from outside (files, peers) and is shown or written elsewhere.

#include <cstddef>
#include <string>
#include <string_view>

namespace loco {

// Length of the UTF-8 sequence starting at s[0] (RFC 3629: no overlongs, no surrogates, at most
// U+10FFFF), or 0 when it is not one (or `s` is empty).
std::size_t utf8_sequence_length(std::string_view s);

// `text` with each byte that starts no valid sequence replaced by U+FFFD, so that a display
// (JSON, a metrics label) can always show it.
std::string replace_invalid_utf8(std::string_view text);

}  // namespace loco
