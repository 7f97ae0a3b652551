#!/usr/bin/env python3
"""No import cycles among the files of one crate.

For each crate folder given (default: every workspace crate with a src/),
builds the graph "file A uses an item of file B" from `crate::…` and
`super::…` paths (comments and `#[cfg(test)] mod tests` skipped) and prints
every cycle. Exit status 1 if there is one. Run by .ci/run.
"""
import pathlib
import re
import sys


def module_file(src, parts):
    """The file of the longest prefix of module path `parts` under `src`."""
    found, here = None, src
    for part in parts:
        f, d = here / f"{part}.rs", here / part / "mod.rs"
        if f.exists():
            found, here = f, here / part
        elif d.exists():
            found, here = d, here / part
        else:
            break
    return found


def graph(src):
    edges = {}
    for f in sorted(src.rglob("*.rs")):
        text = f.read_text(errors="replace")
        text = re.sub(r"#\[cfg\(test\)\]\s*mod tests\s*\{.*", "", text, flags=re.S)
        text = re.sub(r"//[^\n]*", "", text)
        rel = list(f.relative_to(src).with_suffix("").parts)
        if rel[-1] == "mod":
            rel = rel[:-1]
        if rel in (["lib"], ["main"]):
            rel = []
        deps = set()
        for m in re.finditer(r"\b(crate|super)((?:::\w+)+)", text):
            parts = m.group(2).split("::")[1:]
            base = [] if m.group(1) == "crate" else rel[:-1]
            while parts and parts[0] == "super":
                base, parts = base[:-1], parts[1:]
            t = module_file(src, base + parts) if parts else None
            if t is not None and t != f:
                deps.add(t)
        edges[f] = deps
    return edges


def cycles(edges):
    state, stack, found = {}, [], []

    def visit(u):
        state[u] = 1
        stack.append(u)
        for v in sorted(edges.get(u, ())):
            if state.get(v) == 1:
                found.append(stack[stack.index(v):] + [v])
            elif v not in state:
                visit(v)
        stack.pop()
        state[u] = 2

    for u in sorted(edges):
        if u not in state:
            visit(u)
    return found


def main():
    root = pathlib.Path(__file__).resolve().parent.parent
    crates = sys.argv[1:] or sorted(
        str(p.parent.relative_to(root)) for p in root.glob("**/src") if "target" not in p.parts
    )
    bad = 0
    for c in crates:
        src = root / c / "src"
        if not src.is_dir():
            continue
        for cyc in cycles(graph(src)):
            bad += 1
            print(f"{c}: import cycle: " + " -> ".join(str(x.relative_to(src)) for x in cyc))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    sys.setrecursionlimit(10000)
    main()
