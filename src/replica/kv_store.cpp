#include "loco/replica/kv_store.hpp"

namespace loco::replica {

// etcd's rule: the prefix with its last byte below 0xff raised by one and what follows dropped;
// "\0" (every key) when there is no such byte.
std::string prefix_end(std::string_view prefix) {
  std::string end(prefix);
  while (!end.empty()) {
    if (static_cast<unsigned char>(end.back()) < 0xff) {
      end.back() = static_cast<char>(static_cast<unsigned char>(end.back()) + 1);
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');
}

}  // namespace loco::replica
