#!/usr/bin/env python3
"""Every repository path cited in a C++ comment or a Markdown page exists.

A citation is a path whose first folder is one of the repository's top folders, or a source file
under one of src/'s modules ("round/swarm_group.hpp" in a comment means include/loco/round/ or
src/round/). Moving or
renaming a file leaves such citations stale; this check names each one with the files citing it.
Usage: cited_paths.py --source ROOT [FILE...] (without files: every tracked file but the fixtures).
"""

import argparse
import os
import re
import subprocess
import sys

TOP_FOLDERS = {"src", "include", "peer", "tracker", "tests", "bench", "configs", "docs", "scripts", ".ci"}
# Where a citation may be rooted: the repository, the public headers, the modules, the tests.
BASES = ("", "include/loco", "src", "tests")
CITATION = re.compile(
    r"(?<![\w./${}-])((?:[A-Za-z0-9_.-]+/)+[A-Za-z0-9_-]+\.(?:hpp|cpp|h|c|md|py|sh|toml|txt|cmake))\b")
CPP_SUFFIXES = (".hpp", ".cpp", ".h", ".c")


def tracked_files(root):
    listed = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True, text=True)
    if listed.returncode == 0:
        names = listed.stdout.split()
    else:  # not a git checkout (an unpacked archive)
        names = [os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs]
    return [n for n in names if not n.startswith(("tests/fixtures/", "build/"))]


def cited_text(path):
    """The text of a file where citations count: a C++ file's comments, a Markdown page whole."""
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.readlines()
    if not path.endswith(CPP_SUFFIXES):
        return lines
    comments = []
    for line in lines:
        start = line.find("//")
        if start >= 0 and not line.lstrip().startswith("#include"):
            comments.append(line[start:])
    return comments


def stale_citations(root, files):
    modules = {d for d in os.listdir(os.path.join(root, "src")) if os.path.isdir(os.path.join(root, "src", d))}
    stale = {}
    for name in files:
        if not name.endswith(CPP_SUFFIXES + (".md",)):
            continue
        for line in cited_text(os.path.join(root, name)):
            for match in CITATION.finditer(line):
                cited = match.group(1)
                first = cited.split("/")[0]
                if first not in TOP_FOLDERS and not (first in modules and cited.endswith(CPP_SUFFIXES)):
                    continue  # a module's name also begins example paths ("data/manifest.txt")
                if not any(os.path.exists(os.path.join(root, base, cited)) for base in BASES):
                    stale.setdefault(cited, set()).add(name)
    return stale


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", required=True)
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    files = args.files or tracked_files(args.source)
    stale = stale_citations(args.source, files)
    for cited, citing in sorted(stale.items()):
        print(f"{cited}: cited by {', '.join(sorted(citing))}, but no such file")
    print(f"{len(stale)} stale citation(s) in {len(files)} file(s)")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
