"""The Model Context Protocol server: read-only tools for AI assistants, named as HashiCorp's
terraform-mcp-server names them where they do the same, over what the caller may read. Served
at /mcp (streamable HTTP, stateless: any replica answers any request; the Host must be one of
this registry's) and over stdio by `gitreg mcp`.

A tool reads the request that carries it: its Authorization header goes to the gate as on
`/v1/modules`. Over stdio there is no request: each call gets one made for it, carrying the
token `gitreg mcp` was given."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from urllib.parse import urlsplit

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from starlette.requests import Request
from starlette.types import ASGIApp

from gitreg import __version__
from gitreg.catalog.model import Catalog
from gitreg.errors import ClientError, GitregError, NotReadYet
from gitreg.web import mcp_tools
from gitreg.web.mcp_tools import Answer
from gitreg.web.state import STATE_KEY, RegistryState

log = logging.getLogger(__name__)

PATH = "/mcp"
_READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
# Where an assistant on this machine reaches the registry: never a rebinding attack's target.
_LOOPBACK = ("127.0.0.1", "localhost", "[::1]")

RequestOf = Callable[[Context], Request]


def registry_mcp(request_of: RequestOf) -> MCPServer:
    """The MCP server with gitreg's tools; `request_of` gives the request a call reads."""
    server = MCPServer(
        "gitreg",
        version=__version__,
        instructions=(
            "Terraform modules and providers of this private registry: search them, read a"
            " module's inputs, outputs and README, and write the module block that calls it."
        ),
    )

    async def answered(ctx: Context, ask: Callable[[Request], Awaitable[Answer]]) -> CallToolResult:
        try:
            answer = await ask(request_of(ctx))
        except (ClientError, NotReadYet) as exc:
            raise ToolError(str(exc)) from None
        except GitregError as exc:  # the registry's trouble, not the caller's: said, not hidden
            log.warning("an MCP tool could not answer: %s", exc)
            raise ToolError(f"the registry cannot answer now: {exc}") from None
        return CallToolResult(
            content=[TextContent(type="text", text=answer.markdown)],
            structured_content=answer.data,
        )

    @server.tool(annotations=_READ_ONLY, structured_output=False)
    async def search_modules(
        ctx: Context, module_query: str, current_offset: int = 0
    ) -> CallToolResult:
        """Search the modules you may read by words of their namespace, name, system and
        description; an empty query lists them all. Each result's module_id
        (NAMESPACE/NAME/SYSTEM/VERSION) is what get_module_details takes."""
        return await answered(
            ctx, lambda r: mcp_tools.search_modules(r, module_query, current_offset)
        )

    @server.tool(annotations=_READ_ONLY, structured_output=False)
    async def get_module_details(ctx: Context, module_id: str) -> CallToolResult:
        """A module version's documentation: description, usage, inputs (type, default,
        required, deprecated), outputs, providers, resources, submodules, examples and README.
        module_id: NAMESPACE/NAME/SYSTEM/VERSION, or NAMESPACE/NAME/SYSTEM for the newest."""
        return await answered(ctx, lambda r: mcp_tools.module_details(r, module_id))

    @server.tool(annotations=_READ_ONLY, structured_output=False)
    async def list_module_versions(ctx: Context, module_id: str) -> CallToolResult:
        """Every version of a module, newest first, with the latest and the deprecated ones
        marked. module_id: NAMESPACE/NAME/SYSTEM."""
        return await answered(ctx, lambda r: mcp_tools.module_versions(r, _unversioned(module_id)))

    @server.tool(annotations=_READ_ONLY, structured_output=False)
    async def get_module_usage(ctx: Context, module_id: str) -> CallToolResult:
        """The `module` block that calls a module version, its required inputs as placeholders
        of their types. module_id: NAMESPACE/NAME/SYSTEM/VERSION, or without the version for
        the newest (then `~> MAJOR.MINOR`)."""
        return await answered(ctx, lambda r: mcp_tools.module_usage(r, module_id))

    @server.tool(annotations=_READ_ONLY, structured_output=False)
    async def get_module_dependents(ctx: Context, module_id: str) -> CallToolResult:
        """Who calls a module (its registry's modules and consumer repositories): each
        caller's constraint, the version it picks today and whether that one is deprecated;
        callers you may not read are only counted. module_id: NAMESPACE/NAME/SYSTEM."""
        return await answered(
            ctx, lambda r: mcp_tools.module_dependents(r, _unversioned(module_id))
        )

    @server.tool(annotations=_READ_ONLY, structured_output=False)
    async def get_latest_module_version(
        ctx: Context, module_publisher: str, module_name: str, module_provider: str
    ) -> CallToolResult:
        """The newest version of a module (its namespace, name and target system)."""
        return await answered(
            ctx,
            lambda r: mcp_tools.latest_module_version(
                r, module_publisher, module_name, module_provider
            ),
        )

    @server.tool(annotations=_READ_ONLY, structured_output=False)
    async def search_providers(
        ctx: Context, provider_query: str = "", current_offset: int = 0
    ) -> CallToolResult:
        """Search the providers this registry hosts that you may read; an empty query lists
        them all. Each result's provider_id (NAMESPACE/TYPE) is what get_provider_details
        takes."""
        return await answered(
            ctx, lambda r: mcp_tools.search_providers_answer(r, provider_query, current_offset)
        )

    @server.tool(annotations=_READ_ONLY, structured_output=False)
    async def get_provider_details(ctx: Context, provider_id: str) -> CallToolResult:
        """A hosted provider's version: its `required_providers` block, protocols, platforms,
        every version and the deprecated ones. provider_id: NAMESPACE/TYPE or
        NAMESPACE/TYPE/VERSION."""
        return await answered(ctx, lambda r: mcp_tools.provider_details(r, provider_id))

    return server


