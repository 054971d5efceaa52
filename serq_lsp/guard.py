"""Robustness: a feature that fails is logged and answered with an error; the server goes on.

A request answered with an error on purpose (a rename refused, a Run of a program that
stops with an error, a command given bad arguments) is an answer, not a failure: pygls
would log each with a traceback, which `_Answered` drops. A failure of serq's own keeps
its traceback, logged where it happens (`guarded`)."""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInternalError

log = logging.getLogger("serq_lsp")


class _Answered(logging.Filter):
    """pygls' record of a request answered with an error (`JsonRpcException`): a refusal
    (invalid params, a request cancelled...) is dropped, an internal error is one line
    without pygls' traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if not isinstance(error, JsonRpcException):
            return True
        if not isinstance(error, JsonRpcInternalError):
            return False
        record.msg = "request %s answered with an error: %s"
        record.args = (record.args[0] if record.args else "?", error)
        record.exc_info = None
        record.exc_text = None
        return True


logging.getLogger("pygls.protocol.json_rpc").addFilter(_Answered())

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
