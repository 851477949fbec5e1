#pragma once
// UTF-8 checks for text that came from outside (files, peers) and is shown or written elsewhere.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace loco {

// Length of the UTF-8 sequence starting at s[0] (RFC 3629: no overlongs, no surrogates, at most
// U+10FFFF), or 0 when it is not one (or `s` is empty).
std::size_t utf8_sequence_length(std::string_view s);

// `text` with each byte that starts no valid sequence replaced by U+FFFD, so that a display
// (JSON, a metrics label) can always show it.
std::string replace_invalid_utf8(std::string_view text);

// The code point of a valid sequence (utf8_sequence_length(s) == s.size() > 0).
std::uint32_t decode_utf8(std::string_view sequence);

// Whether the code point is one a log line or a page must not show raw, because it is invisible
// or changes how the text around it reads: general category Cc (controls: C0, DEL, C1), Cf
// (format: e.g. U+202E right-to-left override, U+200B zero width space, U+FEFF), Zl (U+2028
// line separator) or Zp (U+2029 paragraph separator).
bool is_hidden_code_point(std::uint32_t code_point);

// Whether `text` is valid UTF-8 without hidden code points: one line that a log, a terminal or a
// page shows as it is, with no escape sequence or reordering in it. Text fields of protocol
// messages must be (proto/tracker_messages.hpp), so that a peer cannot forge log lines, drive a
// terminal or reverse what a line says.
bool is_printable_utf8(std::string_view text);

// `text` made printable: C0 controls and DEL as \xNN, the other hidden code points as \uNNNN
// (\UNNNNNNNN past U+FFFF), invalid bytes as U+FFFD.
std::string printable(std::string_view text);

}  // namespace loco
