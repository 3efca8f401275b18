"""The AST transformation of a conditional pipeline function.

The function's syntax tree is rewritten so that the decisions Python makes become calls into
:mod:`.runtime`, which choose at run time between the plain Python statement and the
per-sample split/merge operators:

- ``if test: body else: orelse`` becomes two nested functions for the branches, two for
  reading and writing the variables they assign, and ``if_stmt(test, …)``;
- ``a and b`` / ``a or b`` become ``and_(a, lambda: b)`` / ``or_(a, lambda: b)`` (``b`` is still
  evaluated lazily), ``not a`` becomes ``not_(a)``;
- ``return`` inside an ``if`` becomes an assignment of the return value (and a flag that guards
  the statements after it), so both branches can be traced;
- every call ``f(…)`` becomes ``call(f, …)``, which transforms ``f`` first when it is a function
  of the user's (helpers that hold ``if`` statements on DataNodes work as in DALI);
- reads of variables that an ``if`` may leave undefined become ``ld(x)``, which raises DALI's
  error for a variable assigned in one branch only.

An ``if`` whose branches hold ``break``/``continue`` for a loop outside them, ``yield``,
``await`` or a ``return`` inside a loop stays a plain Python ``if`` (a DataNode condition there
raises DataNode's TypeError). Conditional expressions (``a if c else b``) and loops stay plain,
as in DALI.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field

from feedline.core.pipeline.conditionals.runtime import DO_RETURN, RETVAL

__all__ = ["RUNTIME_NAME", "transform_function", "transform_lambda"]

RUNTIME_NAME = "__fl_rt"
"""The name under which transformed code reaches :mod:`.runtime`."""

_FRAME_SENSITIVE = frozenset({"super", "locals", "globals", "vars", "eval", "exec", "dir"})
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)

Target = str | tuple[str, ...]
"""A variable (``"x"``) or an attribute chain on one (``("obj", "a")`` for ``obj.a``)."""


def _rt(attr: str) -> ast.expr:
    return ast.Attribute(ast.Name(RUNTIME_NAME, ast.Load()), attr, ast.Load())


def _call(func: ast.expr, args: list[ast.expr]) -> ast.Call:
    return ast.Call(func, args, [])


def _mark(node: ast.AST) -> ast.AST:
    """Flag a node this module generated (its variable reads are not wrapped in ``ld``)."""
    node._fl_generated = True  # type: ignore[attr-defined]
    return node


def _generated(node: ast.AST) -> bool:
    return getattr(node, "_fl_generated", False)


class _Assigned(ast.NodeVisitor):
    """The variables and attribute chains a block of statements assigns (in its own scope)."""

    def __init__(self) -> None:
        self.found: dict[str, Target] = {}

    def _add(self, target: Target) -> None:
        key = target if isinstance(target, str) else ".".join(target)
        self.found.setdefault(key, target)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        if not getattr(node, "_fl_branch_helper", False):
            self._add(node.name)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._add(node.name)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._add(node.name)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        return

    def visit_ListComp(self, node: ast.ListComp) -> None:
        return

    visit_SetComp = visit_DictComp = visit_GeneratorExp = visit_ListComp  # type: ignore[assignment]

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Store):
            self._add(node.id)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.ctx, ast.Store):
            chain = _attribute_chain(node)
            if chain is not None:
                self._add(chain)
            return
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(alias.asname or alias.name.split(".")[0])

    visit_ImportFrom = visit_Import  # type: ignore[assignment]

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self._add(node.name)
        self.generic_visit(node)


def _attribute_chain(node: ast.Attribute) -> tuple[str, ...] | None:
    parts = [node.attr]
    value = node.value
    while isinstance(value, ast.Attribute):
        parts.append(value.attr)
        value = value.value
    if not isinstance(value, ast.Name):
        return None
    return (value.id, *reversed(parts))


def _assigned(statements: Iterable[ast.stmt]) -> list[Target]:
    visitor = _Assigned()
    for statement in statements:
        visitor.visit(statement)
    return list(visitor.found.values())


class _Blockers(ast.NodeVisitor):
    """Whether a statement holds what a branch moved into a nested function cannot:
    ``return`` (left after the return rewrite, i.e. inside a loop), ``yield``, ``await``, or
    ``break``/``continue`` of a loop outside it."""

    def __init__(self) -> None:
        self.loops = 0
        self.found = False

    def visit(self, node: ast.AST) -> None:
        if self.found or isinstance(node, _SCOPES):
            return
        escapes = isinstance(node, ast.Break | ast.Continue) and not self.loops
        if escapes or isinstance(node, ast.Return | ast.Yield | ast.YieldFrom | ast.Await):
            self.found = True
        elif isinstance(node, _LOOPS):
            self.loops += 1
            self.generic_visit(node)
            self.loops -= 1
        else:
            self.generic_visit(node)


def _convertible(node: ast.If) -> bool:
    blockers = _Blockers()
    for statement in [*node.body, *node.orelse]:
        blockers.visit(statement)
    return not blockers.found


class _ReturnInBranch(ast.NodeVisitor):
    """Whether a function has a ``return`` inside an ``if`` (outside loops and nested scopes)."""

    def __init__(self) -> None:
        self.ifs = 0
        self.found = False

    def visit(self, node: ast.AST) -> None:
        if self.found or isinstance(node, (*_SCOPES, *_LOOPS)):
            return
        if isinstance(node, ast.Return) and self.ifs:
            self.found = True
        elif isinstance(node, ast.If):
            self.ifs += 1
            self.generic_visit(node)
            self.ifs -= 1
        else:
            self.generic_visit(node)


def _assign(name: str, value: ast.expr) -> ast.Assign:
    return ast.Assign([ast.Name(name, ast.Store())], value)


def _rewrite_block(statements: list[ast.stmt]) -> tuple[list[ast.stmt], bool]:
    """The block with its ``return`` statements (outside loops) turned into assignments of
    the return value and flag, the statements after a possible return guarded by the flag;
    and whether the block may return."""
    out: list[ast.stmt] = []
    for position, statement in enumerate(statements):
        if isinstance(statement, ast.Return):
            value = statement.value or ast.Constant(None)
            out += [_assign(RETVAL, value), _assign(DO_RETURN, ast.Constant(True))]
            return out, True
        returns = False
        if isinstance(statement, ast.If):
            statement.body, in_body = _rewrite_block(statement.body)
            statement.orelse, in_orelse = _rewrite_block(statement.orelse)
            returns = in_body or in_orelse
        elif isinstance(statement, ast.With):
            statement.body, returns = _rewrite_block(statement.body)
        elif isinstance(statement, ast.Try):
            blocks = [statement.body, statement.orelse, statement.finalbody]
            blocks += [handler.body for handler in statement.handlers]
            rewritten = [_rewrite_block(block) for block in blocks]
            statement.body, statement.orelse, statement.finalbody = (b for b, _ in rewritten[:3])
            for handler, (block, _) in zip(statement.handlers, rewritten[3:], strict=True):
                handler.body = block
            returns = any(r for _, r in rewritten)
        out.append(statement)
        if returns:
            rest, _ = _rewrite_block(statements[position + 1 :])
            if rest:
                test = ast.Compare(
                    ast.Name(DO_RETURN, ast.Load()), [ast.Is()], [ast.Constant(False)]
                )
                out.append(_mark(ast.If(test, rest, [])))  # type: ignore[arg-type]
            return out, True
    return out, False


def _rewrite_returns(node: ast.FunctionDef) -> None:
    finder = _ReturnInBranch()
    for statement in node.body:
        finder.visit(statement)
    if not finder.found:
        return
    body, _ = _rewrite_block(node.body)
    node.body = [
        _assign(RETVAL, _rt("UNDEFINED_RETURN")),
        _assign(DO_RETURN, ast.Constant(False)),
        *body,
        ast.Return(_call(_rt("returned"), [ast.Name(RETVAL, ast.Load())])),
    ]


@dataclass
class _FunctionScope:
    """What the transformer knows of the function whose body it is in."""

    globals: set[str]
    variables: set[str] = field(default_factory=set)


def _declared_globals(node: ast.FunctionDef) -> set[str]:
    names: set[str] = set()
    stack: list[ast.AST] = list(node.body)
    while stack:
        item = stack.pop()
        if isinstance(item, ast.Global):
            names.update(item.names)
        elif not isinstance(item, _SCOPES):
            stack.extend(ast.iter_child_nodes(item))
    return names


def _empty_arguments(*names: str) -> ast.arguments:
    return ast.arguments([], [ast.arg(n) for n in names], None, [], [], None, [])


def _target_expr(target: Target, ctx: ast.expr_context) -> ast.expr:
    if isinstance(target, str):
        return ast.Name(target, ctx)
    value: ast.expr = ast.Name(target[0], ast.Load())
    for attr in target[1:-1]:
        value = ast.Attribute(value, attr, ast.Load())
    return ast.Attribute(value, target[-1], ctx)


def _read_expr(target: Target) -> ast.expr:
    if isinstance(target, str):
        return ast.Name(target, ast.Load())
    owner = (
        _target_expr(target[:-1], ast.Load())
        if len(target) > 2
        else ast.Name(target[0], ast.Load())
    )
    return _call(_rt("get_attr"), [owner, ast.Constant(target[-1]), ast.Constant(".".join(target))])


class _Converter(ast.NodeTransformer):
    """Rewrites one function (and the functions nested in it)."""

    def __init__(self) -> None:
        self._scopes: list[_FunctionScope | None] = []
        self._numbers = itertools.count()

    def _block(self, statements: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for statement in statements:
            result = self.visit(statement)
            if isinstance(result, list):
                out.extend(result)
            elif result is not None:
                out.append(result)
        return out

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        if self._scopes:
            node.decorator_list.append(_rt("mark"))
        node.args = self.visit(node.args)
        _rewrite_returns(node)
        scope = _FunctionScope(_declared_globals(node))
        self._scopes.append(scope)
        node.body = self._block(node.body)
        self._scopes.pop()
        if scope.variables:
            node.body = [_LoadWrapper(scope.variables).visit(s) for s in node.body]
        return node

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AsyncFunctionDef:
        return node

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.ClassDef:
        node.bases = [self.visit(b) for b in node.bases]
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        self._scopes.append(None)
        node.body = self._block(node.body)
        self._scopes.pop()
        return node

    def visit_Lambda(self, node: ast.Lambda) -> ast.expr:
        self.generic_visit(node)
        return ast.copy_location(_call(_rt("mark"), [node]), node)

    def _in_function(self) -> bool:
        return bool(self._scopes) and self._scopes[-1] is not None

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.expr:
        self.generic_visit(node)
        if not self._in_function():
            return node
        function = "and_" if isinstance(node.op, ast.And) else "or_"
        result = node.values[-1]
        for value in reversed(node.values[:-1]):
            thunk = ast.Lambda(_empty_arguments(), result)
            result = _call(_rt(function), [value, thunk])
        return ast.copy_location(result, node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.expr:
        self.generic_visit(node)
        if not isinstance(node.op, ast.Not) or not self._in_function():
            return node
        return ast.copy_location(_call(_rt("not_"), [node.operand]), node)

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in _FRAME_SENSITIVE:
            return node
        func = node.func
        owner = func.value if isinstance(func, ast.Attribute) else None
        if isinstance(owner, ast.Name) and owner.id == RUNTIME_NAME:
            return node  # the runtime's own functions are called as they are
        if not self._in_function():
            return node
        return ast.copy_location(
            ast.Call(_rt("call"), [node.func, *node.args], node.keywords), node
        )

    def visit_If(self, node: ast.If) -> ast.stmt | list[ast.stmt]:
        convert = self._in_function() and not _generated(node) and _convertible(node)
        node.test = self.visit(node.test)
        node.body = self._block(node.body)
        node.orelse = self._block(node.orelse)
        if not convert:
            return node
        scope = self._scopes[-1]
        assert scope is not None
        return [ast.copy_location(s, node) for s in self._dispatch(node, scope)]

    def _dispatch(self, node: ast.If, scope: _FunctionScope) -> list[ast.stmt]:
        number = next(self._numbers)
        targets = _assigned([*node.body, *node.orelse])
        names = [t for t in targets if isinstance(t, str)]
        scope.variables.update(names)
        shared = [n for n in names if n not in scope.globals]
        global_names = [n for n in names if n in scope.globals]

        def declarations() -> list[ast.stmt]:
            found: list[ast.stmt] = []
            if shared:
                found.append(ast.Nonlocal(shared))
            if global_names:
                found.append(ast.Global(global_names))
            return found

        def function(name: str, body: list[ast.stmt], *params: str) -> ast.FunctionDef:
            helper = ast.FunctionDef(
                name, _empty_arguments(*params), body or [ast.Pass()], [], None
            )
            helper._fl_branch_helper = True  # type: ignore[attr-defined]
            return helper

        predeclared: list[ast.stmt] = [
            _mark(
                ast.Try(
                    [ast.Expr(ast.Name(n, ast.Load()))],
                    [
                        ast.ExceptHandler(
                            ast.Name("NameError", ast.Load()),
                            None,
                            [_assign(n, _call(_rt("Undefined"), [ast.Constant(n)]))],
                        )
                    ],
                    [],
                    [],
                )
            )
            for n in names
        ]
        on_true = function(f"__fl_if_true_{number}", declarations() + node.body)
        on_false = function(f"__fl_if_false_{number}", declarations() + node.orelse)
        state = ast.Tuple([_read_expr(t) for t in targets], ast.Load())
        get_state = _mark(function(f"__fl_if_get_{number}", [ast.Return(state)]))
        writes: list[ast.stmt] = [
            ast.Assign(
                [_target_expr(t, ast.Store())],
                ast.Subscript(ast.Name("__fl_state", ast.Load()), ast.Constant(i), ast.Load()),
            )
            for i, t in enumerate(targets)
        ]
        set_state = function(f"__fl_if_set_{number}", declarations() + writes, "__fl_state")
        labels = ast.Tuple(
            [ast.Constant(t if isinstance(t, str) else ".".join(t)) for t in targets], ast.Load()
        )
        dispatch = ast.Expr(
            _call(
                _rt("if_stmt"),
                [
                    node.test,
                    *(ast.Name(f.name, ast.Load()) for f in (on_true, on_false)),
                    ast.Name(get_state.name, ast.Load()),  # type: ignore[attr-defined]
                    ast.Name(set_state.name, ast.Load()),
                    labels,
                ],
            )
        )
        return [*predeclared, on_true, on_false, get_state, set_state, dispatch]  # type: ignore[list-item]


class _LoadWrapper(ast.NodeTransformer):
    """Wraps reads of the given variables in ``ld`` (skipping generated state readers)."""

    def __init__(self, names: set[str]) -> None:
        self._names = names

    def visit(self, node: ast.AST) -> ast.AST:
        if _generated(node) and not isinstance(node, ast.If):
            return node
        return super().visit(node)

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if isinstance(node.ctx, ast.Load) and node.id in self._names:
            return ast.copy_location(_call(_rt("ld"), [node]), node)
        return node


def transform_function(node: ast.FunctionDef) -> ast.FunctionDef:
    """The transformed copy of a function definition (its decorators dropped)."""
    node.decorator_list = []
    result = _Converter().visit(node)
    ast.fix_missing_locations(result)
    return result


def transform_lambda(node: ast.Lambda, name: str) -> ast.FunctionDef:
    """A lambda, transformed into a function definition named ``name``."""
    definition = ast.FunctionDef(name, node.args, [ast.Return(node.body)], [], None)
    ast.copy_location(definition, node)
    ast.copy_location(definition.body[0], node)
    return transform_function(definition)
