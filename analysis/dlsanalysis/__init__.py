"""dlscale's analysis: records and campaigns into tidy pandas frames, repeats aggregated, and
the tables the seed papers show (scaling efficiency, per-epoch and learning speed-up, per-phase
breakdown, time to accuracy, tau sensitivity, kernel efficiency, collective bandwidth with the
alpha-beta model), regression comparison, reproduction against the published figures and the
HTML report. Definitions: shared/reference/models_and_recipes.md, section 6."""

from .collectives import alpha_beta_table, busbw_table, fit_alpha_beta  # noqa: F401
from .convergence import convergence_frame, layer_share_table, tau_table, time_to_accuracy_table  # noqa: F401
from .kernels import kernel_table  # noqa: F401
from .records import RecordError, load_campaign, load_records  # noqa: F401
from .reproduce import figure_verdicts, reproduce_campaign, reproduce_table  # noqa: F401
from .scaling import breakdown_table, scaling_table, speedup_table  # noqa: F401
from .stats import aggregate  # noqa: F401
