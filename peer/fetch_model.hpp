#pragma once
// `loco-peer fetch-model`: the run's model (its final state once it ended, else its newest
// committed one) from the peers that hold it, as the safetensors file `loco-tracker export`
// writes (train/model_file.hpp), without the tracker's uplink or its HTTP port.
//
// It joins the run as a newcomer does (the peer config's tracker, run id, run config and join
// token) and is sent to fetch the committed state like one: the tracker names up to
// [run] donors reachable members that hold it, least-asked first, and names itself (its custody
// copy, over the tracker link) only when no live member holds the state: peers first, the
// tracker's copy the fallback, the tracker's rule for every newcomer (docs/TRACKER.md). The
// state comes over the encrypted state transfer (proto/state_transfer.hpp): each donor's manifest
// must hash to the state hash the tracker committed, each chunk to its manifest, so a donor that
// lies about the bytes is dropped at its first bad one, reported to the tracker, and the others
// (or, once all named are gone, new ones from the tracker) serve the rest. Then it leaves.
//
// It joins with a key of its own, made for this fetch only (or --key): with [peer] key it would
// take the place of this machine's peer, which the tracker knows by that key. Prints one line:
//   fetched round R of run ID (its final round|newest committed; final round F) from peer K[,
//   peer K2 ...]|the tracker's custody copy: state H, N parameters, FILE (BLAKE2b-256 B)
// K the donors whose chunks it holds (secure::short_id), H the first 16 hex digits of the state
// hash, B the file's hash (the status page's ETag of the same model).

#include <atomic>
#include <string>

#include "loco/host/peer_options.hpp"

namespace CLI {
class App;
}

namespace loco::peer {

struct FetchModelOptions {
  std::string out;                 // the safetensors file to write
  std::string key_file;            // the key to join with; empty: one made for this fetch
  std::string patience = "10min";  // for the fetch, once the tracker answered
};

// Registers `fetch-model` on `app`; returns the subcommand, to ask whether it was given.
CLI::App* add_fetch_model_command(CLI::App& app, FetchModelOptions& options);

// Returns the exit code: 0 with the file written, 1 with the reason logged (the tracker
// unreachable or of another run, refused, no holder, a fetch that did not finish).
int fetch_model(const host::PeerOptions& peer, const FetchModelOptions& options,
                const std::atomic<bool>& stop);

}  // namespace loco::peer
