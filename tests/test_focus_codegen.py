"""The FOCUS columns are written once (src/gpu_ledger/focus_columns.yml); what is generated from them is
current.

`python -m gpu_ledger.focus_codegen` writes the dbt macro, the doc blocks and the FOCUS column entries of
the models' YAML; gpu_ledger.focus_spec reads the file at import. These tests fail when a generated file was
edited by hand or the spec changed without regenerating, and when the generated pieces disagree.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import yaml

from gpu_ledger import focus_codegen, focus_spec

ROOT = Path(__file__).resolve().parents[1]


def _copy(tmp_path: Path) -> Path:
    """What the generator reads and writes, copied: dbt_project.yml, models/ and macros/."""
    project = tmp_path / "project"
    shutil.copytree(ROOT / "models", project / "models")
    shutil.copytree(ROOT / "macros", project / "macros")
    shutil.copy(ROOT / "dbt_project.yml", project / "dbt_project.yml")
    return project


def test_generated_files_are_current():
    differ, problems = focus_codegen.stale(ROOT)
    assert not problems, problems
    stale = sorted(str(path.relative_to(ROOT)) for path in differ)
    assert not differ, f"out of date: {stale}; run `python -m gpu_ledger.focus_codegen`"


def test_a_hand_edit_of_a_generated_column_is_caught(tmp_path: Path):
    project = _copy(tmp_path)
    mart = project / "models/marts/infrastructure_cost/_infrastructure_cost__models.yml"
    mart.write_text(mart.read_text().replace("data_type: decimal(38, 10)", "data_type: double", 1))
    differ, _ = focus_codegen.stale(project)
    assert set(differ) == {mart}
    assert focus_codegen.main(["--project-dir", str(project)]) == 0
    assert focus_codegen.stale(project) == ({}, [])


def test_a_registered_part_without_its_columns_block_is_named(tmp_path: Path):
    project = _copy(tmp_path)
    spec = (ROOT / "dbt_project.yml").read_text()
    (project / "dbt_project.yml").write_text(
        spec.replace(
            "  billing_focus_parts:\n", "  billing_focus_parts:\n    - {model: int_billing__toy}\n", 1
        )
    )
    _, problems = focus_codegen.stale(project)
    assert len(problems) == 1 and "int_billing__toy" in problems[0]


def _macro_pairs(macro: str, signature: str) -> list[tuple[str, str]]:
    """The (name, kind) pairs a generated macro of macros/billing/focus_columns.sql lists."""
    body = macro.split(f"{{% macro {signature} -%}}", 1)[1].split("{%- endmacro %}", 1)[0]
    return re.findall(r"\('(\w+)', '(\w+)'\)", body)


def test_the_python_spec_and_the_dbt_macro_list_the_same_columns():
    macro = (ROOT / focus_codegen.MACRO).read_text()
    pairs = _macro_pairs(macro, "focus_columns(include_extensions=true)")
    assert pairs == [(c["name"], c["kind"]) for c in focus_spec.WAREHOUSE_COLUMNS]
    assert [name for name, _ in pairs if not name.startswith("x_")] == list(focus_spec.COLUMNS)
    assert len(focus_spec.COLUMNS) == 57
    pairs_1_3 = _macro_pairs(macro, "focus_1_3_columns()")
    extensions = [name for name, _ in pairs if name.startswith("x_")]
    assert [name for name, _ in pairs_1_3] == [*focus_spec.COLUMNS_1_3, *extensions]
    assert len(focus_spec.COLUMNS_1_3) == 65


def test_every_focus_model_documents_exactly_the_spec_columns():
    """The FOCUS parts, their union and the mart list the spec's columns, in its order, each documented."""
    names = [c["name"] for c in focus_spec.WAREHOUSE_COLUMNS]
    parts = focus_codegen.registered_parts(ROOT)
    models = {}
    for path in (ROOT / "models").rglob("*.yml"):
        for model in (yaml.safe_load(path.read_text()) or {}).get("models", []):
            models[model["name"]] = model
    for name in [*parts, "int_billing__focus_lines", "fct_billing_focus"]:
        columns = [c for c in models[name]["columns"] if c["name"] in set(names)]
        assert [c["name"] for c in columns] == names, name
        assert all(c.get("description") for c in columns), name


def test_every_doc_block_the_yaml_names_exists():
    docs = "".join(path.read_text() for path in sorted((ROOT / "models/docs").glob("*.md")))
    defined = set(re.findall(r"{% docs (\w+) %}", docs))
    named = set()
    for path in (ROOT / "models").rglob("*.yml"):
        named |= set(re.findall(r'doc\("(focus\w*__\w+|fct_billing_focus\w*__\w+)"\)', path.read_text()))
    assert named <= defined, sorted(named - defined)
