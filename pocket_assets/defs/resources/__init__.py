"""Configuration as Dagster resources, one module per concern: where files live (`paths`), the tokenizer,
the device profile, the chunk policy, the table summarizer, extraction, the gates, the workers of a run, the
retrieval evaluation, and the stage versions they make (`settings`).

Defaults come from the environment variables the design names, read here (the Dagster layer) and never in
`core`; every field can also be set from the UI's launchpad or run config. Heavy objects (the tokenizer, the
gates' Great Expectations context) are built in `setup_for_execution`, once per process: `core` caches them by
what they are loaded from. The resources are imported from this package (`pocket_assets.defs.resources`).
"""

from pocket_assets.defs.resources.chunk_policy import ChunkPolicyResource
from pocket_assets.defs.resources.device import DeviceProfileResource
from pocket_assets.defs.resources.evaluation import EvaluationResource
from pocket_assets.defs.resources.extraction import ExtractionResource
from pocket_assets.defs.resources.gates import GatesResource, default_gates
from pocket_assets.defs.resources.paths import CorpusPaths, default_paths
from pocket_assets.defs.resources.settings import SettingResources, environment_versions
from pocket_assets.defs.resources.summarizer import SummarizerResource
from pocket_assets.defs.resources.tokenizer import TokenizerResource
from pocket_assets.defs.resources.workers import WorkersResource, cgroup_cpu_quota, default_workers

__all__ = [
    "ChunkPolicyResource",
    "CorpusPaths",
    "DeviceProfileResource",
    "EvaluationResource",
    "ExtractionResource",
    "GatesResource",
    "SettingResources",
    "SummarizerResource",
    "TokenizerResource",
    "WorkersResource",
    "cgroup_cpu_quota",
    "default_gates",
    "default_paths",
    "default_workers",
    "environment_versions",
]