def _unversioned(module_id: str) -> str:
    """A module_id with a version (as search results give) names the module all the same."""
    parts = module_id.strip().strip("/").split("/")
    return "/".join(parts[:3]) if len(parts) == 4 else module_id


def _from_http(ctx: Context) -> Request:
    request = ctx.request_context.request
    if not isinstance(request, Request):
        raise ToolError("this call came without an HTTP request")
    return request


def http_app(catalog: Catalog) -> tuple[Callable[[], AbstractAsyncContextManager[None]], ASGIApp]:
    """The server's session manager's run (the lifespan of the app: a mounted app's own never
    runs) and its streamable HTTP app for /mcp: stateless, JSON answers, and only this
    registry's own host names (hostname, public_url's, loopback) in Host: another is a 421,
    which keeps a page on a rebound name from reaching it."""
    for chatty in ("mcp.server.streamable_http", "mcp.server.streamable_http_manager"):
        # A line per request ("Terminating session: None") and per start: the access log's job.
        logging.getLogger(chatty).setLevel(logging.WARNING)
    server = registry_mcp(_from_http)
    hosts = [catalog.server.hostname.split(":")[0], *_LOOPBACK]
    origins = [f"https://{catalog.server.hostname}"]
    if catalog.server.public_url:
        parts = urlsplit(catalog.server.public_url)
        hosts.append(parts.hostname or "")
        origins.append(f"{parts.scheme}://{parts.netloc}")
    allowed = [h for host in dict.fromkeys(hosts) if host for h in (host, f"{host}:*")]
    origins += [f"http://{host}:*" for host in _LOOPBACK]
    app = server.streamable_http_app(
        streamable_http_path=PATH,
        stateless_http=True,
        json_response=True,
        transport_security=TransportSecuritySettings(
            allowed_hosts=allowed, allowed_origins=origins
        ),
    )
    return server.session_manager.run, app


def stdio_request(state: RegistryState, token: str | None) -> Callable[[Context], Request]:
    """Over stdio: a request made for each call (its own scope, so each call reads the world
    served when it began), carrying `token` as a Bearer token when there is one."""

    def request_of(ctx: Context) -> Request:
        headers = [(b"authorization", f"Bearer {token}".encode())] if token else []
        scope = {
            "type": "http",
            "method": "POST",
            "path": PATH,
            "raw_path": PATH.encode(),
            "query_string": b"",
            "root_path": "",
            "scheme": "stdio",
            "http_version": "1.1",
            "headers": headers,
            "client": None,
            "server": None,
            "state": {STATE_KEY: state},
        }
        return Request(scope)

    return request_of
