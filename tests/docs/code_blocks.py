#!/usr/bin/env python3
"""Every code block of the docs, tried: what a reader copies must work.

Reads README.md and docs/*.md and, for each fenced block with a language:
  python  compiled; run (in a folder holding the fixtures the docs name, e.g. ckpt.safetensors
          written by loco-train) when every module it imports is installed; the suite does not
          need PyTorch, so a block that imports torch is only compiled where torch is missing;
  toml    parsed, and every key checked against the options some loco program lists in --help
          ([peer] listen -> --peer.listen);
  sh      each command line that runs a loco program checked: its subcommand and every --option
          it gives exist (in that program's --help); a scripts/ file it runs exists; the blocks
          marked ```sh walkthrough are a page's walkthrough too, which a test of its own runs
          (walkthrough() gives them: tests/python/test_walkthrough.py);
  ini     parsed, and its ExecStart= checked like a command line;
  other   (cpp fragments, output) reported as not run.
Prints one line per block and fails with the list of what did not hold.

Usage: code_blocks.py --source DIR --bin DIR
"""

import argparse
import ast
import configparser
import importlib.util
import os
import re
import shlex
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

PROGRAMS = ["loco-peer", "loco-tracker", "loco-train", "loco-swarm", "loco-prepare"]
FENCE = re.compile(r"^```(\w*)(?:[ \t]+([\w-]+))?\s*$")  # ```sh walkthrough: lang, tag
OPTION = re.compile(r"(?<![\w-])(--[a-z0-9][a-z0-9.-]*)")


def blocks(path):
    """(language, tag, first line number, text) of each fenced block of a Markdown file; the tag
    is the word after the language (```sh walkthrough), or None."""
    lang, tag, start, lines = None, None, 0, []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        fence = FENCE.match(line)
        if fence and lang is None:
            lang, tag, start, lines = fence.group(1), fence.group(2), number + 1, []
        elif line.startswith("```") and lang is not None:
            yield lang, tag, start, "\n".join(lines) + "\n"
            lang = None
        elif lang is not None:
            lines.append(line)


def walkthrough(path):
    """The shell script of a page's walkthrough: its blocks marked ```sh walkthrough, in order."""
    return "".join(text for lang, tag, _, text in blocks(path)
                   if lang == "sh" and tag == "walkthrough")


class Options:
    """The options and subcommands each loco program lists in its --help."""

    def __init__(self, bin_dir):
        self.bin_dir = Path(bin_dir)
        self.cache = {}

    def of(self, program, subcommand=None):
        key = (program, subcommand)
        if key not in self.cache:
            argv = [str(self.bin_dir / program)] + ([subcommand] if subcommand else []) + ["--help"]
            out = subprocess.run(argv, capture_output=True, text=True, timeout=60).stdout
            subcommands = set()
            if "Subcommands:" in out:
                for line in out.split("Subcommands:", 1)[1].splitlines():
                    word = line.strip().split(" ", 1)[0]
                    if word:
                        subcommands.add(word)
            self.cache[key] = (set(OPTION.findall(out)), subcommands)
        return self.cache[key]

    def everywhere(self):
        found = set()
        for program in PROGRAMS:
            found |= self.of(program)[0]
        return found


def toml_keys(table, prefix=""):
    for name, value in table.items():
        if isinstance(value, dict):
            yield from toml_keys(value, prefix + name + ".")
        else:
            yield prefix + name


