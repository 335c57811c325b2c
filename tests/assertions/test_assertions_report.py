"""The report as JSON and HTML, and the compact ranges it is written in."""

from __future__ import annotations

import json

import pytest

from kafkatest.assertions import DeliveryAssertionError, assert_at_least_once
from kafkatest.assertions.ranges import runs, spans_text


def test_runs_follow_the_seeded_offsets_not_plain_integers():
    seeded = [0, 1, 2, 4, 5, 9]  # 3, 6-8 were never seeded (markers, compaction)
    assert runs([0, 1, 2, 4, 5, 9], seeded) == [(0, 9)]
    assert runs([0, 1, 5, 9], seeded) == [(0, 1), (5, 9)]
    assert runs([], seeded) == []


def test_spans_text_is_compact_and_bounded():
    assert spans_text([(0, 41), (43, 99)]) == "0-41, 43-99"
    assert spans_text([(7, 7)]) == "7"
    assert spans_text([]) == "none"
    assert spans_text([(i, i) for i in range(0, 20, 2)], limit=3) == "0, 2, 4, ... (7 more ranges)"


@pytest.fixture
def failed_report(make_seed, sink_rows):
    seed = make_seed()
    rows = [*sink_rows(seed, drop=["10", "42"], repeat=["7"]), {"value": "<b>?</b>"}]
    with pytest.raises(DeliveryAssertionError) as caught:
        assert_at_least_once(seed, rows)
    return caught.value.report


def test_json_report_holds_every_entry_with_origins(failed_report, tmp_path):
    paths = failed_report.write(tmp_path / "reports")
    data = json.loads(paths["json"].read_text())
    assert data["ok"] is False
    assert data["failures"] == ["missing", "unexpected"]
    assert data["counts"]["missing"] == 2 and data["counts"]["extra_copies"] == 1
    assert data["missing"][1]["origin"] == {"topic": "orders", "partition": 0, "offset": 21}
    assert data["duplicated"][0]["seen_at"] == ["out[1]@3", "out[1]@10000"]
    p0 = data["partitions"][0]
    assert (p0["topic"], p0["partition"], p0["lost"]) == ("orders", 0, [[5, 5], [21, 21]])
    assert p0["segments"][:2] == [["delivered", 0, 4, 5], ["lost", 5, 5, 1]]


def test_html_report_draws_each_partition_without_scripts(failed_report, tmp_path):
    html = failed_report.write(tmp_path)["html"].read_text()
    assert "<script" not in html.lower() and "http" not in html
    assert html.count("<svg ") == 2
    assert "<title>lost: offsets 21-21 (1)</title>" in html
    assert "<title>duplicated: offsets 3-3 (1)</title>" in html
    assert "&lt;b&gt;?&lt;/b&gt;" in html  # row content is escaped
    assert "at-least-once delivery failed: missing, unexpected" in html


def test_one_lost_record_among_many_is_drawn_visibly_on_top(make_seed, sink_rows, tmp_path):
    seed = make_seed(count=20_000, partitions=1)
    with pytest.raises(DeliveryAssertionError) as caught:
        assert_at_least_once(seed, sink_rows(seed, drop=["5000"]))
    html = caught.value.report.write(tmp_path)["html"].read_text()
    svg = html[html.index("<svg ") : html.index("</svg>")]
    lost = svg.index("fill='#c62828'")
    assert lost > svg.rindex("fill='#2e7d32'")  # drawn after (over) the delivered runs
    assert "x='180.00' y='0' width='2.00'" in svg[svg.rindex("<rect", 0, lost) : lost]
