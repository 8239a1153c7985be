"""Compile the profile's pydantic model into cli/rlobs/profile/records.py (`make records`): one frozen record class
per model class, with the same fields, properties, methods and after-validators, and for each field the strict check
of rlobs.profile.strict that accepts what the model accepts. A render validates with those and needs neither
pydantic nor the model's classes (most of a cold start); the loader falls back to the model for every problem.

tests/test_records.py fails when the file is not what this writes from the current model."""

from __future__ import annotations

import ast
import builtins
import inspect
import subprocess
import sys
import textwrap
import types
import typing
from importlib import import_module
from pathlib import Path
from typing import Any

import annotated_types
from pydantic import AfterValidator, BaseModel, BeforeValidator, WithJsonSchema
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "cli" / "rlobs" / "profile" / "records.py"

# Where the copied methods and the field checks may take names from: modules that do not import pydantic.
LIGHT = (
    "rlobs.profile.checks",
    "rlobs.profile.ekschecks",
    "rlobs.profile.gkechecks",
    "rlobs.profile.problems",
    "rlobs.profile.helmvalues",
    "rlobs.profile.terraform",
    "rlobs.credentials",
    "typing",
)
_BOUNDS = {
    annotated_types.Gt: "gt",
    annotated_types.Ge: "ge",
    annotated_types.Lt: "lt",
    annotated_types.Le: "le",
    annotated_types.MinLen: "min_length",
    annotated_types.MaxLen: "max_length",
}
_SCALARS = {str: "_s.text", int: "_s.integer", float: "_s.number", bool: "_s.boolean", Any: "_s.anything"}


