"""Checkpoints of loco's part (peer.save, peer.load: the shared θ, the outer momentum, the round):
a Python peer that saves, stops and comes back from its file rejoins the run at the state it
saved, without fetching, and ends with the others' hash; a damaged file is refused with a
status, never a crash."""

import numpy as np
import pytest

import loco
from conftest import python_lines, python_peer, python_rounds

BEFORE = 3  # rounds before the restart
AFTER = 3   # and after it


def test_a_peer_restarted_from_its_checkpoint_rejoins_with_the_others_hash(tracker_factory,
                                                                          tmp_path, spawn):
    # 3 peers and a run that needs all 3: while one restarts, the others wait for it, so the run
    # is still at the round its file holds when it comes back.
    tracker = tracker_factory(min_peers=3)
    others = [python_peer(spawn, tracker.peer_config(tmp_path, f"py-{i}"), BEFORE + AFTER, i,
                          "--commits") for i in range(2)]
    config = tracker.peer_config(tmp_path, "restarted")
    checkpoint = tmp_path / "loco.ckpt"
    first = python_rounds(python_peer(spawn, config, BEFORE, 7, "--commits", "--save", checkpoint))
    assert [r["round"] for r in first if r["kind"] == "committed"] == list(range(1, BEFORE + 1))

    lines = python_lines(python_peer(spawn, config, AFTER, 7, "--commits", "--load", checkpoint))
    joined, back = lines[0], [r for r in lines[1:] if r["kind"] == "committed"]
    assert joined == {"event": "joined", "fetched": False, "round": BEFORE}, \
        "the run took the state of the file as its own: θ, momentum and round bit for bit"
    assert [r["round"] for r in back] == list(range(BEFORE + 1, BEFORE + AFTER + 1))

    runs = [[r for r in python_rounds(p) if r["kind"] == "committed"] for p in others]
    for r in range(BEFORE + 1, BEFORE + AFTER + 1):
        rows = [next(row for row in run if row["round"] == r) for run in runs + [back]]
        assert len({row["state"] for row in rows}) == 1, f"round {r}: {rows}"
        assert all(row["members"] == 3 for row in rows), rows


def test_damaged_checkpoints_are_refused_with_a_status(tracker_factory, tmp_path):
    tracker = tracker_factory(min_peers=1)
    good = tmp_path / "good.ckpt"
    with loco.Peer(tracker.peer_config(tmp_path, "saver")) as peer:
        peer.bind_all({name: np.zeros(shape, dtype=np.float32) for name, shape in peer.tensors()})
        with pytest.raises(loco.Error) as early:
            peer.save(good)
        assert early.value.status == "LOCO_ERR_STATE"
        peer.join(timeout=30)
        peer.save(good)
        with pytest.raises(loco.Error) as late:
            peer.load(good)
        assert late.value.status == "LOCO_ERR_STATE", "a load after join"
    data = good.read_bytes()
    damaged = {
        "truncated": data[:len(data) // 2],
        "garbage": b"not a checkpoint at all",
        # a header that claims 2^63 bytes: refused from the file's size, nothing allocated
        "huge header": (1 << 63).to_bytes(8, "little") + data[8:],
        "a flipped bit": data[:-1] + bytes([data[-1] ^ 1]),  # the digest no longer matches
    }
    with loco.Peer(tracker.peer_config(tmp_path, "loader")) as peer:
        for what, content in damaged.items():
            path = tmp_path / "damaged.ckpt"
            path.write_bytes(content)
            with pytest.raises(loco.Error) as refused:
                peer.load(path)
            assert refused.value.status == "LOCO_ERR_FORMAT", (what, refused.value)
        with pytest.raises(loco.Error) as missing:
            peer.load(tmp_path / "absent.ckpt")
        assert missing.value.status == "LOCO_ERR_IO", missing.value
        peer.load(good)  # a failed load left the peer as it was: a good one still loads

    # A file of another model: the run config that wrote it is named.
    other = tmp_path / "other-run.toml"
    text = tracker.config.read_text()
    assert "d-model = 64\n" in text
    other.write_text(text.replace("d-model = 64\n", "d-model = 32\n"))
    config = tracker.peer_config(tmp_path, "other")
    config.write_text(config.read_text().replace(str(tracker.config), str(other)))
    with loco.Peer(config) as peer:
        with pytest.raises(loco.Error) as foreign:
            peer.load(good)
        assert foreign.value.status == "LOCO_ERR_CONFIG" and "d-model" in foreign.value.message
