"""pydantic without its plugins: rlobs validates its own input with its own models, and the result must not depend
on which pydantic plugins (entry points of group `pydantic`) happen to be installed beside it.

pydantic looks plugins up when it builds the first model: it imports importlib.metadata and scans every installed
distribution's entry points, ~35 ms of a ~300 ms cold render. Its documented switch, PYDANTIC_DISABLE_PLUGINS,
skips only the scan (pydantic/plugin/_loader.py reads it at each lookup, after importing importlib.metadata), so
the lookup module itself is provided here, answering "no plugins", before pydantic builds any model. Its one
caller, pydantic/plugin/_schema_validator.py (pydantic 2.7 to 2.14), imports get_plugins from it and nothing else.
"""

from __future__ import annotations

import sys
import types

_LOADER = "pydantic.plugin._loader"


def _no_plugins() -> tuple[()]:
    return ()


def install() -> None:
    """Provide pydantic's plugin lookup as "no plugins", unless pydantic has already looked them up."""
    if _LOADER not in sys.modules:
        stub = types.ModuleType(_LOADER, "pydantic plugins, none: provided by rlobs.profile.noplugins")
        stub.get_plugins = _no_plugins  # type: ignore[attr-defined]
        sys.modules[_LOADER] = stub


install()
