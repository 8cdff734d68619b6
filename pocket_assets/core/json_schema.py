"""The seed JSON Schemas compiled with jsonschema-rs, and their errors named as the gate and the export say them.

Every chunk is checked against these schemas three times in a build (the gate, the corpus JSON, the
HEPilot file): jsonschema-rs (Rust) does it for a small part of what the `jsonschema` package costs,
which on a large corpus would be a large share of the gates' and the export's CPU.

Compiling a validator checks the schema against its draft's metaschema (and compiles its regular
expressions), so a broken schema file fails when it is loaded, naming the file, not on the first chunk.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema_rs

Validator = jsonschema_rs.Validator
ValidationError = jsonschema_rs.ValidationError
# The drafts of the seed schemas: the chunk schema's and HEPilot's `chunk_output`.
DRAFT_07: type[Validator] = jsonschema_rs.Draft7Validator
DRAFT_2020_12: type[Validator] = jsonschema_rs.Draft202012Validator


def load_validator(path: Path, validator_class: type[Validator]) -> Validator:
    """The schema at `path` compiled for its draft (`DRAFT_07`, `DRAFT_2020_12`), formats asserted.

    No `$ref` is fetched from the network (`offline`): the seed schemas are self-contained.
    """
    schema = json.loads(path.read_text(encoding="utf-8"))
    try:
        return validator_class(schema, validate_formats=True, offline=True)
    except ValidationError as error:
        where = instance_location(error) or "(schema)"
        raise ValueError(f"{path}: not a valid {validator_class.__name__} schema at {where}: {error.message}") from None


def schema_rule(error: ValidationError) -> str:
    """The violated rule as its path in the schema, e.g. `properties/text/minLength`."""
    return "/".join(str(part) for part in error.schema_path)


def instance_location(error: ValidationError) -> str:
    """Where in the record the rule failed, e.g. `pages/0`; "" for the record itself."""
    return "/".join(str(part) for part in error.instance_path)


def most_relevant_error(validator: Validator, document: Any) -> ValidationError | None:
    """None for a valid document; else its error nearest the record's top, the first of those.

    The rule `jsonschema.exceptions.best_match` ranks by first (a shallower path is more relevant);
    the seed schemas have no `anyOf`/`oneOf`, whose weak matches it also demotes.
    """
    if validator.is_valid(document):
        return None
    return min(validator.iter_errors(document), key=lambda error: len(error.instance_path))
