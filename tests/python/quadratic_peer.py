"""A Python peer whose trainer is a few lines of NumPy: gradient descent on a quadratic whose
minimum depends on its data shard, H steps between rounds. It binds NumPy arrays for the run's
model, joins, runs `rounds` rounds and prints one JSON line per round:
  {"round": R, "kind": K, "members": M, "state": HASH, "loss": L, "times": {...}, "bytes_sent": B}
With --load it resumes from loco's checkpoint and first prints
  {"event": "joined", "fetched": F, "round": R}
with --save it writes loco's checkpoint after its rounds; with --commits its rounds are
committed ones (skipped rounds do not count); with --overlap its rounds overlap its steps
(round_start, then round_land once round_ready says so, or before the next round at the latest),
a line per landed round. A Streaming DiLoCo run (the run config's [strategy] kind = "streaming")
runs fragment rounds on the run's schedule (peer.fragment_step after every step), a line per
landed fragment round with its "fragment" added.
Usage: quadratic_peer.py CONFIG ROUNDS SEED [--save PATH] [--load PATH] [--commits] [--overlap]
"""

import argparse
import json

import numpy as np

import loco


def main():
    p = argparse.ArgumentParser()
    p.add_argument("config")
    p.add_argument("rounds", type=int)
    p.add_argument("seed", type=int)
    p.add_argument("--save")
    p.add_argument("--load")
    p.add_argument("--commits", action="store_true")
    p.add_argument("--overlap", action="store_true")
    args = p.parse_args()
    with loco.Peer(args.config) as peer:
        weights = {name: np.zeros(shape, dtype=np.float32) for name, shape in peer.tensors()}
        peer.bind_all(weights)
        if args.overlap:
            peer.overlap()
        if args.load:
            peer.load(args.load)
        joined = peer.join(timeout=30)
        if args.load:
            print(json.dumps({"event": "joined", "fetched": joined.fetched,
                              "round": joined.round}), flush=True)
        # The shard's minimum: the run's shards pull the weights towards different points.
        rng = np.random.default_rng(args.seed * 1000 + joined.shard_index)
        targets = {name: rng.normal(0, 0.1, w.shape).astype(np.float32)
                   for name, w in weights.items()}
        done = 0
        pending = False  # --overlap: a round started and not landed
        loss = 0.0

        phase_loss = 0.0  # at the end of the last inner phase, whichever step a round lands at

        def report(result, **more):
            nonlocal done
            print(json.dumps({"round": result.round, "kind": result.kind,
                              "members": result.members, "state": result.state_hash,
                              "loss": phase_loss, "times": result.times,
                              "bytes_sent": result.bytes_sent, **more}), flush=True)
            done += 1 if result.kind == "committed" or not args.commits else 0

        def inner_step():
            loss = 0.0
            for name, w in weights.items():
                gap = w - targets[name]
                loss += float(np.mean(gap * gap))
                w -= np.float32(0.05) * gap  # in place: the bound buffers
            return loss

        if peer.streaming():  # fragment rounds on the run's schedule, from the run's step on
            step = joined.step
            fragments = peer.streaming().fragments
            while done < args.rounds:
                phase_loss = inner_step()
                step += 1
                for result in peer.fragment_step(step, phase_loss):
                    report(result, fragment=(result.round - 1) % fragments)
                    step = result.step if result.kind == "replaced" else step
            peer.leave("finished its rounds")
            return

        while done < args.rounds:
            for _ in range(peer.inner_steps):
                loss = inner_step()
                if pending and peer.round_ready():  # the merge may be applied: land it now
                    report(peer.round_land())
                    pending = False
            phase_loss = loss
            if not args.overlap:
                report(peer.round(loss))
                continue
            if pending:  # not landed during the steps: wait for it now
                report(peer.round_land())
                pending = False
            if done >= args.rounds:
                break
            if not peer.round_start(loss):
                report(peer.round_land())  # ended without a mean
            else:
                pending = True
        if args.save:
            peer.save(args.save)
        peer.leave("finished its rounds")


if __name__ == "__main__":
    main()
