"""Turning a Python function into its conditional form: source → AST → transformed code object,
rebuilt as a function with the original's globals, closure cells and defaults.

Functions called while a conditional pipeline is defined are transformed too (as DALI's
AutoGraph does), when they are the user's own: plain Python functions and methods whose source
is available, from neither feedline, NumPy nor an installed package, and not marked with
:func:`do_not_convert`. A function that cannot be transformed runs unchanged (with a warning).
"""

from __future__ import annotations

import ast
import functools
import inspect
import re
import sysconfig
import textwrap
import threading
import types
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from feedline.core.pipeline.conditionals import runtime
from feedline.core.pipeline.conditionals.markers import is_converted
from feedline.core.pipeline.conditionals.scopes import active_stack
from feedline.core.pipeline.conditionals.transform import (
    RUNTIME_NAME,
    transform_function,
    transform_lambda,
)
from feedline.core.pipeline.decorator import DO_NOT_CONVERT_MARK

__all__ = ["call", "converted", "do_not_convert", "is_converted"]

F = TypeVar("F", bound=Callable[..., Any])

_CONVERTED = runtime.CONVERTED
_DO_NOT_CONVERT = DO_NOT_CONVERT_MARK
_SKIPPED_PACKAGES = frozenset({"feedline", "nvidia", "numpy", "cupy", "torch", "jax", "PIL"})
_UNCONVERTIBLE_FLAGS = (
    inspect.CO_GENERATOR
    | inspect.CO_COROUTINE
    | inspect.CO_ASYNC_GENERATOR
    | inspect.CO_ITERABLE_COROUTINE
)
_LIBRARY_ROOTS = tuple(
    str(Path(p).resolve())
    for p in {sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["platstdlib"]}
)
_cache: dict[types.CodeType, types.CodeType | None] = {}
_lock = threading.Lock()


def do_not_convert(func: F | None = None) -> Any:
    """Keep ``func`` (and the functions defined inside it) out of the conditional transformation,
    e.g. for an ``external_source`` callback that must stay picklable. As DALI's
    ``nvidia.dali.pipeline.do_not_convert``; usable with or without parentheses.

    Raises:
        ValueError: ``func`` is a ``@pipeline_def`` factory (its definition is what converts).
    """
    if func is None:
        return do_not_convert
    if getattr(func, "_is_pipeline_def", False):
        raise ValueError("Pipeline definition cannot be marked with @do_not_convert.")
    setattr(func, _DO_NOT_CONVERT, True)
    return func


def _runtime_namespace() -> types.SimpleNamespace:
    functions = {name: getattr(runtime, name) for name in runtime.__all__}
    return types.SimpleNamespace(**functions, call=call)


def call(function: Any, /, *args: Any, **kwargs: Any) -> Any:
    """``function(*args, **kwargs)``, transforming ``function`` first when a conditional
    pipeline is being defined on this thread and the function is the user's."""
    if active_stack() is not None:
        function = converted(function)
    return function(*args, **kwargs)


def _users(function: types.FunctionType) -> bool:
    """Whether ``function`` is user code that the transformation applies to."""
    if getattr(function, _CONVERTED, False) or getattr(function, _DO_NOT_CONVERT, False):
        return False
    if function.__code__.co_flags & _UNCONVERTIBLE_FLAGS or hasattr(function, "__wrapped__"):
        return False
    if _mangles_names(function.__code__):
        return False
    module = getattr(function, "__module__", None) or ""
    if module.split(".")[0] in _SKIPPED_PACKAGES:
        return False
    filename = function.__code__.co_filename
    if filename.startswith("<"):
        return False
    parts = Path(filename).parts
    if "site-packages" in parts or "dist-packages" in parts:
        return False
    return not str(Path(filename).resolve()).startswith(_LIBRARY_ROOTS)


_MANGLED = re.compile(r"^_[A-Za-z0-9]\w*?__[A-Za-z0-9_]*[A-Za-z0-9]_?$")


def _mangles_names(code: types.CodeType) -> bool:
    """Whether ``code`` (a method) uses private ``__names``, which Python mangled with its class
    name: recompiled outside the class, they would no longer be."""
    names = (*code.co_names, *code.co_varnames, *code.co_freevars, *code.co_cellvars)
    if any(_MANGLED.match(n) and not n.endswith("__") for n in names):
        return True
    return any(_mangles_names(c) for c in code.co_consts if isinstance(c, types.CodeType))


def converted(function: Any, force: bool = False) -> Any:
    """The transformed version of ``function`` when it is the user's (or ``force``), else
    ``function`` itself. Bound methods keep their instance, ``functools.partial`` objects their
    arguments; an instance of the user's class with a ``__call__`` method is called through the
    transformed method."""
    if isinstance(function, types.MethodType):
        inner = converted(function.__func__, force)
        if inner is function.__func__:
            return function
        return types.MethodType(inner, function.__self__)
    if isinstance(function, functools.partial):
        inner = converted(function.func, force)
        if inner is function.func:
            return function
        return functools.partial(inner, *function.args, **function.keywords)
    if not isinstance(function, types.FunctionType):
        method = inspect.getattr_static(type(function), "__call__", None)
        if isinstance(function, type) or not isinstance(method, types.FunctionType):
            return function
        inner = converted(method, force)
        return function if inner is method else types.MethodType(inner, function)
    if not force and not _users(function):
        return function
    code = _converted_code(function)
    return function if code is None else _rebuild(function, code)


