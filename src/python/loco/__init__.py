"""loco for Python: a training script joins a loco run as a DiLoCo, Streaming DiLoCo or SparseLoCo
peer (docs/PYTORCH.md).

The trainer owns its model, its inner optimizer and its data; loco owns the rest: joining the
run, the shared state (θ at the last round and the outer momentum), the round (Δ, compression,
the group's all-reduce, the outer Nesterov step), the state hash, serving the state to newcomers.

    peer = loco.Peer("peer.toml")              # a loco-peer config: the same keys
    peer.bind_all(model)                       # fp32/bf16 CPU tensors, NumPy arrays: no copy
    peer.join()                                # the run's θ written into them
    for each round:
        H inner steps (AdamW...) on the bound tensors
        result = peer.round(loss)              # the tensors now hold the new θ
    peer.close()

Streaming DiLoCo (the run config's [strategy] kind = "streaming"): each round averages one
fragment of the tensors while the trainer trains on; after every inner step the trainer calls

        for result in peer.fragment_step(step, loss): ...   # starts and lands fragment rounds

(or fragment_due, fragment_start, fragment_ready, fragment_land itself: docs/PYTORCH.md).

SparseLoCo (kind = "sparseloco"): the same loop as DiLoCo's, peer.round() every H steps; each
member sends only the chunk-wise top-k of its error-feedback accumulator, which peer.save() keeps.

A peer is used by one thread at a time; peer.interrupt() may come from any thread.
"""

import warnings
from collections import namedtuple
from pathlib import Path

from . import _loco

__all__ = ["DataShard", "Error", "JoinInfo", "Peer", "RoundResult", "StreamingInfo", "keygen", "version",
           "write_genesis"]

version = _loco.version()

# step: the inner step the run's state stands for; the trainer's count goes on from it.
JoinInfo = namedtuple("JoinInfo", "fetched round shard_index shard_count step")
DataShard = namedtuple("DataShard", "index count changes")
# times: where loco's part of the round went, in seconds (gather_s, delta_s, exchange_s, hash_s,
# outer_s, write_back_s: loco/loco.h's loco_round_times), and the copies of the tensors bound
# through a copy (_Staged) that the round made, from its start to its landing: staging_bytes (both
# ways) and staging_s; bytes_*: this peer's since it joined.
# step: as JoinInfo's (after a replaced round the trainer's count goes on from it).
RoundResult = namedtuple("RoundResult",
                         "kind round members state_hash times bytes_sent bytes_received step")
# A Streaming run's P, H, τ, α and whether it has eager updates ([strategy] fragments, diloco-h,
# tau, alpha, eager).
StreamingInfo = namedtuple("StreamingInfo", "fragments inner_steps tau alpha eager",
                           defaults=(False,))
_DUE = {0: None, 1: "start", 2: "land"}


class Error(RuntimeError):
    """A call of loco failed: `status` names the kind (LOCO_ERR_CONFIG, ...), `message` says why."""

    def __init__(self, status, message):
        super().__init__(f"{status}: {message}")
        self.status = status
        self.message = message


def keygen(path):
    """Writes a new identity key file at `path` (refuses to overwrite); returns its public key."""
    return _loco.keygen(str(path))


def write_genesis(model, path, buffers=False):
    """Writes the genesis file of a run of your own model: its tensors (names, shapes, order) and
    their values now, the run's initial parameters. `model`: a torch.nn.Module (its parameters in
    state_dict order, a tied one once under its first name; with buffers=True its floating-point
    buffers too, e.g. BatchNorm's running statistics) or a mapping name -> tensor (its
    floating-point entries, in its order). fp32 and bf16 are written as they are (bf16 widened
    exactly), other floating dtypes as fp32. Prints and returns the run config lines that name the
    file by its hash ([model] kind = "external", genesis, genesis-blake2b)."""
    tensors = [_genesis_entry(name, tensor) for name, tensor in _genesis_tensors(model, buffers)]
    _, lines = _loco.write_genesis(str(path), tensors)
    print(lines, end="")
    return lines


def _genesis_tensors(model, buffers):
    if not (hasattr(model, "state_dict") and hasattr(model, "parameters")):
        return [(name, t) for name, t in model.items() if _is_floating(t)]
    import torch

    seen, out = set(), []
    for name, tensor in model.state_dict(keep_vars=True).items():
        if id(tensor) in seen:  # tied: the same tensor under a second name
            continue
        if isinstance(tensor, torch.nn.Parameter) or (buffers and tensor.is_floating_point()):
            seen.add(id(tensor))
            out.append((name, tensor))
    return out


