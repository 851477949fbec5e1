"""Streaming DiLoCo through the C API: Python peers run fragment rounds on the run's schedule
(peer.fragment_step), alone or beside loco-peer peers of the same run config, and after every
fragment round every peer reports the same state. The error paths give a loco.Error with a status
and a message."""

import numpy as np
import pytest

import loco
from conftest import (BIN, loco_peer_rounds, python_peer, python_rounds,
                      same_state_after_every_round)

# H = 10 (the tests' h), P = 2, τ = 2: fragments leave after steps 5 and 10 of every 10 and land
# 2 steps later, the trainer stepping on meanwhile. fp4 fragments, as loco-peer's default.
STREAMING = 'fragments = 2\ntau = 2\nalpha = 0.5\nfragment-codec = "fp4:block=64"\n'


def fragments_alternate(run):
    assert [row["fragment"] for row in run] == [r % 2 for r in range(len(run))], run


def test_three_python_peers_streaming_hold_the_same_state_after_every_fragment_round(
        tracker_factory, tmp_path, spawn):
    rounds = 4
    tracker = tracker_factory(min_peers=3, h=10, streaming=STREAMING)
    peers = [python_peer(spawn, tracker.peer_config(tmp_path, f"py-{i}"), rounds, seed=i)
             for i in range(3)]
    runs = [python_rounds(p) for p in peers]
    same_state_after_every_round(runs, rounds)
    for run in runs:
        fragments_alternate(run)
    first = np.mean([run[0]["loss"] for run in runs])
    last = np.mean([run[-1]["loss"] for run in runs])
    assert last < first, f"the loss did not fall: {first} then {last}"


EAGER = 'fragments = 1\neager = "overlapped"\nalpha = 0.5\n'


@pytest.mark.parametrize("strategy, cycles", [(STREAMING, 2), (EAGER, 4)], ids=["P2", "eager"])
def test_loco_peers_and_python_peers_stream_one_run(tracker_factory, tmp_path, spawn, strategy,
                                                    cycles):
    """2 loco-peer and 2 Python peers on one Streaming run config, every landed fragment round
    with all four and one state: P = 2, τ = 2, 2 × H steps land 3 (the 4th is in flight at
    loco-peer's end); eager (P = 1, a round lands H steps after it left), 4 × H steps land 3."""
    tracker = tracker_factory(min_peers=4, h=10, rounds=cycles, streaming=strategy)
    loco_peers = [spawn([BIN / "loco-peer", "--config", tracker.peer_config(tmp_path, f"loco-{i}")])
                  for i in range(2)]
    python_peers = [python_peer(spawn, tracker.peer_config(tmp_path, f"py-{i}"), 3, seed=i)
                    for i in range(2)]
    runs = [python_rounds(p) for p in python_peers]  # first: one that fails ends the test
    for run in runs:
        if strategy == STREAMING:
            fragments_alternate(run)
    runs += [loco_peer_rounds(p) for p in loco_peers]
    same_state_after_every_round(runs, 3)


def expect_error(status, words, call, *args, **kwargs):
    with pytest.raises(loco.Error) as error:
        call(*args, **kwargs)
    assert error.value.status == status and words in error.value.message, error.value
    return error.value


