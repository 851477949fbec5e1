"""A Python peer whose trainer is a few lines of NumPy: gradient descent on a quadratic whose
minimum depends on its data shard, H steps between rounds. It binds NumPy arrays for the run's
model, joins, runs `rounds` rounds and prints one JSON line per round:
  {"round": R, "kind": K, "members": M, "state": HASH, "loss": L, "times": {...}, "bytes_sent": B}
Usage: quadratic_peer.py CONFIG ROUNDS SEED
"""

import json
import sys

import numpy as np

import loco


def main(config, rounds, seed):
    with loco.Peer(config) as peer:
        weights = {name: np.zeros(shape, dtype=np.float32) for name, shape in peer.tensors()}
        peer.bind_all(weights)
        joined = peer.join(timeout=30)
        # The shard's minimum: the run's shards pull the weights towards different points.
        rng = np.random.default_rng(seed * 1000 + joined.shard_index)
        targets = {name: rng.normal(0, 0.1, w.shape).astype(np.float32)
                   for name, w in weights.items()}
        for _ in range(rounds):
            loss = 0.0
            for _ in range(peer.inner_steps):
                loss = 0.0
                for name, w in weights.items():
                    gap = w - targets[name]
                    loss += float(np.mean(gap * gap))
                    w -= np.float32(0.05) * gap  # in place: the bound buffers
            result = peer.round(loss)
            print(json.dumps({"round": result.round, "kind": result.kind,
                              "members": result.members, "state": result.state_hash,
                              "loss": loss, "times": result.times,
                              "bytes_sent": result.bytes_sent}), flush=True)
        peer.leave("finished its rounds")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
