"""The write path after ingest: dbt builds the warehouse on an engine, and a checked copy is published.

- `engine`: the interface every engine implements (`build(home, ...) -> BuildResult`) and the choice
  of one by name;
- `duckdb_engine`, `spark_engine`: the two engines;
- `publish`: the checks a built file passes before it is renamed over `<home>/warehouse.duckdb`, and the
  check of a `dbt build` run by hand (its run_results.json) for `gpu-ledger publish`;
- `workspace`: each build's private folder under `<home>/builds/`, and atomic file replacement;
- `dbt_runner`: dbt in a child process, its events streamed back; `progress` draws them.
"""
