"""bind_all tells the truth: a module (wrapped or not) or a state dict; every run tensor left
unbound and every model tensor the run lacks in one message; a tensor bound through a copy said
once; a tensor that is not contiguous refused with a hint that keeps its link to the model. And a
join that cannot succeed says why with its own status. Skipped where PyTorch is not installed."""

import math
import time
import warnings

import pytest

import loco

torch = pytest.importorskip("torch")
nn = torch.nn


def module_of(shapes, fill=math.nan, dtype=torch.float32):
    """A torch module whose parameters have the state-dict names and shapes `shapes`."""
    root = nn.Module()
    for name, shape in shapes:
        *path, leaf = name.split(".")
        owner = root
        for part in path:
            if part not in owner._modules:
                owner.add_module(part, nn.Module())
            owner = owner._modules[part]
        owner.register_parameter(leaf, nn.Parameter(torch.full(shape, fill, dtype=dtype)))
    return root


def wrapped(module, prefix):
    """`module` under `prefix` (DDP's "module", torch.compile's "_orig_mod"), as the wrappers
    name their parameters."""
    wrapper = nn.Module()
    wrapper.add_module(prefix, module)
    return wrapper


def test_a_wrapped_module_is_bound_by_its_own_names_and_what_the_run_lacks_is_said(
        tracker_factory, tmp_path):
    """DDP over torch.compile: names like module._orig_mod.transformer.wte.weight bind to the
    run's transformer.wte.weight. A BatchNorm's running statistics and a parameter of the model's
    own are not in the run: one warning names them (not the integer batch count)."""
    tracker = tracker_factory(min_peers=1)
    with loco.Peer(tracker.peer_config(tmp_path, "wrapped")) as peer:
        inner = module_of(peer.tensors())
        inner.add_module("norm", nn.BatchNorm1d(3))
        model = wrapped(wrapped(inner, "_orig_mod"), "module")
        with pytest.warns(UserWarning) as said:
            peer.bind_all(model)
        assert len(said) == 1, [str(w.message) for w in said]
        message = str(said[0].message)
        for name in ("norm.weight", "norm.bias", "norm.running_mean", "norm.running_var"):
            assert f"module._orig_mod.{name}" in message, message
        assert "num_batches_tracked" not in message and "not averaged" in message
        peer.join(timeout=30)
        for name, p in inner.named_parameters():
            if not name.startswith("norm."):
                assert not torch.isnan(p).any(), f"{name}: θ written into the module's parameter"


def test_one_message_names_every_tensor_unbound_and_every_tensor_the_run_lacks(
        tracker_factory, tmp_path):
    tracker = tracker_factory(min_peers=1)
    with loco.Peer(tracker.peer_config(tmp_path, "partial")) as peer:
        shapes = peer.tensors()
        left_out = [shapes[0][0], shapes[-1][0]]
        kept = [(name, shape) for name, shape in shapes if name not in left_out]
        (name, shape), rest = kept[0], kept[1:]
        model = module_of(rest + [(name, tuple(s + 1 for s in shape))] +
                          [("encoder.rnn.weight_ih_l0", (4, 2))])
        with pytest.raises(loco.Error) as refused:
            peer.bind_all(model.state_dict())
        assert refused.value.status == "LOCO_ERR_INVALID_ARGUMENT"
        message = refused.value.message
        assert f"2 of the run's {len(shapes)} tensors are not in the model" in message, message
        for missing in left_out:
            assert missing in message, message
        assert f"{name} is {[s + 1 for s in shape]} in the model, {list(shape)} in the run" \
            in message, message
        assert "encoder.rnn.weight_ih_l0 is not in the run: not averaged" in message, message


def test_a_tensor_bound_through_a_copy_is_said_once_per_tensor(tracker_factory, tmp_path):
    tracker = tracker_factory(min_peers=1)
    with loco.Peer(tracker.peer_config(tmp_path, "doubles")) as peer:
        model = {name: torch.zeros(shape, dtype=torch.float64) for name, shape in peer.tensors()}
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            peer.bind_all(model)
        copies = [str(w.message) for w in said if "bound through an fp32 CPU copy" in str(w.message)]
        assert len(copies) == len(model), copies
        assert all("torch.float64" in m for m in copies), copies
        peer.join(timeout=30)
        assert any(t.abs().sum() > 0 for t in model.values()), "θ copied into the float64 tensors"


def test_a_tensor_that_is_not_contiguous_is_refused_with_a_hint_that_keeps_the_link(
        tracker_factory, tmp_path):
    tracker = tracker_factory(min_peers=1)
    with loco.Peer(tracker.peer_config(tmp_path, "strided")) as peer:
        name, shape = next((n, s) for n, s in peer.tensors() if len(s) == 2)
        with pytest.raises(loco.Error) as strided:
            peer.bind(name, nn.Parameter(torch.zeros(shape[::-1])).t())
        assert strided.value.status == "LOCO_ERR_INVALID_ARGUMENT"
        assert "param.data = param.data.contiguous()" in strided.value.message
        with pytest.raises(loco.Error) as counts:
            peer.bind(name, torch.zeros(shape, dtype=torch.int64))
        assert "floating-point" in counts.value.message


def test_a_join_that_cannot_succeed_says_why_with_its_own_status(tracker_factory, tmp_path):
    """Well before the join's timeout (60 s): another run id is LOCO_ERR_CONFIG, a key that is
    not the tracker's LOCO_ERR_CRYPTO."""
    tracker = tracker_factory(min_peers=1)
    config = tracker.peer_config(tmp_path, "lost")
    text = config.read_text()
    other_key = loco.keygen(tmp_path / "not-the-tracker.key")
    cases = [("another run", text.replace(f'id = "{tracker.run_id}"', 'id = "another-run"'),
              "LOCO_ERR_CONFIG", "[run] id"),
             ("another key", text.replace(tracker.public_key, other_key),
              "LOCO_ERR_CRYPTO", "[tracker] public-key")]
    for what, changed, status, hint in cases:
        assert changed != text, what
        config.write_text(changed)
        with loco.Peer(config) as peer:
            peer.bind_all({name: torch.zeros(shape) for name, shape in peer.tensors()})
            started = time.monotonic()
            with pytest.raises(loco.Error) as failed:
                peer.join(timeout=60)
            assert failed.value.status == status and hint in failed.value.message, what
            assert time.monotonic() - started < 30, f"{what}: before the join's timeout"