class Compiler:
    def __init__(self) -> None:
        self.classes: list[type[BaseModel]] = []
        self.imports: dict[str, set[str]] = {}
        self.modules: set[str] = set()
        self.constants: dict[str, str] = {}  # source -> name of a module-level check
        self.rows: dict[type[BaseModel], list[str]] = {}  # each class's field rows, as written in full

    # --- which classes, in an order where each comes after what it uses
    def visit(self, cls: type[BaseModel]) -> None:
        if cls in self.classes:
            return
        for base in cls.__bases__:
            if issubclass(base, BaseModel) and base.__name__ != "Model" and base is not BaseModel:
                self.visit(base)
        for f in cls.model_fields.values():
            for model in _models_in(f.annotation) + [m for meta in f.metadata for m in _models_in(meta)]:
                self.visit(model)
        if any(c.__name__ == cls.__name__ for c in self.classes):
            raise SystemExit(f"two profile classes named {cls.__name__}")
        self.classes.append(cls)

    # --- names
    def need(self, name: str, obj: object, where: str) -> None:
        if isinstance(obj, types.ModuleType):
            self.modules.add(obj.__name__)
            return
        if isinstance(obj, type) and issubclass(obj, BaseModel):
            return  # a record of this module
        home = getattr(obj, "__module__", None)
        for module in ([home] if home in LIGHT else []) + list(LIGHT):
            if getattr(import_module(module), name, _MISSING) is obj:
                self.imports.setdefault(module, set()).add(name)
                return
        raise SystemExit(f"{where} uses {name}, which no pydantic-free module provides: move it to one")

    def function(self, fn: Any, where: str) -> str:
        made = getattr(fn, "matching", None)
        if made is not None:
            self.imports.setdefault("rlobs.profile.checks", set()).add("matching")
            src = f"matching({', '.join(repr(a) for a in made)})"
            return self.constants.setdefault(src, f"_M{len(self.constants)}")
        if "<locals>" in fn.__qualname__:
            raise SystemExit(f"{where}: validator {fn.__qualname__} is a closure the compiler cannot rebuild")
        self.need(fn.__name__, fn, where)
        return fn.__name__

    # --- field checks and types
    def check(self, ann: Any, metadata: list[Any], where: str) -> str:
        src = self.base_check(ann, where)
        for meta in metadata:
            src = self.fold(src, meta, where)
        return src

    def fold(self, src: str, meta: Any, where: str) -> str:
        if isinstance(meta, BeforeValidator):
            return f"_s.before({self.function(meta.func, where)}, {src})"
        if isinstance(meta, AfterValidator):
            return f"_s.after({src}, {self.function(meta.func, where)})"
        if type(meta) in _BOUNDS:
            op = _BOUNDS[type(meta)]
            return f"_s.bounded({src}, {op!r}, {getattr(meta, op)!r})"
        if isinstance(meta, FieldInfo):
            for inner in meta.metadata:
                src = self.fold(src, inner, where)
            return src
        if isinstance(meta, WithJsonSchema):
            return src
        raise SystemExit(f"{where}: no strict check for {meta!r}")

    def base_check(self, ann: Any, where: str) -> str:
        origin, args = typing.get_origin(ann), typing.get_args(ann)
        if origin is typing.Annotated:
            return self.check(args[0], list(ann.__metadata__), where)
        if ann in _SCALARS:
            return _SCALARS[ann]
        if origin is typing.Literal:
            return f"_s.literal({', '.join(repr(a) for a in args)})"
        if origin in (typing.Union, types.UnionType):
            members = [a for a in args if a is not type(None)]
            inner = (
                self.base_check(members[0], where)
                if len(members) == 1
                else f"_s.union({', '.join(self.base_check(m, where) for m in members)})"
            )
            return f"_s.optional({inner})" if len(members) < len(args) else inner
        if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
            return f"_s.tuple_of({self.base_check(args[0], where)})"
        if origin is dict:
            return f"_s.dict_of({self.base_check(args[0], where)}, {self.base_check(args[1], where)})"
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            return f"_s.record({ann.__name__})"
        raise SystemExit(f"{where}: no strict check for the type {ann!r}")

    def type_src(self, ann: Any) -> str:
        origin, args = typing.get_origin(ann), typing.get_args(ann)
        if origin is typing.Annotated:
            return self.type_src(args[0])
        if ann is type(None):
            return "None"
        if ann is Any:
            return "Any"
        if isinstance(ann, type) and ann.__module__ == "builtins":
            return ann.__name__
        if origin is typing.Literal:
            return f"Literal[{', '.join(repr(a) for a in args)}]"
        if origin in (typing.Union, types.UnionType):
            return " | ".join(self.type_src(a) for a in args)
        if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
            return f"tuple[{self.type_src(args[0])}, ...]"
        if origin is dict:
            return f"dict[{self.type_src(args[0])}, {self.type_src(args[1])}]"
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            return ann.__name__
        raise SystemExit(f"no type for {ann!r}")

    def default(self, f: FieldInfo) -> str:
        if f.default_factory is not None:
            if f.default_factory is not dict:
                raise SystemExit(f"no compiled default_factory {f.default_factory!r}")
            return "_s.Factory(dict)"
        if f.default is PydanticUndefined:
            return "_s.REQUIRED"
        return _value(f.default)

    # --- the record classes
    def record(self, cls: type[BaseModel]) -> str:
        bases = [b for b in cls.__bases__ if issubclass(b, BaseModel) and b.__name__ != "Model" and b is not BaseModel]
        base = bases[0].__name__ if bases else "_s.Record"
        inherited = set(bases[0].model_fields) if bases else set()
        new = [name for name in cls.model_fields if name not in inherited]
        lines = [f"class {cls.__name__}({base}):"]
        if cls.__doc__ and cls.__doc__ != (bases[0].__doc__ if bases else None):
            lines.append(textwrap.indent(f'"""{inspect.cleandoc(cls.__doc__)}"""', "    "))
        lines.append(f"    __slots__ = ({''.join(f'{n!r}, ' for n in new)})")
        lines += [f"    {name}: {self.type_src(cls.model_fields[name].annotation)}" for name in new]
        lines += self.methods(cls)
        return "\n".join(lines)

    def methods(self, cls: type[BaseModel]) -> list[str]:
        source = textwrap.dedent(inspect.getsource(cls))
        tree = ast.parse(source)
        body = tree.body[0]
        assert isinstance(body, ast.ClassDef)
        module = vars(sys.modules[cls.__module__])
        out = []
        for node in body.body:
            if not isinstance(node, ast.FunctionDef):
                continue
            decorators = [ast.unparse(d) for d in node.decorator_list]
            if decorators not in ([], ["property"], ["model_validator(mode='after')"]):
                raise SystemExit(f"{cls.__name__}.{node.name}: no compiled form for decorators {decorators}")
            where = f"{cls.__name__}.{node.name}"
            for name in sorted(_free_names(node)):
                if name in module:
                    self.need(name, module[name], where)
                elif not hasattr(builtins, name):
                    raise SystemExit(f"{where}: unknown name {name}")
            text = ast.get_source_segment(source, node)
            assert text is not None
            head = "    @property\n" if decorators == ["property"] else ""
            out.append("")
            out.append(head + "    " + text)
        return out

    def fields(self, cls: type[BaseModel]) -> str:
        rows = []
        for name, f in cls.model_fields.items():
            where = f"{cls.__name__}.{name}"
            check = self.check(f.annotation, list(f.metadata), where)
            rows.append(f"    ({name!r}, {(f.alias or name)!r}, {check}, {self.default(f)}),")
        self.rows[cls] = list(rows)
        rows = self.inherited(cls, rows)
        rules = [name for name, d in cls.__pydantic_decorators__.model_validators.items() if d.info.mode == "after"]
        decorators = cls.__pydantic_decorators__
        if len(rules) != len(decorators.model_validators) or decorators.field_validators:
            raise SystemExit(f"{cls.__name__}: only after model validators compile")
        n = cls.__name__
        keys = sorted(f.alias or name for name, f in cls.model_fields.items())
        tail = [f"{n}.record_keys = frozenset({keys!r})", f"{n}.record_rules = {tuple(rules)!r}"]
        return "\n".join([f"{n}.record_fields = (", *rows, ")", *tail])

    def inherited(self, cls: type[BaseModel], rows: list[str]) -> list[str]:
        """A subclass's rows that are its base's, written as slices of the base's record_fields."""
        base = next((b for b in cls.__bases__ if b in self.rows), None)
        if base is None:
            return rows
        theirs = self.rows[base]
        out: list[str] = []
        start = None
        for i, row in enumerate([*rows, None]):
            same = i < len(theirs) and row == theirs[i]
            if same and start is None:
                start = i
            elif not same and start is not None:
                stop = "" if i == len(theirs) else str(i)
                part = "" if (start, stop) == (0, "") else f"[{start or ''}:{stop}]"
                out.append(f"    *{base.__name__}.record_fields{part},")
                start = None
            if not same and row is not None:
                out.append(row)
        return out

    def module(self, roots: dict[str, type[BaseModel]]) -> str:
        for root in roots.values():
            self.visit(root)
        classes = [self.record(c) for c in self.classes]
        fields = [self.fields(c) for c in self.classes]
        imports = [f"import {m}" for m in sorted(self.modules)]
        self.imports.setdefault("typing", set()).update({"Any", "Literal"})
        froms = [f"from {m} import {', '.join(sorted(names))}" for m, names in sorted(self.imports.items())]
        typing_line = [f for f in froms if f.startswith("from typing ")]
        rlobs_lines = [f for f in froms if not f.startswith("from typing ")]
        constants = [f"{name} = {src}" for src, name in self.constants.items()]
        members = " | ".join(c.__name__ for c in roots.values())
        targets = ", ".join(f"{t!r}: {c.__name__}" for t, c in roots.items())
        return "\n".join(
            [
                HEADER,
                "from __future__ import annotations",
                "",
                *imports,
                *typing_line,
                "",
                "from rlobs.profile import strict as _s",
                *rlobs_lines,
                "",
                *constants,
                "",
                "",
                "\n\n\n".join(classes),
                "",
                "",
                f"Profile = {members}",
                "# target -> its profile's record class (rlobs.profile.load PROFILES has the model's)",
                f"PROFILES: dict[str, type[Profile]] = {{{targets}}}",
                "",
                "\n\n".join(fields),
                "",
            ]
        )


