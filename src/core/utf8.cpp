#include "loco/core/utf8.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "loco/core/assert.hpp"

namespace loco {

std::size_t utf8_sequence_length(std::string_view s) {
  if (s.empty()) return 0;
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned char low = 0x80;
  unsigned char high = 0xbf;  // allowed range of the second byte
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead == 0xe0) low = 0xa0;
    if (lead == 0xed) high = 0x9f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead == 0xf0) low = 0x90;
    if (lead == 0xf4) high = 0x8f;
  } else {
    return 0;
  }
  if (s.size() < length || byte(1) < low || byte(1) > high) return 0;
  for (std::size_t i = 2; i < length; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xbf) return 0;
  }
  return length;
}

std::string replace_invalid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = utf8_sequence_length(text.substr(i));
    if (length == 0) {
      out += "\xef\xbf\xbd";  // U+FFFD REPLACEMENT CHARACTER
      ++i;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  return out;
}

std::uint32_t decode_utf8(std::string_view sequence) {
  const auto byte = [&](std::size_t i) {
    return static_cast<std::uint32_t>(static_cast<unsigned char>(sequence[i]));
  };
  static constexpr std::uint32_t kLeadBits[] = {0, 0x7f, 0x1f, 0x0f, 0x07};
  LOCO_ASSERT(!sequence.empty() && sequence.size() <= 4, "one UTF-8 sequence");
  std::uint32_t code_point = byte(0) & kLeadBits[sequence.size()];
  for (std::size_t i = 1; i < sequence.size(); ++i)
    code_point = (code_point << 6) | (byte(i) & 0x3f);
  return code_point;
}

namespace {

struct CodePointRange {
  std::uint32_t first;
  std::uint32_t last;
};

// General category Cf, from Unicode 15.1's DerivedGeneralCategory.txt
// (https://www.unicode.org/Public/15.1.0/ucd/extracted/DerivedGeneralCategory.txt): 170 code
// points. A format character a later version adds is shown raw until this table has it.
constexpr CodePointRange kFormat[] = {
    {0x00AD, 0x00AD},   {0x0600, 0x0605},   {0x061C, 0x061C},   {0x06DD, 0x06DD},
    {0x070F, 0x070F},   {0x0890, 0x0891},   {0x08E2, 0x08E2},   {0x180E, 0x180E},
    {0x200B, 0x200F},   {0x202A, 0x202E},   {0x2060, 0x2064},   {0x2066, 0x206F},
    {0xFEFF, 0xFEFF},   {0xFFF9, 0xFFFB},   {0x110BD, 0x110BD}, {0x110CD, 0x110CD},
    {0x13430, 0x1343F}, {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A}, {0xE0001, 0xE0001},
    {0xE0020, 0xE007F},
};

}  // namespace

bool is_hidden_code_point(std::uint32_t c) {
  if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) return true;  // Cc
  if (c == 0x2028 || c == 0x2029) return true;            // Zl, Zp
  const auto* after = std::upper_bound(
      std::begin(kFormat), std::end(kFormat), c,
      [](std::uint32_t value, const CodePointRange& range) { return value < range.first; });
  return after != std::begin(kFormat) && c <= (after - 1)->last;
}

bool is_printable_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = utf8_sequence_length(text.substr(i));
    if (length == 0 || is_hidden_code_point(decode_utf8(text.substr(i, length)))) return false;
    i += length;
  }
  return true;
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = utf8_sequence_length(text.substr(i));
    if (length == 0) {
      out += "\xef\xbf\xbd";
      ++i;
      continue;
    }
    const std::string_view sequence = text.substr(i, length);
    const std::uint32_t c = decode_utf8(sequence);
    if (!is_hidden_code_point(c)) {
      out.append(sequence);
    } else if (length == 1) {
      out += fmt::format("\\x{:02x}", c);
    } else if (c <= 0xffff) {
      out += fmt::format("\\u{:04x}", c);
    } else {
      out += fmt::format("\\U{:08x}", c);
    }
    i += length;
  }
  return out;
}

}  // namespace loco
