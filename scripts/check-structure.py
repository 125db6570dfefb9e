#!/usr/bin/env python3
"""Checks the shape of the code that no compiler checks, and says where it fails:

- no import cycle between the modules of any crate (a module's `use crate::...`,
  `use super::...`, `use self::...` and `crate::`/`super::` paths are its imports; a name
  the crate root re-exports counts as an import of the module it comes from; test modules
  are left out, since they import their parent by design);
- no source file over 900 lines, except the AES kernels (LONG_FILES_ALLOWED);
- no function over 120 lines.

Run by scripts/test.sh; exit status 1 and one line per finding when something fails.
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_FILE_LINES = 900
MAX_FN_LINES = 120
# Hand-scheduled AES kernels: one long file of intrinsics by design.
LONG_FILES_ALLOWED = {"crates/core/src/aes/x86.rs"}


def rust_files(base):
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = [d for d in dirnames if d not in ("target", "corpus", "artifacts")]
        for f in filenames:
            if f.endswith(".rs"):
                yield os.path.join(dirpath, f)


def strip_comments_and_strings(text):
    """The text with comments, string and char literals blanked (lines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    if text[i] == "\n":
                        out.append("\n")
                    i += 1
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'r(#*)"', text[i:])
            close = '"' + m.group(1)
            j = text.find(close, i + len(m.group(0)))
            j = n if j < 0 else j + len(close)
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j + 1
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 12]) or (c == "'" and re.match(r"'\\(x..|u\{[0-9a-fA-F]+\})'", text[i:i + 12])):
            m = re.match(r"'(\\x..|\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", text[i:])
            out.append("' '")
            i += len(m.group(0))
        else:
            out.append(c)
            i += 1
    return "".join(out)


def long_functions(path, code):
    """(line, name, length) of each fn longer than MAX_FN_LINES."""
    found = []
    lines = code.split("\n")
    fn_re = re.compile(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)")
    i = 0
    while i < len(lines):
        m = fn_re.search(lines[i])
        if not m:
            i += 1
            continue
        # Find the body's opening brace (or a `;` for a declaration without body).
        j, col = i, m.end()
        depth_paren = 0
        start = None
        while j < len(lines) and start is None:
            line = lines[j]
            for k in range(col, len(line)):
                ch = line[k]
                if ch in "([":
                    depth_paren += 1
                elif ch in ")]":
                    depth_paren -= 1
                elif ch == ";" and depth_paren == 0:
                    start = ("decl", j, k)
                    break
                elif ch == "{" and depth_paren == 0:
                    start = ("body", j, k)
                    break
            else:
                j, col = j + 1, 0
        if start is None or start[0] == "decl":
            i += 1
            continue
        _, j, k = start
        depth = 0
        end = None
        for jj in range(j, len(lines)):
            line = lines[jj]
            for kk in range(k if jj == j else 0, len(line)):
                if line[kk] == "{":
                    depth += 1
                elif line[kk] == "}":
                    depth -= 1
                    if depth == 0:
                        end = jj
                        break
            if end is not None:
                break
        if end is None:
            break
        length = end - i + 1
        if length > MAX_FN_LINES:
            found.append((i + 1, m.group(1), length))
        i += 1  # nested fns are checked too
    return found


def module_of(crate_src, path):
    """The module path (tuple) of a file under a crate's src/."""
    rel = os.path.relpath(path, crate_src)[:-3].split(os.sep)
    if rel[-1] in ("lib", "main", "mod"):
        rel = rel[:-1]
    return tuple(rel)


def test_module(path):
    """Whether a file is a test module by its place: a `tests.rs`, or a file under a
    `tests` directory inside src/ (inline test modules are cut by `without_test_blocks`)."""
    parts = path.split(os.sep)
    return parts[-1] == "tests.rs" or "tests" in parts[parts.index("src") + 1:-1]


TEST_BLOCK = re.compile(r"#\[cfg\(test\)\]\s*(?:pub(?:\([a-z]+\))?\s+)?mod\s+\w+\s*\{")


def without_test_blocks(code):
    """The code without its inline `#[cfg(test)] mod name { ... }` blocks (braces matched,
    so what follows such a block is still read)."""
    while True:
        m = TEST_BLOCK.search(code)
        if not m:
            return code
        depth, end = 0, len(code)
        for k in range(m.end() - 1, len(code)):
            depth += code[k] == "{"
            depth -= code[k] == "}"
            if depth == 0:
                end = k + 1
                break
        code = code[:m.start()] + "\n" * code.count("\n", m.start(), end) + code[end:]


def resolve(modules, target):
    """The longest prefix of `target` that is a module of the crate."""
    for k in range(len(target), -1, -1):
        if tuple(target[:k]) in modules:
            return tuple(target[:k])
    return ()


