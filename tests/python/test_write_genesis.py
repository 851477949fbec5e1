"""loco.write_genesis on modules and mappings: which tensors go in and in what order (a tied
parameter once, BatchNorm's float buffers only when asked, integer entries never), dtypes
(bf16 widened exactly, float64 as fp32), and the errors. The file is read back with nothing but
json and struct (docs/FORMATS.md). Skipped where PyTorch is not installed."""

import json
import struct

import pytest

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")

import loco  # noqa: E402
from torch import nn  # noqa: E402


def read_back(path):
    """{name: array} in the file's data order."""
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    entries = sorted(((k, v) for k, v in header.items() if k != "__metadata__"),
                     key=lambda kv: kv[1]["data_offsets"][0])
    out = {}
    for name, entry in entries:
        assert entry["dtype"] == "F32"
        b, e = entry["data_offsets"]
        out[name] = np.frombuffer(data[b:e], dtype="<f4").reshape(entry["shape"])
    return out


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.norm = nn.BatchNorm2d(4)
        self.embed = nn.Embedding(5, 4)
        self.head = nn.Linear(4, 5)
        self.head.weight = self.embed.weight  # tied


def test_parameters_in_state_dict_order_a_tied_one_once(tmp_path, capsys):
    torch.manual_seed(0)
    model = Cnn()
    loco.write_genesis(model, tmp_path / "p.safetensors")
    got = read_back(tmp_path / "p.safetensors")
    assert list(got) == ["conv.weight", "conv.bias", "norm.weight", "norm.bias", "embed.weight",
                         "head.bias"]
    for name, value in got.items():
        assert np.array_equal(value, model.state_dict()[name].numpy()), name
    assert "genesis-blake2b" in capsys.readouterr().out

    loco.write_genesis(model, tmp_path / "b.safetensors", buffers=True)
    with_buffers = read_back(tmp_path / "b.safetensors")
    assert list(with_buffers) == ["conv.weight", "conv.bias", "norm.weight", "norm.bias",
                                  "norm.running_mean", "norm.running_var", "embed.weight",
                                  "head.bias"], "float buffers, not num_batches_tracked"


def test_a_mapping_its_float_entries_in_order_dtypes_converted(tmp_path):
    weights = {"b": torch.tensor([1.0, -2.5], dtype=torch.bfloat16),
               "steps": torch.tensor(3),  # an integer: not a parameter, left out
               "a": np.arange(6, dtype=np.float64).reshape(2, 3) / 3,
               "t": torch.ones(3, 2).t()}  # not contiguous: copied for the file
    loco.write_genesis(weights, tmp_path / "m.safetensors")
    got = read_back(tmp_path / "m.safetensors")
    assert list(got) == ["b", "a", "t"]
    assert got["b"].tolist() == [1.0, -2.5]
    assert np.array_equal(got["a"], (np.arange(6).reshape(2, 3) / 3).astype(np.float32))
    assert got["t"].shape == (2, 3)


@pytest.mark.parametrize("tensors, words", [
    ({}, "a model has 1 to"),
    ({"e": torch.zeros(0, 3)}, "dimension of 0"),
    ({"": torch.zeros(2)}, "name"),
])
def test_errors_are_loco_errors(tmp_path, tensors, words):
    with pytest.raises(loco.Error) as error:
        loco.write_genesis(tensors, tmp_path / "x.safetensors")
    assert error.value.status == "LOCO_ERR_INVALID_ARGUMENT" and words in error.value.message, \
        error.value
