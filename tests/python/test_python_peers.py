"""Python peers of the package loco in real runs: a loco-tracker on loopback, each peer its own
process. After every round every peer reports the same state hash."""

import numpy as np
import pytest

import loco
from conftest import (BIN, loco_peer_rounds, python_peer, python_rounds,
                      same_state_after_every_round)

ROUNDS = 4


def test_three_python_peers_hold_the_same_state_after_every_round(tracker_factory, tmp_path,
                                                                  spawn):
    tracker = tracker_factory(min_peers=3)
    peers = [python_peer(spawn, tracker.peer_config(tmp_path, f"py-{i}"), ROUNDS, seed=i)
             for i in range(3)]
    runs = [python_rounds(p) for p in peers]
    same_state_after_every_round(runs, ROUNDS)
    first = np.mean([run[0]["loss"] for run in runs])
    last = np.mean([run[-1]["loss"] for run in runs])
    assert last < first, f"the loss did not fall: {first} then {last}"
    for run in runs:  # each round says where loco's part of it went, and what it sent
        sent = [row["bytes_sent"] for row in run]
        assert sent == sorted(sent) and sent[0] > 0, sent
        for row in run:
            assert set(row["times"]) == {"gather_s", "delta_s", "exchange_s", "hash_s", "outer_s",
                                         "write_back_s", "staging_bytes", "staging_s"}, row
            assert row["times"]["staging_bytes"] == 0, row  # numpy arrays: bound in place
            assert all(s >= 0 for s in row["times"].values()) and row["times"]["exchange_s"] > 0



def test_loco_peers_and_python_peers_are_members_of_one_run(tracker_factory, tmp_path, spawn):
    """2 loco-peer and 2 Python peers, each config written the same way (one config format
    serves both): every round has all four, and all report the same state after it. The Python
    peers' trainer is a stand-in (tests/python/quadratic_peer.py): what is shown is that both
    kinds of peer hold the same bits, not what the mix learns (test_torch_peers.py trains one
    GPT with both)."""
    rounds = 3
    tracker = tracker_factory(min_peers=4, h=10, rounds=rounds)
    loco_peers = [spawn([BIN / "loco-peer", "--config", tracker.peer_config(tmp_path, f"loco-{i}")])
                  for i in range(2)]
    python_peers = [python_peer(spawn, tracker.peer_config(tmp_path, f"py-{i}"), rounds, seed=i)
                    for i in range(2)]
    runs = [python_rounds(p) for p in python_peers]  # first: one that fails ends the test
    runs += [loco_peer_rounds(p) for p in loco_peers]
    same_state_after_every_round(runs, rounds)


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


def test_three_python_peers_overlapping_their_rounds_hold_the_same_state(tracker_factory,
                                                                        tmp_path, spawn):
    """Rounds that overlap the trainer's steps (round_start, round_ready, round_land): every
    landed round committed by all three with one state, and the loss falls."""
    tracker = tracker_factory(min_peers=3)
    peers = [python_peer(spawn, tracker.peer_config(tmp_path, f"py-{i}"), ROUNDS, i, "--overlap")
             for i in range(3)]
    runs = [python_rounds(p) for p in peers]
    same_state_after_every_round(runs, ROUNDS)
    first = np.mean([run[0]["loss"] for run in runs])
    last = np.mean([run[-1]["loss"] for run in runs])
    assert last < first, f"the loss did not fall: {first} then {last}"
