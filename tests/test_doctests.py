"""Every docstring example in the fastgl package runs as written (doctest, on the CPU).

One test per module found by walking the package. Examples that write files write relative to
the working directory, which is a fresh temporary one per module; torch's global RNG is seeded
for the examples and restored afterwards, so they neither depend on nor disturb other tests.
"""

import doctest
import importlib
import pkgutil

import pytest
import torch

import fastgl

OPTIONFLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
# `python -m fastgl` runs the command line on import.
EXCLUDED = {"fastgl.__main__"}
MODULES = ["fastgl"] + sorted(
    info.name
    for info in pkgutil.walk_packages(fastgl.__path__, prefix="fastgl.")
    if info.name not in EXCLUDED
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, capsys, monkeypatch, tmp_path):
    module = importlib.import_module(name)
    monkeypatch.chdir(tmp_path)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        result = doctest.testmod(module, optionflags=OPTIONFLAGS, report=False)
    report = capsys.readouterr().out
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed:\n{report}"


def test_examples_are_collected():
    """The runner above finds the package's examples (guards against testing nothing)."""
    assert {"fastgl.graph", "fastgl.nn.conv", "fastgl.sampling.neighbor"} <= set(MODULES)
    finder = doctest.DocTestFinder()
    counts = {}
    for name in MODULES:
        tests = finder.find(importlib.import_module(name))
        examples = [ex for t in tests for ex in t.examples if not ex.options.get(doctest.SKIP)]
        counts[name] = len(examples)
    assert sum(counts.values()) >= 100, counts
    assert sum(1 for n in counts.values() if n) >= 15, counts
