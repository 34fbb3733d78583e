"""The semantic layer's query engine: every headline figure, from its one MetricFlow definition.

The metrics and semantic models are dbt YAML (`models/marts/semantic/_metrics.yml`,
`_semantic_models.yml`): `dbt parse` validates them, MetricFlow (`mf query`) answers them, and this
module compiles the same YAML into SQL over the published warehouse for the app's pages and for
`gpu-ledger metrics`. It does not import MetricFlow: a page must answer in milliseconds from the
read-only snapshot (`gpu_ledger.read.warehouse`) with bound parameters, without a dbt project loaded. The
semantics are MetricFlow's, for what this project's YAML uses (the SQL text helpers are in
`gpu_ledger.read.metric_sql`):

- a simple metric aggregates its measure (sum, count, count_distinct, min, max, average) over its
  semantic model's rows, after the metric's own `filter`;
- a ratio metric is sum(numerator) / sum(denominator), each with its own filter, as a double;
- a derived metric is its `expr` over its input metrics, computed after each input is aggregated;
- group-by names are a semantic model's dimensions (bare, `team`, or as MetricFlow names them,
  `owner_day__team`), a dimension of a model joined through a foreign entity (`gpu__gpu_model`), or
  `metric_time` at a grain (`metric_time__day`, `__week`, `__month`, `__quarter`, `__year`): the
  model's aggregation time dimension, in UTC;
- metrics of several semantic models are aggregated per model and joined on the group-by columns.

`tests/test_metrics.py` runs a set of queries both here and through MetricFlow's own SQL on a copy of
the warehouse and asserts the same answers, so the two cannot drift apart.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from functools import cache
from pathlib import Path

import yaml

from gpu_ledger.project import DBT_PROJECT_FILE, SEMANTIC_DIR
from gpu_ledger.read.metric_sql import canonical, is_column, order_term, qualify, quote, safe_division

MARTS = "marts"
GRAINS = ("day", "week", "month", "quarter", "year")
AGGREGATES = {
    "sum": "sum({})",
    "count": "count({})",
    "count_distinct": "count(distinct {})",
    "min": "min({})",
    "max": "max({})",
    "average": "avg({})",
    "sum_boolean": "sum(cast({} as integer))",
}
UNIT_LABELS = {
    "currency": "{currency}",
    "currency_per_gpu_hour": "{currency} per GPU-hour",
    "currency_per_job": "{currency} per job attempt",
    "currency_per_run": "{currency} per training run",
    "currency_per_1k_requests": "{currency} per 1,000 requests",
    "gpu_hours": "GPU-hours",
    "kwh": "kWh",
    "kg_co2e": "kg CO2e",
    "ratio": "ratio (0-1; shown as %)",
    "count": "count",
}
_JINJA = re.compile(r"\{\{\s*(Dimension|TimeDimension|Entity)\(\s*'([^']+)'\s*(?:,\s*'([^']+)'\s*)?\)\s*\}\}")
_REF = re.compile(r"ref\(\s*['\"]([^'\"]+)['\"]\s*\)")


class MetricError(ValueError):
    """A query the semantic layer cannot answer (unknown metric or dimension), with the reason."""


@dataclass(frozen=True)
class Dimension:
    name: str
    expr: str  # SQL over the semantic model's own columns
    is_time: bool = False
    description: str = ""
    granularity: str | None = None


@dataclass(frozen=True)
class Measure:
    name: str
    agg: str
    expr: str


@dataclass(frozen=True)
class SemanticModel:
    name: str
    relation: str  # marts.<model>
    primary_entity: str
    entities: dict[str, tuple[str, str]]  # name -> (type, expr)
    dimensions: dict[str, Dimension]
    measures: dict[str, Measure]
    agg_time_dimension: str | None


@dataclass(frozen=True)
class Metric:
    name: str
    label: str
    description: str
    unit: str
    type: str  # simple / ratio / derived
    measure: str | None = None
    filter: str | None = None
    numerator: str | None = None
    denominator: str | None = None
    expr: str | None = None
    inputs: tuple[str, ...] = ()


@dataclass
class Query:
    """What to compute: metrics by group-by names, narrowed by `where` (SQL over dimension names, or
    MetricFlow's `{{ Dimension('entity__name') }}`), by `values` (dimension -> allowed values, bound as
    parameters) and by a UTC day range on metric_time (inclusive)."""

    metrics: Sequence[str]
    group_by: Sequence[str] = ()
    where: Sequence[str] = ()
    values: Mapping[str, Sequence] = field(default_factory=dict)
    start: date | None = None
    end: date | None = None
    order_by: Sequence[str] = ()
    limit: int | None = None


class SemanticLayer:
    """The semantic models and metrics of the dbt project, and the SQL that answers a Query."""

    def __init__(self, models: dict[str, SemanticModel], metrics: dict[str, Metric]) -> None:
        self.models = models
        self.metrics = metrics
        self._measure_model = {m: model.name for model in models.values() for m in model.measures}

    # --- what there is --------------------------------------------------------------------------

    def metric(self, name: str) -> Metric:
        try:
            return self.metrics[name]
        except KeyError:
            raise MetricError(f"unknown metric {name!r}; `gpu-ledger metrics list` lists them") from None

    def leaves(self, name: str) -> list[Metric]:
        """The simple metrics a metric is computed from (itself, when it is one)."""
        metric = self.metric(name)
        if metric.type == "simple":
            return [metric]
        inputs = (metric.numerator, metric.denominator) if metric.type == "ratio" else metric.inputs
        found: list[Metric] = []
        for child in inputs:
            found += [leaf for leaf in self.leaves(child) if leaf not in found]
        return found

    def model_of(self, leaf: Metric) -> SemanticModel:
        return self.models[self._measure_model[leaf.measure]]

    def dimensions(self, name: str) -> list[str]:
        """Group-by names a metric takes (bare names; MetricFlow's qualified ones work too)."""
        common: list[str] | None = None
        for leaf in self.leaves(name):
            names = list(self._columns(self.model_of(leaf)))
            common = names if common is None else [n for n in common if n in names]
        return [n for n in common or [] if "__" not in n or n.startswith("metric_time__")]

    def has_dimension(self, metric: str, dimension: str) -> bool:
        return all(dimension in self._columns(self.model_of(leaf)) for leaf in self.leaves(metric))

    def has_time(self, metric: str) -> bool:
        return all(self.model_of(leaf).agg_time_dimension for leaf in self.leaves(metric))

    # --- compiling ------------------------------------------------------------------------------

    def compile(self, query: Query) -> tuple[str, list]:
        """SQL (DuckDB) and its parameters answering the query over the published marts: one row per
        group, the group-by columns first, then one column per metric, named as asked."""
        if not query.metrics:
            raise MetricError("name at least one metric (--metrics)")
        metrics = [self.metric(m) for m in query.metrics]
        group_by = [canonical(g) for g in query.group_by]
        leaves: dict[str, list[Metric]] = {}
        for metric in metrics:
            for leaf in self.leaves(metric.name):
                bucket = leaves.setdefault(self.model_of(leaf).name, [])
                if leaf not in bucket:
                    bucket.append(leaf)
        params: list = []
        parts = []
        for model_name, model_leaves in leaves.items():
            sql, part_params = self._aggregate(self.models[model_name], model_leaves, group_by, query)
            parts.append((sql, [leaf.name for leaf in model_leaves]))
            params += part_params
        out_groups = [quote(g) for g in group_by]
        if len(parts) == 1:
            combined = parts[0][0]
        else:  # one aggregate per semantic model, joined on the group-by columns (nulls match nulls)
            every = [leaf for _, names in parts for leaf in names]
            selects = []
            for sql, names in parts:
                cols = [*out_groups, *(quote(n) if n in names else f"null as {quote(n)}" for n in every)]
                selects.append(f"select {', '.join(cols)} from ({sql})")
            sums = [f"max({quote(n)}) as {quote(n)}" for n in every]
            combined = f"select {', '.join([*out_groups, *sums])} from ({' union all '.join(selects)}) " + (
                f"group by {', '.join(out_groups)}" if out_groups else ""
            )
        values = [f"{self._value_sql(m.name)} as {quote(m.name)}" for m in metrics]
        sql = f"select {', '.join([*out_groups, *values])} from ({combined}) as leaves"
        order = [order_term(o) for o in query.order_by] or out_groups
        if order:
            sql += " order by " + ", ".join(order)
        if query.limit is not None:
            sql += f" limit {int(query.limit)}"
        return sql, params

    def _value_sql(self, name: str) -> str:
        metric = self.metric(name)
        if metric.type == "simple":
            return quote(metric.name)
        if metric.type == "ratio":
            num, den = self._value_sql(metric.numerator), self._value_sql(metric.denominator)
            return f"(cast({num} as double) / nullif(cast({den} as double), 0))"
        expr = safe_division(metric.expr)
        for child in sorted(metric.inputs, key=len, reverse=True):
            expr = re.sub(rf"\b{re.escape(child)}\b", f"\x00{child}\x00", expr)
        for child in metric.inputs:
            expr = expr.replace(f"\x00{child}\x00", f"cast({self._value_sql(child)} as double)")
        return f"({expr})"

    def _columns(self, model: SemanticModel) -> dict[str, str]:
        """Every name a query may use on this model -> its SQL (model alias `m`, joined models by
        entity name)."""
        cols: dict[str, str] = {}
        joined: dict[str, str] = {}
        for entity, (kind, _expr) in model.entities.items():
            if kind != "foreign":
                continue
            target = self._primary_of(entity)
            if target is None:
                continue
            for dim in target.dimensions.values():
                joined[f"{entity}__{dim.name}"] = f"{quote(entity)}.{dim.expr}"
        for dim in model.dimensions.values():
            cols[dim.name] = f"m.{dim.expr}" if is_column(dim.expr) else qualify(dim.expr, "m")
            cols[f"{model.primary_entity}__{dim.name}"] = cols[dim.name]
        for name, sql in joined.items():
            cols[name] = sql
            bare = name.split("__", 1)[1]
            cols.setdefault(bare, sql)
        if model.agg_time_dimension:
            day = f"cast(timezone('UTC', {cols[model.agg_time_dimension]}) as date)"
            if self._is_date(model, model.agg_time_dimension):
                day = f"cast({cols[model.agg_time_dimension]} as date)"
            cols["metric_time"] = day
            cols["metric_time__day"] = day
            for grain in GRAINS[1:]:
                cols[f"metric_time__{grain}"] = f"cast(date_trunc('{grain}', {day}) as date)"
        return cols

    @staticmethod
    def _is_date(model: SemanticModel, name: str) -> bool:
        return name in _DATE_COLUMNS.get(model.relation.split(".")[-1], ())

    def _primary_of(self, entity: str) -> SemanticModel | None:
        for model in self.models.values():
            kind, _ = model.entities.get(entity, ("", ""))
            if kind in ("primary", "unique", "natural"):
                return model
        return None

    def _aggregate(
        self, model: SemanticModel, leaves: list[Metric], group_by: list[str], query: Query
    ) -> tuple[str, list]:
        cols = self._columns(model)
        for name in group_by:
            if name not in cols:
                raise MetricError(
                    f"{', '.join(leaf.name for leaf in leaves)} cannot be grouped by {name!r}: its semantic "
                    f"model {model.name} has {', '.join(sorted(n for n in cols if '__' not in n))}"
                )
        joins = []
        for entity, (kind, expr) in model.entities.items():
            target = self._primary_of(entity) if kind == "foreign" else None
            if target is not None:
                _, key = target.entities[entity]
                joins.append(
                    f"left join {target.relation} as {quote(entity)} "
                    f"on {quote(entity)}.{key} = {qualify(expr, 'm')}"
                )
        base_cols = [f"{sql} as {quote(name)}" for name, sql in cols.items()]
        for leaf in leaves:
            measure = model.measures[leaf.measure]
            value = qualify(measure.expr, "m")
            if leaf.filter:
                value = f"case when {self._render(leaf.filter, cols)} then {value} end"
            base_cols.append(f"{value} as {quote('__' + leaf.name)}")
        base = f"select {', '.join(base_cols)} from {model.relation} as m {' '.join(joins)}"
        where: list[str] = []
        params: list = []
        for text in query.where:
            where.append(f"({self._render(text, cols, bare=True)})")
        for name, allowed in (query.values or {}).items():
            name = canonical(name)
            if name not in cols:
                raise MetricError(f"{model.name} has no dimension {name!r} to filter on")
            allowed = list(allowed)
            if not allowed:
                continue
            where.append(f"{quote(name)} in ({', '.join('?' for _ in allowed)})")
            params += allowed
        if (query.start or query.end) and "metric_time" in cols:
            if query.start:
                # a monthly model's month counts when the range starts inside it
                grain = model.dimensions[model.agg_time_dimension].granularity
                start = query.start.replace(day=1) if grain == "month" else query.start
                where.append("metric_time >= ?")
                params.append(start)
            if query.end:
                where.append("metric_time <= ?")
                params.append(query.end)
        aggs = [
            AGGREGATES[model.measures[leaf.measure].agg].format(quote("__" + leaf.name))
            + f" as {quote(leaf.name)}"
            for leaf in leaves
        ]
        groups = [quote(g) for g in group_by]
        sql = (
            f"select {', '.join([*groups, *aggs])} from ({base}) as base"
            + (f" where {' and '.join(where)}" if where else "")
            + (f" group by {', '.join(groups)}" if groups else "")
        )
        return sql, params

    @staticmethod
    def _render(text: str, cols: dict[str, str], *, bare: bool = False) -> str:
        """A MetricFlow filter as SQL: `{{ Dimension('entity__name') }}` becomes the column's SQL
        (`bare`: its name in the base query, where a user's --where runs)."""

        def column(match: re.Match) -> str:
            name = canonical(match.group(2) + (f"__{match.group(3)}" if match.group(3) else ""))
            if match.group(1) == "TimeDimension" and name not in cols:
                name = "metric_time"
            if name not in cols:
                raise MetricError(f"unknown dimension {match.group(2)!r} in filter {text!r}")
            return quote(name) if bare else cols[name]

        return _JINJA.sub(column, text)


# columns of DATE type among the aggregation time dimensions (others are UTC timestamps)
_DATE_COLUMNS = {
    "fct_cost_by_owner_daily": ("date",),
    "fct_capacity_daily": ("date",),
    "fct_team_cost_anomalies": ("date",),
    "fct_budget_status": ("month_start",),
    "fct_project_roi": ("month_start",),
    "fct_commitment_utilization": ("month_start",),
}


# --- loading --------------------------------------------------------------------------------------


def _yaml_files(folder: Path) -> Iterable[Path]:
    return sorted(folder.rglob("*.yml"))


def load(folder: Path = SEMANTIC_DIR) -> SemanticLayer:
    """The semantic layer as the dbt YAML under `folder` defines it."""
    models: dict[str, SemanticModel] = {}
    metrics: dict[str, Metric] = {}
    for path in _yaml_files(folder):
        doc = yaml.load(path.read_text(), Loader=yaml.CSafeLoader) or {}  # libyaml: 0.16 s -> 0.02 s
        for raw in doc.get("semantic_models") or []:
            models[raw["name"]] = _semantic_model(raw)
        for raw in doc.get("metrics") or []:
            metrics[raw["name"]] = _metric(raw)
    return SemanticLayer(models, metrics)


@cache
def layer() -> SemanticLayer:
    """The project's semantic layer (read once per process)."""
    return load()


def _semantic_model(raw: dict) -> SemanticModel:
    relation = _REF.search(raw["model"])
    if relation is None:
        raise MetricError(f"semantic model {raw['name']}: model must be ref('...')")
    entities = {e["name"]: (e["type"], e.get("expr") or e["name"]) for e in raw.get("entities") or []}
    primary = raw.get("primary_entity") or next(
        (n for n, (t, _) in entities.items() if t == "primary"), raw["name"]
    )
    dimensions = {
        d["name"]: Dimension(
            d["name"],
            d.get("expr") or d["name"],
            d["type"] == "time",
            d.get("description", ""),
            (d.get("type_params") or {}).get("time_granularity"),
        )
        for d in raw.get("dimensions") or []
    }
    measures = {
        m["name"]: Measure(m["name"], m["agg"].lower(), str(m.get("expr") or m["name"]))
        for m in raw.get("measures") or []
    }
    agg_time = (raw.get("defaults") or {}).get("agg_time_dimension")
    return SemanticModel(
        raw["name"], f"{MARTS}.{relation.group(1)}", primary, entities, dimensions, measures, agg_time
    )


def _metric(raw: dict) -> Metric:
    params = raw.get("type_params") or {}
    meta = (raw.get("config") or {}).get("meta") or raw.get("meta") or {}

    def name_of(value) -> str | None:
        return value.get("name") if isinstance(value, dict) else value

    return Metric(
        name=raw["name"],
        label=raw.get("label") or raw["name"],
        description=" ".join(str(raw.get("description") or "").split()),
        unit=meta.get("unit", ""),
        type=raw["type"].lower(),
        measure=name_of(params.get("measure")),
        filter=raw.get("filter"),
        numerator=name_of(params.get("numerator")),
        denominator=name_of(params.get("denominator")),
        expr=params.get("expr"),
        inputs=tuple(name_of(m) for m in params.get("metrics") or ()),
    )


# --- reporting currency ---------------------------------------------------------------------------


@cache
def reporting_currency() -> str:
    """The dbt var `reporting_currency` (dbt_project.yml): every mart's money is in it."""
    try:
        project = yaml.load(DBT_PROJECT_FILE.read_text(), Loader=yaml.CSafeLoader)  # libyaml: 30 ms -> 1 ms
        return str((project.get("vars") or {}).get("reporting_currency") or "USD")
    except (OSError, yaml.YAMLError):
        return "USD"


def unit_label(unit: str, currency: str | None = None) -> str:
    return UNIT_LABELS.get(unit, unit).format(currency=currency or reporting_currency())


# --- running --------------------------------------------------------------------------------------


def run(warehouse: Path, query: Query):
    """Answer a query on the published warehouse's read-only snapshot (a Polars frame)."""
    from gpu_ledger.read.warehouse import query as read

    sql, params = layer().compile(query)
    return read(warehouse, sql, params)
