"""The simulated company: teams, projects, the accounts and namespaces they use.

`seeds/org_map.csv` is the same organisation as the warehouse sees it (analysts edit that file for
their own company); `tests/simulator/test_org.py` keeps the two in step.
"""

from __future__ import annotations

from dataclasses import dataclass

UNALLOCATED = "unallocated"


@dataclass(frozen=True)
class Team:
    name: str
    cost_centre: str
    users: tuple[str, ...]


@dataclass(frozen=True)
class Account:
    provider: str
    account_id: str
    name: str


TEAMS = {
    t.name: t
    for t in (
        Team("nlp-research", "CC-1010", ("anguyen", "bkowalski", "cmensah")),
        Team("vision", "CC-1020", ("dpatel", "eolsen", "fgarcia")),
        Team("recsys", "CC-2010", ("gmuller", "hsato")),
        Team("search", "CC-2020", ("iokafor", "jlindqvist")),
        Team("support-ai", "CC-2030", ("kbrown", "lrossi")),
        Team("climate", "CC-3010", ("mfischer", "nabubakar")),
        Team("bio", "CC-3020", ("oyamamoto", "pdubois")),
        Team("platform", "CC-9000", ("qsilva",)),
    )
}

# project -> owning team
PROJECTS = {
    "llm-pretrain": "nlp-research",
    "llm-finetune": "nlp-research",
    "detection": "vision",
    "image-seg": "vision",
    "ranking": "recsys",
    "semantic-search": "search",
    "support-chatbot": "support-ai",
    "weather-model": "climate",
    "protein-fold": "bio",
    "shared-platform": "platform",
}

# Kubernetes namespace -> project (None: the namespace maps to nobody; pod labels must say)
NAMESPACES = {
    "llm-training": "llm-pretrain",
    "llm-finetune": "llm-finetune",
    "vision-training": "detection",
    "recsys-serving": "ranking",
    "search-serving": "semantic-search",
    "support-ai": "support-chatbot",
    "jupyterhub": None,
    "sandbox": None,
}

# Slurm account -> project ("guest" maps to nobody)
SLURM_ACCOUNTS = {
    "nlp": "llm-pretrain",
    "climate": "weather-model",
    "bio": "protein-fold",
    "vision": "image-seg",
    "guest": None,
}

# each team's home project, used for notebooks and instance tags
HOME_PROJECT = {
    "nlp-research": "llm-pretrain",
    "vision": "detection",
    "recsys": "ranking",
    "search": "semantic-search",
    "support-ai": "support-chatbot",
    "climate": "weather-model",
    "bio": "protein-fold",
    "platform": "shared-platform",
}

AWS_RESEARCH = Account("aws", "444455556666", "ml-research")
AWS_PROD = Account("aws", "111122223333", "ml-production")
AZURE_PROD = Account("azure", "8f3c2a1e-5b7d-4c9e-a2f1-6d0e9b8c7a54", "ml-azure-prod")
ONPREM = Account("onprem", "fra-dc1", "Frankfurt data centre")

# Unix uids, for "CANCELLED by <uid>"
UIDS = {user: 20100 + i for i, user in enumerate(u for t in TEAMS.values() for u in t.users)}


def team_of_project(project: str | None) -> str:
    return PROJECTS.get(project, UNALLOCATED) if project else UNALLOCATED


def cost_centre(team: str) -> str | None:
    return TEAMS[team].cost_centre if team in TEAMS else None
