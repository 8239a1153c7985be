"""`rlobs init` on a terminal: the target and each of rlobs.questions' questions asked until the loader accepts."""

from __future__ import annotations

from collections.abc import Callable

from rlobs import output, questions
from rlobs.errors import RlobsError

Prompt = Callable[..., str]  # typer.prompt: rlobs.main owns the Typer side


def ask_profile(*, interactive: bool, prompt: Prompt) -> tuple[str, str]:
    from rlobs.blueprints import load_blueprints

    found = load_blueprints()
    targets = questions.targets(found)
    if not interactive:
        raise RlobsError(f"no terminal to ask on: pass --blueprint NAME or --target {'|'.join(targets)}")
    for i, name in enumerate(targets, 1):
        print(f"  {i}  {name}")
    target = None
    while target is None:
        raw: str = prompt("Target (name or number)", default=targets[0])
        target = questions.choose(raw, targets)
        if target is None:
            output.error(f"expected one of {', '.join(targets)} or 1-{len(targets)}, got {raw!r}")
    text = questions.start(found, target)
    for question in questions.asked(target):
        if question.when(text):
            text = ask(question, text, prompt)
    return target, text


def ask(question: questions.Question, text: str, prompt: Prompt) -> str:
    if question.choices:
        print("  " + "  ".join(f"{i} {c}" for i, c in enumerate(question.choices, 1)))
    while True:
        suggested = questions.default(text, question)
        raw: str = prompt(question.prompt, default=suggested or None)  # typer.prompt's None: no default shown
        new, problems = questions.answer(text, question, raw)
        if not problems:
            return new
        for problem in problems:
            output.error(problem)
