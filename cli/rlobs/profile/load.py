"""Load a profile file once, at the boundary: YAML -> validated, frozen profile, or every problem at once."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from pathlib import Path as FsPath
from typing import Annotated, Any, TypeVar, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from rlobs.credentials import found_in, redact
from rlobs.errors import Problem, ProfileError
from rlobs.profile.model import ProfileBase
from rlobs.profile.problems import ProblemAt, Problems, article
from rlobs.profile.source import NulByteError, read_source
from rlobs.profile.yamlsource import Located, Path, YamlSyntaxError, load_located, value_at
from rlobs.profile.yamlsource import strings as yaml_strings

M = TypeVar("M", bound=BaseModel)
# target -> its profile class (rlobs.targets.PROFILES), imported when first looked up: building the other target's
# too would add ~9 ms to a cold render of an eks profile and ~15 ms to a gke one (measured on a 2-core machine).
Models = Mapping[str, type[ProfileBase]]

# The longest key or text a profile or fleet may hold (free-form Helm values included); each field's own, shorter
# cap is checked before its pattern.
MAX_TEXT = 64 * 1024
# Unknown keys that look like a credential get a hint on referencing a Secret instead (every credential in the model
# is a Secret name or a SecretRef). As text: re compiles it when an unknown key is first met, not on every start.
_SECRET_KEY = r"(?i)(password|passwd|secret|token|api[-_]?key|webhook[-_]?url|credentials?|routing[-_]?key)"
_SECRET_HINT = (
    "expected a reference to a Kubernetes Secret, not an inline secret (rlobs never writes credentials to git)"
)


def load_profile(path: FsPath, models: Models) -> ProfileBase:
    return load_source(path, models)[1]


def load_source(path: FsPath, models: Models) -> tuple[bytes, ProfileBase]:
    """The profile's bytes exactly as read, and the profile parsed from those same bytes."""
    data, text = read_input(path, "profile file")
    return data, parse_profile(text, models, str(path))


def read_input(path: FsPath, noun: str) -> tuple[bytes, str]:
    display = str(path)
    try:
        data = read_source(path)
        return data, data.decode("utf-8")
    except FileNotFoundError:
        raise ProfileError([Problem(display, 1, 1, "", f"expected a {noun}, got no such file")]) from None
    except NulByteError as exc:
        raise ProfileError([Problem(display, exc.line, exc.column, "", "expected text, got a NUL byte")]) from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path, or bytes that are not UTF-8
        got = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ProfileError([Problem(display, 1, 1, "", f"expected a readable UTF-8 file, got {got}")]) from None


def parse_profile(text: str, models: Models, display: str = "<profile>") -> ProfileBase:
    located = parse_located(text, display)
    if not isinstance(located.data, dict):
        got = "an empty file" if located.data is None else type(located.data).__name__
        raise ProfileError(
            [Problem(display, 1, 1, "", f"expected a mapping with apiVersion: rlobs/v1alpha1, got {got}")]
        )
    return validate_located(located, display, models)


def parse_located(text: str, display: str) -> Located:
    """The YAML document with its positions; a text longer than any field takes is refused before a pattern reads it."""
    try:
        located = load_located(text)
    except YamlSyntaxError as exc:
        raise ProfileError([Problem(display, exc.pos.line, exc.pos.column, "", exc.message)]) from None
    problems = [
        located_problem(located, display, path, f"expected at most {MAX_TEXT} characters, got {len(value)}", key=False)
        for path, value in yaml_strings(located.data, keys=True)
        if len(value) > MAX_TEXT
    ]
    if problems:
        raise ProfileError(problems)
    return located


def located_problem(located: Located, display: str, path: Path, message: str, *, key: bool = True) -> Problem:
    pos = located.pos(path, key=key)
    return Problem(display, pos.line, pos.column, dotted(path), message)


def duplicates(located: Located, display: str) -> list[Problem]:
    return [
        Problem(display, pos.line, pos.column, dotted(p), "expected each key once, got it again")
        for p, pos in located.duplicates
    ]


def validate_located(located: Located, display: str, models: Models) -> ProfileBase:
    problems = duplicates(located, display)
    secrets = _credentials(located, display, models)
    profile, invalid = _validate(located, display, models)
    if profile is not None and not problems and not secrets:
        return profile
    # A value that looks like a credential is reported once, by the scanner, which never echoes it.
    flagged = {p.path for p in secrets}
    problems += secrets + [p for p in invalid if p.path not in flagged]
    problems.sort(key=lambda p: (p.line, p.column, p.path))
    raise ProfileError(problems)


