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

// Whether `text` is valid UTF-8 without control characters (C0, DEL, C1): one line that a log or
// a terminal shows as it is, with no escape sequence in it. Text fields of protocol messages must
// be (proto/tracker_messages.hpp), so that a peer cannot forge log lines or drive a terminal.
bool is_printable_utf8(std::string_view text);

// `text` made printable: control characters as \xNN, invalid bytes as U+FFFD.
std::string printable(std::string_view text);

}  // namespace loco
