"""How long an OIDC sign-in lasts, and who the app says is signed in (AppTest, the ID token's claims as
Streamlit's st.user states them)."""

from __future__ import annotations

import time

from gpu_ledger.app.access import SIGN_IN_HOURS
from tests.app.test_oidc_audit_page import signed_in, trail  # noqa: F401 (trail: a fixture)


def test_a_sign_in_older_than_a_working_day_must_sign_in_again(trail):  # noqa: F811
    stale = signed_in("lead@example.com", int(time.time()) - SIGN_IN_HOURS * 3600 - 60)
    assert [b.label for b in stale.button] == ["Sign in"]  # Streamlit's cookie is still there
    assert not stale.metric
    fresh = signed_in("lead@example.com", int(time.time()) - SIGN_IN_HOURS * 3600 + 60)
    assert fresh.metric and "Sign in" not in [b.label for b in fresh.button]


def test_the_sidebar_says_who_is_signed_in_and_offers_to_sign_out(trail):  # noqa: F811
    at = signed_in("lead@example.com", int(time.time()))
    assert "Signed in as lead@example.com (lead)" in [c.value for c in at.sidebar.caption]
    assert at.sidebar.button(key="access_sign_out").label == "Sign out"
