"""The import layers of tile_lsp (``docs/architecture.md``): no cycles, no upward import,
no private name imported from another module.

Every import statement counts: top-level, function-local (imported late for start-up
time) and under ``TYPE_CHECKING``, since each is a dependency a reader must follow.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "tile_lsp"

#: The layers, lowest first.  A module may import modules of its own layer and of the
#: layers before it.  ``tile_lsp`` stands for the package's ``__init__`` alone (its version);
#: ``tile_lsp.grammar.lexical`` (MLIR's lexical patterns, imports nothing) is for every layer.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("tile_lsp", "tile_lsp.collector", "tile_lsp.dialect", "tile_lsp.grammar.lexical"),
    ("tile_lsp.analysis.ir",),
    ("tile_lsp.grammar",),
    ("tile_lsp.analysis.syntax",),
    ("tile_lsp.analysis.verify",),
    ("tile_lsp.analysis.incremental",),
    ("tile_lsp.analysis", "tile_lsp.analysis.api"),
    ("tile_lsp.analysis.ide", "tile_lsp.analysis.interpreter"),
    ("tile_lsp.bytecode",),
    ("tile_lsp.nvidia", "tile_lsp.config", "tile_lsp.files", "tile_lsp.report", "tile_lsp.check_cache",
     "tile_lsp.conformance"),
    ("tile_lsp.codegen",),
    ("tile_lsp.server",),
    ("tile_lsp.cli",),
)


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(name: str, path: Path) -> list[tuple[str, str | None, int]]:
    """(imported module, imported name or ``None``, line) of every import of tile_lsp in ``path``."""
    is_package = path.name == "__init__.py"
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(a.name, None, node.lineno) for a in node.names if a.name.split(".")[0] == "tile_lsp"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[:len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module.split(".")[0] != "tile_lsp":
                continue
            for a in node.names:
                sub = f"{module}.{a.name}"
                found.append((sub if sub in MODULES else module, None if sub in MODULES else a.name, node.lineno))
    return found


def _graph() -> dict[str, dict[str, int]]:
    """module -> {module it imports: first line}."""
    graph: dict[str, dict[str, int]] = {m: {} for m in MODULES}
    for name, path in MODULES.items():
        for target, _, line in _imports(name, path):
            while target not in MODULES and "." in target:
                target = target.rsplit(".", 1)[0]
            if target != name:
                graph[name].setdefault(target, line)
    return graph


def layer_of(module: str) -> int | None:
    """Index in :data:`LAYERS` of the layer ``module`` belongs to (longest prefix wins)."""
    best, best_len = None, -1
    for i, prefixes in enumerate(LAYERS):
        for p in prefixes:
            exact_only = p == "tile_lsp"
            if (module == p or (not exact_only and module.startswith(p + "."))) and len(p) > best_len:
                best, best_len = i, len(p)
    return best


def test_every_module_has_a_layer():
    assert [m for m in MODULES if layer_of(m) is None] == []


def test_imports_go_down_the_layers():
    upward = [f"{src} (layer {layer_of(src)}) imports {dst} (layer {layer_of(dst)}), {MODULES[src].name}:{line}"
              for src, targets in _graph().items() for dst, line in targets.items()
              if layer_of(dst) > layer_of(src)]
    assert upward == []


def test_no_import_cycles():
    graph = _graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    assert cycles == []


def test_no_private_name_is_imported_from_another_module():
    private = [f"{name}:{line} imports {imported} from {module}"
               for name, path in MODULES.items() for module, imported, line in _imports(name, path)
               if imported and imported.startswith("_") and not imported.startswith("__") and module != name]
    assert private == []


def test_the_checks_see_real_imports():
    """The graph is read right: known edges are found, and a layer below cannot see one above."""
    graph = _graph()
    assert "tile_lsp.analysis.ir.core" in graph["tile_lsp.analysis.syntax.builder"]
    assert "tile_lsp.analysis.incremental.pipeline" in graph["tile_lsp.analysis.api"]  # function-local
    assert layer_of("tile_lsp.analysis.ir.core") < layer_of("tile_lsp.analysis.syntax.builder")
    assert layer_of("tile_lsp.cli") == len(LAYERS) - 1
    assert layer_of("tile_lsp") == 0 and layer_of("tile_lsp.analysis") == layer_of("tile_lsp.analysis.api")


def test_the_architecture_document_names_real_paths():
    """Every path in the repository that ``docs/architecture.md`` names (a ``/`` in it; LSP method
    names aside) exists, and a ``module/path.name`` names something that module defines."""
    import re

    root = PACKAGE.parent
    bases = (root, PACKAGE, PACKAGE / "analysis", PACKAGE / "analysis" / "syntax", PACKAGE / "analysis" / "verify")
    text = (root / "docs" / "architecture.md").read_text(encoding="utf-8")
    names = {n for n in re.findall(r"`([\w./-]+/[\w.-]*)`", text)
             if not n.startswith(("textDocument/", "workspace/", "../"))}  # ../shared: outside the repository
    assert len(names) > 20

    def found(name: str) -> bool:
        m = re.fullmatch(r"([\w/]+)\.(\w+)", name)
        path, attr = (m.group(1), m.group(2)) if m and m.group(2) not in ("py", "md", "lark") else (name, "")
        for base in bases:
            for candidate in (base / path, base / (path + ".py")):
                if attr and candidate.is_file():
                    return re.search(rf"\b(def|class) {attr}\b|^{attr} = ", candidate.read_text(encoding="utf-8"),
                                     re.M) is not None
                if not attr and candidate.exists():
                    return True
        return False

    assert sorted(n for n in names if not found(n)) == []


def test_no_source_file_is_over_1200_lines_outside_the_dialect_tables():
    """A module that long holds more than one job (issue 17); the op tables are data and may be longer."""
    long = {name: n for name, path in MODULES.items()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > 1200
            and not (name.startswith("tile_lsp.dialect.") and name.endswith("_ops"))}
    assert long == {}


def test_the_ir_layer_imports_only_the_dialect_tables():
    """analysis.ir's invariant (docs/architecture.md): it never parses a text, so of the grammar it may
    read only the lexical table."""
    allowed = ("tile_lsp.analysis.ir", "tile_lsp.dialect", "tile_lsp.grammar.lexical")
    graph = _graph()
    found = [f"{src} imports {dst}" for src, targets in graph.items() if src.startswith("tile_lsp.analysis.ir")
             for dst in targets if not any(dst == a or dst.startswith(a + ".") for a in allowed)]
    assert found == []
