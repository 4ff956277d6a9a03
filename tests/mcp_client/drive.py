#!/usr/bin/env python3
"""Drive an MCP server with the OFFICIAL `mcp` client package and print a JSON transcript.

Why: the Rust MCP server must interoperate with the reference client SDK, not only with our own
understanding of the protocol. The same script drives the reference's generated `server.py`
(to record golden transcripts) and our servers (to compare against them), so both sides are
observed through exactly the same client code.

Usage:
  drive.py --stdio -- CMD [ARGS...]        spawn CMD and talk over stdio
  drive.py --http URL                      Streamable HTTP endpoint (e.g. http://127.0.0.1:8000/mcp)
Options:
  --calls FILE     JSON list of {"name": tool, "arguments": {...}} (arguments may be omitted)
  --mode MODE      client connect mode: legacy (initialize handshake, default) or auto
  --header K=V     extra HTTP header (repeatable; e.g. Authorization=Bearer x)

Output (stdout, one JSON document, keys sorted):
  {"protocol_version", "server_info", "capabilities", "tools": [...], "calls": [...]}
Each call records the CallToolResult as the SDK parsed it (content, structuredContent, isError),
or {"error": {"code", "message"}} when the server answered with a JSON-RPC error.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import anyio
import httpx2
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client


def dump(model: Any) -> Any:
    """A pydantic model as plain JSON data (wire aliases, no unset fields)."""
    if model is None:
        return None
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def drive(server: Any, mode: str, calls: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    async with Client(server, mode=mode) as client:
        out["protocol_version"] = client.protocol_version
        out["server_info"] = dump(client.server_info)
        out["capabilities"] = dump(client.server_capabilities)
        listed = await client.list_tools()
        out["tools"] = [dump(t) for t in listed.tools]
        results = []
        for call in calls:
            entry: dict[str, Any] = {"name": call["name"]}
            if "arguments" in call:
                entry["arguments"] = call["arguments"]
            try:
                result = await client.call_tool(call["name"], call.get("arguments"))
                entry["result"] = dump(result)
            except MCPError as exc:
                entry["error"] = {"code": exc.error.code, "message": exc.error.message}
            results.append(entry)
        out["calls"] = results
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--stdio", action="store_true")
    group.add_argument("--http")
    parser.add_argument("--calls")
    parser.add_argument("--mode", default="legacy")
    parser.add_argument("--header", action="append", default=[])
    parser.add_argument("command", nargs="*")
    args = parser.parse_args()

    calls: list[dict[str, Any]] = []
    if args.calls:
        with open(args.calls, encoding="utf-8") as fh:
            calls = json.load(fh)

    async def run() -> dict[str, Any]:
        if args.stdio:
            if not args.command:
                parser.error("--stdio needs a command after --")
            params = StdioServerParameters(command=args.command[0], args=args.command[1:])
            return await drive(params, args.mode, calls)
        headers = dict(h.split("=", 1) for h in args.header)
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
            transport = streamable_http_client(args.http, http_client=http)
            return await drive(transport, args.mode, calls)

    transcript = anyio.run(run)
    json.dump(transcript, sys.stdout, sort_keys=True, ensure_ascii=False, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
