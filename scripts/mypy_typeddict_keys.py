"""A mypy plugin: ``.get`` on a TypedDict with a key it does not declare is an error.

mypy checks the key of ``record["summary"]`` against the TypedDict ``Record`` but not that of
``record.get("sumary")``, which it types as the default; a run record's keys are all optional
(``total=False``: records of earlier schemas lack some), so most reads of it are ``.get``. With
this plugin (``[tool.mypy] plugins`` in pyproject.toml) a literal key that the TypedDict does not
declare fails at the line that spells it, with mypy's own message for a subscript; the value's
type is then inferred as mypy infers it.
"""

from collections.abc import Callable

from mypy.errorcodes import TYPEDDICT_ITEM
from mypy.plugin import MethodContext, Plugin
from mypy.plugins.default import typed_dict_get_callback
from mypy.typeops import try_getting_str_literals
from mypy.types import Type, TypedDictType, get_proper_type

#: the method mypy resolves a TypedDict's ``.get`` to
MAPPING_GET = "typing.Mapping.get"


def checked_get(ctx: MethodContext) -> Type:
    """Fail on a literal key the TypedDict does not declare, then type the call as mypy does."""
    typed_dict = get_proper_type(ctx.type)
    if isinstance(typed_dict, TypedDictType) and ctx.args and len(ctx.args[0]) == 1:
        keys = try_getting_str_literals(ctx.args[0][0], ctx.arg_types[0][0]) or []
        for key in keys:
            if key not in typed_dict.items:
                name = typed_dict.fallback.type.name
                ctx.api.fail(
                    f'TypedDict "{name}" has no key "{key}"', ctx.context, code=TYPEDDICT_ITEM
                )
    return typed_dict_get_callback(ctx)


class TypedDictKeys(Plugin):
    """Checks the literal keys of TypedDicts' ``.get``."""

    def get_method_hook(self, fullname: str) -> Callable[[MethodContext], Type] | None:
        return checked_get if fullname == MAPPING_GET else None


def plugin(version: str) -> type[Plugin]:
    """mypy's entry point: the plugin class for any mypy ``version``."""
    return TypedDictKeys
