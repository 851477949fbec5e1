#include "loco/replica/candidate.hpp"

#include "loco/core/error.hpp"

namespace loco::replica {

Candidate::Candidate(KvStore& store, CandidateConfig config)
    : store_(store),
      config_(std::move(config)),
      election_(store, config_.prefix + "leader/", config_.name) {}

void Candidate::campaign(TimePoint now) {
  if (lease_ != 0) {
    try {
      store_.lease_revoke(lease_);  // our old key goes with it
    } catch (const Error&) {
      // Unreachable: the old lease expires on its own, at most a lease from now.
    }
    lease_ = 0;
  }
  lease_ = store_.lease_grant(config_.lease.count()).id;
  lease_refreshed_ = now;
  election_.campaign(lease_);
}

bool Candidate::keep_lease(TimePoint now) {
  if (now - lease_refreshed_ < config_.lease / 3) return true;
  if (store_.lease_keepalive(lease_) <= 0) return false;
  lease_refreshed_ = now;
  return true;
}

Election::Standing Candidate::follow(TimePoint now) {
  if (lease_ == 0) campaign(now);
  const Election::Standing standing = keep_lease(now) ? election_.poll() : Election::Standing::lost;
  if (standing == Election::Standing::lost) campaign(now);  // looked at again at the next look
  return standing;
}

Candidate::Look Candidate::lead(TimePoint now) {
  try {
    if (!keep_lease(now)) return Look::lease_expired;
    if (election_.poll() != Election::Standing::leading) return Look::key_gone;
    return Look::leading;
  } catch (const Error& e) {
    error_ = e.what();
    // Unanswered for a whole lease: the store may have let it expire and another replica lead.
    return now - lease_refreshed_ >= config_.lease ? Look::unreachable : Look::unanswered;
  }
}

bool Candidate::resign() {
  if (lease_ == 0) return true;
  try {
    election_.resign();
    store_.lease_revoke(lease_);
    lease_ = 0;
    return true;
  } catch (const Error& e) {
    error_ = e.what();
    return false;
  }
}

}  // namespace loco::replica