def _is_floating(tensor):
    if _is_torch(tensor):
        return tensor.is_floating_point()
    import numpy

    return numpy.issubdtype(numpy.asarray(tensor).dtype, numpy.floating)


def _genesis_entry(name, tensor):
    """(name, a C-order array, is_bf16) for _loco.write_genesis."""
    if not _is_floating(tensor):
        raise Error("LOCO_ERR_INVALID_ARGUMENT", f"tensor {name}: not floating point")
    if _is_torch(tensor):
        import torch

        tensor = tensor.detach().cpu().contiguous()
        if tensor.dtype == torch.bfloat16:  # NumPy has no bf16: its bits, as int16
            return (name, tensor.view(torch.int16).numpy(), True)
        return (name, tensor.float().numpy(), False)
    import numpy

    return (name, numpy.ascontiguousarray(tensor, dtype=numpy.float32), False)


def _is_torch(tensor):
    return hasattr(tensor, "detach") and hasattr(tensor, "device")


class _Staged:
    """A torch tensor loco cannot read in place (on a GPU, or neither fp32 nor bf16) seen through
    an fp32 CPU copy made once at bind and reused, pinned when the tensor is on a CUDA device:
    copied in before loco reads it, out after loco writes it, converting the dtype on the way."""

    def __init__(self, tensor):
        import torch

        self.tensor = tensor.detach()  # the same memory, outside autograd
        pinned = tensor.device.type == "cuda" and torch.cuda.is_available()
        self.host = torch.empty(tuple(tensor.shape), dtype=torch.float32, pin_memory=pinned)
        self.nbytes = self.host.numel() * self.host.element_size()

    def take(self):
        self.host.copy_(self.tensor)

    def give(self):
        self.tensor.copy_(self.host)


# What wrappers put before a module's own names: DistributedDataParallel's and torch.compile's
# (either may wrap the other).
_WRAPPER_PREFIXES = ("module.", "_orig_mod.")


def _unwrapped(name):
    """`name` without the wrapper prefixes in front of it."""
    while name.startswith(_WRAPPER_PREFIXES):
        name = name[name.index(".") + 1:]
    return name


def _named_tensors(model):
    """{name: tensor} of a torch module (its state dict, holding the parameters themselves) or of
    a mapping name -> tensor."""
    if hasattr(model, "state_dict") and hasattr(model, "named_parameters"):
        return dict(model.state_dict(keep_vars=True))
    return dict(model)


def _is_floating(tensor):
    if _is_torch(tensor):
        return tensor.is_floating_point()
    return getattr(getattr(tensor, "dtype", None), "kind", "f") == "f"


def _memory(tensor):
    """What identifies a tensor's memory (a tied weight shares it with another name)."""
    if _is_torch(tensor):
        return (tensor.device, tensor.data_ptr(), tuple(tensor.shape), tensor.dtype)
    return id(tensor)


def _match(run, named):
    """{run name: (model name, tensor)} by name, or by name without a wrapper's prefix; and the
    model's floating-point tensors the run does not have (a tensor tied to a matched one is not
    one of them: it shares its memory)."""
    matched, others = {}, []
    for name, tensor in named.items():
        key = name if name in run else _unwrapped(name)
        if key not in run:
            if _is_floating(tensor):
                others.append((name, tensor))
            continue
        if key in matched:
            raise Error("LOCO_ERR_INVALID_ARGUMENT",
                        f"bind_all: the model has both {matched[key][0]} and {name} for the "
                        f"run's tensor {key}")
        matched[key] = (name, tensor)
    bound = {_memory(tensor) for _, tensor in matched.values()}
    return matched, [name for name, tensor in others if _memory(tensor) not in bound]


def _copy_reason(tensor):
    """Why a torch tensor cannot be bound in place but through a copy (None: it can be)."""
    import torch

    if tensor.device.type != "cpu":
        return f"on {tensor.device}"
    if tensor.dtype not in (torch.float32, torch.bfloat16):
        return f"{tensor.dtype}"
    if not tensor.is_contiguous() and tensor.dim() == 4 and tensor.is_contiguous(
            memory_format=torch.channels_last):
        return "channels_last"
    return None


