"""One broken feature must never take the server down, and no request goes unanswered.

Every handler body runs through ``guarded``: an exception is logged with its traceback and the feature
answers its neutral value (no lenses, no hover) so the editor carries on and the other features keep working.

``AnsweringProtocol`` covers what happens before a handler is found: pygls decodes each message into
lsprotocol's types as it reads it, and a request whose params do not fit them (a negative position, a
number past 2**31 - 1, a string where a position belongs) raises in its reader loop, which logs the error
and reads on without answering: the editor waits for that request forever. Requests that come after
``shutdown`` are dropped the same way. Both now get an error response.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from pygls.exceptions import JsonRpcException, JsonRpcInvalidRequest
from pygls.protocol import LanguageServerProtocol

log = logging.getLogger("clperf.server")
T = TypeVar("T")


def guarded(feature: str, fallback: Any = None) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Wrap a handler (sync or async): on any exception log it with exc_info and return ``fallback``."""

    def wrap(fn: Callable[..., T]) -> Callable[..., T]:
        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def run_async(*args: Any, **kwargs: Any) -> Any:
                try:
                    return await fn(*args, **kwargs)
                except Exception:
                    log.error("feature %s failed", feature, exc_info=True)
                    return fallback

            return run_async  # type: ignore[return-value]

        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except Exception:
                log.error("feature %s failed", feature, exc_info=True)
                return fallback

        return run

    return wrap


class AnsweringProtocol(LanguageServerProtocol):
    """pygls's protocol, except that every request gets a response, even one it cannot decode."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as e:  # InvalidParams for params outside the protocol's types
            if "method" in data and "id" in data:  # a request: its sender waits for this answer
                log.warning("answering %s %r with %s", data.get("method"), data.get("id"), e.message)
                self._send_response(data["id"], None, e.to_response_error())
            raise  # pygls's reader logs it and goes on with the next message

    def handle_message(self, message: Any) -> None:
        is_request = getattr(message, "method", None) is not None and getattr(message, "id", None) is not None
        if self._shutdown and is_request:  # pygls drops it silently; the client would wait forever
            error = JsonRpcInvalidRequest(message="the server is shutting down")
            self._send_response(message.id, None, error.to_response_error())
            return
        super().handle_message(message)
