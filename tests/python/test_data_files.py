"""A Python peer in a run whose data is a dataset it fetches (issue 46): after join,
peer.data_shard() names the data shard the tracker gave it (before join it is refused), the same
after a round, with no change; peer.data_files() gives the paths of that data shard's train shards,
fetched from the tracker's HTTP server (--tracker.dataset) and checked against the run's
manifest; its data cache holds those and no other train shard."""

import filecmp
import re
import subprocess

import numpy as np
import pytest

import loco
from conftest import BIN, Tracker, run_config


def prepare(folder):
    """loco-prepare on a small English-like text, byte-level, shards of 8,192 tokens; the manifest's
    hash."""
    words = ["the", "cat", "sat", "on", "a", "mat", "and", "dog", "ran", "far", "from", "home"]
    text = folder / "text.txt"
    text.write_text("\n".join(" ".join(words[(7 * i + 3 * j + i * j) % len(words)]
                                       for j in range(12)) for i in range(2000)))
    made = subprocess.run([str(BIN / "loco-prepare"), "--input", str(text), "--out-dir",
                           str(folder / "data"), "--tokenizer", "bytes", "--shard-tokens", "8192"],
                          capture_output=True, text=True, check=True)
    found = re.search(r'manifest-hash = "([0-9a-f]{64})"', made.stdout + made.stderr)
    assert found, made.stdout + made.stderr
    return found.group(1)


def expected_shards(manifest, index, count):
    """The train shards data shard `index` of `count` lies in (data::train_shards_of)."""
    lines = manifest.read_text().splitlines()
    shard_tokens = int(re.search(r"shard-tokens=(\d+)", manifest.read_text()).group(1))
    train = [dict(f.split("=", 1) for f in line.split()[1:]) for line in lines
             if line.startswith("train ")]
    total = sum(int(f["tokens"]) for f in train)
    begin, end = index * total // count, (index + 1) * total // count
    return [f["name"] for f in train[begin // shard_tokens:-(-end // shard_tokens)]]


def test_a_python_peer_gets_the_checked_shards_of_its_data_shard_and_no_others(tmp_path):
    manifest_hash = prepare(tmp_path)
    data = tmp_path / "data"
    config = run_config(tmp_path, data=f'source = "dataset"\nmanifest-hash = "{manifest_hash}"')
    config.write_text(config.read_text().replace("vocab = 64\n", "vocab = 256\n", 1))
    tracker = Tracker(tmp_path, config, "py-data", 1, http=True,
                      options=("--tracker.dataset", str(data), "--run.shard-count", "2"))
    try:
        # The peer's copy of the run config lists the tracker as its mirror.
        mirror = tracker.status_url.removesuffix("status") + "dataset/"
        (tmp_path / "peer").mkdir()
        tracker.config = run_config(tmp_path / "peer", data=(
            f'source = "dataset"\nmanifest-hash = "{manifest_hash}"\nmirrors = ["{mirror}"]'))
        tracker.config.write_text(
            tracker.config.read_text().replace("vocab = 64\n", "vocab = 256\n", 1))
        peer_config = tracker.peer_config(tmp_path, "py-data")
        cache = tmp_path / "cache"
        peer_config.write_text(
            peer_config.read_text().replace("[peer]\n", f'[peer]\ndata-cache = "{cache}"\n', 1))
        with loco.Peer(peer_config) as peer:
            tensors = {name: np.zeros(shape, dtype=np.float32) for name, shape in peer.tensors()}
            for name, tensor in tensors.items():
                peer.bind(name, tensor)
            with pytest.raises(loco.Error) as early:
                peer.data_shard()
            assert early.value.status == "LOCO_ERR_STATE"
            joined = peer.join(timeout=60)
            assert peer.data_shard() == loco.DataShard(joined.shard_index, joined.shard_count, 0)
            files = peer.data_files(timeout=120)
            assert peer.round().kind == "committed"
            assert peer.data_shard() == loco.DataShard(joined.shard_index, joined.shard_count, 0)
            peer.leave()
        names = expected_shards(data / "manifest.txt", joined.shard_index, joined.shard_count)
        assert [f.name for f in files] == names
        all_train = sorted(p.name for p in data.glob("train-*.bin"))
        assert 0 < len(names) < len(all_train)
        for f in files:
            assert filecmp.cmp(f, data / f.name, shallow=False), f
        assert sorted(p.name for p in cache.glob("*/train-*.bin")) == names
    finally:
        assert tracker.stop() == 0, f"loco-tracker failed; its log: {tracker.log}"
