"""Farm bakes: Open Job Description bundles that prepare each character once and bake every shot in parallel.

The names below are the room's front door for scripts and tests; the
add-on's own modules import from the module that holds each.
"""

from __future__ import annotations

from .commands import COMMANDS, add_commands, run_command
from .flamenco import JOB_TYPE_FILE, flamenco_job
from .reports import merge_reports, openjd_progress, report_path, write_report
from .template import BakeTask, job_template, parameter_values
from .yaml_text import yaml_text

__all__ = [
    "COMMANDS",
    "JOB_TYPE_FILE",
    "BakeTask",
    "add_commands",
    "flamenco_job",
    "job_template",
    "merge_reports",
    "openjd_progress",
    "parameter_values",
    "report_path",
    "run_command",
    "write_report",
    "yaml_text",
]
