"""PyTorch CPU tensors bound to a peer: loco reads and writes the tensors' own memory. Skipped
where PyTorch is not installed (the suite needs only NumPy)."""

import math

import pytest

import loco

torch = pytest.importorskip("torch")


def test_torch_tensors_are_bound_without_a_copy(tracker_factory, tmp_path):
    tracker = tracker_factory(min_peers=1)
    with loco.Peer(tracker.peer_config(tmp_path, "torch-peer")) as peer:
        model = {name: torch.full(shape, math.nan) for name, shape in peer.tensors()}
        peer.bind_all(model)
        peer.join(timeout=30)
        assert not any(torch.isnan(t).any() for t in model.values()), "θ written into them"
        before = {name: t.clone() for name, t in model.items()}
        for t in model.values():
            t.sub_(0.01)  # "training": every weight moved by 0.01, in place
        result = peer.round(loss=1.0)
        assert result.kind == "committed" and result.members == 1
        # Alone, the mean Δ is this peer's 0.01 (int8 blocks of one value), the outer
        # momentum starts at 0: θ' = θ − η·(Δ + μ·Δ) with the run's η = 0.7, μ = 0.9.
        for name, t in model.items():
            assert torch.allclose(t, before[name] - 0.7 * (0.01 + 0.9 * 0.01), atol=1e-6), name


def test_a_tensor_that_is_not_contiguous_is_refused(tracker_factory, tmp_path):
    tracker = tracker_factory(min_peers=1)
    with loco.Peer(tracker.peer_config(tmp_path, "torch-strided")) as peer:
        name, shape = peer.tensors()[0]
        with pytest.raises(loco.Error) as strided:
            peer.bind(name, torch.zeros(shape[::-1]).t())
        assert strided.value.status == "LOCO_ERR_INVALID_ARGUMENT"
        assert "C-contiguous" in strided.value.message
