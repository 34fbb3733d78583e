"""The DRA ResourceClaims a pod names (kubernetes.py lands them on `raw.k8s_pods`).

A pod that gets its GPUs through Dynamic Resource Allocation lists them in `spec.resourceClaims`: each
entry either names an existing claim (`resourceClaimName`) or a ResourceClaimTemplate
(`resourceClaimTemplateName`) from which the claim controller makes the pod its own claim, whose name
the pod's `status.resourceClaimStatuses` gives (`{name, resourceClaimName}`). The claims are snapshot
every few hours like the pods, and a template-made claim is deleted with its pod: a pod that ran between
two snapshots keeps these names in the pod snapshots (a finished pod stays listed until it is deleted)
when its claim is never seen. The template is what the claims of other pods made from it share, so their
allocations say what it asks for (int_workloads__pod_claims).
"""

from __future__ import annotations

import polars as pl

COLUMNS: dict[str, pl.DataType] = {"claim_templates": pl.List(pl.String), "claim_names": pl.List(pl.String)}


def claim_columns(spec: dict, status: dict) -> dict[str, list[str | None]]:
    """The pod's `spec.resourceClaims`, one item of each column per entry in its order: `claim_templates`
    the template it is made from (None for a named claim), `claim_names` the claim's name (None for a
    template-made claim the status does not name yet)."""
    made = {
        str(s.get("name")): s.get("resourceClaimName")
        for s in status.get("resourceClaimStatuses") or []
        if isinstance(s, dict)
    }
    templates, claims = [], []
    for entry in spec.get("resourceClaims") or []:
        if not isinstance(entry, dict):
            continue
        template = entry.get("resourceClaimTemplateName")
        claim = entry.get("resourceClaimName") or made.get(str(entry.get("name")))
        templates.append(None if template is None else str(template))
        claims.append(None if claim is None else str(claim))
    return {"claim_templates": templates, "claim_names": claims}