def check_command(words, options, source):
    """Problems with one command (split into words), or none: the program it runs is its first word
    after sudo (and sudo's options), env, time, or a loop's or condition's do, then and else."""
    i = 0
    while i < len(words) and words[i] in ("sudo", "env", "time", "do", "then", "else"):
        i += 1
        while i < len(words) and words[i].startswith("-"):
            i += 2 if words[i] in ("-u", "-g") else 1
    if i >= len(words):
        return []
    command, rest = words[i], words[i + 1:]
    program = os.path.basename(command)
    if command.startswith("scripts/"):
        return [] if (source / command).exists() else [f"{command} does not exist"]
    if program not in PROGRAMS:
        return []
    problems = []
    known, subcommands = options.of(program)
    subcommand = None
    if rest and not rest[0].startswith("-"):
        if rest[0] in subcommands:
            subcommand = rest[0]
            known = known | options.of(program, subcommand)[0]  # the parent's options still apply
        else:
            problems.append(f"{program} has no subcommand '{rest[0]}'")
    for arg in rest:
        flag = arg.split("=", 1)[0]
        if flag.startswith("--") and flag not in known:
            problems.append(f"{program}{' ' + subcommand if subcommand else ''}: no option {flag}")
    return problems


def command_lines(text):
    """Each command of a shell block: continuation lines joined, comments dropped, split at && and ;."""
    joined = re.sub(r"\\\n", " ", text)
    for line in joined.splitlines():
        line = line.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        for part in re.split(r"&&|;|\|", line):
            try:
                words = shlex.split(part)
            except ValueError:
                words = part.split()
            if words:
                yield words


def missing_imports(tree):
    """The top-level modules a parsed block imports that are not installed."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    return sorted(n for n in names if importlib.util.find_spec(n) is None)


def fixtures(bin_dir, source, folder):
    """The files the docs' Python reads: a checkpoint of configs/tiny.toml's model."""
    subprocess.run([str(Path(bin_dir) / "loco-train"), "--config", str(source / "configs/tiny.toml"),
                    "--train.steps", "1", "--optim.warmup-steps", "0", "--train.eval-windows", "16",
                    "--train.checkpoint", str(folder / "ckpt.safetensors")],
                   check=True, capture_output=True, timeout=600)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", required=True, type=Path)
    parser.add_argument("--bin", required=True)
    args = parser.parse_args()
    options = Options(args.bin)
    problems, counts = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        fixtures(args.bin, args.source, folder)
        for doc in [args.source / "README.md"] + sorted((args.source / "docs").glob("*.md")):
            for lang, _, line, text in blocks(doc):
                if not lang:
                    continue
                where = f"{doc.relative_to(args.source)}:{line}"
                found = []
                done = "checked"
                if lang == "python":
                    missing = missing_imports(ast.parse(text, where))  # a syntax error fails here
                    if missing:
                        done = f"compiled (not run: {', '.join(missing)} not installed)"
                    else:
                        run = subprocess.run([sys.executable, "-c", text], cwd=folder,
                                             capture_output=True, text=True, timeout=600)
                        if run.returncode != 0:
                            found.append("raised: " + run.stderr.strip().splitlines()[-1])
                        done = "ran"
                elif lang == "toml":
                    try:
                        table = tomllib.loads(text)
                        known = options.everywhere()
                        for key in toml_keys(table):
                            if "--" + key not in known:
                                found.append(f"no loco program has the option --{key}")
                    except tomllib.TOMLDecodeError as e:
                        found.append(f"not TOML: {e}")
                elif lang == "sh":
                    for words in command_lines(text):
                        found += check_command(words, options, args.source)
                elif lang == "ini":
                    ini = configparser.ConfigParser(strict=False, interpolation=None)
                    ini.optionxform = str
                    try:
                        ini.read_string(text)
                        for section in ini.sections():
                            if "ExecStart" in ini[section]:
                                found += check_command(shlex.split(ini[section]["ExecStart"]), options,
                                                       args.source)
                    except configparser.Error as e:
                        found.append(f"not an ini file: {e}")
                else:
                    done = "not run (a fragment)"
                counts[lang] = counts.get(lang, 0) + 1
                status = "FAILED" if found else done
                print(f"{where}: {lang}: {status}")
                problems += [f"{where}: {p}" for p in found]
    print("blocks: " + ", ".join(f"{n} {lang}" for lang, n in sorted(counts.items())))
    if problems:
        print("\n".join(["what does not hold:"] + problems))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