def _credentials(located: Located, display: str, models: Models) -> list[Problem]:
    strings = list(yaml_strings(located.data, keys=True))
    # First one scan of them all, joined by newlines: no credential shape spans a newline (rlobs.credentials), so
    # the joined text holds one exactly when a value does, and only then is each value scanned to say where. A
    # profile has ~70 strings and almost never a credential: one scan instead of ~70 (a tenth of loading one).
    if not found_in("\n".join(value for _, value in strings)):
        return []
    found = []
    for path, value in strings:
        shapes = found_in(value)
        if shapes:
            hint = secret_hint(_walk(_root(located.data, models), path[:-1])[0], path)
            message = f"{hint}, got what looks like {' and '.join(shapes)} (not shown)"
            found.append(located_problem(located, display, path, message, key=False))
    return found


def _root(data: dict[str, Any], models: Models) -> type[ProfileBase]:
    tag = data.get("target")
    return models[tag] if isinstance(tag, str) and tag in models else ProfileBase


def secret_hint(model: type[BaseModel] | None, path: Path) -> str:
    """Instead of an inline credential at `path`: the Secret-reference keys of its section, or that it takes none."""
    fields = model.model_fields if model is not None else {}
    refs = [(f.alias or name, f) for name, f in fields.items() if _is_secret_ref(f.alias or name, f.annotation)]
    if not refs:
        where = f"`{dotted(path[:-1])}:`" if len(path) > 1 else "a profile"
        return f"{_SECRET_HINT}: {where} takes no Secret reference, so expected no credential here"
    forms = []
    for key, f in refs:
        if _model_of(f.annotation) is not None:
            forms.append(f"`{key}: {{name: my-secret, key: password}}`")
        else:
            example = f.default if isinstance(f.default, str) else "my-secret"
            what = f" ({f.description.rstrip('.')})" if f.description else ""
            forms.append(f"`{key}: {example}`{what}")
    return f"{_SECRET_HINT}: create the Secret with kubectl and name it here, e.g. " + " or ".join(forms)


def _is_secret_ref(key: str, annotation: Any) -> bool:
    model = _model_of(annotation)
    return (model is not None and model.__name__ == "SecretRef") or key.endswith("Secret")


def validate_model(model: type[M], located: Located, display: str) -> M:
    found, errors = validated(model, _tuples(located.data))
    if found is not None:
        return found
    problems = [p for err in errors for p in _problems(err, located, display, model, "", {})]
    raise ProfileError(sorted(problems, key=lambda p: (p.line, p.column, p.path)))


def validated(model: type[M], data: Any) -> tuple[M | None, list[Any]]:
    try:
        return model.model_validate(data), []
    except ValidationError as exc:
        return None, exc.errors(include_url=False)


def _validate(located: Located, display: str, models: Models) -> tuple[ProfileBase | None, list[Problem]]:
    data = _tuples(located.data)
    tag, root = data.get("target"), _root(data, models)
    if root is not ProfileBase:
        # The target's own class validates, as the union of them would pick it by `target`: the same checks and
        # errors (the union's only put its tag first in each location), without a validator of the union to build.
        profile, errors = validated(root, data)
        return profile, [p for err in errors for p in _problems(err, located, display, root, tag, models)]
    # No usable target: say so, and still report what is wrong with the keys every profile has.
    got = "nothing" if tag is None else _got(tag)
    message = f"expected one of {', '.join(models)}, got {got}"
    problems = [located_problem(located, display, ("target",), message, key=False)]
    rest = {k: v for k, v in data.items() if k not in ("target", *models)}
    _, errors = validated(ProfileBase, {**rest, "target": ""})
    problems += [p for err in errors for p in _problems(err, located, display, ProfileBase, "", models)]
    return None, problems


def _problems(
    err: Any, located: Located, display: str, root: type[BaseModel], target: str, models: Models
) -> list[Problem]:
    """The Problems one pydantic error stands for (a validator may report several at once)."""
    loc: Path = tuple(err["loc"])
    cause = (err.get("ctx") or {}).get("error")
    if isinstance(cause, Problems):
        return [_at(located, display, (*loc, *p.path), p.message) for p in cause.problems]
    if isinstance(cause, ProblemAt):
        return [_at(located, display, (*loc, *cause.path), cause.message)]
    section = _section_problem(err, loc, located, display, target, models)
    if section is not None:
        return [section]
    kind: str = err["type"]
    pos = located.pos(loc[:-1]) if kind == "missing" else located.pos(loc, key=kind == "extra_forbidden")
    return [Problem(display, pos.line, pos.column, dotted(loc), _message(err, loc, located, root))]


def _at(located: Located, display: str, loc: Path, message: str) -> Problem:
    # The value the problem is about is the one at its own path, not the whole object whose validator found it.
    found, value = value_at(located.data, loc)
    if found and ", got " not in message:
        message = f"{message}, got {_got(value)}"
    return located_problem(located, display, loc, message)


def _section_problem(
    err: Any, loc: Path, located: Located, display: str, target: str, models: Models
) -> Problem | None:
    """A missing section of the profile's own target, or a section of another target, said in the target's words."""
    if not target or len(loc) != 1 or loc[0] not in models:
        return None
    if err["type"] == "missing" and loc[0] == target:
        message = f"target is {target}, so expected {article(target)} `{target}:` section, got none"
        return located_problem(located, display, ("target",), message)
    if err["type"] == "extra_forbidden":
        message = f"target is {target}, so expected no `{loc[0]}:` section, got one"
        return located_problem(located, display, loc, message)
    return None


