#!/usr/bin/env python3
"""Layering that cannot rot (TigerBeetle's tidy.zig, in small):

1. An include in src/ points only at its own folder or one below it, in the order of the
   README's Layout section: model <- wal <- events <- adapters <- projection <- controller <-
   runtime <- operator.
1b. The journal layer (wal/) carries bytes: it does not include the JSON library.
1b'. Inside controller/, the RayCluster controller (controller/raycluster/) includes nothing of
    the RayJob controller (controller/rayjob/): a RayJob embeds a RayCluster spec, not the reverse.
    What both use sits in controller/ itself.
1c. The state machines (STATE_MACHINES) work on typed views: neither they nor any project header
    they include, directly or through others, includes the JSON library (a forward declaration,
    nlohmann/json_fwd.hpp, is how an opaque Document is named).
1d. Nothing in src/ includes <regex>: libstdc++ compiles a std::regex through the shared
    ctype<char> facet, whose narrow cache two threads race on (a ThreadSanitizer report, CI of
    stop 44). model/Syntax.h holds the name checks instead.
2. No function in src/ is longer than 70 lines, except the ones listed in long_functions.txt,
   each of which may only shrink (a ratchet: the list is cut as they are split).

Run: tidy_test.py SRC_DIR. Exits 1 listing every finding; prints "--update" advice for the
ratchet when a listed function got shorter.
"""
import pathlib
import re
import sys

LAYERS = ["model", "wal", "events", "adapters", "projection", "controller", "runtime",
          "operator"]
# Folders or files that must not include nlohmann/json (the journal layer carries bytes).
JSON_FREE = ["wal/"]
JSON_INCLUDE = re.compile(r'^\s*#\s*include\s+<nlohmann/json\.hpp>')
STATE_MACHINES = ["controller/rayjob/Decide.cpp", "controller/raycluster/RayClusterDecide.cpp"]
RAYCLUSTER, RAYJOB = "controller/raycluster/", "controller/rayjob/"
PROJECT_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
MAX_LINES = 70
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/')
# A definition at namespace scope starts at column 0 (clang-format) and opens its body there.
SIGNATURE = re.compile(r"^[A-Za-z_][^;]*\)\s*(const\s*)?(override\s*)?(noexcept\s*)?\{\s*$")


def layer_of(path: pathlib.Path, src: pathlib.Path) -> str:
    return path.relative_to(src).parts[0]


def upward_includes(src: pathlib.Path):
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".h", ".cpp"):
            continue
        mine = LAYERS.index(layer_of(path, src))
        for n, line in enumerate(path.read_text().splitlines(), 1):
            m = INCLUDE.match(line)
            if m and m.group(1) in LAYERS and LAYERS.index(m.group(1)) > mine:
                yield f"{path.relative_to(src)}:{n}: includes {m.group(1)}/, a layer above"


def kind_includes(src: pathlib.Path):
    for path in sorted((src / RAYCLUSTER).rglob("*")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            m = PROJECT_INCLUDE.match(line)
            if m and m.group(1).startswith(RAYJOB):
                yield (f"{path.relative_to(src)}:{n}: the RayCluster controller includes "
                       f"{m.group(1)} of the RayJob controller")


def json_includes(src: pathlib.Path):
    for path in sorted(src.rglob("*")):
        rel = str(path.relative_to(src))
        if path.suffix not in (".h", ".cpp") or not any(rel.startswith(p) for p in JSON_FREE):
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if JSON_INCLUDE.match(line):
                yield f"{rel}:{n}: includes the JSON library, which this file must not"


REGEX_INCLUDE = re.compile(r'^\s*#\s*include\s+<regex>')


def regex_includes(src: pathlib.Path):
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".h", ".cpp"):
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if REGEX_INCLUDE.match(line):
                yield (f"{path.relative_to(src)}:{n}: includes <regex>; use model/Syntax.h "
                       "(std::regex races on the shared ctype facet)")


def json_reached(src: pathlib.Path):
    for machine in STATE_MACHINES:
        seen, stack = set(), [(machine, [machine])]
        while stack:
            rel, chain = stack.pop()
            if rel in seen or not (src / rel).exists():
                continue
            seen.add(rel)
            for line in (src / rel).read_text().splitlines():
                if JSON_INCLUDE.match(line):
                    yield f"{machine}: reaches the JSON library through {' -> '.join(chain)}"
                m = PROJECT_INCLUDE.match(line)
                if m:
                    stack.append((m.group(1), chain + [m.group(1)]))


def function_lengths(path: pathlib.Path):
    lines = path.read_text().splitlines()
    n = 0
    while n < len(lines):
        line = lines[n]
        start = n
        if SIGNATURE.match(line) or (line and not line[0].isspace() and line.endswith("{")
                                     and "(" in "".join(lines[max(0, n - 3):n + 1])
                                     and not line.startswith(("namespace", "struct", "class",
                                                              "enum", "union", "extern"))):
            depth = 0
            for m in range(n, len(lines)):
                depth += lines[m].count("{") - lines[m].count("}")
                if depth <= 0 and m > n or (m == n and depth == 0):
                    break
            name = re.sub(r"\(.*", "", line).split()[-1] if "(" in line else line
            yield name, m - start + 1, start + 1
            n = m + 1
            continue
        n += 1


def main() -> int:
    src = pathlib.Path(sys.argv[1])
    ratchet_file = pathlib.Path(__file__).with_name("long_functions.txt")
    allowed = {}
    for row in ratchet_file.read_text().splitlines():
        if row.strip() and not row.startswith("#"):
            where, lines = row.rsplit(" ", 1)
            allowed[where] = int(lines)
    findings = (list(upward_includes(src)) + list(kind_includes(src)) + list(json_includes(src)) +
                list(json_reached(src)) + list(regex_includes(src)))
    seen = {}
    for path in sorted(src.rglob("*.cpp")):
        for name, length, line in function_lengths(path):
            if length <= MAX_LINES:
                continue
            key = f"{path.relative_to(src)}:{name}"
            seen[key] = length
            if key not in allowed:
                findings.append(f"{key} (line {line}) is {length} lines; the limit is {MAX_LINES}")
            elif length > allowed[key]:
                findings.append(f"{key} grew to {length} lines (ratchet: {allowed[key]})")
    for key, lines in allowed.items():
        if seen.get(key, 0) < lines:
            print(f"ratchet: {key} is now {seen.get(key, 0)} lines; lower its entry to that")
    for f in findings:
        print(f)
    print(f"{len(findings)} finding(s); {len(seen)} function(s) over {MAX_LINES} lines "
          f"(ratchet allows {len(allowed)})")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
