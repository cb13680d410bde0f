"""Live ``verify`` against a misbehaving API server or kubeconfig: exit 2 with the cause, within a budget, and no
secret in the output. The server is ``hostile_apiserver``, on 127.0.0.1, which stops by itself."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hostile_apiserver import hostile_api_server, write_kubeconfig
from hostile_helpers import ROOT, run_cli

from gpustack_gen import load_fleet
from gpustack_gen.verify.live import LiveBudget, LiveStateError, read_live_state, redacted_url

SECRETS = ("kubeconfig-token-5ecret", "exec-5ecret", "a2V5LTVlY3JldA", "key-5ecret", "pa55word", "gcp-5ecret")


def _verify(kubeconfig: Path) -> tuple[int, str]:
    result = run_cli(
        "verify", "examples/fleet.yaml", "--cluster", "prod", "--kubeconfig", kubeconfig, "--context", "hostile"
    )
    output = result.stdout + result.stderr
    assert not [secret for secret in SECRETS if secret in output], output
    return result.returncode, result.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize(
    ("behaviour", "message"),
    [
        ("html-500", "Node list (http://127.0.0.1:{port}): HTTP 500 Internal Server Error (text/html), not an answer"),
        ("not-json", "Node list (http://127.0.0.1:{port}): the answer is not a Kubernetes list: JSON is malformed"),
        ("json-array", "Node list (http://127.0.0.1:{port}): the answer is not a Kubernetes list: Expected `object`"),
        ("redirect", "the API server redirected to https://sso.example.com (HTTP 302); gpustack-gen follows no"),
    ],
)
def test_an_answer_that_is_not_a_list_exits_2_naming_the_list(tmp_path: Path, behaviour: str, message: str) -> None:
    with hostile_api_server(behaviour) as (url, _):
        code, last = _verify(write_kubeconfig(tmp_path / "kubeconfig", url))
    assert code == 2
    assert message.format(port=url.rsplit(":", 1)[1]) in last


def _user(tmp_path: Path, url: str, user: dict[str, Any]) -> Path:
    return write_kubeconfig(tmp_path / "kubeconfig", url.replace("http://", "http://admin:pa55word@"), user)


EXEC = "client.authentication.k8s.io/v1beta1"


@pytest.mark.parametrize(
    ("user", "message"),
    [
        ({"auth-provider": {"name": "gcp", "config": {"access-token": "gcp-5ecret"}}}, "kubeconfig: auth-provider not"),
        ({"tokenFile": "/nonexistent/token"}, "credentials: Token file /nonexistent/token not found"),
        (
            {"exec": {"apiVersion": EXEC, "command": "sh", "args": ["-c", "echo 'SSO session expired' >&2; exit 1"]}},
            "credentials: Exec sh returned 1: SSO session expired",
        ),
        ({"client-certificate-data": "bm90IGEgY2VydA==", "client-key-data": "a2V5LTVlY3JldA=="}, "kubeconfig: [SSL]"),
    ],
    ids=["auth-provider", "token-file", "exec-plugin", "client-key"],
)
def test_credentials_that_fail_exit_2_and_print_no_secret(tmp_path: Path, user: dict[str, Any], message: str) -> None:
    with hostile_api_server("default") as (url, _):
        code, last = _verify(_user(tmp_path, url, user))
    assert code == 2
    assert message in last
    assert "(http://127.0.0.1:" in last  # the server, without its user and password


def test_tokens_reach_the_server_and_never_the_output(tmp_path: Path) -> None:
    exec_user = {
        "exec": {"apiVersion": EXEC, "command": "sh", "args": ["-c", 'echo \'{"status": {"token": "exec-5ecret"}}\'']}
    }
    for user in ({"token": "kubeconfig-token-5ecret"}, exec_user):
        with hostile_api_server("default") as (url, requests):
            code, _ = _verify(_user(tmp_path, url, user))
        assert code == 1 and requests  # the empty lists are read: the cluster has no nodes


def test_a_missing_ca_file_exits_2(tmp_path: Path) -> None:
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", "https://admin:pa55word@127.0.0.1:1")
    data = json.loads(kubeconfig.read_text())
    data["clusters"][0]["cluster"]["certificate-authority"] = str(tmp_path / "no-such-ca.crt")
    kubeconfig.write_text(json.dumps(data))
    code, last = _verify(kubeconfig)
    assert code == 2
    assert "context hostile (https://127.0.0.1:1): kubeconfig: [Errno 2] No such file or directory" in last


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "it is empty, or not a mapping of clusters, users and contexts"),
        ("- a\n- b\n", "it is empty, or not a mapping of clusters, users and contexts"),
        ("clusters: [\n", "invalid YAML: "),
    ],
    ids=["empty", "list", "malformed"],
)
def test_a_kubeconfig_that_is_not_one_exits_2(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "kubeconfig").write_text(text)
    code, last = _verify(tmp_path / "kubeconfig")
    assert code == 2
    assert last.startswith(f"error: kubeconfig {tmp_path / 'kubeconfig'}: {message}")


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://admin:pa55word@api.example.com:6443/k8s?token=abc", "https://api.example.com:6443"),
        ("https://[fd00::1]:6443/", "https://[fd00::1]:6443"),
        ("http://127.0.0.1", "http://127.0.0.1"),
        ("https://user@host:notaport", "(a URL that does not parse)"),
    ],
)
def test_urls_are_printed_without_credentials(url: str, shown: str) -> None:
    assert redacted_url(url) == shown


def _read(url: str, tmp_path: Path, budget: LiveBudget) -> None:
    cluster = load_fleet(ROOT / "examples" / "fleet.yaml").cluster("prod")
    assert cluster is not None
    read_live_state(cluster, kubeconfig=str(write_kubeconfig(tmp_path / "kubeconfig", url)), budget=budget)


def test_a_continue_token_that_never_ends_stops_at_the_request_budget(tmp_path: Path) -> None:
    endless = pytest.raises(LiveStateError, match="more than 20 requests: the API server's continue tokens do not end")
    with hostile_api_server("endless-continue") as (url, requests), endless:
        _read(url, tmp_path, LiveBudget(requests=20))
    assert len(requests) == 20


def test_a_huge_answer_stops_at_the_byte_budget(tmp_path: Path) -> None:
    huge = pytest.raises(LiveStateError, match="an answer of the API server is larger than 1,048,576 bytes")
    with hostile_api_server("huge-body") as (url, _), huge:
        _read(url, tmp_path, LiveBudget(answer_bytes=1024 * 1024))


def test_a_trickled_answer_stops_at_the_time_budget(tmp_path: Path) -> None:
    slow = pytest.raises(LiveStateError, match=r"reading the cluster took longer than 0\.5 s; stopped")
    with hostile_api_server("trickle") as (url, _), slow:
        _read(url, tmp_path, LiveBudget(seconds=0.5))