HEADER = '''"""The profile as frozen records and the strict checks that build them: compiled from the pydantic model
(rlobs.profile.model, .eks, .gke, .eksprofile, .gkeprofile) by tools/profile_records.py. Do not edit; run
`make records` after changing the model. rlobs.profile.strict says how the checks relate to the model."""

# ruff: noqa: E501 (the compiled patterns and messages are kept whole)'''

_MISSING = object()


def _models_in(ann: Any) -> list[type[BaseModel]]:
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return [ann]
    if isinstance(ann, FieldInfo | WithJsonSchema | BeforeValidator | AfterValidator):
        return []
    args = typing.get_args(ann)
    if typing.get_origin(ann) is typing.Annotated:
        args = (args[0],)
    return [m for a in args for m in _models_in(a)]


def _value(value: Any) -> str:
    if isinstance(value, BaseModel):
        values = ", ".join(_value(getattr(value, name)) for name in type(value).model_fields)
        given = tuple(sorted(value.model_fields_set))
        return f"_s.make({type(value).__name__}, ({values},), {given!r})"
    if isinstance(value, tuple):
        return "(" + "".join(f"{_value(v)}, " for v in value) + ")"
    if isinstance(value, str | int | float | bool | type(None)):
        return repr(value)
    raise SystemExit(f"no compiled default {value!r}")


def _free_names(node: ast.FunctionDef) -> set[str]:
    """Names a method reads that it does not bind itself (its globals)."""
    bound = {a.arg for a in [*node.args.args, *node.args.kwonlyargs]}
    loads = set()
    parts: list[ast.AST] = [node.args, *node.body] + ([node.returns] if node.returns else [])
    for n in (n for part in parts for n in ast.walk(part)):
        if isinstance(n, ast.Name):
            if isinstance(n.ctx, ast.Store):
                bound.add(n.id)
            else:
                loads.add(n.id)
        elif isinstance(n, ast.arg):
            bound.add(n.arg)
    return loads - bound


def compile_records() -> str:
    """records.py's text from the current model, sorted and formatted by ruff as the rest of the code is."""
    from rlobs.profile.load import PROFILES

    roots = {target: getattr(import_module(module), name) for target, (module, name) in PROFILES.items()}
    text = Compiler().module(roots)
    for step in (["check", "--fix", "--quiet", "--exit-zero"], ["format", "--quiet"]):
        done = subprocess.run(
            [sys.executable, "-m", "ruff", *step, "--stdin-filename", str(OUT), "-"],
            input=text,
            capture_output=True,
            text=True,
            check=True,
            cwd=REPO,
        )
        text = done.stdout
    return text


def main() -> None:
    OUT.write_text(compile_records(), encoding="utf-8")
    print(f"wrote {OUT.relative_to(REPO)}")


if __name__ == "__main__":
    main()
