"""The app driven in-process, as a server would drive it: with the state its lifespan yields."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.types import ASGIApp, Receive, Scope, Send

from gitreg.auth.gate import Gate
from gitreg.web.app import create_app
from gitreg.web.state import STATE_KEY, RegistryState


def in_process(state: RegistryState) -> ASGIApp:
    """The app without background work, each request given the lifespan's state (what Hypercorn
    does after running the lifespan); for clients such as httpx.ASGITransport."""
    app: Starlette = create_app(state, background=False)

    async def with_state(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            scope = {**scope, "state": {STATE_KEY: state}}
        await app(scope, receive, send)

    return with_state


async def _no_wait(delay: float) -> None:
    pass


def without_wrong_token_delays(state: RegistryState) -> RegistryState:
    """`state`, its gate answering wrong tokens at once: for fuzzing, which sends hundreds of
    them (the delays themselves: tests/auth/test_wrong_tokens.py)."""
    gate = state.current.world.gate
    if isinstance(gate, Gate):  # an open registry's slows nothing
        gate.wrong_tokens.sleep = _no_wait
    return state
