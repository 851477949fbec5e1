"""Tensors bound through a copy (on a GPU, or of another dtype: loco/__init__.py's _Staged) are
copied per fragment under Streaming DiLoCo: a fragment round copies its fragment's tensors, not
the model, and reports the bytes and seconds of those copies in its times. No GPU here: float64
CPU tensors, which bind through the same fp32 copy, stand in for GPU ones (docs/PYTORCH.md says
what that leaves untested). Skipped where PyTorch is not installed."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import loco  # noqa: E402

STREAMING = 'fragments = 2\ntau = 2\nalpha = 0.5\nfragment-codec = "fp4:block=64"\n'


def test_a_fragment_round_copies_only_its_fragments_staged_tensors(tracker_factory, tmp_path):
    """Two peers of one process: `a` binds float64 torch tensors (each through an fp32 copy),
    `b` fp32 arrays (no copy). Fragment 0's round copies fragment 0's tensors three times (in at
    the start, in and out at the landing: 4 bytes a parameter each; nothing for a poll of a
    merge not ready), none of fragment 1's, and leaves `a`'s tensors holding what `b`'s hold."""
    tracker = tracker_factory(min_peers=2, h=10, streaming=STREAMING)
    a = loco.Peer(tracker.peer_config(tmp_path, "py-a"))
    b = loco.Peer(tracker.peer_config(tmp_path, "py-b"))
    with a, b:
        staged = {n: torch.zeros(s, dtype=torch.float64) for n, s in a.tensors()}
        plain = {n: np.zeros(s, dtype=np.float32) for n, s in b.tensors()}
        a.bind_all(staged)
        b.bind_all(plain)
        a.join(timeout=30)
        b.join(timeout=30)
        for name in plain:  # the trainers' 5 steps
            staged[name] += 0.25
            plain[name] += np.float32(0.25)
        split = [set(a.fragment_tensors(p)) for p in range(2)]
        assert a.fragment_start(5, 1.0) == 0
        with pytest.raises(loco.Error) as not_ready:  # b has not started: no mean yet, no copy
            a.fragment_land(wait=False)
        assert not_ready.value.status == "LOCO_ERR_NOT_READY", not_ready.value
        assert b.fragment_start(5, 1.0) == 0
        before = {n: staged[n].clone() for n in split[1]}
        trained = {n: plain[n].copy() for n in split[0]}
        landed = [a.fragment_land(), b.fragment_land()]
        assert [r.kind for r in landed] == ["committed"] * 2, landed

        fragment_bytes = sum(4 * staged[n].numel() for n in split[0])
        model_bytes = sum(4 * t.numel() for t in staged.values())
        assert 0 < fragment_bytes < model_bytes
        assert landed[0].times["staging_bytes"] == 3 * fragment_bytes, landed[0].times
        assert landed[0].times["staging_s"] >= 0
        assert landed[1].times["staging_bytes"] == 0, "b's arrays are bound without a copy"
        for name in split[0]:  # the merge, written back through the copy
            assert np.array_equal(staged[name].numpy().astype(np.float32), plain[name]), name
        assert any(not np.array_equal(plain[n], trained[n]) for n in split[0]), "no merge"
        for name in split[1]:  # the other fragment's tensors were not copied back over
            assert torch.equal(staged[name], before[name]), name

        # Fragment 1's round, after step 10: its tensors only.
        assert a.fragment_start(10, 1.0) == 1 and b.fragment_start(10, 1.0) == 1
        results = [a.fragment_land(), b.fragment_land()]
        assert [r.kind for r in results] == ["committed"] * 2, results
        assert results[0].times["staging_bytes"] == 3 * (model_bytes - fragment_bytes)
        a.leave("done")
        b.leave("done")
