"""DiLoCo of the LSTM example (docs/examples/pytorch/train_lstm.py) in one process, without loco: W
workers on their shards of a token file, H AdamW steps each, then the mean Δ and loco's outer
Nesterov step (v = μv + Δ; θ -= η(Δ + μv): optim/outer_nesterov.cpp) on the shared θ, which every
worker starts its next phase from (no codec, no network, no overlap). The algorithm alone, to tell
its part of `MODEL=own bench/run.sh torch-peers`'s loss gap from loco's, and to try its settings
in seconds rather than minutes (docs/PYTORCH.md, "MODEL=own"). --alone: the bench's baseline, one
process with W × the batch. Prints the final θ's validation loss (the example's evaluator).

    PYTHONPATH=build/release/python OMP_NUM_THREADS=1 /usr/bin/python3 bench/torch_own_sim.py \\
        --train train.bin --val val.bin --momentum 0.5
"""

import argparse
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs" / "examples" / "pytorch"))
import train_lstm as example  # noqa: E402


def diloco(args, tokens):
    """The shared θ after args.steps // args.h rounds of args.workers workers."""
    theta = [p.detach().clone() for p in example.genesis_model().parameters()]
    momentum = [torch.zeros_like(t) for t in theta]
    size = len(tokens) // args.workers
    workers = []
    for i in range(args.workers):  # peer i + 1 of the bench: its seed, its shard, its sampler
        torch.manual_seed(args.seed + i)
        model = example.LSTMModel()
        rng = np.random.default_rng((args.seed + i) * 1000 + i)
        step = example.trainer(model, tokens[i * size:(i + 1) * size], rng, args.batch, args.lr)
        workers.append((list(model.parameters()), step))
    for _ in range(args.steps // args.h):
        with torch.no_grad():
            for params, _ in workers:
                for p, t in zip(params, theta):
                    p.copy_(t)
        for _, step in workers:
            for _ in range(args.h):
                step()
        with torch.no_grad():
            for k, t in enumerate(theta):
                delta = sum(t - params[k] for params, _ in workers) / args.workers
                momentum[k].mul_(args.momentum).add_(delta)
                t.sub_(args.outer_lr * (delta + args.momentum * momentum[k]))
    model = example.LSTMModel()
    with torch.no_grad():
        for p, t in zip(model.parameters(), theta):
            p.copy_(t)
    return model


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--train", required=True)
    p.add_argument("--val", required=True)
    p.add_argument("--steps", type=int, default=300, help="inner steps per worker")
    p.add_argument("--h", type=int, default=20)
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--outer-lr", type=float, default=0.7)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--batch", type=int, default=16, help="windows per worker step")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--alone", action="store_true", help="one process, workers × batch windows")
    args = p.parse_args()
    torch.set_num_threads(1)
    tokens = np.memmap(args.train, dtype=np.uint16, mode="r")
    if args.alone:
        model = example.genesis_model()
        step = example.trainer(model, tokens, np.random.default_rng(args.seed),
                               args.batch * args.workers, args.lr)
        for _ in range(args.steps):
            step()
    else:
        model = diloco(args, tokens)
    val = np.memmap(args.val, dtype=np.uint16, mode="r")
    print(f"val_loss={example.evaluate(model, val):.6f}")


if __name__ == "__main__":
    main()
