"""The build command's console: one line per log record, a traceback only for a crash.

Dagster's console logger prints every failure with its stack, a PDF that is not a PDF as
much as a bug. The build command's runs log through this logger instead (same name,
`console`, same `log_level` config): a step that fails with `Failure` (the PDFs that failed,
each named with its one-sentence reason) prints its description, an error of the system the
user fixes (a full or read-only disk) what to do, and any other error (a crash) its stack.
"""

from __future__ import annotations

import logging
import sys

from dagster import Field, InitLoggerContext, logger

from pocket_assets.cli.failure_cause import user_fix

EXPECTED_FAILURES = frozenset({"Failure"})  # error classes that are verdicts, not crashes


class OneSentenceFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        meta = getattr(record, "dagster_meta", None) or {}
        parts = [meta.get("job_name"), meta.get("step_key")]
        event = meta.get("dagster_event")
        if event is not None:
            parts.append(event.event_type_value)
        text = " - ".join(str(part) for part in [*parts, meta.get("orig_message", record.getMessage())] if part)
        error = getattr(getattr(event, "event_specific_data", None), "error", None) if event is not None else None
        if error is not None:
            # A `Failure`'s message is "<module>.Failure: <description>": the description is the sentence.
            description = error.message.strip().split(": ", 1)[-1] if error.cls_name in EXPECTED_FAILURES else user_fix(error)
            text += f"\n{description}" if description else f"\n\n{error}"
        return f"{self.formatTime(record, '%H:%M:%S')} {record.levelname} {text}"


@logger(
    {"log_level": Field(str, is_required=False, default_value="INFO")},
    description="The build command's console: one line per record, tracebacks for crashes only.",
)
def cli_console(init_context: InitLoggerContext) -> logging.Logger:
    console = logging.Logger("pocket_assets", level=init_context.logger_config["log_level"].upper())
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneSentenceFormatter())
    console.addHandler(handler)
    return console
