#!/usr/bin/env python3
"""Every target declares what it imports (issue 28): each Swift file's `import X` must name the
target itself, a dependency declared in Package.swift, or a module of the toolchain. SwiftPM
lets a target import any module that happens to be built before it; this says which do.
Run by `make test` (so by CI) with scripts/format.sh --check."""
import json
import re
import subprocess
import sys
from pathlib import Path

root = Path(__file__).resolve().parent.parent
package = json.loads(subprocess.run(["swift", "package", "dump-package"], cwd=root, check=True,
                                    capture_output=True, text=True).stdout)
toolchain = {"Foundation", "FoundationEssentials", "FoundationNetworking", "Glibc", "Dispatch",
             "Synchronization", "Testing", "XCTest", "_Concurrency", "Darwin", "os"}
kinds = {"regular": "Sources", "executable": "Sources", "test": "Tests", "system": "Sources"}
problems = []
for t in package["targets"]:
    if t["type"] == "system":
        continue
    path = root / (t.get("path") or f'{kinds[t["type"]]}/{t["name"]}')
    declared = {t["name"]}
    for d in t["dependencies"]:
        (kind, value), = d.items()
        declared.add(value[0])
    for f in sorted(path.rglob("*.swift")):
        for m in re.finditer(r"^(?:@\w+(?:\([^)]*\))?\s+)*import\s+(?:(?:struct|class|enum|func|protocol)\s+)?(\w+)",
                             f.read_text(), re.M):
            if m.group(1) not in declared | toolchain:
                problems.append(f"{f.relative_to(root)}: imports {m.group(1)}, which target {t['name']} does not declare")
for p in problems:
    print(p)
sys.exit(1 if problems else 0)
