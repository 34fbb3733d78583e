"""HAMi's vGPU monitor `/metrics` text snapshots, as saved with `curl http://node:31992/metrics > file`.

HAMi (Project-HAMi/HAMi, `cmd/vGPUmonitor/metrics.go`) shares one GPU among containers and measures,
per container and device it holds, the SM utilisation and the device memory used and allowed
(`Device_utilization_desc_of_container`, `vGPU_device_memory_usage_in_bytes`,
`vGPU_device_memory_limit_in_bytes` with `podnamespace`/`podname`/`ctrname`/`vdeviceid`/`deviceuuid`
labels; newer releases name them `hami_container_device_utilization_ratio`, `hami_vgpu_memory_*_bytes`
with `namespace`/`pod`/`container`/`vdevice_index`/`device_uuid`). These are the measured split of a
shared GPU-hour (int_attribution__allocations).

The same Prometheus text exposition as a dcgm-exporter scrape, parsed by the same code and timed the
same way (a timestamp in the file name, else the file's modification time: see dcgm_metrics). A scrape
opens with the Go client's `go_*` and `process_*` families and HAMi's host-level `HostCoreUtilization`
or `hami_host_*` ones, so the container families are looked for anywhere in the file's head. The
series land in raw.hami_series and raw.hami_samples (`telemetry.land_series`); the scrape's other
families land with the DCGM series, as any other metric does.
"""

from __future__ import annotations

import re

from gpu_ledger.ingest.base import Format, LoadContext
from gpu_ledger.ingest.formats.telemetry.dcgm_metrics import observed_at
from gpu_ledger.ingest.formats.telemetry.exposition import TimeSource, parse_and_land
from gpu_ledger.ingest.formats.telemetry.inference_metrics import scrape_of
from gpu_ledger.ingest.sniff import Sniff
from gpu_ledger.ingest.telemetry_labels import HAMI_METRICS

_NAMES = "|".join(re.escape(name) for name in HAMI_METRICS)
# a family comment or a sample line of a HAMi container metric
_HAMI_LINE = re.compile(rf"^\s*(?:#\s*(?:HELP|TYPE)\s+)?(?:{_NAMES})[\s{{]", re.MULTILINE)


def detect(s: Sniff) -> bool:
    """A HAMi container family or sample in the head, and sample lines without timestamps."""
    return scrape_of(s, _HAMI_LINE)


def load(ctx: LoadContext) -> None:
    parse_and_land(ctx, TimeSource("none", observed_at(ctx.path, ctx.options)))


FORMAT = Format(
    name="hami_metrics",
    group="telemetry",
    description="HAMi vGPU monitor /metrics text snapshot (time from the file name, else its mtime)",
    detect=detect,
    load=load,
    observed_at=observed_at,
    independent=True,
)
