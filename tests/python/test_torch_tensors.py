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


def genesis(tracker, tmp_path):
    """The run's θ at round 0, as an fp32 peer that joins and leaves sees it: {name: tensor}."""
    with loco.Peer(tracker.peer_config(tmp_path, "genesis")) as peer:
        theta = {name: torch.zeros(shape) for name, shape in peer.tensors()}
        peer.bind_all(theta)
        peer.join(timeout=30)
    return theta


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_bf16_and_other_dtypes_are_converted_as_loco_reads_and_writes_them(tracker_factory,
                                                                          tmp_path, dtype):
    """bf16 tensors are bound as they are (loco converts); an fp16 one goes through an fp32 copy
    (the path a GPU tensor takes, without the GPU). Either way the tensor gets θ rounded to its
    dtype, and loco reads the tensor's own values for Δ."""
    tracker = tracker_factory(min_peers=1)
    theta = genesis(tracker, tmp_path)
    with loco.Peer(tracker.peer_config(tmp_path, "low")) as peer:
        model = {name: torch.full(shape, math.nan, dtype=dtype) for name, shape in peer.tensors()}
        peer.bind_all(model)
        joined = peer.join(timeout=30)
        assert joined.round == 0
        for name, t in model.items():
            assert torch.equal(t, theta[name].to(dtype)), f"{name}: θ rounded to {dtype}"
        for t in model.values():
            t.sub_(0.01)  # in the tensor's dtype, rounded
        result = peer.round(loss=1.0)
        assert result.kind == "committed" and result.members == 1
        # Alone, the mean is this peer's Δ = θ − (its tensor), through int8 blocks; the outer
        # step from zero momentum moves θ by 0.7·(1 + 0.9)·Δ.
        for name, t in model.items():
            delta = theta[name] - (theta[name].to(dtype) - 0.01).float()
            expected = theta[name] - 0.7 * 1.9 * delta
            assert torch.allclose(t.float(), expected, rtol=2 ** -7, atol=1e-3), name
