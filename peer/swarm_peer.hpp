#pragma once
// `loco-peer` (no subcommand): a volunteer's training process. It joins the run's tracker,
// fetches the run's state if the run has started, then trains: H inner steps on its data shard,
// a DiLoCo round with the group the tracker forms, again (DDP: a round every step; Streaming
// DiLoCo: a fragment round every H/P steps, on the network thread while the inner loop steps),
// until the run's steps are done or a signal asks it to leave (it finishes or abandons the step,
// tells the tracker, checkpoints). At the run's final round (train/run_end.hpp) it waits, at most
// --peer.end-wait, for the tracker to hold the final state before it leaves; a peer that starts
// after the run ended fetches the final state and trains no more. With --peer.seed-after-end it
// stays that long after the end, serving the final state to whoever fetches it.
// After each round it prints one line on stdout, for scripts and tests:
//   round R committed|skipped|replaced members M loss L state H [phase P] [share S]
// R the round its shared state is at, M the group's size (0 unless committed), L the mean loss of
// the round's inner steps, H the first 16 hex digits of the state hash; P the seconds of the next
// inner phase as the tracker set them (rounds paced by the tracker), S this peer's share of a
// weighted mean (rounds bounded by time). At the run's end:
//   run over: final round R, state H, kept by the tracker|not kept by the tracker|unconfirmed
//   seeding: final round R, state H, for S s        (with --peer.seed-after-end)

#include <atomic>
#include <string>
#include <vector>

#include "debug_faults.hpp"
#include "loco/host/peer_options.hpp"

namespace loco::peer {

// loco-peer's options: a peer's (host/peer_options.hpp) and its test-only ones.
struct PeerOptions : host::PeerOptions {
  std::string poison;       // test only: scale | segment | nan | tokens
  DebugFaultOptions debug;  // test only: die at a phase, slow inner steps
};

// Runs until the run's steps are done or `stop` turns true. Returns the exit code; every error is
// logged with what to do about it.
int run_peer(const PeerOptions& options, const std::atomic<bool>& stop);

}  // namespace loco::peer
