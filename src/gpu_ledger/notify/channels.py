"""Delivering a message: email over SMTP (smtplib) and webhooks over HTTP (urllib).

Each call sends one message to one address or URL and raises on failure, so that the caller can
record one line per delivery and go on with the others.
"""

from __future__ import annotations

import json
import os
import smtplib
import urllib.request
from email.message import EmailMessage
from email.utils import formatdate, make_msgid

from gpu_ledger.notify.config import Smtp

TIMEOUT_S = 15  # per connection: an unreachable server or webhook fails this fast


class DeliveryError(RuntimeError):
    """A message could not be delivered; the text says to whom and why."""


def email(smtp: Smtp, to: str, subject: str, text: str, html: str) -> EmailMessage:
    """A multipart/alternative message: plain text first, HTML second (what a mail client prefers)."""
    message = EmailMessage()
    message["From"] = smtp.sender
    message["To"] = to
    message["Subject"] = subject
    message["Date"] = formatdate(localtime=False)
    message["Message-ID"] = make_msgid(domain=smtp.sender.rpartition("@")[2] or None)
    message.set_content(text)
    message.add_alternative(html, subtype="html")
    return message


def send_email(smtp: Smtp, message: EmailMessage) -> None:
    """Hand one message to the SMTP server; STARTTLS and login where owners.yml asks for them."""
    try:
        with smtplib.SMTP(smtp.host, smtp.port, timeout=TIMEOUT_S) as server:
            if smtp.starttls:
                server.starttls()
            if smtp.username:
                server.login(smtp.username, os.environ.get(smtp.password_env or "", ""))
            server.send_message(message)
    except (OSError, smtplib.SMTPException) as exc:
        raise DeliveryError(f"{message['To']}: {exc}") from exc


def post_webhook(url: str, payload: dict) -> None:
    """POST the payload as JSON; any answer but 2xx is a failure."""
    request = urllib.request.Request(
        url,
        data=json.dumps(payload).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as answer:
            answer.read()
    except (OSError, ValueError) as exc:  # URLError and HTTPError are OSErrors; a bad URL a ValueError
        raise DeliveryError(f"{url}: {exc}") from exc
