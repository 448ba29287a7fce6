"""Amazon Kinesis Data Streams source and sink for PySpark Structured Streaming.

The connector is a JVM data source registered as ``kinesis``; this package ships its jar
(:func:`configure_spark`, :func:`connector_jar`) and the typed builders :class:`KinesisSources`,
:class:`KinesisSinks` and :class:`RetryStrategies`, which drive the JVM builders of the same names through py4j on a
classic session, and on a Spark Connect session compute the same options in Python from the connector's option
table. The guide: docs/python.md.

Example::

    >>> events = KinesisSources.kinesis("clicks").withRegion("eu-west-1").withInitialPosition("trim_horizon")
    >>> events.options()
    {'initialPosition': 'trim_horizon', 'region': 'eu-west-1', 'streamName': 'clicks'}
"""

from importlib.metadata import PackageNotFoundError, version

from pyspark_kinesis._args import DurationLike, FlowControl, InitialPosition, SizeLike
from pyspark_kinesis._jar import SCALA_BINARY_VERSIONS, ConnectorJarError, configure_spark, connector_jar
from pyspark_kinesis.builders import KinesisSinkBuilder, KinesisSinks, KinesisSourceBuilder, KinesisSources
from pyspark_kinesis.retry import RetryStrategies, RetryStrategy


def _version() -> str:
    try:
        return version("pyspark-kinesis")
    except PackageNotFoundError:  # imported from a source tree put on PYTHONPATH, not installed
        return "0+unknown"


#: The installed distribution's version (``pip show pyspark-kinesis``), e.g. ``"0.1.0.dev0"``.
__version__: str = _version()

__all__ = [
    "SCALA_BINARY_VERSIONS",
    "ConnectorJarError",
    "DurationLike",
    "FlowControl",
    "InitialPosition",
    "KinesisSinkBuilder",
    "KinesisSinks",
    "KinesisSourceBuilder",
    "KinesisSources",
    "RetryStrategies",
    "RetryStrategy",
    "SizeLike",
    "__version__",
    "configure_spark",
    "connector_jar",
]
