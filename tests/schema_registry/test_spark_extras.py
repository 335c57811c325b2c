"""spark-avro / spark-protobuf next to the connector: named by ini or env, checked."""

from __future__ import annotations

import pytest

from kafkatest.errors import SetupError
from kafkatest.jars.resolve import requested_spark_extras


def test_names_are_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAFKATEST_SPARK_EXTRAS", "avro, protobuf")
    assert requested_spark_extras() == ["avro", "protobuf"]
    with pytest.raises(SetupError, match=r"unknown Spark extra\(s\) \['xml'\]"):
        requested_spark_extras(["avro", "xml"])


def test_the_ini_option_reaches_the_spark_fixture(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An unknown name fails the fixture before any JVM starts, naming the ini's value.
    monkeypatch.delenv("KAFKATEST_SPARK_EXTRAS", raising=False)  # the env would win
    pytester.makeini("[pytest]\nspark_extras = xml\n")
    pytester.makepyfile(test_x="def test_x(spark): pass\n")
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--kafka-backend=emulator", timeout=300
    )
    result.assert_outcomes(errors=1)
    assert "unknown Spark extra(s) ['xml']" in result.stdout.str()
