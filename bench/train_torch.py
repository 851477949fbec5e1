#!/usr/bin/python3
"""PyTorch reference for bench/train-vs-torch.sh: the same GPT as loco (nanoGPT's layout) and
the same AdamW (betas 0.9/0.95, eps 1e-8, weight decay 0.1 on matrices only, clip 1.0).

  train_torch.py [--steps N] [--threads T] [--layers L] [--d-model C] [--heads H]
                 [--context T] [--batch B] [--vocab V]
      trains on random tokens and prints "torch: tok_s=..." (best of three timed runs).
  train_torch.py --check DIR
      loads the batch, parameters and gradients that `bench-train_step --dump DIR` wrote and
      compares loco's loss and gradients with PyTorch's (float32 and float64).
Run with /usr/bin/python3 and OPENBLAS_NUM_THREADS=1 (see docs/TRAINING.md).
"""
import argparse
import math
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, c, n_head):
        super().__init__()
        self.n_head = n_head
        self.ln_1 = nn.LayerNorm(c)
        self.attn = nn.Module()
        self.attn.c_attn = nn.Linear(c, 3 * c)
        self.attn.c_proj = nn.Linear(c, c)
        self.ln_2 = nn.LayerNorm(c)
        self.mlp = nn.Module()
        self.mlp.c_fc = nn.Linear(c, 4 * c)
        self.mlp.c_proj = nn.Linear(4 * c, c)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.attn.c_attn(self.ln_1(x)).split(c, dim=2)
        shape = (b, t, self.n_head, c // self.n_head)
        q, k, v = (z.view(shape).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(c // self.n_head)
        mask = torch.ones(t, t, dtype=torch.bool).tril()
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
        x = x + self.attn.c_proj(y)
        return x + self.mlp.c_proj(F.gelu(self.mlp.c_fc(self.ln_2(x)), approximate="tanh"))


class Gpt(nn.Module):
    def __init__(self, vocab, context, n_layer, n_head, c):
        super().__init__()
        self.transformer = nn.Module()
        self.transformer.wte = nn.Embedding(vocab, c)
        self.transformer.wpe = nn.Embedding(context, c)
        self.transformer.h = nn.ModuleList([Block(c, n_head) for _ in range(n_layer)])
        self.transformer.ln_f = nn.LayerNorm(c)
        # GPT-2 initialisation, as loco's Gpt::init (only the values differ, not the work).
        for name, p in self.named_parameters():
            if p.dim() >= 2:
                std = 0.02 / math.sqrt(2 * n_layer) if name.endswith("c_proj.weight") else 0.02
                nn.init.normal_(p, 0.0, std)
            elif name.endswith(".bias"):
                nn.init.zeros_(p)

    def forward(self, idx, targets):
        t = idx.shape[1]
        x = self.transformer.wte(idx) + self.transformer.wpe(torch.arange(t))
        for block in self.transformer.h:
            x = block(x)
        logits = self.transformer.ln_f(x) @ self.transformer.wte.weight.t()
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))


def make_optimizer(model):
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=3e-4, betas=(0.9, 0.95), eps=1e-8)


def train(args):
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model = Gpt(args.vocab, args.context, args.layers, args.heads, args.d_model)
    opt = make_optimizer(model)
    n = args.batch * args.context
    shape = (args.batch, args.context)

    def step():
        idx = torch.randint(0, args.vocab, shape)
        targets = torch.randint(0, args.vocab, shape)
        loss = model(idx, targets)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss.item()

    step()  # warm-up
    best = math.inf
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(args.steps):
            loss = step()
        best = min(best, time.perf_counter() - start)
    tok_s = n * args.steps / best
    params = sum(p.numel() for p in model.parameters())
    print(f"torch {torch.__version__} GPT {args.layers}L d{args.d_model}, {params} params, "
          f"{torch.get_num_threads()} threads")
    print(f"torch: tok_s={tok_s:.0f} loss={loss:.4f}")


def check(directory):
    """Compares loco's dumped loss and gradients with PyTorch's for the same weights and batch."""
    tensors, config, batch, loco_loss = [], None, None, None
    with open(f"{directory}/manifest.txt") as f:
        for line in f:
            words = line.split()
            if words[0] == "config":
                config = [int(w) for w in words[1:]]
            elif words[0] == "batch":
                batch = [int(w) for w in words[1:]]
            elif words[0] == "loss":
                loco_loss = float(words[1])
            elif words[0] == "tensor":
                tensors.append((words[1], int(words[2]), int(words[3])))
    params = np.fromfile(f"{directory}/params.bin", dtype="<f4")
    grads = np.fromfile(f"{directory}/grads.bin", dtype="<f4")
    inputs = torch.from_numpy(np.fromfile(f"{directory}/inputs.bin", dtype="<i4").astype(np.int64))
    targets = torch.from_numpy(np.fromfile(f"{directory}/targets.bin", dtype="<i4").astype(np.int64))
    vocab, context, n_layer, n_head, c = config
    inputs, targets = inputs.view(*batch), targets.view(*batch)

    worst = {}
    for dtype in (torch.float32, torch.float64):
        model = Gpt(vocab, context, n_layer, n_head, c).to(dtype)
        state = model.state_dict()
        for name, offset, numel in tensors:
            values = torch.from_numpy(params[offset:offset + numel].copy()).to(dtype)
            state[name].copy_(values.view_as(state[name]))
        loss = model(inputs, targets)
        loss.backward()
        named = dict(model.named_parameters())
        max_rel = 0.0
        for name, offset, numel in tensors:
            ref = named[name].grad.double().flatten()
            ours = torch.from_numpy(grads[offset:offset + numel].astype(np.float64))
            rel = ((ours - ref).norm() / ref.norm().clamp_min(1e-30)).item()
            max_rel = max(max_rel, rel)
            if rel > 1e-3:
                print(f"  {name}: relative gradient error {rel:.2e}")
        worst[dtype] = max_rel
        print(f"torch {dtype}: loss {loss.item():.7f} (loco {loco_loss:.7f}, "
              f"difference {abs(loss.item() - loco_loss):.2e}); worst per-tensor relative "
              f"gradient error ‖g_loco − g_torch‖/‖g_torch‖ = {max_rel:.2e}")
    ok = worst[torch.float64] < 1e-3
    print(f"torch-check: loss_diff={abs(loss.item() - loco_loss):.2e} "
          f"max_grad_rel_err_fp64={worst[torch.float64]:.2e} "
          f"max_grad_rel_err_fp32={worst[torch.float32]:.2e} ok={int(ok)}")
    return 0 if ok else 1


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--d-model", type=int, default=128)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--context", type=int, default=128)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--vocab", type=int, default=256)
    parser.add_argument("--check", metavar="DIR")
    args = parser.parse_args()
    if args.check:
        sys.exit(check(args.check))
    train(args)


if __name__ == "__main__":
    main()
