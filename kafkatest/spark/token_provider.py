"""Spark's own delegation token path: the settings under which Spark obtains the token.

With ``spark.kafka.clusters.<name>.auth.bootstrap.servers`` set, Spark's Kafka token
provider (``spark-token-provider-kafka-0-10``, a dependency of the connector) asks the
broker for a delegation token when the driver starts, and every Kafka source and sink
whose bootstrap servers match ``target.bootstrap.servers.regex`` then logs in with it
(``ScramLoginModule ... tokenauth=true``), with no credentials in the job's options.

What Spark needs for that, read off its source (``HadoopDelegationTokenManager``,
``SupportsDelegationToken``, ``KafkaTokenUtil``) and measured here:

* Hadoop security on in the driver (``hadoop.security.authentication=kerberos``):
  otherwise no token manager is made at all;
* a scheduler backend that makes a token manager: YARN, Kubernetes, and local mode from
  Spark 4.2 on (SPARK-34914); not ``local-cluster`` or standalone
  (``StandaloneSchedulerBackend`` makes none), and not local mode before 4.2;
* a Kerberos login of the driver's own: ``spark.kerberos.principal`` and
  ``spark.kerberos.keytab`` (or a ticket cache), so a KDC. Without one the token
  manager's login fails and no token is obtained;
* the admin client that asks for the token logs in with GSSAPI by default, but the
  cluster's ``spark.kafka.clusters.<name>.kafka.*`` settings override it: here it logs
  in over SCRAM as the user, so Kafka never sees Kerberos and both backends serve it.
"""

from __future__ import annotations

import zipfile
from functools import cache
from typing import TYPE_CHECKING

from kafkatest.errors import SetupError

if TYPE_CHECKING:
    from kafkatest.brokers.base import Broker
    from kafkatest.brokers.kdc import Kdc

#: The cluster name in ``spark.kafka.clusters.<name>.*`` unless one is given.
DEFAULT_CLUSTER = "kafkatest"

#: Spark's other token providers, off: on a local file system they have nothing to
#: obtain and only log why (HDFS asks for a YARN renewer principal that is not set).
_OTHER_PROVIDERS_OFF = {
    f"spark.security.credentials.{name}.enabled": "false" for name in ("hadoopfs", "hbase", "hive")
}

_LOCAL_BACKEND = "org/apache/spark/scheduler/local/LocalSchedulerBackend.class"


@cache
def local_mode_obtains_tokens() -> bool:
    """Whether the installed PySpark's local mode starts a delegation token manager.

    Read off its ``LocalSchedulerBackend`` class (a ``createTokenManager`` of its own,
    SPARK-34914, Spark 4.2), not guessed from the version: PySpark 3.5.7 and 4.0.0
    have none, 4.2.1 has one.
    """
    from kafkatest.jars.coordinates import installed_spark

    spark = installed_spark()
    for jar in spark.jars_dir.glob("spark-core_*.jar"):
        with zipfile.ZipFile(jar) as archive:
            try:
                data = archive.read(_LOCAL_BACKEND)
            except KeyError:
                continue
        return b"createTokenManager" in data
    return False


def token_provider_conf(
    broker: Broker,
    kdc: Kdc,
    user: str,
    *,
    cluster: str = DEFAULT_CLUSTER,
    target_regex: str | None = None,
    mechanism: str | None = None,
) -> dict[str, str]:
    """The Spark settings under which the driver obtains a token for `user` itself.

    `kdc` must hold `user` as a principal: the driver logs in as ``user@REALM`` from
    its keytab, then asks `broker` for a token over SCRAM as `user` (its password, the
    broker's first SCRAM mechanism unless `mechanism` names one). Jobs then need only
    ``kafka.bootstrap.servers``; `target_regex` limits which bootstrap servers get the
    token (Spark's default: all). For a session of its own (Hadoop security is
    process-wide in the JVM): pass to ``kafka_spark_session(master="local[2]", conf=...)``.
    """
    if not local_mode_obtains_tokens():
        from kafkatest.jars.coordinates import installed_spark

        raise SetupError(
            f"PySpark {installed_spark().version}'s local mode starts no delegation token "
            "manager (Spark 4.2 added it, SPARK-34914), and local-cluster mode "
            "(standalone) never does: Spark cannot obtain the token itself in a local session"
        )
    runtime = broker.security_runtime
    if runtime is None or not runtime.security.sasl:
        raise SetupError("Spark obtains a delegation token over SASL: start the broker with SCRAM")
    scram = runtime.token_mechanism(mechanism)
    prefix = f"spark.kafka.clusters.{cluster}."
    login = broker.spark_options(user, scram)
    login.pop("kafka.bootstrap.servers", None)
    conf = {
        "spark.hadoop.hadoop.security.authentication": "kerberos",
        "spark.kerberos.principal": kdc.principal(user),
        "spark.kerberos.keytab": str(kdc.keytab),
        # Before the driver's extraJavaOptions (kafkatest's own), not instead of them.
        "spark.driver.defaultJavaOptions": " ".join(kdc.java_options()),
        **_OTHER_PROVIDERS_OFF,
        f"{prefix}auth.bootstrap.servers": broker.bootstrap_servers,
        f"{prefix}security.protocol": runtime.security.protocol,
        f"{prefix}sasl.token.mechanism": scram,
        # The admin client's own login (Spark's default is GSSAPI): SCRAM as `user`.
        **{f"{prefix}{key}": value for key, value in login.items()},
    }
    if target_regex is not None:
        conf[f"{prefix}target.bootstrap.servers.regex"] = target_regex
    return conf
