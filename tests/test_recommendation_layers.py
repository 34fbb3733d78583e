"""The recommendation, idle and cost models keep their layers (issue 35): each rule is an intermediate model
that reads intermediate models only and ends in the shared projection (macros/recommendations); a mart
publishes one intermediate model as it is; fct_purchasing_recommendations is the plain union of the rules;
no mart reads a recommendation mart, nor a mart that only publishes an intermediate model (it reads that
model instead).

A scan of the models' `ref()` calls, which dbt resolves the same way: no dbt run needed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "models"
RECOMMENDATION_MARTS = MODELS / "marts" / "optimization" / "recommendations"
UNION = "fct_purchasing_recommendations"
REF = re.compile(r"""\bref\(\s*(['"])(\w+)\1\s*\)""")
ANY_REF = re.compile(r"\bref\(")
PROJECTION = re.compile(r"\{\{-?\s*recommendation_columns\(")


def model_files() -> dict[str, Path]:
    return {path.stem: path for path in MODELS.rglob("*.sql")}


def refs(path: Path) -> set[str]:
    """The models and seeds a model reads; every ref() must name one literally for the scan to see it."""
    text = path.read_text()
    found = REF.findall(text)
    assert len(found) == len(ANY_REF.findall(text)), f"{path.name}: a ref() whose name is not a literal"
    return {name for _, name in found}


def layer(path: Path) -> str:
    return path.relative_to(MODELS).parts[0]


def is_publication(path: Path) -> bool:
    """A mart that is `select * from` one intermediate model, nothing else."""
    sql = "\n".join(line for line in path.read_text().splitlines() if not line.startswith("--"))
    return re.fullmatch(r"select \* from \{\{ ref\('int_\w+'\) \}\}\s+-- noqa: AM04\s*", sql) is not None


MODEL_FILES = model_files()
MARTS = {name: path for name, path in MODEL_FILES.items() if layer(path) == "marts"}
INTERMEDIATE = sorted(name for name, path in MODEL_FILES.items() if layer(path) == "intermediate")
RULES = sorted(name for name, path in MODEL_FILES.items() if PROJECTION.search(path.read_text()))
# the idle and cost marts other models used to read, now publications of intermediate models
PUBLISHED = ("fct_idle_gpu_periods", "fct_job_costs", "fct_training_run_costs", "fct_rightsizing_candidates")
HOLDS_RULES = "holds rules of its own: move them to an intermediate model"


def test_the_rules_are_found():
    assert set(RULES) >= {
        "int_recommendations__inference_pools",
        "int_recommendations__spot_moves",
        "int_recommendations__rightsized_machines",
        "int_recommendations__idle_machines",
    }


@pytest.mark.parametrize("rule", RULES)
def test_every_rule_is_an_intermediate_model_reading_intermediate_models_only(rule: str):
    path = MODEL_FILES[rule]
    assert layer(path) == "intermediate", f"{rule} is not an intermediate model"
    read = {name for name in refs(path) if name in MODEL_FILES}  # seeds are not models
    not_intermediate = sorted(name for name in read if layer(MODEL_FILES[name]) != "intermediate")
    assert not not_intermediate, f"{rule} reads {not_intermediate}"


def test_the_union_reads_every_rule_and_nothing_else():
    assert refs(MARTS[UNION]) == set(RULES)


@pytest.mark.parametrize("mart", sorted(path.stem for path in RECOMMENDATION_MARTS.glob("*.sql")))
def test_every_recommendation_mart_but_the_union_publishes_one_intermediate_model(mart: str):
    if mart != UNION:
        assert is_publication(MARTS[mart]), f"{mart} {HOLDS_RULES}"


@pytest.mark.parametrize("mart", sorted(MARTS))
def test_no_mart_reads_a_recommendation_mart_or_a_publication(mart: str):
    read = refs(MARTS[mart]) & MARTS.keys()
    recommendation_marts = sorted(name for name in read if MARTS[name].parent == RECOMMENDATION_MARTS)
    assert not recommendation_marts, f"{mart} reads the recommendation marts {recommendation_marts}"
    publications = sorted(name for name in read if is_publication(MARTS[name]))
    assert not publications, f"{mart} reads {publications}: read the intermediate models they publish"


@pytest.mark.parametrize("model", INTERMEDIATE)
def test_every_intermediate_model_sits_in_its_domain_folder(model: str):
    """int_<domain>__<what> lives in models/intermediate/<domain>: the idle rules all in intermediate/idle,
    the cost rules in intermediate/costs, the recommendation rules in intermediate/recommendations."""
    domain = model.removeprefix("int_").split("__")[0]
    assert MODEL_FILES[model].relative_to(MODELS).parts[1] == domain


@pytest.mark.parametrize("mart", PUBLISHED)
def test_the_idle_and_cost_marts_publish_intermediate_models(mart: str):
    assert is_publication(MARTS[mart]), f"{mart} {HOLDS_RULES}"