class _Staging:
    """The copies of a peer's _Staged tensors: only those of the tensors a call reads (take) or
    writes (give), e.g. one fragment's, and their bytes and seconds since the last report."""

    def __init__(self, bound):
        self._bound = bound  # the Peer's name -> (tensor, its array or _Staged)
        self.bytes, self.seconds = 0, 0.0

    def take(self, names=None):
        self._copy(names, _Staged.take)

    def give(self, names=None):
        self._copy(names, _Staged.give)

    def _copy(self, names, copy):
        import time

        staged = [b[1] for name, b in self._bound.items()
                  if isinstance(b[1], _Staged) and (names is None or name in names)]
        if not staged:
            return
        started = time.perf_counter()
        for s in staged:
            copy(s)
        self.seconds += time.perf_counter() - started
        self.bytes += sum(s.nbytes for s in staged)

    def report(self, result):
        """The RoundResult `result` with the copies since the last report in its times."""
        times = dict(result.times, staging_bytes=self.bytes, staging_s=self.seconds)
        self.reset()
        return result._replace(times=times)

    def reset(self):
        self.bytes, self.seconds = 0, 0.0


class Peer:
    """A peer of a loco run, from a loco-peer config file (its [peer], [run], [tracker] keys)."""

    def __init__(self, config):
        self._peer = _loco.Peer(str(config))
        self._bound = {}  # name -> (the caller's object, its array): kept alive while bound
        self._staged = []  # _Staged tensors, copied around join and each round
        self._staging = _Staging(self._bound)

    def tensors(self):
        """[(name, shape), ...]: the run's model, whose every tensor must be bound before join."""
        return [(name, tuple(shape)) for name, shape in self._peer.tensors()]

    @property
    def inner_steps(self):
        """The run's H: inner steps between rounds ([strategy] diloco-h)."""
        return self._peer.inner_steps()

    @property
    def strategy(self):
        """The run's [strategy] kind: "diloco", "streaming" or "sparseloco"."""
        return self._peer.strategy()

    def bind(self, name, tensor):
        """Binds a C-contiguous, writable tensor to `name`: an fp32 NumPy array or CPU torch
        tensor, or a bf16 CPU torch tensor (loco converts as it reads and writes), without a copy.
        Any other floating-point torch tensor (on a GPU, of another dtype such as float64, or
        channels_last) is bound through an fp32 CPU copy (pinned for CUDA) that loco fills and
        empties around join and each round, and a warning says so. A tensor that is not
        contiguous is refused: a contiguous copy of it would not be the model's memory."""
        self._bind(name, tensor)

    def _bind(self, name, tensor):
        """bind(), called by bind() or bind_all(): its warning names their caller's line."""
        if not _is_torch(tensor):
            self._peer.bind(name, tensor)
            self._bound[name] = (tensor, tensor)
            return
        import torch

        if tensor.layout != torch.strided or not tensor.is_floating_point():
            raise Error("LOCO_ERR_INVALID_ARGUMENT",
                        f"tensor {name}: loco averages dense floating-point tensors, not "
                        f"{tensor.layout} {tensor.dtype}")
        reason = _copy_reason(tensor)
        if reason is not None:
            staged = _Staged(tensor)
            self._peer.bind(name, staged.host.numpy())
            self._staged.append(staged)
            self._bound[name] = (tensor, staged)
            warnings.warn(f"tensor {name} ({reason}) is bound through an fp32 CPU copy: loco "
                          f"copies it in before each round and back after join and each round "
                          f"(θ is fp32; docs/PYTORCH.md)", stacklevel=3)
            return
        if not tensor.is_contiguous():
            raise Error("LOCO_ERR_INVALID_ARGUMENT",
                        f"tensor {name}: loco takes C-contiguous tensors, and binding a copy "
                        f"(.contiguous()) would cut the link to the model: make the parameter "
                        f"itself contiguous before binding (param.data = "
                        f"param.data.contiguous())")
        if tensor.dtype == torch.bfloat16:  # NumPy has no bf16: its bits, as int16
            array = tensor.detach().view(torch.int16).numpy()
            self._peer.bind_bf16(name, array)
        else:
            array = tensor.detach().numpy()  # shares the tensor's memory
            self._peer.bind(name, array)
        self._bound[name] = (tensor, array)

    def bind_all(self, model):
        """Binds every tensor of the run's model from `model`: a torch module (its parameters and
        buffers, by their state-dict names) or a mapping name -> tensor (a state_dict). A name
        matches without a wrapper's prefix (DDP's "module.", torch.compile's "_orig_mod.").
        One loco.Error names every run tensor the model lacks and every shape that differs; the
        model's floating-point tensors the run does not have (BatchNorm's running statistics,
        say) are never averaged: each peer keeps its own, and one warning names them."""
        run = dict(self.tensors())
        matched, others = _match(run, _named_tensors(model))
        problems = [f"{name} is {list(tensor.shape)} in the model, {list(run[name])} in the run"
                    for name, (_, tensor) in matched.items() if tuple(tensor.shape) != run[name]]
        unbound = [name for name in run if name not in matched]
        if unbound:
            problems.insert(0, f"{len(unbound)} of the run's {len(run)} tensors are not in the "
                               f"model: {', '.join(unbound)}")
        not_averaged = (f"the model's {', '.join(others)} {'is' if len(others) == 1 else 'are'} "
                        f"not in the run: not averaged (each peer keeps its own)") if others else ""
        if problems:
            raise Error("LOCO_ERR_INVALID_ARGUMENT",
                        "bind_all: " + "; ".join(problems + ([not_averaged] if others else [])))
        if others:
            warnings.warn(f"bind_all: {not_averaged}", stacklevel=2)
        for name in run:
            self._bind(name, matched[name][1])

    def join(self, timeout=60.0):
        """Joins the run and writes its θ (genesis or fetched) into the bound tensors."""
        joined = JoinInfo(**self._peer.join(float(timeout)))
        self._staging.give()
        self._staging.reset()  # a round's figures start after join
        return joined

    def data_files(self, timeout=600.0):
        """After join, in a run whose dataset the peer fetches (peer.data-cache, the run's
        data.mirrors): the paths of the train shards of this peer's data shard, fetched and
        checked against the run's manifest, in order (uint16 little-endian tokens each). Only
        those are fetched, not the whole dataset."""
        return [Path(p) for p in self._peer.data_files(float(timeout))]

    def data_shard(self):
        """After join: the data shard the tracker gives this peer now (index, count) and how many
        times it changed since join (changes). A join again, which the peer makes on its own after
        an eviction or a tracker restart, may give another; call this after each round, and when
        `changes` grew, data_files() (which waits for the new shard's files, fetched from that
        call on) names the new shard's train shards."""
        return DataShard(**self._peer.data_shard())

    def round(self, loss=float("nan")):
        """One DiLoCo round from the bound tensors; they hold the new θ after it (unless skipped).
        On a Streaming peer: one fragment round, started and landed at once. On a SparseLoCo peer:
        its round (the top-k of its error feedback, all-gathered), after which they hold θ even
        when skipped (that phase's Δ stays in the error feedback)."""
        if self.streaming() is not None:  # one fragment round: its tensors only
            names = self._fragment_names(self._peer.fragment_next())
            self._staging.take(names)
            return self._landed(RoundResult(**self._peer.round(float(loss))), names)
        self._staging.take()
        result = RoundResult(**self._peer.round(float(loss)))
        if result.kind != "skipped" or self.strategy == "sparseloco":
            self._staging.give()
        return self._staging.report(result)

    def overlap(self):
        """Before join: this peer's rounds overlap the trainer's steps (round_start, round_land;
        round() is then refused)."""
        self._peer.overlap()

    def round_start(self, loss=float("nan")):
        """Starts a round from the bound tensors and returns once the group's mean is in: the
        tensors then hold θ', the state the round leads to; train on from them while loco hashes
        and the group commits. False: the round ended without a mean (round_land says how)."""
        self._staging.take()
        started = self._peer.round_start(float(loss))
        self._staging.give()
        return started

    def round_ready(self):
        """True when round_land() would not wait: the merge may be applied."""
        return self._peer.round_ready()

    def round_land(self):
        """Waits for the started round's outcome and lands it: committed leaves the tensors as
        the trainer left them, replaced writes the run's θ into them, skipped leaves θ as it
        was."""
        result = RoundResult(**self._peer.round_land())
        if result.kind == "replaced":
            self._staging.give()
        return self._staging.report(result)

    def streaming(self):
        """The run's StreamingInfo, or None when the run is not a Streaming DiLoCo run."""
        try:
            return StreamingInfo(*self._peer.streaming())
        except Error as e:
            if e.status != "LOCO_ERR_STATE":
                raise
            return None

    def fragment_tensors(self, fragment):
        """The names of fragment `fragment`'s tensors, in the model's order."""
        return list(self._peer.fragment_tensors(int(fragment)))

    def fragment_of(self, name):
        """The fragment tensor `name` belongs to."""
        return self._peer.fragment_of(name)

    def fragment_next(self):
        """The fragment the next round covers (the started round's while one is started)."""
        return self._peer.fragment_next()

    def fragment_due(self, step):
        """What is due after inner step `step`: "start", "land" or None."""
        return _DUE[self._peer.fragment_due(int(step))]

    def fragment_start(self, step, loss=float("nan")):
        """Starts the next fragment's round from its bound tensors (read now) and returns its
        index at once; train on, and land it when fragment_due says so. Eager updates: the merge
        of the round landed before (or of the eager proxy) is written into the tensors here."""
        names = self._fragment_names(self._peer.fragment_next())
        self._staging.take(names)
        fragment = self._peer.fragment_start(int(step), float(loss))
        if self.streaming().eager:  # eager updates merge into the fragment as its round starts
            self._staging.give(names)
        return fragment

    def fragment_ready(self):
        """True when fragment_land() would not wait: the merge may be applied."""
        return self._peer.fragment_ready()

    def fragment_land(self, wait=True):
        """Lands the started fragment round: committed, its tensors get α·tensor + (1−α)·θ_p
        (eager updates: at the next start); replaced, every tensor gets the run's θ; skipped,
        nothing. wait=False: loco.Error with
        status LOCO_ERR_NOT_READY while it is not ready."""
        if not wait and self._staged and not self._peer.fragment_ready():  # no copy for that
            raise Error("LOCO_ERR_NOT_READY",
                        f"fragment_land: fragment {self._peer.fragment_next()}'s round has not "
                        "ended yet; land it later (fragment_ready) or wait")
        names = self._fragment_names(self._peer.fragment_next())  # the started round's
        self._staging.take(names)
        return self._landed(RoundResult(**self._peer.fragment_land(bool(wait))), names)

    def _fragment_names(self, fragment):
        """The names of fragment `fragment`'s tensors, when any is bound through a copy."""
        if not self._staged:
            return set()
        return set(self._peer.fragment_tensors(int(fragment)))

    def _landed(self, result, names):
        """A landed fragment round's copies out: committed, its fragment's tensors (`names`;
        with eager updates at the next start instead); replaced, every tensor."""
        if result.kind == "replaced":
            self._staging.give()
        elif result.kind == "committed" and not self.streaming().eager:
            self._staging.give(names)
        return self._staging.report(result)

    def fragment_step(self, step, loss=float("nan")):
        """After inner step `step`: starts and lands the fragment rounds the run's schedule
        says are due (loco-peer's order: a landing before a start; with τ = 0 a round lands at
        the step it starts). Returns the landed rounds' RoundResults (a replaced one's step is
        where the trainer's count goes on)."""
        landed = []
        while True:
            due = self.fragment_due(step)
            if due == "start":
                self.fragment_start(step, loss)
            elif due == "land":
                landed.append(self.fragment_land())
                if landed[-1].kind == "replaced":
                    return landed
            else:
                return landed

    def state_hash(self):
        """(hex hash, round) of the shared state as of the last join or round."""
        return self._peer.state_hash()

    def save(self, path):
        """Writes loco's part (θ, the outer momentum, the round) to `path`; after join. The
        trainer saves its own model and optimizer beside it."""
        self._peer.save(str(path))

    def load(self, path):
        """Reads what save() wrote, before join: the peer joins with that state (the run takes it
        if it is still at it, else the peer fetches the run's)."""
        self._peer.load(str(path))

    def leave(self, reason="left"):
        self._peer.leave(reason)

    def interrupt(self):
        """Ends the blocking join or round in progress soon (any thread)."""
        self._peer.interrupt()

    def close(self):
        """Leaves the run if still in it and frees the peer; the tensors are the caller's again."""
        self._peer.close()
        self._bound.clear()
        self._staged.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
