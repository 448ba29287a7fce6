"""Amazon Kinesis Data Streams source and sink for PySpark Structured Streaming.

The connector is a JVM data source registered as ``kinesis``; this package ships its jar
(:func:`configure_spark`) and the typed builders :class:`KinesisSources`, :class:`KinesisSinks` and
:class:`RetryStrategies`, which drive the JVM builders of the same names through py4j on a classic session, and on a
Spark Connect session compute the same options in Python from the connector's option table.
"""

from pyspark_kinesis._jar import SCALA_BINARY_VERSIONS, ConnectorJarError, configure_spark, connector_jar
from pyspark_kinesis.builders import KinesisSinkBuilder, KinesisSinks, KinesisSourceBuilder, KinesisSources
from pyspark_kinesis.retry import RetryStrategies, RetryStrategy

__all__ = [
    "SCALA_BINARY_VERSIONS",
    "ConnectorJarError",
    "KinesisSinkBuilder",
    "KinesisSinks",
    "KinesisSourceBuilder",
    "KinesisSources",
    "RetryStrategies",
    "RetryStrategy",
    "configure_spark",
    "connector_jar",
]
