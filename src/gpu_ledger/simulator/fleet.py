"""Who owns which machines: the node pools of the simulated company and their sizing.

A pool is a group of identical machines with one behaviour (spot training, MIG inference, …). Each
pool gets a share of the requested GPU count, never fewer nodes than its planted story needs, so a
small fleet still shows every behaviour the marts must find.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpu_ledger.simulator import catalogue
from gpu_ledger.simulator.org import AWS_PROD, AWS_RESEARCH, AZURE_PROD, ONPREM, PROJECTS, Account


@dataclass(frozen=True)
class Pool:
    name: str
    account: Account
    region: str
    zones: tuple[str, ...]
    cluster: str | None  # None: a standalone VM in no cluster
    scheduler: str  # kubernetes | slurm | none (a standalone VM)
    instance_type: str
    role: str  # the behaviour: see simulator.workloads.ROLES
    gpu_share: float  # share of the requested fleet size
    min_nodes: int
    capacity_type: str  # on_demand | spot | reserved | owned
    tag_team: str | None  # instance tags; None: untagged
    tag_project: str | None
    tag_environment: str | None
    monitored: bool = True
    mig_layout: tuple[str, ...] | None = None  # MIG profiles per GPU, for MIG pools
    # how Kubernetes shares each GPU: time-slicing or mps (NVIDIA's device plugin, `replicas` pods per GPU),
    # hami (HAMi's scheduler), dra (DRA ResourceClaims); None: a pod holds whole GPUs
    gpu_sharing: str | None = None
    replicas: int = 1
    # dcgm-exporter with --kubernetes-virtual-gpus, since its PR #594: each pod's own GPU_UTIL and FB_USED
    # (simulator.telemetry_pods samples these nodes, on a random stream of its own)
    pod_series: bool = False

    @property
    def gpu_count(self) -> int:
        return catalogue.instance_types()[self.instance_type]["gpu_count"]


EKS = "eks-ml-use1"
AKS = "aks-ml-eus"
SLURM = "hpc-fra"
USE1 = ("us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d")
EUS = ("eastus-1", "eastus-2", "eastus-3")

POOLS: tuple[Pool, ...] = (
    Pool(
        "p5-spot",
        AWS_RESEARCH,
        "us-east-1",
        USE1,
        EKS,
        "kubernetes",
        "p5.48xlarge",
        "spot_training",
        0.16,
        1,
        "spot",
        "nlp-research",
        "llm-pretrain",
        "production",
    ),
    Pool(
        "p4d-ondemand",
        AWS_RESEARCH,
        "us-east-1",
        USE1,
        EKS,
        "kubernetes",
        "p4d.24xlarge",
        "ondemand_training",
        0.08,
        1,
        "on_demand",
        "vision",
        "detection",
        "production",
    ),
    Pool(
        "g5-adhoc",
        AWS_RESEARCH,
        "us-east-1",
        USE1,
        EKS,
        "kubernetes",
        "g5.12xlarge",
        "crashed_job",
        0.0,
        1,
        "on_demand",
        "vision",
        "image-seg",
        "development",
    ),
    Pool(
        "p4de-mig",
        AWS_PROD,
        "us-east-1",
        USE1,
        EKS,
        "kubernetes",
        "p4de.24xlarge",
        "mig_inference",
        0.08,
        1,
        "reserved",
        "recsys",
        "ranking",
        "production",
        mig_layout=("3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"),
    ),
    Pool(
        "g6-inference",
        AWS_PROD,
        "us-east-1",
        USE1,
        EKS,
        "kubernetes",
        "g6.xlarge",
        "autoscaled_inference",
        0.05,
        2,
        "on_demand",
        "search",
        "semantic-search",
        "production",
    ),
    Pool(
        "g5-notebooks",
        AWS_RESEARCH,
        "us-east-1",
        USE1,
        EKS,
        "kubernetes",
        "g5.2xlarge",
        "notebooks",
        0.04,
        2,
        "on_demand",
        "platform",
        "shared-platform",
        "development",
    ),
    Pool(
        "g5-sandbox",
        AWS_RESEARCH,
        "us-east-1",
        USE1,
        EKS,
        "kubernetes",
        "g5.xlarge",
        "sandbox",
        0.01,
        1,
        "on_demand",
        None,
        None,
        None,
    ),
    Pool(
        "nca100",
        AZURE_PROD,
        "eastus",
        EUS,
        AKS,
        "kubernetes",
        "Standard_NC24ads_A100_v4",
        "a100_inference",
        0.05,
        2,
        "reserved",
        "support-ai",
        "support-chatbot",
        "production",
    ),
    Pool(
        "t4legacy",
        AZURE_PROD,
        "eastus",
        EUS,
        AKS,
        "kubernetes",
        "Standard_NC4as_T4_v3",
        "forgotten",
        0.0,
        1,
        "on_demand",
        None,
        None,
        None,
        monitored=False,
    ),
    Pool(
        "nda100",
        AZURE_PROD,
        "eastus",
        EUS,
        AKS,
        "kubernetes",
        "Standard_ND96asr_v4",
        "ondemand_training",
        0.06,
        1,
        "on_demand",
        "nlp-research",
        "llm-finetune",
        "production",
    ),
    Pool(
        "h100",
        ONPREM,
        "eu-central",
        ("fra-dc1",),
        SLURM,
        "slurm",
        "dgx-h100",
        "slurm_training",
        0.25,
        2,
        "owned",
        "platform",
        "shared-platform",
        "production",
    ),
    Pool(
        "a100",
        ONPREM,
        "eu-central",
        ("fra-dc1",),
        SLURM,
        "slurm",
        "dgx-a100",
        "slurm_batch",
        0.2,
        1,
        "owned",
        "platform",
        "shared-platform",
        "production",
    ),
    Pool(
        # an accelerator type newer than the catalogue (simulator.catalogue.UNCATALOGUED), billed as a
        # standalone VM no scheduler knows and nobody monitors: the warehouse must flag it and keep its cost
        "g9x-unlisted",
        AWS_RESEARCH,
        "us-east-1",
        USE1,
        None,
        "none",
        "g9x.2xlarge",
        "forgotten",
        0.01,
        0,
        "on_demand",
        "vision",
        "image-seg",
        "development",
        monitored=False,
    ),
    Pool(
        # A100s split into MIG slices that Slurm schedules one by one (typed GRES a100_80_3g.40gb): each
        # job is charged its slice's share of the GPU-hour, and the slices nobody holds are idle. Last
        # in the list, so the pools before it draw the same random numbers as before it was added.
        "a100-mig",
        ONPREM,
        "eu-central",
        ("fra-dc1",),
        SLURM,
        "slurm",
        "dgx-a100",
        "slurm_mig",
        0.0,
        1,
        "owned",
        "platform",
        "shared-platform",
        "production",
        mig_layout=("3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"),
    ),
    Pool(
        # L40S servers whose GPUs Slurm shares: jobs ask for shards (gres/shard, 8 per GPU) or an MPS share
        # (gres/mps, 100 per GPU) of one GPU, several at once on each; each is charged its part of the
        # GPU-hour and the rest is idle. The servers run no DCGM (dcgm-exporter's job mapping would copy one
        # device's values to every job sharing it), so nothing says which GPU a job held. Last in the list:
        # one generator serves the pools in turn, so the pools before it draw what they drew without it.
        "l40s-shared",
        ONPREM,
        "eu-central",
        ("fra-dc1",),
        SLURM,
        "slurm",
        "poweredge-r760xa",
        "slurm_shared",
        0.0,
        1,
        "owned",
        "platform",
        "shared-platform",
        "production",
        monitored=False,
    ),
)


# The planted cost anomaly (simulator.workloads.unplanned_burst): on one day the search team launches
# an unplanned corpus re-embedding on on-demand p4d nodes of their own. Not in POOLS: its nodes exist
# for that job only, so they take no share of the fleet and no place in its minimum size.
BURST_POOL = Pool(
    "p4d-burst",
    AWS_PROD,
    "us-east-1",
    USE1,
    EKS,
    "kubernetes",
    "p4d.24xlarge",
    "unplanned_burst",
    0.0,
    0,
    "on_demand",
    "search",
    "semantic-search",
    "production",
)


def _shared_node(name: str, role: str, sharing: str | None, project: str, **extra) -> Pool:
    """One single-GPU node whose GPU several pods share (a full fleet's `SHARED_POOLS`); monitored
    where its dcgm-exporter reports each pod's own use."""
    return Pool(
        name, AWS_PROD, "us-east-1", USE1, EKS, "kubernetes", "g6.xlarge", role, 0.0, 1, "on_demand",
        PROJECTS[project], project, "production", monitored=extra.get("pod_series", False),
        gpu_sharing=sharing, **extra,
    )  # fmt: skip


# Nodes whose GPUs several jobs share, each charged its part. Kubernetes nodes whose one GPU several pods
# share (simulator.shared_pools):
# the NVIDIA device plugin's time-slicing (4 replicas) and MPS (4 replicas: each pod declared a quarter),
# HAMi (pods ask for gpucores and gpumem-percentage) and DRA (one ResourceClaim that two pods time-slice).
# They run no DCGM (dcgm-exporter would copy one device's values to every pod sharing it), but for one
# time-sliced node whose dcgm-exporter reports each pod's own use (pod_series); HAMi's vGPU monitor
# reports its pods' own use (simulator.telemetry_hami). Not in POOLS:
# a full fleet (every story of POOLS) adds them after everything else, so they take no share of it and
# the pools before them draw the same random numbers.
SHARED_POOLS: tuple[Pool, ...] = (
    _shared_node("g6-timeslice", "time_slicing", "time-slicing", "semantic-search", replicas=4),
    _shared_node("g6-mps", "device_plugin_mps", "mps", "ranking", replicas=4),
    _shared_node("g6-hami", "hami", "hami", "support-chatbot"),
    _shared_node("g6-dra", "dra", "dra", "image-seg"),
    _shared_node(
        "g6-timeslice-dcgm",
        "time_slicing_measured",
        "time-slicing",
        "shared-platform",
        replicas=4,
        pod_series=True,
    ),  # fmt: skip
    # an A100 cut 4g+2g+1g whose MIG slices NVIDIA's DRA driver gives out, one ResourceClaim per pod, and
    # NVIDIA vGPU guests (catalogue.vgpu_profile) running DCGM: A10-4Q (a sixth of an A10) and A10-12Q
    # (a half) VMs (simulator.partitioned_pools)
    Pool("nc-a100-dra-mig", AZURE_PROD, "eastus", EUS, AKS, "kubernetes", "Standard_NC24ads_A100_v4",
         "dra_mig", 0.0, 1, "on_demand", "vision", "detection", "production", monitored=False,
         mig_layout=("4g.40gb", "2g.20gb", "1g.10gb"), gpu_sharing="dra"),
    Pool("nv6-a10-vgpu", AZURE_PROD, "eastus", EUS, AKS, "kubernetes", "Standard_NV6ads_A10_v5",
         "vgpu_workstation", 0.0, 1, "on_demand", "search", "semantic-search", "production"),
    Pool("nv18-a10-vgpu", AZURE_PROD, "eastus", EUS, AKS, "kubernetes", "Standard_NV18ads_A10_v5",
         "vgpu_batch", 0.0, 1, "on_demand", "vision", "image-seg", "production"),
    # a Slurm server of four A30s cut 2g.12gb + 1g.6gb + 1g.6gb (the A30 has 4 compute slices, not 7),
    # whose slices Slurm schedules one by one (typed GRES a30_2g.12gb): each job pays 2/4 or 1/4 of an
    # A30-hour (simulator.shared_pools.slurm_mig)
    Pool("a30-mig", ONPREM, "eu-central", ("fra-dc1",), SLURM, "slurm", "poweredge-r750xa", "slurm_mig",
         0.0, 1, "owned", "platform", "shared-platform", "production",
         mig_layout=("2g.12gb", "1g.6gb", "1g.6gb")),
)  # fmt: skip


def pool_named(name: str) -> Pool | None:
    """The pool of that name, in POOLS or the full fleet's extra pools."""
    return next((p for p in (*POOLS, BURST_POOL, *SHARED_POOLS) if p.name == name), None)


def minimum_gpus() -> int:
    """The smallest fleet that shows every planted behaviour."""
    return sum(pool.min_nodes * pool.gpu_count for pool in POOLS)


def pools_that_fit(gpus: int) -> tuple[Pool, ...]:
    """The pools a fleet of about `gpus` GPUs holds: all of them once every story fits, else as many
    stories as fit, the cheapest first (in GPUs), so a small fleet keeps the most behaviours."""
    if gpus >= minimum_gpus():
        return POOLS
    chosen, left = [], gpus
    for pool in sorted(POOLS, key=lambda p: p.min_nodes * p.gpu_count):
        need = pool.min_nodes * pool.gpu_count
        if need <= left:
            chosen.append(pool)
            left -= need
    if not chosen:
        smallest = min(p.min_nodes * p.gpu_count for p in POOLS)
        raise ValueError(f"--gpus {gpus} is too small: the smallest planted story needs {smallest} GPUs")
    return tuple(p for p in POOLS if p in chosen)


def left_out(gpus: int) -> list[Pool]:
    """The pools (planted behaviours) a fleet of about `gpus` GPUs is too small to hold."""
    kept = pools_that_fit(gpus)
    return [p for p in POOLS if p not in kept]


def has_burst(gpus: int) -> bool:
    """The planted cost anomaly is a spike on top of a whole fleet's routine: only a full fleet has it."""
    return gpus >= minimum_gpus()


def size_pools(gpus: int) -> dict[str, int]:
    """Nodes per pool for a fleet of about `gpus` GPUs (each pool's share, at least its minimum; 0 for
    the pools a small fleet leaves out)."""
    kept = pools_that_fit(gpus)
    return {
        pool.name: max(pool.min_nodes, round(pool.gpu_share * gpus / pool.gpu_count)) if pool in kept else 0
        for pool in POOLS
    }
