"""The package as scripts/install-python.sh installs it (`cmake --install --component python`):
a folder `loco` that Debian's python3 imports from a site directory, with no PYTHONPATH into the
build and no library path (the extension finds libloco.so beside it)."""

import os
import subprocess
import sys
from pathlib import Path

BUILD = Path(os.environ["LOCO_BUILD_DIR"])


def test_the_installed_package_imports_from_its_site_directory_alone(tmp_path):
    site = tmp_path / "site"
    subprocess.run(
        ["cmake", "--install", str(BUILD), "--component", "python", "--prefix", str(site)],
        check=True, capture_output=True)
    installed = sorted(p.name for p in (site / "loco").iterdir())
    assert "__init__.py" in installed
    assert "libloco.so" in installed
    assert any(name.startswith("_loco") and name.endswith(".so") for name in installed)

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LD_LIBRARY_PATH")}
    env["PYTHONPATH"] = str(site)  # as a site directory would be: nothing of the build
    out = subprocess.run(
        [sys.executable, "-c", "import loco; print(loco.__file__); print(loco.version)"],
        check=True, capture_output=True, text=True, cwd=tmp_path, env=env).stdout.split("\n")
    assert Path(out[0]).resolve().parent == (site / "loco").resolve()
    assert out[1]


def test_the_trainer_peer_config_opens_as_it_is_and_the_loco_peer_one_is_refused(tmp_path):
    """configs/trainer-peer.toml, copied beside a key and the run config it names, is a config a
    Python peer takes unchanged; configs/peer.toml (loco-peer's) is refused naming
    peer.checkpoint, which a trainer peer does itself (peer.save, peer.load)."""
    import shutil

    import loco

    source = Path(os.environ["LOCO_SOURCE_DIR"]) / "configs"
    for name in ("trainer-peer.toml", "peer.toml", "swarm-tiny.toml"):
        shutil.copy(source / name, tmp_path / name)
    loco.keygen(tmp_path / "peer.key")
    with loco.Peer(tmp_path / "trainer-peer.toml") as peer:
        assert peer.tensors()
    try:
        loco.Peer(tmp_path / "peer.toml")
    except loco.Error as refused:
        assert refused.status == "LOCO_ERR_CONFIG" and "peer.checkpoint" in refused.message
    else:
        raise AssertionError("configs/peer.toml opened as a trainer peer's config")
