"""The read path: what finance, the app and the command line read from the published warehouse and the
landed store, never writing either.

- `warehouse`: the read-only snapshot every reader queries (one connection per process);
- `user_sql`: the checks and the runner of a user's SQL (`gpu-ledger sql`, the app's SQL page), and
  `sql_output` how its results print;
- `metrics` (with `metric_sql`): the semantic layer's metrics compiled to SQL over the marts;
- `export`: the FOCUS export of the billing mart;
- `status`: what is landed per source, and the published marts' reconciliation and identity gaps.
"""
