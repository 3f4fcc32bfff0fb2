#!/usr/bin/env python3
"""Copies the OpenAPI document from design/api.md (its ```json block, the source of truth)
into Sources/NVRHTTP/OpenAPIDocument.swift, which the server serves at /api/openapi.json.
Run after editing the document; a test fails while the two differ."""
import json, pathlib, sys
root = pathlib.Path(__file__).resolve().parent.parent
md = (root / "design/api.md").read_text()
block = md.split("```json\n", 1)[1].split("\n```", 1)[0]
doc = json.loads(block)  # must be valid JSON
compact = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))  # one line: the Swift file stays short
swift = ("// The API's OpenAPI 3 document, served at /api/openapi.json. Generated from design/api.md\n"
         "// by scripts/sync-openapi.py; a test keeps the two equal.\n"
         "enum OpenAPIDocument {\n    static let json = #\"\"\"\n" + compact + "\n\"\"\"#\n}\n")
(root / "Sources/NVRHTTP/OpenAPIDocument.swift").write_text(swift)
print("Sources/NVRHTTP/OpenAPIDocument.swift updated", file=sys.stderr)
