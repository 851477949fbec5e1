#!/usr/bin/python3
"""Checks that loco and nanoGPT-style PyTorch code read each other's safetensors files.

  scripts/check-pytorch-interop.py [LOCO_TRAIN]   (default build/release/bin/loco-train)

1. A PyTorch GPT with nanoGPT's module names (bench/train_torch.py, plus nanoGPT's tied
   lm_head) is saved as PyTorch's safetensors package would, without loco's digest: once in F32
   with the whole state dict (lm_head.weight beside transformer.wte.weight), once in BF16 with
   lm_head.weight alone (what safetensors.torch.save_model keeps of a tied pair).
2. loco-train starts from each with --init, runs one step at a learning rate of 1e-7 and writes
   a checkpoint.
3. The checkpoint is read with the pure-Python reader of docs/FORMATS.md and loaded into the
   PyTorch model with load_state_dict; every parameter must be within 1e-5 of what went in.
Needs /usr/bin/python3 with torch and numpy (scripts/install-deps.sh --with-torch); the test
suite does not run it. Prints "pytorch-interop: ok" or fails with the first difference.
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn as nn

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from train_torch import Gpt  # noqa: E402  (nanoGPT's layout, lm_head tied to wte)

VOCAB, CONTEXT, LAYERS, HEADS, WIDTH = 64, 16, 2, 2, 32
DTYPES = {torch.float32: ("F32", "<f4"), torch.bfloat16: ("BF16", None)}


def nanogpt_model():
    torch.manual_seed(0)
    model = Gpt(VOCAB, CONTEXT, LAYERS, HEADS, WIDTH)
    model.lm_head = nn.Linear(WIDTH, VOCAB, bias=False)  # tied, as in nanoGPT's GPT
    model.lm_head.weight = model.transformer.wte.weight
    for name, p in model.named_parameters():
        if name.endswith(".bias") or "ln_" in name:  # make every tensor non-trivial
            with torch.no_grad():
                p.uniform_(-0.5, 0.5)
    return model


def write_safetensors(path, tensors):
    """As another tool writes it: no __metadata__, no digest, header in reverse name order."""
    header, chunks, offset = {}, [], 0
    for name in sorted(tensors, reverse=True):
        t = tensors[name].contiguous()
        dtype, _ = DTYPES[t.dtype]
        raw = t.view(torch.int16).numpy().tobytes() if t.dtype == torch.bfloat16 else t.numpy().tobytes()
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(chunks))


def read_safetensors(path):
    """The reader of docs/FORMATS.md ("Loading a loco checkpoint into PyTorch")."""
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    header.pop("__metadata__", None)
    data = memoryview(raw)[8 + n:]
    out = {}
    for name, e in header.items():
        assert e["dtype"] == "F32", (name, e["dtype"])
        b, end = e["data_offsets"]
        out[name] = torch.from_numpy(np.frombuffer(data[b:end], dtype="<f4").reshape(e["shape"]).copy())
    return out


def run_loco(loco_train, init, checkpoint):
    args = [loco_train, "--init", init, "--train.checkpoint", checkpoint,
            "--model.vocab", str(VOCAB), "--model.context", str(CONTEXT),
            "--model.n-layer", str(LAYERS), "--model.n-head", str(HEADS),
            "--model.d-model", str(WIDTH), "--train.steps", "1", "--train.batch", "2",
            "--optim.lr", "1e-7", "--optim.min-lr", "0", "--optim.warmup-steps", "0",
            "--optim.weight-decay", "0", "--train.eval-windows", "2", "--train.threads", "1",
            "--data.markov-train-tokens", "10000", "--data.markov-val-tokens", "1000"]
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit("pytorch-interop: loco-train failed:\n" + done.stdout + done.stderr)


def check(loco_train, directory, dtype, state, saved):
    name = {torch.float32: "f32", torch.bfloat16: "bf16"}[dtype]
    init, checkpoint = os.path.join(directory, name + ".safetensors"), os.path.join(directory, name + "-ckpt.safetensors")
    write_safetensors(init, {k: state[k].to(dtype) for k in saved})
    run_loco(loco_train, init, checkpoint)

    model = nanogpt_model()
    loaded = read_safetensors(checkpoint)
    params = {k: v for k, v in loaded.items() if k in model.state_dict()}
    params["lm_head.weight"] = params["transformer.wte.weight"]
    missing, unexpected = model.load_state_dict(params, strict=False)
    if unexpected or any(not k.endswith(".attn.bias") for k in missing):
        sys.exit(f"pytorch-interop: {name}: missing {missing}, unexpected {unexpected}")
    for key, value in model.state_dict().items():
        want = state[key].to(dtype).float()
        diff = (value - want).abs().max().item()
        if diff > 1e-5:
            sys.exit(f"pytorch-interop: {name}: {key} differs by {diff} after one step at lr 1e-7")
    tokens = torch.randint(0, VOCAB, (2, CONTEXT))
    loss = model(tokens, tokens).item()
    if not np.isfinite(loss):
        sys.exit(f"pytorch-interop: {name}: loss {loss}")
    print(f"pytorch-interop: {name}: {len(params)} tensors round-trip, loss {loss:.4f}")


def main():
    loco_train = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build/release/bin/loco-train")
    state = {k: v.detach().clone() for k, v in nanogpt_model().state_dict().items()}
    with tempfile.TemporaryDirectory() as directory:
        check(loco_train, directory, torch.float32, state, list(state))
        # safetensors.torch.save_model keeps lm_head.weight alone of the tied pair.
        check(loco_train, directory, torch.bfloat16, state, [k for k in state if k != "transformer.wte.weight"])
    print("pytorch-interop: ok")


if __name__ == "__main__":
    main()
