"""Masking what identifies a site in text meant for an issue tracker: host names, IP addresses, user names
in paths."""

from __future__ import annotations

import re

from firstfault.diagnosis import Report

_IPV4 = re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}\b")
# Full form, or compressed with '::' (so clock times like 16:24:31 are left alone).
_IPV6 = re.compile(r"(?<![\w:])(?:(?:[0-9a-fA-F]{1,4}:){7}[0-9a-fA-F]{1,4}"
                   r"|(?:[0-9a-fA-F]{1,4}:)*[0-9a-fA-F]{0,4}::(?:[0-9a-fA-F]{1,4}:)*[0-9a-fA-F]{1,4})(?![\w:])")
_USER_PATH = re.compile(r"(/(?:home|Users|scratch|lustre|gpfs|data)/)([^/\s'\"]+)")


def redact(text: str, hosts: set[str]) -> str:
    for host in sorted(hosts, key=len, reverse=True):
        text = re.sub(rf"(?<![\w-]){re.escape(host)}(?![\w-])", "<host>", text)
    text = _IPV4.sub("<ip>", text)
    text = _IPV6.sub("<ip>", text)
    return _USER_PATH.sub(r"\1<user>", text)


def report_hosts(report: Report) -> set[str]:
    """Every host name the log showed: line prefixes, and peers or rendezvous hosts a message named."""
    hosts = {e.source.host for e in report.events if e.source.host}
    return hosts | {v for e in report.events for k, v in e.captures.items() if k in ("peer", "rdzv_host")}
