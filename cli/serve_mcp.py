"""`memstore serve`: the tools as an MCP server over stdio (the optional `mcp` SDK)."""

from __future__ import annotations

from memstore.errors import UsageError


def serve(resident, agent: str | None) -> None:
    try:
        import anyio
        import mcp_types as types
        from mcp.server.lowlevel import Server
        from mcp.server.stdio import stdio_server
    except ImportError:
        raise UsageError("memstore serve needs the MCP SDK: pip install 'memstore[mcp]' "
                         "(or use memstore serve --jsonl, which needs nothing more)") from None
    from memstore import __version__, tools
    from memstore.codec import dumps

    from .serve_call import answer

    async def list_tools(_ctx, _params):
        return types.ListToolsResult(tools=[
            types.Tool(name=name, description=t["description"], input_schema=t["schema"])
            for name, t in tools.TOOLS.items()])

    async def call_tool(_ctx, params):
        reply = answer(resident, params.name, params.arguments, agent)
        if reply["ok"]:
            result = reply["result"]
            return types.CallToolResult(content=[types.TextContent(type="text", text=dumps(result).decode())],
                                        structured_content=result)
        return types.CallToolResult(content=[types.TextContent(type="text", text=f"Error: {reply['error']}")],
                                    structured_content={"error": reply["error"], "exit": reply["exit"]},
                                    is_error=True)

    server = Server("memstore", version=__version__, on_list_tools=list_tools, on_call_tool=call_tool)

    async def main():
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)
