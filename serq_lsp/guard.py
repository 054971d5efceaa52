"""Robustness: a feature that fails is logged and answered with an error; the server goes on."""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInternalError

log = logging.getLogger("serq_lsp")

F = TypeVar("F", bound=Callable[..., Any])


def guarded(handler: F) -> F:
    """Wrap a feature `handler(ls, *args)` (a function or a coroutine function): an exception
    in it is logged (to the log and the client's output) and becomes a JSON-RPC internal
    error, never a crash."""
    if inspect.iscoroutinefunction(handler):

        @functools.wraps(handler)
        async def waiting(ls: Any, *args: Any) -> Any:
            try:
                return await handler(ls, *args)
            except JsonRpcException:
                raise
            except Exception as error:
                raise _failed(ls, handler, error) from error

        return waiting  # type: ignore[return-value]

    @functools.wraps(handler)
    def wrapper(ls: Any, *args: Any) -> Any:
        try:
            return handler(ls, *args)
        except JsonRpcException:
            raise
        except Exception as error:
            raise _failed(ls, handler, error) from error

    return wrapper  # type: ignore[return-value]


def _failed(ls: Any, handler: Callable[..., Any], error: Exception) -> JsonRpcInternalError:
    """Log that `handler` failed with `error` and return the error its request answers."""
    message = f"serq-lsp: {handler.__name__} failed: {type(error).__name__}: {error}"
    log.exception(message)
    try:
        ls.window_log_message(types.LogMessageParams(type=types.MessageType.Error, message=message))
    except Exception:  # the client may be gone; the log has it
        pass
    return JsonRpcInternalError(message)