def use_paths(code):
    """Each path that a `use` item or an expression names from crate/super/self, expanded
    over braces: lists of segments."""
    paths = []
    for m in re.finditer(r"\buse\s+([^;]+);", code):
        for p in expand(m.group(1).strip()):
            paths.append(p)
    for m in re.finditer(r"(?<![A-Za-z0-9_:])((?:crate|super|self)(?:::[A-Za-z_][A-Za-z0-9_]*)+)", code):
        paths.append(m.group(1).split("::"))
    return paths


def expand(tree):
    """`a::{b, c::{d}}` -> [[a, b], [a, c, d]]."""
    tree = re.sub(r"\s+", "", tree)
    if "{" not in tree:
        tree = re.sub(r"\bas\b.*$", "", tree)
        return [[s for s in tree.split("::") if s]]
    i = tree.index("{")
    prefix = [s for s in tree[:i].split("::") if s]
    inner = tree[i + 1:tree.rindex("}")]
    parts, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    if cur:
        parts.append(cur)
    out = []
    for p in parts:
        for e in expand(p):
            out.append(prefix + [s for s in e if s != "self"] if e else prefix)
    return out


def crate_cycles(crate_dir):
    src = os.path.join(crate_dir, "src")
    if not os.path.isdir(src):
        return []
    files = {}
    for path in rust_files(src):
        code = strip_comments_and_strings(open(path, encoding="utf-8").read())
        if test_module(path):
            continue
        files[module_of(src, path)] = code
    modules = set(files)
    # Inline `mod x { ... }` blocks count as part of their file's module; `#[cfg(test)]
    # mod tests { ... }` blocks are cut out.
    for mod, code in list(files.items()):
        files[mod] = without_test_blocks(code)
    # Names the crate root re-exports: name -> module.
    reexports = {}
    root = files.get((), "")
    for m in re.finditer(r"\bpub\s+use\s+([^;]+);", root):
        for p in expand(m.group(1)):
            if p and p[0] not in ("crate", "self") and tuple(p[:1]) in modules:
                reexports[p[-1]] = resolve(modules, p[:-1])
    edges = {m: set() for m in modules}
    for mod, code in files.items():
        for p in use_paths(code):
            if p[0] == "crate":
                target = p[1:]
            elif p[0] == "super":
                base = list(mod)
                while p and p[0] == "super":
                    base, p = base[:-1], p[1:]
                target = base + p
            elif p[0] == "self":
                target = list(mod) + p[1:]
            elif tuple(list(mod) + p[:1]) in modules:
                target = list(mod) + p  # a child named without `self::`
            else:
                continue
            t = resolve(modules, target)
            if t == () and target and target[0] in reexports:
                t = reexports[target[0]]
            if t == () or t == mod:
                continue
            # A parent naming its own child module (`mod x; pub use x::Y`) is how Rust
            # builds the tree, not an import that can loop, when the child does not name
            # the parent back; count it, the child's import of the parent closes the loop.
            edges[mod].add(t)
    # Cycles: strongly connected components of more than one module.
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    sys.setrecursionlimit(10000)
    for v in sorted(modules):
        if v not in index:
            visit(v)
    name = lambda m: "::".join(m) or "(crate root)"
    findings = []
    for comp in out:
        names = sorted(name(m) for m in comp)
        detail = "; ".join(
            f"{name(a)} -> {name(b)}" for a in sorted(comp) for b in sorted(edges[a]) if b in comp
        )
        findings.append(f"{os.path.relpath(crate_dir, ROOT)}: import cycle among {', '.join(names)} ({detail})")
    return findings


def main():
    findings = []
    crates = sorted(os.path.join(ROOT, "crates", d) for d in os.listdir(os.path.join(ROOT, "crates")))
    for crate in crates + [os.path.join(ROOT, "fuzz")]:
        if not os.path.isdir(crate):
            continue
        findings += crate_cycles(crate)
        for path in rust_files(crate):
            rel = os.path.relpath(path, ROOT)
            text = open(path, encoding="utf-8").read()
            n = text.count("\n")
            if n > MAX_FILE_LINES and rel not in LONG_FILES_ALLOWED:
                findings.append(f"{rel}: {n} lines (at most {MAX_FILE_LINES})")
            for line, fn, length in long_functions(path, strip_comments_and_strings(text)):
                findings.append(f"{rel}:{line}: fn {fn} is {length} lines (at most {MAX_FN_LINES})")
    for f in findings:
        print(f)
    if findings:
        print(f"check-structure: {len(findings)} finding(s)", file=sys.stderr)
        return 1
    print("check-structure: no import cycles, no file over 900 lines, no function over 120 lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
