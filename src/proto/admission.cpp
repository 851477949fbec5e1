#include "loco/proto/admission.hpp"

#include <fmt/format.h>
#include <sodium.h>

#include <algorithm>

namespace loco::proto {
namespace {

// Constant time in the token's contents, so the comparison does not leak how much matched.
bool same_token(const std::string& a, const std::string& b) {
  return a.size() == b.size() && sodium_memcmp(a.data(), b.data(), a.size()) == 0;
}

const Setting* find(const std::vector<Setting>& settings, const std::string& name) {
  const auto it = std::find_if(settings.begin(), settings.end(),
                               [&](const Setting& s) { return s.name == name; });
  return it == settings.end() ? nullptr : &*it;
}

}  // namespace

std::optional<std::string> admission_refusal(const AdmissionPolicy& policy,
                                             const secure::PublicKey& key,
                                             const std::string& credential) {
  switch (policy.kind) {
    case AdmissionPolicy::Kind::open: return std::nullopt;
    case AdmissionPolicy::Kind::token:
      if (credential.empty())
        return "this run needs a join token: set [tracker] join-token to the one the run's "
               "operator gave you";
      if (!same_token(credential, policy.token))
        return "the join token is not this run's: check [tracker] join-token";
      return std::nullopt;
    case AdmissionPolicy::Kind::allowlist:
      if (std::find(policy.allowed.begin(), policy.allowed.end(), key) == policy.allowed.end())
        return fmt::format(
            "this run admits listed keys only, and {} (peer id {}) is not listed: "
            "send your public key to the run's operator",
            secure::to_hex(key), secure::short_id(key));
      return std::nullopt;
  }
  return "unknown admission policy";
}

std::optional<std::string> settings_refusal(const std::vector<Setting>& run,
                                            const std::vector<Setting>& peer) {
  for (const Setting& s : run) {
    const Setting* mine = find(peer, s.name);
    if (mine == nullptr)
      return fmt::format("setting {} is missing on this peer; the run has {} = {}", s.name, s.name,
                         s.value);
    if (mine->value != s.value)
      return fmt::format("setting {} differs: this peer has {}, the run has {}", s.name,
                         mine->value, s.value);
  }
  for (const Setting& s : peer)
    if (find(run, s.name) == nullptr)
      return fmt::format(
          "setting {} = {} is not one of this run's settings (another loco "
          "release?)",
          s.name, s.value);
  return std::nullopt;
}

}  // namespace loco::proto