def _converted_code(function: types.FunctionType) -> types.CodeType | None:
    with _lock:
        if function.__code__ in _cache:
            return _cache[function.__code__]
    try:
        code = _compile(function)
    except (OSError, TypeError, SyntaxError, ValueError) as exc:
        warnings.warn(
            f"conditionals: {function.__qualname__} could not be transformed ({exc}); it runs "
            "unchanged, so an `if` on a DataNode inside it fails",
            UserWarning,
            stacklevel=4,
        )
        code = None
    with _lock:
        _cache[function.__code__] = code
    return code


def _definition(function: types.FunctionType) -> tuple[ast.FunctionDef, int]:
    """The function's definition as a transformed AST, and the name of what the factory
    returns."""
    lines, first_line = inspect.getsourcelines(function)
    tree = ast.parse(textwrap.dedent("".join(lines)))
    ast.increment_lineno(tree, first_line - 1)
    code = function.__code__
    if function.__name__ == "<lambda>":
        argcount = code.co_argcount + code.co_kwonlyargcount
        argcount += bool(code.co_flags & inspect.CO_VARARGS)
        argcount += bool(code.co_flags & inspect.CO_VARKEYWORDS)
        wanted = list(code.co_varnames[:argcount])
        candidates = [
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.Lambda)
            and node.lineno == code.co_firstlineno
            and _argument_names(node.args) == wanted
        ]
        if len(candidates) != 1:
            raise ValueError("its source holds several lambdas that look alike")
        return transform_lambda(candidates[0], "__fl_lambda"), first_line
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == function.__name__:
            return transform_function(node), first_line
    raise ValueError("its definition was not found in its source")


def _argument_names(args: ast.arguments) -> list[str]:
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    if args.vararg:
        names.insert(len(args.posonlyargs) + len(args.args), args.vararg.arg)
    if args.kwarg:
        names.append(args.kwarg.arg)
    return names


_DEFINED_AS = "__fl_converted"
"""The name the transformed definition is compiled under inside the factory. Under the
function's own name it would be a local of the factory, and a function that calls itself
(directly, in a lambda or in a generator expression) would then read itself from a closure cell
the original does not have, instead of from its globals as the original does."""


def _compile(function: types.FunctionType) -> types.CodeType:
    definition, _ = _definition(function)
    definition.name = _DEFINED_AS
    free = list(function.__code__.co_freevars)
    factory = ast.FunctionDef(
        "__fl_factory",
        ast.arguments([], [ast.arg(n) for n in [RUNTIME_NAME, *free]], None, [], [], None, []),
        [definition, ast.Return(ast.Name(definition.name, ast.Load()))],
        [],
        None,
    )
    module = ast.Module([factory], [])
    ast.fix_missing_locations(module)
    compiled = compile(module, function.__code__.co_filename, "exec", dont_inherit=True)
    factory_code = _nested_code(compiled, "__fl_factory")
    code = _nested_code(factory_code, _DEFINED_AS)
    code = code.replace(co_name=function.__code__.co_name)
    return _requalified(code, f"__fl_factory.<locals>.{_DEFINED_AS}", function.__qualname__)


def _requalified(code: types.CodeType, old: str, new: str) -> types.CodeType:
    """``code`` and the code nested in it named as the original function's (not as parts of
    the factory that compiled them)."""
    consts = tuple(
        _requalified(c, old, new) if isinstance(c, types.CodeType) else c for c in code.co_consts
    )
    qualname = getattr(code, "co_qualname", None)
    if qualname is None:
        return code.replace(co_consts=consts)
    if qualname.startswith(old):
        qualname = new + qualname[len(old) :]
    return code.replace(co_consts=consts, co_qualname=qualname)


def _nested_code(code: types.CodeType, name: str) -> types.CodeType:
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType) and constant.co_name == name:
            return constant
    raise ValueError(f"no code object {name!r} in the compiled transformation")


_RUNTIME: types.SimpleNamespace | None = None


def _rebuild(function: types.FunctionType, code: types.CodeType) -> types.FunctionType:
    global _RUNTIME
    if _RUNTIME is None:
        _RUNTIME = _runtime_namespace()
    cells = dict(zip(function.__code__.co_freevars, function.__closure__ or (), strict=True))
    closure = tuple(
        types.CellType(_RUNTIME) if name == RUNTIME_NAME else cells[name]
        for name in code.co_freevars
    )
    rebuilt = types.FunctionType(
        code, function.__globals__, function.__name__, function.__defaults__, closure
    )
    rebuilt.__kwdefaults__ = function.__kwdefaults__
    rebuilt.__dict__.update(function.__dict__)
    rebuilt.__qualname__ = function.__qualname__
    rebuilt.__module__ = function.__module__
    rebuilt.__doc__ = function.__doc__
    rebuilt.__annotations__ = dict(function.__annotations__)
    setattr(rebuilt, _CONVERTED, True)
    return rebuilt
