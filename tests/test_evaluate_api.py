"""lexgold.evaluate's declared Python API, what importing it costs, and its import graph."""

import subprocess
import sys

import grimp

import lexgold.evaluate


def _loaded(code: str, names) -> list[str]:
    probe = f"import sys\n{code}\nprint(','.join(m for m in {tuple(names)!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout.strip()
    return [name for name in out.split(",") if name]


def test_every_declared_name_is_defined_in_the_package():
    for name in lexgold.evaluate.__all__:
        value = getattr(lexgold.evaluate, name)
        if callable(value):
            assert value.__module__.startswith("lexgold.evaluate."), name
    assert set(lexgold.evaluate.__all__) <= set(dir(lexgold.evaluate))


def test_importing_the_package_loads_no_numpy_nor_pandas():
    assert _loaded("import lexgold.evaluate", ("numpy", "pandas", "scipy")) == []


def test_the_evaluate_and_analogy_commands_load_no_scipy():
    code = "import lexgold.evaluate.output, lexgold.evaluate.analogy"
    assert _loaded(code, ("scipy", "scipy.stats")) == []
    assert _loaded("import lexgold.evaluate.sdt", ("scipy",)) == ["scipy"]   # the probe works


def test_no_import_cycle_among_the_evaluate_modules():
    graph = grimp.build_graph("lexgold")
    modules = {m for m in graph.modules if m.startswith("lexgold.evaluate")}
    for module in modules:
        for other in graph.find_modules_directly_imported_by(module) & modules:
            assert not graph.chain_exists(importer=other, imported=module), (module, other)