def _message(err: Any, loc: Path, located: Located, root: type[BaseModel]) -> str:
    kind: str = err["type"]
    message: str = err["msg"]
    value = err["input"]
    if kind == "value_error":
        message = message.removeprefix("Value error, ")
        return message if ", got " in message else f"{message}, got {_got(value)}"
    if kind == "extra_forbidden":
        model = _walk(root, loc[:-1])[0]
        if re.search(_SECRET_KEY, str(loc[-1])) and not isinstance(value, dict | tuple):
            return secret_hint(model, loc) + ", got a literal value"
        allowed = [f.alias or name for name, f in model.model_fields.items()] if model is not None else []
        hint = difflib.get_close_matches(str(loc[-1]), allowed, n=1)
        did_you_mean = f" (did you mean '{hint[0]}'?)" if hint else ""
        expected = "one of " + ", ".join(allowed) if allowed else "no other keys"
        return f"unknown key{did_you_mean}: expected {expected}"
    if kind == "missing":
        return "expected this required key, got nothing"
    if kind == "string_type" and isinstance(value, bool | int | float):
        return _not_text(root, loc, value, located.plain.get(loc))
    return f"expected {_EXPECTED.get(kind) or _from_message(message, err)}, got {_got(value)}"


def _not_text(root: type[BaseModel], loc: Path, value: float, typed: str | None) -> str:
    """A number or boolean where text belongs (`kubernetesVersion: 1.30` is 1.3, `namespace: yes` true in YAML 1.1)."""
    expected = _expected_text(root, loc) or "a string"
    what = ("true" if value else "false") if isinstance(value, bool) else f"the number {value!r}"
    if typed is None:
        return f"expected {expected}, got {what}"
    typed = _key(typed)
    if typed in (repr(value), what):
        return f'expected {expected}, got {what} (quote it: "{typed}")'
    kind = "a boolean" if isinstance(value, bool) else "a number"
    return f'expected {expected}, got {what} (an unquoted {typed} is {kind} in YAML: quote it, "{typed}")'


def _expected_text(root: type[BaseModel], loc: Path) -> str | None:
    """What the string validator at `loc` expects, in words (fields.with_json_pattern), if it says."""
    field = _walk(root, loc)[1]
    todo: list[Any] = [*field.metadata, field.annotation] if field is not None else []
    while todo:
        item = todo.pop(0)
        expected = getattr(getattr(item, "func", None), "expected", None)
        if isinstance(expected, str):
            return expected
        todo += list(item.__metadata__) if get_origin(item) is Annotated else list(get_args(item))
    return None


_EXPECTED = {
    "string_type": "a string",
    "int_type": "an integer",
    "float_type": "a number",
    "bool_type": "true or false",
    "tuple_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
    "string_too_short": "a non-empty string",
}


def _from_message(message: str, err: Any) -> str:
    ctx = err.get("ctx") or {}
    if err["type"] == "literal_error":
        return f"one of {ctx.get('expected', '')}"
    if message.startswith("Keys should be strings"):
        return "text keys"
    text = message.removeprefix("Input should be ").removeprefix("Value should be ")
    return text[0].lower() + text[1:] if text else "a valid value"


def _got(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    # repr() escapes control and other unprintable characters, so nothing from a profile reaches a terminal raw.
    text = repr(redact(value) if isinstance(value, str) else value)
    return text if len(text) <= 60 else text[:57] + "..."


def dotted(path: Path) -> str:
    """`a.b[0].c`: a key path as problems print it."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{_key(part)}" if out else _key(part))
    return out


def _key(part: object) -> str:
    """A key as typed, or quoted with its escapes when it holds anything a terminal would act on or split on."""
    text = str(part)
    return text if text.isprintable() and len(text) <= 100 else repr(text[:100])


def _tuples(data: Any) -> Any:
    """Lists become tuples so the frozen model can hold them (strict mode takes tuples only)."""
    if isinstance(data, dict):
        return {k: _tuples(v) for k, v in data.items()}
    if isinstance(data, list):
        return tuple(_tuples(v) for v in data)
    return data


def _walk(root: type[BaseModel] | None, path: Path) -> tuple[type[BaseModel] | None, FieldInfo | None]:
    """The model class at `path` (None for no object) and the field holding it (None at the root), indexes skipped."""
    model, field = root, None
    for part in (p for p in path if not isinstance(p, int)):
        field = next((f for f in model.model_fields.values() if (f.alias or "") == part), None) if model else None
        if field is None:
            return None, None
        model = _model_of(field.annotation)
    return model, field


def _model_of(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return next((model for model in map(_model_of, get_args(annotation)) if model is not None), None)