def test_fragment_calls_report_errors_and_a_merge_not_ready(tracker_factory, tmp_path):
    """Two peers of one process (the run needs both): the first one's round cannot have ended
    before the second starts its own, so landing it without waiting is LOCO_ERR_NOT_READY, and
    nothing changed; then both land, with one state. Wrong names and indices, a start twice, a
    land of nothing, DiLoCo's calls on a Streaming peer: each a status and a message. A newcomer
    then fetches the state and its place in the schedule, and the next round has all three."""
    tracker = tracker_factory(min_peers=2, h=10, streaming=STREAMING)
    a = loco.Peer(tracker.peer_config(tmp_path, "py-a"))
    b = loco.Peer(tracker.peer_config(tmp_path, "py-b"))
    with a, b:
        info = a.streaming()
        assert info == loco.StreamingInfo(fragments=2, inner_steps=10, tau=2, alpha=0.5)
        names = [name for name, _ in a.tensors()]
        split = [a.fragment_tensors(p) for p in range(info.fragments)]
        assert sorted(split[0] + split[1]) == sorted(names) and split[0] and split[1]
        assert all(a.fragment_of(name) == p for p in range(2) for name in split[p])
        expect_error("LOCO_ERR_INVALID_ARGUMENT", "2 fragments", a.fragment_tensors, 2)
        expect_error("LOCO_ERR_INVALID_ARGUMENT", "no tensor", a.fragment_of, "no.such.weight")
        expect_error("LOCO_ERR_INVALID_ARGUMENT", "fragment rounds", a.overlap)
        models = []
        for peer in (a, b):
            models.append({n: np.zeros(s, dtype=np.float32) for n, s in peer.tensors()})
            peer.bind_all(models[-1])
        expect_error("LOCO_ERR_STATE", "join the run first", a.fragment_start, 5)
        ja, jb = a.join(timeout=30), b.join(timeout=30)
        assert ja.step == 0 and jb.step == 0
        expect_error("LOCO_ERR_STATE", "no fragment round started", a.fragment_land)
        assert [a.fragment_due(s) for s in (4, 5)] == [None, "start"]
        for peer, model in zip((a, b), models):  # the trainers' 5 steps
            for w in model.values():
                w += np.float32(0.01)
        assert a.fragment_start(5, 1.0) == 0
        before = {n: w.copy() for n, w in models[0].items()}
        assert not a.fragment_ready()
        expect_error("LOCO_ERR_NOT_READY", "not ended yet", a.fragment_land, wait=False)
        expect_error("LOCO_ERR_STATE", "land it first", a.fragment_start, 5)
        assert a.fragment_due(6) is None and a.fragment_due(7) == "land"
        assert b.fragment_start(5, 1.0) == 0
        landed = [a.fragment_land(), b.fragment_land()]
        assert [r.kind for r in landed] == ["committed"] * 2, landed
        assert landed[0].state_hash == landed[1].state_hash and landed[0].round == 1
        assert a.fragment_next() == 1
        for name in split[1]:  # the other fragment's tensors are the trainer's alone
            assert np.array_equal(models[0][name], before[name])
        changed = [name for name in split[0] if not np.array_equal(models[0][name], before[name])]
        assert changed, "the merge wrote nothing into the fragment's tensors"
        expect_error("LOCO_ERR_STATE", "loco_peer_overlap", a.round_start)

        # A newcomer fetches the state of round 1 and its step (fragment 0 left after step 5 and
        # landed 2 later): the next round, fragment 1's after step 10, has all three.
        with loco.Peer(tracker.peer_config(tmp_path, "py-c")) as c:
            mc = {n: np.zeros(s, dtype=np.float32) for n, s in c.tensors()}
            c.bind_all(mc)
            jc = c.join(timeout=30)
            assert jc.fetched and jc.round == 1 and jc.step == 7, jc
            assert c.state_hash() == a.state_hash()
            assert [c.fragment_due(s) for s in range(8, 11)] == [None, None, "start"]
            assert [p.fragment_start(10, 1.0) for p in (a, b, c)] == [1, 1, 1]
            landed = [p.fragment_land() for p in (a, b, c)]
            assert all(r.kind == "committed" and r.members == 3 and r.round == 2 and
                       r.state_hash == landed[0].state_hash for r in landed), landed
            c.leave("done")
        a.leave("done")
        b.leave("done")


def test_fragment_calls_on_a_diloco_peer_are_state_errors(tracker_factory, tmp_path):
    tracker = tracker_factory(min_peers=1)
    with loco.Peer(tracker.peer_config(tmp_path, "py-diloco")) as peer:
        assert peer.streaming() is None
        for call, args in ((peer.fragment_next, ()), (peer.fragment_due, (1,)),
                           (peer.fragment_tensors, (0,)), (peer.fragment_land, ())):
            expect_error("LOCO_ERR_STATE", "not a Streaming DiLoCo run", call, *args)


@pytest.mark.parametrize("eager", ["overlapped", "delayed"])
def test_three_python_peers_with_eager_updates_hold_the_same_state(tracker_factory, tmp_path,
                                                                   spawn, eager):
    """Eager updates (one fragment over a swarm): each round stays in flight for H steps and
    lands at the next send, before the next round starts."""
    rounds = 3
    tracker = tracker_factory(min_peers=3, h=10,
                              streaming=f'fragments = 1\neager = "{eager}"\nalpha = 0.5\n')
    peers = [python_peer(spawn, tracker.peer_config(tmp_path, f"py-{i}"), rounds, seed=i)
             for i in range(3)]
    runs = [python_rounds(p) for p in peers]
    same_state_after_every_round(runs, rounds)
    last = np.mean([run[-1]["loss"] for run in runs])
    first = np.mean([run[0]["loss"] for run in runs])
    assert last < first, f"the loss did not fall: {first} then {last}"
