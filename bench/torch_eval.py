"""The validation loss of a loco checkpoint's shared θ (its outer.params.* tensors, nanoGPT's
names) under the PyTorch example's GPT and evaluator (docs/examples/pytorch/train_gpt.py), so that
a run of loco-peer and a run of PyTorch peers are judged on the same windows by the same code.
Usage: torch_eval.py CHECKPOINT VAL_TOKENS N_HEAD   (prints the loss)"""

import json
import struct
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "docs" / "examples" / "pytorch"))
from train_gpt import GPT, evaluate  # noqa: E402

PREFIX = "outer.params."


def read_safetensors(path):
    """{name: fp32 array} of a safetensors file loco wrote (F32 tensors only)."""
    data = Path(path).read_bytes()
    (size,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + size])
    body = data[8 + size:]
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        assert entry["dtype"] == "F32", (name, entry["dtype"])
        begin, end = entry["data_offsets"]
        out[name] = np.frombuffer(body[begin:end], dtype=np.float32).reshape(entry["shape"])
    return out


def main(checkpoint, val_file, n_head):
    theta = {name[len(PREFIX):]: a for name, a in read_safetensors(checkpoint).items()
             if name.startswith(PREFIX)}
    vocab, d = theta["transformer.wte.weight"].shape
    context = theta["transformer.wpe.weight"].shape[0]
    n_layer = sum(1 for name in theta if name.endswith(".ln_1.weight"))
    model = GPT(vocab, context, n_layer, n_head, d)
    missing, _ = model.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in theta.items()},
                                       strict=False)
    assert missing == ["lm_head.weight"], missing  # tied to transformer.wte.weight
    torch.set_num_threads(1)
    print(f"{evaluate(model, np.memmap(val_file, dtype=np.uint16, mode='r'), context):.6f}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
