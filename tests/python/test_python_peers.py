"""Python peers of the package loco in real runs: a loco-tracker on loopback, each peer its own
process. After every round every peer reports the same state hash."""

import json
import subprocess

import numpy as np
import pytest

import loco
from conftest import BIN, start_python_peer

ROUNDS = 4


def results(process, timeout=120):
    out, err = process.communicate(timeout=timeout)
    assert process.returncode == 0, f"a peer failed ({process.returncode}):\n{err}"
    return [json.loads(line) for line in out.splitlines()]


def test_three_python_peers_hold_the_same_state_after_every_round(tracker_factory, tmp_path):
    tracker = tracker_factory(min_peers=3)
    peers = [start_python_peer(tracker.peer_config(tmp_path, f"py-{i}"), ROUNDS, seed=i)
             for i in range(3)]
    runs = [results(p) for p in peers]
    for r in range(ROUNDS):
        rows = [run[r] for run in runs]
        assert all(row["kind"] == "committed" and row["members"] == 3 for row in rows), rows
        assert all(row["round"] == r + 1 for row in rows), rows
        assert len({row["state"] for row in rows}) == 1, f"round {r + 1}: {rows}"
    first = np.mean([run[0]["loss"] for run in runs])
    last = np.mean([run[-1]["loss"] for run in runs])
    assert last < first, f"the loss did not fall: {first} then {last}"


def test_loco_peers_and_python_peers_are_members_of_one_run(tracker_factory, tmp_path):
    """2 loco-peer and 2 Python peers, each config written the same way (one config format
    serves both): every round has all four, and all report the same state after it. The Python
    peers' trainer is a stand-in (tests/python/quadratic_peer.py): what is shown is that both
    kinds of peer hold the same bits, not what the mix learns."""
    rounds = 3
    tracker = tracker_factory(min_peers=4, steps=20 * rounds)  # loco-peer: H = 20 steps a round
    loco_peers = [subprocess.Popen([str(BIN / "loco-peer"), "--config",
                                    str(tracker.peer_config(tmp_path, f"loco-{i}"))],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                  for i in range(2)]
    python_peers = [start_python_peer(tracker.peer_config(tmp_path, f"py-{i}"), rounds, seed=i)
                    for i in range(2)]
    states = []  # per peer: the first 16 hex digits of the state after each round
    for process in loco_peers:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, f"loco-peer failed:\n{err}"
        # "round R committed members M loss L state H" (peer/swarm_peer.hpp)
        lines = [line.split() for line in out.splitlines() if line.startswith("round ")]
        assert [(int(w[1]), w[2], int(w[4])) for w in lines] == \
            [(r + 1, "committed", 4) for r in range(rounds)], out
        states.append([w[8] for w in lines])
    for process in python_peers:
        run = results(process)
        assert [(row["round"], row["kind"], row["members"]) for row in run] == \
            [(r + 1, "committed", 4) for r in range(rounds)], run
        states.append([row["state"][:16] for row in run])
    for r in range(rounds):
        assert len({peer[r] for peer in states}) == 1, f"round {r + 1}: {states}"


def test_errors_are_loco_errors_with_a_status_and_a_message(tracker_factory, tmp_path):
    tracker = tracker_factory(min_peers=1)
    with pytest.raises(loco.Error) as missing:
        loco.Peer(tmp_path / "absent.toml")
    assert missing.value.status == "LOCO_ERR_CONFIG" and "no such file" in missing.value.message
    with loco.Peer(tracker.peer_config(tmp_path, "py-errors")) as peer:
        name, shape = peer.tensors()[0]
        with pytest.raises(loco.Error) as wrong:
            peer.bind(name, np.zeros((shape[0] + 1,) + shape[1:], dtype=np.float32))
        assert wrong.value.status == "LOCO_ERR_INVALID_ARGUMENT"
        assert "the run's model has" in wrong.value.message
        with pytest.raises(loco.Error) as doubles:
            peer.bind(name, np.zeros(shape, dtype=np.float64))
        assert "fp32" in doubles.value.message
        with pytest.raises(loco.Error) as strided:
            peer.bind(name, np.zeros(shape[::-1], dtype=np.float32).T)
        assert "C-contiguous" in strided.value.message
        with pytest.raises(loco.Error) as early:
            peer.round()
        assert early.value.status == "LOCO_ERR_STATE"
