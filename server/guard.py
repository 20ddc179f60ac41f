"""One broken feature must never take the server down.

Every handler body runs through ``guarded``: an exception is logged with its traceback and the feature
answers its neutral value (no lenses, no hover) so the editor carries on and the other features keep working.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable
from typing import Any, TypeVar

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
