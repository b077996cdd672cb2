"""dlscale's analysis: records and campaigns into tidy pandas frames, repeats aggregated, and
the tables the seed papers show (scaling efficiency, per-epoch and learning speed-up, per-phase
breakdown). Definitions: shared/reference/models_and_recipes.md, section 6."""
from .records import RecordError, load_records, load_campaign  # noqa: F401
from .stats import aggregate  # noqa: F401
from .scaling import scaling_table, speedup_table, breakdown_table  # noqa: F401
