"""Before a helm upgrade of the GPU Operator, the plan checks the release's live values: an upgrade that would
drop a value the user set (Helm renders from the passed files alone) stops, naming the keys."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from sim.cluster import SimulationError
from sim.simulator import Simulation

from gpustack_gen import load_fleet
from gpustack_gen.cli import main
from gpustack_gen.helm_values import dropped_keys

CHANGES = Path(__file__).resolve().parent.parent / "changes"
USER_VALUES = "nfd:\n  enabled: false\ndaemonsets:\n  tolerations:\n  - {key: dedicated, operator: Exists}\n"
OWNED = ("driver.version",)


def test_a_key_no_passed_file_sets_is_dropped_one_a_file_replaces_is_not() -> None:
    live = {"nfd": {"enabled": False}, "daemonsets": {"tolerations": [{"key": "a"}]}, "driver": {"version": "1"}}
    assert dropped_keys(live, [{"daemonsets": {"tolerations": [{"key": "a"}, {"key": "b"}]}}], OWNED) == ["nfd.enabled"]
    # the operands' tolerations: the list the upgrade ends with must still hold the release's items
    tolerations = [{"daemonsets": {"tolerations": [{"key": "a"}]}}, {"daemonsets": {"tolerations": [{"key": "b"}]}}]
    assert dropped_keys(live, tolerations, OWNED) == ["nfd.enabled", "daemonsets.tolerations"]
    assert dropped_keys(live, [{"daemonsets": {"tolerations": []}}], ("daemonsets", "driver")) == [
        "nfd.enabled",
        "daemonsets.tolerations",
    ]
    assert dropped_keys(live, [{"nfd": {"enabled": True}}, {"daemonsets": None}], OWNED) == []
    assert dropped_keys(live, [], ()) == ["nfd.enabled", "daemonsets.tolerations", "driver.version"]


def _values_kept(tmp_path: Path, live: str, *files: str) -> tuple[int, str]:
    paths = []
    for index, text in enumerate(files):
        path = tmp_path / f"values-{index}.yaml"
        path.write_text(text, encoding="utf-8")
        paths.append(str(path))
    result = CliRunner().invoke(main, ["values-kept", *paths], input=live)
    return result.exit_code, result.stdout + result.stderr


def test_the_command_names_what_the_upgrade_would_drop(tmp_path: Path) -> None:
    live = json.dumps({"nfd": {"enabled": False}, "mig": {"strategy": "single"}, "driver": {"version": "550"}})
    code, out = _values_kept(tmp_path, live, "mig: {strategy: mixed}\n")
    assert code == 1
    assert (
        "would drop: nfd.enabled (hint: keep them in a values file listed in the fleet's operator.valuesFiles)" in out
    )
    assert _values_kept(tmp_path, live, "mig: {strategy: mixed}\n", USER_VALUES)[0] == 0
    assert _values_kept(tmp_path, "", "mig: {}\n")[0] == 0  # no release yet: helm prints nothing
    assert _values_kept(tmp_path, "null\n", "mig: {}\n")[0] == 0  # a release without user values
    code, out = _values_kept(tmp_path, "{nope", "mig: {}\n")
    assert code == 2 and "stdin:1:2: not JSON" in out


@pytest.mark.parametrize(
    ("live", "file", "message"),
    [
        ("[1, 2]", "mig: {}\n", "stdin: not a values object"),
        ("1" * 5000, "mig: {}\n", "stdin:"),
        ("{}", "a: &a [*a]\n", "values-0.yaml"),
        (r'{"k\u001b]52;c;aGk=\u0007": 1}', "mig: {}\n", "k\\x1b]52"),
    ],
    ids=["json-array", "huge-integer", "bad-yaml", "terminal-escape"],
)
def test_bad_input_exits_2_or_is_printed_inert(tmp_path: Path, live: str, file: str, message: str) -> None:
    code, out = _values_kept(tmp_path, live, file)
    assert code in (1, 2) and message in out
    assert "\x1b" not in out and "\x07" not in out
    if message != "k\\x1b]52":
        assert code == 2


@pytest.mark.parametrize("keep", [True, False])
def test_a_plan_that_drops_the_user_s_values_stops_before_the_upgrade(
    keep: bool, upstream: Path, tmp_path: Path
) -> None:
    (tmp_path / "user-values.yaml").write_text(USER_VALUES, encoding="utf-8")
    listed = "    valuesFiles: [user-values.yaml]\n"

    def fleet(kind: str, with_values: bool) -> str:
        text = (CHANGES / "mig-strategy-single-to-mixed" / f"{kind}.yaml").read_text(encoding="utf-8")
        text = text.replace(
            "    cdi: {enabled: true, default: true}\n",
            "    cdi: {enabled: true, default: true}\n" + (listed if with_values else ""),
        )
        return text

    old = load_fleet(fleet("old", True), name=str(tmp_path / "old.yaml"))
    new = load_fleet(fleet("new", keep), name=str(tmp_path / "new.yaml"))
    simulation = Simulation(upstream, tmp_path, old, new, "prod")
    if keep:
        simulation.run()
        assert simulation.cluster.release is not None and simulation.cluster.release.user_values["nfd"] == {
            "enabled": False
        }
    else:
        with pytest.raises(SimulationError, match=r"would drop: nfd\.enabled, daemonsets\.tolerations"):
            simulation.run()
