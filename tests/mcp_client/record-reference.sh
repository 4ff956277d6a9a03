#!/usr/bin/env bash
# Re-record the reference goldens of the MCP tests with the 0.4.6 oracle:
# fixtures/reference/<module>/{mcp-tools.json,apizr-mcp.json} from `apizr generate mcp`.
# Only the generated JSON contract files are kept (no reference code).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
oracle="${APIZR_ORACLE:-/work/oracle-venv/bin/apizr}"
mcp_py="${MCP_PY:-$here/../../target/mcp-client-venv/bin/python}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for src in "$here"/fixtures/*.py "$here"/../../examples/pricing.py; do
  name="$(basename "$src" .py)"
  "$oracle" generate mcp "$src" --output-dir "$tmp/$name" >/dev/null
  mkdir -p "$here/fixtures/reference/$name"
  cp "$tmp/$name/mcp-tools.json" "$tmp/$name/apizr-mcp.json" "$here/fixtures/reference/$name/"
  # Transcript of the reference server driven by the official client (needs a Python with
  # `mcp` installed: MCP_PY, default the test venv).
  calls="$here/fixtures/$name.calls.json"
  if [ -f "$calls" ]; then
    (cd "$tmp/$name" && "$mcp_py" "$here/drive.py" --calls "$calls" --stdio -- "$mcp_py" server.py) \
      > "$here/fixtures/reference/$name/transcript.json"
  fi
done
echo "recorded: $(ls "$here/fixtures/reference" | tr '\n' ' ')"
