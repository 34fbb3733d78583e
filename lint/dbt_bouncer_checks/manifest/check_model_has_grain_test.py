"""dbt-bouncer check of this project's own: a model's grain is tested, by dbt's `unique` on its key or by the
`grain` of its `column_values` test (macros/tests). dbt-bouncer's check_model_has_unique_test knows a test
by its name only, and a `column_values` test without a grain tests no key."""

from dbt_bouncer.check_framework.decorator import check, fail
from dbt_bouncer.utils import get_clean_model_name


@check
def check_model_has_grain_test(model, ctx):
    """Models must have their grain tested: `unique`, or `column_values` with a `grain`."""
    for test in ctx.tests_by_attached_node.get(model.unique_id, []):
        metadata = getattr(test, "test_metadata", None)
        name = getattr(metadata, "name", None)
        arguments = getattr(metadata, "kwargs", None) or {}
        if name == "unique" or (name == "column_values" and arguments.get("grain")):
            return
    fail(
        f"`{get_clean_model_name(model.unique_id)}` has no test of its grain"
        " (`unique`, or `column_values` with a grain)."
    )
