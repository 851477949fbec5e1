// docs/PROTOCOL.md's table of the peer ↔ tracker messages is the description of
// tracker_message_fields.hpp, row for row: the docs cannot name a field the code does not write,
// in another order, of another type or version.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "loco/proto/tracker_message_fields.hpp"

namespace loco::proto {
namespace {

// "`name` type", and " (vN)" after a field a later version added.
template <typename T>
std::string fields_of() {
  std::string out;
  std::apply(
      [&](auto... f) {
        ((out += (out.empty() ? "" : " ‖ ") + ("`" + std::string(f.name) + "` ") +
                 decltype(f)::WireType::name() +
                 (f.since > 1 ? " (v" + std::to_string(f.since) + ")" : "")),
         ...);
      },
      wire::Fields<T>::list);
  return out.empty() ? "(none)" : out;
}

template <typename M>
std::string message_row() {
  const MessageInfo& m = info(M::kType);
  char type[8];
  std::snprintf(type, sizeof type, "0x%04X", static_cast<unsigned>(m.type));
  return "| " + std::string(m.name) + " | " + type + " | " + std::to_string(m.version) + " | " +
         fields_of<M>() + " |";
}

std::vector<std::string> described_rows() {
  std::vector<std::string> rows;
  const auto add = [&]<typename M>() { rows.push_back(message_row<M>()); };
  for_each_type<TrackerMessages>(add);
  for_each_type<SignedTrackerMessages>(add);
  for_each_type<wire::TrackerRecords>([&]<typename R>() {
    rows.push_back("| " + wire::Record<R>::name() + " | record | | " + fields_of<R>() + " |");
  });
  return rows;
}

// The table's rows: the lines that start with "|" after its header and separator.
std::vector<std::string> documented_rows() {
  std::ifstream doc(std::string(LOCO_SOURCE_DIR) + "/docs/PROTOCOL.md");
  std::string line;
  while (std::getline(doc, line) && line != "| message | type | version | fields, in order |") {
  }
  std::getline(doc, line);  // |---|...
  std::vector<std::string> rows;
  while (std::getline(doc, line) && line.starts_with("|")) rows.push_back(line);
  return rows;
}

TEST(TrackerMessagesDoc, ProtocolMdTablesTheDescribedFields) {
  const std::vector<std::string> described = described_rows();
  const std::vector<std::string> documented = documented_rows();
  ASSERT_FALSE(documented.empty()) << "no table of the tracker messages in docs/PROTOCOL.md";
  for (std::size_t i = 0; i < std::max(described.size(), documented.size()); ++i)
    EXPECT_EQ(i < documented.size() ? documented[i] : "(missing)",
              i < described.size() ? described[i] : "(not described)")
        << "row " << i << " of the table in docs/PROTOCOL.md";
}

// A field of a later version is newer than the message's first; none is newer than the message.
TEST(TrackerMessagesDoc, NoFieldIsNewerThanItsMessage) {
  const auto check = [&]<typename M>() {
    const auto newer_than_message = [](auto f) {
      EXPECT_LE(f.since, info(M::kType).version) << f.name;
    };
    std::apply([&](auto... f) { (newer_than_message(f), ...); }, wire::Fields<M>::list);
  };
  for_each_type<TrackerMessages>(check);
  for_each_type<SignedTrackerMessages>(check);
}

}  // namespace
}  // namespace loco::proto
